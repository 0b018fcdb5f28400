"""Loading build/boot targets: data kept in the project (napipatch.targets), not in code.

A target is a directory ``targets/<name>/`` (packaged as
``napipatch.targets``) holding ``target.toml``, one or more kernel config
fragments (merged on top of ``make tinyconfig``) and, for bootable
targets, a test plan (a shell script run as the guest's /init payload).
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from napipatch.errors import NapipatchError


def targets_dir() -> Path:
    return Path(str(resources.files("napipatch.targets")))


@dataclass
class Boot:
    plan: Path
    timeout: float = 300
    memory: str = "512"
    append: str = "console=ttyS0 panic=-1"
    nic: list[str] = field(default_factory=list)  # busybox backend: QEMU's NIC options
    # "vng": virtme-ng with the host's root read-only (python3, selftests);
    # "busybox": a busybox initramfs and nothing else.
    backend: str = "busybox"
    network: str = "user"  # vng backend: --network
    cpus: str = "1"


@dataclass
class Target:
    name: str
    dir: Path
    description: str
    arch: str
    base_config: str
    fragments: list[Path]
    make_targets: list[str]
    image: str
    must_build: list[str] = field(default_factory=list)
    boot: Boot | None = None
    # Kernel selftests (dir:prog) run on every boot, besides those the series changes.
    selftests: list[str] = field(default_factory=list)
    selftest_max_timeout: int = 600  # caps a dir's settings timeout (net says 3600)

    def fragment_text(self) -> str:
        return "".join(f.read_text() + "\n" for f in self.fragments)

    def options(self) -> dict[str, str]:
        """CONFIG_X -> 'y' | 'm' | 'n' | value, later fragments win."""
        opts: dict[str, str] = {}
        for line in self.fragment_text().splitlines():
            line = line.strip()
            if line.startswith("# CONFIG_") and line.endswith(" is not set"):
                opts[line[2:].split()[0]] = "n"
            elif line.startswith("CONFIG_") and "=" in line:
                k, _, v = line.partition("=")
                opts[k] = v
        return opts

    @property
    def config_hash(self) -> str:
        h = hashlib.sha256(f"{self.arch}\0{self.base_config}\0".encode())
        h.update(self.fragment_text().encode())
        return h.hexdigest()[:16]


def names() -> list[str]:
    return sorted(p.name for p in targets_dir().iterdir() if (p / "target.toml").is_file())


def load(name: str) -> Target:
    d = targets_dir() / name
    f = d / "target.toml"
    if not f.is_file():
        raise NapipatchError(name, f"no such target (known: {', '.join(names())})")
    try:
        data = tomllib.loads(f.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise NapipatchError(f, f"bad target.toml: {exc}") from None
    boot = None
    if "boot" in data:
        b = data["boot"]
        boot = Boot(plan=(d / b["plan"]).resolve(), timeout=float(b.get("timeout", 300)),
                    memory=str(b.get("memory", "512")), append=b.get("append", Boot.append),
                    nic=list(b.get("nic", [])), backend=b.get("backend", "busybox"),
                    network=b.get("network", "user"), cpus=str(b.get("cpus", "1")))
        if boot.backend not in ("vng", "busybox"):
            raise NapipatchError(f, f"unknown boot backend {boot.backend!r} (vng, busybox)")
    st = data.get("selftests", {})
    return Target(
        name=name, dir=d, description=data.get("description", ""),
        arch=data.get("arch", "x86_64"), base_config=data.get("base-config", "tinyconfig"),
        fragments=[(d / p).resolve() for p in data.get("fragments", ["config.fragment"])],
        make_targets=list(data.get("make-targets", ["bzImage"])),
        image=data.get("image", "arch/x86/boot/bzImage"),
        must_build=list(data.get("must-build", [])), boot=boot,
        selftests=list(st.get("run", [])), selftest_max_timeout=int(st.get("max-timeout", 600)))
