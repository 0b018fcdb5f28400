"""The bot's memory of test results (napipatch/bot/memory.py) judging the
failed selftests of a boot job, as the job reports them: the findings are
made by the same functions the boot job uses (``verdicts``), the memory is
the bot's real SQLite state, and the judged result goes through the same
call the pipeline makes (``jobchecks.results_of``)."""

from __future__ import annotations

import datetime
import shutil

from napipatch.bot.memory import KnownFailure, Memory, open_state_dir
from napipatch.bot.state import State
from napipatch.jobs.executor import OWN, JobResult
from napipatch.jobs.kunit.job import Run
from napipatch.jobs.kunit.job import result as kunit_job_result
from napipatch.jobs.kunit.ktap import Case
from napipatch.jobs.kunit.select import Selection, Suite
from napipatch.jobs.results.selftests import CaseResult
from napipatch.jobs.results.splats import scan
from napipatch.jobs.results.verdicts import selftest_findings, splat_findings
from napipatch.report.findings import Severity

BASE = "1" * 40
TEST = "net:nl_netdev.py:napi_threaded_check"
SPLAT = """\
[   12.345678] ------------[ cut here ]------------
[   12.345679] WARNING: CPU: 0 PID: 77 at net/core/dev.c:6789 napi_threaded_poll+0x1f/0x90
[   12.345680] Modules linked in:
[   12.345681] Call Trace:
[   12.345682]  <TASK>
[   12.345683]  napi_threaded_poll+0x1f/0x90
[   12.345684]  kthread+0xe5/0x120
[   12.345685]  ret_from_fork+0x31/0x50
[   12.345686]  </TASK>
[   12.345687] ---[ end trace 0000000000000000 ]---
"""


def boot_result(failing: bool, splat: bool = False, flaky: bool = False) -> JobResult:
    """A boot job's result on ``BASE`` with TEST failing or passing (and a
    splat during it): its findings made as the boot job makes them."""
    cases = [CaseResult(TEST, "not ok" if failing else "ok", excerpt="# napi threaded: -EINVAL",
                        flaky="failed on the first run, ok on the retry" if flaky else ""),
             CaseResult("net:nl_netdev.py:empty_check", "ok")]
    findings = selftest_findings("virtio-net", cases, 2, "c" * 40, set(), "/tmp/console.log")
    if splat:
        found = scan(SPLAT)
        for s in found:
            s.during = "net:nl_netdev.py"
        findings += splat_findings("virtio-net", found, 2, "c" * 40, set(), "/tmp/console.log")
    status = "fail" if any(f.severity is Severity.ERROR for f in findings) else "pass"
    return JobResult("boot", "virtio-net", status, findings, 1.0,
                     data={"selftests": [{"name": c.name, "status": c.status, "reason": c.reason,
                                          "excerpt": c.excerpt, "flaky": c.flaky}
                                         for c in cases]})


def failure(result: JobResult):
    [f] = [f for f in result.findings if TEST in f.message and "splat" not in f.message]
    return f


def test_second_failure_on_the_base_is_known_flaky_and_links_the_first(tmp_path):
    state = State(tmp_path / "bot.sqlite3")
    url = "http://bot.example.org"
    first = Memory(state, window=10, series_id=1, url=url).judge(boot_result(True), BASE)
    assert failure(first).severity is Severity.ERROR and first.status == "fail"
    # checked again (the bot died while checking it): still one run, and no flake of itself
    again = Memory(state, window=10, series_id=1, url=url).judge(boot_result(True), BASE)
    assert failure(again).severity is Severity.ERROR
    assert len(state.recent_results(TEST, BASE, "virtio-net", 10)) == 1
    Memory(state, window=10, series_id=2, url=url).judge(boot_result(False), BASE)
    third = Memory(state, window=10, series_id=3, url=url).judge(boot_result(True), BASE)
    f = failure(third)
    assert f.severity is Severity.WARNING and third.status == "warn"
    assert "known flaky, it failed on this base in 1 of the last 2 runs of other series: " \
           f"series #1 ({url}/series/1)" in f.message
    assert f.nipa == {OWN: "unknown"}  # the selftest check's contest: NIPA's own flaky list decides there
    # another base has no such memory: an error
    other = Memory(state, window=10, series_id=4).judge(boot_result(True), "2" * 40)
    assert failure(other).severity is Severity.ERROR
    # past the window, the old failure is forgotten
    for sid in range(5, 8):
        Memory(state, window=3, series_id=sid).judge(boot_result(False), BASE)
    late = Memory(state, window=3, series_id=8).judge(boot_result(True), BASE)
    assert failure(late).severity is Severity.ERROR
    assert [r["result"] for r in state.recent_results(TEST, BASE, "virtio-net", 3)] == \
        ["fail", "pass", "pass"]


def test_a_flake_elsewhere_makes_a_failure_known_flaky(tmp_path):
    state = State(tmp_path / "bot.sqlite3")
    flake = Memory(state, series_id=1).judge(boot_result(False, flaky=True), BASE)
    assert "flaky at" in failure_or_flake(flake).message
    later = Memory(state, series_id=2).judge(boot_result(True), BASE)
    assert failure(later).severity is Severity.WARNING
    assert "1 of the last 1 runs of other series: series #1" in failure(later).message


def failure_or_flake(result: JobResult):
    [f] = [f for f in result.findings if TEST in f.message]
    return f


def test_known_failure_is_info_until_its_date_and_a_splat_stays_an_error(tmp_path):
    state = State(tmp_path / "bot.sqlite3")
    known = [KnownFailure("net:nl_netdev.py", "netdevsim lacks threaded NAPI on 6.12",
                          datetime.date(2026, 12, 31))]
    before = Memory(state, known=known, today=datetime.date(2026, 12, 31)).judge(
        boot_result(True, splat=True), BASE)
    f = failure(before)
    assert f.severity is Severity.INFO
    assert f.message.endswith(": a known failure until 2026-12-31: netdevsim lacks threaded "
                              "NAPI on 6.12")
    [splat] = [x for x in before.findings if "splat" in x.message]
    assert splat.severity is Severity.ERROR and before.status == "fail"
    after = Memory(state, known=known, today=datetime.date(2027, 1, 1)).judge(
        boot_result(True), BASE)
    assert failure(after).severity is Severity.ERROR
    assert "its known_failure entry ended on 2026-12-31" in failure(after).message
    assert state.recent_results(TEST, BASE, "virtio-net", 10) == []  # no series: not recorded


def test_a_copy_of_the_state_judges_as_the_bot_and_keeps_nothing(tmp_path):
    state = State(tmp_path / "bot" / "bot.sqlite3")
    state.save_memory_settings(5, [{"test": TEST, "reason": "r", "until": "2099-01-01"}])
    Memory(state, series_id=1).judge(boot_result(True), BASE)
    state.close()
    shutil.copytree(tmp_path / "bot", tmp_path / "copy")
    mine = open_state_dir(tmp_path / "copy")
    assert mine.window == 5 and mine.known[0].until == datetime.date(2099, 1, 1)
    assert failure(mine.judge(boot_result(True), BASE)).severity is Severity.INFO
    mine.known = []
    assert failure(mine.judge(boot_result(True), BASE)).severity is Severity.WARNING
    assert len(mine.state.recent_results(TEST, BASE, "virtio-net", 10)) == 1


def test_known_failure_needs_a_reason_and_a_date(cli, tmp_path):
    base = f"""
[state]
dir = "{tmp_path / 'state'}"
[[inbox]]
name = "netdev"
path = "{tmp_path}"
"""
    cfg = tmp_path / "bot.toml"
    for entry, key in (('test = "net:a.sh"\nuntil = "2027-01-01"', "known_failure[0]"),
                       ('test = "net:a.sh"\nreason = " "\nuntil = "2027-01-01"',
                        "known_failure[0].reason"),
                       ('test = "net:a.sh"\nreason = "r"\nuntil = "soon"',
                        "known_failure[0].until"),
                       ('test = "net:a.sh"\nreason = "r"\nuntil = "2027-02-30"',
                        "known_failure[0].until")):
        cfg.write_text(base + "[[known_failure]]\n" + entry + "\n")
        cp = cli("bot", "status", "--config", cfg, check=2)
        assert cp.stderr.count("\n") == 1 and key in cp.stderr, cp.stderr


def test_memory_that_is_no_bot_state_is_one_line(cli, tmp_path):
    for cmd in ("run", "boot", "kunit"):
        cp = cli("test", cmd, "HEAD", "--tree", tmp_path, "--memory", tmp_path / "nowhere",
                 check=2)
        assert cp.stderr.count("\n") == 1 and \
            "nowhere: no bot state here (bot.sqlite3 is missing)" in cp.stderr, cp.stderr


def kunit_result(failing: bool, crashed: bool = False) -> JobResult:
    """The kunit job's result (its own ``result()``) of one suite whose case fails or passes."""
    status = "crashed" if crashed else "not ok" if failing else "ok"
    cases = [Case("net_core.gso_test_func", "linear", status, "net/core/net_test.c", 242,
                  "gso_test_func: EXPECTATION FAILED at net/core/net_test.c:242"),
             Case("net_core.gso_test_func", "no_gso")]
    sel = Selection(suites=[Suite("NET_TEST", ["net/core/net_test.o"], "net/core changed")])
    return kunit_job_result(sel, Run("b" * 40, ["CONFIG_KUNIT=y"], True, cases), None, 1, 1.0)


def test_kunit_cases_are_remembered_and_a_crash_is_never_judged(tmp_path):
    state = State(tmp_path / "bot.sqlite3")
    Memory(state, series_id=1).judge(kunit_result(True), BASE)
    again = Memory(state, series_id=2).judge(kunit_result(True), BASE)
    [f] = [f for f in again.findings if f.severity is not Severity.INFO or f.file]
    assert f.severity is Severity.WARNING
    assert "known flaky, it failed on this base in 1 of the last 1 runs of other series: " \
           "series #1" in f.message and f.message.startswith("KUnit net_core.gso_test_func "
                                                                "[linear] fails: ")
    known = [KnownFailure("kunit:net_core", "gso under UML", datetime.date(2099, 1, 1))]
    crash = Memory(state, known=known, series_id=3).judge(kunit_result(True, crashed=True), BASE)
    assert [f.severity for f in crash.findings if f.file] == [Severity.ERROR]
    info = Memory(state, known=known).judge(kunit_result(True), BASE)
    assert [f.severity for f in info.findings if f.file] == [Severity.INFO]
    assert [r["result"] for r in state.recent_results(
        "kunit:net_core.gso_test_func [linear]", BASE, "kunit", 5)] == ["crash", "fail", "fail"]
