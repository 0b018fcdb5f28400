"""Turning a TARGET argument into a Series.

TARGET is a stored series (``NAME`` or ``NAME@vN``, also written
``series/NAME@vN``), a directory of format-patch files, an mbox file, or a
revision range in the kernel tree (``HEAD~3..HEAD``).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import git

from napipatch.errors import NapipatchError
from napipatch.mails import mail as mailmod
from napipatch.mails.series import Series, assemble
from napipatch.store.store import Store
from napipatch.tree import gitutil

RANGE_LIMIT = 1000  # a range this long is a mistake (v6.12..HEAD of the wrong tree)


def resolve(target: str, store: Store, tree: Path | None) -> Series:
    p = Path(target)
    # "series/NAME@vN" names the store even though no such path exists.
    m = re.fullmatch(r"(?:.*/)?([^/@]+)(@v?\d+)?", target)
    if p.is_dir() and not (p / "series.toml").is_file():
        return assemble(mailmod.read_patch_dir(p), target, name=p.name)
    if p.is_file():
        return assemble(mailmod.read_mbox(p), target, name=p.stem)
    if m and _safe(m.group(1)) and (store.path(m.group(1)) / "series.toml").is_file():
        return store.load(m.group(1) + (m.group(2) or ""))
    if p.is_dir() and (p / "series.toml").is_file():
        return store.load(p.name)
    if ".." in target and tree is not None:
        return from_range(Path(tree), target)
    if ".." in target:
        raise NapipatchError(target, "a revision range needs --tree")
    raise NapipatchError(target, f"no such file, directory or series in {store.root}")


def _safe(name: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name)) and ".." not in name


def commits_in(repo: Path, revrange: str) -> list[str]:
    """The commits of ``revrange``, oldest first (GitPython walks it)."""
    try:
        commits = list(git.Repo(repo).iter_commits(revrange, max_count=RANGE_LIMIT + 1,
                                                   no_merges=True))
    except git.GitCommandError as exc:
        # GitPython wraps git's stderr as "stderr: '...'"; show git's last line.
        m = re.search(r"stderr: '(.*)'\s*$", exc.stderr or "", re.S)
        lines = [ln for ln in (m.group(1) if m else "").splitlines() if ln.strip()]
        why = lines[-1].removeprefix("fatal: ") if lines else "bad range"
        raise NapipatchError(revrange, why) from None
    if not commits:
        raise NapipatchError(revrange, "no commits in range")
    if len(commits) > RANGE_LIMIT:
        raise NapipatchError(revrange, f"more than {RANGE_LIMIT} commits: not a patch series")
    return [c.hexsha for c in reversed(commits)]


def from_range(tree: Path, revrange: str) -> Series:
    repo = gitutil.require_repo(tree)
    start = revrange.split("..")[0] or "HEAD"
    count = len(commits_in(repo, revrange))
    with tempfile.TemporaryDirectory(prefix="napipatch-range-") as td:
        # One commit gets no cover letter: base-commit then ends the patch.
        cover = ["--cover-letter"] if count > 1 else []
        gitutil.git(repo, "format-patch", "-q", *cover, f"--base={start}", "-o", td, revrange)
        files = sorted(Path(td).iterdir())
        mails = []
        for f in files:
            mails += [mailmod.parse_message(raw, f.name, env)
                      for env, raw in mailmod.split_mbox(f.read_bytes(), f.name)]
    series = assemble(mails, revrange, name=revrange)
    # The cover letter of a range is format-patch's placeholder: the user
    # has not written it yet, so checks must not judge its text.
    series.extra["synthetic-cover"] = series.cover is not None
    return series
