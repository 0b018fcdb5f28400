"""Which kernel selftests a boot runs, and why each: the ones the series
adds or changes, then the ones that exercise what it changes, then the
target's list.

What a series changes leads to tests in two ways:

- **A netlink family.** A changed spec (``Documentation/netlink/specs/X.yaml``),
  its kernel side (``net/core/X-genl.c``, the generated ``X-genl-gen.c``,
  ``X-nl-gen.c``) or its uAPI header (``include/uapi/linux/X.h``) leads to the
  selftest programs that talk to the family through ynl: those using the
  selftests' wrapper class that loads ``X.yaml`` (``NetdevFamily``) or
  naming ``X.yaml`` themselves (netdev: ``net:nl_netdev.py``).
- **A name userspace uses.** A sysctl (``.procname = "busy_poll"``), a sysfs
  attribute (an ``__ATTR``/``DEVICE_ATTR``/``NETDEVICE_SHOW`` name, or the
  ``What:`` of a changed ``Documentation/ABI`` entry) or an ethtool string
  (a quoted name added under ``net/ethtool/`` or in a driver's
  ``*ethtool*.c``) leads to the programs that use it (``/threaded``,
  ``.busy_poll``; ethtool names as words).
- **A program named after the change.** A changed kernel file's directory,
  its name and the functions its hunks are in give words (``net/ethtool/rings.c``
  in ``ethnl_set_rings``: ethtool, rings, ethnl); a program whose name and
  directory share two of them is chosen (``drivers/net/netdevsim:ethtool-ring.sh``),
  best match first: a path no program greps for (a WARN_ON in a driver's
  ethtool op) is still run by the tests written for it.

Only programs a selftests Makefile lists in ``TEST_PROGS`` are chosen, at
most ``per_reason`` for each family or name and ``limit`` in all (the
series' own and the target's are not counted); what the bound leaves out is
said. Programs under a ``hw`` directory need a real NIC: in a guest
(netdevsim) they are left out, and said.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from napipatch.jobs.executor import TESTS
from napipatch.jobs.results import selftests
from napipatch.report.findings import Finding, Severity
from napipatch.tree import gitutil

ROOT = selftests.ROOT
SPECS = "Documentation/netlink/specs"
LIMIT = 6  # tests chosen for what the series changes, besides its own and the target's
PER_REASON = 3  # tests chosen for one family or one name

_FAMILY_FILE = re.compile(r"(?:^|/)(?P<fam>[a-z0-9_]+(?:-[a-z0-9_]+)*?)"
                          r"(?:-genl(?:-gen)?|-nl-gen|-nl|-user)?\.[ch]$")
_WRAPPER = re.compile(r"class (\w+)\(YnlFamily\):(.*?)(?=^class |\Z)", re.S | re.M)
_YAML = re.compile(r"['\"/]([a-z0-9_-]+)\.yaml")
_PROCNAME = re.compile(r"\.procname\s*=\s*\"([A-Za-z0-9_]+)\"")
_SYSFS = re.compile(r"\b(?:__ATTR(?:_RO|_RW|_WO)?|DEVICE_ATTR(?:_RO|_RW|_WO)?|NETDEVICE_SHOW_R[OW]"
                    r"|NETSTAT_ENTRY|BUS_ATTR_R[OW])\(\s*([a-z][a-z0-9_]{2,})\b")
_ABI_WHAT = re.compile(r"^What:\s*(\S+)")
_QUOTED = re.compile(r"\"([a-z][a-z0-9]*(?:[-_][a-z0-9]+)+)\"")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Chosen:
    name: str  # dir:prog, as kselftest names it
    reason: str  # why it runs, as the report says it (several: "; ")


@dataclass
class Choice:
    tests: list[Chosen]
    left_out: list[Chosen]  # matched, but past the bound
    unmatched: list[str]  # what the series changes that no selftest program uses (reasons)

    def why(self) -> dict[str, str]:
        return {c.name: c.reason for c in self.tests}


def choose(repo: Path, base: str | None, tip: str, target_list: list[str],
           limit: int = LIMIT, per_reason: int = PER_REASON,
           ignore: tuple[str, ...] = (), hw: bool = False) -> Choice:
    """The selftests to run at ``tip``, each with its reason; ``ignore``:
    never chosen for what the series changes (the target's kernel fails them);
    ``hw``: a real NIC, so programs under a ``hw`` dir may be chosen (in a
    guest they fail: "Test does not work on netdevsim")."""
    out: dict[str, list[str]] = {}
    left: list[Chosen] = []
    unmatched: list[str] = []
    series = base is not None and base != tip
    for name in selftests.changed(repo, base, tip) if series else []:
        out.setdefault(name, ["added or changed by the series"])
    if series:
        files = gitutil.out(repo, "diff", "--name-only", base, tip).splitlines()
        diff = gitutil.out(repo, "diff", "-U0", "--no-color", base, tip)
        progs = _Progs(repo, tip)
        related = 0
        # (reason, programs, whether to say that none matched): a file no
        # program is named after is the rule, not news
        leads = [(r, progs.matching(p), True) for r, p in _leads(repo, base, tip, files, diff)]
        leads += [(r, progs.named(w), False) for r, w in _named(files, diff)]
        for reason, everyone, say in leads:
            if not everyone and say:
                unmatched.append(reason)
            for t in everyone:
                if t in out:
                    out[t].append(reason)  # chosen already: one more reason
            found = [t for t in everyone if t not in out]
            left += [Chosen(t, f"the target ignores it; {reason}") for t in found if t in ignore]
            left += [Chosen(t, f"it needs a real NIC; {reason}") for t in found
                     if not hw and _needs_nic(t) and t not in ignore]
            found = [t for t in found if t not in ignore and (hw or not _needs_nic(t))]
            for i, t in enumerate(found):
                if i < per_reason and related < limit:
                    out[t] = [reason]
                    related += 1
                else:
                    left.append(Chosen(t, reason))
    for name in target_list:
        out.setdefault(name, []).append("the target's list")
    left = [c for c in dict.fromkeys(left) if c.name not in out]
    return Choice([Chosen(n, "; ".join(r)) for n, r in out.items()], left, unmatched)


def _leads(repo: Path, base: str, tip: str, files: list[str], diff: str
           ) -> list[tuple[str, str]]:
    """(reason, git grep -E pattern) for each family and name the series changes."""
    leads: list[tuple[str, str]] = []
    specs = {posixpath.splitext(posixpath.basename(p))[0]
             for p in gitutil.out(repo, "ls-tree", "--name-only", tip, f"{SPECS}/").splitlines()
             if p.endswith(".yaml")}
    wrappers = _wrappers(repo, tip)
    fams: dict[str, str] = {}
    for f in files:
        fam = _family_of(f, specs)
        if fam:
            fams.setdefault(fam, f)
    for fam, f in fams.items():
        words = [re.escape(w) for w in wrappers.get(fam, [])] + [re.escape(fam) + r"\.yaml"]
        leads.append((f"exercises netlink family {fam} ({f} changed)",
                      r"\b(" + "|".join(words) + r")\b"))
    for kind, name, where in _names(repo, tip, diff):
        if kind == "ethtool":
            pattern = r"\b" + re.escape(name) + r"\b"
        else:  # a path's last part, or a dotted sysctl
            pattern = r"[./]" + re.escape(name) + r"\b"
        leads.append((f"uses {kind} {name} ({where} changed)", pattern))
    return leads


_WORD = re.compile(r"[a-z][a-z0-9]*")
_FUNC = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
# words too common to tie a program to a change
_GENERIC = {"net", "core", "dev", "drivers", "driver", "main", "common", "lib", "util", "utils",
            "test", "tests", "set", "get", "init", "exit", "open", "close", "add", "del", "new",
            "free", "alloc", "ops", "info", "data", "run", "check", "kernel", "linux", "include",
            "static", "void", "int", "struct", "const", "unsigned", "bool", "inline", "return",
            "selftests", "tools", "testing", "ethernet", "netdevice", "uapi", "err", "priv"}


def _words(text: str) -> set[str]:
    """Lower-case words of a name (split at ``_``, ``-``, ``.``, ``/``), 3
    letters or more, not generic, a plural's ``s`` dropped (rings: ring)."""
    out = set()
    for w in _WORD.findall(text.lower()):
        w = w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w
        if len(w) >= 3 and w not in _GENERIC:
            out.add(w)
    return out


def _named(files: list[str], diff: str) -> list[tuple[str, set[str]]]:
    """(reason, words) for each changed kernel source file: its directory,
    its name and the functions its hunks are in."""
    funcs: dict[str, set[str]] = {}
    path = ""
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else ""
        elif line.startswith("@@") and path:
            ctx = line.split("@@", 2)[-1]
            funcs.setdefault(path, set()).update(_FUNC.findall(ctx))
    out = []
    for f in files:
        if f.startswith(("Documentation/", "tools/", "scripts/")) or not f.endswith((".c", ".h")):
            continue
        d, name = posixpath.split(f)
        words = _words(posixpath.basename(d)) | _words(posixpath.splitext(name)[0])
        for fn in sorted(funcs.get(f, ())):
            words |= _words(fn)
        if words:
            out.append((f"named after {f} ({', '.join(sorted(words))})", words))
    return out


def _family_of(path: str, specs: set[str]) -> str | None:
    """The netlink family a changed file belongs to, if any."""
    if path.startswith(f"{SPECS}/") and path.endswith(".yaml"):
        fam = posixpath.splitext(posixpath.basename(path))[0]
        return fam if fam in specs else None
    if path.startswith(ROOT + "/") or path.startswith("Documentation/"):
        return None
    base = posixpath.basename(path)
    if path.startswith(("include/uapi/linux/", "tools/include/uapi/linux/")):
        stem = base[:-2] if base.endswith(".h") else ""
        return stem if stem in specs else None
    m = _FAMILY_FILE.search(path)
    if m and ("genl" in base or "-nl" in base or base.endswith("-user.c")):
        fam = m.group("fam")
        return fam if fam in specs else None
    return None


def _wrappers(repo: Path, tip: str) -> dict[str, list[str]]:
    """family -> the selftests' ynl wrapper classes loading its spec (netdev: NetdevFamily)."""
    out: dict[str, list[str]] = {}
    cp = gitutil.git(repo, "grep", "-l", "(YnlFamily):", tip, "--", ROOT, check=False)
    for hit in cp.stdout.splitlines():
        text = selftests.show(repo, tip, hit.partition(":")[2]) or ""
        for cls, body in _WRAPPER.findall(text):
            for fam in _YAML.findall(body)[:1]:
                out.setdefault(fam, []).append(cls)
    return out


def _names(repo: Path, tip: str, diff: str) -> list[tuple[str, str, str]]:
    """(kind, name, file) of each sysctl, sysfs or ethtool name the diff adds
    or changes."""
    out: dict[tuple[str, str], str] = {}
    path, abi, newline = "", "", 0
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else ""
            abi = selftests.show(repo, tip, path) if path.startswith("Documentation/ABI/") else ""
            continue
        m = _HUNK.match(line)
        if m:
            newline = int(m.group(1))
            if abi and path:
                what = _abi_what(abi, newline)
                if what:
                    out.setdefault(("sysfs", posixpath.basename(what)), path)
            continue
        if not line.startswith("+") or not path or path.startswith(("Documentation/", ROOT)):
            continue
        for name in _PROCNAME.findall(line):
            out.setdefault(("sysctl", name), path)
        for name in _SYSFS.findall(line):
            out.setdefault(("sysfs", name), path)
        if path.startswith("net/ethtool/") or "ethtool" in posixpath.basename(path):
            for name in _QUOTED.findall(line):
                out.setdefault(("ethtool", name), path)
    return [(k, n, p) for (k, n), p in out.items()]


def _abi_what(text: str, line: int) -> str | None:
    """The ``What:`` of the ABI entry holding ``line`` (1-based); the last
    path part, for a name tests use (``/sys/class/net/<iface>/threaded``)."""
    what = None
    for i, ln in enumerate(text.splitlines(), 1):
        if i > max(line, 1):
            break
        m = _ABI_WHAT.match(ln)
        if m:
            what = m.group(1)
    if what and re.fullmatch(r"[A-Za-z0-9_-]{3,}", posixpath.basename(what)):
        return what
    return None


class _Progs:
    """The TEST_PROGS programs at ``tip`` whose source matches a pattern."""

    def __init__(self, repo: Path, tip: str):
        self.repo, self.tip = repo, tip
        self._dirs: dict[str, tuple[str, list[str]] | None] = {}
        self._every: list[str] | None = None

    def matching(self, pattern: str) -> list[str]:
        cp = gitutil.git(self.repo, "grep", "-l", "-E", pattern, self.tip, "--", ROOT,
                         check=False)
        names: list[str] = []
        for hit in cp.stdout.splitlines():
            path = hit.partition(":")[2]
            name = self._prog(path)
            if name:
                names.append(name)
        return sorted(dict.fromkeys(names), key=_rank)

    def named(self, words: set[str]) -> list[str]:
        """The programs whose name and last directory share two or more of
        ``words`` (a word matches one it starts, at 4 letters or more: ring,
        ringparam), the most shared first."""
        scored = []
        for name in self._all():
            d, _, prog = name.partition(":")
            mine = _words(posixpath.splitext(prog)[0]) | _words(posixpath.basename(d))
            hit = sum(1 for m in mine if any(w == m or (len(m) >= 4 and w.startswith(m))
                                             for w in words))
            if hit >= 2:
                scored.append((-hit, _rank(name), name))
        return [n for *_k, n in sorted(scored)]

    def _all(self) -> list[str]:
        """Every TEST_PROGS program at ``tip``."""
        if self._every is None:
            mks = gitutil.out(self.repo, "ls-tree", "-r", "--name-only", self.tip, "--",
                              ROOT).splitlines()
            self._every = []
            for mk in mks:
                if posixpath.basename(mk) == "Makefile":
                    d = posixpath.dirname(mk)
                    for prog in self._progs_of(d):
                        self._every.append(f"{d[len(ROOT) + 1:]}:{prog}")
        return self._every

    def _progs_of(self, d: str) -> list[str]:
        if d not in self._dirs:
            mk = selftests.show(self.repo, self.tip, f"{d}/Makefile")
            progs = selftests.test_progs(mk) if mk else []
            self._dirs[d] = (d[len(ROOT) + 1:], progs) if progs else None
        found = self._dirs[d]
        return found[1] if found else []

    def _prog(self, path: str) -> str | None:
        d = posixpath.dirname(path)
        rel = posixpath.basename(path)
        return f"{d[len(ROOT) + 1:]}:{rel}" if rel in self._progs_of(d) else None


def _needs_nic(name: str) -> bool:
    return "hw" in name.partition(":")[0].split("/")


def _rank(name: str) -> tuple:
    """net/ first, then the shallower dirs; hw/ (a real NIC) last."""
    d = name.partition(":")[0]
    return ("hw" in d.split("/"), d != "net", d.count("/"), name)


def finding(target: str, choice: Choice, patch: int) -> Finding:
    """The report's line on which selftests ran and why (``TESTS``, info)."""
    lines = [f"{c.name}: {c.reason}" for c in choice.tests]
    lines += [f"{c.name}: not run, "
              + (c.reason.replace("; ", " (", 1) + ")"
                 if c.reason.startswith(("the target ignores", "it needs a real NIC"))
                 else f"past the bound ({c.reason})") for c in choice.left_out]
    lines += [f"no selftest program found that {r[0].lower()}{r[1:]}" for r in choice.unmatched]
    n = len(choice.tests)
    return Finding(check=TESTS, severity=Severity.INFO, patch=patch,
                   message=f"{target}: {n} selftest{'s' if n != 1 else ''} chosen: "
                           + ", ".join(c.name for c in choice.tests),
                   details="\n".join(lines))
