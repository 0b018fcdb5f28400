"""``napipatch check`` and ``napipatch checks list|doc|nipa``: the review checks."""

from __future__ import annotations

import json
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
from napipatch.jobs.kinds import kind
from napipatch.pipeline.run import run
from napipatch.report.nipa import CONTEXTS
from napipatch.report.render import render_b4_series, render_report
from napipatch.send import b4series
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
    b4_series: bool = typer.Option(False, "--b4-series", help="b4 review's series check "
                                   "(b4.review-series-check-cmd): the series on the review "
                                   "branch B4_TRACKING_FILE names, as b4 review's CI JSON."),
):
    """Run the review checks (the static ones; a job check such as build-w1 when
    --only names it); exit 0 clean, 1 error findings, 2 could not run."""
    check_format(fmt)
    tree = one_tree(tree, repo)
    only_l, skip_l = check_ids(only), check_ids(skip)
    here = find_repo()
    cfg = load_config(tree or here)
    if b4_series:
        _b4_series(here, cfg, only_l, skip_l)
    series, tree, base, skip_l, commit = _target(target, cfg, tree, base, here, skip_l)
    if not series.patches:
        if fmt == "b4-review" and target == "-":
            # b4 review hands a cover letter over too: nothing to report on.
            sys.stdout.write("[]\n")
            raise typer.Exit(0)
        raise NapipatchError(target, "empty series: no patches")
    # b4 prep --check's command on the last patch of the branch's series:
    # the series checks of that series go into the same report
    prep = b4series.prep_series_results(here, commit, cfg, only_l, check_ids(skip)) \
        if commit is not None and here is not None else []
    report = run(series, cfg, tree, base=base, only=only_l, skip=skip_l, use_cache=not no_cache,
                 extra=prep)
    sys.stdout.write(render_report(report, fmt, colour=fmt == "text" and sys.stdout.isatty()))
    if output:
        output.write_text(render_report(report, fmt, colour=False))
    finish(report, target)


def _b4_series(here: Optional[Path], cfg: Config, only: list[str] | None,
               skip: list[str] | None) -> None:
    """``check --b4-series``: b4 review's JSON for the series; a reason it
    cannot be checked is b4's failed entry and exit 2."""
    cover = sys.stdin.buffer.read()  # the posted cover letter, if the series has one
    try:
        if here is None:
            raise NapipatchError("b4 review", "not in a git repository")
        report = b4series.review_series(here, cfg, only, skip, cover)
    except NapipatchError as exc:
        sys.stdout.write(json.dumps([{"tool": "napipatch", "status": "fail",
                                      "summary": str(exc), "url": "",
                                      "details": ""}]) + "\n")
        raise typer.Exit(2) from None
    sys.stdout.write(render_b4_series(report, set(b4series.series_ids())))
    finish(report, "b4 review series")


def _target(target: Optional[str], cfg: Config, tree: Optional[Path], base: Optional[str],
            here: Optional[Path], skip: Optional[list[str]]):
    """(series, tree, base, skip, commit) for TARGET: the current repository
    is the tree of a range, a branch, no TARGET, and a patch on stdin made
    from it (``commit``: that patch's commit there)."""
    if target == "-":
        got = from_stdin(sys.stdin.buffer.read(), here)
        attach(got.series, store(cfg))
        if not got.per_patch:
            return got.series, tree_of(cfg, tree), base, skip, None
        # One patch of a series (b4's per-patch check): the series checks
        # run only on the last patch of a b4 prep series (b4series).
        return got.series, tree or got.tree, base or got.base, \
            (skip or []) + b4series.series_ids(), got.commit
    if target is None:
        series, rbase = current_series(here)
        return attach(series, store(cfg)), tree or here, base or rbase, skip, None
    if tree is None and looks_like_revisions(target, here):
        tree = here
    tree = tree_of(cfg, tree)
    return resolve(target, store(cfg), tree), tree, base, skip, None


@checks_app.command("list")
def checks_list(fmt: str = typer.Option("text", "--format",
                                        help="text, or markdown (the README's checks table).")):
    """Every check: id, scope, what it needs, summary (and ``[netdev process]``
    for napipatch's own posting rules, no NIPA test); a broken check module
    is a one-line error (exit 3) after the others."""
    if fmt not in ("text", "markdown"):
        raise NapipatchError(fmt, "unknown format (text, markdown)")
    reg = load()
    typer.echo(checks_table(reg.checks.values()) if fmt == "markdown" else
               "\n".join(f"{c.id:14} {c.scope:6} {c.needs:7}  {c.summary}"
                         + (f" [{c.group}]" if c.group else "")
                         + (f" [*] fix: {c.fixes}" if c.fixes else "")
                         for c in reg.checks.values()))
    for b in reg.broken:
        typer.echo(f"napipatch: error: {b.module}: {b.reason}", err=True)
    if reg.broken:
        raise typer.Exit(3)


def checks_table(checks) -> str:
    """The README's table of checks, made from their declarations."""
    rows = ["| id | scope | needs | NIPA test | catches |", "|---|---|---|---|---|"]
    rows += [f"| `{c.id}` | {c.scope} | {c.needs} | "
             f"{', '.join(f'`{n}`' for n in c.nipa) or (f'none: {c.group}' if c.group else '-')}"
             f" | {c.summary} |" for c in checks]
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
    group = f", group: {c.group}" if c.group else ""
    # a job check: the job it reads, as the job registry describes it
    job = f"\njob: {c.job}: {kind(c.job).describe}" if c.job else ""
    typer.echo(f"{c.id}: {c.summary}\nscope: {c.scope}, needs: {c.needs}{group}{job}\n\n{c.doc}")
