"""The napipatch command line (typer). Thin: options, one library call, render.

Errors from the library (NapipatchError) become one line on stderr and
exit status 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Optional

import typer

from napipatch import config as configmod
from napipatch.errors import NapipatchError

app = typer.Typer(help="Check, build and boot netdev patch series before they reach the list.",
                  no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)
series_app = typer.Typer(help="The series store: import, export, list, show, diff, apply.",
                         no_args_is_help=True)
tree_app = typer.Typer(help="Kernel trees napipatch works on.", no_args_is_help=True)
checks_app = typer.Typer(help="The checks napipatch runs.", no_args_is_help=True)
app.add_typer(series_app, name="series")
app.add_typer(tree_app, name="tree")
app.add_typer(checks_app, name="checks")


def _add_commands():
    from napipatch.cli import bot as bot_cli, hook as hook_cli, worker as worker_cli
    from napipatch.cli.test import test_app
    app.add_typer(test_app, name="test")
    hook_cli.register(app)
    bot_cli.register(app)
    worker_cli.register(app)


_add_commands()

_state = {"debug": False}


@app.callback()
def _root(debug: bool = typer.Option(False, "--debug", help="Show tracebacks on errors."),
          store: Optional[Path] = typer.Option(
              None, "--store", help="Series store directory (napipatch.series-dir).")):
    _state["debug"] = debug
    _state["store"] = store


def _config(repo: Optional[Path] = None) -> configmod.Config:
    cfg = configmod.load(repo)
    if _state.get("store"):
        cfg.series_dir = str(_state["store"])
    return cfg


def _store(cfg):
    from napipatch.store.store import Store
    return Store(cfg.store_root)


def _tree(cfg, tree: Optional[Path]) -> Optional[Path]:
    if tree is not None:
        return tree
    return Path(cfg.tree).expanduser() if cfg.tree else None


def _ids(value: Optional[str]) -> Optional[list[str]]:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


# ---------------------------------------------------------------- series
@series_app.command("import")
def series_import(
    source: str = typer.Argument(..., help="An mbox file, a format-patch directory, or a Message-ID (fetched with b4 from napipatch.lore-url)."),
    name: Optional[str] = typer.Option(None, "--name", help="Store name (default: from the subject)."),
    version: Optional[int] = typer.Option(None, "--version", "-v", help="Pick vN when the source holds several."),
    cover_only: bool = typer.Option(False, "--cover-only", help="Record only the cover letter (history of an old version)."),
    force: bool = typer.Option(False, "--force", help="Replace a version already stored."),
):
    """Import a posted series into series/NAME/vN."""
    from napipatch.store.importing import import_series

    cfg = _config()
    s = import_series(_store(cfg), source, name, cfg.lore_url, version=version,
                      cover_only=cover_only, force=force)
    typer.echo(f"{cfg.store_root / s.name / f'v{s.version}'}: {s.title} "
               f"({len(s.patches)} patches{', cover letter' if s.cover else ''})")


@series_app.command("export")
def series_export(
    revrange: str = typer.Argument(..., help="Commits to export, e.g. v6.12..HEAD or HEAD~4.."),
    name: str = typer.Option(..., "--name", help="Store name."),
    version: Optional[int] = typer.Option(None, "--version", "-v", help="Version (default: next)."),
    tree_tag: Optional[str] = typer.Option(None, "--tree-tag", help="Subject tree tag (napipatch.tree-tag, net-next)."),
    repo: Path = typer.Option(Path("."), "--repo", help="The kernel repository."),
    base: str = typer.Option("auto", "--base", help="format-patch --base (auto needs an upstream branch)."),
    title: Optional[str] = typer.Option(None, "--title", help="Cover letter subject (default: previous version's)."),
    blurb_file: Optional[Path] = typer.Option(None, "--blurb", help="File with the cover letter text (default: previous version's)."),
    changes: Optional[str] = typer.Option(None, "--changes", help="This version's changelog lines (text or @FILE)."),
    force: bool = typer.Option(False, "--force", help="Replace a version already stored."),
):
    """git format-patch --base into series/NAME/vN with a rendered cover letter."""
    from napipatch.store.exporting import export_series

    cfg = _config(repo)
    ch = changes or ""
    if ch.startswith("@"):
        ch = _read_text(Path(ch[1:]))
    blurb = _read_text(blurb_file) if blurb_file else None
    d = export_series(_store(cfg), repo, revrange, name, version, tree_tag or cfg.tree_tag,
                      base=base, title=title, blurb=blurb, changes=ch, force=force)
    typer.echo(f"{d}: {len(list(d.glob('*.patch')))} files")


def _read_text(p: Path) -> str:
    try:
        return p.read_text()
    except OSError as exc:
        raise NapipatchError(p, exc.strerror or str(exc)) from None


@series_app.command("list")
def series_list():
    """The series in the store and their versions."""
    cfg = _config()
    st = _store(cfg)
    for name in st.names():
        rec = st.record(name)
        vs = " ".join(rec.get("versions", {}))
        typer.echo(f"{name:32} {rec.get('tree', '-'):9} {vs}")


@series_app.command("show")
def series_show(spec: str = typer.Argument(..., help="NAME or NAME@vN")):
    """Patches, base, per-patch diffstat and trailers of one version."""
    from napipatch.store.showing import show

    cfg = _config()
    typer.echo(show(_store(cfg), spec), nl=False)


@series_app.command("diff")
def series_diff(name: str, va: str, vb: str,
                repo: Path = typer.Option(..., "--repo", help="Kernel tree to apply both versions in."),
                base: Optional[str] = typer.Option(None, "--base", help="Base when a version has no base-commit.")):
    """git range-diff of two versions, each applied on its base (no checkout)."""
    from napipatch.store.showing import range_diff

    cfg = _config(repo)
    typer.echo(range_diff(_store(cfg), name, va, vb, repo, base), nl=False)


@series_app.command("apply")
def series_apply(spec: str = typer.Argument(..., help="NAME or NAME@vN"),
                 repo: Path = typer.Option(..., "--repo", help="The kernel tree."),
                 base: Optional[str] = typer.Option(None, "--base", help="Base when base-commit is absent or unknown."),
                 worktree: Optional[Path] = typer.Option(None, "--worktree", help="Where to create the worktree.")):
    """A new git worktree at the base with the patches applied by git am."""
    from napipatch.tree.apply import apply_in_worktree

    cfg = _config(repo)
    s = _store(cfg).load(spec)
    path = worktree or (cfg.cache / "worktrees" / f"{s.name}-v{s.version}")
    res = apply_in_worktree(repo, s, path, base)
    if res.failure:
        typer.echo(f"napipatch: error: {spec}: {res.failure}", err=True)
        raise typer.Exit(1)
    typer.echo(f"{path}: {len(res.commits)} patches applied on {res.base[:12]} ({res.base_why})")


# ---------------------------------------------------------------- check
@app.command("check")
def check(
    target: str = typer.Argument(..., help="NAME[@vN] in the store, a format-patch directory, an mbox, or a revision range in --tree."),
    tree: Optional[Path] = typer.Option(None, "--tree", help="Kernel tree (git) to apply the series in (napipatch.tree)."),
    base: Optional[str] = typer.Option(None, "--base", help="Base when the series has no usable base-commit."),
    fmt: str = typer.Option("text", "--format", help="text, json or markdown."),
    only: Optional[str] = typer.Option(None, "--only", help="Run only these check ids (comma separated)."),
    skip: Optional[str] = typer.Option(None, "--skip", help="Skip these check ids."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ignore cached results."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the report to a file too."),
):
    """Run the review checks; exit 0 clean, 1 error findings, 2 could not run."""
    from napipatch.engine.run import run_checks
    from napipatch.store.inputs import resolve
    from napipatch.report.render import render_report

    if fmt not in ("text", "json", "markdown"):
        raise NapipatchError(fmt, "unknown format (text, json, markdown)")
    cfg = _config(tree)
    tree = _tree(cfg, tree)
    series = resolve(target, _store(cfg), tree)
    if not series.patches:
        raise NapipatchError(target, "empty series: no patches")
    report = run_checks(series, cfg, tree=tree, base=base, only=_ids(only), skip=_ids(skip),
                        use_cache=not no_cache)
    colour = fmt == "text" and sys.stdout.isatty()
    text = render_report(report, fmt, colour=colour)
    sys.stdout.write(text)
    if output:
        output.write_text(render_report(report, fmt, colour=False))
    raise typer.Exit(report.exit_code)


# ---------------------------------------------------------------- checks
@checks_app.command("list")
def checks_list():
    """Every check: id, scope, what it needs, summary."""
    from napipatch.engine.registry import discover

    for c in discover().values():
        typer.echo(f"{c.id:14} {c.scope:6} {c.needs:5}  {c.summary}")


@checks_app.command("doc")
def checks_doc(check_id: str):
    """The documentation of one check."""
    from napipatch.engine.registry import discover

    checks = discover()
    if check_id not in checks:
        raise NapipatchError(check_id, "no such check")
    c = checks[check_id]
    typer.echo(f"{c.id}: {c.summary}\nscope: {c.scope}, needs: {c.needs}\n\n{c.doc}")


# ---------------------------------------------------------------- tree
@tree_app.command("prepare")
def tree_prepare(dest: Path = typer.Argument(..., help="Where the git tree goes."),
                 tarball: Path = typer.Option(Path("/usr/src/linux-source-6.12.tar.xz"), "--from",
                                              help="Debian linux-source tarball.")):
    """Unpack a Debian linux-source tarball into a git tree (reproducible commit)."""
    from napipatch.tree.kerneltree import prepare

    sha = prepare(tarball, dest)
    typer.echo(f"{dest}: {sha}")


@app.command("config")
def config_cmd():
    """The napipatch.* git config keys, their values and defaults."""
    cfg = _config()
    for key, attr, default, helptext in configmod.KEYS:
        typer.echo(f"{key:28} = {getattr(cfg, attr)!s:30} # {helptext}")


def main():
    try:
        rc = app(standalone_mode=False)
    except NapipatchError as exc:
        if _state["debug"]:
            raise
        typer.echo(f"napipatch: error: {exc}", err=True)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("napipatch: aborted", err=True)
        sys.exit(130)
    except subprocess.TimeoutExpired as exc:
        typer.echo(f"napipatch: error: {exc.cmd[0]}: timed out", err=True)
        sys.exit(2)
    except Exception as exc:
        # Usage errors (typer's vendored click) know how to show themselves.
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):
            exc.show()
            sys.exit(2)
        raise
    sys.exit(rc if isinstance(rc, int) else 0)
