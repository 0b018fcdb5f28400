"""Each check unit runs in its own process group, within its deadline.

A timed-out check is stopped, with everything it started: no perl, git or
Python work outlives its unit, however many times it happens in one
long-lived process (the bot, a Celery worker).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import types
import uuid
from pathlib import Path

import pytest
from conftest import LORE

from napipatch import config as configmod
from napipatch.engine import registry
from napipatch.pipeline import run as runmod
from napipatch.engine.forked import run_forked
from napipatch.errors import NapipatchError
from napipatch.mails.mbox import read_mbox
from napipatch.mails.series import assemble

V4 = LORE / "threaded-busy-poll-v4.mbox"


def _marked(marker: str) -> list[int]:
    """Pids of live (not zombie) processes whose command line holds ``marker``."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if marker.encode() not in (d / "cmdline").read_bytes():
                continue
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            pids.append(int(d.name))
    return pids


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _checks(marker: str, pids: Path) -> dict[str, registry.CheckInfo]:
    """Checks that never end by themselves, each in a different way; each
    first writes its unit's pid in ``pids``."""
    def started(name):
        (pids / f"{name}-{os.getpid()}").touch()

    def child(ctx):        # waits on a subprocess
        started("child")
        subprocess.run([sys.executable, "-c", "import time; time.sleep(1000)", marker])
        return []

    def grandchild(ctx):   # a shell whose own child holds on
        started("grandchild")
        subprocess.run(["sh", "-c", f"{sys.executable} -c 'import time; time.sleep(1000)' "
                        f"{marker} & wait"])
        return []

    def spin(ctx):         # pure Python: no subprocess deadline could stop it
        started("spin")
        while True:
            pass

    def quick(ctx):
        yield ctx.finding("warning", "quick ran")

    out = {}
    for name, fn in (("child", child), ("grandchild", grandchild), ("spin", spin),
                     ("quick", quick)):
        mod = types.ModuleType(f"soak_{name}")
        mod.run = fn
        out[name] = registry.CheckInfo(name, name, "series", "diff", 1, mod)
    return out


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_many_timeouts_in_one_process_leave_nothing_behind(tmp_path, monkeypatch):
    marker = f"napipatch-soak-{uuid.uuid4().hex}"
    pids = tmp_path / "pids"
    pids.mkdir()
    fake = _checks(marker, pids)
    monkeypatch.setattr(runmod, "load", lambda: registry.Registry(fake, []))
    cfg = configmod.Config(cache_dir=str(tmp_path / "cache"), check_timeout=0.5, jobs=4)
    series = assemble(read_mbox(V4), str(V4))

    def one_round():
        report = runmod.run(series, cfg, use_cache=False)
        status = {c.id: c.status for c in report.checks}
        assert status == {"child": "timeout", "grandchild": "timeout", "spin": "timeout",
                          "quick": "warn"}
        assert report.exit_code == 2
        return report

    one_round()                       # warm-up: imports, lazily opened files
    fds, threads = _fds(), _threads()
    for _ in range(15):
        one_round()
    # Each unit that got as far as its first line (under load one may be
    # stopped before it): gone, killed and reaped, not left running.
    units = [p.name.split("-") for p in pids.iterdir()]
    assert {name for name, _ in units} == {"child", "grandchild", "spin"}
    units = [int(pid) for _, pid in units]
    assert [pid for pid in units if not _gone(pid)] == [], "a timed-out unit outlived its run"
    assert _marked(marker) == [], "a timed-out check's subprocesses outlived it"
    assert (_fds(), _threads()) == (fds, threads)
    # and no zombie children left unreaped
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_units_run_jobs_at_a_time(tmp_path, monkeypatch):
    """With napipatch.jobs 4, four units run side by side: each waits until
    all four have started. Run in turn (or three at a time), the first
    would wait for the others until its deadline."""
    started = tmp_path / "started"
    started.mkdir()

    def meets(name):
        def run(ctx):
            (started / name).touch()
            while len(list(started.iterdir())) < 4:
                time.sleep(0.01)
            yield ctx.finding("warning", f"{name} met the others")
        return run

    fake = {}
    for name in ("a", "b", "c", "d"):
        mod = types.ModuleType(f"meet_{name}")
        mod.run = meets(name)
        fake[name] = registry.CheckInfo(name, name, "series", "diff", 1, mod)
    monkeypatch.setattr(runmod, "load", lambda: registry.Registry(fake, []))
    # Generous: only a broken run waits this long.
    cfg = configmod.Config(cache_dir=str(tmp_path / "cache"), check_timeout=60, jobs=4)
    report = runmod.run(assemble(read_mbox(V4), str(V4)), cfg, use_cache=False)
    assert {c.id: c.status for c in report.checks} == dict.fromkeys("abcd", "warn")
    assert sorted(f.message for f in report.findings) == [
        f"{n} met the others" for n in "abcd"]


def test_a_unit_that_ends_in_time_leaves_no_stray_process(tmp_path):
    marker = f"napipatch-stray-{uuid.uuid4().hex}"

    def leaves_one_behind():
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)", marker])
        return "done"

    got = run_forked([leaves_one_behind], jobs=1, budget=30)
    assert [(e.how, e.value) for e in got] == [("ok", "done")]
    # SIGKILLed, it may take a moment to exit; a minute is only a bound for a broken run
    deadline = time.monotonic() + 60
    while _marked(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _marked(marker) == []


def test_how_units_end(tmp_path):
    def ok():
        return {"a": [1, 2]}

    def bug():
        return [][1]

    def env():
        raise NapipatchError("perl", "not installed")

    def dies():
        os.kill(os.getpid(), 9)

    got = run_forked([ok, bug, env, dies], jobs=2, budget=30)
    assert [e.how for e in got] == ["ok", "raised", "raised", "died"]
    assert got[0].value == {"a": [1, 2]}
    assert got[1].error == "IndexError: list index out of range" and not got[1].env_error
    assert "bug" in got[1].trace
    assert got[2].error == "perl: not installed" and got[2].env_error
    assert got[3].error == "killed by signal 9 (SIGKILL)"


def test_a_parent_thread_is_not_a_problem_for_forked_units():
    """The bot runs the engine next to its own threads; a lock another
    thread holds at fork time must not hang the unit."""
    lock = threading.Lock()
    held = threading.Event()
    release = threading.Event()

    def holder():
        with lock:
            held.set()
            release.wait(10)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(5)
    try:
        got = run_forked([lambda: 42], jobs=1, budget=20)
    finally:
        release.set()
        t.join()
    assert [(e.how, e.value) for e in got] == [("ok", 42)]
