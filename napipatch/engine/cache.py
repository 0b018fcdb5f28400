"""The result cache: findings of one check on one patch, kept on disk.

A result is keyed by the check's id and version, the hash of every module
of napipatch the check runs (its own file and, transitively, the helpers it
imports: editing ``kernel/cparse.py`` must invalidate kdoc's results as
surely as editing ``checks/kdoc.py``), the base commit, and the mails up to
the patch checked, and the installed versions of the C parser (tree-sitter
and its grammar, tree-sitter-c: a new grammar parses the same source into
another tree, so other findings), and the series' history (the record of
the previous version in the store: ``store.history``). Beside the findings an entry keeps the unit's *inputs*
(what it read that the key does not fix: config values, revisions resolved
in the tree; see ``engine.context``), and the engine uses the entry only
while every input still reads the same.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import re
from dataclasses import fields
from pathlib import Path
from types import ModuleType

from napipatch import fileio
from napipatch.mails.series import Series
from napipatch.report.findings import Finding


class ResultCache:
    def __init__(self, root: Path | None):
        self.root = root / "results" if root else None

    @property
    def enabled(self) -> bool:
        """False under --no-cache: no key is worth computing."""
        return self.root is not None

    def get(self, key: str) -> tuple[list[Finding], list[list]] | None:
        """(findings, inputs) stored under ``key``, or None."""
        if not self.root:
            return None
        f = self.root / key[:2] / f"{key}.json"
        try:
            data = json.loads(f.read_text())
            return ([Finding.from_json(d) for d in data["findings"]],
                    [list(i) for i in data["inputs"]])
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None

    def put(self, key: str, findings: list[Finding], inputs: list[list]) -> None:
        if not self.root:
            return
        d = self.root / key[:2]
        d.mkdir(parents=True, exist_ok=True)
        # Several processes may put one key at once: each writes a file of
        # its own and renames it over the entry, readers never see half.
        fileio.atomic_write(d / f"{key}.json", json.dumps({
            "inputs": inputs, "findings": [f.to_json() for f in findings]}))


# Distributions whose release changes findings without a line of napipatch
# changing: the C parser and its grammar. Keyed for every check, not only
# those whose closure reaches kernel/cparse.py (where tree-sitter is
# loaded): an upgrade is rare, costs one cold run, and no check can then
# miss it through an import the closure does not see (a helper imported by
# name from a string).
PARSER_DISTS = ("tree-sitter", "tree-sitter-c")


def _dist_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "none"


@functools.lru_cache(maxsize=1)
def parser_versions() -> str:
    """"tree-sitter==X tree-sitter-c==Y" as installed; read once per process,
    as the parser a process runs is the one it loaded."""
    return " ".join(f"{d}=={_dist_version(d)}" for d in PARSER_DISTS)


def result_key(check_id: str, fingerprint: str, series: Series, upto: int, base: str | None,
               extra: str, history: bool = False) -> str:
    h = hashlib.sha256()
    h.update(f"{check_id}\0{fingerprint}\0{parser_versions()}\0{base or 'notree'}\0{upto}"
             f"\0{extra}\0".encode())
    mails = ([series.cover] if series.cover else []) + series.patches[:upto]
    for m in mails:
        h.update(m.subject.raw.encode() + b"\0" + m.body.encode() + b"\0" + m.author.encode()
                 + b"\0" + m.attestation.encode())
        # Who a mail goes to (cc-maintainers): its headers, a stored series' record.
        h.update(f"\0{m.to}\0{m.cc}\0{m.sender}\0".encode())
        # When and where in a thread it was posted (repost-wait, new-thread).
        h.update(f"\0{m.date}\0{m.msgid}\0{m.in_reply_to}\0{' '.join(m.references)}\0"
                 .encode())
    # Everything else the front-ends put beside the mails (Series.inputs: who
    # a stored version went to and when, the list's net-next announcement,
    # a b4 cover's placeholder, review tags, where a series was carried
    # from), every field hashed: one added there can never give a stale result.
    # The previous version's record (ctx.history) only for the checks that
    # read it: a series checked as a directory and through the send hook
    # has another name, so another "why" in its history, and must still
    # share the other checks' results.
    rest = {f.name: getattr(series.inputs, f.name) for f in fields(series.inputs)
            if f.name != "history"}
    h.update(b"\0inputs\0" + json.dumps(rest, sort_keys=True, default=str).encode())
    if history:
        h.update(b"\0history\0" + json.dumps(series.inputs.history, sort_keys=True,
                                               default=str).encode())
    return h.hexdigest()


# ------------------------------------------------------------ fingerprints
def _file_of(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


def source_closure(name: str, root: str = "napipatch") -> list[Path]:
    """The files of module ``name`` and of every ``root.*`` module it imports,
    transitively."""
    seen: dict[str, Path] = {}
    todo = [name]
    while todo:
        mod = todo.pop()
        if mod in seen:
            continue
        path = _file_of(mod)
        if path is None:
            continue
        seen[mod] = path
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        try:
            source = path.read_bytes()
        except OSError:
            continue
        todo += [m for m in _imports_of(source, package)
                 if (m == root or m.startswith(root + ".")) and m not in seen]
    return sorted(set(seen.values()))


# An import statement, at any indentation (one inside a function runs as
# surely as one at the top): ``from .x import (a, b)`` or ``import a.b as c, d``.
_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)"
                     rb"|import[ \t]+([^\n#;]*))", re.MULTILINE)


@functools.lru_cache(maxsize=1024)
def _imports_of(source: bytes, package: str) -> frozenset[str]:
    """What a module's source imports, once per text: the closures of the
    checks share most of their modules. Read with a pattern, not parsed:
    parsing every check's closure was most of a warm hook run's time. A
    pattern can only see more imports than there are (one in a string), so
    a closure may hold a module too many, never one too few."""
    out: set[str] = set()
    for dots, mod, names, plain in _IMPORT.findall(source):
        if plain:
            out.update(n.split()[0].decode() for n in plain.split(b",") if n.split())
            continue
        name = mod.decode()
        if dots:
            parts = package.split(".")
            parts = parts[: len(parts) - len(dots) + 1]
            name = ".".join(parts + ([name] if name else []))
        out.add(name)
        # ``from pkg import mod`` names a module as often as a function.
        out.update(f"{name}.{n.split()[0].decode()}"
                   for n in names.strip(b"()").replace(b"\\", b" ").split(b",") if n.split())
    return frozenset(out)


@functools.lru_cache(maxsize=None)
def _closure_hash(name: str) -> str:
    h = hashlib.sha256()
    for path in source_closure(name, root=name.split(".")[0]):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def fingerprint(module: ModuleType, version: int) -> str:
    """Version plus a hash of the code the check runs: its module and every
    module of its top-level package that it imports, transitively. Hashed
    once per process, as the code a process runs is the code it loaded."""
    return f"{version}-{_closure_hash(module.__name__)}"
