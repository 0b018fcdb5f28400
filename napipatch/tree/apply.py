"""Applying a series onto its base in a real kernel tree.

Two ways, one result type:
- ``apply_in_index``: a temporary index (``GIT_INDEX_FILE``), ``git apply
  --cached`` and ``git commit-tree`` per patch. No checkout at all (a full
  6.12 checkout costs ~24 s), the user's branch, index and files are never
  touched, and the commits it makes are reproducible (fixed dates), so the
  checks can read pre/post files by commit and cache by them. The index
  holds only the paths the series touches and ``treebuild`` makes the full
  trees (0.25 s for v5 instead of 1.3 s); a failure, or a change that
  index cannot express, is settled by an index of the whole base.
- ``apply_in_worktree``: ``git worktree add`` at the base and ``git am``
  per patch, for ``series apply`` where the user wants files on disk.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from napipatch import fileio
from napipatch.errors import GitError, NapipatchError
from napipatch.mails.series import Series
from napipatch.tree import gitutil
from napipatch.tree.gitutil import git
from napipatch.tree.treebuild import TreeBuilder, TreeBuildError

_FAILED_AT = re.compile(r"patch failed: (\S+?):(\d+)")
_NO_APPLY = re.compile(r"(?:error: )?(\S+): (patch does not apply|does not exist in index|already exists in index|No such file or directory|does not match index)")


@dataclass
class ApplyFailure:
    patch: int  # 1..N
    file: str | None
    line: int | None
    hunk: int | None
    reason: str

    def __str__(self) -> str:
        where = self.file or "?"
        if self.hunk:
            where += f" hunk #{self.hunk}"
        if self.line:
            where += f" (at line {self.line})"
        return f"patch {self.patch} does not apply: {where}: {self.reason}"


@dataclass
class Applied:
    """The base and, per patch, the commit after it (None when not applied)."""

    repo: Path
    base: str
    base_why: str
    commits: list[str | None] = field(default_factory=list)
    failure: ApplyFailure | None = None

    def before(self, i: int) -> str | None:
        """Commit before patch i (1-based)."""
        return self.base if i == 1 else self.commits[i - 2]

    def after(self, i: int) -> str | None:
        return self.commits[i - 1]

    @property
    def tip(self) -> str | None:
        return self.commits[-1] if self.commits and self.failure is None else None

    @property
    def good(self) -> list[str]:
        """The commits of the patches before the first that failed: what a
        build or boot of a partly applied series can use."""
        done = [c for c in self.commits if c]
        return done[:self.failure.patch - 1] if self.failure else done


def choose_base(repo: Path, series: Series, base: str | None) -> tuple[str, str]:
    """The series' base-commit when the tree has it, else --base, else HEAD."""
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


def hunk_number(diff: str, path: str, old_line: int) -> int | None:
    """Which hunk of ``path`` in ``diff`` starts at ``old_line`` (1-based)."""
    n, in_file = 0, False
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            in_file = line.endswith(f" b/{path}") or f" a/{path} " in line
            n = 0
        elif in_file and line.startswith("@@ "):
            n += 1
            m = re.match(r"@@ -(\d+)", line)
            if m and int(m.group(1)) == old_line:
                return n
    return None


_INVALID = re.compile(r"invalid path '(.+?)'")
OUTSIDE = "names a path outside the tree (or inside .git); not applied"


def _failure(index: int, diff: str, stderr: str) -> ApplyFailure:
    bad = _INVALID.search(stderr)
    if bad:
        return ApplyFailure(index, bad.group(1), None, None, OUTSIDE)
    f = _FAILED_AT.search(stderr)
    if f:
        path, line = f.group(1), int(f.group(2))
        return ApplyFailure(index, path, line, hunk_number(diff, path, line),
                            "context does not match the tree")
    n = _NO_APPLY.search(stderr)
    if n:
        return ApplyFailure(index, n.group(1), None, None, n.group(2))
    last = [ln for ln in stderr.splitlines() if ln.strip()]
    return ApplyFailure(index, None, None, None,
                        (last[-1] if last else "git apply failed").removeprefix("error: "))


def _mailinfo(repo: Path, mailtext: str, td: Path, n: int = 0) -> tuple[dict, str, Path]:
    msgf, patchf = td / f"msg{n}", td / f"patch{n}"
    cp = git(repo, "mailinfo", "--encoding=UTF-8", str(msgf), str(patchf), input=mailtext)
    info = {}
    for line in cp.stdout.splitlines():
        k, _, v = line.partition(": ")
        info[k] = v
    body = msgf.read_text(errors="replace")
    message = info.get("Subject", "") + "\n\n" + body
    return info, message, patchf


def _cache_key(sha: str, series: Series) -> str:
    h = hashlib.sha256(f"apply-v2\0{sha}\0".encode())
    for p in series.patches:
        h.update(p.as_format_patch().encode(errors="replace") + b"\0")
    return h.hexdigest()


def _load_cached(repo: Path, f: Path, res: Applied) -> Applied | None:
    """The recorded commits, if every one of them is still in the repository."""
    try:
        data = json.loads(f.read_text())
        commits = data["commits"]
        failure = ApplyFailure(**data["failure"]) if data["failure"] else None
    except (OSError, ValueError, TypeError, KeyError):
        return None
    have = [c for c in commits if c]
    if have:
        cp = git(repo, "cat-file", "--batch-check", input="\n".join(have) + "\n", check=False)
        if cp.returncode != 0 or [ln.split()[1:2] for ln in cp.stdout.splitlines()] != \
                [["commit"]] * len(have):
            return None    # garbage-collected: apply again
    res.commits, res.failure = list(commits), failure
    return res


def apply_in_index(repo: Path, series: Series, base: str | None = None,
                   cache: Path | None = None) -> Applied:
    """Apply with a temporary index; with ``cache``, reuse an earlier run's commits.

    The commits are a function of the base and the patch texts (fixed dates
    and identity), so a re-check of an unchanged series skips applying.
    """
    repo = gitutil.require_repo(repo)
    sha, why = choose_base(repo, series, base)
    res = Applied(repo=repo, base=sha, base_why=why)
    f = cache / "applied" / f"{_cache_key(sha, series)}.json" if cache else None
    if f is not None and (hit := _load_cached(repo, f, res)) is not None:
        return hit
    _apply(repo, series, res)
    if f is not None:
        f.parent.mkdir(parents=True, exist_ok=True)
        fileio.atomic_write(f, json.dumps({"commits": res.commits,
                                           "failure": asdict(res.failure) if res.failure else None}))
    return res


def _apply(repo: Path, series: Series, res: Applied) -> None:
    with tempfile.TemporaryDirectory(prefix="napipatch-idx-") as tdname:
        td = Path(tdname)
        mails = [_mailinfo(repo, p.as_format_patch(), td, i)
                 for i, p in enumerate(series.patches, 1)]
        try:
            _apply_sparse(repo, series, res, mails, td)
            if res.failure is None:
                return
        except (TreeBuildError, GitError, ValueError, IndexError):
            pass
        # A failure, or something the sparse index cannot express: the full
        # index has the last word, and its error messages are the reference.
        res.commits, res.failure = [], None
        _apply_full(repo, series, res, mails, td)


def _commit(repo: Path, tree: str, parent: str, info: dict, message: str) -> str:
    date = info.get("Date") or "1970-01-01T00:00:00Z"
    cenv = dict(gitutil.NAPIPATCH_IDENT, GIT_AUTHOR_NAME=info.get("Author", "unknown"),
                GIT_AUTHOR_EMAIL=info.get("Email", "unknown@invalid"),
                GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return gitutil.out(repo, "commit-tree", tree, "-p", parent, "-F", "-",
                       input=message, env=cenv)


def _each(series: Series, res: Applied, mails, apply_one):
    """Apply patch by patch; ``apply_one(i, patch, patchf)`` gives the git
    apply result; stops at the first failure."""
    for i, (p, (info, message, patchf)) in enumerate(zip(series.patches, mails), 1):
        if res.failure:
            res.commits.append(None)
            continue
        if not patchf.read_text(errors="replace").strip():
            res.commits.append(None)
            res.failure = ApplyFailure(i, None, None, None, "has no diff")
            continue
        cp, commit = apply_one(i, info, message, patchf)
        if cp.returncode != 0:
            res.commits.append(None)
            res.failure = _failure(i, p.diff, cp.stderr)
            continue
        res.commits.append(commit())


def _apply_full(repo: Path, series: Series, res: Applied, mails, td: Path) -> None:
    """A temporary index of the whole base tree."""
    # Index v4 (prefix-compressed paths) is a third smaller for a kernel
    # tree, and every apply and write-tree reads and writes all of it.
    env = {"GIT_INDEX_FILE": str(td / "index"), "GIT_INDEX_VERSION": "4"}
    git(repo, "read-tree", res.base, env=env)
    parent = [res.base]

    def one(i, info, message, patchf):
        cp = git(repo, "apply", "--cached", "--whitespace=nowarn", str(patchf),
                 env=env, check=False)

        def commit():
            tree = gitutil.out(repo, "write-tree", env=env)
            parent[0] = _commit(repo, tree, parent[0], info, message)
            return parent[0]
        return cp, commit

    _each(series, res, mails, one)


def _touched(repo: Path, patchf: Path) -> set[str]:
    """Every path a patch names (both sides of a rename or copy)."""
    cp = git(repo, "apply", "--numstat", "-z", str(patchf), check=False)
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


_FROM = re.compile(r"^(?:rename|copy) from (.+)$", re.M)


def _unquote(path: str) -> str:
    """A path as git writes it in a patch, C-quoted when it has odd bytes."""
    if not (path.startswith('"') and path.endswith('"')):
        return path
    raw = path[1:-1].encode("latin-1", errors="surrogateescape")
    return raw.decode("unicode_escape").encode("latin-1").decode("utf-8", errors="replace")


def _apply_sparse(repo: Path, series: Series, res: Applied, mails, td: Path) -> None:
    """An index of only the paths the series touches; the full tree of each
    commit is the base's with those paths replaced (treebuild.py)."""
    paths = sorted(set().union(*(_touched(repo, pf) for _, _, pf in mails)))
    env = {"GIT_INDEX_FILE": str(td / "sparse-index"), "GIT_LITERAL_PATHSPECS": "1"}
    base_entries: dict[str, tuple[bytes, str]] = {}
    listing = []
    for k in range(0, len(paths), 500):   # stay under the command-line limit
        chunk = paths[k:k + 500]
        cp = git(repo, "ls-tree", "-r", "-z", "--full-tree", res.base, "--", *chunk, env=env)
        for rec in cp.stdout.split("\0"):
            if rec:
                meta, path = rec.split("\t", 1)
                mode, _typ, sha = meta.split()
                base_entries[path] = (mode.encode(), sha)
                listing.append(rec)
    git(repo, "update-index", "-z", "--index-info", input="".join(r + "\0" for r in listing),
        env=env)
    reader = gitutil.ObjectReader(repo)
    builder = TreeBuilder(repo, reader)
    base_tree = gitutil.out(repo, "rev-parse", f"{res.base}^{{tree}}")
    parent = [res.base]

    def one(i, info, message, patchf):
        cp = git(repo, "apply", "--cached", "--whitespace=nowarn", str(patchf),
                 env=env, check=False)

        def commit():
            now: dict[str, tuple[bytes, str]] = {}
            for rec in git(repo, "ls-files", "-s", "-z", env=env).stdout.split("\0"):
                if rec:
                    meta, path = rec.split("\t", 1)
                    mode, sha, _stage = meta.split()
                    now[path] = (mode.encode(), sha)
            changes = {p: e for p, e in now.items() if base_entries.get(p) != e}
            changes.update({p: None for p in base_entries if p not in now})
            tree = builder.build(base_tree, changes)
            parent[0] = _commit(repo, tree, parent[0], info, message)
            return parent[0]
        return cp, commit

    try:
        _each(series, res, mails, one)
    finally:
        reader.close()


def apply_in_worktree(repo: Path, series: Series, path: Path, base: str | None = None) -> Applied:
    """``git worktree add`` at the base, then ``git am`` each patch.

    On failure the worktree is removed again: nothing is left half-applied,
    and the user's own checkout is never involved.
    """
    repo = gitutil.require_repo(repo)
    sha, why = choose_base(repo, series, base)
    path = Path(path).resolve()
    if path.exists() and any(path.iterdir()):
        raise NapipatchError(path, "already exists and is not empty")
    git(repo, "worktree", "add", "--detach", str(path), sha)
    res = Applied(repo=repo, base=sha, base_why=why)
    try:
        for i, p in enumerate(series.patches, 1):
            cp = git(path, "am", "--keep-cr", "--whitespace=nowarn", input=p.as_format_patch(),
                     env=dict(gitutil.NAPIPATCH_IDENT), check=False)
            if cp.returncode != 0:
                res.failure = _failure(i, p.diff, cp.stderr + cp.stdout)
                git(path, "am", "--abort", check=False)
                break
            res.commits.append(gitutil.out(path, "rev-parse", "HEAD"))
    finally:
        if res.failure:
            git(repo, "worktree", "remove", "--force", str(path), check=False)
            shutil.rmtree(path, ignore_errors=True)
            git(repo, "worktree", "prune", check=False)
    return res
