"""The checks: one module each, declaring one check with ``@check(...)``.

A module holds a docstring in four sections (What it catches / Why a
reviewer cares / Example / Fix) and one ``run(ctx)`` that yields findings,
declared here with what the engine needs to know about it. The engine's
registry (napipatch.engine.registry) discovers and validates them.
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
            (the tree's trusted scripts), ``tree`` (the patch applied).
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


def check(*, id: str, summary: str, scope: str, needs: str, version: int = 1,
          needs_applied: bool = True, nipa: tuple[str, ...] = (),
          nipa_needs_tree: bool = False, files: tuple[str, ...] = (),
          preload: tuple[str, ...] = (), zygote: bool = False):
    """Declare the decorated ``run(ctx)`` as a check (validated at discovery)."""
    decl = Declaration(id, summary, scope, needs, version, needs_applied, tuple(nipa),
                       nipa_needs_tree, tuple(files), tuple(preload), zygote)

    def mark(fn: Callable):
        fn.declaration = decl
        return fn
    return mark
