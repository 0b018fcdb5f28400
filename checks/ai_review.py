"""Your own AI agent reviews the series as netdev's AI review does.

What it catches:
    What an LLM reviewer finds in the series: the agent you configure
    (``napipatch.ai-review-command``: Claude Code, Codex, Gemini CLI, a
    local model; docs/ai-review.md) runs on the series tip, with the
    review prompt you name (``napipatch.ai-review-prompt``, e.g.
    masoncl/review-prompts' ``kernel/review-core.md``, the one netdev's AI
    review runs), and writes ``review-inline.txt``: a reply quoting the
    lines it comments on. Each comment is a warning at the file and
    post-patch line of the last line it quotes, on the patch that added
    it, with the comment as details; a comment whose quote matches no line
    of the series is a series-level warning, never dropped.

    The netdev CI's ``ai-review`` (NIPA's AIR service) posts ``warning``
    ("AI review found issues") on each patch it commented on and
    ``success`` on the others; it reviews only net and net-next series and
    skips a series of more than 24 patches (``warning``, "Series too long,
    not submitting"). The forecast follows those rules: the agent does not
    run on a series NIPA would not review. Without a configured command
    the check is skipped (there is no agent to assume); an agent that
    fails, runs past ``napipatch.ai-review-timeout`` or writes no readable
    review means the check could not run (exit 2), with its last stderr.

Why a reviewer cares:
    Since late 2025 every net/net-next series gets an AI review on
    patchwork, and reviewers ask why a finding was left unanswered. Seeing
    the comments before posting costs a minute; seeing them after costs a
    version.

Example:
    The agent quotes ``+	if (threaded == NETDEV_NAPI_THREADED_BUSY_POLL)``
    from patch 2 and asks whether the kthread is stopped on the error
    path::

        net/core/dev.c:6947: warning: PATCH 2/5 [ai-review] AI review: is
        the kthread stopped when napi_set_threaded() fails here?

Fix:
    Answer the comment: fix the code, or say in the commit message (or
    the cover letter) why it does not apply, so the reviewer who reads the
    AI review on patchwork finds the answer.
"""

from __future__ import annotations

from pathlib import Path

from napipatch.checks import check

from napipatch.errors import NapipatchError
from napipatch.mails.hunks import UnparsableDiff
from napipatch.mails.inlinereview import Comment, QuoteMap, parse

from . import _agent

# NIPA's tests/series/ai-review: longer series are not submitted.
MAX_PATCHES = 24
# The trees netdev's AI review is configured for (a series without a tree
# tag goes to one of them: NIPA picks net or net-next).
TREES = ("net", "net-next")
# Comments past this many are counted in one finding, not listed.
MAX_COMMENTS = 200
_HINT = ("answer it in the code, or say in the commit message why it does not apply: the "
         "AI review is posted on patchwork")


def _not_reviewed(ctx) -> str:
    """Why NIPA sends this series to no AI review ("" when it does)."""
    n = len(ctx.series.patches)
    if n > MAX_PATCHES:
        return f"{n} patches: NIPA does not submit a series over {MAX_PATCHES} for AI review"
    tree = ctx.series.tree
    if tree and tree not in TREES:
        return f"tree {tree}: netdev's AI review runs on net and net-next series only"
    return ""


def _touched(ctx) -> set[str] | None:
    """The paths the series touches; None (check out everything) when a
    diff cannot be read."""
    try:
        names = {p for pc in ctx.patches for f in pc.diff for p in (f.source_file, f.target_file)}
    except UnparsableDiff:
        return None
    return {p[2:] if p[:2] in ("a/", "b/") else p for p in names if p and p != "/dev/null"}


def _request(ctx) -> _agent.Request:
    cfg = ctx.config
    if cfg.ai_review_checkout not in ("touched", "full"):
        raise NapipatchError("napipatch.ai-review-checkout",
                             f"{cfg.ai_review_checkout!r}: must be touched or full")
    paths = None if cfg.ai_review_checkout == "full" else _touched(ctx)
    prompt = cfg.ai_review_prompt
    if prompt:
        ctx.tree.host_file(Path(prompt).expanduser())   # its change is a new review
    return _agent.Request(
        command=cfg.ai_review_command, repo=ctx.tree.repo, tip=ctx.tip, base=ctx.base,
        series=ctx.series, timeout=cfg.ai_review_timeout, prompt=prompt, paths=paths,
        sandbox=cfg.ai_review_sandbox,
        protect=(Path(cfg.cache_dir).expanduser().absolute(), cfg.store_root.absolute()))


def _finding(ctx, c: Comment, where):
    first = c.text.splitlines()[0].strip()
    message = f"AI review: {first[:180]}" + ("..." if len(first) > 180 else "")
    quote = "\n".join(f"> {q.kind}{q.text}" for q in c.lines[-6:])
    details = f"{quote}\n\n{c.text}"
    if where is None:
        return ctx.finding("warning", message + " (its quote matches no line of the series)",
                           details=details, hint=_HINT)
    return ctx.finding("warning", message, file=where.file, line=where.line, patch=where.patch,
                       details=details, hint=_HINT)


@check(id="ai-review",
       summary="your AI agent's inline review, forecast as netdev's AI review posts it (when "
               "napipatch.ai-review-command is set)",
       scope="series",
       needs="tree",
       version=1,
       nipa=("ai-review",),
       requires="ai_review_command",
       timeout="ai_review_timeout")
def run(ctx):
    if ctx.tip is None:
        return []   # a patch did not apply: NIPA reviews nothing either
    why = _not_reviewed(ctx)
    if why:
        state = "warning" if len(ctx.series.patches) > MAX_PATCHES else "success"
        return [ctx.finding("info", f"not reviewed: {why}", nipa={"ai-review": state})]
    comments = parse(_agent.review(_request(ctx)))
    qmap = QuoteMap(ctx.series.patches)
    out = [_finding(ctx, c, qmap.place(c)) for c in comments[:MAX_COMMENTS]]
    if len(comments) > MAX_COMMENTS:
        out.append(ctx.finding("warning", f"AI review: {len(comments) - MAX_COMMENTS} more "
                               f"comments, not listed (over {MAX_COMMENTS})", hint=_HINT))
    return out
