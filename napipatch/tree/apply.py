"""Applying a series onto its base in a real kernel tree.

Two ways, one result type (applied.py), one patch-by-patch walk:
- ``apply_in_index``: a temporary index, ``git apply --cached`` and ``git
  commit-tree`` per patch. No checkout at all (a full 6.12 checkout costs
  ~24 s), the user's branch, index and files are never touched, and the
  commits it makes are reproducible (fixed dates), so the checks can read
  pre/post files by commit and cache by them (the apply cache below). The
  index holds only the paths the series touches (the sparse index below,
  built by the tree builder below); a failure, or
  a change that index cannot express, is settled by an index of the whole
  base, whose error messages are the reference.
- ``apply_in_worktree``: ``git worktree add`` at the base and ``git am``
  per patch, for ``series apply`` where the user wants files on disk;
  only once the series applied in an index, so a failure costs no checkout.

Which base (``choose_base``, below) and why a patch failed (``failure``,
applied.py) are the same for both.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from napipatch import fileio, procs
from napipatch.errors import GitError, NapipatchError
from napipatch.mails.series import Series
from napipatch.tree import gitutil
from napipatch.tree.applied import Applied, ApplyFailure, failure

__all__ = ["apply_in_index", "apply_in_worktree"]

# One patch: its commit, or why it failed.
Step = Callable[[int], "str | ApplyFailure"]


def _walk(res: Applied, count: int, step: Step) -> None:
    """``step`` each patch in order until one fails; every patch gets its
    entry in ``res.commits``, None from the failed one on."""
    for i in range(1, count + 1):
        got = step(i) if res.failure is None else None
        if isinstance(got, ApplyFailure):
            res.failure, got = got, None
        res.commits.append(got)


class _Mail:
    """One patch mail split by ``git mailinfo``: the author, date and
    message for commit-tree, and the diff as a file for git apply."""

    def __init__(self, repo: Path, text: str, td: Path, n: int):
        msgf, self.patchf = td / f"msg{n}", td / f"patch{n}"
        cp = gitutil.git(repo, "mailinfo", "--encoding=UTF-8", str(msgf), str(self.patchf),
                         input=text)
        self.info = {}
        for line in cp.stdout.splitlines():
            k, _, v = line.partition(": ")
            self.info[k] = v
        self.message = self.info.get("Subject", "") + "\n\n" + msgf.read_text(errors="replace")

    @property
    def empty(self) -> bool:
        return not self.patchf.read_text(errors="replace").strip()

    def commit(self, repo: Path, tree: str, parent: str) -> str:
        return gitutil.commit_tree(repo, tree, parent, self.message,
                                   self.info.get("Author", "unknown"),
                                   self.info.get("Email", "unknown@invalid"),
                                   self.info.get("Date") or "1970-01-01T00:00:00Z")


class _FullIndex:
    """A temporary index of the whole base tree."""

    def __init__(self, repo: Path, base: str, index_file: Path):
        # Index v4 (prefix-compressed paths) is a third smaller for a kernel
        # tree, and every apply and write-tree reads and writes all of it.
        self.index = gitutil.TempIndex(repo, index_file, GIT_INDEX_VERSION="4")
        self.index.git("read-tree", base)

    def apply(self, patchf: Path) -> procs.CompletedProcess:
        return self.index.apply(patchf)

    def tree(self) -> str:
        return self.index.git("write-tree").stdout.strip()

    def close(self) -> None:
        pass


def _in_index(repo: Path, series: Series, res: Applied, mails: list[_Mail], index) -> None:
    """Apply every patch to ``index`` and commit each tree on the last."""
    parent = [res.base]

    def step(i: int) -> str | ApplyFailure:
        mail = mails[i - 1]
        if mail.empty:
            return ApplyFailure(i, None, None, None, "has no diff")
        cp = index.apply(mail.patchf)
        if cp.returncode != 0:
            return failure(i, series.patches[i - 1].diff, cp.stderr)
        parent[0] = mail.commit(repo, index.tree(), parent[0])
        return parent[0]

    try:
        _walk(res, len(series.patches), step)
    finally:
        index.close()


def _apply(repo: Path, series: Series, res: Applied) -> None:
    with tempfile.TemporaryDirectory(prefix="napipatch-idx-") as tdname:
        td = Path(tdname)
        mails = [_Mail(repo, p.as_format_patch(), td, i) for i, p in enumerate(series.patches, 1)]
        try:
            paths = sorted(set().union(*(touched(repo, m.patchf) for m in mails)))
            _in_index(repo, series, res, mails, SparseIndex(repo, res.base, paths,
                                                            td / "sparse-index"))
            if res.failure is None:
                return
        except (TreeBuildError, GitError, ValueError, IndexError):
            pass
        # A failure, or something the sparse index cannot express: the full
        # index has the last word, and its error messages are the reference.
        res.commits, res.failure = [], None
        _in_index(repo, series, res, mails, _FullIndex(repo, res.base, td / "index"))


def apply_in_index(repo: Path, series: Series, base: str | None = None,
                   cache: Path | None = None) -> Applied:
    """Apply with a temporary index; with ``cache``, reuse an earlier run's commits."""
    repo = gitutil.require_repo(repo)
    sha, why = choose_base(repo, series, base)
    res = Applied(repo=repo, base=sha, base_why=why)
    f = entry(cache, sha, series) if cache else None
    if f is not None and (hit := load(f, res, len(series.patches))) is not None:
        return hit
    _apply(repo, series, res)
    if f is not None:
        save(f, res)
    return res


def apply_in_worktree(repo: Path, series: Series, path: Path, base: str | None = None) -> Applied:
    """``git worktree add`` at the base, then ``git am`` each patch.

    A series that does not apply fails in a temporary index first (a
    second, not a 24 s checkout made to be removed) and no worktree is
    made; one that fails only under ``git am`` has its worktree removed
    again: nothing is left half-applied, and the user's own checkout is
    never involved.
    """
    repo = gitutil.require_repo(repo)
    sha, why = choose_base(repo, series, base)
    path = Path(path).resolve()
    if path.exists() and any(path.iterdir()):
        raise NapipatchError(path, "already exists and is not empty")
    trial = Applied(repo=repo, base=sha, base_why=why)
    _apply(repo, series, trial)
    if trial.failure:
        return trial
    gitutil.git(repo, "worktree", "add", "--detach", str(path), sha)
    res = Applied(repo=repo, base=sha, base_why=why)

    def step(i: int) -> str | ApplyFailure:
        p = series.patches[i - 1]
        cp = gitutil.git(path, "am", "--keep-cr", "--whitespace=nowarn",
                         input=p.as_format_patch(), env=dict(gitutil.NAPIPATCH_IDENT),
                         check=False)
        if cp.returncode != 0:
            gitutil.git(path, "am", "--abort", check=False)
            return failure(i, p.diff, cp.stderr + cp.stdout)
        return gitutil.out(path, "rev-parse", "HEAD")

    try:
        _walk(res, len(series.patches), step)
    finally:
        if res.failure:
            gitutil.git(repo, "worktree", "remove", "--force", str(path), check=False)
            shutil.rmtree(path, ignore_errors=True)
            gitutil.git(repo, "worktree", "prune", check=False)
    return res


# ----------------------------------------------------------------------
# Remembering an apply: the commits a series made on a base, reused
# while every one of them is still in the repository.
#
# The commits are a function of the base and the patch texts (fixed dates
# and identity, apply.py), so a re-check of an unchanged series skips
# applying. An entry is a file ``applied/KEY.json`` in the cache directory.


def entry(cache: Path, sha: str, series: Series) -> Path:
    """The cache file for ``series`` applied on ``sha``."""
    h = hashlib.sha256(f"apply-v2\0{sha}\0".encode())
    for p in series.patches:
        h.update(p.as_format_patch().encode(errors="replace") + b"\0")
    return cache / "applied" / f"{h.hexdigest()}.json"


def _all_commits(repo: Path, shas: list[str]) -> bool:
    cp = gitutil.git(repo, "cat-file", "--batch-check", input="\n".join(shas) + "\n",
                     check=False)
    return cp.returncode == 0 and \
        [ln.split()[1:2] for ln in cp.stdout.splitlines()] == [["commit"]] * len(shas)


def load(f: Path, res: Applied, patches: int) -> Applied | None:
    """``res`` with the recorded commits, if the entry is whole (one commit
    or None per patch) and every commit is still in the repository."""
    try:
        data = json.loads(f.read_text())
        commits = data["commits"]
        failure = ApplyFailure(**data["failure"]) if data["failure"] else None
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if not isinstance(commits, list) or len(commits) != patches \
            or not all(c is None or isinstance(c, str) for c in commits):
        return None
    have = [c for c in commits if c]
    if have and not _all_commits(res.repo, have):
        return None    # garbage-collected: apply again
    res.commits, res.failure = list(commits), failure
    return res


def save(f: Path, res: Applied) -> None:
    f.parent.mkdir(parents=True, exist_ok=True)
    fileio.atomic_write(f, json.dumps({"commits": res.commits,
                                       "failure": asdict(res.failure) if res.failure else None}))


# ----------------------------------------------------------------------
# Applying in an index of only the paths a series touches.
#
# ``git apply --cached`` and ``git write-tree`` on an index of the whole
# kernel tree each read and rewrite all 87,000 entries (~90 ms each per
# patch). A series touches a few dozen paths, so this index holds only
# those, and the full tree of each commit is the base's with them replaced
# (the tree builder below): 0.25 s for v5 instead of 1.3 s. What it cannot
# express (a file where the base has a directory) raises, and apply_in_index
# settles it
# with an index of the whole base.


_FROM = re.compile(r"^(?:rename|copy) from (.+)$", re.M)
_CHUNK = 500    # paths per ls-tree: under the command-line limit


def _unquote(path: str) -> str:
    """A path as git writes it in a patch, C-quoted when it has odd bytes."""
    if not (path.startswith('"') and path.endswith('"')):
        return path
    raw = path[1:-1].encode("latin-1", errors="surrogateescape")
    return raw.decode("unicode_escape").encode("latin-1").decode("utf-8", errors="replace")


def touched(repo: Path, patchf: Path) -> set[str]:
    """Every path a patch names (both sides of a rename or copy)."""
    cp = gitutil.git(repo, "apply", "--numstat", "-z", str(patchf), check=False)
    out: set[str] = set()
    toks = cp.stdout.split("\0")
    i = 0
    while i < len(toks):
        t = toks[i]
        if not t:
            i += 1
            continue
        path = t.split("\t", 2)[2]
        if path:
            out.add(path)
            i += 1
        else:                       # rename/copy: old and new follow
            out.update(x for x in toks[i + 1:i + 3] if x)
            i += 3
    # git 2.39's numstat gives only the new name of a rename; the old one:
    for m in _FROM.finditer(patchf.read_text(errors="surrogateescape")):
        out.add(_unquote(m.group(1)))
    return out


def _records(listing: str, fields: str) -> dict[str, Entry]:
    """path -> (mode, object) of ``ls-tree -z`` (fields "mts") or
    ``ls-files -s -z`` (fields "mos") output."""
    out: dict[str, Entry] = {}
    for rec in listing.split("\0"):
        if rec:
            meta, path = rec.split("\t", 1)
            got = dict(zip(fields, meta.split()))
            out[path] = (got["m"].encode(), got["o"])
    return out


class SparseIndex:
    """A temporary index of the base's entries for ``paths`` only."""

    def __init__(self, repo: Path, base: str, paths: list[str], index_file: Path):
        self.repo = repo
        self.index = gitutil.TempIndex(repo, index_file, GIT_LITERAL_PATHSPECS="1")
        listing = []
        for k in range(0, len(paths), _CHUNK):
            listing.append(self.index.git("ls-tree", "-r", "-z", "--full-tree", base, "--",
                                          *paths[k:k + _CHUNK]).stdout)
        self.base_entries = _records("".join(listing), "mto")
        self.index.git("update-index", "-z", "--index-info",
                       input="".join(rec + "\0" for part in listing
                                     for rec in part.split("\0") if rec))
        self.reader = gitutil.ObjectReader(repo)
        self.builder = TreeBuilder(repo, self.reader)
        self.base_tree = gitutil.out(repo, "rev-parse", f"{base}^{{tree}}")

    def apply(self, patchf: Path) -> procs.CompletedProcess:
        return self.index.apply(patchf)

    def tree(self) -> str:
        """The full tree: the base's with this index's paths as they are now."""
        now = _records(self.index.git("ls-files", "-s", "-z").stdout, "mos")
        changes: dict[str, Entry | None] = {p: e for p, e in now.items()
                                            if self.base_entries.get(p) != e}
        changes.update({p: None for p in self.base_entries if p not in now})
        return self.builder.build(self.base_tree, changes)

    def close(self) -> None:
        self.reader.close()


# ----------------------------------------------------------------------
# A tree object that is a base tree with a few paths changed.
#
# Applying a patch in a temporary index costs ~90 ms for ``git apply
# --cached`` and as much for ``git write-tree`` on a kernel tree, because
# each reads and rewrites the whole 87,000-entry index. A series touches a
# few dozen paths, so the sparse index above applies it in an index holding
# only those paths, and this part makes the full tree: the changed directories
# are read from the base (``cat-file --batch``), rewritten in Python in git's
# entry order, hashed, and written with one ``git hash-object -w``. git
# checks the format and gives back the names, which must be the ones
# computed here.


TREE_MODE = b"40000"
Entry = tuple[bytes, str]              # (mode, hex object name)
Changes = dict[str, Entry | None]      # path -> new entry, None: removed


class TreeBuildError(Exception):
    """The changes do not fit the base (a file where a directory is, ...)."""


def parse_tree(data: bytes) -> dict[bytes, Entry]:
    out: dict[bytes, Entry] = {}
    i = 0
    while i < len(data):
        sp = data.index(b" ", i)
        nul = data.index(b"\0", sp)
        out[data[sp + 1:nul]] = (data[i:sp], data[nul + 1:nul + 21].hex())
        i = nul + 21
    return out


def serialize(entries: dict[bytes, Entry]) -> bytes:
    # git sorts a directory's entries as if directory names ended in '/'.
    def key(name: bytes) -> bytes:
        return name + b"/" if entries[name][0] == TREE_MODE else name
    return b"".join(entries[n][0] + b" " + n + b"\0" + bytes.fromhex(entries[n][1])
                    for n in sorted(entries, key=key))


def object_name(kind: str, data: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).hexdigest()


class TreeBuilder:
    """Trees for one repository; ``reader`` reads the existing ones."""

    def __init__(self, repo: Path, reader: gitutil.ObjectReader):
        self.repo, self.reader = repo, reader

    def _entries(self, tree: str | None) -> dict[bytes, Entry]:
        if tree is None:
            return {}
        got = self.reader.object(tree)
        if got is None or got[0] != "tree":
            raise TreeBuildError(f"{tree} is not a tree")
        return parse_tree(got[1])

    def build(self, base_tree: str, changes: Changes) -> str:
        """The name of ``base_tree`` with ``changes``, written to the repository."""
        new: dict[str, bytes] = {}

        def walk(tree: str | None, sub: dict[bytes, object]) -> str | None:
            entries = self._entries(tree)
            for name, what in sub.items():
                if isinstance(what, dict):          # a directory with changes below
                    old = entries.get(name)
                    if old is not None and old[0] != TREE_MODE:
                        raise TreeBuildError(f"{name!r} is a file in the base, not a directory")
                    sha = walk(old[1] if old else None, what)
                    if sha is None:
                        entries.pop(name, None)     # git has no empty directories
                    else:
                        entries[name] = (TREE_MODE, sha)
                elif what is None:
                    entries.pop(name, None)
                else:
                    if name in entries and entries[name][0] == TREE_MODE:
                        raise TreeBuildError(f"{name!r} is a directory in the base")
                    entries[name] = what
            if not entries:
                return None
            data = serialize(entries)
            sha = object_name("tree", data)
            new[sha] = data
            return sha

        nested: dict[bytes, object] = {}
        for path, entry in changes.items():
            parts = path.encode().split(b"/")
            d = nested
            for p in parts[:-1]:
                d = d.setdefault(p, {})
                if not isinstance(d, dict):
                    raise TreeBuildError(f"{path}: a path and its parent both change")
            if isinstance(d.get(parts[-1]), dict):
                raise TreeBuildError(f"{path}: a path and its parent both change")
            d[parts[-1]] = entry
        root = walk(base_tree, nested)
        if root is None:
            root = object_name("tree", b"")
            new[root] = b""
        self._write(new)
        return root

    def _write(self, trees: dict[str, bytes]) -> None:
        if not trees:
            return
        with tempfile.TemporaryDirectory(prefix="napipatch-trees-") as td:
            files = []
            for sha, data in trees.items():
                f = Path(td) / sha
                f.write_bytes(data)
                files.append(f)
            got = gitutil.out(self.repo, "hash-object", "-w", "-t", "tree", "--stdin-paths",
                              input="".join(f"{f}\n" for f in files)).split()
        if got != list(trees):
            raise TreeBuildError("git hashed the trees differently")


# ----------------------------------------------------------------------
# Which commit a series is applied on: its own base-commit when the tree
# has it, else the one the user named, else HEAD, with the reason said.


def choose_base(repo: Path, series: Series, base: str | None) -> tuple[str, str]:
    """(commit, why): the series' base-commit when the tree has it, else
    --base, else HEAD."""
    bc = series.base_commit
    if bc:
        sha = gitutil.resolve(repo, bc)
        if sha:
            return sha, f"base-commit {bc[:12]}"
    if base:
        sha = gitutil.resolve(repo, base)
        if not sha:
            raise NapipatchError(base, f"no such revision in {repo}")
        return sha, f"--base {base}"
    sha = gitutil.resolve(repo, "HEAD")
    if not sha:
        raise NapipatchError(repo, "has no commits")
    why = "HEAD"
    if bc:
        why = f"HEAD (base-commit {bc[:12]} is not in the tree)"
    return sha, why
