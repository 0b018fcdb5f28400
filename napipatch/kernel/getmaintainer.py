"""The one runner of ``scripts/get_maintainer.pl``: who a patch goes to.

``napipatch send`` (its To and Cc) and the cc-maintainers check (who a
patch must reach) both ask it through ``GetMaintainer``; each builds one
from what it has (send: a repository and a base commit, see
``get_maintainers``; the check: its view of the tree) and gets the same
answer for the same patch.

The script runs from the trusted copy of the base commit's scripts
(``tree.trusted.scripts_root``), never from a tree a patch may have
changed, in a scratch directory holding the base's MAINTAINERS (and
.mailmap), so no checkout is needed. Given a git directory, the scratch
directory lets it read commits (``GIT_DIR``), so it names the signers of a
commit a patch ``Fixes:`` (its ``blamed_fixes`` role), as it does in a
kernel tree. The MAINTAINERS it reads for a patch is the base's, trimmed to
the sections that can take part (``kernel.maintainers``): the answer is the
same, in a fraction of the time. Patches run side by side, and each run
may last ``napipatch.get-maintainer-timeout`` seconds.

``recipients`` is how send puts together its To and Cc, and what the
cc-maintainers check takes a stored series to be sent to.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from napipatch import procs
from napipatch.errors import NapipatchError
from napipatch.kernel.maintainers import FIXES, MaintainersFile
from napipatch.mails.addresses import address_of, dedupe, split_addresses
from napipatch.tree import gitutil
from napipatch.tree.trusted import scripts_root

SCRIPT = "scripts/get_maintainer.pl"
# What the script reads of the tree besides the patch.
DATA = ("MAINTAINERS", ".mailmap", ".get_maintainer.ignore")
# No git history (no fallback, no per-file signers): the people that adds
# depend on the history of the tree it runs in (see checks/cc_maintainers.py).
_COMMON = ["--no-tree", "--nogit", "--nogit-fallback", "--nogit-chief-penguins"]


@dataclass(frozen=True)
class Wanted:
    """One line of get_maintainer.pl: an address and the roles it has."""

    entry: str     # "Name" <addr>, fit for a header
    roles: str     # "maintainer:NETWORKING [GENERAL]", "open list", "blamed_fixes:1/1=100%"

    @property
    def address(self) -> str:
        return address_of(self.entry)

    @property
    def is_list(self) -> bool:
        return bool(re.match(r"(open |moderated |subscriber )?list\b", self.roles))

    @property
    def blamed(self) -> bool:
        """A signer of a commit the patch says it fixes."""
        return "blamed_fixes" in self.roles

    @property
    def only_blamed(self) -> bool:
        """Blamed by a Fixes: tag and nothing else (no maintainer, no list)."""
        return self.blamed and all(r.strip().startswith("blamed_fixes")
                                   for r in self.roles.split(","))


def wanted_line(line: str) -> Wanted | None:
    """``Name <addr> (role:SECTION,...)`` or ``list@host (open list:SECTION)``."""
    line = line.strip()
    end = line.rfind(">") + 1 or (line.find(" (") if " (" in line else len(line))
    who, rest = line[:end], line[end:].strip()
    roles = rest[1:-1] if rest.startswith("(") and rest.endswith(")") else ""
    entries = split_addresses(who)
    return Wanted(entries[0], roles) if entries else None


class GetMaintainer:
    """get_maintainer.pl as commit ``base`` has it.

    ``scripts``: the directory holding its scripts/ (the trusted copy);
    ``read(base, name)``: a file of the base as bytes (None: not there),
    for the DATA files; ``gitdir``: the repository whose commits a
    ``Fixes:`` names (None: none read); ``timeout``: the seconds one run
    may take (0 or None: no limit).
    """

    def __init__(self, scripts: Path, read, base: str, gitdir: Path | None = None,
                 timeout: float | None = None):
        self.script = Path(scripts) / SCRIPT
        self.data = {name: blob for name in DATA if (blob := read(base, name)) is not None}
        self.gitdir, self.timeout = gitdir, timeout or None
        if "MAINTAINERS" not in self.data:
            raise NapipatchError("MAINTAINERS", f"not in the tree at {base[:12]}")
        if not self.script.is_file():
            raise NapipatchError(self.script, "no such script in the tree")

    @property
    def mailmap(self) -> str:
        """The base's .mailmap ("" when it has none)."""
        return self.data.get(".mailmap", b"").decode("utf-8", "replace")

    def wanted(self, patches: list[str]) -> list[list[Wanted]]:
        """What the script says for each patch text."""
        maint = MaintainersFile(self.data["MAINTAINERS"].decode("utf-8", "replace"))
        env = dict(os.environ)
        if self.gitdir is not None:
            env["GIT_DIR"] = str(self.gitdir)
        with tempfile.TemporaryDirectory(prefix="napipatch-maint-") as td:
            running: list[procs.Running] = []
            out: list[list[Wanted]] = []
            # Side by side, a directory each, a few at a time: five patches cost
            # about the time of the slowest, not of all five in turn.
            width = max(2, os.cpu_count() or 1)
            try:
                for i, text in enumerate(patches):
                    if len(running) - len(out) >= width:
                        out.append(self._answer(running[len(out)]))
                    d = Path(td) / str(i)
                    d.mkdir()
                    for name, blob in self.data.items():
                        (d / name).write_bytes(blob)
                    (d / "patch").write_text(text)
                    (d / "MAINTAINERS").write_text(maint.trimmed(text))
                    # A .git is what makes it read commits (GIT_DIR says where);
                    # it only does for a Fixes: line, and git costs it time otherwise.
                    if self.gitdir is not None and FIXES.search(text):
                        (d / ".git").mkdir()
                    running.append(procs.start(
                        ["perl", str(self.script), *_COMMON, "patch"], timeout=self.timeout,
                        name="get_maintainer.pl", package="perl", cwd=d, env=env))
                return out + [self._answer(r) for r in running[len(out):]]
            finally:
                for r in running:   # one that failed or timed out: the rest go too
                    r.close()

    def _answer(self, run: procs.Running) -> list[Wanted]:
        try:
            done = procs.finish([run])[0]
        except procs.ProcessTimeout:
            raise NapipatchError("get_maintainer.pl", f"still running after {self.timeout:g} s; "
                                                      "stopped") from None
        if done.returncode != 0:
            last = ((done.stderr or "").strip().splitlines()
                    or [f"exit status {done.returncode}"])[-1]
            raise NapipatchError("get_maintainer.pl", last)
        return [w for line in done.stdout.splitlines() if (w := wanted_line(line))]


def git_dir(repo: Path) -> Path:
    return Path(gitutil.out(repo, "rev-parse", "--absolute-git-dir"))


def get_maintainers(repo: Path, base: str, cache: Path, patches: list[Path],
                    timeout: float | None = None) -> list[Wanted]:
    """What get_maintainer.pl at ``base`` of ``repo`` wants for the patch
    files ``patches``, each address once (in the order it names them)."""
    def read(rev: str, name: str) -> bytes | None:
        cp = gitutil.git(repo, "cat-file", "blob", f"{rev}:{name}", check=False, text=False)
        return cp.stdout if cp.returncode == 0 else None

    runner = GetMaintainer(scripts_root(repo, base, cache), read, base, git_dir(repo), timeout)
    got = runner.wanted([Path(p).read_text(errors="replace") for p in patches])
    seen: dict[str, Wanted] = {}
    for w in (w for per in got for w in per):
        seen.setdefault(w.address, w)
    return list(seen.values())


def recipients(to: list[str], cc: list[str], wanted: list[Wanted]) -> tuple[list[str], list[str]]:
    """To and Cc as ``napipatch send`` addresses a series: the addresses it
    was given first; then get_maintainer.pl's people in To (as b4 does), its
    lists and the people a Fixes: tag blames in Cc; each address once."""
    to_l = to + [w.entry for w in wanted if not w.is_list and not w.only_blamed]
    cc_l = cc + [w.entry for w in wanted if w.is_list or w.only_blamed]
    to_l = dedupe(to_l)
    return to_l, dedupe(cc_l, {address_of(a) for a in to_l})
