"""A new file falls in a MAINTAINERS section of its own size (NIPA's maintainers).

What it catches:
    A file the series adds (outside Documentation/ and tools/testing/, and
    not a Makefile or Kconfig) that no MAINTAINERS section of 1 to 74 files
    covers: nobody in particular looks after it; only a subsystem-wide
    entry, or none, names it.

    NIPA's rule (tests/series/maintainers): for each new file, the
    sections ``get_maintainer.pl --sections`` gives in the patched tree;
    success when one covers 1-74 files; otherwise a warning, or a fail
    when the smallest covers 500 files or more ("we fell down to subsystem
    level"; drivers of 400 files are only warned about). napipatch reports
    a fail as an error, a warning as a warning, at the new file.

    It reads MAINTAINERS as the series leaves it (a series that adds its
    own entry passes), as data: nothing from the patched tree runs. Where
    napipatch differs from NIPA, and why: NIPA sizes a section by running
    ``find`` for each of its F: patterns and adding the counts, so a file
    two patterns name counts twice, ``dir/*.c`` counts ``.c`` files in
    subdirectories too, and a directory written without its trailing
    ``/`` counts nothing. napipatch counts the files the section really
    covers, the way get_maintainer.pl matches them (X: patterns left out).
    K: keywords, which get_maintainer.pl also matches against a file's
    text, are not used to find sections here.

Why a reviewer cares:
    A new driver or library without its own MAINTAINERS entry lands on the
    subsystem maintainers forever; netdev asks authors of new code to name
    who maintains it, in the same series.

Example:
    A series adding drivers/net/ethernet/acme/acme_main.c with no ACME
    entry: only NETWORKING DRIVERS (thousands of files) covers it.

Fix:
    Add a MAINTAINERS section for the new files (``M:``, ``L:``, ``S:``,
    ``F: drivers/net/ethernet/acme/``), in the series.
"""

from __future__ import annotations

import bisect

from napipatch.checks import check
from napipatch.kernel.maintainers import MaintainersFile
from napipatch.mails.hunks import parse_diff

IGNORED = ("Documentation/", "tools/testing/")
GOOD = 75      # a section of 1..GOOD-1 files is the file's own
TOO_BIG = 500  # the smallest section this big: the subsystem's, a fail


def new_files(series) -> list[str]:
    """Files the series adds that NIPA's test looks at, in order."""
    out: list[str] = []
    for mail in series.patches:
        for pf in parse_diff(mail.diff):
            p = pf.path
            if pf.is_added_file and not p.startswith(IGNORED) and p not in out \
                    and not p.endswith(("/Makefile", "/Kconfig")):
                out.append(p)
    return out


def directory_test(files: list[str]):
    """is_dir over ``files`` (sorted): a path is a directory when a file lies
    under it (get_maintainer.pl's ``-d`` in the patched tree)."""
    def is_dir(path: str) -> bool:
        i = bisect.bisect_left(files, path + "/")
        return i < len(files) and files[i].startswith(path + "/")
    return is_dir


def verdict(names: list[str], sizes: list[int]) -> tuple[str, str] | None:
    """(severity, why) for a new file in sections ``names`` of ``sizes``
    files; None when one of them is the file's own (1..GOOD-1 files)."""
    if any(0 < n < GOOD for n in sizes):
        return None
    if not sizes:
        return "warning", "no MAINTAINERS section names it"
    small = min(sizes)
    shown = f"{small}+" if small >= TOO_BIG else str(small)
    return ("error" if small >= TOO_BIG else "warning",
            f"the smallest MAINTAINERS section covering it, {names[sizes.index(small)]}, "
            f"covers {shown} files (a section of its own: under {GOOD})")


def _report(ctx, verdicts: dict[tuple[str, str], list[str]]):
    """One finding per verdict: a new driver's 80 files are one problem."""
    for (severity, why), paths in verdicts.items():
        more = f" and {len(paths) - 1} more new file(s)" if len(paths) > 1 else ""
        yield ctx.finding(severity, f"new file {paths[0]}{more}: {why}", file=paths[0],
                          details="\n".join(paths) if more else "",
                          hint="add a MAINTAINERS entry for the new code in this series")


@check(id="maintainers",
       summary="each new file falls in a MAINTAINERS section of under 75 files",
       scope="series",
       needs="tree",
       version=1,
       nipa=("maintainers",))
def run(ctx):
    added = new_files(ctx.series)
    if not added or ctx.tip is None:
        return
    files = ctx.tree.files(ctx.tip)
    text = ctx.tree.text(ctx.tip, "MAINTAINERS")
    if text is None:
        yield ctx.finding("warning", "the tree has no MAINTAINERS file",
                          nipa={"maintainers": "unknown"})
        return
    maint = MaintainersFile(text)
    is_dir = directory_test(files)
    verdicts: dict[tuple[str, str], list[str]] = {}
    for path in added:
        secs = maint.sections_of(path, is_dir)
        got = verdict([maint.sections[i].name for i in secs],
                      [maint.size(i, files, is_dir, TOO_BIG) for i in secs])
        if got:
            verdicts.setdefault(got, []).append(path)
    yield from _report(ctx, verdicts)
