"""The verdict never says clean unless every planned check completed.

Exit status: 0 clean, 1 error findings, 2 a check timed out or could not
run, 3 a check crashed; every output format says which checks gave no
result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import LORE

V4 = LORE / "threaded-busy-poll-v4.mbox"
ONLY = "subject,signoff,split"


def _strict_budget(cli):
    """A repository whose config gives checks a budget none can meet."""
    subprocess.run(["git", "init", "-q", str(cli.cwd)], check=True)
    subprocess.run(["git", "-C", str(cli.cwd), "config", "napipatch.check-timeout", "0.000001"],
                   check=True)


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "terse"])
def test_timed_out_checks_exit_2_and_show_in_every_format(cli, fmt):
    _strict_budget(cli)
    cp = cli("check", V4, "--only", ONLY, "--format", fmt)
    assert cp.returncode == 2, cp.stderr
    assert cp.stderr == (f"napipatch: error: {V4}: not fully checked: 0 of 3 checks completed; "
                         "3 timed out: signoff, split, subject\n")
    out = cp.stdout
    if fmt == "text":
        assert "NOT CHECKED: signoff timed out (ran past 1e-06 s)" in out
        assert "0 of 3 checks completed; 3 timed out: signoff, split, subject" in out
        assert "verdict: incomplete, NOT clean: 3 checks gave no result (exit 2)" in out
    elif fmt == "json":
        data = json.loads(out)
        s = data["summary"]
        assert (s["verdict"], s["exit_status"], s["planned"], s["completed"]) == ("timeout", 2, 3, 0)
        assert [c["id"] for c in s["incomplete"]] == ["signoff", "split", "subject"]
        assert {c["status"] for c in data["checks"]} == {"timeout"}
    elif fmt == "markdown":
        assert "**Incomplete, not clean:** `signoff` timeout" in out
    else:
        assert "ERROR: [subject] timed out: ran past 1e-06 s; this patch is not fully checked" in out


def test_a_clean_complete_run_says_so_and_exits_0(cli):
    cp = cli("check", V4, "--only", "signoff", "--format", "json")
    data = json.loads(cp.stdout)
    assert cp.returncode == 0
    assert data["summary"]["verdict"] == "clean"
    assert data["summary"]["line"] == "1 of 1 checks completed"
    text = cli("check", V4, "--only", "signoff").stdout
    assert "total: 0 errors, 0 warnings, 0 info; 1 of 1 checks completed" in text
    assert "NOT CHECKED" not in text and "verdict:" not in text


def _run_patched(cli, patch: str, *args) -> subprocess.CompletedProcess:
    """``napipatch check`` with one check's run() replaced by ``patch`` (code)."""
    code = ("import sys, napipatch.cli as c, napipatch.checks.signoff as s\n"
            "from napipatch.errors import NapipatchError\n"
            "def redeclare(module, fn):\n"   # the new run keeps the check's declaration
            "    fn.declaration = module.run.declaration\n"
            "    fn.__module__ = module.__name__\n"
            "    module.run = fn\n"
            f"{patch}\n"
            "sys.argv = ['napipatch', *sys.argv[1:]]\nc.main()\n")
    env = dict(os.environ, XDG_CACHE_HOME=str(cli.cache), NAPIPATCH_SERIES_DIR=str(cli.store))
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, env=env, cwd=cli.cwd, timeout=120)


def test_a_crashed_check_exits_3_and_names_it(cli):
    cp = _run_patched(cli, "def boom(ctx): raise KeyError('oops')\nredeclare(s, boom)",
                      "check", V4, "--only", ONLY, "--no-cache")
    assert cp.returncode == 3, cp.stderr
    assert "[signoff] check crashed: KeyError: 'oops'" in cp.stdout
    assert "NOT CHECKED: signoff crashed" in cp.stdout
    assert "2 of 3 checks completed; 1 crashed: signoff" in cp.stdout
    assert cp.stderr == (f"napipatch: internal error: {V4}: 2 of 3 checks completed; 1 crashed: "
                         "signoff (report this to napipatch)\n")


def test_a_check_that_cannot_run_here_exits_2(cli):
    cp = _run_patched(cli, "def env(ctx): raise NapipatchError('codespell', 'dictionary missing')\n"
                      "redeclare(s, env)", "check", V4, "--only", ONLY, "--no-cache", "--format", "json")
    assert cp.returncode == 2, cp.stderr
    data = json.loads(cp.stdout)
    assert data["summary"]["incomplete"] == [{"id": "signoff", "status": "error",
                                              "reason": "codespell: dictionary missing"}]
    assert "2 of 3 checks completed; 1 could not run: signoff" == data["summary"]["line"]


def test_error_findings_and_a_crash_exit_3_not_1(cli, tmp_path):
    """The most severe state wins: a missing verdict outranks error findings."""
    bad = tmp_path / "nosob.mbox"
    bad.write_text(V4.read_text().replace("Signed-off-by:", "Signed-off-bx:"))
    cp = _run_patched(cli, "import napipatch.checks.split as sp\n"
                      "def boom(ctx): raise RuntimeError('x')\nredeclare(sp, boom)",
                      "check", bad, "--only", ONLY, "--no-cache", "--format", "json")
    data = json.loads(cp.stdout)
    assert data["summary"]["errors"] > 0
    assert (cp.returncode, data["summary"]["verdict"]) == (3, "crashed")


def test_an_infrastructure_failure_of_a_job_is_no_result_not_a_pass():
    """An unreachable idpf host or a full disk: the series was not tested there."""
    from napipatch.engine.registry import discover
    from napipatch.jobs.executor import infra_result
    from napipatch.mails.mbox import read_mbox
    from napipatch.mails.series import assemble
    from napipatch.pipeline.jobchecks import results_of
    from napipatch.report.model import CheckResult, build
    from napipatch.report.render import render_report

    report = build(assemble(read_mbox(V4), str(V4)), [
        (CheckResult("build/virtio-net", "pass", 1.0), []),
        *results_of([discover()["remote"]],
                    infra_result("remote", "idpf", "host 10.0.0.2 unreachable", 3))])
    assert (report.verdict, report.exit_code) == ("error", 2)
    text = render_report(report, "text")
    assert "NOT CHECKED: remote/idpf could not run" in text
    assert "1 of 2 checks completed; 1 could not run: remote/idpf" in text
    assert "infrastructure failure after 3 tries" in text


def test_an_unreadable_diff_is_said_once_and_is_never_clean(cli, tmp_path):
    """A hunk cut short: every check that reads the diff could not run; the
    reason is one line naming the mail, and the exit is 2, not 1."""
    bad = tmp_path / "cut.mbox"
    bad.write_text(V4.read_text().replace("@@ -280,6 +280,14 @@ attribute-sets:",
                                          "@@ -280,6 +280,40 @@ attribute-sets:", 1))
    cp = cli("check", bad, "--only", "split,subject,kdoc,cachelines", "--format", "json")
    assert cp.returncode == 2, cp.stderr
    data = json.loads(cp.stdout)
    said = [f for f in data["findings"] if "the diff cannot be parsed" in f["message"]]
    assert len(said) == 1 and said[0]["patch"] == 1
    assert said[0]["message"] == (f"could not run: {bad} message 2: the diff cannot be parsed: "
                                  "Hunk diff line expected: @@ -691,6 +699,7 @@ operations:")
    # and one line on stderr naming the input and the reason, as for any bad input
    assert cp.stderr == (f"napipatch: error: {bad} message 2: the diff cannot be parsed: "
                         "Hunk diff line expected: @@ -691,6 +699,7 @@ operations:\n")
    status = {c["id"]: c["status"] for c in data["checks"]}
    assert status == {"cachelines": "error", "kdoc": "error", "split": "error", "subject": "warn"}


def test_remote_findings_carry_the_remote_check_id():
    """The remote job makes its findings on its channel (``host``) of its
    target (idpf); in the report they are the ``remote`` check's, as ``--only remote`` and
    ``checks[].id`` (``remote/idpf``) name it: a reader filtering the JSON
    report's findings by the check it asked for finds them."""
    from napipatch.engine.registry import discover
    from napipatch.jobs.executor import JobResult
    from napipatch.mails.mbox import read_mbox
    from napipatch.mails.series import assemble
    from napipatch.pipeline.jobchecks import results_of
    from napipatch.report.findings import Finding, Severity
    from napipatch.report.model import build
    from napipatch.report.render import render_report

    job = JobResult("remote", "idpf", "fail", [
        Finding(check="host", severity=Severity.ERROR, patch=4,
                message="idpf: test failed: threaded reads 0 by default"),
        Finding(check="host", severity=Severity.INFO, patch=0,
                message="idpf host 10.0.0.2: kernel 6.12.0 (kexec), 3 ok, 1 not ok")], 12.0)
    report = build(assemble(read_mbox(V4), str(V4)), results_of([discover()["remote"]], job))
    data = json.loads(render_report(report, "json"))
    assert [(c["id"], c["status"]) for c in data["checks"]] == [("remote/idpf", "fail")]
    assert [(f["check"], f["severity"], f["patch"]) for f in data["findings"]] == \
        [("remote", "info", 0), ("remote", "error", 4)]  # the report's order: by patch


SERIES_612 = Path(__file__).resolve().parent.parent / "series/threaded-busy-poll-6.12/v4"


@pytest.mark.tree
def test_a_job_that_raises_crashes_its_checks_and_the_others_report(cli, kernel_tree):
    """A job raising mid-run (the docs build, after reading what the series
    changed) is its checks' crash with the exception's first line; the
    static checks still report, the run is never clean: exit 3, the
    verdict of every crash (README's exit-status table)."""
    cp = _run_patched(cli, "import napipatch.jobs.warnings.docs as d\n"
                      "def boom(path, exists): raise RuntimeError('sphinx went away\\nline two')\n"
                      "d.sphinx_dir = boom",
                      "check", SERIES_612, "--tree", kernel_tree, "--only",
                      "htmldocs,subject,signoff", "--no-cache", "--format", "json")
    assert cp.returncode == 3, cp.stderr
    data = json.loads(cp.stdout)
    status = {c["id"]: c["status"] for c in data["checks"]}
    assert status["htmldocs"] == "crashed" and status["subject"] in ("pass", "info", "warn")
    assert status["signoff"] in ("pass", "info", "warn", "fail")
    assert data["summary"]["verdict"] == "crashed"
    assert data["summary"]["incomplete"] == [{
        "id": "htmldocs", "status": "crashed",
        "reason": "job crashed: RuntimeError: sphinx went away"}]
    [said] = [f for f in data["findings"] if f["check"] == "htmldocs"]
    assert said["message"] == "job crashed: RuntimeError: sphinx went away"
    assert "line two" not in said["message"] and "Traceback" in said["details"]


@pytest.mark.tree
def test_a_build_past_its_deadline_is_killed_with_its_children(kernel_tree, base_commit,
                                                               tmp_path):
    """napipatch.build.job-timeout: the build's make and the compilers it
    started are killed at the deadline, no other step starts, and the
    build's checks time out."""
    from napipatch.jobs.build.job import BuildJob
    from napipatch.jobs.executor import LocalExecutor

    build = tmp_path / "build"
    os.environ["NAPIPATCH_BUILD_DIR"] = str(build)
    log = ""
    try:
        # The worktree first, with no deadline: under a loaded CI its full
        # checkout alone can outlast every 20 s run, each one killed and
        # restarted from a stale index.lock, and make is never reached.
        from napipatch.jobs.build.builder import checkout_worktree, dirs_for
        from napipatch.jobs.targets import load
        src = dirs_for(kernel_tree, load("virtio-net"), tmp_path / "cache").src
        src.parent.mkdir(parents=True)
        checkout_worktree(kernel_tree, src, base_commit, lambda _msg: None)
        # Each run goes on from what the last one left, until one is in make.
        for _ in range(5):
            job = BuildJob(repo=kernel_tree, target="virtio-net", base=base_commit, commits=[],
                           cache=tmp_path / "cache", jobs=2)
            res = LocalExecutor(timeouts={"build": 20.0}.get).submit(job)
            assert res.status == "timeout", [f.message for f in res.findings]
            assert [f.message for f in res.findings] == [
                "build job ran past its deadline of 20 s and was stopped with what it started; "
                "its result is missing from this report"]
            logs = sorted(build.glob("*/virtio-net/logs/*.log"))
            log = logs[-1].read_text() if logs else ""
            if "  HOSTCC  " in log:
                break
    finally:
        del os.environ["NAPIPATCH_BUILD_DIR"]
    assert "  HOSTCC  " in log, log  # make was running, compilers under it
    left = subprocess.run(["pgrep", "-f", str(build)], capture_output=True, text=True)
    assert left.stdout.split() == []
