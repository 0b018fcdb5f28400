"""The checks: one module each, declaring one check with ``@check(...)``.

A module holds a docstring in four sections (What it catches / Why a
reviewer cares / Example / Fix) and one ``run`` that yields findings,
declared here with what the engine needs to know about it. The engine's
registry (napipatch.engine.registry) discovers and validates them.

Two kinds, one declaration. A static check (``needs`` diff, scripts or
tree) is ``run(ctx)`` on the mails and the applied tree, by the engine. A
job check (``needs`` build or boot) reads the result of a job that builds
or boots the applied series (``job``, one of ``JOBS``): ``run(job)`` gets
that job's outcome (``napipatch.pipeline.jobchecks.JobOutcome``) and
returns the findings that are this check's, or None when the job has no
result for it (a busybox boot runs no selftests). Several checks may read
one job (``build-w1`` and ``sparse`` one W=1 C=1 build): it runs once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

# The jobs a job check reads, and what each does. Per-target jobs run once
# for each target (virtio-net, idpf) and give one result per target
# (``build/virtio-net``); the others give one result per check.
JOBS = {
    "build": "builds the base and every applied patch, for each target",
    "boot": "boots the series tip in QEMU for each bootable target: its test plan and the "
            "kernel selftests",
    "remote": "boots the series tip on each target's real host over SSH and runs its plan",
    "warnings-w1": "gcc x86_64 allmodconfig W=1 C=1 on the objects each patch can change",
    "warnings-32bit": "gcc ARCH=i386 allmodconfig W=1 on the objects each patch can change",
    "warnings-clang": "clang LLVM=1 allmodconfig W=1 on the objects each patch can change",
    "cocci": "coccicheck on the touched files, base against tip",
    "htmldocs": "the kernel's Sphinx build of the touched documents, base against tip",
    "ynl-tools": "make -C tools/net/ynl from a clean copy, at the last patch changing a "
                 "netlink spec or a uapi header and at the base",
    "build-tools": "the selftest targets a patch can change (make -C tools/testing/selftests), "
                   "at its parent and at the patch",
    "dt-binding-check": "make dt_binding_check on the DT bindings a patch changes and those "
                        "that $ref them, at its parent and at the patch",
    "kunit": "the trusted base's kunit.py under UML for the KUnit suites in or beside the "
             "touched directories, at the series and, when a case fails, at the base",
}
PER_TARGET_JOBS = ("build", "boot", "remote")
# `napipatch test warnings`: NIPA's three build tests, then coccinelle and the
# docs build on the touched files, then NIPA's tools builds (ynl, build_tools).
WARNING_JOBS = ("warnings-w1", "warnings-32bit", "warnings-clang", "cocci", "htmldocs",
                "ynl-tools", "build-tools", "dt-binding-check")
# What the bot runs only when its ``bot.warnings`` names the check: the
# build tests above and KUnit (a UML build of its own).
OPT_IN_JOBS = WARNING_JOBS + ("kunit",)


@dataclass(frozen=True)
class Declaration:
    """What ``@check(...)`` says about a check function.

    Attributes:
        id: the check's name in findings, ``--only`` and the cache key.
        summary: one line for ``checks list`` and the README's table.
        scope: ``patch`` (run on each patch) or ``series`` (once).
        needs: ``diff`` (the mails; uses a tree when given), ``scripts``
            (the tree's trusted scripts), ``tree`` (the patch applied);
            ``build`` (a compiler) or ``boot`` (a guest or a host) for a
            job check.
        version: bump it when results change; part of the cache key.
        needs_applied: a ``tree`` check that also runs on a patch that did
            not apply (``apply`` itself).
        nipa: the NIPA tests (patchwork contexts) this check answers for
            (``napipatch.report.nipa``). Its findings count toward them as
            their severity says (error fail, warning warning, info success)
            unless a finding says otherwise (``Finding.nipa``, e.g.
            ``ctx.finding("info", ..., nipa={"signed": "warning"})``).
        nipa_needs_tree: a ``diff`` check that answers NIPA's rule only
            with a tree (kdoc's new kernel-doc warnings): without one its
            contexts are forecast "unknown", not success.
        files: the paths the check reads, as ``fnmatch`` patterns
            (``("*.py",)``). A patch touching none of them has nothing for
            it: the engine records its unit as run without findings instead
            of starting a process for it. Empty: every patch.
        preload: modules the check imports when it has work. The engine
            imports them once, before the units start, so the units share
            them (yamllint's import costs each unit 70 ms).
        zygote: the module's ``warm()`` and ``serve(request)`` make a
            zygote (``napipatch.engine.zygote``) the engine starts when the
            run begins, for a tool whose start-up is most of its time; the
            check asks it with ``zygote.ask(id, request, timeout)``.
        job: for a job check, the job whose result it reads (``JOBS``).
        group: ``""``, or ``"netdev process"`` for napipatch's own reading
            of netdev's posting rules (Documentation/process/
            maintainer-netdev.rst), which no NIPA test checks. Such a check
            declares ``nipa=()``; the engine gives its findings
            ``Finding.nipa == {}`` (NIPA has no such rule), and the reports
            and the bot's reply show them apart, headed by the group.
        history: the check reads ``ctx.history`` (the previous version's
            record), which then joins its cache key. Only such checks are
            keyed by it: a series checked as a directory and through the
            send hook has another name, so another "why" in its history,
            and must still share the other checks' results.
    """

    id: str
    summary: str
    scope: str
    needs: str
    version: int = 1
    needs_applied: bool = True
    nipa: tuple[str, ...] = ()
    nipa_needs_tree: bool = False
    files: tuple[str, ...] = ()
    preload: tuple[str, ...] = ()
    zygote: bool = False
    job: str = ""
    group: str = ""
    history: bool = False

    @property
    def is_job(self) -> bool:
        return bool(self.job)


def check(*, id: str, summary: str, scope: str, needs: str, version: int = 1,
          needs_applied: bool = True, nipa: tuple[str, ...] = (),
          nipa_needs_tree: bool = False, files: tuple[str, ...] = (),
          preload: tuple[str, ...] = (), zygote: bool = False, job: str = "",
          group: str = "", history: bool = False):
    """Declare the decorated ``run`` as a check (validated at discovery)."""
    decl = Declaration(id, summary, scope, needs, version, needs_applied, tuple(nipa),
                       nipa_needs_tree, tuple(files), tuple(preload), zygote, job, group,
                       history)

    def mark(fn: Callable):
        fn.declaration = decl
        return fn
    return mark
