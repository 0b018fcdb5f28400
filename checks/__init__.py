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
    """

    id: str
    summary: str
    scope: str
    needs: str
    version: int = 1
    needs_applied: bool = True
    nipa: tuple[str, ...] = ()
    nipa_needs_tree: bool = False


def check(*, id: str, summary: str, scope: str, needs: str, version: int = 1,
          needs_applied: bool = True, nipa: tuple[str, ...] = (),
          nipa_needs_tree: bool = False):
    """Declare the decorated ``run(ctx)`` as a check (validated at discovery)."""
    decl = Declaration(id, summary, scope, needs, version, needs_applied, tuple(nipa),
                       nipa_needs_tree)

    def mark(fn: Callable):
        fn.declaration = decl
        return fn
    return mark
