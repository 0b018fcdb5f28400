"""The checks: one module each, declaring one check with ``@check(...)``.

A module holds a docstring in four sections (What it catches / Why a
reviewer cares / Example / Fix) and one ``run`` that yields findings,
declared here with what the engine needs to know about it. The engine's
registry (napipatch.engine.registry) discovers and validates them.

Two kinds, one declaration. A static check (``needs`` diff, scripts or
tree) is ``run(ctx)`` on the mails and the applied tree, by the engine. A
job check (``needs`` build or boot) reads the result of a job that builds
or boots the applied series (``job``, one of ``napipatch.jobs.kinds.KINDS``): ``run(result)``
gets that job's ``JobResult`` and returns the findings that are this
check's, picked from the job's channels (``result.on("tests")``), or None
when the job has no result for it (a busybox boot runs no selftests). The
pipeline gives them this check's id and NIPA contexts: no job names a check. Several checks may read
one job (``build-w1`` and ``sparse`` one W=1 C=1 build): it runs once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


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
        job: for a job check, the job whose result it reads (a name in
            ``napipatch.jobs.kinds.KINDS``, declared on its job class).
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
        requires: a configuration attribute (``ai_review_command``) the
            check runs only with: unset, it is skipped, saying which
            ``napipatch.*`` key to set (an opt-in check: no agent to assume).
        timeout: a configuration attribute holding the check's own deadline
            in seconds (``ai_review_timeout``): its unit gets that and a
            minute for napipatch's part, instead of ``napipatch.check-timeout``.
        fixes: what ``napipatch fix`` does for its findings, in a few words
            (``checks list`` shows it); ``""``: the check fixes nothing.
            Only such a check gives findings a ``fix`` (its edits, computed
            on the patch's post-image, or why it cannot), so one declaration
            says whether a check fixes.
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
    requires: str = ""
    timeout: str = ""
    fixes: str = ""

    @property
    def is_job(self) -> bool:
        return bool(self.job)


def check(*, id: str, summary: str, scope: str, needs: str, version: int = 1,
          needs_applied: bool = True, nipa: tuple[str, ...] = (),
          nipa_needs_tree: bool = False, files: tuple[str, ...] = (),
          preload: tuple[str, ...] = (), zygote: bool = False, job: str = "",
          group: str = "", history: bool = False, requires: str = "", timeout: str = "",
          fixes: str = ""):
    """Declare the decorated ``run`` as a check (validated at discovery)."""
    decl = Declaration(id, summary, scope, needs, version, needs_applied, tuple(nipa),
                       nipa_needs_tree, tuple(files), tuple(preload), zygote, job, group,
                       history, requires, timeout, fixes)

    def mark(fn: Callable):
        fn.declaration = decl
        return fn
    return mark
