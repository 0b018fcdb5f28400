"""``napipatch check`` and ``napipatch checks list|doc|nipa``: the review checks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from napipatch.cli.common import (
    BASE,
    FORMAT,
    ONLY,
    REPO_ALIAS,
    SKIP,
    TARGET_HELP,
    TREE,
    check_format,
    check_ids,
    finish,
    load_config,
    one_tree,
    store,
    tree_of,
)
from napipatch.config import Config, find_repo
from napipatch.engine.registry import discover, load
from napipatch.errors import NapipatchError
from napipatch.pipeline.run import run
from napipatch.report.nipa import CONTEXTS
from napipatch.report.render import render_report
from napipatch.store.history import attach
from napipatch.store.inputs import (
    current_series,
    from_stdin,
    looks_like_revisions,
    resolve,
)

# `check` (the verb: run them) and `checks` (the catalogue: list, doc, nipa)
# differ by a letter, and are kept so: every hook, b4 config and doc calls
# `napipatch check`, and `checks list` reads as what it shows. Each help
# names the other, so a typo lands on a page that points the right way.
checks_app = typer.Typer(help="The checks napipatch has (to run them: napipatch check).",
                         no_args_is_help=True)


def check(
    target: Optional[str] = typer.Argument(None, help=TARGET_HELP, show_default=False,
                                           metavar="TARGET"),
    tree: Optional[Path] = TREE,
    repo: Optional[Path] = REPO_ALIAS,
    base: Optional[str] = BASE,
    fmt: str = FORMAT,
    only: Optional[list[str]] = ONLY,
    skip: Optional[list[str]] = SKIP,
    no_cache: bool = typer.Option(False, "--no-cache", help="Ignore cached results."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the report to a file too."),
):
    """Run the review checks (the static ones; a job check such as build-w1 when
    --only names it); exit 0 clean, 1 error findings, 2 could not run."""
    check_format(fmt)
    tree = one_tree(tree, repo)
    only_l, skip_l = check_ids(only), check_ids(skip)
    here = find_repo()
    cfg = load_config(tree or here)
    series, tree, base, skip_l = _target(target, cfg, tree, base, here, skip_l)
    if not series.patches:
        if fmt == "b4-review" and target == "-":
            # b4 review hands a cover letter over too: nothing to report on.
            sys.stdout.write("[]\n")
            raise typer.Exit(0)
        raise NapipatchError(target, "empty series: no patches")
    report = run(series, cfg, tree, base=base, only=only_l, skip=skip_l, use_cache=not no_cache)
    sys.stdout.write(render_report(report, fmt, colour=fmt == "text" and sys.stdout.isatty()))
    if output:
        output.write_text(render_report(report, fmt, colour=False))
    finish(report, target)


def _target(target: Optional[str], cfg: Config, tree: Optional[Path], base: Optional[str],
            here: Optional[Path], skip: Optional[list[str]]):
    """(series, tree, base, skip) for TARGET: the current repository is the
    tree of a range, a branch, no TARGET, and a patch on stdin made from it."""
    if target == "-":
        got = from_stdin(sys.stdin.buffer.read(), here)
        attach(got.series, store(cfg))
        if not got.per_patch:
            return got.series, tree_of(cfg, tree), base, skip
        # One patch of a series (b4's per-patch check): no series checks.
        series_ids = [c.id for c in discover().values() if c.scope == "series" and not c.is_job]
        return got.series, tree or got.tree, base or got.base, (skip or []) + series_ids
    if target is None:
        series, rbase = current_series(here)
        return attach(series, store(cfg)), tree or here, base or rbase, skip
    if tree is None and looks_like_revisions(target, here):
        tree = here
    tree = tree_of(cfg, tree)
    return resolve(target, store(cfg), tree), tree, base, skip


@checks_app.command("list")
def checks_list(fmt: str = typer.Option("text", "--format",
                                        help="text, or markdown (the README's checks table).")):
    """Every check: id, scope, what it needs, summary; a broken check module
    is a one-line error (exit 3) after the others."""
    if fmt not in ("text", "markdown"):
        raise NapipatchError(fmt, "unknown format (text, markdown)")
    reg = load()
    typer.echo(checks_table(reg.checks.values()) if fmt == "markdown" else
               "\n".join(f"{c.id:14} {c.scope:6} {c.needs:7}  {c.summary}"
                         for c in reg.checks.values()))
    for b in reg.broken:
        typer.echo(f"napipatch: error: {b.module}: {b.reason}", err=True)
    if reg.broken:
        raise typer.Exit(3)


def checks_table(checks) -> str:
    """The README's table of checks, made from their declarations."""
    rows = ["| id | scope | needs | NIPA test | catches |", "|---|---|---|---|---|"]
    rows += [f"| `{c.id}` | {c.scope} | {c.needs} | "
             f"{', '.join(f'`{n}`' for n in c.nipa) or '-'} | {c.summary} |" for c in checks]
    return "\n".join(rows)


@checks_app.command("nipa")
def checks_nipa(fmt: str = typer.Option("text", "--format",
                                        help="text, or markdown (the table in docs/nipa.md).")):
    """Every NIPA test (patchwork context) and the napipatch checks that
    answer for it, or why none does."""
    if fmt not in ("text", "markdown"):
        raise NapipatchError(fmt, "unknown format (text, markdown)")
    reg = load()
    typer.echo(nipa_table(reg.checks.values(), markdown=fmt == "markdown"))


def nipa_table(checks, markdown: bool = True) -> str:
    """NIPA's tests against napipatch's checks, from the checks' ``nipa=``
    declarations and napipatch.report.nipa (the docs' table)."""
    by: dict[str, list[str]] = {}
    for c in checks:
        for name in c.nipa:
            by.setdefault(name, []).append(c.id)
    rows = []
    for ctx in CONTEXTS:
        ids = by.get(ctx.name, [])
        if ids:
            cover = ", ".join(f"`{i}`" if markdown else i for i in ids)
            cover += f" (partly: {ctx.partial})" if ctx.partial else ""
        else:
            cover = ctx.answered or f"not covered: {ctx.note or 'napipatch has no check for it'}"
        if ctx.skip:
            cover += "; where NIPA skips the patch, its success is forecast"
        rows.append((f"`{ctx.name}`" if markdown else ctx.name, ctx.scope, ctx.rule, cover))
    if not markdown:
        return "\n".join(f"{n:24} {s:6}  {c}" for n, s, _r, c in rows)
    head = ["| NIPA test | runs on each | NIPA's rule | napipatch |", "|---|---|---|---|"]
    return "\n".join(head + [f"| {n} | {s} | {r} | {c} |" for n, s, r, c in rows])


@checks_app.command("doc")
def checks_doc(check_id: str):
    """The documentation of one check."""
    checks = discover()
    if check_id not in checks:
        raise NapipatchError(check_id, "no such check")
    c = checks[check_id]
    typer.echo(f"{c.id}: {c.summary}\nscope: {c.scope}, needs: {c.needs}\n\n{c.doc}")
