"""``base-commit:`` in the cover letter, and that the tree has it.

What it catches:
    A series whose cover letter (or single patch) carries no
    ``base-commit:`` trailer; with ``--tree``, a base commit the tree does
    not have, or one far behind the branch head (``napipatch.base-behind-warn``
    commits).

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

from napipatch.tree import gitutil

ID = "base-commit"
SUMMARY = "base-commit: trailer present and known to the tree"
SCOPE = "series"
NEEDS = "diff"
VERSION = 1


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
    repo = ctx.tree.repo
    sha = gitutil.resolve(repo, bc)
    if not sha:
        yield ctx.finding("warning", f"base-commit {bc[:12]} is not in {repo}",
                          hint="fetch the tree the series was made on, or rebase onto it")
        return
    limit = ctx.config.base_behind_warn
    head = gitutil.resolve(repo, "HEAD")
    if limit and head and head != sha:
        cp = gitutil.git(repo, "rev-list", "--count", f"{sha}..{head}", check=False)
        behind = int(cp.stdout.strip() or 0) if cp.returncode == 0 else 0
        if behind > limit:
            yield ctx.finding("warning", f"base-commit {bc[:12]} is {behind} commits behind HEAD",
                              hint="rebase onto the current net-next before posting")
