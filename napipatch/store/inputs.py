"""Turning a TARGET argument into a Series.

TARGET is a stored series (``NAME`` or ``NAME@vN``, also written
``series/NAME@vN``), a directory of format-patch files, an mbox file, a
revision range or a branch in the kernel tree (``HEAD~3..HEAD``), ``-``
(a mail or an mbox on standard input), or nothing: the series being
prepared on the current branch (b4 prep, else the commits not upstream).
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from napipatch.errors import NapipatchError
from napipatch.mails import mail as mailmod
from napipatch.mails import mbox
from napipatch.mails.series import Series, assemble, valid_name
from napipatch.store import b4api
from napipatch.store.history import attach
from napipatch.store.store import Store
from napipatch.tree import commits, gitutil

RANGE_LIMIT = 1000  # a range this long is a mistake (v6.12..HEAD of the wrong tree)


def resolve(target: str, store: Store, tree: Path | None) -> Series:
    """The series TARGET names, with its history from ``store`` (``store.history``)."""
    return attach(_resolve(target, store, tree), store)


def _resolve(target: str, store: Store, tree: Path | None) -> Series:
    p = Path(target)
    kind = mbox.input_kind(target)
    # "series/NAME@vN" names the store even though no such path exists.
    m = re.fullmatch(r"(?:.*/)?([^/@]+)(@v?\d+)?", target)
    if kind == "dir" and not (p / "series.toml").is_file():
        return assemble(mbox.read_patch_dir(p), target, name=p.name)
    if kind == "file":
        return assemble(mbox.read_mbox(p), target, name=p.stem)
    if m and valid_name(m.group(1)) and (store.path(m.group(1)) / "series.toml").is_file():
        return store.load(m.group(1) + (m.group(2) or ""))
    if kind == "dir" and (p / "series.toml").is_file():
        return store.load(p.name)
    if ".." in target and tree is not None:
        return from_range(Path(tree), target)
    if ".." in target:
        raise NapipatchError(target, "a revision range needs --tree (or run it inside the tree)")
    if tree is not None and is_branch(Path(tree), target):
        return from_range(Path(tree), f"{target}@{{upstream}}..{target}")
    raise NapipatchError(target, f"no such file, directory or series in {store.root}")


def is_branch(tree: Path, name: str) -> bool:
    """``name`` is a local branch of the repository ``tree``."""
    return bool(re.fullmatch(r"[\w./-]+", name)) and gitutil.git(
        tree, "rev-parse", "-q", "--verify", f"refs/heads/{name}", check=False).returncode == 0


def looks_like_revisions(target: str, here: Path | None) -> bool:
    """TARGET names commits (a range, or a branch of ``here``) and no file."""
    if Path(target).exists():
        return False
    return ".." in target or (here is not None and is_branch(here, target))


def commits_in(repo: Path, revrange: str) -> list[str]:
    """The commits of ``revrange``, oldest first; a bad range is an error
    with git's reason."""
    commits = gitutil.rev_list(repo, revrange, max_count=RANGE_LIMIT + 1, no_merges=True)
    if not commits:
        raise NapipatchError(revrange, "no commits in range")
    if len(commits) > RANGE_LIMIT:
        raise NapipatchError(revrange, f"more than {RANGE_LIMIT} commits: not a patch series")
    return commits[::-1]


def from_range(tree: Path, revrange: str, base: str | None = None,
               subject_prefix: str | None = None) -> Series:
    repo = gitutil.require_repo(tree)
    start = base or revrange.split("..")[0] or "HEAD"
    count = len(commits_in(repo, revrange))
    with tempfile.TemporaryDirectory(prefix="napipatch-range-") as td:
        # One commit gets no cover letter: base-commit then ends the patch.
        cover = ["--cover-letter"] if count > 1 else []
        prefix = [f"--subject-prefix={subject_prefix}"] if subject_prefix else []
        # The cover letter is dated "now" by default: every run then had
        # other mails, so another result-cache key, and never reused a
        # result. Its date is the tip's commit date instead.
        tip = revrange.split("..")[-1] or "HEAD"
        when = gitutil.out(repo, "log", "-1", "--format=%cI", "--end-of-options", tip)
        gitutil.git(repo, "format-patch", "-q", *cover, *prefix, f"--base={start}", "-o", td,
                    revrange, env={"GIT_COMMITTER_DATE": when})
        files = sorted(Path(td).iterdir())
        mails = []
        for f in files:
            mails += [mailmod.parse_message(raw, f.name, env)
                      for env, raw in mailmod.split_mbox(mbox.read_regular(f), f.name)]
    series = assemble(mails, revrange, name=revrange)
    # The cover letter of a range is format-patch's placeholder: the user
    # has not written it yet, so checks must not judge its text.
    series.inputs.synthetic_cover = series.cover is not None
    return series


def current_series(here: Path | None) -> tuple[Series, str]:
    """What ``napipatch check`` with no TARGET checks in the repository
    ``here``: the b4 prep series of the current branch, else its commits not
    in ``@{upstream}``. Returns the series and its base."""
    if here is None:
        raise NapipatchError("check", "no TARGET and not in a git repository: pass a series "
                             "name, a format-patch directory, an mbox, a revision range or -")
    prep = b4api.prep_messages(here)
    if prep is not None:
        base, revrange, raw = prep
        series = _b4_mails(raw, revrange)
    else:
        revrange = commits.upstream_range(here)
        if revrange is None:
            raise NapipatchError(here, "no TARGET, the branch is no b4 prep branch and has no "
                                 "commits over an upstream: pass a revision range (BASE..HEAD)")
        base = revrange.split("..")[0]
        series = from_range(here, revrange)
    series.name = "..".join(sha[:12] for sha in revrange.split(".."))
    return series, base


def _b4_mails(raw: list[bytes], revrange: str) -> Series:
    """The series from b4's own mails of a prep branch: the cover letter is
    the user's, so the checks judge it (a placeholder from format-patch
    they do not)."""
    mails = [mailmod.parse_message(m, f"b4 prep {revrange} message {i}")
             for i, m in enumerate(raw)]
    return assemble(mails, revrange, name=revrange)


def prep_tip(here: Path) -> str | None:
    """The last commit of the current branch's b4 prep series, if it is one."""
    prep = b4api.prep_range(here)
    return gitutil.out(here, "rev-parse", prep[1].split("..")[1]) if prep else None


@dataclass
class StdinInput:
    """What ``check -`` read: a series, and for one patch mail (a per-patch
    check command's input) the tree and base it was made on, if found."""

    series: Series
    per_patch: bool
    tree: Path | None = None
    base: str | None = None
    commit: str | None = None


def from_stdin(data: bytes, here: Path | None) -> StdinInput:
    """One mail or an mbox from standard input. One patch is checked on its
    own; when it is a commit of ``here`` the tree is ``here`` at its parent."""
    mails = [mailmod.parse_message(raw, f"stdin message {i + 1}", env)
             for i, (env, raw) in enumerate(mailmod.split_mbox(data, "stdin"))]
    patches = [m for m in mails if m.diff and not m.subject.is_reply]
    if not patches and mails and all(m.subject.index == 0 for m in mails):
        # A cover letter on its own (b4 review hands it over): no patch.
        return StdinInput(Series(name="stdin", version=mails[0].subject.version, cover=mails[0],
                                 patches=[], source="stdin"), per_patch=True)
    if len(patches) != 1:
        return StdinInput(assemble(mails, "stdin", name="stdin"), per_patch=False)
    mail = patches[0]
    series = Series(name="stdin", version=mail.subject.version, cover=None, patches=[mail],
                    source="stdin")
    sha = commits.commit_of(here, mail) if here is not None else None
    parent = commits.parent_of(here, sha) if sha is not None else None
    if parent is None:  # not a commit here, or a root commit: diff-only
        return StdinInput(series, per_patch=True)
    series.inputs.base_commit = parent
    return StdinInput(series, per_patch=True, tree=here, base=parent, commit=sha)
