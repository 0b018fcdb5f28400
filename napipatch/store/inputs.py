"""Turning a TARGET argument into a Series.

TARGET is a stored series (``NAME`` or ``NAME@vN``, also written
``series/NAME@vN``), a directory of format-patch files, an mbox file, or a
revision range in the kernel tree (``HEAD~3..HEAD``).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from napipatch.errors import NapipatchError
from napipatch.mails import mail as mailmod
from napipatch.mails.series import Series, assemble, valid_name
from napipatch.store.store import Store
from napipatch.tree import gitutil


def resolve(target: str, store: Store, tree: Path | None) -> Series:
    p = Path(target)
    kind = mailmod.input_kind(target)
    # "series/NAME@vN" names the store even though no such path exists.
    m = re.fullmatch(r"(?:.*/)?([^/@]+)(@v?\d+)?", target)
    if kind == "dir" and not (p / "series.toml").is_file():
        return assemble(mailmod.read_patch_dir(p), target, name=p.name)
    if kind == "file":
        return assemble(mailmod.read_mbox(p), target, name=p.stem)
    if m and valid_name(m.group(1)) and (store.path(m.group(1)) / "series.toml").is_file():
        return store.load(m.group(1) + (m.group(2) or ""))
    if kind == "dir" and (p / "series.toml").is_file():
        return store.load(p.name)
    if ".." in target and tree is not None:
        return from_range(Path(tree), target)
    if ".." in target:
        raise NapipatchError(target, "a revision range needs --tree")
    raise NapipatchError(target, f"no such file, directory or series in {store.root}")


def from_range(tree: Path, revrange: str) -> Series:
    repo = gitutil.require_repo(tree)
    start = revrange.split("..")[0] or "HEAD"
    cp = gitutil.git(repo, "rev-list", "--count", revrange, check=False)
    if cp.returncode != 0:
        raise NapipatchError(revrange, (cp.stderr.strip().splitlines() or ["bad range"])[-1])
    count = int(cp.stdout.strip() or 0)
    if count == 0:
        raise NapipatchError(revrange, "no commits in range")
    with tempfile.TemporaryDirectory(prefix="napipatch-range-") as td:
        # One commit gets no cover letter: base-commit then ends the patch.
        cover = ["--cover-letter"] if count > 1 else []
        gitutil.git(repo, "format-patch", "-q", *cover, f"--base={start}", "-o", td, revrange)
        files = sorted(Path(td).iterdir())
        mails = []
        for f in files:
            mails += [mailmod.parse_message(raw, f.name, env)
                      for env, raw in mailmod.split_mbox(mailmod.read_regular(f), f.name)]
    series = assemble(mails, revrange, name=revrange)
    # The cover letter of a range is format-patch's placeholder: the user
    # has not written it yet, so checks must not judge its text.
    series.extra["synthetic-cover"] = series.cover is not None
    return series
