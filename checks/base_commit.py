"""``base-commit:`` in the cover letter, and that the tree has it.

What it catches:
    A series whose cover letter (or single patch) carries no
    ``base-commit:`` trailer; with ``--tree``, a base commit the tree does
    not have, or one far behind the branch the series is meant for
    (``napipatch.base-behind-warn`` commits). That branch is the one the
    caller names: ``--base`` on the command line, the bot's branch for the
    series' tree tag. Without one nothing is measured: HEAD of a checkout
    (or of the bot's tree, which never moves) says nothing about the
    branch a series will be applied to.

Why a reviewer cares:
    Without the base, reviewers and bots guess which tree to apply to and
    report conflicts that are not the author's. On threaded busy poll v4 a
    reviewer asked: "using --base=auto when using format-patch ... would
    be really useful".

Example:
    A cover letter ending with the diffstat and no ``base-commit:`` line.

Fix:
    ``git format-patch --base=auto`` (or ``--base=<commit>``).
"""

from __future__ import annotations

from napipatch.checks import check


@check(id="base-commit",
       summary="base-commit: trailer present and known to the tree",
       scope="series",
       needs="diff",
       version=2)
def run(ctx):
    s = ctx.series
    bc = s.base_commit
    if not bc:
        yield ctx.finding("warning", "no base-commit: in the "
                          + ("cover letter" if s.cover else "patch"),
                          hint="git format-patch --base=auto (or --base=<commit>)")
        return
    if ctx.tree is None:
        return
    sha = ctx.tree.resolve(bc)
    if not sha:
        yield ctx.finding("warning", f"base-commit {bc[:12]} is not in {ctx.tree.repo}",
                          hint="fetch the tree the series was made on, or rebase onto it")
        return
    limit = ctx.config.base_behind_warn
    branch = ctx.tree.branch
    head = ctx.tree.resolve(branch) if limit and branch else None
    if head and head != sha:
        behind = ctx.tree.count(sha, head)
        if behind > limit:
            yield ctx.finding("warning", f"base-commit {bc[:12]} is {behind} commits behind "
                              f"{branch}",
                              hint=f"rebase onto the current {branch} before posting")
