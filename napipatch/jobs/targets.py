"""Loading build/boot targets: data kept in the project (napipatch.targets), not in code.

A target is a directory ``targets/<name>/`` (packaged as
``napipatch.targets``) holding ``target.toml``, one or more kernel config
fragments (merged on top of ``make tinyconfig``) and, for bootable
targets, a test plan (a shell script run as the guest's /init payload).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from napipatch import tomlconf
from napipatch.errors import NapipatchError


ENV = "NAPIPATCH_TARGETS_DIR"  # a directory of targets used instead of the shipped ones


def targets_dir() -> Path:
    """The directory holding the targets: $NAPIPATCH_TARGETS_DIR, else the shipped ones."""
    own = os.environ.get(ENV)
    if own:
        if not Path(own).is_dir():
            raise NapipatchError(ENV, f"{own}: not a directory")
        return Path(own)
    return Path(str(resources.files("napipatch.targets")))


def _shown(name: str) -> str:
    """How errors name a target's file: targets/NAME/target.toml when shipped."""
    own = os.environ.get(ENV)
    return f"{own.rstrip('/')}/{name}/target.toml" if own else f"targets/{name}/target.toml"


_STRINGS = {"type": "array", "items": {"type": "string"}}
# target.toml: every key, its type and its default (tomlconf reads it).
SCHEMA = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "description": {"type": "string", "default": ""},
        "arch": {"type": "string", "default": "x86_64"},
        "base-config": {"type": "string", "default": "tinyconfig"},
        # merged in order on top of base-config, later ones winning
        "fragments": {**_STRINGS, "minItems": 1, "default": ["config.fragment"]},
        "make-targets": {**_STRINGS, "minItems": 1, "default": ["bzImage"]},
        "image": {"type": "string", "default": "arch/x86/boot/bzImage"},
        "must-build": {**_STRINGS, "default": []},
        # absent: a build-only target (no QEMU model)
        "boot": {
            "type": "object", "additionalProperties": False, "required": ["plan"],
            "properties": {
                "plan": {"type": "string"},
                "timeout": {"type": "number", "exclusiveMinimum": 0, "default": 300},
                "memory": {"type": ["string", "integer"], "default": "512"},
                "append": {"type": "string", "default": "console=ttyS0 panic=-1"},
                "nic": {**_STRINGS, "default": []},
                "backend": {"enum": ["vng", "busybox"], "default": "busybox"},
                "network": {"type": "string", "default": "user"},
                "cpus": {"type": ["string", "integer"], "default": "1"},
            },
        },
        # other builds of the same target: [flavours.NAME] adds fragments (its own build dir)
        "flavours": {
            "type": "object", "default": {},
            "additionalProperties": {
                "type": "object", "additionalProperties": False, "required": ["fragments"],
                "properties": {
                    "description": {"type": "string", "default": ""},
                    "fragments": {**_STRINGS, "minItems": 1},
                    # seconds for boot + plan (a debug kernel boots slower); default: [boot]'s
                    "boot-timeout": {"type": "number", "exclusiveMinimum": 0},
                },
            },
        },
        "selftests": {
            "type": "object", "additionalProperties": False, "default": {},
            "properties": {
                "run": {**_STRINGS, "default": []},
                "max-timeout": {"type": "integer", "exclusiveMinimum": 0, "default": 600},
                # at most this many chosen for what the series changes (choose.py)
                "related": {"type": "integer", "minimum": 0, "default": 6},
                # never chosen for what the series changes: this target's kernel fails them
                "ignore": {**_STRINGS, "default": []},
                # selftest dirs whose `config` fragments the guest kernel merges
                # (read from the trusted base; not for flavours): guestconfig.py
                "config-dirs": {**_STRINGS, "default": []},
            },
        },
    },
}


@dataclass
class Boot:
    plan: Path
    timeout: float
    memory: str
    append: str
    nic: list[str]  # busybox backend: QEMU's NIC options
    # "vng": virtme-ng with the host's root read-only (python3, selftests);
    # "busybox": a busybox initramfs and nothing else.
    backend: str
    network: str  # vng backend: --network
    cpus: str


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
    must_build: list[str]
    boot: Boot | None
    # Kernel selftests (dir:prog) run on every boot, besides those the series changes.
    selftests: list[str]
    selftest_max_timeout: int  # caps a dir's settings timeout (net says 3600)
    selftest_related: int = 6  # at most this many chosen for what the series changes
    selftest_ignore: tuple[str, ...] = ()  # never chosen for it (fail on this target's kernel)
    flavour: str = ""  # "" the plain build, else a [flavours.NAME] of target.toml
    flavours: tuple[str, ...] = ()  # the flavours target.toml declares
    # [selftests] config-dirs: the selftest dirs whose `config` the guest merges
    config_dirs: tuple[str, ...] = ()
    # (source, text) of those fragments as merged (guestconfig.widen), before
    # the target's own: what they ask for may be unmet, the target's may not
    extra: tuple[tuple[str, str], ...] = ()

    @property
    def build_name(self) -> str:
        """The build directory's name: a flavour builds beside the plain one, not over it."""
        return f"{self.name}.{self.flavour}" if self.flavour else self.name

    @property
    def label(self) -> str:
        """How reports name what ran: ``virtio-net`` or ``virtio-net (debug flavour)``."""
        return f"{self.name} ({self.flavour} flavour)" if self.flavour else self.name

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
        for source, text in self.extra:
            h.update(f"{source}\0{text}\0".encode())
        h.update(self.fragment_text().encode())
        return h.hexdigest()[:16]


def names() -> list[str]:
    return sorted(p.name for p in targets_dir().iterdir() if (p / "target.toml").is_file())


def load(name: str, flavour: str = "") -> Target:
    """The target ``name`` (its ``flavour``: the flavour's fragments merged
    after the target's); a bad target.toml is one line naming it and the key."""
    if name not in names():
        raise NapipatchError(name, f"no such target (known: {', '.join(names())})")
    d = targets_dir() / name
    shown = _shown(name)
    data = tomlconf.read(d / "target.toml", SCHEMA, shown)
    fragments = [_file(d, shown, ("fragments", i), p) for i, p in enumerate(data["fragments"])]
    boot = None
    if "boot" in data:
        b = data["boot"]
        boot = Boot(plan=_file(d, shown, ("boot", "plan"), b["plan"]), timeout=float(b["timeout"]),
                    memory=str(b["memory"]), append=b["append"], nic=b["nic"],
                    backend=b["backend"], network=b["network"], cpus=str(b["cpus"]))
    t = Target(
        name=name, dir=d, description=data["description"], arch=data["arch"],
        base_config=data["base-config"], fragments=fragments, make_targets=data["make-targets"],
        image=data["image"], must_build=data["must-build"], boot=boot,
        selftests=data["selftests"]["run"], selftest_max_timeout=data["selftests"]["max-timeout"],
        selftest_related=data["selftests"]["related"],
        selftest_ignore=tuple(data["selftests"]["ignore"]),
        config_dirs=tuple(data["selftests"]["config-dirs"]),
        flavours=tuple(sorted(data["flavours"])))
    return _flavoured(t, data, shown, flavour) if flavour else t


def _flavoured(t: Target, data: dict, shown: str, flavour: str) -> Target:
    if flavour not in data["flavours"]:
        have = ", ".join(t.flavours) or "none"
        raise NapipatchError(f"--flavour {flavour}", f"target {t.name} has no such flavour "
                                                     f"(its flavours: {have})")
    f = data["flavours"][flavour]
    t.flavour = flavour
    t.config_dirs = ()  # a flavour's kernel is the target's own fragments and its own
    t.fragments = t.fragments + [_file(t.dir, shown, ("flavours", flavour, "fragments", i), p)
                                 for i, p in enumerate(f["fragments"])]
    if f.get("description"):
        t.description = f"{t.description}; {flavour}: {f['description']}"
    if t.boot is not None and "boot-timeout" in f:
        t.boot.timeout = float(f["boot-timeout"])
    return t


def _file(d: Path, shown: str, key: tuple, rel: str) -> Path:
    """A file the target names, relative to its directory; it must be there."""
    p = (d / rel).resolve()
    if not p.is_file():
        raise tomlconf.error(shown, key, f"{rel}: no such file")
    return p
