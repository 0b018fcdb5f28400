"""Which tree, base and branch the bot checks a series on.

The bot checks on ``tree.path``: at the series' ``base-commit:`` when the
tree has it, else at the branch its subject's tree tag maps to
(``tree.branches``; a subject with no tag means net-next), ``git fetch``ed
from ``tree.remote`` first when one is set. Either way the branch for the
tag is the branch the series is meant for, so it is what the base-commit
check measures "behind" against: the bot's tree never moves its HEAD, so
HEAD would say nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from napipatch.bot.config import BotConfig
from napipatch.errors import NapipatchError
from napipatch.mails.series import Series
from napipatch.tree import gitutil

log = logging.getLogger("napipatch.bot")


@dataclass
class TreeChoice:
    """Where a series is checked.

    Attributes:
        repo: the tree; None: diff-only checks.
        base: the commit to apply on; None: the series' base-commit (else HEAD).
        branch: the ref the series is meant for ("behind" is measured
            against it); None: no branch configured for its tag.
        label: the verdict line's "on ..." (``net-next/main``).
        why: how the base was chosen, for the reply's ``base:`` line.
    """

    repo: Path | None
    base: str | None
    branch: str | None
    label: str
    why: str


def choose(cfg: BotConfig, series: Series) -> TreeChoice:
    """The tree, base and branch for ``series`` (fetching the branch first).

    Raises NapipatchError when the series has no usable base-commit and its
    tag's branch is not in the tree: the checks are retried on a later pass.
    """
    if cfg.tree_path is None:
        return TreeChoice(None, None, None, f"{series.tree or 'no tree'} (diff-only checks)", "")
    repo = cfg.tree_path
    tag, branch = _branch_for(cfg, series.tree)
    ref = _fetch(cfg, repo, branch) if branch else None
    sha = gitutil.resolve(repo, ref) if ref else None
    bc = series.base_commit
    if bc and gitutil.resolve(repo, bc):
        why = "base-commit"
        if ref and not sha:
            log.error("branch %r for tree tag %r not found: how far behind the base-commit "
                      "is goes unmeasured", ref, tag)
            why += f"; branch {ref} not found, so not measured against it"
        return TreeChoice(repo, None, ref if sha else None,
                          f"{series.tree or 'tree'}/base-commit {bc[:12]}", why)
    if branch is None:
        return TreeChoice(repo, None, None, f"{tag or 'no tree tag'}/HEAD of {repo.name}", "")
    if sha is None:
        raise NapipatchError(repo, f"branch {ref!r} for tree tag {tag!r} not found")
    why = f"no usable base-commit; {tag} branch {branch}" + (f" of {cfg.remote}" if cfg.remote else "")
    return TreeChoice(repo, sha, ref, f"{tag}/{branch}", why)


def _branch_for(cfg: BotConfig, tag: str | None) -> tuple[str | None, str | None]:
    """(tree tag, configured branch): a subject without a tag is net-next's
    when net-next has a branch."""
    branch = cfg.branches.get(tag) if tag else None
    if branch is None and not tag:
        tag = "net-next" if "net-next" in cfg.branches else None
        branch = cfg.branches.get(tag) if tag else None
    return tag, branch


def _fetch(cfg: BotConfig, repo: Path, branch: str) -> str:
    """The ref to use for ``branch``: fetched fresh into
    ``refs/remotes/<remote>/<branch>`` when tree.remote is set (a failed
    fetch keeps what the tree has), else the branch as configured. The
    full ref, not a short name git might read as a tag of the same name."""
    if not cfg.remote:
        return branch
    ref = f"refs/remotes/{cfg.remote}/{branch}"
    cp = gitutil.git(repo, "fetch", "-q", "--no-tags", "--no-write-fetch-head", cfg.remote,
                     f"+refs/heads/{branch}:{ref}", check=False, timeout=600)
    if cp.returncode != 0:
        log.error("git fetch %s %s failed (using what the tree has): %s", cfg.remote,
                  branch, cp.stderr.strip().splitlines()[-1:] or cp.returncode)
    return ref
