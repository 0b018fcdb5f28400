"""Following a public-inbox v2 archive with git.

A v2 inbox is a set of epoch repositories ``git/N.git``; each message is
one commit on ``refs/heads/master`` whose tree holds the raw message in
the blob ``m``. The follower mirrors every epoch under the bot's state dir
(``git fetch`` from a local inbox directory, or over http from
public-inbox-httpd, which serves ``LIST/git/N.git`` for clone and lists the
epochs in ``LIST/manifest.js.gz``) and hands out the commits after the last
one the bot read, oldest first, with their messages.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

from napipatch.bot.config import Inbox
from napipatch.errors import NapipatchError
from napipatch.tree import gitutil

log = logging.getLogger("napipatch.bot")

_EPOCH = re.compile(r"/git/(\d+)\.git$")


class Follower:
    def __init__(self, inbox: Inbox, mirror_root: Path, timeout: float = 300):
        self.inbox = inbox
        self.root = mirror_root / inbox.name / "git"
        self.timeout = timeout

    # ------------------------------------------------------------ epochs
    def remote_epochs(self) -> list[int]:
        if self.inbox.path:
            d = Path(self.inbox.path) / "git"
            if not d.is_dir():
                raise NapipatchError(self.inbox.path, "not a public-inbox v2 directory (no git/)")
            return sorted(int(m.group(1)) for p in d.iterdir()
                          if (m := re.match(r"^(\d+)\.git$", p.name)))
        url = f"{self.inbox.url}/manifest.js.gz"
        try:
            with urllib.request.urlopen(url, timeout=60) as resp:
                data = resp.read()
            manifest = json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
            return sorted(int(m.group(1)) for k in manifest if (m := _EPOCH.search(k)))
        except (urllib.error.URLError, OSError, ValueError) as exc:
            log.info("%s: no manifest (%s); probing epochs", url, exc)
        epochs = []
        while True:
            n = len(epochs)
            cp = gitutil.git(None, "ls-remote", "--heads", self._source(n), check=False,
                             timeout=self.timeout)
            if cp.returncode != 0:
                break
            epochs.append(n)
        if not epochs:
            raise NapipatchError(self.inbox.url, "no epoch repository git/0.git")
        return epochs

    def _source(self, epoch: int) -> str:
        if self.inbox.path:
            return str(Path(self.inbox.path) / "git" / f"{epoch}.git")
        return f"{self.inbox.url}/git/{epoch}.git"

    def mirror(self, epoch: int) -> Path:
        return self.root / f"{epoch}.git"

    # ------------------------------------------------------------ fetch
    def fetch(self) -> list[int]:
        """Bring every epoch's mirror up to date; returns the epochs mirrored."""
        epochs = self.remote_epochs()
        for n in epochs:
            repo = self.mirror(n)
            if not (repo / "HEAD").exists():
                repo.mkdir(parents=True, exist_ok=True)
                gitutil.git(repo, "init", "-q", "--bare")
            gitutil.git(repo, "fetch", "-q", "--no-tags", "--no-write-fetch-head",
                        self._source(n), "+refs/heads/*:refs/heads/*", timeout=self.timeout)
        return epochs

    def local_epochs(self) -> list[int]:
        if not self.root.is_dir():
            return []
        return sorted(int(m.group(1)) for p in self.root.iterdir()
                      if (m := re.match(r"^(\d+)\.git$", p.name)))

    # ------------------------------------------------------------ reading
    def head(self, epoch: int) -> str | None:
        repo = self.mirror(epoch)
        refs = gitutil.out(repo, "for-each-ref", "--format=%(refname) %(objectname)",
                           "refs/heads/").splitlines()
        heads = dict(line.split(" ", 1) for line in refs if line)
        return heads.get("refs/heads/master") or (next(iter(heads.values())) if heads else None)

    def new_commits(self, epoch: int, since: str | None) -> list[str]:
        head = self.head(epoch)
        if head is None or head == since:
            return []
        repo = self.mirror(epoch)
        if since:
            known = gitutil.git(repo, "merge-base", "--is-ancestor", since, head, check=False)
            if known.returncode != 0:
                # The inbox rewrote its history (a purge): read it all again;
                # Message-IDs already seen are skipped by the caller.
                log.warning("%s epoch %d: %s is no longer on the branch; rereading the epoch",
                            self.inbox.name, epoch, since[:12])
                since = None
        rng = f"{since}..{head}" if since else head
        return gitutil.out(repo, "rev-list", "--reverse", "--topo-order", rng).split()

    def messages(self, epoch: int, commits: list[str]) -> Iterator[tuple[str, bytes | None]]:
        """(commit, raw message or None when the commit carries no ``m``)."""
        if not commits:
            return
        reader = gitutil.ObjectReader(self.mirror(epoch))
        try:
            for c in commits:
                got = reader.object(f"{c}:m")
                # No blob ``m``: a purge/deletion commit.
                yield c, got[1] if got and got[0] == "blob" else None
        finally:
            reader.close()
