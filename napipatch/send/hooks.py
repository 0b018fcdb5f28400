"""Installing and removing the git hooks that run napipatch before sending.

``sendemail-validate`` (git send-email, once per message) and ``pre-push``
are small shell scripts that call this interpreter (``sys.executable -m
napipatch hook run ...``), so they work from a virtualenv without it being
activated. A hook that was already there is never overwritten: it moves to
``<hook>.napipatch-chained`` and our script runs it first (its failure stops
the send or push); ``uninstall`` renames it back, byte for byte. The hooks
directory is git's own answer (``git rev-parse --git-path hooks``), so
``core.hooksPath`` is respected. Install and uninstall hold a lock file in
that directory, and a hook script is renamed into place whole, so two at
once (a script and a hand) never leave a hook half-written or lost.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from napipatch import fileio
from napipatch.errors import NapipatchError
from napipatch.tree import gitutil

HOOKS = ("sendemail-validate", "pre-push")
CHAINED = ".napipatch-chained"
MARKER = "# napipatch-hook:"
LOCK = ".napipatch-hooks.lock"


def hooks_dir(repo: Path) -> Path:
    """The directory git runs hooks from for ``repo`` (core.hooksPath aware)."""
    repo = Path(repo)
    if not repo.is_dir() or not gitutil.is_repo(repo):
        raise NapipatchError(repo, "not a git repository")
    cp = gitutil.git(repo, "rev-parse", "--show-toplevel", check=False)
    top = Path(cp.stdout.strip()) if cp.returncode == 0 and cp.stdout.strip() else \
        Path(gitutil.out(repo, "rev-parse", "--absolute-git-dir"))
    # A relative core.hooksPath is relative to where hooks run: the top.
    d = Path(gitutil.out(top, "rev-parse", "--git-path", "hooks")).expanduser()
    return d if d.is_absolute() else (top / d)


def is_ours(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return MARKER.encode() in f.read(400)
    except OSError:
        return False


def _exists(p: Path) -> bool:
    return os.path.lexists(p)


def script(name: str, only: list[str] | None = None, skip: list[str] | None = None) -> str:
    """The shell script installed as hook ``name``."""
    py = shlex.quote(sys.executable)
    cmd = ["-m", "napipatch", "hook", "run"]
    if only:
        cmd += ["--only", ",".join(only)]
    if skip:
        cmd += ["--skip", ",".join(skip)]
    cmd += [name, "--"]
    run = " ".join(shlex.quote(c) for c in cmd)
    head = (f"#!/bin/sh\n{MARKER} {name}\n"
            f"# Installed by 'napipatch hook install'; 'napipatch hook uninstall' removes it\n"
            f"# and puts back the hook that was here before ({name}{CHAINED}), which runs first.\n"
            f'chained="$(dirname "$0")/{name}{CHAINED}"\n'
            "run_napipatch() {\n"
            # napipatch gone (its venv removed): the policy of its own failures.
            f"    if [ ! -x {py} ]; then\n"
            f"        echo 'napipatch: warning: {name} hook: '{py}' is gone; not checked' >&2\n"
            '        [ "$(git config --type=bool napipatch.hook-strict)" = false ] || return 2\n'
            "        return 0\n"
            "    fi\n"
            f'    {py} {run} "$@"\n'
            "}\n")
    if name == "pre-push":
        # Both hooks read the same ref lines on stdin.
        return head + (
            'if [ -x "$chained" ]; then\n'
            '    refs=$(mktemp) || exit 1\n'
            '    trap \'rm -f "$refs"\' EXIT\n'
            '    cat >"$refs"\n'
            '    "$chained" "$@" <"$refs" || exit $?\n'
            '    run_napipatch "$@" <"$refs"\n'
            '    exit $?\n'
            'fi\n'
            'run_napipatch "$@"\n')
    return head + (
        'if [ -x "$chained" ]; then\n'
        '    "$chained" "$@" || exit $?\n'
        'fi\n'
        'run_napipatch "$@"\n')


def _which(sendemail: bool, pre_push: bool) -> list[str]:
    if not sendemail and not pre_push:
        return list(HOOKS)
    return [h for h, on in zip(HOOKS, (sendemail, pre_push)) if on]


def install(repo: Path, sendemail: bool = False, pre_push: bool = False,
            only: list[str] | None = None, skip: list[str] | None = None) -> list[str]:
    """Install the chosen hooks (both when neither is chosen); one line per hook."""
    d = hooks_dir(repo)
    d.mkdir(parents=True, exist_ok=True)
    with fileio.locked(d / LOCK):
        return _install(d, _which(sendemail, pre_push), only, skip)


def _install(d: Path, names: list[str], only: list[str] | None,
             skip: list[str] | None) -> list[str]:
    # Refuse before touching anything.
    for name in names:
        hook, chained = d / name, d / f"{name}{CHAINED}"
        if _exists(hook) and not is_ours(hook) and _exists(chained):
            raise NapipatchError(hook, f"not napipatch's and {chained.name} exists too; "
                                 "move one of them away first")
    lines = []
    for name in names:
        hook, chained = d / name, d / f"{name}{CHAINED}"
        if is_ours(hook):
            what = "updated"
        elif _exists(hook):
            os.rename(hook, chained)
            what = f"installed; the hook that was there moved to {chained.name} and runs first"
        else:
            what = "installed"
            if _exists(chained):
                what += f"; {chained.name} (from an earlier install) runs first"
        fileio.atomic_write(hook, script(name, only, skip), mode=0o755)
        lines.append(f"{hook}: {what}")
    return lines


def uninstall(repo: Path, sendemail: bool = False, pre_push: bool = False) -> list[str]:
    """Remove our hooks and put back what was there before."""
    d = hooks_dir(repo)
    if not d.is_dir():
        return [f"{d / name}: not installed" for name in _which(sendemail, pre_push)]
    with fileio.locked(d / LOCK):
        return _uninstall(d, _which(sendemail, pre_push))


def _uninstall(d: Path, names: list[str]) -> list[str]:
    lines = []
    for name in names:
        hook, chained = d / name, d / f"{name}{CHAINED}"
        if _exists(hook) and not is_ours(hook):
            lines.append(f"{hook}: not napipatch's, left alone")
            continue
        had = _exists(hook)
        if had:
            hook.unlink()
        if _exists(chained):
            os.rename(chained, hook)
            lines.append(f"{hook}: {'removed; ' if had else ''}the earlier hook is back")
        else:
            lines.append(f"{hook}: removed" if had else f"{hook}: not installed")
    return lines
