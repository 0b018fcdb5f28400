"""``napipatch fix BASE..HEAD``: the mechanical findings fixed as fixup commits."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from napipatch.cli.common import ONLY, REPO_ALIAS, SKIP, check_ids, load_config, one_tree, store
from napipatch.config import find_repo
from napipatch.errors import NapipatchError
from napipatch.pipeline import fix as fixing
from napipatch.pipeline.run import run
from napipatch.report.model import Report
from napipatch.store.history import attach
from napipatch.store.inputs import current_series, resolve
from napipatch.tree import fixups


def fix(
    revrange: Optional[str] = typer.Argument(
        None, metavar="[BASE..HEAD]", show_default=False,
        help="The commits to fix, a straight line on the current branch (default: the "
             "branch's b4 prep series, whose version and change-id find vN-1 in the store)."),
    tree: Optional[Path] = typer.Option(None, "--tree", help="The repository holding the "
                                        "commits (default: the current one)."),
    repo: Optional[Path] = REPO_ALIAS,
    diff: bool = typer.Option(False, "--diff", help="Print the fixups as a unified diff per "
                              "patch; change nothing."),
    only: Optional[list[str]] = ONLY,
    skip: Optional[list[str]] = SKIP,
):
    """Fix what the checks can fix, as one `fixup! <subject>` commit per patch
    (an `amend! <subject>` one for its message) on top of the branch (fold
    them with git rebase -i --autosquash BASE); exit 0 when no error or
    warning is left, 1 when some are, 2 when a check could not run (or
    nothing could)."""
    where = one_tree(tree, repo) or find_repo()
    if where is None:
        raise NapipatchError("fix", "not in a git repository: pass --tree REPO")
    cfg = load_config(where)
    if revrange is None:
        # b4 prep's series (else the branch's commits over its upstream),
        # with its version: review-tags then finds vN-1 in the store
        series, base = current_series(where)
        attach(series, store(cfg))
        revrange = series.name
    else:
        series, base = None, None
    rng = fixups.straight_range(where, revrange)
    if not diff:
        rng = fixups.writable(rng)   # refuse before any check runs: nothing changed
    only_l, skip_l = check_ids(only), check_ids(skip)
    if series is None:
        series = resolve(revrange, store(cfg), rng.repo)
    report = run(series, cfg, rng.repo, base=base or rng.base, only=only_l, skip=skip_l)
    fixes, left = fixing.plan(report, rng)
    made = []
    if diff:
        for pf in fixes:
            heads = ([pf.message.splitlines()[0]] if pf.files else []) \
                + ([pf.amend_message.splitlines()[0]] if pf.message_after else [])
            sys.stdout.write("\n".join(heads) + f"\n{pf.diff()}")
    else:
        made = fixing.commit(fixes, rng)
    typer.echo(_summary(report, fixes, left, rng, len(made) if not diff else None))
    # A check with no result is "not everything was checked", as for check.
    raise typer.Exit(2 if report.incomplete else 1 if left else 0)


def _summary(report: Report, fixes: list[fixing.PatchFix], left, rng: fixups.Range,
             made: int | None) -> str:
    """Per patch, what was fixed and what was not (and why); then how to
    fold. ``made``: the commits made, None for --diff."""
    diff = made is None
    total = len(report.series.patches)
    done = "would fix" if diff else "fixed"
    out = []
    by_patch = {pf.n: pf for pf in fixes}
    for n in sorted({pf.n for pf in fixes} | {f.patch for f, _ in left}):
        label = f"PATCH {n}/{total}" if n else "SERIES"
        out.append(f"{label} {fixups.subject_of(rng.repo, rng.commits[n - 1])}:" if n
                   else "SERIES:")
        for f in by_patch[n].fixed if n in by_patch else []:
            out.append(f"{_loc(f, label)}: {done} [{f.check}] {f.fix['says']}")
        for f, why in [(f, w) for f, w in left if f.patch == n]:
            out.append(f"{_loc(f, label)}: not fixed: {f.severity.value}: [{f.check}] "
                       f"{f.message} ({why})")
    for c in report.incomplete:
        out.append(f"NOT CHECKED: {c.id} ({c.reason or c.status})")
    n_fixed = sum(len(pf.fixed) for pf in fixes)
    if fixes and not diff:
        out.append(f"{made} fixup commit{'s' if made != 1 else ''} made for "
                   f"{n_fixed} finding{'s' if n_fixed != 1 else ''}; fold them with: "
                   f"git rebase -i --autosquash {rng.base[:12]}")
    elif fixes:
        n = sum(bool(pf.files) + bool(pf.message_after) for pf in fixes)
        out.append(f"{n_fixed} finding{'s' if n_fixed != 1 else ''} fixable in "
                   f"{n} fixup commit{'s' if n != 1 else ''}; nothing changed")
    else:
        out.append("nothing to fix")
    out.append(f"left: {len(left)} error and warning finding{'s' if len(left) != 1 else ''} "
               "not fixed")
    return "\n".join(out)


def _loc(f, label: str) -> str:
    """``FILE:LINE`` as editors jump to it; the patch when there is no file."""
    if not f.file:
        return label
    return f"{f.file}:{f.line}" if f.line else f.file
