"""``hook install --b4``: napipatch as b4's per-patch check command.

b4 send never runs git's sendemail-validate hook; what it runs (``b4 prep
--check``, send's pre-flight "needs checking", ``b4 am``) are the commands
in ``b4.prep-perpatch-check-cmd`` and ``b4.am-perpatch-check-cmd``, each
patch on stdin from the repository's top, a line with ``ERROR:`` a failure.
``b4 review`` (0.15+) runs ``b4.review-perpatch-check-cmd`` the same way
and reads JSON (``--format b4-review``). Setting any of them replaces b4's
default (checkpatch.pl; ``_builtin_checkpatch`` for review), so checkpatch
is kept in the list when the tree has it. The repository's previous values
are saved in its git dir and put back, in order, by ``hook uninstall``.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from napipatch import fileio
from napipatch.errors import NapipatchError
from napipatch.tree import gitutil

KEYS = ("b4.prep-perpatch-check-cmd", "b4.am-perpatch-check-cmd",
        "b4.review-perpatch-check-cmd")
# What napipatch prints for each key: b4's terse lines, or b4 review's JSON.
_FORMAT = {"b4.prep-perpatch-check-cmd": "terse", "b4.am-perpatch-check-cmd": "terse",
           "b4.review-perpatch-check-cmd": "b4-review"}
SAVED = "napipatch-b4-saved.json"

# b4's own defaults (b4/ez.py get_check_cmds, b4 am's local checks,
# b4/review/checks.py load_check_cmds).
_CHECKPATCH = {"b4.prep-perpatch-check-cmd": "{} -q --terse --no-summary --mailback --showfile",
               "b4.am-perpatch-check-cmd": "{} -q --terse --no-summary --mailback",
               "b4.review-perpatch-check-cmd": "_builtin_checkpatch"}


def _top(repo: Path) -> Path:
    return gitutil.require_repo(repo)


def _saved_file(top: Path) -> Path:
    return Path(gitutil.out(top, "rev-parse", "--absolute-git-dir")) / SAVED


def _values(top: Path, key: str) -> list[str]:
    cp = gitutil.git(top, "config", "--local", "--get-all", key, check=False)
    return cp.stdout.splitlines() if cp.returncode == 0 else []


def _set(top: Path, key: str, values: list[str]) -> None:
    gitutil.git(top, "config", "--local", "--unset-all", key, check=False)
    for v in values:
        gitutil.git(top, "config", "--local", "--add", key, v)


def command(key: str = KEYS[0]) -> str:
    """What b4 runs for ``key``: this interpreter's napipatch, one patch on stdin."""
    return f"{shlex.quote(sys.executable)} -m napipatch check - --format {_FORMAT[key]}"


def _ours(value: str) -> bool:
    return any(value.endswith(f" -m napipatch check - --format {f}") for f in _FORMAT.values())


def _save(saved: Path, before: dict[str, list[str]]) -> None:
    """Keep what the repository had before napipatch's first install (never
    overwritten); a key an older napipatch did not set is added with its
    value now. Called under the install lock."""
    if fileio.write_new(saved, json.dumps(before, indent=1) + "\n"):
        return
    try:
        kept = json.loads(saved.read_text())
    except ValueError as exc:
        raise NapipatchError(saved, f"not JSON ({exc})") from None
    missing = {k: [v for v in vs if not _ours(v)] for k, vs in before.items() if k not in kept}
    if missing:
        fileio.atomic_write(saved, json.dumps({**kept, **missing}, indent=1) + "\n")


def install(repo: Path) -> list[str]:
    """Add napipatch to b4's keys; the first install saves what was there."""
    top = _top(repo)
    saved = _saved_file(top)
    with fileio.locked(_lock(saved)):
        return _install(top, saved)


def _install(top: Path, saved: Path) -> list[str]:
    before = {k: _values(top, k) for k in KEYS}
    _save(saved, before)
    checkpatch = top / "scripts" / "checkpatch.pl"
    lines = []
    for key in KEYS:
        values = [v for v in before[key] if not _ours(v)]
        if not values and os.access(checkpatch, os.X_OK):
            values = [_CHECKPATCH[key].format(checkpatch)]  # b4's default, kept
        _set(top, key, values + [command(key)])
        lines.append(f"{top}: {key} = " + " ; ".join(values + [command(key)]))
    return lines


def uninstall(repo: Path) -> list[str]:
    """Put back the values the first install saved, exactly."""
    top = _top(repo)
    saved = _saved_file(top)
    with fileio.locked(_lock(saved)):
        if not saved.exists():
            return [f"{top}: b4 check commands: not installed"]
        try:
            before = json.loads(saved.read_text())
        except ValueError as exc:
            raise NapipatchError(saved, f"not JSON ({exc})") from None
        for key in KEYS:
            _set(top, key, list(before.get(key, [])))
        saved.unlink()
    return [f"{top}: {key} restored ({len(before.get(key, []))} value(s))" for key in KEYS]


def _lock(saved: Path) -> Path:
    """Install and uninstall run one at a time: each rewrites every key."""
    return saved.with_name(f".{SAVED}.lock")
