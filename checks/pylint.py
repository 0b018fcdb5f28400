"""pylint on the Python files a patch adds or changes, new findings only.

What it catches:
    Each ``.py`` file the patch adds or modifies, linted by pylint before
    and after the patch as the netdev CI runs it (pylint's defaults, no
    options). A message after the patch that was not there before (same
    file, message id and text, line numbers in the text ignored) is
    reported at its file and line: a new ``E``/``F`` (error, fatal) is an
    error, a new ``W`` (warning) or ``C`` (convention) a warning. ``R``
    (refactor) and ``I`` messages are off: the CI counts neither.

    pylint 4.1.4 (pinned: its messages change between releases; the CI
    does not publish its version) runs on copies in a scratch directory
    with napipatch's own empty rcfile, so no ``pylintrc``, ``.pylintrc``
    or ``pyproject.toml`` of the patched tree is read and no ``init-hook``
    from it runs (the kernel's top-level ``.pylintrc``, in trees after
    6.12, only adds scripts/lib to ``sys.path``). The ``.py`` files under
    the file's directory are copied beside it from the same commit, so
    ``from lib.py import ...`` in a selftest resolves as in the tree. Each
    run is a child of a pylint process the engine started (and warmed up)
    when the check run began, which saves pylint's 0.8 s start-up per file
    and says the same as the executable; without it, the executable runs.
    Where napipatch differs from the CI: the CI compares counts (a fixed message
    can hide a new one), napipatch the messages. Without ``--tree`` only
    new files are linted, from the diff, with ``import-error`` and
    ``no-name-in-module`` off (the modules beside the file are not there).

Why a reviewer cares:
    The netdev CI (NIPA's ``pylint`` test) posts ``fail`` when the count of
    ``E`` messages over the patch's Python files grows and ``warning``
    when the count of ``W`` and ``C`` messages grows. Python selftests and
    YNL tools are read and run by everyone.

Example:
    ``tools/testing/selftests/net/nl_netdev.py:97: W0612: Unused variable
    'nsim' (unused-variable)``

Fix:
    What pylint says; for a deliberate case a ``# pylint:
    disable=<symbol>`` comment on the line.
"""

from __future__ import annotations

import json
import os
import posixpath
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from napipatch.checks import check
from napipatch.checks._lint import (
    MAX_BYTES,
    TIMEOUT,
    Lint,
    changed,
    lint_env,
    new_lints,
    run_all,
    tool,
    write,
)

from napipatch.errors import NapipatchError
from napipatch.tree import gitutil

# At most this many modules are copied beside a file (a selftest directory
# holds a few dozen; a file at the top of scripts/ would pull hundreds).
MAX_MODULES = 200
ARGS = ["--persistent=n", "--disable=R,I", "--output-format=json", "--score=n"]
_OFF_WITHOUT_TREE = {"E0401", "E0611"}


def _modules(ctx, rev: str, root: Path, path: str) -> None:
    """The .py files under ``path``'s directory at ``rev``, into ``root``."""
    d = posixpath.dirname(path)
    listing = gitutil.out(ctx.tree.repo, "ls-tree", "-r", "--name-only", rev, "--",
                          f"{d}/" if d else ".", check=False)
    mods = [p for p in listing.splitlines() if p.endswith(".py") and p != path]
    for p in mods[:MAX_MODULES]:
        text = ctx.tree.text(rev, p)
        if text is not None and len(text) <= MAX_BYTES:
            write(root, p, text)


PRE = "__napipatch_pre"
_WARM = "__napipatch_warm__.py"


def warm(work: Path) -> None:
    """The zygote's start: what every pylint run pays before it reads a
    file (its imports, astroid's ``builtins``, isort), done once by
    linting a file of one import with napipatch's own arguments."""
    env = lint_env(work)   # as run_all gives the executable
    os.environ.clear()
    os.environ.update(env)
    # sys.path as the executable starts with: its own directory first, not
    # the directory napipatch was started in.
    here = {"", os.getcwd()}
    sys.path[:] = [str(Path(tool("pylint")).parent)] + [p for p in sys.path if p not in here]
    # and its standard streams: astroid models ``sys`` from the live module,
    # and the engine's may be a test's capture or Celery's logging proxy.
    sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="replace", closefd=False)
    (work / "pylintrc").write_text("# napipatch: pylint's defaults\n")
    (work / _WARM).write_text('"""Warm."""\nimport os\n\nprint(os.sep)\n')
    serve((str(work), ["--rcfile=pylintrc", *ARGS, _WARM]))


def serve(request: tuple[str, list[str]]) -> tuple[int, str]:
    """In a child of the zygote: pylint run as ``pylint ARGS`` in the
    directory given; (exit status, stdout)."""
    from pylint.lint import Run

    cwd, args = request
    os.chdir(cwd)
    # Redirected by file descriptor: sys.stdout stays the object it is in
    # the executable, as astroid models ``sys`` from the live module
    # (replacing it with a StringIO adds "StringIO has no 'buffer'" findings).
    with tempfile.TemporaryFile() as out, open(os.devnull, "wb") as null:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(out.fileno(), 1)
        os.dup2(null.fileno(), 2)
        try:
            status = Run(list(args), exit=False).linter.msg_status
        except SystemExit as exc:   # a usage error exits, as on the command line
            status = exc.code if isinstance(exc.code, int) else 32
        sys.stdout.flush()
        out.seek(0)
        return status, out.read().decode("utf-8", "replace")


def _pylint(ctx, runs: list[list[str]], root: Path) -> list[str]:
    """pylint's stdout for each argument list, run in ``root``: by the
    engine's warm zygote, else (none, or pylint raised in it) by the
    pylint executable, which says what went wrong as it would anyway."""
    outs = []
    for args in runs:
        try:
            got = ctx.ask((str(root), args), TIMEOUT)
        except TimeoutError:
            raise NapipatchError("pylint", f"still running after {TIMEOUT} s; stopped") from None
        except RuntimeError:
            got = None
        if got is None:
            return run_all("pylint", runs, root, ok=range(32))
        status, out = got
        if status not in range(32):
            raise NapipatchError("pylint", f"exit status {status}")
        outs.append(out)
    return outs


def parse(output: str, prefix: str) -> list[Lint]:
    """pylint's JSON -> Lints of the files under ``prefix``/."""
    try:
        items = json.loads(output or "[]")
    except ValueError:
        raise NapipatchError("pylint", "output is not JSON") from None
    return [Lint(m["path"][len(prefix) + 1:], m.get("line") or 1, m["message-id"],
                 f"{m['message']} ({m['symbol']})", m["type"])
            for m in items if m.get("path", "").startswith(prefix + "/")]


def _one_run(ctx, f, root: Path, full: bool) -> tuple[list[Lint], list[Lint]]:
    """One changed file: its copy before the patch is linted beside the one
    after, under another module name, in one pylint process (pylint's
    start-up is most of its time; the modules beside them are the same on
    both sides, as the patch changes no other Python file)."""
    if full:
        _modules(ctx, ctx.post, root / "post", f.path)
    write(root / "post", f.path, f.post)
    names = [f"post/{f.path}"]
    copy = f.path[:-3] + PRE + ".py"
    if f.pre is not None:
        write(root / "post", copy, f.pre)
        names.append(f"post/{copy}")
    out = _pylint(ctx, [["--rcfile=pylintrc", *ARGS, *names]], root)[0]
    both = parse(out, "post")
    stem = posixpath.basename(f.path)[:-3]
    before = [replace(x, file=f.path, message=x.message.replace(stem + PRE, stem))
              for x in both if x.file == copy]
    return before, [x for x in both if x.file != copy]


def _lint(ctx, files, full: bool) -> tuple[list[Lint], list[Lint]]:
    with tempfile.TemporaryDirectory(prefix="napipatch-pylint-") as td:
        root = Path(td)
        (root / "pylintrc").write_text("# napipatch: pylint's defaults\n")
        if len(files) == 1:
            return _one_run(ctx, files[0], root, full)
        runs = {"pre": [], "post": []}
        for f in files:
            for side, text, rev in (("pre", f.pre, ctx.pre), ("post", f.post, ctx.post)):
                if text is None:
                    continue
                if full:
                    _modules(ctx, rev, root / side, f.old_path if side == "pre" else f.path)
                write(root / side, f.path, text)
                runs[side].append(f"{side}/{f.path}")
        todo = [s for s in ("pre", "post") if runs[s]]
        # One process per side: two copies of a module in one pylint run
        # would share astroid's cache by module name.
        outs = _pylint(ctx, [["--rcfile=pylintrc", *ARGS, *runs[s]] for s in todo], root)
    got = dict(zip(todo, outs))
    return parse(got.get("pre", ""), "pre"), parse(got.get("post", ""), "post")


@check(id="pylint",
       summary="pylint on changed .py files: new E (error), W and C (warning) messages",
       scope="patch",
       needs="diff",
       version=1,
       files=("*.py",),
       zygote=True,
       nipa=("pylint",),
       nipa_needs_tree=True)  # without it, import errors are not judged
def run(ctx):
    files, notes = changed(ctx, (".py",), "pylint")
    yield from notes
    if not files:
        return
    full = ctx.tree is not None and ctx.applied
    before, after = _lint(ctx, files, full)
    for x in new_lints(before, after, {f.path: f.added for f in files}):
        if x.code[0] not in "EFWC" or (not full and x.code in _OFF_WITHOUT_TREE):
            continue
        yield ctx.finding("error" if x.code[0] in "EF" else "warning",
                          f"{x.code}: {x.message}", file=x.file, line=x.line)
