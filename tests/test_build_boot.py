"""napipatch test build|boot|run on the real 6.12 tree: kernels are built and booted.

Slow (the first build of a target is ~7 min on 2 cores), so every test
shares one build directory: $NAPIPATCH_TEST_BUILD_DIR, else
~/.cache/napipatch/build (created when missing, reused across runs). The
series only touch .c files so later steps are incremental (~15 s each).
Select with ``-m build``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import commit_files, edit, format_patch

# A build test may pay the first kernel build (pyproject.toml: timeout).
pytestmark = [pytest.mark.build, pytest.mark.tree, pytest.mark.timeout(3600)]

DEV_C = "net/core/dev.c"
THREADED = "int dev_set_threaded(struct net_device *dev, bool threaded)\n{\n"


@pytest.fixture
def run(cli, build_dir, kernel_tree):
    def _run(*args, check=None):
        cp = cli("test", *args, "--tree", kernel_tree, "--format", "json", check=check,
                 env={"NAPIPATCH_BUILD_DIR": str(build_dir)})
        assert cp.returncode in (0, 1), cp.stderr[-3000:]
        return cp.returncode, json.loads(cp.stdout)
    return _run


def _series(kernel_tree, base, tmp_path, name, patches) -> Path:
    """format-patch a series: patches = [(subject, {path: text})]."""
    parent = base
    for subject, changes in patches:
        parent = commit_files(kernel_tree, parent, changes, subject)
    return format_patch(kernel_tree, f"{base}..{parent}", tmp_path / name)


def _doc_patch(kernel_tree, base):
    path = "Documentation/ABI/testing/sysfs-class-net"
    return ("net: document threaded a little more",
            {path: edit(kernel_tree, base, path, "without the need to do device up/down.\n",
                        "without the need to do device up/down. The NAPI kthreads are\n"
                        "\t\tcalled napi/<iface>-<napi id>.\n")})


def _build_findings(report, severity=None):
    return [f for f in report["findings"] if f["check"] == "build"
            and (severity is None or f["severity"] == severity)]


def test_build_blames_the_patch_that_breaks_it(run, kernel_tree, base_commit, tmp_path):
    """3 patches: 1 adds a warning, 2 breaks the build, 3 fixes it again."""
    warn = edit(kernel_tree, base_commit, DEV_C, THREADED,
                THREADED + "\tint napipatch_unused;\n\n")
    broken = warn.replace("\tint napipatch_unused;\n", "\tint napipatch_unused;\n\n"
                          "\tnapipatch_no_such_function(dev);\n")
    fixed = warn.replace("\tint napipatch_unused;\n\n", "\tint napipatch_unused;\n\n"
                         "\t/* fixed */\n")
    d = _series(kernel_tree, base_commit, tmp_path, "breaks", [
        ("net: add a variable", {DEV_C: warn}),
        ("net: call something that does not exist", {DEV_C: broken}),
        ("net: fix the build", {DEV_C: fixed}),
    ])
    rc, report = run("build", d, "--target", "virtio-net")
    assert rc == 1
    errors = _build_findings(report, "error")
    assert [f["patch"] for f in errors] == [2], errors
    assert errors[0]["file"] == DEV_C
    assert "napipatch_no_such_function" in errors[0]["message"] + errors[0]["details"]
    warnings = _build_findings(report, "warning")
    # the warning is new in patch 1 only: patch 3 recompiles dev.c with the
    # same warning, which is not new compared with patch 2's build
    assert [(f["patch"], f["file"]) for f in warnings] == [(1, DEV_C)], warnings
    assert "napipatch_unused" in warnings[0]["message"]
    assert "-Wunused-variable" in warnings[0]["message"]
    assert {c["id"]: c["status"] for c in report["checks"]} == {"apply": "pass", "build/virtio-net": "fail"}
    summary = [f for f in _build_findings(report, "info") if f["patch"] == 0][0]
    assert "patch 3" in summary["details"] and "FAILED" in summary["details"]


def test_clean_series_builds_and_boots_with_the_threaded_plan(run, kernel_tree, base_commit,
                                                               tmp_path):
    d = _series(kernel_tree, base_commit, tmp_path, "clean", [_doc_patch(kernel_tree, base_commit)])
    rc, report = run("boot", d, "--target", "virtio-net")
    assert rc == 0, [f for f in report["findings"] if f["severity"] == "error"]
    info = [f for f in report["findings"] if f["check"] == "boot" and f["severity"] == "info"][0]
    tap = info["details"]
    for name in ("link up", "threaded reads 0 by default",
                 "no napi/eth0-* kthreads while not threaded",
                 "threaded reads back 1", "napi/eth0-* kthreads present while threaded",
                 "ping through threaded NAPI", "threaded reads back 0",
                 "dmesg has no WARN/BUG/Oops/lockdep/KASAN splats"):
        assert any(line.startswith("ok") and name in line for line in tap.splitlines()), (name, tap)
    # 6.12 has no threaded busy poll: writing 2 is rejected, so that part is skipped
    assert any(line.startswith("skip") and "threaded=2" in line and "no threaded busy-poll" in line
               for line in tap.splitlines()), tap
    # the guest runs the tree's YNL CLI; 6.12's spec has no napi threaded attribute yet
    assert any(line.startswith("ok") and "netlink napi-get (ynl) lists eth0's NAPIs" in line
               for line in tap.splitlines()), tap
    assert any(line.startswith("skip") and "napi-get reports threaded enabled" in line
               and "no napi threaded attribute" in line for line in tap.splitlines()), tap
    # and the target's selftests ran (nl_netdev.py on 6.12: no threaded case)
    assert "ok     net:nl_netdev.py:empty_check" in tap, tap
    assert "not ok" not in tap


def test_warn_on_in_virtio_net_probe_fails_boot(run, kernel_tree, base_commit, tmp_path):
    path = "drivers/net/virtio_net.c"
    probe = "static int virtnet_probe(struct virtio_device *vdev)\n{\n"
    text = edit(kernel_tree, base_commit, path, probe + "\tint i, err = -ENOMEM;\n",
                probe + "\tint i, err = -ENOMEM;\n\n\tWARN_ON(1);\n")
    d = _series(kernel_tree, base_commit, tmp_path, "warn", [("virtio_net: warn at probe", {path: text})])
    rc, report = run("boot", d, "--target", "virtio-net")
    assert rc == 1
    boot_errors = [f for f in report["findings"] if f["check"] == "boot" and f["severity"] == "error"]
    # the plan's own dmesg test fails, and the splat is an error of its own
    # at the WARN_ON's FILE:LINE, its first frame decoded
    plan = [f for f in boot_errors if "dmesg has no WARN" in f["message"]]
    assert len(plan) == 1, boot_errors
    assert "WARNING: CPU: 0 PID: 1 at drivers/net/virtio_net.c:" in plan[0]["details"]
    splat = [f for f in boot_errors if "kernel WARNING splat" in f["message"]]
    line = text.splitlines().index("\tWARN_ON(1);") + 1
    assert [(f["file"], f["line"]) for f in splat] == [(path, line)], boot_errors
    assert "virtnet_probe" in splat[0]["message"] and len(boot_errors) == 2, boot_errors
    # the build itself was fine
    assert not _build_findings(report, "error")


@pytest.mark.side_build  # idpf's own build directory
def test_idpf_builds_patch_by_patch(run, kernel_tree, base_commit, tmp_path, build_dir):
    path = "drivers/net/ethernet/intel/idpf/idpf_main.c"
    probe = "static int idpf_probe(struct pci_dev *pdev, const struct pci_device_id *ent)\n{\n"
    broken = edit(kernel_tree, base_commit, path, probe, probe + "\tidpf_no_such_call(pdev);\n")
    d = _series(kernel_tree, base_commit, tmp_path, "idpf", [
        _doc_patch(kernel_tree, base_commit),
        ("idpf: break the build", {path: broken}),
    ])
    rc, report = run("build", d, "--target", "idpf")
    assert rc == 1
    errors = _build_findings(report, "error")
    assert [(f["patch"], f["file"]) for f in errors] == [(2, path)], errors
    steps = [f for f in _build_findings(report, "info") if f["patch"] == 0][0]["details"]
    assert len([ln for ln in steps.splitlines() if " ok " in ln]) == 2, steps  # base + patch 1
    objs = list(build_dir.glob("*/idpf/obj/drivers/net/ethernet/intel/idpf/idpf.ko"))
    assert objs, "idpf.ko was not built"
    assert {c["id"]: c["status"] for c in report["checks"]} == {"apply": "pass", "build/idpf": "fail"}


def _plan_header(hint: str) -> str:
    """The plan's first line in the console log a finding's hint names."""
    log = Path(hint.removeprefix("console log: ").strip())
    if not hint.startswith("console log: ") or not log.is_file():
        return ""
    return next((ln for ln in log.read_text(errors="replace").splitlines()
                 if "threaded NAPI plan on" in ln), "")


def test_hung_guest_is_cut_by_the_timeout(run, kernel_tree, base_commit, tmp_path):
    """Writing threaded=1 sleeps for 10 minutes: the plan hangs and is killed."""
    path = "net/core/net-sysfs.c"
    anchor = "\tif (val != 0 && val != 1)\n\t\treturn -EOPNOTSUPP;\n"
    text = edit(kernel_tree, base_commit, path, anchor, anchor + "\n\tif (val)\n\t\tssleep(600);\n")
    d = _series(kernel_tree, base_commit, tmp_path, "hang", [("net: sleep in threaded store", {path: text})])
    rc, report = run("boot", d, "--target", "virtio-net", "--timeout", "90")
    # The plan's first line names the kernel that booted (uname -v: "#N", as
    # make's "is ready (#N)"): two cold runs with ccache's depend mode booted
    # one that did not sleep (benchmarks/README.md, "ccache's depend mode").
    assert rc == 1, [(f["message"], f.get("hint"), _plan_header(f.get("hint") or ""))
                     for f in report["findings"] if f["check"] == "boot"]
    errors = [f for f in report["findings"] if f["check"] == "boot" and f["severity"] == "error"]
    assert len(errors) == 1, errors
    assert "test plan did not finish: timed out after" in errors[0]["message"]
    # the console excerpt shows how far the plan got
    assert "ok 4 - no napi/eth0-* kthreads while not threaded" in errors[0]["details"]
    assert "threaded reads back 1" not in errors[0]["details"]


def test_run_checks_builds_every_target_and_boots(run, kernel_tree, base_commit, tmp_path):
    d = _series(kernel_tree, base_commit, tmp_path, "run", [_doc_patch(kernel_tree, base_commit)])
    rc, report = run("run", d)
    assert rc == 0, [f for f in report["findings"] if f["severity"] == "error"]
    checks = {c["id"]: c["status"] for c in report["checks"]}
    # completed, with the infos of what was built and booted
    assert checks["build/virtio-net"] == checks["build/idpf"] == checks["boot/virtio-net"] == "info"
    assert "checkpatch" in checks  # the review checks ran first
    assert {f["check"] for f in report["findings"]} >= {"build", "boot"}


def test_checkout_after_a_killed_run_recovers(kernel_tree, base_commit, build_dir, monkeypatch):
    """A worker killed mid-checkout leaves index.lock in the build worktree;
    the next run (holding the build directory's lock) removes it and goes on."""
    from napipatch.jobs.build.builder import Builder
    from napipatch.jobs.targets import load
    from napipatch.tree import gitutil

    monkeypatch.setenv("NAPIPATCH_BUILD_DIR", str(build_dir))
    seen = []
    with Builder(kernel_tree, load("virtio-net"), build_dir, progress=seen.append) as b:
        b.checkout(base_commit)
        lock = Path(gitutil.out(b.dirs.src, "rev-parse", "--absolute-git-dir")) / "index.lock"
        lock.write_text("")
        b.checkout(base_commit)
        assert not lock.exists()
        assert gitutil.out(b.dirs.src, "rev-parse", "HEAD") == base_commit
        assert gitutil.out(b.dirs.src, "status", "--porcelain", "--untracked-files=no") == ""
    assert any("stale" in m for m in seen)


def test_napipatch_errors_survive_pickling():
    """Errors raised in a Celery worker travel back to the client pickled."""
    import pickle

    from napipatch.errors import GitError

    e = pickle.loads(pickle.dumps(GitError("git checkout", "index.lock exists")))
    assert str(e) == "git checkout: index.lock exists" and isinstance(e, GitError)
