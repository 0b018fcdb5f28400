"""YNL netlink specs: schema validation, generated-file headers, lint.

Everything about ``Documentation/netlink/specs/*.yaml`` and the files the
YNL generator makes from them, as the tree's ``tools/net/ynl/ynl-regen.sh``
sees them:

- a generated file starts with the comment lines
  ``/*\tDocumentation/netlink/specs/X.yaml */`` and
  ``/* YNL-GEN (kernel|uapi|user) (header|source) */``, optionally
  followed by ``/* YNL-ARG --user-header H --exclude-op RE */``;
- regenerating one is ``ynl-gen-c.py --mode M --header|--source --spec S
  ARGS -o F`` (``pyynl/ynl_gen_c.py`` in newer trees);
- a spec is validated against ``Documentation/netlink/<protocol>.yaml``.

Running the generator, its files in one interpreter (ynlbatch.py), is the
last part.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from napipatch import procs

SPEC_DIR = "Documentation/netlink/specs/"
SCHEMA_DIR = "Documentation/netlink/"
GEN_REGEX = r"^/\* YNL-GEN (kernel|uapi|user)"   # ynl-regen.sh greps for this (as BRE)
GEN_FIXED = "/* YNL-GEN "                          # a literal part of it, for git grep -F
GENERATORS = ("tools/net/ynl/pyynl/ynl_gen_c.py", "tools/net/ynl/ynl-gen-c.py")
_GEN_LINE = re.compile(r"^/\* YNL-GEN (kernel|uapi|user) (header|source) \*/\s*$")
_SPEC_LINE = re.compile(r"^/\*\s*(\S+\.yaml)\s*\*/\s*$")
_ARG_LINE = re.compile(r"^/\* YNL-ARG (.*) \*/\s*$")


def is_spec(path: str) -> bool:
    return path.startswith(SPEC_DIR) and path.endswith(".yaml") and "/" not in path[len(SPEC_DIR):]


@dataclass(frozen=True)
class Generated:
    """One generated file and how ynl-regen.sh would remake it."""

    path: str
    spec: str          # Documentation/netlink/specs/X.yaml
    mode: str          # kernel | uapi | user
    kind: str          # header | source
    args: tuple[str, ...] = ()


def parse_header(path: str, text: str) -> Generated | None:
    """The ``YNL-GEN`` header of a generated file (None when it has none).

    Like ynl-regen.sh: the spec is on the line before ``/* YNL-GEN``,
    extra arguments on a ``/* YNL-ARG ... */`` line. Only ``--user-header``
    and ``--exclude-op`` are passed on (the file is untrusted input).
    """
    lines = text.splitlines()[:12]
    for i, line in enumerate(lines):
        m = _GEN_LINE.match(line)
        if not m or i == 0:
            continue
        s = _SPEC_LINE.match(lines[i - 1].strip().replace("\t", " "))
        if not s:
            return None
        spec = s.group(1)
        if spec.startswith("/") or ".." in spec.split("/"):
            return None
        args: list[str] = []
        for extra in lines[i + 1:i + 3]:
            a = _ARG_LINE.match(extra)
            if a:
                words = shlex.split(a.group(1))
                j = 0
                while j + 1 < len(words):
                    if words[j] in ("--user-header", "--exclude-op"):
                        args += [words[j], words[j + 1]]
                        j += 2
                    else:
                        j += 1
        return Generated(path, spec, m.group(1), m.group(2), tuple(args))
    return None


# libyaml when PyYAML has it: a spec parses in ~15 ms instead of ~200 ms.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(text: str):
    return yaml.load(text, Loader=_LOADER)


def schema_path(spec: dict) -> str:
    return f"{SCHEMA_DIR}{spec.get('protocol', 'genetlink')}.yaml"


def family_name(spec_path: str, spec: dict | None) -> str:
    if isinstance(spec, dict) and isinstance(spec.get("name"), str):
        return spec["name"]
    return Path(spec_path).stem


# ------------------------------------------------------------------ lines
def line_map(text: str) -> dict[tuple, int]:
    """YAML path (keys and list indexes) -> 1-based line of that node (of its key)."""
    out: dict[tuple, int] = {}
    try:
        root = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError:
        return out
    stack = [((), root)]
    while stack and len(out) < 200000:
        path, node = stack.pop()
        out.setdefault(path, node.start_mark.line + 1)
        if len(path) > 40:
            continue
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                out.setdefault(path + (k.value,), k.start_mark.line + 1)
                stack.append((path + (k.value,), v))
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                stack.append((path + (i,), v))
    return out


def line_of(lines: dict[tuple, int], path) -> int | None:
    path = tuple(path)
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return lines.get(())


# -------------------------------------------------------------- validation
@dataclass(frozen=True)
class Problem:
    message: str
    line: int | None
    key: str = ""       # line-independent identity, to drop what was there before


def validate(spec_text: str, schema_text: str) -> list[Problem]:
    """jsonschema errors of a spec, each with the line it points at. A spec
    or schema that does not load (bad YAML, a ``!!python/...`` tag the safe
    loader refuses) or a schema jsonschema cannot use is one Problem too,
    never an exception: both come from the patch."""
    import jsonschema

    try:
        spec = load(spec_text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        return [Problem(f"does not load: not valid YAML: {getattr(e, 'problem', None) or e}",
                        mark.line + 1 if mark else None, "yaml")]
    try:
        schema = load(schema_text)
    except yaml.YAMLError as e:
        return [Problem(f"its schema does not load: {getattr(e, 'problem', None) or e}",
                        None, "schema")]
    if not isinstance(schema, (dict, bool)):
        return [Problem("its schema is not a YAML mapping", None, "schema")]
    lines = line_map(spec_text)
    out = []
    try:
        cls = jsonschema.validators.validator_for(schema)
        errors = sorted(cls(schema).iter_errors(spec),
                        key=lambda e: list(map(str, e.absolute_path)))
    except Exception as e:  # noqa: BLE001 - a broken schema (bad regex, bad $ref)
        return [Problem(f"its schema cannot be used: {type(e).__name__}: {str(e)[:200]}",
                        None, "schema")]
    for err in errors:
        where = "/".join(map(str, err.absolute_path)) or "(top)"
        msg = err.message if len(err.message) < 200 else err.message[:200] + "..."
        out.append(Problem(f"{where}: {msg}", line_of(lines, err.absolute_path),
                           f"{where}: {err.message}"))
    return out


# ---------------------------------------------------------------- warnings
def _entries(defn: dict) -> list[tuple[str, int]]:
    """(name, value) of an enum definition's entries."""
    out = []
    value = defn.get("value-start", 0)
    if not isinstance(value, int):
        value = 0
    for e in defn.get("entries") or []:
        if isinstance(e, dict):
            if isinstance(e.get("value"), int):
                value = e["value"]
            out.append((str(e.get("name")), value))
        else:
            out.append((str(e), value))
        value += 1
    return out


def _attr_sets(spec: dict) -> list[dict]:
    return [s for s in spec.get("attribute-sets") or [] if isinstance(s, dict)]


def _ops(spec: dict) -> list[dict]:
    ops = spec.get("operations") or {}
    return [o for o in (ops.get("list") or []) if isinstance(o, dict)]


def _op_attrs(spec: dict) -> tuple[set[tuple[str, str]], set[str]]:
    """(attr-set, attribute) listed by some operation; attr-sets operations use."""
    used: set[tuple[str, str]] = set()
    sets: set[str] = set()
    for op in _ops(spec):
        aset = op.get("attribute-set")
        if not aset:
            continue
        sets.add(aset)
        for mode in ("do", "dump", "notify", "event"):
            m = op.get(mode)
            if not isinstance(m, dict):
                continue
            parts = [m] + [m.get(d) for d in ("request", "reply")]
            for part in parts:
                if isinstance(part, dict):
                    for a in part.get("attributes") or []:
                        used.add((aset, str(a)))
    return used, sets


def _nested_sets(spec: dict) -> set[str]:
    out = set()
    for s in _attr_sets(spec):
        for a in s.get("attributes") or []:
            if isinstance(a, dict) and a.get("nested-attributes"):
                out.add(a["nested-attributes"])
    for sm in spec.get("sub-messages") or []:
        for f in (sm or {}).get("formats") or []:
            if isinstance(f, dict) and f.get("attribute-set"):
                out.add(f["attribute-set"])
    return out


def _enum_users(spec: dict) -> set[str]:
    out = set()
    for s in _attr_sets(spec):
        for a in s.get("attributes") or []:
            if isinstance(a, dict) and a.get("enum"):
                out.add(a["enum"])
    for d in spec.get("definitions") or []:
        if isinstance(d, dict):
            for m in d.get("members") or []:
                if isinstance(m, dict) and m.get("enum"):
                    out.add(m["enum"])
    return out


def _const(spec: dict, v):
    if isinstance(v, int):
        return v
    for d in spec.get("definitions") or []:
        if isinstance(d, dict) and d.get("name") == v and d.get("type") == "const":
            return d.get("value") if isinstance(d.get("value"), int) else None
    return None


def lint(spec: dict, lines: dict[tuple, int]) -> list[Problem]:
    """Review warnings on a spec (all of them; callers drop the old ones)."""
    out: list[Problem] = []
    if not isinstance(spec, dict):
        return out
    used, op_sets = _op_attrs(spec)
    nested = _nested_sets(spec)
    for si, s in enumerate(spec.get("attribute-sets") or []):
        if not isinstance(s, dict) or s.get("subset-of"):
            continue
        name = s.get("name")
        if name not in op_sets or name in nested:
            continue
        for ai, a in enumerate(s.get("attributes") or []):
            if not isinstance(a, dict) or a.get("type") in ("pad", "unused"):
                continue
            an = a.get("name")
            if (name, an) not in used:
                out.append(Problem(
                    f"attribute '{an}' of attribute-set '{name}' is in no operation "
                    f"(no do/dump request or reply lists it)",
                    line_of(lines, ("attribute-sets", si, "attributes", ai, "name")),
                    f"noop:{name}:{an}"))
    users = _enum_users(spec)
    defs = {d.get("name"): (i, d) for i, d in enumerate(spec.get("definitions") or [])
            if isinstance(d, dict)}
    for dname, (di, d) in defs.items():
        if d.get("type") in ("enum", "flags") and "header" not in d and dname not in users:
            out.append(Problem(f"{d.get('type')} '{dname}' in definitions is used by no attribute",
                               line_of(lines, ("definitions", di, "name")), f"unused:{dname}"))
    for si, s in enumerate(spec.get("attribute-sets") or []):
        if not isinstance(s, dict):
            continue
        for ai, a in enumerate(s.get("attributes") or []):
            if not isinstance(a, dict) or not a.get("enum") or not isinstance(a.get("checks"), dict):
                continue
            ent = defs.get(a["enum"])
            if not ent or ent[1].get("type") != "enum":
                continue
            values = [v for _, v in _entries(ent[1])]
            if not values:
                continue
            for bound, want in (("max", max(values)), ("min", min(values))):
                if bound not in a["checks"]:
                    continue
                got = _const(spec, a["checks"][bound])
                if got is not None and got != want:
                    out.append(Problem(
                        f"attribute '{a.get('name')}' of '{s.get('name')}': checks: {bound}: "
                        f"{a['checks'][bound]} contradicts enum '{a['enum']}' "
                        f"(its {bound} value is {want})",
                        line_of(lines, ("attribute-sets", si, "attributes", ai, "checks", bound)),
                        f"checks:{s.get('name')}:{a.get('name')}:{bound}:{got}:{want}"))
    return out


# ----------------------------------------------------------------------
# Running the YNL generator for generated files, and comparing its output.
#
# The generator is only ever run from the trusted copy of the base commit
# (``TreeView.scripts``) in a scratch directory holding the post-patch spec,
# in one interpreter for all of a family's files (``ynlbatch``).


def generator(scripts: Path) -> Path | None:
    for g in GENERATORS:
        if (scripts / g).is_file():
            return scripts / g
    return None


@dataclass
class Regen:
    file: Generated
    text: str | None       # what the generator makes (None when it failed)
    error: str = ""


def regenerate(scripts: Path, files: list[Generated], inputs: dict[str, str],
               timeout: float = 120) -> list[Regen]:
    """Run the trusted generator for ``files`` in a scratch tree.

    ``inputs`` maps tree paths (the specs, the schemas) to their
    post-patch text; they are written under a temporary kernel root
    (with an empty MAINTAINERS, which is how the generator finds the
    root), and the outputs go to the same relative paths, so ``#include
    "x-gen.h"`` lines come out as in the tree.
    """
    gen = generator(scripts)
    if gen is None:
        return [Regen(f, None, "no YNL generator in the base tree") for f in files]
    out: list[Regen] = []
    with tempfile.TemporaryDirectory(prefix="napipatch-ynl-") as td:
        root = Path(td) / "linux"
        root.mkdir()
        (root / "MAINTAINERS").write_text("")
        for rel, text in inputs.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        outdir = Path(td) / "out"
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", LC_ALL="C.UTF-8")
        jobs = []
        for f in files:
            dest = outdir / f.path
            dest.parent.mkdir(parents=True, exist_ok=True)
            jobs.append(["--mode", f.mode, f"--{f.kind}", "--spec", str(root / f.spec),
                         *f.args, "-o", str(dest)])
        # One interpreter for the family's files (see ynlbatch.py).
        batch = Path(__file__).with_name("ynlbatch.py")
        try:
            cp = procs.run([sys.executable, str(batch), str(gen)], timeout=timeout, cwd=root,
                           input=json.dumps(jobs), env=env)
            res = json.loads(cp.stdout) if cp.returncode == 0 else None
        except procs.ProcessTimeout:
            return [Regen(f, None, f"{gen.name} timed out") for f in files]
        except ValueError:
            res = None
        if not isinstance(res, list) or len(res) != len(files):
            msg = "\n".join((cp.stderr.strip() or f"exit status {cp.returncode}")
                            .splitlines()[-15:])
            return [Regen(f, None, msg) for f in files]
        for f, r in zip(files, res):
            dest = outdir / f.path
            if r.get("rc") != 0 or not dest.exists():
                msg = r.get("err", "").strip() or f"exit status {r.get('rc')}"
                out.append(Regen(f, None, "\n".join(msg.splitlines()[-15:])))
                continue
            out.append(Regen(f, dest.read_text()))
    return out


def diff(a: str, b: str, a_name: str, b_name: str, limit: int = 120) -> tuple[str, int | None]:
    """Unified diff (at most ``limit`` lines) and the first differing line of ``a``."""
    al, bl = a.splitlines(keepends=True), b.splitlines(keepends=True)
    first = None
    for i, (x, y) in enumerate(zip(al, bl)):
        if x != y:
            first = i + 1
            break
    if first is None and len(al) != len(bl):
        first = min(len(al), len(bl)) + 1
    lines = list(difflib.unified_diff(al, bl, a_name, b_name, n=2))
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more diff lines)\n"]
    return "".join(ln if ln.endswith("\n") else ln + "\n" for ln in lines), first
