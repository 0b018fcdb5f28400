"""Kernel config fragments and .config files: what they set, and why a
merged .config lacks an option a fragment asks for.

A fragment (a target's ``config.fragment``, a selftest directory's
``config``) and a ``.config`` share one syntax: ``CONFIG_X=value`` and
``# CONFIG_X is not set``. An option asked for as ``m`` is met by ``y``
(the guest kernels have no modules: Kconfig turns ``m`` into ``y`` there).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from napipatch.tree import gitutil

_SET = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_UNSET = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$")


def parse(text: str) -> dict[str, str]:
    """CONFIG_X -> its value ('y', 'm', 'n' for "is not set", a string or a
    number as written); a later line wins, as in the kernel's merge."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        m = _SET.match(line) or _UNSET.match(line)
        if m:
            out[m.group(1)] = m.group(2) if m.lastindex == 2 else "n"
    return out


def met(want: str, got: str) -> bool:
    """Whether ``got`` (the .config's value, 'n' when absent) gives ``want``."""
    return got == want or (want == "m" and got == "y")


@dataclass(frozen=True)
class Lacking:
    option: str  # CONFIG_X
    want: str
    got: str  # 'n': not set
    source: str  # the fragment asking for it (drivers/net/bonding/config)
    why: str = ""  # "no such option in this tree", "depends on NET_SCHED", ...

    def line(self) -> str:
        got = "not set" if self.got == "n" else f"={self.got}"
        why = f": {self.why}" if self.why else ""
        return f"{self.option}={self.want} ({self.source}) is {got} in the guest kernel{why}"


def lacking(fragments: list[tuple[str, str]], config: str) -> list[Lacking]:
    """Each option a fragment (source, text) asks for that ``config`` (a
    .config's text) does not give, once (the first fragment asking)."""
    have = parse(config)
    out: dict[str, Lacking] = {}
    for source, text in fragments:
        for opt, want in parse(text).items():
            got = have.get(opt, "n")
            if opt not in out and not met(want, got):
                out[opt] = Lacking(opt, want, got, source)
    return list(out.values())


_DEF = r"^\s*(menu)?config\s+{name}\s*$"


def why_not(src: Path, option: str, arch: str = "x86", have: dict[str, str] | None = None
            ) -> str:
    """Why Kconfig did not set ``option`` in the tree at ``src`` (a
    checkout): no definition at all (removed or renamed), a definition only
    under another architecture, no prompt (only another option's ``select``
    sets it), or its ``depends on`` lines (with ``have``, the .config: only
    the symbols in them it lacks)."""
    name = option.removeprefix("CONFIG_")
    cp = gitutil.git(src, "grep", "-n", "-E", _DEF.format(name=re.escape(name)), "--",
                     "*Kconfig*", check=False)
    hits = [h for h in cp.stdout.splitlines() if h]
    if not hits:
        return "no such option in this tree (removed or renamed)"
    own = [h for h in hits if not h.startswith("arch/") or h.startswith(f"arch/{arch}/")]
    if not own:
        where = sorted({h.split("/")[1] for h in hits})
        return f"defined only for {', '.join(where)}, not {arch}"
    path, line, _ = own[0].split(":", 2)
    deps, prompt = _entry(Path(src) / path, int(line))
    if have is not None and have.get("CONFIG_MODULES", "n") == "n" \
            and any(re.search(r"\bm\b", d) for d in deps):
        return f"module only (depends on m) and the kernel has no modules ({path})"
    if have is not None and deps:
        unset = sorted({w for d in deps for w in re.findall(r"\b[A-Z][A-Z0-9_]+\b", d)
                        if have.get(f"CONFIG_{w}", "n") == "n"})
        if not unset:
            return f"the menu or if around it is off ({path})"
        return f"depends on {', '.join(unset)}, not set ({path})"
    if deps:
        return f"depends on {' && '.join(deps)} ({path})"
    if not prompt:
        return f"no prompt: set only by an option that selects it ({path})"
    return f"the menu or if around it is off ({path})"


def _entry(kconfig: Path, line: int) -> tuple[list[str], bool]:
    """The ``depends on`` expressions of the entry starting at ``line``, and
    whether it has a prompt (a quoted string after its type)."""
    try:
        lines = kconfig.read_text(errors="replace").splitlines()
    except OSError:
        return [], True
    deps, prompt = [], False
    for ln in lines[line:]:
        s = ln.strip()
        if re.match(r"^(menu)?config\s|^(endmenu|endif|menu|if|choice|endchoice|source)\b", s):
            break
        if s.startswith("depends on"):
            deps.append(s.removeprefix("depends on").strip())
        elif re.match(r"^(bool|tristate|string|int|hex|prompt)\s+\"", s):
            prompt = True
    return deps, prompt
