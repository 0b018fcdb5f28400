"""Applying a series onto its base in a real kernel tree.

Two ways, one result type:
- ``apply_in_index``: a temporary index (``GIT_INDEX_FILE``), ``git apply
  --cached`` and ``git commit-tree`` per patch. No checkout at all (a full
  6.12 checkout costs ~24 s), the user's branch, index and files are never
  touched, and the commits it makes are reproducible (fixed dates), so the
  checks can read pre/post files by commit and cache by them.
- ``apply_in_worktree``: ``git worktree add`` at the base and ``git am``
  per patch, for ``series apply`` where the user wants files on disk.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import gitutil
from .errors import NapipatchError
from .gitutil import git
from .series import Series

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


def _failure(index: int, diff: str, stderr: str) -> ApplyFailure:
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


def _mailinfo(repo: Path, mailtext: str, td: Path) -> tuple[dict, str, Path]:
    msgf, patchf = td / "msg", td / "patch"
    cp = git(repo, "mailinfo", "--encoding=UTF-8", str(msgf), str(patchf), input=mailtext)
    info = {}
    for line in cp.stdout.splitlines():
        k, _, v = line.partition(": ")
        info[k] = v
    body = msgf.read_text(errors="replace")
    message = info.get("Subject", "") + "\n\n" + body
    return info, message, patchf


def _cache_key(sha: str, series: Series) -> str:
    h = hashlib.sha256(f"apply-v1\0{sha}\0".encode())
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
        tmp = f.with_name(f".{f.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"commits": res.commits,
                                   "failure": asdict(res.failure) if res.failure else None}))
        tmp.replace(f)
    return res


def _apply(repo: Path, series: Series, res: Applied) -> None:
    sha = res.base
    with tempfile.TemporaryDirectory(prefix="napipatch-idx-") as tdname:
        td = Path(tdname)
        # Index v4 (prefix-compressed paths) is a third smaller for a kernel
        # tree, and every apply and write-tree reads and writes all of it.
        env = {"GIT_INDEX_FILE": str(td / "index"), "GIT_INDEX_VERSION": "4"}
        git(repo, "read-tree", sha, env=env)
        parent = sha
        for i, p in enumerate(series.patches, 1):
            if res.failure:
                res.commits.append(None)
                continue
            info, message, patchf = _mailinfo(repo, p.as_format_patch(), td)
            if not patchf.read_text(errors="replace").strip():
                res.commits.append(None)
                res.failure = ApplyFailure(i, None, None, None, "has no diff")
                continue
            cp = git(repo, "apply", "--cached", "--whitespace=nowarn", str(patchf),
                     env=env, check=False)
            if cp.returncode != 0:
                res.commits.append(None)
                res.failure = _failure(i, p.diff, cp.stderr)
                continue
            tree = gitutil.out(repo, "write-tree", env=env)
            date = info.get("Date") or "1970-01-01T00:00:00Z"
            cenv = dict(gitutil.NAPIPATCH_IDENT, GIT_AUTHOR_NAME=info.get("Author", "unknown"),
                        GIT_AUTHOR_EMAIL=info.get("Email", "unknown@invalid"),
                        GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
            parent = gitutil.out(repo, "commit-tree", tree, "-p", parent, "-F", "-",
                                 input=message, env=cenv)
            res.commits.append(parent)


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
