"""The latency experiment as data: ``series/NAME/experiment.toml``.

The cover letter's experiment (modes x load points x repetitions, each
cell a set of latency percentiles) is kept beside the series so it can be
rerun by ``napipatch bench run`` instead of by hand. This module parses and
validates the file; every mistake is one NapipatchError naming the file
and the key (``experiment.toml: loads[2].rate: ...``).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from pathlib import Path

from napipatch import tomlconf
from napipatch.errors import NapipatchError

FILENAME = "experiment.toml"
# Placeholders the workload templates may use (filled by the runner).
PLACEHOLDERS = {"server", "bind", "port", "rate", "delay", "duration", "percentiles",
                "client_args", "server_args", "dev"}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


@dataclass
class Mode:
    name: str  # an id: the JSON and --plot use it
    label: str  # the table's column heading
    setup: list[str]  # shell lines, run as root before the mode
    client_args: str
    server_args: str


@dataclass
class Load:
    name: str  # e.g. "12K pkt/s + 0us delay"
    rate: int  # packets per second the client sends
    delay: int  # application processing delay in us after each reply


@dataclass
class Experiment:
    path: Path
    modes: list[Mode]
    loads: list[Load]
    server: str
    client: str
    # The defaults of these are in SCHEMA, with their types.
    setup: list[str]  # before every mode
    percentiles: list[float]
    repetitions: int
    duration: int
    device: str
    quick_loads: list[str]
    quick_repetitions: int
    quick_duration: int

    def quick(self) -> "Experiment":
        """The short matrix for tests: every mode, 2 load points, 2 repetitions."""
        loads = [ld for ld in self.loads if ld.name in self.quick_loads] or self.loads[:2]
        return Experiment(path=self.path, modes=self.modes, loads=loads[:2], server=self.server,
                          client=self.client, setup=self.setup, percentiles=self.percentiles,
                          repetitions=self.quick_repetitions, duration=self.quick_duration,
                          device=self.device, quick_loads=self.quick_loads,
                          quick_repetitions=self.quick_repetitions,
                          quick_duration=self.quick_duration)

    @property
    def cells(self) -> int:
        return len(self.modes) * len(self.loads) * self.repetitions


def pct_key(p: float) -> str:
    """5 -> "p5", 99.9 -> "p99.9": the keys of a cell."""
    return f"p{p:g}"


_STRINGS = {"type": "array", "items": {"type": "string"}}
_POSITIVE = {"type": "integer", "exclusiveMinimum": 0}
# experiment.toml: every key, its type and its default (tomlconf reads it).
SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["workload", "modes", "loads"],
    "properties": {
        "workload": {
            "type": "object", "additionalProperties": False, "required": ["server", "client"],
            "properties": {"server": {"type": "string"}, "client": {"type": "string"}},
        },
        "setup": {"type": "object", "additionalProperties": False, "default": {},
                  "properties": {"common": {**_STRINGS, "default": []}}},  # before every mode
        "percentiles": {"type": "array", "minItems": 1, "default": [5, 50, 95, 99],
                        "items": {"type": "number", "exclusiveMinimum": 0, "maximum": 100}},
        "repetitions": {**_POSITIVE, "default": 3},
        "duration": {**_POSITIVE, "default": 5},  # seconds per cell
        "device": {"type": "string", "default": "eth0"},
        "modes": {
            "type": "array", "minItems": 1, "x-error": "needs at least one [[modes]] table",
            "items": {
                "type": "object", "additionalProperties": False, "required": ["name"],
                "properties": {
                    "name": {"type": "string", "pattern": _NAME.pattern,
                             "x-error": "must be an id (letters, digits, . _ + -)"},
                    "label": {"type": "string"},  # default: the name
                    "setup": {**_STRINGS, "default": []},
                    "client-args": {"type": "string", "default": ""},
                    "server-args": {"type": "string", "default": ""},
                },
            },
        },
        "loads": {
            "type": "array", "minItems": 1, "x-error": "needs at least one [[loads]] table",
            "items": {
                "type": "object", "additionalProperties": False, "required": ["rate"],
                "properties": {
                    "rate": _POSITIVE,
                    "delay": {"type": "integer", "minimum": 0, "default": 0},
                    "name": {"type": "string"},  # default: "12K pkt/s + 0us delay"
                },
            },
        },
        "quick": {
            "type": "object", "additionalProperties": False, "default": {},
            "properties": {"loads": {**_STRINGS, "default": []},
                           "repetitions": {**_POSITIVE, "default": 2},
                           "duration": {**_POSITIVE, "default": 2}},
        },
    },
}


def _template(path: object, data: dict, key: str) -> str:
    t = data["workload"][key]
    try:
        names = {f for _, f, _, _ in string.Formatter().parse(t) if f is not None}
    except ValueError as exc:
        raise tomlconf.error(path, ("workload", key), f"bad template ({exc})") from None
    bad = sorted(n for n in names if n not in PLACEHOLDERS)
    if bad:
        raise tomlconf.error(path, ("workload", key), f"unknown placeholder {{{bad[0]}}} "
                                                      f"(known: {', '.join(sorted(PLACEHOLDERS))})")
    return t


def _unique(path: object, table: str, names: list[str]) -> None:
    """Modes and load points are told apart by name (the JSON, --plot, quick.loads)."""
    for i, name in enumerate(names):
        if name in names[:i]:
            raise tomlconf.error(path, (table, i, "name"), f"{name!r} used twice")


def _modes(path: object, raw: list[dict]) -> list[Mode]:
    modes = [Mode(name=m["name"], label=m.get("label", m["name"]), setup=m["setup"],
                  client_args=m["client-args"], server_args=m["server-args"]) for m in raw]
    _unique(path, "modes", [m.name for m in modes])
    return modes


def _loads(path: object, raw: list[dict]) -> list[Load]:
    loads = [Load(name=ld.get("name", f"{ld['rate'] / 1000:g}K pkt/s + {ld['delay']}us delay"),
                  rate=ld["rate"], delay=ld["delay"]) for ld in raw]
    _unique(path, "loads", [ld.name for ld in loads])
    return loads


def _build(path: Path, shown: object, data: dict) -> Experiment:
    """The checked data as an Experiment: templates, names and quick.loads checked."""
    server, client = _template(shown, data, "server"), _template(shown, data, "client")
    loads, q = _loads(shown, data["loads"]), data["quick"]
    for i, name in enumerate(q["loads"]):
        if not any(ld.name == name for ld in loads):
            raise tomlconf.error(shown, ("quick", "loads", i),
                                 f"{name!r} is not a load point's name")
    return Experiment(path=path, modes=_modes(shown, data["modes"]), loads=loads, server=server,
                      client=client, setup=data["setup"]["common"],
                      percentiles=[float(p) for p in data["percentiles"]],
                      repetitions=data["repetitions"], duration=data["duration"],
                      device=data["device"], quick_loads=q["loads"],
                      quick_repetitions=q["repetitions"], quick_duration=q["duration"])


def parse(path: Path, text: str) -> Experiment:
    """``text`` as the experiment at ``path``."""
    return _build(path, path, tomlconf.parse(text, SCHEMA, path))


def load(series_dir: Path) -> Experiment:
    """``series_dir/experiment.toml``, validated."""
    f = series_dir / FILENAME
    if not f.is_file():
        raise NapipatchError(f, "no experiment for this series (write experiment.toml: "
                                "see docs/latency.md)")
    return _build(f, f, tomlconf.read(f, SCHEMA))
