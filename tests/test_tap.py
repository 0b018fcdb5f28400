"""napipatch.jobs.results.tap on what the kernel's tools really print.

The samples are the output of the 6.12 tree's own kselftest.h,
kselftest_harness.h and kselftest/ktap_helpers.sh (compiled and run: the
tree test at the bottom regenerates them and compares), the nested example
of Documentation/dev-tools/ktap.rst, the lines kselftest/runner.sh prints,
and a plan's TAP 13 on a serial console as the boot reads it.
"""

from __future__ import annotations

import subprocess

import pytest
from conftest import git

from napipatch.jobs.boot import result
from napipatch.jobs.boot.console import BEGIN, END
from napipatch.jobs.results import tap
from napipatch.jobs.results.selftests import ProgramRun, case_results
from napipatch.jobs.results.verdicts import selftest_counts, tap_counts, tap_lines

# kselftest.h: pass, a message, fail, skip, xfail, error, an XPASS and a
# fail with a message through ksft_test_result_code, then ksft_finished().
KSELFTEST_H = """\
TAP version 13
1..7
ok 1 napi_id is set
# threaded read back 0, want 1
not ok 2 threaded reads back 1
ok 3 # SKIP no busy-poll support
ok 4 # XFAIL known broken on TCG
not ok 5 # error socket: Operation not permitted
ok 6 defer_hard_irqs # XPASS 
not ok 7 gro_flush_timeout #  wrote 5
# Totals: pass:1 fail:2 xfail:1 xpass:1 skip:1 error:1
"""
KSELFTEST_C = r"""#include "kselftest.h"
int main(void)
{
	ksft_print_header();
	ksft_set_plan(7);
	ksft_test_result_pass("napi_id is set\n");
	ksft_print_msg("threaded read back %d, want %d\n", 0, 1);
	ksft_test_result_fail("threaded reads back 1\n");
	ksft_test_result_skip("no busy-poll support\n");
	ksft_test_result_xfail("known broken on TCG\n");
	ksft_test_result_error("socket: Operation not permitted\n");
	ksft_test_result_code(KSFT_XPASS, "defer_hard_irqs", NULL);
	ksft_test_result_code(KSFT_FAIL, "gro_flush_timeout", "wrote %d", 5);
	ksft_finished();
}
"""

# kselftest/ktap_helpers.sh: pass, a message, fail, skip, ktap_finished.
KTAP_HELPERS = """\
TAP version 13
1..3
ok 1 link up
# eth0 has no carrier
not ok 2 carrier
ok 3 busy poll # SKIP
# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0
"""
KTAP_HELPERS_SH = """. ./ktap_helpers.sh
ktap_print_header
ktap_set_plan 3
ktap_test_pass "link up"
ktap_print_msg "eth0 has no carrier"
ktap_test_fail "carrier"
ktap_test_skip "busy poll"
ktap_finished
"""
SKIP_ALL = "TAP version 13\n1..0 # SKIP no netdevsim\n"
SKIP_ALL_SH = '. ./ktap_helpers.sh\nktap_print_header\nktap_skip_all "no netdevsim"\nexit 4\n'

# kselftest_harness.h: TEST() cases, EXPECT_EQ failing, SKIP(); stdout
# line-buffered and stderr merged, as on the guest's console.
HARNESS_C = r"""#include "kselftest_harness.h"
TEST(napi_id) { ASSERT_EQ(1, 1); }
TEST(threaded) { EXPECT_EQ(0, 1); }
TEST(busy_poll) { SKIP(return, "no busy-poll support"); }
TEST_HARNESS_MAIN
"""
HARNESS = """\
TAP version 13
1..3
# Starting 3 tests from 1 test cases.
#  RUN           global.napi_id ...
#            OK  global.napi_id
ok 1 global.napi_id
#  RUN           global.threaded ...
# h.c:3:threaded:Expected 0 (0) == 1 (1)
# threaded: Test failed
#          FAIL  global.threaded
not ok 2 global.threaded
#  RUN           global.busy_poll ...
#      SKIP      no busy-poll support
#            OK  global.busy_poll
ok 3 global.busy_poll # SKIP no busy-poll support
# FAILED: 2 / 3 tests passed.
# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0
"""

# Documentation/dev-tools/ktap.rst, "Example KTAP output" (nested, 2 spaces a level).
NESTED = """\
KTAP version 1
1..1
  KTAP version 1
  1..3
    KTAP version 1
    1..1
    # test_1: initializing test_1
    ok 1 test_1
  ok 1 example_test_1
    KTAP version 1
    1..2
    ok 1 test_1 # SKIP test_1 skipped
    ok 2 test_2
  ok 2 example_test_2
    KTAP version 1
    1..3
    ok 1 test_1
    # test_2: FAIL
    not ok 2 test_2
    ok 3 test_3 # SKIP test_3 skipped
  not ok 3 example_test_3
not ok 1 main_test
"""

# kselftest/runner.sh's result lines (run_kselftest.sh): a program's own
# output comes "# "-prefixed before its line.
RUNNER = """\
TAP version 13
1..4
# timeout set to 45
# selftests: net: nl_netdev.py
# ok 1 nl_netdev.empty_check
ok 1 selftests: net: nl_netdev.py
ok 2 selftests: net: b.sh # SKIP
#
not ok 3 selftests: net: c.sh # TIMEOUT 45 seconds
not ok 4 selftests: net: d.sh # exit=1
"""


def _rows(results):
    return [(r.n, r.description, r.status, r.reason) for r in results]


def test_kselftest_h_results_directives_and_reasons():
    t = tap.parse(KSELFTEST_H.splitlines())
    assert t.plan == 7 and t.skip_all is None and t.bail_out is None
    assert _rows(t.results) == [
        (1, "napi_id is set", "ok", ""),
        (2, "threaded reads back 1", "not ok", ""),
        (3, "", "skip", "no busy-poll support"),  # no description: the directive follows the number
        (4, "", "xfail", "XFAIL known broken on TCG"),  # expected to fail: not a failure
        (5, "", "not ok", "ERROR socket: Operation not permitted"),
        (6, "defer_hard_irqs", "not ok", "XPASS"),  # kselftest exits 1 on an XPASS
        (7, "gro_flush_timeout", "not ok", "wrote 5"),  # "#  msg": data, no directive
    ]
    assert t.results[1].before == ["# threaded read back 0, want 1"]
    assert t.results[1].line == "not ok 2 threaded reads back 1"


def test_ktap_helpers_sh_and_its_skip_all_plan():
    t = tap.parse(KTAP_HELPERS.splitlines())
    assert _rows(t.results) == [(1, "link up", "ok", ""), (2, "carrier", "not ok", ""),
                                (3, "busy poll", "skip", "")]
    assert t.results[1].before == ["# eth0 has no carrier"]
    t = tap.parse(SKIP_ALL.splitlines())
    assert (t.plan, t.skip_all, t.results) == (0, "no netdevsim", [])


def test_kselftest_harness_h():
    t = tap.parse(HARNESS.splitlines())
    assert _rows(t.results) == [(1, "global.napi_id", "ok", ""),
                                (2, "global.threaded", "not ok", ""),
                                (3, "global.busy_poll", "skip", "no busy-poll support")]
    assert "# h.c:3:threaded:Expected 0 (0) == 1 (1)" in t.results[1].before
    assert "#  RUN           global.napi_id ..." not in t.results[1].before


def test_ktap_nested_subtests_by_indentation():
    t = tap.parse(NESTED.splitlines())
    [main] = t.results
    assert (main.description, main.status, main.depth, t.plan) == ("main_test", "not ok", 0, 1)
    assert _rows(main.subtests) == [(1, "example_test_1", "ok", ""),
                                    (2, "example_test_2", "ok", ""),
                                    (3, "example_test_3", "not ok", "")]
    ex1, ex2, ex3 = main.subtests
    assert ex1.depth == 1 and _rows(ex1.subtests) == [(1, "test_1", "ok", "")]
    assert ex1.subtests[0].depth == 2
    assert ex1.subtests[0].before == ["    KTAP version 1", "    1..1",
                                      "    # test_1: initializing test_1"]
    assert _rows(ex2.subtests) == [(1, "test_1", "skip", "test_1 skipped"), (2, "test_2", "ok", "")]
    assert [r.status for r in ex3.subtests] == ["ok", "not ok", "skip"]
    assert ex3.subtests[1].before == ["    # test_2: FAIL"]
    # a parent's excerpt holds its subtests' lines
    assert "    not ok 2 test_2" in main.before and "    not ok 2 test_2" in ex3.before


def test_subtests_whose_parent_never_reports_are_kept():
    """A program killed mid-block: its subtests are still results."""
    t = tap.parse(["KTAP version 1", "1..1", "  KTAP version 1", "  1..2", "  ok 1 first",
                   "  not ok 2 second"])
    assert _rows(t.results) == [(1, "first", "ok", ""), (2, "second", "not ok", "")]


def test_runner_sh_lines_timeout_exit_and_prefixed_output():
    t = tap.parse(RUNNER.splitlines())
    assert _rows(t.results) == [
        (1, "selftests: net: nl_netdev.py", "ok", ""),
        (2, "selftests: net: b.sh", "skip", ""),
        (3, "selftests: net: c.sh", "not ok", "TIMEOUT 45 seconds"),
        (4, "selftests: net: d.sh", "not ok", "exit=1"),
    ]  # "# ok 1 nl_netdev.empty_check" is the program's output: a diagnostic


def test_todo_and_bail_out():
    t = tap.parse(["TAP version 13", "1..3", "not ok 1 - summary is correct # TODO not written yet",
                   "ok 2 - fixed already # todo", "Bail out! no /sys/class/net/eth0",
                   "ok 3 - after"])
    assert _rows(t.results) == [(1, "summary is correct", "xfail", "TODO not written yet"),
                                (2, "fixed already", "ok", "TODO"),
                                (3, "after", "ok", "")]
    assert t.bail_out == "no /sys/class/net/eth0"


def test_the_boot_plan_on_a_console():
    """TAP 13 between the markers: details after a failure, CRs, a kernel
    message sharing a result's line, and the selftests' KTAP after the end
    marker left alone."""
    console = "\n".join([
        "[    0.912] virtio_net virtio0 eth0: renamed", BEGIN,
        "TAP version 13", "# napipatch threaded NAPI plan", "ok 1 - eth0 exists\r",
        "not ok 2 - threaded reads back 1", "# expected '1', got '0'",
        "[    3.101] random: crng init done", "# second detail line",
        "[    4.2] virtio_net: link up ok 3 - ping through threaded NAPI",
        "# ok 9 - this is a comment, not a result",
        "ok 4 - threaded=2 (busy poll) # SKIP kernel refuses 2", "1..4",
        f"{END} rc=1", "ok 5 - selftest case, not the plan's"])
    tests = result.parse_tap(console)
    assert _rows(tests) == [(1, "eth0 exists", "ok", ""),
                            (2, "threaded reads back 1", "not ok", ""),
                            (3, "ping through threaded NAPI", "ok", ""),
                            (4, "threaded=2 (busy poll)", "skip", "kernel refuses 2")]
    assert tests[1].after == ["expected '1', got '0'", "second detail line"]
    assert tap_counts(tests) == "2 ok, 1 skip, 1 not ok"
    assert tap_lines(tests).splitlines()[3] == \
        "skip    4 - threaded=2 (busy poll)  (kernel refuses 2)"
    assert result.parse_tap("no markers at all\nok 1 - x\n") == []


def test_selftest_cases_from_kselftest_h_ktap():
    cases = case_results(ProgramRun("net:busy_poll_test", 1, KSELFTEST_H.splitlines()))
    assert [(c.name, c.status, c.reason) for c in cases] == [
        ("net:busy_poll_test:napi_id is set", "ok", ""),
        ("net:busy_poll_test:threaded reads back 1", "not ok", ""),
        ("net:busy_poll_test:3", "skip", "no busy-poll support"),
        ("net:busy_poll_test:4", "xfail", "XFAIL known broken on TCG"),
        ("net:busy_poll_test:5", "not ok", "ERROR socket: Operation not permitted"),
        ("net:busy_poll_test:defer_hard_irqs", "not ok", "XPASS"),
        ("net:busy_poll_test:gro_flush_timeout", "not ok", "wrote 5"),
    ]
    assert cases[1].excerpt == "# threaded read back 0, want 1\nnot ok 2 threaded reads back 1"
    assert selftest_counts(cases) == "1 ok, 1 skip, 4 not ok, 1 xfail"


def test_selftest_skip_all_and_bail_out_reasons():
    [case] = case_results(ProgramRun("net:a.sh", 4, SKIP_ALL.splitlines()))
    assert (case.name, case.status, case.reason) == ("net:a.sh", "skip", "no netdevsim")
    out = ["TAP version 13", "1..2", "ok 1 a.first", "Bail out! cannot open /dev/net/tun"]
    cases = case_results(ProgramRun("net:a.sh", 1, out))
    assert [(c.name, c.status, c.reason) for c in cases] == [
        ("net:a.sh:first", "ok", ""),
        ("net:a.sh", "not ok", "exit status 1 (Bail out! cannot open /dev/net/tun)")]


@pytest.mark.tree
def test_the_samples_are_what_the_trees_helpers_print(kernel_tree, tmp_path):
    """kselftest.h, kselftest_harness.h and ktap_helpers.sh of the 6.12
    tree, compiled and run."""
    for path in ("tools/testing/selftests/kselftest.h",
                 "tools/testing/selftests/kselftest_harness.h",
                 "tools/testing/selftests/kselftest/ktap_helpers.sh"):
        text = git(kernel_tree, "show", f"HEAD:{path}") + "\n"
        (tmp_path / path.rsplit("/", 1)[1]).write_text(text)
    for name, text in (("t", KSELFTEST_C), ("h", HARNESS_C)):
        (tmp_path / f"{name}.c").write_text(text)
        subprocess.run(["gcc", "-o", name, f"{name}.c"], cwd=tmp_path, check=True)
    runs = [(["./t"], KSELFTEST_H, 1), (["sh", "-c", "stdbuf -oL ./h 2>&1"], HARNESS, 1),
            (["sh", "-c", KTAP_HELPERS_SH], KTAP_HELPERS, 1),
            (["sh", "-c", SKIP_ALL_SH], SKIP_ALL, 4)]
    for cmd, sample, rc in runs:
        cp = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
        assert (cp.returncode, cp.stdout) == (rc, sample), cmd
