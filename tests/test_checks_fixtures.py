"""Every check runs on its good and bad fixtures: the bad one is flagged by
that check, the good one is not.

tests/fixtures/checks/<id>/ holds good.mbox and bad.mbox. A static check's
expected output is a snapshot of its whole findings, rendered
(good.snap, bad.snap: "severity patch FILE:LINE message" and its hint, the
tree's path as $TREE, this checkout's as $REPO), compared exactly; NAPIPATCH_UPDATE_SNAPSHOTS=1
rewrites them from what the checks say now, for review with git diff, as
ruff's snapshot tests do. bad.snap holds a finding good.snap lacks, good.snap
no warning or error (no file: no findings; infos for a check that always
reports what it looked at, e.g. ynl's "4 files match"). A job check still lists its
expected findings in bad.expected and good.expected ("severity patch
message-substring", one a line). Checks that need only the diff run on the mbox
alone; the others (apply, checkpatch, ynl, callsites, leftover) run with
--tree on the 6.12 tree, whose fixtures are made by make_tree_fixtures.py
in that directory. The check's own test module has the finer cases.

The job checks (build, boot, selftest, remote and the build warnings) run
with real compilers, QEMU and a loopback SSH host, through the command a
user runs for them (``napipatch test build|boot|remote``; ``napipatch check
--only ID`` for the build warnings), in the shared build directory. Each
distinct (command, mbox) runs once, with ``--only`` every job check whose
fixture it is: the checks that share a good.mbox (the same bytes) share
its run, and a completed job always reports what it did (the ``built
virtio-net: ...`` info), which good.expected lists.

A check that compares a series with its previous version (the netdev
process checks: repost-wait, new-thread, version-link, review-tags) finds
that version in a store: a ``store`` file in its fixture directory names
it (tests/fixtures/history/, written by make_fixtures.py there). A check
that reads a setting (net-next-closed) finds it in a ``gitconfig`` file
there, used as the user's git config.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import Cli, host_gitconfig, ssh_host

from napipatch.engine.registry import discover
from napipatch.jobs.kinds import KINDS
from napipatch.report.model import COMPLETED

FIX = Path(__file__).parent / "fixtures" / "checks"
CHECKS = discover()
STATIC = {i: c for i, c in CHECKS.items() if not c.is_job}
DIFF_ONLY = sorted(i for i, c in STATIC.items() if c.needs == "diff")
WITH_TREE = sorted(i for i, c in STATIC.items() if c.needs != "diff")
# in the pipeline's job order (builds, the warnings' builds, boots), as `test run` runs them
JOB = sorted((i for i, c in CHECKS.items() if c.is_job),
             key=lambda i: (KINDS[CHECKS[i].job][0].order, i))
WARNING_JOBS = {name for name, (kind, _cls) in KINDS.items() if kind.warnings}


def _expected(path: Path) -> list[tuple[str, int, str]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        sev, patch, text = line.split(" ", 2)
        out.append((sev, int(patch), text))
    return out


def _findings(cli, mbox: Path, check_id: str, *args) -> list[dict]:
    # A check that compares with the previous version (repost-wait ...)
    # reads it from a store: its fixture directory's ``store`` file names one.
    named = mbox.parent / "store"
    env = {"NAPIPATCH_SERIES_DIR": str((mbox.parent / named.read_text().strip()).resolve())} \
        if named.is_file() else {}
    # A check that reads a napipatch.* setting (net-next-closed): the
    # fixture directory's ``gitconfig`` is the user's git config.
    if (mbox.parent / "gitconfig").is_file():
        env["GIT_CONFIG_GLOBAL"] = str((mbox.parent / "gitconfig").resolve())
    cp = cli("check", mbox, "--only", check_id, "--format", "json", *args, env=env or None)
    assert cp.returncode in (0, 1), cp.stderr
    data = json.loads(cp.stdout)
    status = {c["id"]: c["status"] for c in data["checks"]}
    assert status.get(check_id) in ("pass", "info", "warn", "fail"), (mbox, status)
    return [f for f in data["findings"] if f["check"] == check_id]


def _match(got: list[dict], expected: list[tuple[str, int, str]], what: str) -> None:
    """Every expected finding matches one finding of its own, and none is left over."""
    left = list(got)
    for sev, patch, text in expected:
        hit = next((f for f in left if f["severity"] == sev and f["patch"] == patch
                    and text in f["message"]), None)
        assert hit, (what, "missing", sev, patch, text, left)
        left.remove(hit)
    assert left == [], (what, "unexpected", left)


UPDATE = os.environ.get("NAPIPATCH_UPDATE_SNAPSHOTS") == "1"


def rendered(findings: list[dict], tree: Path | None = None) -> str:
    """Findings as a snapshot shows them: every field a user reads but the
    details (a tool's raw output), one finding a line and its hint below."""
    out = []
    for f in findings:
        where = f"{f['file']}:{f['line']}" if f["file"] and f["line"] else f["file"] or "-"
        out.append(f"{f['severity']} {f['patch']} {where} {f['message']}")
        if f["hint"]:
            out.append(f"    hint: {f['hint']}")
    text = "".join(line + "\n" for line in out).replace(str(FIX.parents[2]), "$REPO")
    return text.replace(str(tree), "$TREE") if tree else text


def _snapshot(path: Path, got: str) -> None:
    if UPDATE:
        if got:
            path.write_text(got)
        else:
            path.unlink(missing_ok=True)
        return
    assert got == (path.read_text() if path.exists() else ""), \
        f"{path} differs (NAPIPATCH_UPDATE_SNAPSHOTS=1 rewrites it; review with git diff)"


def _good_and_bad(cli, check_id: str, *args, tree: Path | None = None) -> None:
    d = FIX / check_id
    assert CHECKS[check_id].doc, f"check {check_id} has no docstring"
    got = {n: rendered(_findings(cli, d / f"{n}.mbox", check_id, *args), tree)
           for n in ("good", "bad")}
    _snapshot(d / "good.snap", got["good"])
    _snapshot(d / "bad.snap", got["bad"])
    shown = {n: {line for line in text.splitlines() if not line.startswith(" ")}
             for n, text in got.items()}
    assert {line.split(" ", 1)[0] for line in shown["good"]} <= {"info"}, \
        "a good fixture has no warning or error"
    assert shown["bad"] - shown["good"], "the bad fixture says what the good one does not"


def _expected_pair(check_id: str) -> tuple[list, list]:
    d = FIX / check_id
    assert CHECKS[check_id].doc, f"check {check_id} has no docstring"
    good, bad = _expected(d / "good.expected"), _expected(d / "bad.expected")
    assert all(sev == "info" for sev, _, _ in good), "a good fixture has no warning or error"
    assert set(bad) - set(good), "bad.expected must hold a finding the good fixture lacks"
    return good, bad


def test_every_fixture_directory_is_a_check():
    assert sorted(p.name for p in FIX.iterdir() if p.is_dir()) == sorted(CHECKS)


@pytest.mark.parametrize("check_id", DIFF_ONLY)
def test_diff_check_flags_its_bad_fixture_only(cli, check_id):
    _good_and_bad(cli, check_id)


@pytest.mark.tree
@pytest.mark.parametrize("check_id", WITH_TREE)
def test_tree_check_flags_its_bad_fixture_only(cli, kernel_tree, check_id):
    _good_and_bad(cli, check_id, "--tree", kernel_tree, tree=kernel_tree)


# ------------------------------------------------------------------ job checks
# The command that runs a job check's job, as a user runs it: (words before
# the mbox, options after it). The build warnings run through `napipatch
# check --only ID`, which proves that check runs a job check it is asked for.
_TEST = {"build": (("test", "build"), ("--target", "virtio-net")),
         "boot": (("test", "boot"), ("--target", "virtio-net")),
         "remote": (("test", "remote"), ("--target", "idpf")),
         "kunit": (("test", "kunit"), ())}


def _command(check_id: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    job = CHECKS[check_id].job
    return (("check",), ()) if job in WARNING_JOBS else _TEST[job]


def _runs_of_job_fixtures() -> dict[tuple, list[str]]:
    """(command, mbox bytes) -> the job checks whose good or bad fixture it is."""
    out: dict[tuple, list[str]] = {}
    for check_id in JOB:
        for name in ("good.mbox", "bad.mbox"):
            key = (_command(check_id), (FIX / check_id / name).read_bytes())
            out.setdefault(key, [])
            if check_id not in out[key]:
                out[key].append(check_id)
    return out


RUNS = _runs_of_job_fixtures()
# NIPA's tools builds: no allmodconfig tree, a worktree and exports of their own
TOOLS_JOBS = ("ynl-tools", "build-tools", "dt-binding-check")


class JobRuns:
    """Each (command, mbox, environment) run once a session, its JSON report kept."""

    def __init__(self, cli: Cli, tree: Path, build_dir: Path):
        self.cli, self.tree, self.build_dir = cli, tree, build_dir
        self.reports: dict[tuple, dict] = {}

    def report(self, check_id: str, mbox: Path, env: dict | None = None) -> dict:
        """The report of ``check_id``'s command on ``mbox``, run with --only
        every job check whose fixture ``mbox`` is, the first time it is asked for."""
        command, text = _command(check_id), mbox.read_bytes()
        key = (command, text, tuple(sorted((env or {}).items())))
        if key not in self.reports:
            self.reports[key] = self.run(RUNS[(command, text)], mbox, env)
        return self.reports[key]

    def run(self, ids: list[str], mbox: Path, env: dict | None = None) -> dict:
        before, after = _command(ids[0])
        cp = self.cli(*before, mbox, "--tree", self.tree, *after, "--only", ",".join(ids),
                      "--format", "json",
                      env={"NAPIPATCH_BUILD_DIR": str(self.build_dir), **(env or {})})
        assert cp.returncode in (0, 1), (mbox, cp.returncode, cp.stdout[-3000:],
                                         cp.stderr[-3000:])
        return json.loads(cp.stdout)


@pytest.fixture(scope="module")
def job_runs(tmp_path_factory, kernel_tree, build_dir) -> JobRuns:
    d = tmp_path_factory.mktemp("job-fixtures")
    return JobRuns(Cli(d, d / "series", d / "cache"), kernel_tree, build_dir)


def _job_findings(report: dict, check_id: str, what: str) -> list[dict]:
    """``check_id``'s findings in ``report``, asserting it completed. A
    per-target check has one result per target (``build/virtio-net``), its
    findings the check's id (the remote check's are ``remote``)."""
    results = {c["id"]: c["status"] for c in report["checks"]
               if c["id"] == check_id or c["id"].startswith(check_id + "/")}
    assert results and all(s in COMPLETED for s in results.values()), (what, results)
    return [f for f in report["findings"] if f["check"] == check_id]


def _job_good_and_bad(job_runs: JobRuns, check_id: str, env: dict | None = None) -> None:
    good, bad = _expected_pair(check_id)
    for name, expected in (("good", good), ("bad", bad)):
        what = f"{check_id}/{name}.mbox"
        report = job_runs.report(check_id, FIX / check_id / f"{name}.mbox", env)
        _match(_job_findings(report, check_id, what), expected, what)


def test_job_fixtures_share_their_runs():
    """What keeps the build tests' time down: the checks of the boot job
    share one good run, the six build-warning checks another; 20 runs, not 26 (the
    tools builds, ynl-build, build-tools and dt-binding-check, have fixtures
    of their own: a spec, a selftest or a binding change, not the dummy
    driver's; so has kunit, a change beside a KUnit suite, built under UML in
    a directory of its own)."""
    assert sorted(sorted(ids) for ids in RUNS.values()) == sorted(
        [["build"], ["build"], ["boot", "selftest"], ["boot"], ["selftest"],
         ["remote"], ["remote"], ["ynl-build"], ["ynl-build"], ["build-tools"],
         ["build-tools"], ["dt-binding-check"], ["dt-binding-check"], ["kunit"], ["kunit"],
         ["build-32bit", "build-clang", "build-w1", "cocci", "htmldocs", "sparse"]]
        + [[i] for i in ("build-32bit", "build-clang", "build-w1", "cocci", "htmldocs",
                         "sparse")])
    # a shared run never spans the two build groups (it would run once in each)
    for ids in RUNS.values():
        assert len({i in _SHARES_VIRTIO_NET for i in ids}) == 1, ids


# build, boot and selftest build and boot in the virtio-net (and idpf)
# directories; the others (KUnit's UML, the warnings trees, the tools builds)
# each in one of their own: the second build group, run beside the first
# (tests/conftest.py). Their runs are shared within a group only.
_SHARES_VIRTIO_NET = ("build", "boot", "selftest")


@pytest.mark.build
@pytest.mark.tree
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("check_id", [
    pytest.param(i, marks=() if i in _SHARES_VIRTIO_NET else pytest.mark.side_build)
    for i in JOB if i != "remote"])
def test_job_check_flags_its_bad_fixture_only(request, job_runs, check_id):
    if CHECKS[check_id].job in WARNING_JOBS and CHECKS[check_id].job not in TOOLS_JOBS:
        # the allmodconfig trees configured and prepared once a session
        request.getfixturevalue("warnings_tree")
    _job_good_and_bad(job_runs, check_id)


@pytest.mark.build
@pytest.mark.tree
@pytest.mark.timeout(3600)
def test_remote_flags_its_bad_fixture_only(job_runs, sshd, veth_netns, tmp_path):
    """The loopback sshd as napipatch.idpf's host (boot none: the tip built
    for idpf is copied there, the plan runs on v0 in a network namespace).

    On that host no patch changes what the plan sees (it runs on this
    machine's kernel), so the bad fixture is a tip that is not booted
    because it does not build. That the plan's own failure reaches the
    remote check is shown on the host instead: the good tip again, on a host
    whose v0 is already threaded, fails the plan's first threaded test."""
    port, key = sshd
    env = {"GIT_CONFIG_GLOBAL": str(host_gitconfig(tmp_path / "gitconfig",
                                                   ssh_host(port, key, veth_netns)))}
    _job_good_and_bad(job_runs, "remote", env)
    # (a veth has its NAPI only while up: sysfs refuses threaded before)
    subprocess.run(["ip", "netns", "exec", veth_netns, "sh", "-c",
                    "ip link set v0 up && echo 1 > /sys/class/net/v0/threaded"], check=True)
    report = job_runs.run(["remote"], FIX / "remote" / "good.mbox", env)
    assert {c["id"]: c["status"] for c in report["checks"]} == {"remote/idpf": "fail"}
    failed = [f["message"] for f in _job_findings(report, "remote", "threaded host")
              if f["severity"] == "error"]
    assert failed and failed[0] == "idpf: test failed: threaded reads 0 by default", failed
