"""Who a series goes to: the tree's ``scripts/get_maintainer.pl``.

The script runs from the trusted copy of the base commit's scripts
(``trusted.scripts_root``), never from a tree a patch may have changed, in
a scratch directory holding the base's MAINTAINERS (and .mailmap), so no
checkout is needed. To and Cc are split the way b4 does it: maintainers
(``--nol``) in To, lists and reviewers (``--nom``) in Cc.
"""

from __future__ import annotations

import email.utils
import subprocess
import tempfile
from pathlib import Path

from napipatch.errors import NapipatchError
from napipatch.tree import gitutil
from napipatch.tree.trusted import scripts_root

_COMMON = ["--no-tree", "--nogit", "--nogit-fallback", "--nogit-chief-penguins",
           "--norolestats"]
DATA = ("MAINTAINERS", ".mailmap", ".get_maintainer.ignore")


def clean_address(value: str) -> str:
    """Text fit for a header: CR and LF removed, runs of white space joined."""
    return " ".join(str(value).replace("\r", " ").replace("\n", " ").split())


def _getaddresses(value: str) -> list[tuple[str, str]]:
    """(name, address) pairs of an address list, parsed leniently.

    Debian 12's Python (3.11.2-6+deb12u9, the CVE-2023-27043 fix) parses
    strictly and gives nothing at all for a list with one malformed entry,
    so a good address next to junk would be lost; the lenient parse keeps
    it, and split_addresses drops the junk. Older Pythons have no
    ``strict`` and are lenient already.
    """
    try:
        return email.utils.getaddresses([value], strict=False)
    except TypeError:
        return email.utils.getaddresses([value])


def split_addresses(value: str) -> list[str]:
    """``Name <addr>`` entries of an address list, CR/LF stripped, junk dropped."""
    out = []
    for name, addr in _getaddresses(clean_address(value)):
        if "@" not in addr or any(c in addr for c in '<>", '):
            continue
        if name:
            name = name.replace("\\", "\\\\").replace('"', '\\"')
            out.append(f'"{name}" <{addr}>')
        else:
            out.append(addr)
    return out


def get_maintainers(repo: Path, base: str, cache: Path, patches: list[Path]) -> tuple[list[str], list[str]]:
    """(To, Cc) for ``patches`` from MAINTAINERS at ``base``."""
    script = scripts_root(repo, base, cache) / "scripts" / "get_maintainer.pl"
    if not script.is_file():
        raise NapipatchError(repo, f"no scripts/get_maintainer.pl at {base[:12]}")
    with tempfile.TemporaryDirectory(prefix="napipatch-maint-") as td:
        for name in DATA:
            cp = gitutil.git(repo, "cat-file", "blob", f"{base}:{name}", check=False, text=False)
            if cp.returncode == 0:
                (Path(td) / name).write_bytes(cp.stdout)
        if not (Path(td) / "MAINTAINERS").is_file():
            raise NapipatchError(repo, f"no MAINTAINERS file at {base[:12]}")
        # The script runs in the scratch directory: relative patch paths
        # (the default store is ./series) would name nothing there.
        paths = [str(Path(p).absolute()) for p in patches]
        out = []
        for which in ("--nol", "--nom"):
            cp = subprocess.run(["perl", str(script), *_COMMON, which, *paths],
                                cwd=td, capture_output=True, text=True, errors="replace",
                                timeout=300)
            if cp.returncode != 0:
                last = (cp.stderr.strip().splitlines() or [f"exit status {cp.returncode}"])[-1]
                raise NapipatchError("get_maintainer.pl", last)
            out.append([a for line in cp.stdout.splitlines() for a in split_addresses(line)])
    return out[0], out[1]
