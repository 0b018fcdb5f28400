"""``napipatch test build|boot|remote|warnings|kunit|run``: build and boot jobs on the
series' targets, and the netdev CI's build-warning tests.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable, Optional

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

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
from napipatch.engine.registry import CheckInfo
from napipatch.errors import NapipatchError
from napipatch.jobs import targets as targetsmod
from napipatch.jobs.distributed import run_worker
from napipatch.jobs.kinds import kind
from napipatch.pipeline.jobchecks import JobPlan, known
from napipatch.pipeline.run import run
from napipatch.report.render import render_report
from napipatch.store.inputs import resolve

test_app = typer.Typer(help="Build and boot a series on its targets.", no_args_is_help=True)


def _load(target: str, tree: Optional[Path], fmt: str):
    """The config, tree and series, checked before any work: a typo must
    not cost a build."""
    check_format(fmt)
    cfg = load_config(tree)
    tree = tree_of(cfg, tree)
    if tree is None:
        raise NapipatchError("--tree", "building needs a kernel tree (--tree or napipatch.tree)")
    series = resolve(target, store(cfg), tree)
    if not series.patches:
        raise NapipatchError(target, "empty series: no patches")
    return cfg, tree, series


class _Progress:
    """A rich spinner on stderr with the latest make/QEMU line.

    Shown from the first line on: the checks before the jobs run in forked
    processes, and the display's refresh thread must not be running when
    they fork.
    """

    def __init__(self):
        self.console = Console(stderr=True)
        self.p = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                          console=self.console, transient=True)
        self.task = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.task is not None:
            self.p.__exit__(*exc)

    def __call__(self, msg: str) -> None:
        if self.task is None:
            self.p.__enter__()
            self.task = self.p.add_task("starting", total=None)
        if ": building " in msg or ": booting " in msg or msg.startswith(("creating", "configuring")):
            self.console.log(msg)
        self.p.update(self.task, description=msg[:150])


def _drive(target: str, tree: Optional[Path], base: Optional[str], fmt: str,
           default: Callable[[CheckInfo], bool], plan: JobPlan,
           only: Optional[list[str]], skip: Optional[list[str]], whole: bool = False,
           use_cache: bool = True, need_remote: bool = False) -> None:
    """The one pipeline (apply once; the checks ``default`` keeps, or
    ``--only``'s; their jobs on ``plan``'s targets) under a progress display,
    then the report and its exit status. ``whole``: forecast every NIPA
    test, not only those the chosen checks answer for."""
    only_l, skip_l = check_ids(only), check_ids(skip)
    cfg, tree, series = _load(target, tree, fmt)
    if need_remote and not plan.remotes(cfg):
        raise NapipatchError("napipatch.idpf.host", "no remote host configured "
                             "(git config napipatch.idpf.host HOST, napipatch.idpf.iface IFACE)")
    with _Progress() as prog:
        report = run(series, cfg, tree, base=base, only=only_l, skip=skip_l, default=default,
                     use_cache=use_cache, plan=plan, whole=whole, progress=prog)
    sys.stdout.write(render_report(report, fmt, colour=fmt == "text" and sys.stdout.isatty()))
    finish(report, series.source or series.name)


def _ids(*ids: str) -> Callable[[CheckInfo], bool]:
    """A default selection: ``apply`` (a patch that does not apply is what
    stops the jobs) and the checks named."""
    return lambda c: c.id in ("apply", *ids)


def _warning_jobs(c: CheckInfo) -> bool:
    """The checks of `napipatch test warnings`: NIPA's build tests, cocci, htmldocs,
    NIPA's tools builds (ynl-build, build-tools, dt-binding-check)."""
    return bool(c.job) and kind(c.job).warnings



_JOBS = typer.Option(None, "--jobs", "-j", help="make -j (default: napipatch.jobs).")
_TARGETS = typer.Option(None, "--target", help="virtio-net or idpf (repeatable; default: all).")
_MEMORY = typer.Option(None, "--memory", help="A CI bot's state dir (or a copy of it): judge failed selftests by its memory (known flaky, known failures), as the bot does. Default: none; nothing is recorded.")
_FLAVOUR = typer.Option("", "--flavour", help="Boot the targets' debug build (debug: lockdep, kmemleak, KASAN; its own build directory) instead of the plain one.")


def _memory(state_dir: Path | None):
    """The bot's memory read from ``state_dir`` (--memory), or None."""
    if state_dir is None:
        return None
    from napipatch.bot.memory import open_state_dir  # the bot's stack, only when asked

    return open_state_dir(state_dir)


@test_app.command("build")
def build_cmd(target: str = typer.Argument(..., help=TARGET_HELP), tree: Optional[Path] = TREE,
              repo: Optional[Path] = REPO_ALIAS, base: Optional[str] = BASE,
              targets: Optional[list[str]] = _TARGETS, jobs: Optional[int] = _JOBS,
              fmt: str = FORMAT, only: Optional[list[str]] = ONLY,
              skip: Optional[list[str]] = SKIP):
    """Build the base and then every patch in order (incremental): the `build`
    check; exit 1 on build errors."""
    _drive(target, one_tree(tree, repo), base, fmt, _ids("build"),
           JobPlan(targets=known(targets) if targets else None, jobs=jobs), only, skip)


@test_app.command("boot")
def boot_cmd(target: str = typer.Argument(..., help=TARGET_HELP), tree: Optional[Path] = TREE,
             repo: Optional[Path] = REPO_ALIAS, base: Optional[str] = BASE,
             targets: Optional[list[str]] = typer.Option(None, "--target", help="A bootable target (virtio-net)."),
             jobs: Optional[int] = _JOBS, fmt: str = FORMAT,
             timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds before a hung guest is killed (default: the target's plus each selftest's)."),
             flavour: str = _FLAVOUR, memory: Optional[Path] = _MEMORY,
             only: Optional[list[str]] = ONLY, skip: Optional[list[str]] = SKIP):
    """Build the series tip and boot it (virtme-ng): the `boot` and `selftest`
    checks, the target's test plan and the kernel selftests the series changes
    or the target lists; exit 1 on failures."""
    for n in known(targets or []):
        if targetsmod.load(n).boot is None:
            raise NapipatchError(n, "is build-only: QEMU has no model for it (use `napipatch test build`)")
    plan = JobPlan(boot_targets=targets or None, jobs=jobs, timeout=timeout, flavour=flavour,
                   memory=_memory(memory))
    plan.check_flavour()
    _drive(target, one_tree(tree, repo), base, fmt, _ids("boot", "selftest"), plan, only, skip)


@test_app.command("remote")
def remote_cmd(target: str = typer.Argument(..., help=TARGET_HELP), tree: Optional[Path] = TREE,
               repo: Optional[Path] = REPO_ALIAS, base: Optional[str] = BASE,
               targets: Optional[list[str]] = typer.Option(None, "--target", help="A target with a host in napipatch.TARGET.host (idpf)."),
               jobs: Optional[int] = _JOBS, fmt: str = FORMAT,
               only: Optional[list[str]] = ONLY, skip: Optional[list[str]] = SKIP):
    """Build the series tip, boot it on the target's real host over SSH, run the
    plan there: the `remote` check."""
    _drive(target, one_tree(tree, repo), base, fmt, _ids("remote"),
           JobPlan(remote_targets=targets or None, jobs=jobs), only, skip, need_remote=True)


@test_app.command("warnings")
def warnings_cmd(target: str = typer.Argument(..., help=TARGET_HELP), tree: Optional[Path] = TREE,
                 repo: Optional[Path] = REPO_ALIAS, base: Optional[str] = BASE,
                 only: Optional[list[str]] = ONLY, skip: Optional[list[str]] = SKIP,
                 jobs: Optional[int] = _JOBS, fmt: str = FORMAT):
    """New warnings per patch, as the netdev CI's build tests would see them: gcc
    W=1 + sparse, i386 and clang allmodconfig on the objects each patch can change
    (build-w1, sparse, build-32bit, build-clang), then coccinelle and the docs
    build on the touched files (cocci, htmldocs), then tools/net/ynl and the
    selftests a patch can change (ynl-build, build-tools), and make dt_binding_check
    on the DT bindings it changes (dt-binding-check); exit 1 on build errors."""
    _drive(target, one_tree(tree, repo), base, fmt,
           lambda c: c.id == "apply" or _warning_jobs(c), JobPlan(jobs=jobs), only, skip)


@test_app.command("kunit")
def kunit_cmd(target: str = typer.Argument(..., help=TARGET_HELP), tree: Optional[Path] = TREE,
              repo: Optional[Path] = REPO_ALIAS, base: Optional[str] = BASE,
              jobs: Optional[int] = _JOBS, fmt: str = FORMAT, memory: Optional[Path] = _MEMORY,
              only: Optional[list[str]] = ONLY, skip: Optional[list[str]] = SKIP):
    """The KUnit suites in or beside the directories the series changes, under UML
    with the trusted base's kunit.py, at the series and (when a case fails) at the
    base: the `kunit` check; exit 1 on a failing case."""
    _drive(target, one_tree(tree, repo), base, fmt, _ids("kunit"),
           JobPlan(jobs=jobs, memory=_memory(memory)), only, skip)


@test_app.command("run")
def run_cmd(target: str = typer.Argument(..., help=TARGET_HELP), tree: Optional[Path] = TREE,
            repo: Optional[Path] = REPO_ALIAS, base: Optional[str] = BASE,
            jobs: Optional[int] = _JOBS, fmt: str = FORMAT,
            timeout: Optional[float] = typer.Option(None, "--timeout", help="Boot timeout in seconds."),
            no_cache: bool = typer.Option(False, "--no-cache", help="Ignore cached check results."),
            warnings: bool = typer.Option(True, "--warnings/--no-warnings", help="Also the checks of `test warnings` (the netdev CI's build tests); --no-warnings is --skip of them."),
            flavour: str = _FLAVOUR, memory: Optional[Path] = _MEMORY,
            only: Optional[list[str]] = ONLY, skip: Optional[list[str]] = SKIP):
    """Every check: the static ones, then a build of every patch for every target,
    the build warnings, the boots, and the real hosts configured."""
    plan = JobPlan(jobs=jobs, timeout=timeout, flavour=flavour, memory=_memory(memory))
    plan.check_flavour()
    _drive(target, one_tree(tree, repo), base, fmt,
           (lambda c: True) if warnings else (lambda c: not _warning_jobs(c)),
           plan, only, skip, whole=True, use_cache=not no_cache)


# ----------------------------------------------------------------------
# ``napipatch worker``: a Celery worker for build, boot and remote jobs.


def worker(queues: str = typer.Option("virtio-net", "--queues", "-Q",
                                      help="Target queues to serve, comma separated (virtio-net,idpf)."),
           concurrency: int = typer.Option(1, "--concurrency",
                                           help="Jobs at once (builds want the whole machine: 1)."),
           name: str = typer.Option("", "--name", "-n", help="Worker name (default: celery's).")):
    """Serve jobs from the broker in napipatch.broker-url (Redis)."""
    cfg = load_config()
    run_worker(cfg, [q.strip() for q in queues.split(",") if q.strip()], concurrency,
               name or None)
