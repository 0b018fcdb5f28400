"""``napipatch series import|export|list|show|changelog|diff|apply``: the series store."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from napipatch.bench.render import results as bench_results
from napipatch.cli.common import (
    REPO_ALIAS,
    load_config,
    one_tree,
    read_text,
    store,
    tree_of,
)
from napipatch.errors import NapipatchError, printable
from napipatch.store.exporting import export_series
from napipatch.store.importing import import_series
from napipatch.store.showing import changelog, range_diff, show, show_replies
from napipatch.tree.apply import apply_in_worktree

series_app = typer.Typer(help="The series store: import, export, list, show, diff, apply.",
                         no_args_is_help=True)


@series_app.command("import")
def series_import(
    source: str = typer.Argument(..., help="An mbox file, a format-patch directory, or a Message-ID (fetched with b4 from napipatch.lore-url)."),
    name: Optional[str] = typer.Option(None, "--name", help="Store name (default: from the subject)."),
    version: Optional[int] = typer.Option(None, "--version", help="Pick vN when the source holds several."),
    cover_only: bool = typer.Option(False, "--cover-only", help="Record only the cover letter (history of an old version)."),
    force: bool = typer.Option(False, "--force", help="Replace a version already stored."),
):
    """Import a posted series into series/NAME/vN."""
    cfg = load_config()
    skipped: list[str] = []
    announced: list[dict] = []
    s = import_series(store(cfg), source, name, cfg.lore_url, version=version,
                      cover_only=cover_only, force=force, skipped=skipped, announced=announced)
    for why in skipped:
        typer.echo(f"napipatch: warning: {printable(why)}", err=True)
    if s is None:
        a = announced[0]
        said = (f"net-next is {a['state']}: {printable(a['subject'])} ({a['date']}, {a['link']})")
        if not a["recorded"]:
            said += "; not recorded, a newer announcement is in the store"
        elif cfg.net_next:
            said += f"; git config napipatch.net-next ({cfg.net_next}) still overrides it"
        typer.echo(said)
        return
    typer.echo(f"{cfg.store_root / s.name / f'v{s.version}'}: {s.title} "
               f"({len(s.patches)} patches{', cover letter' if s.cover else ''})")


@series_app.command("export")
def series_export(
    revrange: str = typer.Argument(..., help="Commits to export, e.g. v6.12..HEAD or HEAD~4.."),
    name: str = typer.Option(..., "--name", help="Store name."),
    version: Optional[int] = typer.Option(None, "--version", help="Version (default: next)."),
    tree_tag: Optional[str] = typer.Option(None, "--tree-tag", help="Subject tree tag (napipatch.tree-tag, net-next)."),
    tree: Optional[Path] = typer.Option(None, "--tree", help="The kernel repository (default: this one)."),
    repo: Optional[Path] = REPO_ALIAS,
    base: str = typer.Option("auto", "--base", help="format-patch --base (auto needs an upstream branch)."),
    title: Optional[str] = typer.Option(None, "--title", help="Cover letter subject (default: previous version's)."),
    blurb_file: Optional[Path] = typer.Option(None, "--blurb", help="File with the cover letter text (default: previous version's)."),
    changes: Optional[str] = typer.Option(None, "--changes", help="This version's changelog lines (text or @FILE)."),
    force: bool = typer.Option(False, "--force", help="Replace a version already stored."),
    bench: Optional[str] = typer.Option(None, "--bench", help="Put a recorded latency run (RUN-ID or latest) in the cover letter."),
    allow_emulated: bool = typer.Option(False, "--allow-emulated", help="Allow an emulated (QEMU TCG) run for --bench; it is labelled emulated."),
    carry_tags: bool = typer.Option(False, "--carry-tags", help="Add the review tags given on the previous version to the patches whose diff did not change (without it, export says which it could carry)."),
):
    """git format-patch --base into series/NAME/vN with a rendered cover letter."""
    repo = one_tree(tree, repo) or Path(".")
    cfg = load_config(repo)
    ch = changes or ""
    if ch.startswith("@"):
        ch = read_text(Path(ch[1:]))
    blurb = read_text(blurb_file) if blurb_file else None
    results = bench_results(store(cfg), name, bench, allow_emulated) if bench else None
    carried: list[dict] = []
    d = export_series(store(cfg), repo, revrange, name, version, tree_tag or cfg.tree_tag,
                      base=base, title=title, blurb=blurb, changes=ch, force=force,
                      results=results, carry=carry_tags, carried=carried)
    typer.echo(f"{d}: {len(list(d.glob('*.patch')))} files")
    for c in carried:
        what = "carried" if c["carried"] else "could carry"
        typer.echo(f"{what}: PATCH {c['patch']}/{c['total']}: {printable(c['trailer'])} "
                   f"(given on {printable(c['in'])}; the diff did not change)")
    if carried and not carry_tags:
        typer.echo("napipatch: the previous version's review tags above are missing from "
                   "unchanged patches: export again with --carry-tags --force to add them",
                   err=True)


@series_app.command("list")
def series_list():
    """The series in the store and their versions."""
    st = store(load_config())
    if not st.root.is_dir():
        typer.echo(f"napipatch: no series store at {st.root.resolve()} "
                   "(napipatch.series-dir, or --store DIR)", err=True)
        return
    if not st.names():
        typer.echo(f"napipatch: no series in {st.root.resolve()}", err=True)
    for name in st.names():
        rec = st.record(name)
        vs = " ".join(rec.get("versions", {}))
        typer.echo(f"{name:32} {rec.get('tree', '-'):9} {vs}")


@series_app.command("show")
def series_show(spec: str = typer.Argument(..., help="NAME or NAME@vN"),
                with_replies: bool = typer.Option(False, "--replies", help="The thread's replies kept with this version, and the previous version's review comments with what this one did with them.")):
    """Patches, base, per-patch diffstat and trailers of one version."""
    st = store(load_config())
    typer.echo(show_replies(st, spec) if with_replies else show(st, spec), nl=False)


@series_app.command("changelog")
def series_changelog(spec: str = typer.Argument(..., help="NAME@vN")):
    """Draft vN's changelog: a line per review comment of vN-1 (changed, or TODO), with the reviewer and the lore link."""
    typer.echo(changelog(store(load_config()), spec), nl=False)


@series_app.command("diff")
def series_diff(name: str, va: str, vb: str,
                tree: Optional[Path] = typer.Option(None, "--tree", help="Kernel tree to apply both versions in (napipatch.tree)."),
                repo: Optional[Path] = REPO_ALIAS,
                base: Optional[str] = typer.Option(None, "--base", help="Base when a version has no base-commit.")):
    """git range-diff of two versions, each applied on its base (no checkout)."""
    repo = _required_tree(tree, repo)
    cfg = load_config(repo)
    typer.echo(range_diff(store(cfg), name, va, vb, repo, base), nl=False)


@series_app.command("apply")
def series_apply(spec: str = typer.Argument(..., help="NAME or NAME@vN"),
                 tree: Optional[Path] = typer.Option(None, "--tree", help="The kernel tree (napipatch.tree)."),
                 repo: Optional[Path] = REPO_ALIAS,
                 base: Optional[str] = typer.Option(None, "--base", help="Base when base-commit is absent or unknown."),
                 worktree: Optional[Path] = typer.Option(None, "--worktree", help="Where to create the worktree.")):
    """A new git worktree at the base with the patches applied by git am."""
    repo = _required_tree(tree, repo)
    cfg = load_config(repo)
    s = store(cfg).load(spec)
    path = worktree or (cfg.cache / "worktrees" / f"{s.name}-v{s.version}")
    res = apply_in_worktree(repo, s, path, base)
    if res.failure:
        typer.echo(f"napipatch: error: {printable(spec)}: {printable(res.failure)}", err=True)
        raise typer.Exit(1)
    typer.echo(f"{path}: {len(res.commits)} patches applied on {res.base[:12]} ({res.base_why})")


def _required_tree(tree: Optional[Path], repo: Optional[Path]) -> Path:
    """--tree (or --repo), else napipatch.tree; a one-line error when neither."""
    got = tree_of(load_config(), one_tree(tree, repo))
    if got is None:
        raise NapipatchError("--tree", "needs a kernel tree (--tree or napipatch.tree)")
    return got
