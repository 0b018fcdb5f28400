"""The guest kernel's config: the target's fragments plus the ``config``
fragment of each selftest directory the target lists in ``[selftests]
config-dirs``, as NIPA's executors build each selftest target with its
directory's ``config``.

One wider config for every series, not one per chosen set: a config change
recompiles most of the kernel (benchmarks/README.md, "Guest config"), so
a build directory per fragment set would make every series that chooses
another directory a cold build. The fragments are read from the trusted
base (``git show BASE:tools/testing/selftests/DIR/config``): the base and
the tip build with the same config, and the series cannot change it.

A flavour (debug) and a target without config-dirs (idpf, whose kernel is
the host's) are left as they are.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from napipatch.jobs import targets
from napipatch.jobs.executor import TESTS
from napipatch.jobs.results import selftests
from napipatch.jobs.targets import Target
from napipatch.kernel import kconfig
from napipatch.report.findings import Finding, Severity


def fragment_path(d: str) -> str:
    return f"{selftests.ROOT}/{d}/config"


def widen(target: Target, repo: Path, trusted: str | None) -> Target:
    """``target`` with its config-dirs' fragments at ``trusted`` as
    ``extra`` (a dir without a ``config`` there adds nothing)."""
    if target.flavour or not target.config_dirs or not trusted:
        return target
    extra = []
    for d in target.config_dirs:
        text = selftests.show(repo, trusted, fragment_path(d))
        if text is not None:
            extra.append((fragment_path(d).removeprefix(selftests.ROOT + "/"), text))
    return dataclasses.replace(target, extra=tuple(extra))


def load(name: str, repo: Path, trusted: str | None, flavour: str = "") -> Target:
    """The target as builds and boots use it: ``targets.load`` then ``widen``."""
    return widen(targets.load(name, flavour), repo, trusted)


def lacking(target: Target, obj: Path, src: Path) -> list[kconfig.Lacking]:
    """What the extra fragments ask for that the build's .config lacks, each
    with why (read from the Kconfig files of ``src``, the build's checkout)."""
    cfg = obj / ".config"
    if not target.extra or not cfg.exists():
        return []
    text = cfg.read_text(errors="replace")
    have = kconfig.parse(text)
    return [dataclasses.replace(x, why=kconfig.why_not(src, x.option, _srcarch(target.arch), have))
            for x in kconfig.lacking(list(target.extra), text)]


def _srcarch(arch: str) -> str:
    return "x86" if arch in ("x86_64", "i386", "x86") else arch


def by_dir(found: list[kconfig.Lacking]) -> dict[str, list[str]]:
    """selftest dir -> the options its fragment asked for and did not get."""
    out: dict[str, list[str]] = {}
    for x in found:
        out.setdefault(x.source.removesuffix("/config"), []).append(x.option)
    return out


def unmerged(target: Target, repo: Path, trusted: str | None, dirs: list[str]) -> list[str]:
    """The ``dirs`` (of chosen tests) with a ``config`` at ``trusted`` that
    the guest kernel does not merge (not in config-dirs, or a flavour)."""
    merged = {s.removesuffix("/config") for s, _t in target.extra}
    return sorted({d for d in dirs if d not in merged and trusted
                   and selftests.show(repo, trusted, fragment_path(d)) is not None})


def findings(target: Target, found: list[kconfig.Lacking], left: list[str],
             patch: int) -> list[Finding]:
    """The tests channel (check ``selftest``), info: which fragments went into the guest, which
    chosen tests' dirs' fragments did not (``left``), and one line per
    option a fragment asked for that the guest kernel lacks."""
    merged = [s for s, _t in target.extra]
    own = [f.name for f in target.fragments]
    details = [f"{target.name}'s own: {', '.join(own)}"]
    details += [f"tools/testing/selftests/{s}, read from the base" for s in merged]
    if left:
        why = "a flavour merges none" if target.flavour else \
            "not in the target's [selftests] config-dirs"
        details.append(f"not merged ({why}; their tests run with the kernel above): "
                       + ", ".join(f"{d}/config" for d in left))
    out = [Finding(check=TESTS, severity=Severity.INFO, patch=patch,
                   message=f"{target.label}: guest kernel config: {' + '.join(own + merged)}",
                   details="\n".join(details))]
    out += [Finding(check=TESTS, severity=Severity.INFO, patch=patch,
                    message=f"{target.name}: kernel config {x.line()}",
                    hint=f"tests in {x.source.removesuffix('/config')} that need it skip or fail "
                         "for want of it, at the base as at the tip")
            for x in found]
    return out


def explain_skips(cases: list, found: list[kconfig.Lacking], left: list[str]) -> None:
    """A skipped case in a dir whose fragment the guest lacks options of (or
    did not merge) says so in its reason: the likely cause of the skip."""
    want = by_dir(found)
    for c in cases:
        d = c.name.split(":")[0]
        if c.status != "skip" or (d not in want and d not in left):
            continue
        why = (f"the guest kernel lacks {', '.join(want[d])}, which {d}/config asks for"
               if d in want else f"{d}/config is not merged into the guest kernel")
        c.reason = f"{c.reason} ({why})" if c.reason else why
