"""Building a series patch by patch for one target, incrementally.

Per kernel tree and target there is one persistent directory under the
build root (``$NAPIPATCH_BUILD_DIR``, else ``<napipatch.cache-dir>/build``):

    <root>/<tree>-<hash>/<target>/src    a git worktree of the tree (detached)
                                 /obj    the O= directory, kept between runs
                                 /logs   one full make log per step

Each step is ``git checkout --detach <commit>`` in the worktree (only the
files that differ get new mtimes) and ``make``, so after the first build
every step is incremental. Warnings are tracked per object file: when an
object is recompiled its warnings are replaced by the new ones, so "new
warnings" at a step is exactly what the patch added, even though only the
touched objects are rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from napipatch import fileio, procs
from napipatch.errors import NapipatchError
from napipatch.fileio import locked
from napipatch.jobs.targets import Target
from napipatch.kernel import kconfig
from napipatch.tree import gitutil

_QUIET = re.compile(r"^  ([A-Z][A-Z0-9_-]*(?: \[M\])?)\s+(\S+)\s*$")
_DIAG = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+):(?:(?P<col>\d+):)? "
                   r"(?P<kind>warning|error|fatal error): (?P<msg>.*)$")
_OTHER_ERR = re.compile(r"(undefined reference to|^make(\[\d+\])?: \*\*\*|^ld: .*error|"
                        r"Error \d+$|^ERROR: modpost:)")
_OTHER_WARN = re.compile(r"^(WARNING: modpost:|ld: warning:|.*: warning: )")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

Progress = Callable[[str], None]


def compiler(cc: str = "gcc") -> str:
    """The C compiler a build is given: behind ccache when it is installed,
    so a step back to a commit built before costs cache hits."""
    return f"ccache {cc}" if shutil.which("ccache") else cc


def build_env(**extra: str) -> dict[str, str]:
    """The environment of a build's make: the caller's, with ``extra``. Not
    ccache's depend mode, though it makes a cold build 29 % cheaper: two cold
    suite runs with it booted, for the hung-guest test, a kernel whose
    threaded write did not sleep, though ccache's log shows the object
    compiled with the sleep (benchmarks/README.md, "ccache's depend mode").
    Until that is explained, builds keep ccache's default mode."""
    return dict(os.environ, **extra)


def build_root(cache: Path) -> Path:
    env = os.environ.get("NAPIPATCH_BUILD_DIR")
    # Absolute: make runs with -C SRC and reads O= from there.
    return (Path(env).expanduser() if env else Path(cache) / "build").absolute()


def run_logged(cmd: list[str], log: Path, env: dict, append: bool = False,
               on_line: Callable[[str], None] | None = None,
               package: str | None = None) -> tuple[int, list[str]]:
    """``cmd`` (make) with stdout and stderr merged into ``log`` line by line,
    after a ``$ cmd`` line and before ``# exit status N``: (status, lines).
    ``on_line`` gets each line as it comes. No deadline: a cold kernel build
    takes as long as it takes; ^C or an error still ends make and what it started."""
    log.parent.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []

    def took(line: str) -> None:
        lines.append(line)
        if on_line:
            on_line(line)
    with open(log, "a" if append else "w", buffering=1) as lf:
        lf.write("$ " + " ".join(cmd) + "\n")
        cp = procs.run(cmd, timeout=None, package=package, env=env, stderr="merge", log=lf,
                       on_line=took)
        lf.write(f"# exit status {cp.returncode}\n")
    return cp.returncode, lines


@dataclass
class Dirs:
    root: Path

    @property
    def src(self) -> Path:
        return self.root / "src"

    @property
    def obj(self) -> Path:
        return self.root / "obj"

    @property
    def logs(self) -> Path:
        return self.root / "logs"


def tree_key(repo: Path) -> str:
    """The build root's directory name for a kernel tree (name + path hash)."""
    repo = Path(repo).resolve()
    return f"{repo.name}-{hashlib.sha256(str(repo).encode()).hexdigest()[:8]}"


def dirs_for(repo: Path, target: Target, cache: Path) -> Dirs:
    return Dirs(build_root(cache) / tree_key(repo) / target.build_name)


@dataclass(frozen=True)
class Diag:
    file: str | None
    line: int | None
    text: str  # one line, as the compiler printed it (path made tree-relative)

    @property
    def key(self) -> str:
        # Without line numbers: a patch that adds lines above a known
        # warning does not make it new.
        return f"{self.file}\0{re.sub(r':[0-9]+(:[0-9]+)?:', ':', self.text)}"


@dataclass
class Step:
    patch: int  # 0 = the base
    commit: str
    ok: bool
    seconds: float
    log: Path
    rebuilt: int = 0
    errors: list[Diag] = field(default_factory=list)
    error_excerpt: str = ""
    new_warnings: list[Diag] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    config_lost: list[str] = field(default_factory=list)


def checkout_worktree(repo: Path, src: Path, commit: str, progress: Progress) -> None:
    """``src``, a detached worktree of ``repo``, at ``commit`` (created on
    first use). The caller holds the lock of the directory holding ``src``."""
    if not (src / ".git").exists():
        progress(f"creating worktree {src} (a full checkout, ~30 s)")
        gitutil.git(repo, "worktree", "prune", check=False)
        if src.exists():
            shutil.rmtree(src)
        gitutil.git(repo, "worktree", "add", "--detach", "-f", str(src), commit)
        return
    # We hold this build directory's lock, so an index.lock here is left
    # by a run that was killed mid-checkout (kill -9 of a worker): stale.
    lock = gitutil.out(src, "rev-parse", "--git-path", "index.lock")
    lock_path = Path(lock) if Path(lock).is_absolute() else src / lock
    stale = lock_path.exists()
    if stale:
        progress(f"removing a stale {lock_path} (a killed run)")
        lock_path.unlink()
    cur = gitutil.git(src, "rev-parse", "HEAD", check=False).stdout.strip()
    if stale:
        # The killed checkout may have written only some files.
        gitutil.git(src, "checkout", "--detach", "-f", "-q", commit)
        gitutil.git(src, "reset", "-q", "--hard", commit)
    elif cur != commit:
        gitutil.git(src, "checkout", "--detach", "-f", "-q", commit)


class Builder:
    """One persistent worktree + O= directory for (tree, target)."""

    def __init__(self, repo: Path, target: Target, cache: Path, jobs: int = 2,
                 progress: Progress | None = None):
        self.repo = gitutil.require_repo(repo)
        self.target = target
        self.dirs = dirs_for(self.repo, target, cache)
        self.jobs = jobs
        self.progress = progress or (lambda _msg: None)
        self._held = ExitStack()

    # -------------------------------------------------------------- locking
    def __enter__(self):
        self.dirs.root.mkdir(parents=True, exist_ok=True)
        self._held = ExitStack()
        # held for a whole job, which may build for an hour: wait as long as it takes
        self._held.enter_context(fileio.locked(self.dirs.root / "lock", timeout=None, remove=False))
        return self

    def __exit__(self, *exc):
        self._held.close()

    # ------------------------------------------------------------- worktree
    def checkout(self, commit: str) -> None:
        checkout_worktree(self.repo, self.dirs.src, commit, self.progress)

    # --------------------------------------------------------------- config
    def make_cmd(self, *targets: str) -> list[str]:
        return ["make", "-C", str(self.dirs.src), f"O={self.dirs.obj}", f"ARCH={self.target.arch}",
                f"-j{self.jobs}", "--output-sync=target", f"CC={compiler()}",
                "KBUILD_BUILD_TIMESTAMP=1970-01-01", "KBUILD_BUILD_USER=napipatch",
                "KBUILD_BUILD_HOST=napipatch", *targets]

    def unmet(self) -> list[str]:
        """Fragment options the O= directory's .config does not have."""
        cfg = self.dirs.obj / ".config"
        have: dict[str, str] = {}
        if cfg.exists():
            for line in cfg.read_text(errors="replace").splitlines():
                if line.startswith("CONFIG_") and "=" in line:
                    k, _, v = line.partition("=")
                    have[k] = v
        bad = []
        for k, want in self.target.options().items():
            got = have.get(k, "n")
            if want == "m" and got in ("m", "y"):
                continue
            if got != want:
                bad.append(f"{k}={want} (got {got})")
        return bad

    def configure(self, log: Path) -> None:
        obj = self.dirs.obj
        stamp = obj / ".napipatch-config"
        cfg = obj / ".config"
        if cfg.exists() and stamp.exists() and stamp.read_text() == self.target.config_hash:
            return
        if cfg.exists() and not stamp.exists() and not self.unmet():
            fileio.atomic_write(stamp, self.target.config_hash)
            return
        obj.mkdir(parents=True, exist_ok=True)
        extra = [src for src, _t in self.target.extra]
        self.progress(f"configuring {self.target.name}: {self.target.base_config} + "
                      + " + ".join(extra + ["fragment"]))
        self._run(self.make_cmd(self.target.base_config), log)
        # the selftest dirs' fragments first, the target's last: the target's win
        opts = {k: v for _s, text in self.target.extra for k, v in kconfig.parse(text).items()}
        opts.update(self.target.options())
        lines = [ln for ln in cfg.read_text().splitlines()
                 if not any(ln.startswith(k + "=") or ln == f"# {k} is not set" for k in opts)]
        lines += [f"# {k} is not set" if v == "n" else f"{k}={v}" for k, v in opts.items()]
        fileio.atomic_write(cfg, "\n".join(lines) + "\n")
        self._run(self.make_cmd("olddefconfig"), log, append=True)
        bad = self.unmet()
        if bad:
            raise NapipatchError(f"target {self.target.name}",
                                 "config fragment not satisfied: " + ", ".join(bad))
        fileio.atomic_write(stamp, self.target.config_hash)

    def _run(self, cmd: list[str], log: Path, append: bool = False,
             on_line: Callable[[str], None] | None = None) -> tuple[int, list[str]]:
        rc, lines = run_logged(cmd, log, build_env(LC_ALL="C"), append, on_line)
        if rc != 0 and on_line is None:
            tail = "\n".join(lines[-15:])
            raise NapipatchError(" ".join(cmd[:3]) + " ...", f"failed (log: {log})\n{tail}")
        return rc, lines

    # ---------------------------------------------------------------- build
    def _state_file(self) -> Path:
        return self.dirs.obj / ".napipatch-warnings.json"

    def _load_state(self) -> dict[str, list[list]]:
        try:
            return json.loads(self._state_file().read_text())
        except (OSError, ValueError):
            return {}

    def _rel(self, path: str) -> str:
        p = os.path.normpath(os.path.join(self.dirs.obj, path))
        for base in (str(self.dirs.src), str(self.dirs.obj)):
            if p.startswith(base + "/"):
                return p[len(base) + 1:]
        return path

    def step(self, patch: int, commit: str, label: str) -> Step:
        """Check out ``commit`` and build it; compare with the previous step."""
        t0 = time.monotonic()
        self.checkout(commit)
        log = self.dirs.logs / f"{time.strftime('%Y%m%d-%H%M%S')}-{label}.log"
        self.configure(log.with_suffix(".config.log"))
        state = self._load_state()
        before = {Diag(*d).key for ds in state.values() for d in ds}
        rebuilt: dict[str, list[Diag]] = {}
        errors: list[Diag] = []
        excerpt: list[str] = []
        current = [None]
        count = [0]

        def on_line(line: str) -> None:
            line = _ANSI.sub("", line)
            m = _QUIET.match(line)
            if m:
                current[0] = self._rel(m.group(2))
                rebuilt.setdefault(current[0], [])
                if m.group(1).startswith("CC"):
                    count[0] += 1  # objects compiled
                self.progress(f"{label}: {m.group(1).strip()} {current[0]} ({count[0]})")
                return
            d = _DIAG.match(line)
            if d:
                f = self._rel(d.group("file"))
                text = line.replace(d.group("file"), f, 1)
                diag = Diag(f, int(d.group("line")), text)
                if d.group("kind") == "warning":
                    if current[0] is not None:
                        rebuilt[current[0]].append(diag)
                else:
                    errors.append(diag)
                    excerpt.append(text)
                return
            if _OTHER_ERR.search(line):
                excerpt.append(line)
                if "undefined reference" in line or "ERROR: modpost" in line:
                    errors.append(Diag(None, None, line.strip()))
            elif _OTHER_WARN.match(line) and current[0] is not None:
                rebuilt[current[0]].append(Diag(None, None, line.strip()))
            elif excerpt and len(excerpt) < 60 and line.startswith((" ", "\t")):
                excerpt.append(line)  # the source line and caret under an error

        rc, lines = self._run(self.make_cmd(*self.target.make_targets), log, on_line=on_line)
        for obj, ds in rebuilt.items():
            if ds:
                state[obj] = [[d.file, d.line, d.text] for d in ds]
            else:
                state.pop(obj, None)
        # Whole or not at all: a build killed here must not leave half a file.
        fileio.atomic_write(self._state_file(), json.dumps(state, indent=0))
        seen: set[str] = set()
        new: list[Diag] = []
        for ds in rebuilt.values():
            for d in ds:
                if d.key not in before and d.key not in seen:
                    seen.add(d.key)
                    new.append(d)
        if rc != 0 and not errors:
            errors.append(Diag(None, None, next((ln for ln in reversed(lines) if "***" in ln),
                                                f"make exited with status {rc}")))
        missing = [p for p in self.target.must_build if not (self.dirs.obj / p).exists()] \
            if rc == 0 else []
        return Step(patch=patch, commit=commit, ok=rc == 0, seconds=round(time.monotonic() - t0, 1),
                    log=log, rebuilt=count[0], errors=errors,
                    error_excerpt="\n".join(excerpt[:60]), new_warnings=new, missing=missing,
                    config_lost=self.unmet())


# ----------------------------------------------------------------------
# A directory of the shared build root that a job holds for its whole run
# (``build root / tree / NAME``): locked while entered, so two napipatch
# processes never build in it at once, and with its results kept as JSON,
# so a commit already judged is not built again.


class KeptTree:
    def __init__(self, repo: Path, cache: Path, *name: str):
        self.root = build_root(cache) / tree_key(repo) / Path(*name)
        self._held = ExitStack()

    def __enter__(self):
        self.root.mkdir(parents=True, exist_ok=True)
        self._held = ExitStack()
        # held for a whole job, which may build for an hour: wait as long as it takes
        self._held.enter_context(locked(self.root / "lock", timeout=None, remove=False))
        return self

    def __exit__(self, *exc):
        self._held.close()

    def kept(self, key: str) -> dict | list | None:
        """The result kept under ``key``, or None."""
        done = self.root / "results" / f"{key}.json"
        return json.loads(done.read_text()) if done.exists() else None

    def keep(self, key: str, data: dict | list) -> None:
        """Keep ``data`` under ``key``, whole or not at all."""
        done = self.root / "results" / f"{key}.json"
        done.parent.mkdir(parents=True, exist_ok=True)
        tmp = done.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(done)
