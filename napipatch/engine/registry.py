"""The check registry: every module in checks/ (napipatch.checks) declares one check.

A check module has a docstring in ruff's sections (What it catches / Why a
reviewer cares / Example / Fix) and one function ``run(ctx)`` declared with
``@check(...)`` (napipatch.checks): its id, one-line summary, scope ("patch" | "series"), what
it needs ("diff": runs from the mails alone and uses a tree when given;
"scripts": needs the tree's trusted scripts but not the patch applied;
"tree": needs the patch applied in a tree; "build" or "boot": a job check,
reading the result of ``job``, one of ``napipatch.jobs.kinds.KINDS``), its version (part of the cache
key: bump it when results change), and the NIPA tests it answers for
(names from ``napipatch.report.nipa``; ``nipa_needs_tree`` when a "diff"
check answers them only with a tree) or its ``group`` ("netdev process":
napipatch's own posting rules, no NIPA test, so ``nipa=()``), the paths it reads (``files``: a
patch touching none has no unit to run) and the modules its units share
(``preload``).
A "tree" check runs only on patches that applied, unless it says
``needs_applied=False`` (``apply`` itself).

Discovery validates every declaration. A malformed module is reported by
name with what is wrong (``Broken``) and the other checks still run; the
engine reports a broken module as a check that crashed, so the verdict is
never "clean" while a check is missing. Adding a check is adding one file.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass, fields
from types import ModuleType

import napipatch.checks
from napipatch.checks import Declaration
from napipatch.config import Config
from napipatch.engine.cache import fingerprint
from napipatch.errors import NapipatchError
from napipatch.jobs.kinds import KINDS
from napipatch.report import nipa as nipa_contexts
from napipatch.report.model import GROUPS

SCOPES = ("patch", "series")
STATIC_NEEDS = ("diff", "scripts", "tree")
JOB_NEEDS = ("build", "boot")
NEEDS = STATIC_NEEDS + JOB_NEEDS
SECTIONS = ("What it catches", "Why a reviewer cares", "Example", "Fix")
_ID = re.compile(r"^[a-z][a-z0-9-]{1,30}$")


@dataclass(frozen=True)
class CheckInfo:
    id: str
    summary: str
    scope: str
    needs: str
    version: int
    module: ModuleType
    needs_applied: bool = True
    nipa: tuple[str, ...] = ()
    fn: Callable | None = None   # None: the module's ``run``
    nipa_needs_tree: bool = False
    files: tuple[str, ...] = ()
    preload: tuple[str, ...] = ()
    zygote: bool = False
    job: str = ""
    group: str = ""     # "" or "netdev process" (napipatch.report.model.GROUPS)
    history: bool = False  # reads ctx.history, which joins its cache key
    requires: str = ""  # a Config attribute the check runs only with (else skipped)
    timeout: str = ""   # a Config attribute holding its own deadline (seconds)
    fixes: str = ""     # what `napipatch fix` does for its findings ("": nothing)

    @property
    def is_job(self) -> bool:
        """A check that reads a build or boot job's result (run by the
        pipeline after the static checks), not one the engine runs."""
        return bool(self.job)

    @property
    def fingerprint(self) -> str:
        """Version plus a hash of the code the check runs (its module and the
        napipatch modules it imports): an edit anywhere in that code
        invalidates cached results even when the version was not bumped."""
        return fingerprint(self.module, self.version)

    @property
    def doc(self) -> str:
        return (self.module.__doc__ or "").strip()

    def run(self, ctx):
        return (self.fn or self.module.run)(ctx)


@dataclass(frozen=True)
class Broken:
    """A module in checks/ that does not declare a valid check."""

    module: str          # checks/NAME.py or checks/GROUP/NAME.py
    reason: str

    @property
    def id(self) -> str:
        return self.module.removesuffix(".py").rpartition("/")[2]


@dataclass
class Registry:
    checks: dict[str, CheckInfo]
    broken: list[Broken]


def _source(module: ModuleType) -> str:
    try:
        return inspect.getsource(module)
    except (OSError, TypeError):
        return ""


def problems(decl: Declaration, doc: str, module: ModuleType | None = None) -> list[str]:
    """What is wrong with one declaration and its module's docstring."""
    out = []
    if not _ID.match(decl.id):
        out.append(f"id {decl.id!r} is not lower-case letters, digits and dashes")
    if not decl.summary.strip() or "\n" in decl.summary:
        out.append("summary must be one non-empty line")
    if decl.scope not in SCOPES:
        out.append(f"scope {decl.scope!r} is not one of {', '.join(SCOPES)}")
    if decl.needs not in NEEDS:
        out.append(f"needs {decl.needs!r} is not one of {', '.join(NEEDS)}")
    if not isinstance(decl.version, int) or decl.version < 1:
        out.append(f"version {decl.version!r} is not a positive integer")
    unknown = [n for n in decl.nipa if n not in nipa_contexts.BY_NAME]
    if unknown:
        out.append(f"nipa: {', '.join(map(repr, unknown))} is no NIPA test "
                   "(napipatch/report/nipa.py lists them)")
    for what, values in (("files", decl.files), ("preload", decl.preload)):
        if not all(isinstance(v, str) and v for v in values):
            out.append(f"{what} must be non-empty strings")
    if decl.needs in JOB_NEEDS and decl.job not in KINDS:
        out.append(f"job {decl.job!r} is not one of {', '.join(KINDS)} "
                   f"(needs {decl.needs!r} is a job check's)")
    if decl.needs in STATIC_NEEDS and decl.job:
        out.append(f"job {decl.job!r} is for needs build or boot, not {decl.needs!r}")
    if decl.job and (decl.zygote or decl.files or decl.preload):
        out.append("a job check runs no unit of its own: no files=, preload= or zygote=")
    if decl.group not in GROUPS:
        out.append(f"group {decl.group!r} is not one of "
                   f"{', '.join(repr(g) for g in GROUPS)}")
    elif decl.group and decl.nipa:
        out.append(f"group {decl.group!r} is napipatch's own rules, no NIPA test: nipa=()")
    if module is not None and not decl.history and "ctx.history" in _source(module):
        out.append("reads ctx.history without history=True: its cached results would not "
                   "follow the previous version's record")
    settings = {f.name for f in fields(Config)}
    for what, name in (("requires", decl.requires), ("timeout", decl.timeout)):
        if name and name not in settings:
            out.append(f"{what} {name!r} is no napipatch setting (napipatch/config.py)")
    if "\n" in decl.fixes:
        out.append("fixes must be one line")
    if decl.zygote and not all(callable(getattr(module, f, None)) for f in ("warm", "serve")):
        out.append("zygote=True needs module functions warm() and serve(request)")
    missing = [s for s in SECTIONS if not re.search(rf"^{s}:\s*$", doc, re.MULTILINE)]
    if missing:
        out.append(f"docstring lacks the section{'s' if len(missing) > 1 else ''} "
                   f"{', '.join(missing)}")
    return out


def _declared(m: ModuleType) -> list[Callable]:
    return [v for v in vars(m).values()
            if callable(v) and isinstance(getattr(v, "declaration", None), Declaration)
            and getattr(v, "__module__", None) == m.__name__]


def _where(name: str) -> str:
    """``process.rct`` -> ``checks/process/rct.py``."""
    return f"checks/{name.replace('.', '/')}.py"


def _load_one(name: str) -> CheckInfo | Broken:
    where = _where(name)
    try:
        m = importlib.import_module(f"{napipatch.checks.__name__}.{name}")
    except Exception as exc:  # noqa: BLE001 - a module that does not import is broken
        return Broken(where, f"does not import: {type(exc).__name__}: {exc}")
    fns = _declared(m)
    if len(fns) != 1:
        return Broken(where, "declares no check (a run(ctx) decorated with @check(...))"
                      if not fns else f"declares {len(fns)} checks; one module, one check")
    decl = fns[0].declaration
    bad = problems(decl, m.__doc__ or "", m)
    if bad:
        return Broken(where, "; ".join(bad))
    return CheckInfo(id=decl.id, summary=decl.summary, scope=decl.scope, needs=decl.needs,
                     version=decl.version, module=m, needs_applied=decl.needs_applied,
                     nipa=decl.nipa, fn=fns[0], nipa_needs_tree=decl.nipa_needs_tree,
                     files=decl.files, preload=decl.preload, zygote=decl.zygote,
                     job=decl.job, group=decl.group, history=decl.history,
                     requires=decl.requires, timeout=decl.timeout, fixes=decl.fixes)


def load() -> Registry:
    """Every check in checks/, validated; the malformed ones apart."""
    found: dict[str, CheckInfo] = {}
    broken: list[Broken] = []
    # One level of sub-packages (checks/process/, checks/jobs/) groups the
    # checks as NIPA's folders do; a package itself declares none.
    prefix = napipatch.checks.__name__ + "."
    for mod in pkgutil.walk_packages(napipatch.checks.__path__, prefix):
        name = mod.name.removeprefix(prefix)
        if mod.ispkg or name.rpartition(".")[2].startswith("_"):
            continue
        got = _load_one(name)
        if isinstance(got, CheckInfo) and got.id in found:
            got = Broken(_where(name), f"check id {got.id!r} is taken already")
        if isinstance(got, Broken):
            broken.append(got)
        else:
            found[got.id] = got
    return Registry(dict(sorted(found.items())), broken)


def discover() -> dict[str, CheckInfo]:
    """The valid checks by id."""
    return load().checks


def select(all_checks: dict[str, CheckInfo], only: list[str] | None,
           skip: list[str] | None,
           default: Callable[[CheckInfo], bool] | None = None) -> list[CheckInfo]:
    """The checks ``only`` names (else those ``default`` keeps, else all),
    less ``skip``; an unknown id is a one-line error."""
    for name in (only or []) + (skip or []):
        if name not in all_checks:
            raise NapipatchError(name, f"no such check (known: {', '.join(all_checks)})")
    keep = (lambda c: c.id in only) if only else (default or (lambda c: True))
    return [c for c in all_checks.values() if keep(c) and c.id not in (skip or [])]


def among(ids: list[str]) -> Callable[[CheckInfo], bool]:
    """A selection napipatch makes itself (a hook's, the bot's), to give
    as ``default``, not as ``only``: ``only`` is what the user asked for,
    and a check it names that cannot run here is an error; one napipatch
    chose that cannot run (no tree) is skipped, as the run says."""
    chosen = set(ids)
    return lambda c: c.id in chosen


def static(check: CheckInfo) -> bool:
    """``napipatch check``'s default: the checks that need no build or boot."""
    return not check.is_job


def scoped(scope: str, only: list[str] | None, skip: list[str] | None) -> list[str]:
    """The ids of the ``scope`` (patch or series) checks a run picks:
    ``only``'s, else the static ones, less ``skip`` (the hooks and b4's
    series checks, as ``select`` picks for ``napipatch check``)."""
    return [c.id for c in select(discover(), only, skip, static) if c.scope == scope]
