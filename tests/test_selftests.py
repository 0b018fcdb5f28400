"""Which kernel selftests a boot runs and how their KTAP becomes results
(no kernel build: a small git repo laid out like the kernel's selftests)."""

from __future__ import annotations

from pathlib import Path

from conftest import commit_files, git, small_repo

from napipatch.jobs import targets
from napipatch.jobs.boot import vng
from napipatch.jobs.results import selftests
from napipatch.jobs.results.selftests import ProgramRun, Selftest
from napipatch.jobs.results.verdicts import selftest_findings

MK = ("TEST_PROGS := a.sh \\\n\tb.sh\nTEST_PROGS += nl_netdev.py\n"
      "TEST_GEN_FILES = socket\n")
NET = "tools/testing/selftests/net"


def _base(repo: Path) -> str:
    files = {f"{NET}/Makefile": MK, f"{NET}/settings": "timeout=3600\n",
             f"{NET}/nl_netdev.py": "#!/usr/bin/env python3\n", f"{NET}/a.sh": "#!/bin/sh\n",
             f"{NET}/lib/py/ksft.py": "# lib\n", "tools/net/ynl/cli.py": "# ynl\n",
             "Documentation/netlink/specs/netdev.yaml": "name: netdev\n", "README": "linux\n"}
    for path, text in files.items():
        p = repo / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return git(repo, "rev-parse", "HEAD").strip()


def test_a_changed_test_program_runs_and_a_lib_change_alone_does_not(tmp_path):
    repo = small_repo(tmp_path / "linux")
    base = _base(repo)
    tip = commit_files(repo, base, {f"{NET}/nl_netdev.py": "#!/usr/bin/env python3\n# more\n",
                                    f"{NET}/lib/py/ksft.py": "# lib v2\n",
                                    "README": "linux v2\n"}, "selftests: net: more")
    assert selftests.changed(repo, base, tip) == ["net:nl_netdev.py"]
    only_lib = commit_files(repo, base, {f"{NET}/lib/py/ksft.py": "# lib v2\n"}, "lib")
    assert selftests.changed(repo, base, only_lib) == []


def test_a_program_added_to_the_makefile_runs(tmp_path):
    repo = small_repo(tmp_path / "linux")
    base = _base(repo)
    tip = commit_files(repo, base, {f"{NET}/Makefile": MK + "TEST_PROGS += new.sh\n",
                                    f"{NET}/new.sh": "#!/bin/sh\n"}, "selftests: net: new")
    assert selftests.changed(repo, base, tip) == ["net:new.sh"]


def test_timeouts_come_from_the_dirs_settings_and_unknown_tests_are_reported(tmp_path):
    repo = small_repo(tmp_path / "linux")
    base = _base(repo)
    tests, missing = selftests.resolve(repo, base, ["net:nl_netdev.py", "net:nope.sh", "bad"])
    assert tests == [Selftest("net", "nl_netdev.py", 3600)]
    assert missing == ["net:nope.sh", "bad"]
    assert selftests.settings_timeout(None) == selftests.DEFAULT_TIMEOUT


def test_export_holds_the_tests_ynl_and_specs_of_that_commit(tmp_path):
    repo = small_repo(tmp_path / "linux")
    base = _base(repo)
    d = selftests.export_tools(repo, base, tmp_path / "export")
    assert (d / NET / "nl_netdev.py").read_text().startswith("#!")
    assert (d / "tools/net/ynl/cli.py").is_file()
    assert (d / "Documentation/netlink/specs/netdev.yaml").is_file()
    assert not (d / "README").exists()


KTAP = """KTAP version 1
1..3
ok 1 nl_netdev.empty_check
# Check| At /x/nl_netdev.py, line 124, in napi_threaded_check:
# Check|     ksft_eq(napi["threaded"], modes[mode],
# Check failed enabled != busy-poll napi 1 after threaded=2
not ok 2 nl_netdev.napi_threaded_check
ok 3 nl_netdev.page_pool_check # SKIP no pp
# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0"""


def test_each_ktap_case_is_one_result_with_its_excerpt():
    cases = selftests.case_results(ProgramRun("net:nl_netdev.py", 1, KTAP.splitlines()))
    assert [(c.name, c.status) for c in cases] == [
        ("net:nl_netdev.py:empty_check", "ok"),
        ("net:nl_netdev.py:napi_threaded_check", "not ok"),
        ("net:nl_netdev.py:page_pool_check", "skip")]
    assert "enabled != busy-poll" in cases[1].excerpt
    assert cases[1].excerpt.endswith("not ok 2 nl_netdev.napi_threaded_check")
    assert cases[2].reason == "no pp"


def test_a_program_without_ktap_is_judged_by_its_exit_status_and_a_hang_is_reported():
    def one(rc, out=("hello",)):
        return selftests.case_results(ProgramRun("net:a.sh", rc, list(out)), "console tail")

    assert [(c.name, c.status) for c in one(0)] == [("net:a.sh", "ok")]
    assert one(4)[0].status == "skip"
    assert one(124)[0].status == "not ok" and "timed out" in one(124)[0].reason
    hung = one(None)
    assert hung[0].status == "not ok" and "hung" in hung[0].reason
    assert hung[0].excerpt == "console tail"


def test_the_guest_script_runs_the_plan_then_each_test_in_its_dir_under_its_timeout(tmp_path):
    text = vng.guest_script(tmp_path / "plan.sh", tmp_path / "src",
                            [Selftest("net", "nl_netdev.py", 600)])
    assert text.index("NAPIPATCH-PLAN-BEGIN") < text.index("NAPIPATCH-SELFTEST-BEGIN net:nl_netdev.py")
    assert f"cd {tmp_path}/src/tools/testing/selftests/net\ntimeout -k 10 600 ./nl_netdev.py" in text
    # the exported tree is writable in the guest (an overlay), as in the netdev CI's
    assert f"-o lowerdir={tmp_path}/src,upperdir=" in text.split("NAPIPATCH-SELFTEST-BEGIN")[0]
    runs, not_run = vng.split_runs(
        "x\nNAPIPATCH-SELFTEST-BEGIN net:nl_netdev.py\nok 1 nl_netdev.a\n"
        "NAPIPATCH-SELFTEST-END net:nl_netdev.py rc=0\n",
        [Selftest("net", "nl_netdev.py"), Selftest("net", "a.sh")])
    assert [(r.test, r.rc, r.output) for r in runs] == [("net:nl_netdev.py", 0, ["ok 1 nl_netdev.a"])]
    assert not_run == ["net:a.sh"]


def test_virtio_net_boots_with_vng_and_runs_nl_netdev():
    t = targets.load("virtio-net")
    assert t.boot.backend == "vng"
    assert "net:nl_netdev.py" in t.selftests
    opts = t.options()
    assert opts["CONFIG_9P_FS"] == opts["CONFIG_NET_9P_VIRTIO"] == opts["CONFIG_VIRTIO_CONSOLE"] == "y"


def test_a_failing_case_is_a_selftest_error_unless_the_base_fails_it_too():
    cases = selftests.case_results(ProgramRun("net:nl_netdev.py", 1, KTAP.splitlines()))
    new = selftest_findings("virtio-net", cases, 5, "a" * 40, set(), "/x.log")
    errors = [f for f in new if f.severity.value == "error"]
    assert [f.message for f in errors] == [
        "virtio-net: selftest net:nl_netdev.py:napi_threaded_check failed at patch 5 (aaaaaaaaaaaa)"]
    assert errors[0].patch == 5 and "enabled != busy-poll" in errors[0].details
    old = selftest_findings("virtio-net", cases, 5, "a" * 40,
                            {"net:nl_netdev.py:napi_threaded_check"}, "/x.log")
    assert not [f for f in old if f.severity.value == "error"]
    assert any(f.message.endswith("already failing on base") for f in old)


def test_old_exports_are_pruned(tmp_path):
    repo = small_repo(tmp_path / "linux")
    commits = [_base(repo)]
    for i in range(selftests.KEEP + 1):
        commits.append(commit_files(repo, commits[-1], {"README": f"v{i}\n"}, f"c{i}"))
    for c in commits:
        selftests.export_tools(repo, c, tmp_path / "export")
    kept = sorted(p.name for p in (tmp_path / "export").iterdir())
    assert kept == sorted(commits[-selftests.KEEP:])
