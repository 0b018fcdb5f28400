"""Grepping a commit of the series: the base once, then the files the series changed.

``git grep PATTERN <commit>`` inflates every blob of the tree: 5-7 s per
call on Linux 6.12 here, and the ``ynl`` and ``callsites`` checks need it
for several post-patch commits. Those commits differ from their base in a
handful of files. So the base is grepped once per pattern -- in the user's
checkout when it is clean (under a second: the files are on disk), else
over the object database -- the result is kept on disk by base commit and
pattern, and only the files that differ between the base and the commit
asked for are matched again, in Python, read through ``cat-file``. Two
processes sharing the cache and asking for one pattern do not both grep:
one does, under a lock file, and the other reads its result.

Patterns are either extended regexes written in the common subset of POSIX
ERE and Python ``re`` (``^/\\* YNL-GEN (kernel|uapi|user)``), or a set of
identifiers matched as words (``git grep -w -F``).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from napipatch import fileio
from napipatch.tree import gitutil

# Past this many files between the checkout and the base, grepping the
# objects of the base is cheaper than re-matching every changed file.
MAX_CHECKOUT_DRIFT = 2000

# One ``git grep -w -F`` over the objects with hundreds of words runs for
# minutes (a header replaced by a symlink "removes" every prototype in it);
# a caller asks for at most this many words at once.
MAX_WORDS = 64

# Processes sharing a cache grep the base once: the others wait on a lock
# file for the result, at most this long (then they grep it themselves).
GREP_WAIT = 300.0


class TooManyWords(ValueError):
    """More words than MAX_WORDS in one pattern."""

Matches = dict[str, list[int]]   # path -> line numbers (1-based)


@dataclass(frozen=True)
class Pattern:
    regex: str | None = None          # ERE, also valid as a Python regex
    words: tuple[str, ...] = ()       # identifiers, matched as whole words
    paths: tuple[str, ...] = ()       # git pathspec globs ("*.c"); empty: every file
    fixed: str | None = None          # a literal every regex match contains

    def git_args(self) -> list[str]:
        args = ["grep", "-n", "-I", "--null", "--no-color"]
        if self.regex is not None and self.fixed:
            # git grep -F is twice as fast as -E over a kernel tree; the
            # regex then runs in Python on the few lines that have the literal.
            args += ["-F", "-e", self.fixed]
        elif self.regex is not None:
            args += ["-E", "-e", self.regex]
        else:
            args += ["-w", "-F"]
            for w in self.words:
                args += ["-e", w]
        return args

    def compiled(self) -> re.Pattern:
        if self.regex is not None:
            return re.compile(self.regex)
        alt = "|".join(re.escape(w) for w in sorted(self.words, key=len, reverse=True))
        # git grep -w: word characters are [A-Za-z0-9_].
        return re.compile(rf"(?<![A-Za-z0-9_])(?:{alt})(?![A-Za-z0-9_])")

    def wants(self, path: str) -> bool:
        # A pathspec glob's '*' also matches '/', as fnmatch's does.
        return not self.paths or any(fnmatch.fnmatchcase(path, g) for g in self.paths)

    def key(self) -> str:
        h = hashlib.sha256(json.dumps([self.regex, sorted(self.words), list(self.paths)])
                           .encode())
        return h.hexdigest()[:24]


def words(names, paths=("*.c", "*.h")) -> Pattern:
    """A pattern of at most MAX_WORDS identifiers (TooManyWords past it)."""
    ws = tuple(sorted(set(names)))
    if len(ws) > MAX_WORDS:
        raise TooManyWords(f"{len(ws)} words to grep; at most {MAX_WORDS}")
    return Pattern(words=ws, paths=tuple(paths))


def regex(expr: str, paths=(), fixed: str | None = None) -> Pattern:
    if fixed is not None and not fixed:
        raise ValueError("empty literal")
    return Pattern(regex=expr, paths=tuple(paths), fixed=fixed)


def parse_output(text: str, prefix: str = "", keep: re.Pattern | None = None) -> Matches:
    """``git grep -n --null`` output; with ``keep``, only lines it matches."""
    out: Matches = {}
    for line in text.split("\n"):
        parts = line.split("\0", 2)
        if len(parts) < 3 or not parts[1].isdigit():
            continue
        if keep is not None and not keep.search(parts[2]):
            continue
        out.setdefault(parts[0].removeprefix(prefix), []).append(int(parts[1]))
    return out


def match_text(pat: re.Pattern, text: str) -> list[int]:
    if "\0" in text:      # -I: binary files never match
        return []
    return [i for i, ln in enumerate(text.split("\n"), 1) if pat.search(ln)]


class TreeGrep:
    """Greps commits of one repository that all descend from (or near) ``base``."""

    def __init__(self, repo: Path, base: str, reader: gitutil.ObjectReader,
                 cache: Path | None):
        self.repo, self.base, self.reader = repo, base, reader
        self.cache = cache / "grep" if cache else None
        self._memo: dict[str, Matches] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self.how: dict[str, str] = {}     # pattern key -> how the base was grepped

    # -- the base
    def _base(self, pat: Pattern) -> Matches:
        k = pat.key()
        with self._guard:
            lock = self._locks.setdefault(k, threading.Lock())
        with lock:    # two checks asking for one pattern grep it once
            if k in self._memo:
                return self._memo[k]
            got = self._load(k)
            if got is None:
                got = self._grep_once(pat, k)
            else:
                self.how[k] = "cache"
            self._memo[k] = got
            return got

    def _grep_once(self, pat: Pattern, k: str) -> Matches:
        """Grep the base, or wait for the process grepping it and read its result."""
        f = self._cache_file(k)
        if f is None:
            return self._grep_base(pat, k)
        f.parent.mkdir(parents=True, exist_ok=True)
        try:
            with fileio.locked(f.with_name(f".{f.name}.lock"), timeout=GREP_WAIT):
                got = self._load(k)   # grepped by another process while we waited
                if got is not None:
                    self.how[k] = "cache"
                else:
                    got = self._grep_base(pat, k)
                    self._store(k, got)
                return got
        except fileio.LockTimeout:
            pass   # the holder is stuck: grep without it (a grep only reads)
        got = self._grep_base(pat, k)
        self._store(k, got)
        return got

    def _cache_file(self, k: str) -> Path | None:
        return self.cache / self.base[:2] / f"{self.base}-{k}.json" if self.cache else None

    def _load(self, k: str) -> Matches | None:
        f = self._cache_file(k)
        try:
            data = json.loads(f.read_text()) if f else None
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def _store(self, k: str, m: Matches) -> None:
        f = self._cache_file(k)
        if f is None:
            return
        f.parent.mkdir(parents=True, exist_ok=True)
        fileio.atomic_write(f, json.dumps(m))

    def _grep_base(self, pat: Pattern, k: str) -> Matches:
        head = self._clean_checkout()
        if head is not None:
            drift = self._changed(head, self.base)
            if len(drift) <= MAX_CHECKOUT_DRIFT:
                cp = gitutil.git(self.repo, *pat.git_args(), "--", *pat.paths, check=False)
                self.how[k] = "checkout" + (f" +{len(drift)} files" if drift else "")
                return self._overlay(parse_output(cp.stdout, keep=self._keep(pat)), pat,
                                     drift, self.base)
        cp = gitutil.git(self.repo, *pat.git_args(), self.base, "--", *pat.paths, check=False)
        self.how[k] = "objects"
        return parse_output(cp.stdout, f"{self.base}:", keep=self._keep(pat))

    @staticmethod
    def _keep(pat: Pattern) -> re.Pattern | None:
        return pat.compiled() if pat.fixed else None

    def _clean_checkout(self) -> str | None:
        """HEAD, when the checkout and the index both match it exactly."""
        if gitutil.git(self.repo, "rev-parse", "--is-bare-repository",
                       check=False).stdout.strip() != "false":
            return None
        # A sparse checkout leaves files out of the worktree, and git grep
        # there would miss them.
        if gitutil.git(self.repo, "config", "--bool", "core.sparseCheckout",
                       check=False).stdout.strip() == "true":
            return None
        head = gitutil.resolve(self.repo, "HEAD")
        if head is None:
            return None
        for extra in ((), ("--cached",)):
            if gitutil.git(self.repo, "diff-index", "--quiet", *extra, "HEAD", "--",
                           check=False).returncode != 0:
                return None
        return head

    # -- any commit
    def _changed(self, a: str, b: str) -> list[str]:
        cp = gitutil.git(self.repo, "diff", "--name-only", "-z", "--no-renames", a, b,
                         check=False)
        return [p for p in cp.stdout.split("\0") if p]

    def _overlay(self, base: Matches, pat: Pattern, changed: list[str], rev: str) -> Matches:
        out = {p: list(ls) for p, ls in base.items()}
        rx = pat.compiled()
        for path in changed:
            out.pop(path, None)
            if not pat.wants(path):
                continue
            text = self.reader.text(rev, path)
            lines = match_text(rx, text) if text is not None else []
            if lines:
                out[path] = lines
        return out

    def grep(self, rev: str, pat: Pattern) -> Matches:
        """Lines of the files at ``rev`` matching ``pat``, as ``git grep -n rev`` gives."""
        base = self._base(pat)
        if rev == self.base:
            return {p: list(ls) for p, ls in base.items()}
        return self._overlay(base, pat, self._changed(self.base, rev), rev)
