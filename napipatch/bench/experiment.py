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
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

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
    setup: list[str] = field(default_factory=list)  # shell lines, run as root before the mode
    client_args: str = ""
    server_args: str = ""


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
    setup: list[str] = field(default_factory=list)  # before every mode
    percentiles: list[float] = field(default_factory=lambda: [5, 50, 95, 99])
    repetitions: int = 3
    duration: int = 5
    device: str = "eth0"
    quick_loads: list[str] = field(default_factory=list)
    quick_repetitions: int = 2
    quick_duration: int = 2

    def quick(self) -> "Experiment":
        """The short matrix for tests: every mode, 2 load points, 2 repetitions."""
        loads = [ld for ld in self.loads if ld.name in self.quick_loads] or self.loads[:2]
        return Experiment(path=self.path, modes=self.modes, loads=loads[:2], server=self.server,
                          client=self.client, setup=self.setup, percentiles=self.percentiles,
                          repetitions=self.quick_repetitions, duration=self.quick_duration,
                          device=self.device)

    @property
    def cells(self) -> int:
        return len(self.modes) * len(self.loads) * self.repetitions


def pct_key(p: float) -> str:
    """5 -> "p5", 99.9 -> "p99.9": the keys of a cell."""
    return f"p{p:g}"


class _Reader:
    """Typed access to one TOML table, errors naming file and key."""

    def __init__(self, path: Path, data: dict, where: str = ""):
        self.path, self.data, self.where = path, data, where
        self.used: set[str] = set()

    def fail(self, key: str, reason: str) -> NapipatchError:
        return NapipatchError(f"{self.path.name}: {self.where}{key}", reason)

    def get(self, key: str, kind, default=None, required: bool = False):
        self.used.add(key)
        if key not in self.data:
            if required:
                raise self.fail(key, "missing")
            return default
        v = self.data[key]
        if kind is float and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
            raise self.fail(key, f"must be {_kind_name(kind)}, not {type(v).__name__} {v!r}")
        return v

    def strings(self, key: str) -> list[str]:
        v = self.get(key, list, [])
        if not all(isinstance(x, str) for x in v):
            raise self.fail(key, "must be a list of strings")
        return v

    def positive(self, key: str, default=None, required=False, zero=False) -> int:
        v = self.get(key, int, default, required)
        if v is not None and (v < 0 or (v == 0 and not zero)):
            raise self.fail(key, f"must be {'>= 0' if zero else '> 0'}, not {v}")
        return v

    def done(self) -> None:
        extra = sorted(set(self.data) - self.used)
        if extra:
            raise self.fail(extra[0], "unknown key")


def _kind_name(kind) -> str:
    return {str: "a string", int: "an integer", float: "a number", list: "a list",
            dict: "a table", bool: "true or false"}.get(kind, kind.__name__)


def _template(r: _Reader, key: str) -> str:
    t = r.get(key, str, required=True)
    try:
        names = {f for _, f, _, _ in string.Formatter().parse(t) if f is not None}
    except ValueError as exc:
        raise r.fail(key, f"bad template ({exc})") from None
    bad = sorted(n for n in names if n not in PLACEHOLDERS)
    if bad:
        raise r.fail(key, f"unknown placeholder {{{bad[0]}}} "
                          f"(known: {', '.join(sorted(PLACEHOLDERS))})")
    return t


def _tables(r: _Reader, key: str, empty: str) -> list[_Reader]:
    """A reader for each table of the ``[[key]]`` array (at least one)."""
    raw = r.get(key, list, required=True)
    if not raw:
        raise r.fail(key, empty)
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise r.fail(f"{key}[{i}]", f"must be a table ([[{key}]])")
    return [_Reader(r.path, item, f"{key}[{i}].") for i, item in enumerate(raw)]


def _modes(r: _Reader) -> list[Mode]:
    modes = []
    for mr in _tables(r, "modes", "no modes"):
        name = mr.get("name", str, required=True)
        if not _NAME.match(name):
            raise mr.fail("name", f"{name!r} is not an id (letters, digits, . _ + -)")
        if any(x.name == name for x in modes):
            raise mr.fail("name", f"{name!r} used twice")
        modes.append(Mode(name=name, label=mr.get("label", str, name), setup=mr.strings("setup"),
                          client_args=mr.get("client-args", str, ""),
                          server_args=mr.get("server-args", str, "")))
        mr.done()
    return modes


def _loads(r: _Reader) -> list[Load]:
    loads = []
    for lr in _tables(r, "loads", "no load points"):
        rate = lr.positive("rate", required=True)
        delay = lr.positive("delay", 0, zero=True)
        name = lr.get("name", str, f"{rate / 1000:g}K pkt/s + {delay}us delay")
        if any(x.name == name for x in loads):
            raise lr.fail("name", f"{name!r} used twice")
        loads.append(Load(name=name, rate=rate, delay=delay))
        lr.done()
    return loads


def parse(path: Path, text: str) -> Experiment:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise NapipatchError(path, f"not valid TOML ({exc})") from None
    r = _Reader(path, data)
    wl = _Reader(path, r.get("workload", dict, required=True), "workload.")
    server, client = _template(wl, "server"), _template(wl, "client")
    wl.done()
    su = _Reader(path, r.get("setup", dict, {}), "setup.")
    common = su.strings("common")
    su.done()
    pcts = r.get("percentiles", list, [5, 50, 95, 99])
    if not pcts or not all(isinstance(p, (int, float)) and not isinstance(p, bool)
                           and 0 < p <= 100 for p in pcts):
        raise r.fail("percentiles", "must be a list of numbers in (0, 100]")
    exp = Experiment(path=path, modes=_modes(r), loads=_loads(r), server=server, client=client,
                     setup=common, percentiles=[float(p) for p in pcts],
                     repetitions=r.positive("repetitions", 3), duration=r.positive("duration", 5),
                     device=r.get("device", str, "eth0"))
    q = _Reader(path, r.get("quick", dict, {}), "quick.")
    exp.quick_loads = q.strings("loads")
    for name in exp.quick_loads:
        if not any(ld.name == name for ld in exp.loads):
            raise q.fail("loads", f"{name!r} is not a load point's name")
    exp.quick_repetitions = q.positive("repetitions", 2)
    exp.quick_duration = q.positive("duration", 2)
    q.done()
    r.done()
    return exp


def load(series_dir: Path) -> Experiment:
    """``series_dir/experiment.toml``, validated."""
    f = series_dir / FILENAME
    if not f.is_file():
        raise NapipatchError(f, "no experiment for this series (write experiment.toml: "
                                "see docs/latency.md)")
    return parse(f, f.read_text())
