"""The tree's own ``scripts/checkpatch.pl --strict``, as the netdev CI runs it.

What it catches:
    Everything checkpatch reports (style, spelling, API misuse), with the
    netdev CI's options (``--strict --max-line-length=80``, ``--codespell``
    when Debian's codespell dictionary is installed) and its ignore list
    (``napipatch.checkpatch-ignore``). Each message becomes a finding at
    its file and post-patch line; ERROR is an error, WARNING a warning,
    CHECK an info.

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

import re
import subprocess
import tempfile
from pathlib import Path


_HEAD = re.compile(r"^(ERROR|WARNING|CHECK):([A-Z0-9_]+): (.*)$")
_WHERE = re.compile(r"^#\d+: FILE: (.+?):(\d+):")
_SEV = {"ERROR": "error", "WARNING": "warning", "CHECK": "info"}
CODESPELL = Path("/usr/share/codespell/dictionary.txt")


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
       summary="scripts/checkpatch.pl --strict with the netdev CI's ignore list",
       scope="patch",
       needs="scripts",
       version=1)
def run(ctx):
    script = ctx.tree.scripts / "scripts" / "checkpatch.pl"
    if not script.is_file():
        yield ctx.finding("info", "the tree has no scripts/checkpatch.pl")
        return
    args = ["perl", str(script), "--no-tree", "--strict", "--show-types", "--color=never",
            "--max-line-length=80", "--ignore", ctx.config.checkpatch_ignore, "-"]
    if CODESPELL.is_file():
        args.insert(-1, "--codespell")
    # A neutral cwd: checkpatch looks at git and config files around it.
    with tempfile.TemporaryDirectory(prefix="napipatch-cp-") as td:
        cp = subprocess.run(args, input=ctx.mail.as_format_patch(), capture_output=True,
                            text=True, cwd=td, timeout=300, errors="replace")
    for item in parse(cp.stdout):
        yield ctx.finding(item["severity"], f"{item['type']}: {item['message']}",
                          file=item["file"], line=item["line"],
                          details="\n".join(item["excerpt"]))
