"""The kept tree the warning builds run in: one worktree, one O= directory
per configuration, each configured (allmodconfig) and prepared once per
base and reused, with ccache.

    <build root>/<tree>-<hash>/warnings/src         detached worktree (shared)
                                       /obj-w1      O= of each configuration
                                       /obj-32bit
                                       /obj-clang
                                       /logs        one make log per step
                                       /lock        held for a whole job

Only the objects a patch can change are compiled (``compile``): each is
removed first, so the compiler (a ccache hit when nothing it reads
changed) and sparse print its warnings again, and they can be compared
with the same object at another commit.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable

from napipatch.errors import NapipatchError
from napipatch.jobs.build.builder import (
    KeptTree,
    build_env,
    checkout_worktree,
    run_logged,
)
from napipatch.jobs.warnings.configs import ALLCONFIG, WarnConfig
from napipatch.kernel import kbuildout
from napipatch.kernel.kbuild import Kbuild
from napipatch.tree import gitutil

Progress = Callable[[str], None]
# What changes a configuration: Kconfig files and the tool that reads them.
_KCONFIG_PATHS = (":(glob)**/Kconfig*", "scripts/kconfig")
_STAMP = ".napipatch-warnings.json"


class WarnTree(KeptTree):
    """The shared worktree and the per-configuration O= directories."""

    def __init__(self, repo: Path, cache: Path, progress: Progress | None = None,
                 jobs: int = 2):
        self.repo = gitutil.require_repo(repo)
        super().__init__(self.repo, cache, "warnings")
        self.progress = progress or (lambda _m: None)
        self.jobs = jobs
        self.head = ""
        self._kbuild: dict[str, Kbuild] = {}

    @property
    def src(self) -> Path:
        return self.root / "src"

    def obj(self, cfg: WarnConfig) -> Path:
        return self.root / f"obj-{cfg.name}"

    # ------------------------------------------------------------ checkout
    def checkout(self, commit: str) -> None:
        if commit == self.head:
            return
        before = gitutil.git(self.src, "rev-parse", "HEAD", check=False).stdout.strip() \
            if (self.src / ".git").exists() else ""
        checkout_worktree(self.repo, self.src, commit, self.progress)
        self.head = commit
        if self._kbuild:
            changed = gitutil.out(self.repo, "diff", "--name-only", before, commit, "--",
                                  ":(glob)**/Makefile", ":(glob)**/Kbuild") if before else None
            dirs = None if changed is None else {os.path.dirname(p) for p in changed.split()}
            for kb in self._kbuild.values():
                kb.invalidate(dirs)

    def kbuild(self, cfg: WarnConfig) -> Kbuild:
        if cfg.name not in self._kbuild:
            self._kbuild[cfg.name] = Kbuild(self.src, self.obj(cfg), cfg.listing_vars())
        return self._kbuild[cfg.name]

    def _log(self, cfg: WarnConfig, label: str) -> Path:
        return self.log(f"{cfg.name}-{label}")

    def log(self, label: str) -> Path:
        return self.root / "logs" / f"{time.strftime('%Y%m%d-%H%M%S')}-{label}.log"

    # -------------------------------------------------- configure, prepare
    def _stamp(self, cfg: WarnConfig) -> dict:
        try:
            return json.loads((self.obj(cfg) / _STAMP).read_text())
        except (OSError, ValueError):
            return {}

    def _write_stamp(self, cfg: WarnConfig, **kw) -> None:
        st = {**self._stamp(cfg), **kw}
        tmp = self.obj(cfg) / (_STAMP + ".tmp")
        tmp.write_text(json.dumps(st))
        tmp.replace(self.obj(cfg) / _STAMP)

    def _kconfig_changed(self, since: str, commit: str) -> bool:
        if since == commit:
            return False
        cp = gitutil.git(self.repo, "diff", "--quiet", since, commit, "--", *_KCONFIG_PATHS,
                         check=False)
        return cp.returncode != 0

    def configure(self, cfg: WarnConfig) -> bool:
        """allmodconfig for the checked-out commit unless the O= directory
        already has it (same flags, no Kconfig change since). True if it ran."""
        st = self._stamp(cfg)
        flags = " ".join(cfg.make_vars())
        if (self.obj(cfg) / ".config").exists() and st.get("flags") == flags and \
                st.get("config") and not self._kconfig_changed(st["config"], self.head):
            return False
        self.obj(cfg).mkdir(parents=True, exist_ok=True)
        allcfg = self.obj(cfg) / ".napipatch-allconfig"
        allcfg.write_text(ALLCONFIG)
        self.progress(f"configuring {cfg.job}: make allmodconfig at {self.head[:12]}")
        log = self._log(cfg, "config")
        rc, lines = self._make(cfg, [f"KCONFIG_ALLCONFIG={allcfg}", "allmodconfig"], log)
        if rc == 0:  # include/config/auto.conf, which the Makefiles are read against
            rc, lines = self._make(cfg, ["syncconfig"], log, append=True)
        if rc != 0:
            raise NapipatchError(f"make allmodconfig ({cfg.describe})",
                                 f"failed at {self.head[:12]} (log: {log})")
        self._write_stamp(cfg, flags=flags, config=self.head, prepared="")
        self.kbuild(cfg).invalidate()
        return True

    def prepare(self, cfg: WarnConfig) -> float:
        """``make prepare`` once per configuration and base; seconds it took."""
        if self._stamp(cfg).get("prepared") == self.head:
            return 0.0
        t0 = time.monotonic()
        self.progress(f"configuring {cfg.job}: make prepare at {self.head[:12]}")
        log = self._log(cfg, "prepare")
        rc, lines = self._make(cfg, ["prepare"], log)
        if rc != 0:
            tail = "\n".join(lines[-8:])
            raise NapipatchError(f"make prepare ({cfg.describe})",
                                 f"failed at {self.head[:12]} (log: {log})\n{tail}")
        self._write_stamp(cfg, prepared=self.head)
        return round(time.monotonic() - t0, 1)

    # --------------------------------------------------------------- build
    def compile(self, cfg: WarnConfig, objects: list[str], label: str
                ) -> tuple[dict[str, kbuildout.ObjectOutput], Path]:
        """Build ``objects`` afresh at the checked-out commit; per object, what
        the compiler (and sparse) said."""
        log = self._log(cfg, label)
        for o in objects:
            try:
                (self.obj(cfg) / o).unlink()
            except FileNotFoundError:
                pass
        rc, lines = self._make(cfg, ["-k", "--output-sync=target", *cfg.build_vars(), *objects],
                               log, progress=label)
        out = kbuildout.parse(lines, kbuildout.Paths(str(self.src), str(self.obj(cfg))), objects)
        for o, res in out.items():
            if not (self.obj(cfg) / o).exists():
                res.ok = False
                if not res.errors:
                    why = next((ln.strip() for ln in lines if "***" in ln and o in ln),
                               f"make exited with status {rc}")
                    res.diags.append(kbuildout.Diag("cc", "error", None, None, why))
        return out, log

    def _make(self, cfg: WarnConfig, args: list[str], log: Path, progress: str | None = None,
              append: bool = False) -> tuple[int, list[str]]:
        return self.make(self.obj(cfg), cfg.make_vars() + args, log, cfg.job, progress, append)

    def make(self, obj: Path, args: list[str], log: Path, who: str = "",
             progress: str | None = None, append: bool = False) -> tuple[int, list[str]]:
        """``make -C src O=obj args``; its output goes to ``log`` and is returned."""
        cmd = ["make", "-C", str(self.src), f"O={obj}", f"-j{self.jobs}",
               "KBUILD_BUILD_TIMESTAMP=1970-01-01",
               "KBUILD_BUILD_USER=napipatch", "KBUILD_BUILD_HOST=napipatch", *args]
        # kbuild unexports LC_ALL, so LANG too: the compilers' plain-ASCII quotes
        env = build_env(LC_ALL="C", LANG="C")

        def shown(line: str) -> None:
            if progress and line.startswith("  "):
                self.progress(f"{who} {progress}: {line.strip()}")
        return run_logged(cmd, log, env, append, shown, package="make")
