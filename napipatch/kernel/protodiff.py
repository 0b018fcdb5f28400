"""Which prototypes a patch changes in the headers it touches.

For each ``.h`` file of a diff, the prototypes before and after the patch
(``kernel.cparse_calls.prototypes``: functions, static inlines,
function-like macros) are paired by name. A name is a candidate when the
patch's removed lines hit its old prototype or its added lines hit its
new one; a candidate then is

- ``changed``: declared before and after, with another key (return type,
  parameter types, variadic, kind); other declarations of it still
  carrying the old key (a ``!CONFIG`` stub) are its ``stale_decls``;
- ``renamed``: gone, and a new name with the very same signature appeared
  (in the same header first);
- ``removed``: gone, nothing took its place.

A name only a context line mentions, or one whose every declaration keeps
its key, is no change. The diff is a unidiff ``PatchSet``; the texts come
from ``pre_text(path)`` and ``post_text(path)`` (None: no such file).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from napipatch.kernel.cparse_calls import Proto, prototypes

Decls = dict[str, list[tuple[str, Proto]]]   # name -> (header, prototype), each declaration


@dataclass
class Change:
    kind: str                 # changed | removed | renamed
    name: str
    header: str
    old: Proto
    new: Proto | None = None  # the new prototype (for renamed: under new_name)
    new_name: str = ""
    stale_decls: list[tuple[str, Proto]] = field(default_factory=list)

    def describe(self) -> str:
        if self.kind == "changed":
            return f"{self.old.signature()}  ->  {self.new.signature()}"
        if self.kind == "renamed":
            return f"{self.name}() renamed to {self.new_name}()"
        return f"{self.name}() removed"


def diff_path(p: str) -> str:
    """A diff's file name without its ``a/`` or ``b/``."""
    return p[2:] if p[:2] in ("a/", "b/") else p


def line_sets(diff) -> tuple[dict[str, set[int]], dict[str, set[int]]]:
    """Per file: post-patch lines the patch adds, pre-patch lines it removes."""
    added: dict[str, set[int]] = {}
    removed: dict[str, set[int]] = {}
    for pf in diff:
        a = added.setdefault(diff_path(pf.target_file), set())
        r = removed.setdefault(diff_path(pf.source_file), set())
        for hunk in pf:
            for ln in hunk:
                if ln.is_added:
                    a.add(ln.target_line_no)
                elif ln.is_removed:
                    r.add(ln.source_line_no)
    return added, removed


def hits(lines: set[int], first: int, last: int) -> bool:
    return any(first <= n <= last for n in lines)


def _declarations(diff, pre_text, post_text, added, removed):
    """(every declaration before, every one after, the names the removed
    lines hit, the names the added lines hit), over the diff's headers."""
    pre_all: Decls = {}
    post_all: Decls = {}
    pre_cand: set[str] = set()
    post_cand: set[str] = set()
    for pf in diff:
        src, dst = diff_path(pf.source_file), diff_path(pf.target_file)
        path = dst if dst != "/dev/null" and not dst.endswith("dev/null") else src
        if not path.endswith(".h"):
            continue
        pre = pre_text(src) if not pf.is_added_file else None
        post = post_text(dst) if not pf.is_removed_file else None
        for p in prototypes(pre) if pre else []:
            pre_all.setdefault(p.name, []).append((src, p))
            if hits(removed.get(src, set()), p.line, p.end_line):
                pre_cand.add(p.name)
        for p in prototypes(post) if post else []:
            post_all.setdefault(p.name, []).append((dst, p))
            if hits(added.get(dst, set()), p.line, p.end_line):
                post_cand.add(p.name)
    return pre_all, post_all, pre_cand, post_cand


def _pick(entries: list[tuple[str, Proto]], lines_by_file: dict[str, set[int]]):
    """The declaration the patch's lines hit, else the first."""
    for path, p in entries:
        if hits(lines_by_file.get(path, set()), p.line, p.end_line):
            return path, p
    return entries[0]


def changes(diff, pre_text, post_text, added: dict[str, set[int]],
            removed: dict[str, set[int]]) -> list[Change]:
    """The prototypes the patch changes, removes or renames (see above);
    ``added``/``removed``: ``line_sets(diff)``."""
    pre_all, post_all, pre_cand, post_cand = _declarations(diff, pre_text, post_text,
                                                           added, removed)
    out: list[Change] = []
    gone, fresh = [], []
    for name in sorted(pre_cand | post_cand):
        before, after = pre_all.get(name), post_all.get(name)
        if before and after:
            if {p.key for _, p in before} == {p.key for _, p in after}:
                continue
            _, old = _pick(before, removed)
            header, new = _pick(after, added)
            if old.key == new.key:
                continue
            ch = Change("changed", name, header, old, new)
            # Another declaration (a !CONFIG stub) left with the old prototype.
            ch.stale_decls = [(h, p) for h, p in after
                              if p.key == old.key and p.key != new.key]
            out.append(ch)
        elif before:
            gone.append(_pick(before, removed))
        elif after and name in post_cand:
            fresh.append(_pick(after, added))
    return out + _gone(gone, fresh)


def _gone(gone: list[tuple[str, Proto]], fresh: list[tuple[str, Proto]]) -> list[Change]:
    """Each vanished prototype: renamed when a new name has its very signature
    (in its own header first), else removed."""
    out = []
    for header, old in gone:
        same = [(h, p) for h, p in fresh if p.key == old.key]
        same.sort(key=lambda hp: hp[0] != header)
        if same:
            h, p = same[0]
            fresh.remove(same[0])
            out.append(Change("renamed", old.name, h, old, p, new_name=p.name))
        else:
            out.append(Change("removed", old.name, header, old))
    return out
