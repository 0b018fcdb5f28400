"""The netdev CI's three build configurations, and the tools each needs.

NIPA builds every patch three times, HEAD~ then HEAD, and fails it when the
warnings grow: ``build_allmodconfig_warn`` (gcc, ``W=1 C=1``: sparse too),
``build_32bit`` (``ARCH=i386 W=1``) and ``build_clang`` (``LLVM=1 W=1``),
all allmodconfig with the -Werror options off. napipatch runs the same
configurations on the objects a patch can change (``jobs.warnings``).

A missing tool is named with the Debian package that has it, so a job that
cannot run says what to install instead of reporting a clean build.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from napipatch.jobs.build.builder import compiler

# allmodconfig with these forced, as NIPA's prep_config does with scripts/config:
# the -Werror switches would turn the warnings being counted into errors, and
# NIPA leaves Rust out of the gcc build.
ALLCONFIG = ("# CONFIG_WERROR is not set\n# CONFIG_DRM_WERROR is not set\n"
             "# CONFIG_KVM_WERROR is not set\n# CONFIG_RUST is not set\n")

# What every kernel build needs: (command or header, Debian package).
_BUILD_TOOLS = (("make", "make"), ("gcc", "gcc"), ("flex", "flex"), ("bison", "bison"),
                ("bc", "bc"), ("/usr/include/libelf.h", "libelf-dev"),
                ("/usr/include/openssl/ssl.h", "libssl-dev"))
_LLVM_TOOLS = (("clang", "clang"), ("ld.lld", "lld"), ("llvm-ar", "llvm"), ("llvm-nm", "llvm"),
               ("llvm-objcopy", "llvm"), ("llvm-strip", "llvm"), ("llvm-readelf", "llvm"),
               ("llvm-objdump", "llvm"))


@dataclass(frozen=True)
class WarnConfig:
    name: str  # w1 | 32bit | clang
    arch: str
    llvm: bool
    sparse: bool
    describe: str

    @property
    def job(self) -> str:
        """The job building it (``warnings-w1``): its progress lines and logs."""
        return f"warnings-{self.name}"

    def tools(self) -> tuple[tuple[str, str], ...]:
        extra = _LLVM_TOOLS if self.llvm else ()
        return _BUILD_TOOLS + extra + ((("sparse", "sparse"),) if self.sparse else ())

    @property
    def bits(self) -> int:
        return 32 if self.arch == "i386" else 64

    def compiler(self) -> str:
        return compiler("clang" if self.llvm else "gcc")

    def make_vars(self) -> list[str]:
        """What every make of this configuration is given (config, prepare, objects)."""
        return [f"ARCH={self.arch}", *(["LLVM=1"] if self.llvm else []), f"CC={self.compiler()}"]

    def build_vars(self) -> list[str]:
        return ["W=1", *(["C=1"] if self.sparse else [])]

    def listing_vars(self) -> list[str]:
        """For reading Makefiles with scripts/Makefile.build directly."""
        return [f"ARCH={self.arch}", "SRCARCH=x86", f"BITS={self.bits}",
                *(["LLVM=1", "CC=clang"] if self.llvm else [])]


CONFIGS: dict[str, WarnConfig] = {c.name: c for c in (
    WarnConfig("w1", "x86_64", llvm=False, sparse=True,
               describe="gcc x86_64 allmodconfig W=1 C=1"),
    WarnConfig("32bit", "i386", llvm=False, sparse=False,
               describe="gcc ARCH=i386 allmodconfig W=1"),
    WarnConfig("clang", "x86_64", llvm=True, sparse=False,
               describe="clang LLVM=1 allmodconfig W=1"),
)}


def missing(tools) -> list[tuple[str, str]]:
    """(tool, package) for each tool that is not installed."""
    out = []
    for tool, pkg in tools:
        ok = Path(tool).exists() if tool.startswith("/") else shutil.which(tool) is not None
        if not ok:
            out.append((tool, pkg))
    return out


def missing_line(gone: list[tuple[str, str]]) -> str:
    """``clang, ld.lld not installed (apt-get install clang lld)``."""
    pkgs = sorted({p for _t, p in gone})
    return (f"{', '.join(t for t, _p in gone)} not installed "
            f"(apt-get install {' '.join(pkgs)})")
