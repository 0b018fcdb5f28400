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
    ``from lib.py import ...`` in a selftest resolves as in the tree. Where
    napipatch differs from the CI: the CI compares counts (a fixed message
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
import posixpath
import tempfile
from dataclasses import replace
from pathlib import Path

from napipatch.checks import check
from napipatch.checks._lint import MAX_BYTES, Lint, changed, new_lints, run_all, write
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
    out = run_all("pylint", [["--rcfile=pylintrc", *ARGS, *names]], root, ok=range(32))[0]
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
        outs = run_all("pylint", [["--rcfile=pylintrc", *ARGS, *runs[s]] for s in todo],
                       root, ok=range(32))
    got = dict(zip(todo, outs))
    return parse(got.get("pre", ""), "pre"), parse(got.get("post", ""), "post")


@check(id="pylint",
       summary="pylint on changed .py files: new E (error), W and C (warning) messages",
       scope="patch",
       needs="diff",
       version=1,
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
