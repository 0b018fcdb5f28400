"""The remote (idpf) job's kernel splat scan, on the loopback sshd host of
conftest.py (boot none: the plan runs on this machine's kernel, whose log
is the host's). No build: the kernel carried there is any file."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import remote_report, ssh_host

pytestmark = pytest.mark.tree


SPLAT = ["WARNING: CPU: 0 PID: 1 at net/core/dev.c:1234 dev_open+0x10/0x20",
         "CPU: 0 UID: 0 PID: 1 Comm: ip Not tainted 6.12.0 #1", "RIP: 0010:dev_open+0x10/0x20",
         "Call Trace:", " <TASK>", " dev_change_flags+0x22/0x60", " do_setlink+0x30/0x40",
         " </TASK>", "---[ end trace 0000000000000000 ]---"]


def test_a_splat_in_the_hosts_kernel_log_during_the_plan_is_an_error(tmp_path, sshd, veth_netns,
                                                                      kernel_tree, base_commit):
    """The loopback host's kernel log is this machine's. A step of the plan
    (sshd's forced command, before the plan's own steps) writes a WARNING
    with its call trace into /dev/kmsg, one record a line: the plan passes,
    the splat is an error at the WARNING's FILE:LINE (no vmlinux with the
    artifacts: the raw frames, said so) and the verdict exits 1. The next
    run on the same host is clean: that splat is still in the log, before
    its recorded position. A host whose kernel log cannot be read says the
    scan did not run (never a silent clean)."""
    from napipatch.jobs.boot.remote import RemoteJob
    from napipatch.jobs.executor import LocalExecutor

    port, key = sshd
    d = tmp_path / "artifacts"
    d.mkdir()
    (d / "bzImage").write_bytes(b"not booted with boot=none")
    auth, user = key.parent / "authorized_keys", (key.parent / "user.pub").read_text()

    def run(forced: str = ""):
        if forced:
            (tmp_path / "forced").write_text(f"#!/bin/sh\n{forced}\nexec sh -c \"$SSH_ORIGINAL_COMMAND\"\n")
            (tmp_path / "forced").chmod(0o755)
        auth.write_text((f'command="{tmp_path / "forced"}" ' if forced else "") + user)
        job = RemoteJob(repo=kernel_tree, target="idpf", commit=base_commit, patch=0,
                        cache=tmp_path / "cache", host=ssh_host(port, key, veth_netns),
                        artifacts=str(d), base=base_commit)
        return LocalExecutor().submit(job)

    writes = "; ".join(f"printf '<4>%s\\n' '{ln}' > /dev/kmsg" for ln in SPLAT)
    res = run(f'case "$SSH_ORIGINAL_COMMAND" in *plan.sh*) {writes};; esac')
    assert res.status == "fail", [f.message for f in res.findings]
    (err,) = [f for f in res.findings if f.severity.value == "error"]
    assert err.message == (f"idpf: kernel WARNING splat during the test plan at the base "
                           f"({base_commit[:12]}): {SPLAT[0]} (first frame dev_open at "
                           "net/core/dev.c:1234)"), err.message
    assert (err.check, err.file, err.line) == ("host", "net/core/dev.c", 1234)
    assert "dev_change_flags+0x22/0x60" in err.details and "frames not decoded: no " in err.details
    assert err.hint.startswith("first frames: dev_open < dev_change_flags < do_setlink; console log: ")
    klog = Path(err.hint.rsplit("console log: ", 1)[1])
    assert SPLAT[0] in klog.read_text()
    info = [f.message for f in res.findings if f.severity.value == "info"]
    assert any(m.endswith(" skip, 0 not ok") for m in info), info  # the plan passed
    assert [(s["kind"], s["during"], s["file"], s["line"]) for s in res.data["splats"]] == \
        [("WARNING", "plan", "net/core/dev.c", 1234)]
    report = remote_report(res, kernel_tree, base_commit)
    assert report.exit_code == 1
    assert {f.check for f in report.findings} == {"remote"}  # not the target's name

    again = run()
    assert again.status == "pass", [f.message for f in again.findings]
    assert again.data["splats"] == [] and SPLAT[0] in klog.read_text()

    unreadable = run("SSH_ORIGINAL_COMMAND=$(echo \"$SSH_ORIGINAL_COMMAND\" | sed s,/dev/kmsg,/dev/nokmsg,)")
    assert unreadable.status == "pass"
    said = [f.message for f in unreadable.findings if "splat" in f.message]
    assert said == ["idpf host 127.0.0.1: kernel splat scan did not run: the kernel log could "
                    "not be read: before the plan: /dev/kmsg: dd: failed to open '/dev/nokmsg': "
                    "No such file or directory"], said
