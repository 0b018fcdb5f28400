"""Jobs on Celery + Redis, and the idpf remote target over a real sshd.

Real parts: redis-server and `napipatch worker` (Celery) on loopback,
a real virtio-net boot job, kill -9 of the worker mid-job; OpenSSH's sshd
on loopback as the "idpf host", the test plan run over SSH on a veth pair
in network namespaces (no idpf NIC can exist here: on real hardware the
plan runs on the idpf interface after kexec, see docs/distributed.md).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import uuid
from pathlib import Path

import pytest
from conftest import free_port, remote_report, ssh_host, wait_port

# A build test may pay the first kernel build (pyproject.toml: timeout).
pytestmark = [pytest.mark.build, pytest.mark.tree, pytest.mark.timeout(3600)]


@pytest.fixture
def redis_url(tmp_path):
    exe = shutil.which("redis-server")
    assert exe, "redis-server missing: run scripts/install.sh"
    port = free_port()
    p = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                          "--appendonly", "no", "--dir", str(tmp_path)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    yield f"redis://127.0.0.1:{port}/0"
    p.kill()
    p.wait()


def _gitconfig(tmp_path, redis_url, **extra) -> Path:
    f = tmp_path / f"gitconfig-{uuid.uuid4().hex[:6]}"
    lines = ["[napipatch]", "\texecutor = celery", f"\tbroker-url = {redis_url}",
             "\tbroker-visibility-timeout = 5", "\tjob-retry-delay = 1"]
    lines += [f"\t{k.replace('_', '-')} = {v}" for k, v in extra.items()]
    f.write_text("\n".join(lines) + "\n")
    return f


class Worker:
    def __init__(self, tmp_path, gitconfig, queues, build_dir, name):
        self.log = tmp_path / f"worker-{name}.log"
        env = dict(os.environ, GIT_CONFIG_GLOBAL=str(gitconfig),
                   NAPIPATCH_BUILD_DIR=str(build_dir), XDG_CACHE_HOME=str(tmp_path / "cache"))
        self.p = subprocess.Popen([sys.executable, "-m", "napipatch", "worker", "--queues", queues,
                                   "--name", f"{name}@%h"], stdout=open(self.log, "w"),
                                  stderr=subprocess.STDOUT, env=env, start_new_session=True)
        t0 = time.monotonic()
        while "ready." not in self.text():
            assert self.p.poll() is None, self.text()
            assert time.monotonic() - t0 < 60, self.text()
            time.sleep(0.2)

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def kill9(self):
        os.killpg(self.p.pid, signal.SIGKILL)
        self.p.wait()

    def stop(self):
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGTERM)
            try:
                self.p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill9()


@pytest.fixture
def workers():
    started = []
    yield started
    for w in started:
        w.stop()


def _cfg(gitconfig):
    from napipatch import config as configmod
    old = os.environ.get("GIT_CONFIG_GLOBAL")
    os.environ["GIT_CONFIG_GLOBAL"] = str(gitconfig)
    try:
        return configmod.load()
    finally:
        if old is None:
            os.environ.pop("GIT_CONFIG_GLOBAL")
        else:
            os.environ["GIT_CONFIG_GLOBAL"] = old


def test_worker_killed_mid_boot_job_is_redelivered(tmp_path, redis_url, workers, kernel_tree,
                                                   base_commit, build_dir):
    from napipatch.jobs.boot.job import BootJob
    from napipatch.jobs.distributed import (
        TASK,
        app_from_config,
        result_from_dict,
        to_payload,
    )

    gc = _gitconfig(tmp_path, redis_url)
    cfg = _cfg(gc)
    app = app_from_config(cfg)
    a = Worker(tmp_path, gc, "virtio-net", build_dir, "a")
    workers.append(a)
    job = BootJob(repo=kernel_tree, target="virtio-net", commit=base_commit, patch=0,
                  cache=tmp_path / "cache")
    res = app.send_task(TASK, args=[to_payload(job)], queue="virtio-net")
    t0 = time.monotonic()
    while res.state != "STARTED":
        assert time.monotonic() - t0 < 120, (res.state, a.text()[-2000:])
        time.sleep(0.2)
    a.kill9()  # mid-job: the message was never acknowledged
    b = Worker(tmp_path, gc, "virtio-net", build_dir, "b")
    workers.append(b)
    out = result_from_dict(res.get(timeout=900))
    assert out.status == "pass", [f.message for f in out.findings]
    tap = {t["name"]: t["status"] for t in out.data["tests"]}
    assert tap["link up"] == "ok"
    assert tap["threaded reads back 1"] == "ok"
    # The result is stored before the worker logs it: give the log a moment.
    t0 = time.monotonic()
    while f"Task {TASK}[{res.id}] succeeded" not in b.text() and time.monotonic() - t0 < 30:
        time.sleep(0.2)
    assert f"Task {TASK}[{res.id}] succeeded" in b.text()
    assert f"Task {TASK}[{res.id}] received" in a.text()
    assert f"Task {TASK}[{res.id}] succeeded" not in a.text()


def test_jobs_reach_only_workers_of_their_queue(tmp_path, redis_url, workers, kernel_tree,
                                                base_commit, build_dir):
    from napipatch.jobs.build.job import BuildJob
    from napipatch.jobs.distributed import TASK, app_from_config, to_payload

    gc = _gitconfig(tmp_path, redis_url)
    app = app_from_config(_cfg(gc))
    w = Worker(tmp_path, gc, "virtio-net", build_dir, "v")
    workers.append(w)
    job = BuildJob(repo=kernel_tree, target="idpf", base=base_commit, commits=[],
                   cache=tmp_path / "cache")
    res = app.send_task(TASK, args=[to_payload(job)], queue="idpf")
    time.sleep(8)
    assert res.state == "PENDING"
    assert res.id not in w.text()
    res.revoke()


@pytest.mark.side_build  # the warnings trees, beside test_warnings.py's
def test_warnings_jobs_run_on_the_build_queue(cli, tmp_path, redis_url, workers, kernel_tree,
                                              base_commit, warnings_tree):
    """`napipatch test warnings` with the celery executor: the job goes to the
    `build` queue, a worker serving it builds, the report comes back."""
    from conftest import commit_files, edit, format_patch

    gc = _gitconfig(tmp_path, redis_url)
    w = Worker(tmp_path, gc, "build", warnings_tree, "w")
    workers.append(w)
    path = "drivers/net/dummy.c"
    text = edit(kernel_tree, base_commit, path, "\tdev_kfree_skb(skb);\n",
                "\tdev_kfree_skb(skb); /* napipatch */\n")
    c = commit_files(kernel_tree, base_commit, {path: text}, "dummy: comment")
    d = format_patch(kernel_tree, f"{base_commit}..{c}", tmp_path / "series")
    cp = cli("test", "warnings", d, "--tree", kernel_tree, "--only", "build-32bit", "--format", "json",
             env={"GIT_CONFIG_GLOBAL": str(gc), "NAPIPATCH_BUILD_DIR": str(tmp_path / "nobuild")})
    assert cp.returncode == 0, (cp.stdout[-2000:], cp.stderr[-2000:], w.text()[-2000:])
    import json
    report = json.loads(cp.stdout)
    check = {c["id"]: c for c in report["checks"]}["build-32bit"]
    assert check["status"] == "info" and check["nipa"] == ["build_32bit"], check
    assert report["series"]["patches"][0]["nipa"] == {
        "build_32bit": {"state": "success", "description": "no findings (build-32bit)"}}
    assert any("1 object built at parent and patch" in f["message"]
               for f in report["findings"] if f["check"] == "build-32bit"), report["findings"]
    assert "received" in w.text() and "succeeded" in w.text()
    assert not (tmp_path / "nobuild").exists()  # the worker built, in its own build dir


# ------------------------------------------------------------------ SSH target
# The loopback sshd and veth_netns fixtures and sshssh_host() are in conftest.py.
@pytest.fixture
def artifacts(tmp_path, kernel_tree, base_commit, build_dir, monkeypatch):
    """A really built kernel (the shared virtio-net build) and a modules tarball."""
    from napipatch.jobs.build import guestconfig
    from napipatch.jobs.build.builder import Builder

    monkeypatch.setenv("NAPIPATCH_BUILD_DIR", str(build_dir))
    # configured as `napipatch test` configures it: no reconfigure of the shared build
    target = guestconfig.load("virtio-net", kernel_tree, base_commit)
    with Builder(kernel_tree, target, tmp_path / "cache") as b:
        step = b.step(0, base_commit, "remote-artifacts")
        assert step.ok, step.error_excerpt
        image = b.dirs.obj / "arch/x86/boot/bzImage"
        d = tmp_path / "artifacts"
        d.mkdir()
        shutil.copy(image, d / "bzImage")
    with tarfile.open(d / "modules.tar.gz", "w:gz") as tf:
        info = tarfile.TarInfo("lib/modules/napipatch-test/modules.order")
        tf.addfile(info)
    return d


def test_remote_plan_runs_over_ssh(tmp_path, sshd, veth_netns, artifacts, kernel_tree,
                                   base_commit, monkeypatch, build_dir):
    from napipatch.jobs.boot.remote import RemoteJob
    from napipatch.jobs.executor import LocalExecutor

    monkeypatch.setenv("NAPIPATCH_BUILD_DIR", str(build_dir))
    port, key = sshd
    job = RemoteJob(repo=kernel_tree, target="idpf", commit=base_commit, patch=0,
                    cache=tmp_path / "cache", host=ssh_host(port, key, veth_netns),
                    artifacts=str(artifacts))
    res = LocalExecutor().submit(job)
    msgs = [f.message for f in res.findings]
    assert res.status == "pass", msgs
    info = [f for f in res.findings if f.severity.value == "info"][0]
    assert info.message.startswith(f"idpf host 127.0.0.1: kernel {os.uname().release} (none), ")
    tap = {m.group(2): m.group(1) for m in
           re.finditer(r"^(ok|not ok|skip)\s+\d+ - (.*?)(?:  \(.*\))?$", info.details, re.M)}
    assert tap["link up"] == "ok"
    assert tap["threaded reads back 1"] == "ok"
    assert tap["napi/v0-* kthreads present while threaded (1)"] == "ok"
    assert tap["ping through threaded NAPI"] == "ok"
    assert tap["threaded=2 (busy poll)"] == "skip"  # the host's kernel refuses 2
    # its kernel log was read since the plan began: no splat (older ones are not its)
    assert res.data["splats"] == [] and not [m for m in msgs if "splat" in m], msgs
    copied = Path(f"/tmp/napipatch-{base_commit[:12]}")
    assert (copied / "bzImage").read_bytes() == (artifacts / "bzImage").read_bytes()
    assert (copied / "modules.tar.gz").is_file()
    # accept-new recorded the loopback sshd's key on first contact.
    found = subprocess.run(["ssh-keygen", "-F", f"[127.0.0.1]:{port}", "-f",
                            str(key.parent / "known_hosts")], capture_output=True, text=True)
    assert found.returncode == 0, found.stderr


def test_unreachable_host_is_an_infrastructure_error(tmp_path, redis_url, workers, kernel_tree,
                                                     base_commit, artifacts, build_dir):
    from napipatch.jobs.boot.remote import RemoteJob
    from napipatch.jobs.distributed import (
        TASK,
        app_from_config,
        result_from_dict,
        to_payload,
    )

    gc = _gitconfig(tmp_path, redis_url, job_retries=1)
    app = app_from_config(_cfg(gc))
    workers.append(Worker(tmp_path, gc, "idpf", build_dir, "i"))
    closed = free_port()  # nothing listens there
    job = RemoteJob(repo=kernel_tree, target="idpf", commit=base_commit, patch=0,
                    cache=tmp_path / "cache",
                    host=ssh_host(closed, "/nonexistent", "", insecure_host_key=True),
                    artifacts=str(artifacts))
    out = result_from_dict(app.send_task(TASK, args=[to_payload(job)], queue="idpf")
                           .get(timeout=300))
    assert out.status == "error"
    assert [f.severity.value for f in out.findings] == ["warning"]
    assert "infrastructure failure after 2 tries, not a result for this series" in out.findings[0].message
    assert "unreachable" in out.findings[0].message


def test_hung_remote_plan_still_reports_and_exits_2(tmp_path, sshd, veth_netns, kernel_tree,
                                                    base_commit):
    """A test plan that does not answer within napipatch.idpf.plan-timeout:
    the job still returns its result (the TAP so far, the log), the report
    says the remote run timed out, and the verdict's exit status is 2.
    boot=none: the loopback host is this machine, so the kernel copied
    there (any file: it is never booted) is only carried, not run."""
    from napipatch.jobs.boot.remote import RemoteJob
    from napipatch.jobs.executor import LocalExecutor
    from napipatch.report.render import render_report

    port, key = sshd
    # The host hangs in its test plan after the first TAP line: sshd's
    # forced command stands in for a kernel that stops answering there.
    hang = ('case "$SSH_ORIGINAL_COMMAND" in *plan.sh*) echo NAPIPATCH-PLAN-BEGIN; '
            'echo "ok 1 - link up"; exec sleep 300;; *) exec sh -c "$SSH_ORIGINAL_COMMAND";; esac')
    auth = key.parent / "authorized_keys"
    auth.write_text(f'command="{hang.replace(chr(34), chr(92) + chr(34))}" '
                    + (key.parent / "user.pub").read_text())
    d = tmp_path / "artifacts"
    d.mkdir()
    (d / "bzImage").write_bytes(b"not booted with boot=none")
    job = RemoteJob(repo=kernel_tree, target="idpf", commit=base_commit, patch=0,
                    cache=tmp_path / "cache",
                    host=ssh_host(port, key, veth_netns, plan_timeout=5), artifacts=str(d))
    res = LocalExecutor().submit(job)  # before the fix: subprocess.TimeoutExpired escaped
    assert res.status == "timeout", [f.message for f in res.findings]
    hung = [f for f in res.findings if f.severity.value == "error"]
    assert len(hung) == 1
    assert hung[0].message.startswith("idpf: test plan did not finish: timed out after ")
    assert "ok 1 - link up" in hung[0].details  # the console so far
    log = Path(hung[0].hint.removeprefix("console log: "))
    assert "no answer within 5 s" in log.read_text()
    report = remote_report(res, kernel_tree, base_commit)
    assert report.exit_code == 2
    text = render_report(report, "text")
    assert "remote/idpf" in text and "timed out" in text, text
