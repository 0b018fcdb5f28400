"""The format the netdev CI wants of a selftest directory's lists.

A selftest directory (``tools/testing/selftests/net/...``) names its tests
in its ``Makefile`` (``TEST_PROGS := \\`` then one item a line), the
kernel options they need in ``config`` and its built binaries in
``.gitignore``. The CI (NIPA's ``check_selftest``) fails a patch when the
ones it touches break its format rules; this module states those rules as
functions of a file's text, each problem at its 1-based line with a
message that holds no line number (so problems before and after a patch
compare as text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    line: int
    message: str


_ASSIGN = re.compile(r"^([A-Z_][A-Z0-9_]*)\s*(:?=|\+=)(.*)$")


def _listed(name: str, rest: str) -> bool:
    """Whether the CI checks the list ``name`` starts: not a computed one
    (``$(wildcard ...)``), not flags or libraries (order matters there),
    not a two-letter variable (``CC``)."""
    return not rest.startswith("$") and len(name) >= 3 and "FLAGS" not in name \
        and "LIBS" not in name


def makefile_blocks(text: str) -> dict[str, list[list[tuple[int, str]]]]:
    """Each checked variable's blocks: runs of consecutive lines assigning it
    (``VAR := \\`` and its items, or ``VAR += x`` lines one after another),
    as [(line, text)], an item sharing the assignment's line as ``\\t<item>``."""
    entries: dict[str, list[tuple[int, str]]] = {}
    cur: list | None = None
    for i, line in enumerate(text.split("\n"), 1):
        m = _ASSIGN.match(line)
        if m:
            name, rest = m.group(1), m.group(3).strip()
            cur = entries.setdefault(name, []) if _listed(name, rest) else None
            if cur is not None and rest != "\\":
                cur.append((i, "\t" + rest))
        elif cur is not None:
            cur.append((i, line))
        if not line.endswith("\\"):
            cur = None
    blocks: dict[str, list[list[tuple[int, str]]]] = {}
    for name, rows in entries.items():
        runs: list[list[tuple[int, str]]] = []
        for row in rows:
            if runs and runs[-1][-1][0] + 1 == row[0]:
                runs[-1].append(row)
            else:
                runs.append([row])
        if runs:
            blocks[name] = runs
    return blocks


def _item(line: str) -> str:
    item = line.strip()
    return item[:-1].strip() if item.endswith("\\") else item


def _dir_key(item: str) -> tuple[int, str]:
    return item.count("/"), item.lower()


def _block(name: str, block: list[tuple[int, str]]) -> list[Problem]:
    out: list[Problem] = []
    items = block[:-1] if block and block[-1][1].strip().startswith("#") else block
    for n, line in items:
        item = _item(line)
        if not line.startswith("\t"):
            out.append(Problem(n, f"{name}: '{item}' is not indented with a tab"))
        # After the tab only the item: no second value, no stray blank.
        raw = line[1:]
        raw = raw[:-2].strip() if raw.endswith(" \\") else raw
        if " " in raw and "$" not in raw:
            out.append(Problem(n, f"{name}: '{item}' holds more than one item or a stray "
                                  "blank (one item a line, after one tab)"))
    if len(block) > 1:
        n, last = block[-1]
        if not last.strip().startswith("#"):
            out.append(Problem(n, f"{name}: the list does not end with a '# end of {name}' "
                                  "comment line"))
        elif len(last.strip()) > 5 and name not in last:
            out.append(Problem(n, f"{name}: the comment ending the list does not name {name}"))
    sortable = [(n, _item(line)) for n, line in items if not _item(line).startswith("$")]
    for (_, a), (n, b) in zip(sortable, sortable[1:]):
        # Sorted either as plain text or by depth, then case-blind.
        if not a < b and _dir_key(a) > _dir_key(b):
            out.append(Problem(n, f"{name}: '{b}' should come before '{a}'"))
    return out


def makefile_problems(text: str) -> list[Problem]:
    """Each list one block (a variable assigned once), one item a line,
    tab-indented, sorted, closed by a ``# end of VAR`` comment."""
    out: list[Problem] = []
    for name, blocks in makefile_blocks(text).items():
        for block in blocks:
            out += _block(name, block)
        for block in blocks[1:]:
            where = block[0][0] if block else 1
            out.append(Problem(where, f"{name} is assigned in more than one block "
                                      "(one list a variable)"))
    return sorted(out, key=lambda p: p.line)


def _entries(text: str, keep) -> list[tuple[int, str]]:
    return [(i, line) for i, line in enumerate(text.split("\n"), 1)
            if line.strip() and not line.strip().startswith("#") and keep(line)]


def config_problems(text: str) -> list[Problem]:
    """``CONFIG_X=y`` lines in order of their names, underscores ignored."""
    def key(line: str) -> str:
        return line.split("=")[0].strip().replace("_", "")
    out = []
    rows = _entries(text, lambda line: "=" in line)
    for (_, a), (n, b) in zip(rows, rows[1:]):
        if key(b) < key(a):
            out.append(Problem(n, f"{b.strip()} should come before {a.strip()}"))
    return out


def gitignore_problems(text: str) -> list[Problem]:
    """Entries in order (as plain text or case- and underscore-blind)."""
    def key(line: str) -> str:
        return line.strip().lower().replace("_", "")
    out = []
    rows = _entries(text, lambda line: True)
    for (_, a), (n, b) in zip(rows, rows[1:]):
        if b.strip() < a.strip() and key(b) < key(a):
            out.append(Problem(n, f"{b.strip()} should come before {a.strip()}"))
    return out


def problems(path: str, text: str) -> list[Problem] | None:
    """The format problems of a selftest list file (None: not such a file)."""
    base = path.rsplit("/", 1)[-1]
    fn = {"Makefile": makefile_problems, "config": config_problems,
          ".gitignore": gitignore_problems}.get(base)
    return None if fn is None else fn(text)
