"""Which objects a configured kernel builds, as kbuild itself says.

A patch's ``.c`` only matters to a configuration that compiles it: an
arm-only driver is not built by an x86 allmodconfig, a 64BIT-only one not
by i386. Rather than re-implementing kbuild's rules (``obj-$(CONFIG_X)``,
composite objects, subdirectories), each directory's Makefile is read by
the tree's own ``scripts/Makefile.build`` against the O= directory's
``include/config/auto.conf``, with one extra goal that prints what it
computed: ``real-obj-y``/``real-obj-m`` (composites expanded), ``lib-y``
and the subdirectories it descends into. A directory is built when its
parent descends into it, up to a top-level directory. About 0.1 s a
directory; results are kept per directory until its Makefile changes.
"""

from __future__ import annotations

import os
from pathlib import Path

from napipatch import procs

# The goal added to scripts/Makefile.build (read from standard input).
_LIST_MK = (
    "napipatch-list:\n"
    "\t@echo 'objs:' $(sort $(filter %.o,$(real-obj-y) $(real-obj-m) $(lib-y) $(lib-m)))\n"
    "\t@echo 'dirs:' $(sort $(subdir-ym))\n"
)

# Directories the top-level Makefile (and arch/x86/Makefile) always enter.
ROOTS = {"init", "usr", "kernel", "certs", "mm", "fs", "ipc", "security", "crypto", "block",
         "io_uring", "drivers", "sound", "net", "virt", "lib", "samples", "arch/x86"}
# Never kernel objects.
NOT_KERNEL = ("tools/", "scripts/", "Documentation/", "include/", "LICENSES/", "usr/include/")


class Kbuild:
    """Object lists of one configured O= directory, for the checked-out source."""

    def __init__(self, src: Path, obj: Path, make_vars: list[str]):
        self.src, self.obj = Path(src), Path(obj)
        self.make_vars = make_vars
        # Per directory; the caller drops what a checkout or a new .config changes.
        self._lists: dict[str, tuple[set[str], set[str]] | None] = {}

    def invalidate(self, dirs=None) -> None:
        """Forget the listings of ``dirs`` (their Makefile changed), or all."""
        if dirs is None:
            self._lists.clear()
        for d in dirs or ():
            self._lists.pop(d, None)

    def listing(self, d: str) -> tuple[set[str], set[str]] | None:
        """(objects, subdirectories) of directory ``d``; None without a Makefile."""
        if d not in self._lists:
            self._lists[d] = self._list(d)
        return self._lists[d]

    def _list(self, d: str) -> tuple[set[str], set[str]] | None:
        if not ((self.src / d / "Makefile").is_file() or (self.src / d / "Kbuild").is_file()):
            return None
        cmd = ["make", "-s", "-C", str(self.obj), "-f", str(self.src / "scripts/Makefile.build"),
               "-f", "-", f"obj={d}", f"srctree={self.src}", f"VPATH={self.src}", "objtree=.",
               "need-modorder=1", "need-builtin=1", *self.make_vars, "napipatch-list"]
        try:
            cp = procs.run(cmd, timeout=120, input=_LIST_MK, env=dict(os.environ, LC_ALL="C"))
        except (OSError, procs.NotInstalled, procs.ProcessTimeout):
            return None
        objs: set[str] = set()
        dirs: set[str] = set()
        for line in cp.stdout.splitlines():
            head, _, rest = line.partition(":")
            if head == "objs":
                objs.update(rest.split())
            elif head == "dirs":
                dirs.update(x.rstrip("/") for x in rest.split())
        return objs, dirs

    def builds(self, obj: str) -> bool:
        """Whether the configuration compiles ``obj`` (``net/core/dev.o``)."""
        if obj.startswith(NOT_KERNEL) or (obj.startswith("arch/") and
                                          not obj.startswith("arch/x86/")):
            return False
        d = os.path.dirname(obj)
        while d:
            lst = self.listing(d)
            if lst is not None and obj in lst[0]:
                return self.reachable(d)
            d = os.path.dirname(d)
        return False

    def reachable(self, d: str) -> bool:
        """Whether kbuild descends into ``d`` for this configuration."""
        if d in ROOTS:
            return True
        parent = os.path.dirname(d)
        while parent:
            lst = self.listing(parent)
            if lst is not None and d in lst[1]:
                return self.reachable(parent)
            parent = os.path.dirname(parent)
        # arch/x86/Makefile adds some of its directories (lib, pci, video,
        # math-emu, power) straight to the build, as the top level does.
        return d.count("/") == 2 and d.startswith("arch/x86/")

    def objects_of(self, d: str) -> list[str]:
        """The objects of directory ``d`` the configuration builds (sorted)."""
        lst = self.listing(d)
        if lst is None or not self.reachable(d):
            return []
        return sorted(lst[0])
