"""The package layout does not regress: no import cycles, short functions.

Fast (no kernel tree): every module of the shipped package is parsed with
``ast``, nothing is imported. The package is napipatch/ plus what
pyproject's [tool.setuptools.package-dir] maps into it (checks/ ships as
napipatch.checks).

Imports count wherever they are, function bodies included: an import
deferred into a function still ties the two modules together, it only
hides the cycle until that function runs. ``from X import n`` imports the
module X.n when that is one of ours, else the module X; importing a package
means its ``__init__.py`` (parent packages are not counted as imported).

The helpers take a root directory so that the tests at the bottom can run
them on small synthetic packages: the checks are shown to fail when they
should and to pass when they should.
"""

from __future__ import annotations

import ast
import tomllib
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "napipatch"
MAX_TOP_LEVEL_MODULES = 12
MAX_FUNCTION_LINES = 80


# ---------------------------------------------------------------- discovery
@dataclass(frozen=True)
class Module:
    name: str  # dotted, as imported: napipatch.checks.kdoc
    path: Path
    is_package: bool  # an __init__.py


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    path: Path
    line: int
    scope: str  # "" at module level, else the enclosing function

    def where(self, root: Path) -> str:
        inside = f" (in {self.scope})" if self.scope else ""
        return f"{_rel(self.path, root)}:{self.line}{inside}"


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def package_dirs(root: Path, package: str = PACKAGE) -> dict[str, Path]:
    """{package name: directory}: ``root/package`` and whatever pyproject's
    [tool.setuptools.package-dir] maps to a sub-package of it."""
    dirs = {package: root / package}
    pyproject = root / "pyproject.toml"
    if pyproject.exists():
        mapping = (tomllib.loads(pyproject.read_text()).get("tool", {})
                   .get("setuptools", {}).get("package-dir", {}))
        for name, d in mapping.items():
            if name == package or name.startswith(package + "."):
                dirs[name] = root / d
    return dirs


def discover(dirs: dict[str, Path]) -> dict[str, Module]:
    mods: dict[str, Module] = {}
    for package, d in dirs.items():
        for path in sorted(d.rglob("*.py")):
            rel = path.relative_to(d)
            if "__pycache__" in rel.parts:
                continue
            parts = list(rel.with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            name = ".".join([package, *parts])
            mods[name] = Module(name, path, is_package)
    return mods


# ------------------------------------------------------------------ imports
def _functions(tree: ast.AST):
    """(qualified name, node) of every def, methods and nested ones included."""
    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                yield name, child
                yield from walk(child, f"{name}.<locals>.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)
    yield from walk(tree, "")


def _import_nodes(tree: ast.AST):
    """(import node, enclosing function or "") for every import in the file."""
    def walk(node, scope):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, scope
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from walk(child, f"{scope}.{child.name}" if scope else child.name)
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{scope}.{child.name}" if scope else child.name)
            else:
                yield from walk(child, scope)
    yield from walk(tree, "")


def _targets(mod: Module, node: ast.Import | ast.ImportFrom, known) -> list[str]:
    """The modules an import statement imports (before keeping our own)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:  # relative: from the package this module is in
        base = mod.name if mod.is_package else mod.name.rpartition(".")[0]
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        base = f"{base}.{node.module}" if node.module else base
    else:
        base = node.module
    out = []
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        out.append(sub if sub in known else base)
    return out


def imports(mods: dict[str, Module]) -> list[Import]:
    """Every import of one of our modules by another (self-imports left out)."""
    found = []
    for mod in mods.values():
        tree = ast.parse(mod.path.read_text(), filename=str(mod.path))
        for node, scope in _import_nodes(tree):
            for target in _targets(mod, node, mods):
                if target in mods and target != mod.name:
                    found.append(Import(mod.name, target, mod.path, node.lineno, scope))
    return found


# ------------------------------------------------------------------- cycles
def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative: no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    sccs: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    scc = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        scc.append(member)
                        if member == node:
                            break
                    sccs.append(sorted(scc))
    return sccs


def _shortest_cycle(graph: dict[str, set[str]], start: str, within: set[str]) -> list[str]:
    """start -> ... -> start, fewest edges, staying inside ``within``."""
    prev: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph.get(node, ())):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return [*reversed(path), start]
            if child in within and child not in prev:
                prev[child] = node
                queue.append(child)
    raise AssertionError(f"{start} is on no cycle")  # not reached for an SCC


def import_cycles(root: Path, package: str = PACKAGE) -> list[str]:
    """One message per knot of mutually importing modules, naming a cycle
    through it and the file:line of each import on that cycle."""
    mods = discover(package_dirs(root, package))
    found = imports(mods)
    graph: dict[str, set[str]] = {name: set() for name in mods}
    where: dict[tuple[str, str], list[Import]] = {}
    for imp in found:
        graph[imp.source].add(imp.target)
        where.setdefault((imp.source, imp.target), []).append(imp)
    messages = []
    for scc in strongly_connected(graph):
        if len(scc) < 2:
            continue
        cycle = _shortest_cycle(graph, scc[0], set(scc))
        lines = [f"import cycle: {' -> '.join(cycle)}"]
        for a, b in zip(cycle, cycle[1:]):
            # one statement importing several names is one site
            sites = ", ".join(dict.fromkeys(imp.where(root) for imp in where[(a, b)]))
            lines.append(f"    {a} imports {b} at {sites}")
        rest = sorted(set(scc) - set(cycle))
        if rest:
            lines.append(f"    the same knot also holds: {', '.join(rest)}")
        messages.append("\n".join(lines))
    return messages


# -------------------------------------------------------------- other rules
def long_functions(root: Path, package: str = PACKAGE,
                   limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """'path:line qualname: N lines' for each def longer than ``limit``
    (from the def line to its last line, decorators not counted)."""
    out = []
    for mod in discover(package_dirs(root, package)).values():
        tree = ast.parse(mod.path.read_text(), filename=str(mod.path))
        for name, node in _functions(tree):
            n = node.end_lineno - node.lineno + 1
            if n > limit:
                out.append(f"{_rel(mod.path, root)}:{node.lineno} {mod.name}.{name}: "
                           f"{n} lines (> {limit})")
    return out


def top_level_modules(root: Path, package: str = PACKAGE) -> list[str]:
    return sorted(p.name for p in (root / package).glob("*.py"))


def subpackages_without_docstring(root: Path, package: str = PACKAGE) -> list[str]:
    """The sub-packages under ``root/package`` whose __init__.py says nothing."""
    out = []
    for init in sorted((root / package).rglob("__init__.py")):
        if init.parent == root / package or "__pycache__" in init.parts:
            continue
        if not ast.get_docstring(ast.parse(init.read_text(), filename=str(init))):
            out.append(_rel(init, root))
    return out


def imports_of_the_app(root: Path, package: str = PACKAGE, app: str = "cli") -> list[str]:
    """Imports of the app package ``package.app`` by its own modules other than
    __init__.py (they share helpers through ``package.app.common``)."""
    mods = discover(package_dirs(root, package))
    pkg = f"{package}.{app}"
    return [f"{imp.where(root)}: {imp.source} imports {pkg} itself"
            for imp in imports(mods)
            if imp.target == pkg and imp.source.startswith(pkg + ".")]


# ------------------------------------------------------------------ layers
# Who may import whom: the one statement of napipatch's layers. A unit is a
# sub-package or a module directly in napipatch/; a module may import its
# own unit, the package itself (its version) and the units listed for it.
# The flow reads downwards: mails -> tree -> kernel -> checks -> engine ->
# report, with store, jobs and bench beside it and the front-ends on top.
FOUNDATION = {"errors", "fileio", "tomlconf", "procs"}
LAYERS: dict[str, set[str]] = {
    "errors": set(),
    "fileio": {"errors"},
    "procs": {"errors", "fileio"},   # every tool napipatch starts (git aside)
    "tomlconf": {"errors"},
    "config": {"errors"},
    "mails": FOUNDATION,
    "tree": {"mails"} | FOUNDATION,
    "kernel": {"tree", "mails"} | FOUNDATION,
    "report": {"mails"} | FOUNDATION,
    "checks": {"kernel", "tree", "mails", "report"} | FOUNDATION,
    # the engine validates a job check's job against the job registry
    "engine": {"checks", "jobs", "kernel", "tree", "mails", "report", "config"} | FOUNDATION,
    "store": {"tree", "mails", "report"} | FOUNDATION,
    "jobs": {"kernel", "tree", "mails", "report"} | FOUNDATION,
    # The pipeline: apply once, the engine's static checks, the jobs' job
    # checks, one report; every front-end below runs it.
    "pipeline": {"engine", "jobs", "checks", "kernel", "tree", "mails", "report",
                 "config"} | FOUNDATION,
    "bench": {"pipeline", "engine", "jobs", "store", "kernel", "tree", "mails", "report",
              "config"} | FOUNDATION,
    "send": {"pipeline", "engine", "store", "kernel", "tree", "mails", "report",
             "config"} | FOUNDATION,
    "bot": {"pipeline", "engine", "checks", "jobs", "store", "kernel", "tree", "mails", "report",
            "config"} | FOUNDATION,
    "cli": {"pipeline", "checks", "bench", "bot", "send", "engine", "jobs", "store", "kernel",
            "tree", "mails", "report", "config"} | FOUNDATION,
    "__main__": {"cli"},
    "templates": set(),
    "targets": set(),
}


def unit_of(name: str, package: str = PACKAGE) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == package else package


def layer_violations(root: Path, layers: dict[str, set[str]], package: str = PACKAGE) -> list[str]:
    """One line per import that crosses the layers the wrong way, per unit
    missing from ``layers``, and per private name imported from another unit."""
    mods = discover(package_dirs(root, package))
    out = [f"{name}: a unit the layer contract does not list (add it to LAYERS)"
           for name in sorted({unit_of(m, package) for m in mods} - set(layers) - {package})]
    for imp in imports(mods):
        a, b = unit_of(imp.source, package), unit_of(imp.target, package)
        if a != b and b != package and a in layers and b not in layers[a]:
            out.append(f"{imp.where(root)}: {imp.source} imports {imp.target}: "
                       f"{a} may not import {b}")
    for mod in mods.values():
        tree = ast.parse(mod.path.read_text(), filename=str(mod.path))
        for node, _scope in _import_nodes(tree):
            if not isinstance(node, ast.ImportFrom) or not node.module or node.level:
                continue
            other = unit_of(node.module, package)
            private = [a.name for a in node.names if a.name.startswith("_")
                       and not a.name.startswith("__")]
            if private and node.module.startswith(package + ".") \
                    and other != unit_of(mod.name, package):
                out.append(f"{_rel(mod.path, root)}:{node.lineno}: {mod.name} imports the "
                           f"private {', '.join(private)} from {node.module}")
    return out


# ---------------------------------------------------------- the git layer
# napipatch/tree/ is the one place that starts git (tree/gitutil.py):
# GitPython is imported and git processes are run there only. config.py
# reads git config itself, as it sits below every layer.
GIT_LAYER = "tree"
GIT_ALSO = {"config"}
_STARTERS = {
    "subprocess": {"run", "Popen", "call", "check_call", "check_output", "getoutput",
                   "getstatusoutput"},
    "os": {"system", "popen", "execv", "execve", "execvp", "execvpe", "execl", "execle",
           "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl",
           "spawnle", "spawnlp", "spawnlpe", "posix_spawn", "posix_spawnp"},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "procs": {"run", "start"},   # the package's own tool runner (napipatch/procs.py)
}


def _is_gitpython(node: ast.Import | ast.ImportFrom) -> str | None:
    names = [a.name for a in node.names] if isinstance(node, ast.Import) \
        else [node.module or ""] if not node.level else []
    return next((n for n in names if n == "git" or n.startswith("git.")), None)


def _git_argv(node: ast.AST | None, argvs: set[str]) -> bool:
    """``node`` is a git command: ["git", ...], "git ..." for a shell, a name
    assigned such a list, or one of those with more added."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return bool(node.elts) and _git_argv(node.elts[0], argvs)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and (node.value == "git"
                                                or node.value.startswith("git "))
    if isinstance(node, ast.JoinedStr):
        return bool(node.values) and _git_argv(node.values[0], argvs)
    if isinstance(node, ast.Name):
        return node.id in argvs
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _git_argv(node.left, argvs)
    return False


def _starter(call: ast.Call, modules: dict[str, str], funcs: dict[str, str]) -> str | None:
    """``subprocess.run`` (or os.system, ...) when ``call`` calls one."""
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        mod = modules.get(f.value.id)
        if mod and f.attr in _STARTERS[mod]:
            return f"{mod}.{f.attr}"
    if isinstance(f, ast.Name) and f.id in funcs:
        return funcs[f.id]
    return None


def _git_runs(tree: ast.AST, package: str = PACKAGE) -> list[tuple[int, str]]:
    """(line, what) of each call in ``tree`` that starts a git process."""
    modules: dict[str, str] = {}   # local name -> subprocess/os/asyncio/procs
    funcs: dict[str, str] = {}     # local name -> "subprocess.run"
    argvs: set[str] = set()        # names assigned a git command
    ours = {f"{package}.procs": "procs"}   # the runner, as the package's modules import it
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in _STARTERS:
                    modules[a.asname or a.name] = a.name
        elif isinstance(node, ast.ImportFrom) and node.module == package and not node.level:
            modules.update({a.asname or a.name: "procs" for a in node.names if a.name == "procs"})
        elif isinstance(node, ast.ImportFrom) and not node.level and \
                ours.get(node.module or "", node.module) in _STARTERS:
            mod = ours.get(node.module, node.module)
            for a in node.names:
                if a.name in _STARTERS[mod]:
                    funcs[a.asname or a.name] = f"{mod}.{a.name}"
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and _git_argv(node.value, set()):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            argvs.update(t.id for t in targets if isinstance(t, ast.Name))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (what := _starter(node, modules, funcs)):
            args = list(node.args) + [k.value for k in node.keywords if k.arg == "args"]
            if any(_git_argv(a, argvs) for a in args):
                found.append((node.lineno, what))
    return sorted(found)


def git_outside_layer(root: Path, package: str = PACKAGE, layer: str = GIT_LAYER,
                      also: set[str] = GIT_ALSO) -> list[str]:
    """One line per import of GitPython and per git process started in a
    module outside the git layer ``layer`` (and the units in ``also``)."""
    out = []
    for mod in discover(package_dirs(root, package)).values():
        if unit_of(mod.name, package) in {layer} | also:
            continue
        tree = ast.parse(mod.path.read_text(), filename=str(mod.path))
        where = _rel(mod.path, root)
        for node, _scope in _import_nodes(tree):
            name = _is_gitpython(node)
            if name:
                out.append(f"{where}:{node.lineno}: {mod.name} imports GitPython ({name})")
        out += [f"{where}:{line}: {mod.name} runs git ({what})"
                for line, what in _git_runs(tree, package)]
    return sorted(out)


# ------------------------------------------------------ the real package
def test_no_import_cycles():
    cycles = import_cycles(ROOT)
    if cycles:
        pytest.fail(f"{len(cycles)} import cycle(s) among napipatch's modules:\n\n"
                    + "\n\n".join(cycles), pytrace=False)


def test_imports_follow_the_layers():
    bad = layer_violations(ROOT, LAYERS)
    if bad:
        pytest.fail(f"{len(bad)} import(s) against the layer contract (LAYERS in "
                    "tests/test_layout.py):\n  " + "\n  ".join(bad), pytrace=False)


def test_only_the_git_layer_starts_git():
    bad = git_outside_layer(ROOT)
    if bad:
        pytest.fail(f"{len(bad)} place(s) starting git outside napipatch/{GIT_LAYER}/ (use "
                    "napipatch.tree.gitutil):\n  " + "\n  ".join(bad), pytrace=False)


def test_few_modules_directly_in_the_package():
    top = top_level_modules(ROOT)
    if len(top) > MAX_TOP_LEVEL_MODULES:
        pytest.fail(f"{len(top)} modules directly in napipatch/ (at most {MAX_TOP_LEVEL_MODULES}; "
                    f"move some into a sub-package): {', '.join(top)}", pytrace=False)


def test_every_subpackage_says_what_it_is():
    missing = subpackages_without_docstring(ROOT)
    if missing:
        pytest.fail("sub-packages whose __init__.py has no docstring:\n  " + "\n  ".join(missing),
                    pytrace=False)


def test_no_function_longer_than_the_limit():
    long = long_functions(ROOT)
    if long:
        pytest.fail(f"{len(long)} function(s) longer than {MAX_FUNCTION_LINES} lines:\n  "
                    + "\n  ".join(long), pytrace=False)


REPORT_MAKER = "napipatch.report.model"  # build(): the one place a Report is made
_REPORT_MUTATORS = {"append", "extend", "sort", "insert", "remove", "pop", "clear"}


def report_changes(root: Path, package: str = PACKAGE, maker: str = REPORT_MAKER) -> list[str]:
    """Where a module other than ``maker`` calls ``Report(...)`` or
    ``replace(report, ...)`` (a view of a report is the model's:
    ``Report.of_patch``), assigns to
    an attribute of something named ``report`` or changes its findings or
    checks in place (``report.findings.append``): a report is made once,
    from the run's results, and front-ends only render it."""
    out = []
    for mod in discover(package_dirs(root, package)).values():
        if mod.name == maker:
            continue
        tree = ast.parse(mod.path.read_text(), str(mod.path))
        for node in ast.walk(tree):
            bad = ""
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Report":
                bad = "makes a Report"
            elif isinstance(node, ast.Call) and (
                    (isinstance(node.func, ast.Name) and node.func.id == "replace")
                    or (isinstance(node.func, ast.Attribute) and node.func.attr == "replace"
                        and isinstance(node.func.value, ast.Name)
                        and node.func.value.id == "dataclasses")) \
                    and node.args and isinstance(node.args[0], ast.Name) \
                    and node.args[0].id == "report":
                bad = "makes a Report by replace()"
            elif isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                       and t.value.id == "report" for t in targets):
                    bad = "changes a report"
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in _REPORT_MUTATORS \
                    and isinstance(node.func.value, ast.Attribute) \
                    and node.func.value.attr in ("findings", "checks") \
                    and isinstance(node.func.value.value, ast.Name) and node.func.value.value.id == "report":
                bad = "changes a report's " + node.func.value.attr
            if bad:
                out.append((_rel(mod.path, root), node.lineno, bad))
    return [f"{path}:{line}: {bad}" for path, line, bad in sorted(out)]


def test_a_report_is_made_once_by_build():
    found = report_changes(ROOT)
    assert not found, f"only {REPORT_MAKER}.build makes a Report, nothing changes one:\n  " \
        + "\n  ".join(found)


def test_synthetic_report_changes_are_found(tmp_path):
    root = _write(tmp_path, {
        "napipatch/__init__.py": "",
        "napipatch/report/__init__.py": "",
        "napipatch/report/model.py": "def build():\n    return Report()\n",
        "napipatch/cli.py": "def f(report):\n    report.findings.sort()\n    report.tree = 1\n"
                            "    return Report()\n"
                            "def h(report):\n    return dataclasses.replace(report, findings=[])\n",
        "napipatch/ok.py": "def g(report):\n    return sorted(report.findings)\n"})
    assert report_changes(root) == ["napipatch/cli.py:2: changes a report's findings",
                                    "napipatch/cli.py:3: changes a report",
                                    "napipatch/cli.py:4: makes a Report",
                                    "napipatch/cli.py:6: makes a Report by replace()"]


def test_cli_modules_do_not_import_the_app():
    found = imports_of_the_app(ROOT)
    if found:
        pytest.fail("napipatch/cli modules importing napipatch.cli (the app) instead of "
                    "napipatch.cli.common:\n  " + "\n  ".join(found), pytrace=False)


def test_the_package_is_found():
    """Guards the checks above against passing on an empty walk."""
    mods = discover(package_dirs(ROOT))
    assert {"napipatch", "napipatch.cli", "napipatch.checks", "napipatch.checks.kdoc",
            "napipatch.engine.registry"} <= set(mods), sorted(mods)
    assert len(imports(mods)) > 50


# ------------------------------------------- the checks on synthetic packages
def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_synthetic_cycle_through_a_function_level_import_is_found(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg import b\n",
        "pkg/b.py": "import os\n\n\ndef later():\n    from pkg.a import thing\n    return thing\n",
    })
    [msg] = import_cycles(tmp_path, "pkg")
    assert msg.splitlines()[0] == "import cycle: pkg.a -> pkg.b -> pkg.a"
    assert "pkg.a imports pkg.b at pkg/a.py:1" in msg
    assert "pkg.b imports pkg.a at pkg/b.py:5 (in later)" in msg


def test_synthetic_relative_import_cycle_is_found(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/sub/__init__.py": "",
        "pkg/sub/a.py": "from . import b\n",
        "pkg/sub/b.py": "from ..c import x\n",
        "pkg/c.py": "class C:\n    def m(self):\n        from .sub.a import y\n",
    })
    [msg] = import_cycles(tmp_path, "pkg")
    assert msg.splitlines()[0] == "import cycle: pkg.c -> pkg.sub.a -> pkg.sub.b -> pkg.c"
    assert "pkg/c.py:3 (in C.m)" in msg


def test_synthetic_acyclic_package_passes(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "from pkg import a\n",
        "pkg/a.py": "from pkg import b\nfrom pkg.sub import leaf\n",
        "pkg/b.py": "import json\n\n\ndef f():\n    from pkg.sub.leaf import x\n",
        # the package's __init__ imports a module that imports a sibling of
        # it through the package: module pkg.sub.leaf, not pkg.sub
        "pkg/sub/__init__.py": "from pkg.sub import other\n",
        "pkg/sub/other.py": "from pkg.sub import leaf\n",
        "pkg/sub/leaf.py": "x = 1\n",
    })
    assert import_cycles(tmp_path, "pkg") == []


def test_synthetic_from_package_import_name_imports_the_package(tmp_path):
    """``from pkg.sub import name`` (not a module) is the package's __init__."""
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/sub/__init__.py": "from pkg.sub import leaf\nname = 1\n",
        "pkg/sub/leaf.py": "def f():\n    from pkg.sub import name\n",
    })
    [msg] = import_cycles(tmp_path, "pkg")
    assert msg.splitlines()[0] == "import cycle: pkg.sub -> pkg.sub.leaf -> pkg.sub"


def test_synthetic_mapped_directory_is_part_of_the_package(tmp_path):
    _write(tmp_path, {
        "pyproject.toml": '[tool.setuptools.package-dir]\n"pkg" = "pkg"\n'
                          '"pkg.plugins" = "plugins"\n',
        "pkg/__init__.py": "",
        "pkg/core.py": "from pkg.plugins import one\n",
        "plugins/__init__.py": "",
        "plugins/one.py": "from pkg import core\n",
    })
    [msg] = import_cycles(tmp_path, "pkg")
    assert "pkg.core -> pkg.plugins.one -> pkg.core" in msg


def test_synthetic_long_functions(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES - 1))
    _write(tmp_path, {
        "pkg/__init__.py": "",
        # exactly the limit: the def line + 79 lines
        "pkg/ok.py": f"@decorated\ndef fits():\n{body}",
        "pkg/long.py": f"class K:\n    def outer(self):\n        def inner():\n"
                       f"{body.replace('    ', '            ')}            return 1\n"
                       f"        return inner\n",
    })
    assert long_functions(tmp_path, "pkg") == [
        f"pkg/long.py:2 pkg.long.K.outer: {MAX_FUNCTION_LINES + 3} lines (> {MAX_FUNCTION_LINES})",
        f"pkg/long.py:3 pkg.long.K.outer.<locals>.inner: {MAX_FUNCTION_LINES + 1} lines "
        f"(> {MAX_FUNCTION_LINES})",
    ]


def test_synthetic_top_level_and_docstrings(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "",
        "pkg/good/__init__.py": '"""Says what it is."""\n',
        "pkg/bad/__init__.py": "import os\n",
        "pkg/bad/deeper/__init__.py": "# a comment is not a docstring\n",
    })
    assert top_level_modules(tmp_path, "pkg") == ["__init__.py", "a.py"]
    assert subpackages_without_docstring(tmp_path, "pkg") == [
        "pkg/bad/__init__.py", "pkg/bad/deeper/__init__.py"]


def test_synthetic_cli_module_importing_the_app(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/cli/__init__.py": "from pkg.cli import cmd\napp = object()\n",
        "pkg/cli/common.py": "",
        "pkg/cli/cmd.py": "from pkg.cli.common import helper\nfrom pkg.cli import common\n\n\n"
                          "def run():\n    from pkg.cli import app\n",
        "pkg/cli/other.py": "from . import app\n",
    })
    assert imports_of_the_app(tmp_path, "pkg") == [
        "pkg/cli/cmd.py:6 (in run): pkg.cli.cmd imports pkg.cli itself",
        "pkg/cli/other.py:1: pkg.cli.other imports pkg.cli itself",
    ]


@pytest.mark.parametrize("graph, cyclic", [
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}},
     [["a", "b", "c"], ["d", "e"]]),
])
def test_strongly_connected(graph, cyclic):
    assert sorted(s for s in strongly_connected(graph) if len(s) > 1) == cyclic


def test_every_declared_dependency_is_imported():
    """A declared dependency is one the code uses (celery, an extra, too)."""
    from importlib.metadata import packages_distributions

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = list(project["dependencies"]) + list(project["optional-dependencies"]["distributed"])
    dist_of = {}
    for top, dists in packages_distributions().items():
        for d in dists:
            dist_of.setdefault(d.lower().replace("_", "-"), set()).add(top)
    used = set()
    for path in list((ROOT / "napipatch").rglob("*.py")) + list((ROOT / "checks").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.Import):
                used.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                used.add(node.module.split(".")[0])
    unused = []
    for spec in declared:
        name = spec.split(";")[0].split("[")[0].split(">")[0].split("=")[0].split("<")[0].strip()
        tops = dist_of.get(name.lower().replace("_", "-"), set())
        assert tops, f"{name} is declared but not installed"
        if not tops & used:
            unused.append(name)
    assert not unused, f"declared but never imported: {unused}"


def test_synthetic_layer_violations_are_found(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low/__init__.py": "",
        "pkg/low/a.py": "def _helper():\n    pass\n",
        "pkg/high/__init__.py": "",
        "pkg/high/b.py": "from pkg.low.a import _helper\n",
        "pkg/low/c.py": "def f():\n    from pkg.high import b\n",   # upwards, in a function
        "pkg/extra.py": "",
    })
    layers = {"low": set(), "high": {"low"}}
    got = layer_violations(tmp_path, layers, "pkg")
    assert got == [
        "extra: a unit the layer contract does not list (add it to LAYERS)",
        "pkg/low/c.py:2 (in f): pkg.low.c imports pkg.high.b: low may not import high",
        "pkg/high/b.py:1: pkg.high.b imports the private _helper from pkg.low.a",
    ]
    _write(tmp_path, {"pkg/low/c.py": "", "pkg/high/b.py": "from pkg.low.a import helper\n",
                      "pkg/low/a.py": "def helper():\n    pass\n"})
    assert layer_violations(tmp_path, dict(layers, extra=set()), "pkg") == []


def test_synthetic_git_started_outside_the_layer_is_found(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        # the layer, and config reading git config: allowed
        "pkg/tree/__init__.py": "",
        "pkg/tree/gitlayer.py": "import subprocess\n\nimport git\n\n"
                                "subprocess.run(['git', 'status'])\n",
        "pkg/config.py": "import git\n",
        "pkg/front/__init__.py": "",
        "pkg/front/a.py": "import git.exc\n",
        "pkg/front/b.py": "def f():\n    from git import Repo\n",
        "pkg/front/c.py": "import subprocess as sp\n\n\ndef send(extra):\n"
                          "    cmd = ['git', 'send-email']\n    cmd += extra\n"
                          "    return sp.run(cmd + ['x'], cwd='/')\n",
        "pkg/front/d.py": "import os\nfrom subprocess import Popen as P\n\n"
                          "P(args=('git', 'cat-file', '--batch'))\nos.system(f'git log {1}')\n",
        "pkg/front/e.py": "from pkg import procs\nfrom pkg.procs import start\n\n"
                          "procs.run(['git', 'fetch'], timeout=60)\nstart(['git', 'gc'], timeout=None)\n"
                          "procs.run(['make'], timeout=None)\n",
        # not git, or git through the layer: fine
        "pkg/front/git.py": "",
        "pkg/front/ok.py": "import subprocess\n\nfrom pkg.tree import gitlayer\n"
                           "from . import git\n\nVCS = ('git', 'hg')\n"
                           "subprocess.run(['perl', 'git'])\nsubprocess.run(['gitk'])\n",
    })
    assert git_outside_layer(tmp_path, "pkg", "tree", {"config"}) == [
        "pkg/front/a.py:1: pkg.front.a imports GitPython (git.exc)",
        "pkg/front/b.py:2: pkg.front.b imports GitPython (git)",
        "pkg/front/c.py:7: pkg.front.c runs git (subprocess.run)",
        "pkg/front/d.py:4: pkg.front.d runs git (subprocess.Popen)",
        "pkg/front/d.py:5: pkg.front.d runs git (os.system)",
        "pkg/front/e.py:4: pkg.front.e runs git (procs.run)",
        "pkg/front/e.py:5: pkg.front.e runs git (procs.start)",
    ]
    # Without the exceptions, the layer's own use shows up too.
    assert "pkg/tree/gitlayer.py:5: pkg.tree.gitlayer runs git (subprocess.run)" in \
        git_outside_layer(tmp_path, "pkg", "nothing", set())


@pytest.mark.parametrize("plant, unit, other", [
    ("napipatch/engine/statics.py", "engine", "pipeline"),   # the engine may not reach up
    ("napipatch/jobs/executor.py", "jobs", "pipeline"),  # nor may the jobs
    ("napipatch/pipeline/run.py", "pipeline", "cli"),    # the pipeline is below every front-end
])
def test_a_planted_violation_of_the_real_layers_is_found(tmp_path, plant, unit, other):
    """The real package with one import against LAYERS added: the contract
    names it, the pipeline layer included."""
    import shutil
    for name, d in package_dirs(ROOT).items():
        dest = tmp_path / d.relative_to(ROOT)
        shutil.copytree(d, dest, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    assert layer_violations(tmp_path, LAYERS) == []
    target = {"pipeline": "napipatch.pipeline.run", "cli": "napipatch.cli.common"}[other]
    with open(tmp_path / plant, "a") as f:
        f.write(f"\n\ndef _planted():\n    import {target}  # noqa\n")
    got = layer_violations(tmp_path, LAYERS)
    assert len(got) == 1 and got[0].endswith(f"{unit} may not import {other}"), got


# ------------------------------------------------------------ processes
# The only modules that start a process, fork or set an alarm without
# napipatch.procs, each with why; every other tool, git included, starts
# in procs (a deadline, its children killed with it, one-line errors).
OWN_PROCESSES = {
    "napipatch/procs.py": ({"subprocess"}, "the one way to run a tool"),
    "napipatch/engine/forked.py": ({"os.fork"}, "the engine's units: forked Python, "
                                                "killed as a group"),
    "napipatch/engine/zygote.py": ({"os.fork", "signal.setitimer"},
                                   "a warm zygote forks the units; its child's own deadline"),
    "napipatch/jobs/boot/netsnap.py": ({"subprocess"}, "runs inside the guest: standard "
                                                       "library only"),
    "napipatch/bench/workload.py": ({"subprocess"}, "a server beside the experiment, read "
                                                    "line by line while it runs"),
    "checks/_lint.py": ({"signal.setitimer"}, "yamllint runs in-process: no process to kill"),
}


def process_starts(root: Path) -> dict[str, set[str]]:
    """Each module of napipatch/ and checks/ that imports subprocess or
    calls os.fork, signal.alarm or signal.setitimer: what it uses."""
    out: dict[str, set[str]] = {}
    for path in sorted([*(root / "napipatch").rglob("*.py"), *(root / "checks").rglob("*.py")]):
        used = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                used |= {"subprocess" for a in node.names if a.name == "subprocess"}
            elif isinstance(node, ast.ImportFrom) and node.module == "subprocess":
                used.add("subprocess")
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                    f"{node.value.id}.{node.attr}" in ("os.fork", "signal.alarm",
                                                       "signal.setitimer"):
                used.add(f"{node.value.id}.{node.attr}")
        if used:
            out[str(path.relative_to(root))] = used
    return out


def test_only_procs_starts_processes():
    """One way to start a process: procs, git included (tree/gitutil.py runs
    git through it); the exceptions are named above with why."""
    assert process_starts(ROOT) == {m: uses for m, (uses, _why) in OWN_PROCESSES.items()}
