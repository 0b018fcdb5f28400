"""``hook install --b4``: napipatch as b4's per-patch check command.

b4 send never runs git's sendemail-validate hook; what it runs (``b4 prep
--check``, send's pre-flight "needs checking", ``b4 am``) are the commands
in ``b4.prep-perpatch-check-cmd`` and ``b4.am-perpatch-check-cmd``, each
patch on stdin from the repository's top, a line with ``ERROR:`` a failure.
``b4 review`` (0.15+) runs ``b4.review-perpatch-check-cmd`` the same way
and reads JSON (``--format b4-review``), and ``b4.review-series-check-cmd``
once for the series, the cover letter on stdin (``check --b4-series``).
Setting any of them replaces b4's default (checkpatch.pl;
``_builtin_checkpatch`` for review), so checkpatch is kept in the list when
the tree has it. The values go to the repository's ``.git/config`` (or,
``--global``, the user's ``~/.gitconfig``): b4 0.16 no longer reads check
commands from an in-tree ``.b4-config``. The previous values are saved (in
the git dir; for ``--global`` in napipatch's config directory) and put
back, in order, by ``hook uninstall``.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from napipatch import fileio
from napipatch.errors import NapipatchError
from napipatch.tree import gitutil

KEYS = ("b4.prep-perpatch-check-cmd", "b4.am-perpatch-check-cmd",
        "b4.review-perpatch-check-cmd", "b4.review-series-check-cmd")
# What napipatch runs for each key: b4's terse lines, or b4 review's JSON.
_ARGS = {"b4.prep-perpatch-check-cmd": "check - --format terse",
         "b4.am-perpatch-check-cmd": "check - --format terse",
         "b4.review-perpatch-check-cmd": "check - --format b4-review",
         "b4.review-series-check-cmd": "check --b4-series --format b4-review"}
SAVED = "napipatch-b4-saved.json"

# b4's own defaults (b4/ez.py get_check_cmds, b4 am's local checks,
# b4/review/checks.py load_check_cmds); b4 has no default series command.
_CHECKPATCH = {"b4.prep-perpatch-check-cmd": "{} -q --terse --no-summary --mailback --showfile",
               "b4.am-perpatch-check-cmd": "{} -q --terse --no-summary --mailback",
               "b4.review-perpatch-check-cmd": "_builtin_checkpatch"}


@dataclass(frozen=True)
class Scope:
    """Where the keys are written: one repository's config, or the user's."""

    top: Path
    flag: str  # git config's --local or --global
    saved: Path

    @property
    def label(self) -> str:
        return "~/.gitconfig" if self.flag == "--global" else str(self.top)


def scope(repo: Path | None, glob: bool = False) -> Scope:
    if glob:
        home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
        return Scope(Path.home(), "--global", home / "napipatch" / "b4-saved-global.json")
    top = gitutil.require_repo(repo or Path("."))
    return Scope(top, "--local", Path(gitutil.out(top, "rev-parse", "--absolute-git-dir")) / SAVED)


def _values(sc: Scope, key: str) -> list[str]:
    cp = gitutil.git(sc.top, "config", sc.flag, "--get-all", key, check=False)
    return cp.stdout.splitlines() if cp.returncode == 0 else []


def _set(sc: Scope, key: str, values: list[str]) -> None:
    gitutil.git(sc.top, "config", sc.flag, "--unset-all", key, check=False)
    for v in values:
        gitutil.git(sc.top, "config", sc.flag, "--add", key, v)


def command(key: str = KEYS[0], only: list[str] | None = None,
            skip: list[str] | None = None) -> str:
    """What b4 runs for ``key``: this interpreter's napipatch, with the
    ``--only`` / ``--skip`` given to ``hook install``."""
    narrow = "".join(f" {opt} {shlex.quote(','.join(ids))}"
                     for opt, ids in (("--only", only), ("--skip", skip)) if ids)
    return f"{shlex.quote(sys.executable)} -m napipatch {_ARGS[key]}{narrow}"


def _ours(value: str) -> bool:
    return " -m napipatch check " in value


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


def install(repo: Path | None, glob: bool = False, only: list[str] | None = None,
            skip: list[str] | None = None) -> list[str]:
    """Add napipatch to b4's keys; the first install saves what was there."""
    sc = scope(repo, glob)
    sc.saved.parent.mkdir(parents=True, exist_ok=True)
    with fileio.locked(_lock(sc.saved)):
        return _install(sc, only, skip)


def _install(sc: Scope, only: list[str] | None, skip: list[str] | None) -> list[str]:
    before = {k: _values(sc, k) for k in KEYS}
    _save(sc.saved, before)
    # A repository's own checkpatch.pl stays first, as b4 would run it; the
    # user's config serves every repository, and napipatch's checkpatch
    # check runs the tree's (trusted) checkpatch.pl anyway.
    checkpatch = sc.top / "scripts" / "checkpatch.pl"
    lines = []
    for key in KEYS:
        values = [v for v in before[key] if not _ours(v)]
        if not values and key in _CHECKPATCH and sc.flag == "--local" \
                and os.access(checkpatch, os.X_OK):
            values = [_CHECKPATCH[key].format(checkpatch)]  # b4's default, kept
        ours = command(key, only, skip)
        _set(sc, key, values + [ours])
        lines.append(f"{sc.label}: {key} = " + " ; ".join(values + [ours]))
    return lines


def uninstall(repo: Path | None, glob: bool = False) -> list[str]:
    """Put back the values the first install saved, exactly."""
    sc = scope(repo, glob)
    if not sc.saved.parent.is_dir():
        return [f"{sc.label}: b4 check commands: not installed"]
    with fileio.locked(_lock(sc.saved)):
        if not sc.saved.exists():
            return [f"{sc.label}: b4 check commands: not installed"]
        try:
            before = json.loads(sc.saved.read_text())
        except ValueError as exc:
            raise NapipatchError(sc.saved, f"not JSON ({exc})") from None
        for key in KEYS:
            _set(sc, key, list(before.get(key, [])))
        sc.saved.unlink()
    return [f"{sc.label}: {key} restored ({len(before.get(key, []))} value(s))" for key in KEYS]


def _lock(saved: Path) -> Path:
    """Install and uninstall run one at a time: each rewrites every key."""
    return saved.with_name(f".{saved.name}.lock")
