"""KUnit (the kunit check): KTAP read into failing cases at FILE:LINE, the
base's failures as pre-existing, the suites a series reaches and their
.kunitconfig, and a missing tool. The real UML runs are the check's good
and bad fixtures (tests/test_checks_fixtures.py, marked build)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from napipatch.jobs.kunit import ktap
from napipatch.jobs.kunit.job import Run, result
from napipatch.jobs.kunit.select import kernel_paths, select
from napipatch.report.forecast import state_of

FIX = Path(__file__).parent / "fixtures" / "checks"

# As a 6.12 UML run prints it (kunit.py's test.log): console lines, then KTAP.
LOG = """\
Linux version 6.12.117 (napipatch@napipatch) #1 Thu Jan  1 00:00:00 UTC 1970
KTAP version 1
1..2
    KTAP version 1
    # Subtest: dev-addr-list-test
    # module: dev_addr_lists_test
    1..2
    # dev_addr_test_basic: EXPECTATION FAILED at net/core/dev_addr_lists_test.c:73
    Expected netdev->dev_addr == addr, but
        netdev->dev_addr ==
         02  02  02  02  02  00
        addr ==
         02  02  02  02  02  02
    not ok 1 dev_addr_test_basic
    ok 2 dev_addr_test_sync_one
# dev-addr-list-test: pass:1 fail:1 skip:0 total:2
# Totals: pass:1 fail:1 skip:0 total:2
not ok 1 dev-addr-list-test
    KTAP version 1
    # Subtest: net_core
    # module: net_test
    1..2
        KTAP version 1
        # Subtest: gso_test_func
        ok 1 no_gso
        # gso_test_func: ASSERTION FAILED at net/core/net_test.c:242
        Expected cur->len == sizeof(hdr) + tcase->segs[i], but
        not ok 2 linear
    # gso_test_func: pass:1 fail:1 skip:0 total:2
    not ok 1 gso_test_func
    ok 2 ip_tunnel_flags_test_run # SKIP no tunnels here
# net_core: pass:0 fail:1 skip:1 total:2
not ok 2 net_core
"""


def test_a_failing_case_is_named_as_ktap_names_it_at_its_file_and_line():
    got = {c.label: c for c in ktap.cases(LOG)}
    assert {k: c.status for k, c in got.items()} == {
        "dev-addr-list-test.dev_addr_test_basic": "not ok",
        "dev-addr-list-test.dev_addr_test_sync_one": "ok",
        "net_core.gso_test_func [no_gso]": "ok",
        "net_core.gso_test_func [linear]": "not ok",
        "net_core.ip_tunnel_flags_test_run": "skip"}
    basic = got["dev-addr-list-test.dev_addr_test_basic"]
    assert (basic.file, basic.line) == ("net/core/dev_addr_lists_test.c", 73)
    assert basic.first == "dev_addr_test_basic: EXPECTATION FAILED at " \
                         "net/core/dev_addr_lists_test.c:73"
    assert "addr ==" in basic.details
    linear = got["net_core.gso_test_func [linear]"]
    assert (linear.file, linear.line) == ("net/core/net_test.c", 242)


def test_a_suite_the_kernel_stopped_in_is_crashed():
    cut = LOG[:LOG.index("        not ok 2 linear")] + "BUG: kernel NULL pointer dereference\n"
    crashed = [c for c in ktap.cases(cut) if c.status == "crashed"]
    assert [c.name for c in crashed] == ["net_core"]
    assert "BUG: kernel NULL pointer dereference" in crashed[0].details


def _sel(tree: Path):
    return select(tree, "HEAD", ["net/core/dev_addr_lists.c"])


def _run(log: str, commit: str = "b" * 40) -> Run:
    return Run(commit, ["CONFIG_KUNIT=y"], built=True, cases=ktap.cases(log))


@pytest.mark.tree
def test_new_failures_are_errors_and_the_bases_own_are_infos(kernel_tree):
    base_log = LOG.replace("    # dev_addr_test_basic: EXPECTATION", "    # x: EXPECTATION") \
        .replace("not ok 1 dev_addr_test_basic", "ok 1 dev_addr_test_basic")
    res = result(_sel(kernel_tree), _run(LOG), _run(base_log, "a" * 40), 1, 1.0)
    assert res.status == "fail"
    by = {(f.severity.value, f.file, f.line): f.message for f in res.findings}
    assert by[("error", "net/core/dev_addr_lists_test.c", 73)].startswith(
        "KUnit dev-addr-list-test.dev_addr_test_basic fails: ")
    assert by[("info", "net/core/net_test.c", 242)].startswith(
        "KUnit net_core.gso_test_func [linear] fails at the base too: ")
    # for NIPA's contest: a new failure fails it (it counts by its severity),
    # one the base has too is unknown (NIPA's filters may ignore it)
    nipa = {f.severity.value: f.nipa for f in res.findings if f.file}
    assert nipa == {"error": None, "info": {"*": "unknown"}}  # the reading check's contexts
    assert state_of(next(f for f in res.findings if f.severity.value == "error"),
                    "contest") == "fail"
    summary = [f for f in res.findings if f.patch == 0][0]
    assert "2 suites (dev-addr-list-test, net_core), 2 passed, 2 failed, 1 skipped, " \
           "run at the base too" in summary.message
    assert "NETDEV_ADDR_LIST_TEST: net/core/Makefile builds " \
           "net/core/dev_addr_lists_test.o (in net/core/" in summary.details
    clean = result(_sel(kernel_tree), _run(LOG.replace("not ok", "ok")), None, 1, 1.0)
    assert clean.status == "pass" and [f.severity.value for f in clean.findings] == ["info"]


@pytest.mark.tree
def test_the_suites_in_and_beside_the_touched_directories_and_their_kunitconfig(kernel_tree):
    """net/core's Makefile builds two suites (their symbols are in net/Kconfig,
    inside ``if NET``); MPTCP's test is inside ``if MPTCP``, which needs INET.
    Selftests and docs reach none; the count is bounded, the rest named."""
    core = select(kernel_tree, "HEAD", ["net/core/dev.c", "tools/testing/selftests/net/x.py"])
    assert core.dirs == ["net/core"]
    assert [s.symbol for s in core.suites] == ["NETDEV_ADDR_LIST_TEST", "NET_TEST"]
    assert core.options == ["CONFIG_KUNIT=y", "CONFIG_NETDEV_ADDR_LIST_TEST=y", "CONFIG_NET=y",
                            "CONFIG_NET_TEST=y"]
    mptcp = select(kernel_tree, "HEAD", ["net/mptcp/protocol.c"])
    assert [s.symbol for s in mptcp.suites] == ["MPTCP_KUNIT_TEST"]
    assert {"CONFIG_MPTCP=y", "CONFIG_INET=y", "CONFIG_NET=y"} <= set(mptcp.options)
    one = select(kernel_tree, "HEAD", ["net/core/dev.c", "net/mptcp/protocol.c"], limit=1)
    assert [s.symbol for s in one.suites] == ["NETDEV_ADDR_LIST_TEST"]
    assert [s.symbol for s in one.dropped] == ["NET_TEST", "MPTCP_KUNIT_TEST"]
    assert kernel_paths(["tools/testing/selftests/net/nl_netdev.py",
                         "Documentation/netlink/specs/netdev.yaml"]) == []
    assert select(kernel_tree, "HEAD", ["drivers/net/virtio_net.c"]).suites == []


@pytest.mark.tree
def test_the_suite_built_from_or_named_after_a_changed_file_comes_first(kernel_tree):
    """lib/Makefile builds 25 KUnit suites: a change to lib/checksum_kunit.c
    (tests/fixtures/contest/kunit-checksum.mbox) or lib/checksum.c runs
    CHECKSUM_KUNIT within the bound, not the Makefile's first four."""
    for changed in ("lib/checksum_kunit.c", "lib/checksum.c"):
        sel = select(kernel_tree, "HEAD", [changed])
        assert sel.suites[0].symbol == "CHECKSUM_KUNIT", [s.symbol for s in sel.suites]
        assert "CONFIG_CHECKSUM_KUNIT=y" in sel.options
    # net/core: the changed test's own suite first
    assert [s.symbol for s in select(kernel_tree, "HEAD", ["net/core/net_test.c"]).suites] == \
        ["NET_TEST", "NETDEV_ADDR_LIST_TEST"]


@pytest.mark.tree
def test_v5_runs_net_cores_suites(kernel_tree):
    """The threaded busy-poll series changes net/core: its suites run."""
    root = Path(__file__).resolve().parents[1] / "series" / "threaded-busy-poll" / "v5"
    text = "".join(p.read_text(errors="replace") for p in sorted(root.glob("*.patch"))) \
        if root.is_dir() else ""
    paths = sorted({ln.split(" b/", 1)[1] for ln in text.splitlines()
                    if ln.startswith("diff --git a/")})
    assert any(p.startswith("net/core/") for p in paths), paths
    sel = select(kernel_tree, "HEAD", paths)
    assert {"NET_TEST", "NETDEV_ADDR_LIST_TEST"} <= {s.symbol for s in sel.suites}


@pytest.mark.tree
def test_a_missing_tool_is_one_line_naming_the_package(cli, kernel_tree, tmp_path):
    """Only git on PATH: no make, no gcc. Status error, exit 2."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(shutil.which("git"), bin_dir / "git")
    cp = cli("test", "kunit", FIX / "kunit" / "good.mbox", "--tree", kernel_tree,
             "--format", "json",
             env={"PATH": str(bin_dir), "NAPIPATCH_BUILD_DIR": str(tmp_path / "b")})
    assert cp.returncode == 2, (cp.stdout[-2000:], cp.stderr[-2000:])
    err = [ln for ln in cp.stderr.splitlines() if ln.startswith("napipatch: error:")]
    assert len(err) == 1 and "not installed (apt-get install" in err[0] and " make" in err[0], \
        cp.stderr
    assert "Traceback" not in cp.stderr
    report = json.loads(cp.stdout)
    assert {c["id"]: c["status"] for c in report["checks"]}["kunit"] == "error"


def test_the_job_goes_to_the_build_queue_and_back_whole(tmp_path):
    """A Celery worker gets the same job (the ``build`` queue, as the tools builds)."""
    from napipatch.jobs.distributed import from_payload, queue_of, to_payload
    from napipatch.jobs.kunit.job import KunitJob

    job = KunitJob(repo=tmp_path, base="a" * 40, commits=["b" * 40], cache=tmp_path, jobs=3)
    payload = to_payload(job)
    assert payload["kind"] == "kunit" and queue_of(job) == "build"
    assert from_payload(payload) == job
