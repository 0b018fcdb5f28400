"""The tree's own ``scripts/checkpatch.pl --strict``, as the netdev CI runs it.

What it catches:
    Everything checkpatch reports (style, spelling, API misuse), with the
    netdev CI's options (``--strict --codespell --max-line-length=80``) and
    its ignore list (``napipatch.checkpatch-ignore``). Each message becomes
    a finding at its file and post-patch line; ERROR is an error, WARNING a
    warning, CHECK an info.

    NIPA's rule (tests/patch/checkpatch): success only at "0 errors,
    0 warnings, 0 checks"; warning when there are no errors but warnings
    or checks; fail at any error. napipatch keeps a CHECK at info (a
    suggestion) where NIPA posts a warning for it.

    ``--codespell`` needs codespell's dictionary (Debian's ``codespell``
    package, which ``scripts/install.sh`` installs). checkpatch looks for
    it at /usr/share/codespell/dictionary.txt and otherwise asks the
    ``python3`` on PATH for codespell_lib, which inside napipatch's venv
    finds nothing; so napipatch finds the dictionary itself and passes
    ``--codespellfile``. Without one, checkpatch still runs and the first
    patch gets one warning saying spelling was not checked: the flag is
    never dropped silently.

Why a reviewer cares:
    netdev reviewers expect a checkpatch-clean series and the netdev CI
    marks it in patchwork hours after posting; running it before sending
    costs seconds.

Example:
    ``WARNING:LONG_LINE: line length of 88 exceeds 80 columns``

Fix:
    What checkpatch says. checkpatch runs from the trusted base commit, so
    a patch that edits scripts/checkpatch.pl cannot change what runs.
"""

from __future__ import annotations

from napipatch.checks import check

import importlib.util
import re
import subprocess
import tempfile
from pathlib import Path


_HEAD = re.compile(r"^(ERROR|WARNING|CHECK):([A-Z0-9_]+): (.*)$")
_WHERE = re.compile(r"^#\d+: FILE: (.+?):(\d+):")
_SEV = {"ERROR": "error", "WARNING": "warning", "CHECK": "info"}
# Where the dictionary is: checkpatch's default, then Debian 12's package.
CODESPELL = (Path("/usr/share/codespell/dictionary.txt"),
             Path("/usr/lib/python3/dist-packages/codespell_lib/data/dictionary.txt"))


def codespell_dictionary() -> Path | None:
    """codespell's dictionary on this machine: the known places, then a
    codespell_lib importable here (a pip install in napipatch's venv)."""
    for path in CODESPELL:
        if path.is_file():
            return path
    spec = importlib.util.find_spec("codespell_lib")
    if spec and spec.origin:
        path = Path(spec.origin).parent / "data" / "dictionary.txt"
        if path.is_file():
            return path
    return None


def parse(output: str) -> list[dict]:
    """checkpatch's verbose output -> [{type, severity, message, file, line, excerpt}]."""
    out, cur = [], None
    for line in output.splitlines():
        m = _HEAD.match(line)
        if m:
            cur = {"severity": _SEV[m.group(1)], "type": m.group(2), "message": m.group(3),
                   "file": None, "line": None, "excerpt": []}
            out.append(cur)
            continue
        if cur is None:
            continue
        w = _WHERE.match(line)
        if w and cur["file"] is None:
            cur["file"], cur["line"] = w.group(1), int(w.group(2))
        elif not line.strip():
            cur = None
        elif line.startswith(("+", " ", "-")) and len(cur["excerpt"]) < 6:
            cur["excerpt"].append(line)
    return out


@check(id="checkpatch",
       summary="scripts/checkpatch.pl --strict --codespell with the netdev CI's ignore list",
       scope="patch",
       needs="scripts",
       version=2,
       nipa=("checkpatch",))
def run(ctx):
    script = ctx.tree.scripts / "scripts" / "checkpatch.pl"
    if not script.is_file():
        yield ctx.finding("info", "the tree has no scripts/checkpatch.pl")
        return
    args = ["perl", str(script), "--no-tree", "--strict", "--show-types", "--color=never",
            "--max-line-length=80", "--ignore", ctx.config.checkpatch_ignore]
    words = codespell_dictionary()
    # The dictionary's presence is an input: a result cached without it
    # is not reused once codespell is installed, nor the other way round.
    stamp = ctx.tree.host_file(words or CODESPELL[0])
    if words is not None and stamp is not None:
        args += ["--codespell", "--codespellfile", str(words)]
    elif ctx.n == 1:
        yield ctx.finding("warning", "no codespell dictionary on this machine: checkpatch ran "
                          "without --codespell, so the spelling mistakes the netdev CI's "
                          "checkpatch reports were not looked for",
                          hint="apt-get install codespell (scripts/install.sh does)")
    args.append("-")
    # A neutral cwd: checkpatch looks at git and config files around it.
    with tempfile.TemporaryDirectory(prefix="napipatch-cp-") as td:
        cp = subprocess.run(args, input=ctx.mail.as_format_patch(), capture_output=True,
                            text=True, cwd=td, timeout=300, errors="replace")
    for item in parse(cp.stdout):
        yield ctx.finding(item["severity"], f"{item['type']}: {item['message']}",
                          file=item["file"], line=item["line"],
                          details="\n".join(item["excerpt"]))
