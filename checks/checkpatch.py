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
    suggestion) where NIPA posts a warning for it; the NIPA forecast
    shows NIPA's warning.

    ``--codespell`` needs codespell's dictionary (Debian's ``codespell``
    package, which ``scripts/install.sh`` installs). checkpatch looks for
    it at /usr/share/codespell/dictionary.txt and otherwise asks the
    ``python3`` on PATH for codespell_lib, which inside napipatch's venv
    finds nothing; so napipatch finds the dictionary itself and passes
    ``--codespellfile``. Without one, checkpatch still runs and the series
    gets one warning saying spelling was not checked: the flag is never
    dropped silently, and the forecast for checkpatch is unknown.

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

from napipatch import procs
from napipatch.checks import check

import importlib.util
import re
import tempfile
from pathlib import Path


_HEAD = re.compile(r"^(ERROR|WARNING|CHECK):([A-Z0-9_]+): (.*)$")
_WHERE = re.compile(r"^#\d+: FILE: (.+?):(\d+):")
_SEV = {"ERROR": "error", "WARNING": "warning", "CHECK": "info"}
# NIPA's checkpatch test is a warning at 0 errors with warnings or checks.
_NIPA = {"ERROR": "fail", "WARNING": "warning", "CHECK": "warning"}
# checkpatch quotes the offending line under every message: a 40,000-column
# line with 20,000 commas is 20,000 messages of 40 KB each. Enough to act on
# is kept, and checkpatch is stopped there instead of filling memory.
MAX_MESSAGES = 200
MAX_EXCERPT = 240
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


# A misspelling checkpatch can report is a whole run of these characters:
# its regex is (?:^|[^\w\-'`])(typo|typo|...)(?:[^\w\-'`]|$), case-blind.
_TOKEN = re.compile(r"[\w\-'`]+")


def trimmed_dictionary(words: Path, text: str, dest: Path) -> Path:
    """The entries of codespell's dictionary that can match in ``text``.

    checkpatch joins the whole dictionary (37,000 entries on Debian 12)
    into one alternation it tries on every line: 1.4 s of CPU a patch. Only
    an entry whose misspelling is a whole token of the patch can match, so
    the others are left out; what checkpatch reports is the same.
    """
    tokens = {t.lower() for t in _TOKEN.findall(text)}
    keep = [line for line in words.read_text(errors="replace").splitlines()
            if (key := line.split("->", 1)[0].strip()).lower() in tokens
            or not _TOKEN.fullmatch(key)]
    dest.write_text("\n".join(keep) + "\n")
    return dest


def parse(output) -> list[dict]:
    """checkpatch's verbose output (a string or its lines) ->
    [{type, severity, message, file, line, excerpt}], at most MAX_MESSAGES + 1:
    the caller stops reading once it has more than it can show."""
    out, cur = [], None
    lines = output.splitlines() if isinstance(output, str) else output
    for line in lines:
        line = line.rstrip("\n")
        m = _HEAD.match(line)
        if m:
            cur = {"severity": _SEV[m.group(1)], "nipa": _NIPA[m.group(1)],
                   "type": m.group(2), "message": m.group(3),
                   "file": None, "line": None, "excerpt": []}
            out.append(cur)
            if len(out) > MAX_MESSAGES:
                break
            continue
        if cur is None:
            continue
        w = _WHERE.match(line)
        if w and cur["file"] is None:
            cur["file"], cur["line"] = w.group(1), int(w.group(2))
        elif not line.strip():
            cur = None
        elif line.startswith(("+", " ", "-")) and len(cur["excerpt"]) < 6:
            cur["excerpt"].append(line if len(line) <= MAX_EXCERPT
                                  else line[:MAX_EXCERPT] + " [...]")
    return out


def _reader(lines: list[str]):
    """A per-line callback keeping checkpatch's lines until ``parse`` has
    more messages than it keeps: then checkpatch is stopped."""
    heads = 0

    def more(line: str) -> bool:
        nonlocal heads
        lines.append(line)
        heads += bool(_HEAD.match(line))
        return heads > MAX_MESSAGES
    return more


@check(id="checkpatch",
       summary="scripts/checkpatch.pl --strict --codespell with the netdev CI's ignore list",
       scope="patch",
       needs="scripts",
       version=3,
       nipa=("checkpatch",))
def run(ctx):
    script = ctx.tree.scripts / "scripts" / "checkpatch.pl"
    if not script.is_file():
        yield ctx.finding("info", "the tree has no scripts/checkpatch.pl",
                          nipa={"checkpatch": "unknown"})
        return
    args = ["perl", str(script), "--no-tree", "--strict", "--show-types", "--color=never",
            "--max-line-length=80", "--ignore", ctx.config.checkpatch_ignore]
    words = codespell_dictionary()
    # The dictionary's presence is an input: a result cached without it
    # is not reused once codespell is installed, nor the other way round.
    stamp = ctx.tree.host_file(words or CODESPELL[0])
    use_words = words is not None and stamp is not None
    if not use_words and ctx.n == 1:
        # About the machine, so the series' (said once); NIPA's state for
        # checkpatch is not known without the spelling it checks.
        yield ctx.finding("warning", "no codespell dictionary on this machine: checkpatch ran "
                          "without --codespell, so the spelling mistakes the netdev CI's "
                          "checkpatch reports were not looked for",
                          hint="apt-get install codespell (scripts/install.sh does)", patch=0,
                          nipa={"checkpatch": "unknown"})
    patch = ctx.mail.as_format_patch()
    # A neutral cwd: checkpatch looks at git and config files around it.
    with tempfile.TemporaryDirectory(prefix="napipatch-cp-") as td:
        if use_words:
            mine = trimmed_dictionary(words, patch, Path(td) / "dictionary.txt")
            args += ["--codespell", "--codespellfile", str(mine)]
        src = Path(td) / "patch"
        src.write_text(patch, encoding="utf-8", errors="replace")
        lines: list[str] = []
        # No deadline of its own: the engine's check-timeout bounds the unit.
        procs.run(args + [str(src)], timeout=None, name="checkpatch.pl", stderr="null",
                  cwd=td, on_line=_reader(lines))
        items = parse(lines)
    for item in items[:MAX_MESSAGES]:
        yield ctx.finding(item["severity"], f"{item['type']}: {item['message'][:1000]}",
                          file=item["file"], line=item["line"],
                          details="\n".join(item["excerpt"]),
                          nipa={"checkpatch": item["nipa"]})
    if len(items) > MAX_MESSAGES:
        # An unread message may be an ERROR: only a fail already shown is certain.
        yield ctx.finding("warning", f"checkpatch said more than {MAX_MESSAGES} things about "
                          "this patch; the first are shown, the rest were not read",
                          hint="fix these and run again", nipa={"checkpatch": "unknown"})
