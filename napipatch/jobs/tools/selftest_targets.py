"""Which selftest targets a patch can change, as NIPA's build_tools would
see them: a target whose files it touches, a target including a uapi
header it changes, a target building tools/net/ynl (net) when a netlink
spec or tools/net/ynl changes. NIPA builds every target (less its
SKIP_TARGETS); napipatch builds these, bounded, and says which.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from napipatch.tree import gitutil

SELFTESTS = "tools/testing/selftests/"
# NIPA's tests/patch/build_tools/build_tools.sh: "very slow or don't build"
SKIP_TARGETS = ("bpf", "dt", "kvm", "landlock", "livepatch", "lsm", "sched_ext", "user_events",
                "mm", "powerpc", "filesystems/mount-notify", "ublk")
MAX_TARGETS = 4
_UAPI = re.compile(r"^(?:tools/)?include/uapi/(.+\.h)$")


@dataclass
class Picked:
    """The targets of one patch, and what was left out and why."""

    targets: list[str] = field(default_factory=list)
    why: dict[str, str] = field(default_factory=dict)    # target -> the path that chose it
    skipped: list[str] = field(default_factory=list)     # NIPA's SKIP_TARGETS hit
    dropped: list[str] = field(default_factory=list)     # past MAX_TARGETS
    unseen: list[str] = field(default_factory=list)      # tools/ paths no target maps


def all_targets(repo: Path, commit: str) -> list[str]:
    """``TARGETS += x`` of tools/testing/selftests/Makefile at ``commit``."""
    text = gitutil.git(repo, "show", f"{commit}:{SELFTESTS}Makefile", check=False).stdout
    return re.findall(r"^TARGETS \+= (\S+)", text or "", re.MULTILINE)


def target_of(path: str, targets: list[str]) -> str | None:
    """The longest target whose directory holds ``path``."""
    if not path.startswith(SELFTESTS):
        return None
    rel = path[len(SELFTESTS):]
    hits = [t for t in targets if rel.startswith(t + "/")]
    return max(hits, key=len) if hits else None


def _grep_targets(repo: Path, commit: str, needle: str, targets: list[str]) -> list[str]:
    cp = gitutil.git(repo, "grep", "-l", "-F", needle, commit, "--", SELFTESTS, check=False)
    found = [ln.split(":", 1)[1] for ln in cp.stdout.splitlines() if ":" in ln]
    return sorted({t for p in found if (t := target_of(p, targets))})


def pick(repo: Path, commit: str, paths: list[str]) -> Picked:
    """The targets ``paths`` (changed by the patch at ``commit``) reach."""
    targets = all_targets(repo, commit)
    out = Picked()
    chosen: dict[str, str] = {}
    for p in paths:
        t = target_of(p, targets)
        if t:
            chosen.setdefault(t, p)
            continue
        m = _UAPI.match(p)
        if m:
            for t in _grep_targets(repo, commit, m.group(1), targets):
                chosen.setdefault(t, p)
        elif p.startswith(("tools/net/ynl/", "Documentation/netlink/specs/")):
            for t in _grep_targets(repo, commit, "ynl.mk", targets):
                chosen.setdefault(t, p)
        elif p.startswith("tools/") and not p.startswith(SELFTESTS):
            out.unseen.append(p)
    # the targets a patch touches directly first, then those a header reaches
    order = sorted(chosen, key=lambda t: (not chosen[t].startswith(SELFTESTS), t))
    for t in order:
        if t in SKIP_TARGETS or any(t.startswith(s + "/") for s in SKIP_TARGETS):
            out.skipped.append(t)
        elif len(out.targets) < MAX_TARGETS:
            out.targets.append(t)
            out.why[t] = chosen[t]
        else:
            out.dropped.append(t)
    return out
