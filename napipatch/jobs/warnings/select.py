"""Which objects a patch can change, for one configuration.

- the ``.o`` of every changed ``.c``/``.S`` the configuration builds;
- for a changed header, the ``.c`` files that use what the patch changed in
  it, then two of its other includers (``kernel.includers``), bounded: at
  most ``limit`` objects a patch for headers and build files together, the
  first ones the configuration builds;
- for a changed Makefile, Kbuild or Kconfig, the objects of its directory.

Each bounded choice is a ``Pick`` that says how many candidates there were
and which were compiled, so a report never hides that it sampled.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from napipatch.kernel import includers
from napipatch.kernel.kbuild import Kbuild
from napipatch.kernel.kbuildout import object_of_source
from napipatch.tree import gitutil

# An identifier more .c files use than this says little about which to build.
RARE = 100
# Includers compiled for a header besides the users of what changed in it.
PLAIN = 2
# Files whose change reaches every object (compiler flags, kbuild rules).
_EVERYWHERE = ("Makefile", "scripts/Makefile.", "scripts/Kbuild.include",
               "arch/x86/Makefile")


@dataclass
class PatchChanges:
    patch: int
    parent: str
    commit: str
    sources: list[str] = field(default_factory=list)  # .c/.S at the commit
    removed: list[str] = field(default_factory=list)  # .c/.S the patch deletes
    headers: list[str] = field(default_factory=list)
    build_dirs: list[str] = field(default_factory=list)  # of a changed Makefile/Kbuild/Kconfig
    everywhere: list[str] = field(default_factory=list)  # top Makefile, scripts/Makefile.*
    texts: dict[str, str | None] = field(default_factory=dict)  # changed file -> text at commit
    diff: str = ""  # git diff -U0 parent..commit

    @property
    def relevant(self) -> bool:
        return bool(self.sources or self.headers or self.build_dirs or self.everywhere)

    @property
    def files(self) -> list[str]:
        return sorted(self.texts)


def changes(repo: Path, parent: str, commit: str, patch: int) -> PatchChanges:
    ch = PatchChanges(patch, parent, commit)
    out = gitutil.out(repo, "diff", "--no-renames", "--name-status", parent, commit)
    for line in out.splitlines():
        status, _, path = line.partition("\t")
        deleted = status.startswith("D")
        ch.texts[path] = None if deleted else _blob(repo, commit, path)
        base = os.path.basename(path)
        if object_of_source(path) and not path.startswith(("tools/", "scripts/")):
            (ch.removed if deleted else ch.sources).append(path)
        elif path.endswith(".h") and not path.startswith("tools/"):
            ch.headers.append(path)
        elif path == "Makefile" or path.startswith(_EVERYWHERE[1:]):
            ch.everywhere.append(path)
        elif base in ("Makefile", "Kbuild") or base.startswith("Kconfig"):
            if not path.startswith(("tools/", "Documentation/", "scripts/")):
                ch.build_dirs.append(os.path.dirname(path))
    ch.build_dirs = sorted(set(ch.build_dirs))
    ch.diff = gitutil.out(repo, "diff", "--no-renames", "-U0", parent, commit, "--",
                          *(ch.sources + ch.headers)) if ch.sources or ch.headers else ""
    return ch


def _blob(repo: Path, commit: str, path: str) -> str | None:
    cp = gitutil.git(repo, "cat-file", "blob", f"{commit}:{path}", check=False)
    return cp.stdout if cp.returncode == 0 else None


@dataclass
class Pick:
    why: str  # the header or build file
    candidates: int  # .c files (or objects) it could have meant
    users: int = 0  # of them, those using what the patch changed in the header
    picked: list[str] = field(default_factory=list)  # objects compiled for it

    def to_json(self) -> dict:
        return {"why": self.why, "candidates": self.candidates, "users": self.users,
                "picked": self.picked}


def select(src: Path, kb: Kbuild, ch: PatchChanges, limit: int
           ) -> tuple[list[str], list[Pick]]:
    """The objects to build for ``ch`` (checked out: the patch's parent),
    own sources first, and what was sampled for headers and build files."""
    own = [o for o in (object_of_source(p) for p in ch.sources + ch.removed)
           if o and kb.builds(o)]
    queues: list[tuple[Pick, list[str]]] = []
    for h in ch.headers:
        queues.append(_header_queue(src, h, ch, limit))
    for d in ch.build_dirs:
        objs = kb.objects_of(d)
        queues.append((Pick(d + "/", len(objs)), objs))
    if ch.everywhere:
        near = sorted({os.path.dirname(p) for p in ch.sources + ch.headers} or {"net/core"})
        objs = [o for d in near for o in kb.objects_of(d)]
        queues.append((Pick(", ".join(ch.everywhere), len(objs)), objs))
    chosen = list(dict.fromkeys(own))
    _round_robin(kb, queues, chosen, limit)
    return chosen, [p for p, _q in queues]


def _round_robin(kb: Kbuild, queues: list[tuple[Pick, list[str]]], chosen: list[str],
                 limit: int) -> None:
    """Take from each queue in turn the next object the config builds, until
    ``limit`` objects beyond the patch's own are chosen."""
    taken = 0
    pos = [0] * len(queues)
    while taken < limit:
        moved = False
        for i, (pick, objs) in enumerate(queues):
            while pos[i] < len(objs) and taken < limit:
                o = objs[pos[i]]
                pos[i] += 1
                if o in chosen:
                    if o not in pick.picked:
                        pick.picked.append(o)  # the patch's own object covers it too
                    continue
                if kb.builds(o):
                    chosen.append(o)
                    pick.picked.append(o)
                    taken += 1
                    moved = True
                    break
        if not moved:
            return


def _header_queue(src: Path, header: str, ch: PatchChanges, limit: int
                  ) -> tuple[Pick, list[str]]:
    """What to compile for a changed header, most concerned first: the .c
    files using a rare identifier the patch changed in it (they see the
    header, however many headers lie between), then ``PLAIN`` of its other
    includers, nearest first (a warning inside the header shows in any)."""
    found = includers.find(src, header, ch.texts, enough=max(4 * limit, 100))
    idents = includers.changed_identifiers(_file_diff(ch.diff, header))
    used = {i: fs for i, fs in includers.uses(src, idents).items() if len(fs) <= RARE}
    for p in ch.sources:  # the patch's own files, as they are at the patch
        text = ch.texts.get(p) or ""
        for i in idents:
            if re.search(rf"\b{re.escape(i)}\b", text):
                used.setdefault(i, set()).add(p)
    users = set().union(*used.values()) if used else set()
    near = ch.sources + ch.headers
    others = includers.rank(sorted(set(found.direct + found.indirect) - users), {}, near)
    order = includers.rank(sorted(users), used, near) + others[:PLAIN]
    pick = Pick(header, len(users | set(found.direct) | set(found.indirect)), users=len(users))
    return pick, [o for o in (object_of_source(c) for c in order) if o]


def _file_diff(diff: str, path: str) -> str:
    out, on = [], False
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            on = line.endswith(f" b/{path}")
        if on:
            out.append(line)
    return "\n".join(out)
