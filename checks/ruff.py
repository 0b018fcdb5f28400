"""ruff on the Python files a patch adds or changes, new findings only.

What it catches:
    Each ``.py`` file the patch adds or modifies, checked by ``ruff check``
    before and after the patch, as the netdev CI runs it. Every finding
    after the patch that was not there before (same file, code and
    message; its line may move) is an error at its file and line.

    The rules are ``E4,E7,E9,F`` (pyflakes and pycodestyle's error
    classes: undefined names, unused imports, syntax errors): ruff's
    default set when the CI adopted ruff in 2025 to catch "interesting"
    errors only. The CI passes no options, so it gets the defaults of
    whatever ruff it has; releases after 0.14 default to far more rules
    (0.17.5 adds isort's I001, pyupgrade, bugbear ...), which would flag
    most existing selftests. napipatch pins ruff 0.17.5 and names the set.
    ruff runs on copies in a scratch directory with ``--isolated``: no
    ``pyproject.toml`` or ``ruff.toml`` of the patched tree, nor the
    user's, is read. Where napipatch also differs from the CI: the CI
    compares the count of output lines over the patch's Python files (a
    fixed finding can hide a new one); napipatch compares the findings.
    Without ``--tree`` only new files are checked, from the diff.

Why a reviewer cares:
    The netdev CI (NIPA's ``ruff`` test) posts ``fail`` when ruff's output
    on the patch's Python files grows; there is no warning state.

Example:
    ``tools/testing/selftests/net/nl_netdev.py:7: F401: `time` imported
    but unused``

Fix:
    What ruff says (``ruff check --fix`` fixes many); for a deliberate case
    a ``# noqa: <code>`` comment on the line.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from napipatch.checks import check
from napipatch.checks._lint import Lint, changed, new_lints, run as run_tool, write
from napipatch.errors import NapipatchError

# ruff's default rules when the netdev CI adopted it (September 2025:
# "by default, ruff will only check for 'interesting' errors"). Later ruff
# releases default to many more (0.17.5: isort, pyupgrade, bugbear ...),
# so the set is named here rather than left to the installed version.
SELECT = "E4,E7,E9,F"


def parse(output: str, root: Path, side: str) -> list[Lint]:
    try:
        items = json.loads(output or "[]")
    except ValueError:
        raise NapipatchError("ruff", "output is not JSON") from None
    out, prefix = [], str(root / side) + "/"
    for m in items:
        name = m.get("filename", "")
        if name.startswith(prefix):
            out.append(Lint(name[len(prefix):], (m.get("location") or {}).get("row") or 1,
                            m.get("code") or "syntax", m.get("message", ""), "error"))
    return out


@check(id="ruff",
       summary="ruff check (E4,E7,E9,F) on changed .py files: every new finding",
       scope="patch",
       needs="diff",
       version=1,
       files=("*.py",),
       nipa=("ruff",))
def run(ctx):
    files, notes = changed(ctx, (".py",), "ruff")
    yield from notes
    if not files:
        return
    with tempfile.TemporaryDirectory(prefix="napipatch-ruff-") as td:
        root = Path(td).resolve()
        names = []
        for f in files:
            for side, text in (("pre", f.pre), ("post", f.post)):
                if text is not None:
                    write(root / side, f.path, text)
                    names.append(f"{side}/{f.path}")
        out = run_tool("ruff", ["check", "--isolated", "--no-cache", f"--select={SELECT}",
                                "--output-format=json", "--exit-zero", *names], root)
    before, after = parse(out, root, "pre"), parse(out, root, "post")
    for x in new_lints(before, after, {f.path: f.added for f in files}):
        yield ctx.finding("error", f"{x.code}: {x.message}", file=x.file, line=x.line)
