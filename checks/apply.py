"""Every patch applies, in order, on the series' base.

What it catches:
    A patch that ``git apply`` refuses on the base the series names (its
    ``base-commit:``, else ``--base``, else the tree's HEAD): the patch,
    the file, the hunk and the line where it stopped. A patch naming a path
    outside the tree (``../``, ``.git/``) is refused and reported too.

Why a reviewer cares:
    A series that does not apply to net-next is not reviewed at all: the
    maintainers' tools and the netdev CI stop at the first failed patch
    ("Patch does not apply to net-next") and the author is asked to rebase
    and resend, a round trip of a day or more.

Example:
    v4 of the threaded busy-poll series on Linux 6.12: patch 1 does not
    apply at Documentation/netlink/specs/netdev.yaml hunk #1.

Fix:
    Rebase the series onto the tree it targets and regenerate it with
    ``git format-patch --base=auto``; or pass ``--base`` with the commit
    it was made on.

Every later patch is left unapplied, and the checks that need the applied
tree skip them (their status says so); the diff-only checks still run.
"""

from __future__ import annotations

from napipatch.checks import check
from napipatch.tree.applied import OUTSIDE


@check(id="apply",
       summary="every patch applies on the base (patch, file, hunk)",
       scope="series",
       needs="tree",
       version=1,
       needs_applied=False,
       nipa=("apply",))  # it reports the failure the other tree checks stop at
def run(ctx):
    applied = ctx.tree.applied
    fl = applied.failure
    if fl is None:
        return
    if fl.reason == OUTSIDE:
        hint = "do not apply it: a path outside the tree is never legitimate"
    else:
        hint = (f"rebase the series onto {applied.base[:12]} ({applied.base_why}), "
                "or pass --base with the commit it was made on")
    yield ctx.finding("error", str(fl), file=fl.file, line=fl.line, hint=hint, patch=fl.patch)
