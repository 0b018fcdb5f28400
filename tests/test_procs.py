"""napipatch.procs with real processes: a deadline kills the tool and what
it started, a missing tool is a one-line error, the tee writes the log and calls back
per line. No test asserts a duration: a deadline's effect is shown by the
processes that are gone and the exception raised."""

from __future__ import annotations

import os
import pickle
import signal
import time
from pathlib import Path

import pytest

from napipatch import procs
from napipatch.engine.forked import run_forked
from napipatch.errors import NapipatchError


def _running(pid: int) -> bool:
    """``pid`` exists and is not a zombie (a killed child whose parent died
    is reaped by init when init gets to it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _gone(pid: int) -> bool:
    # SIGKILL is delivered asynchronously: let the kernel finish the kill.
    for _ in range(500):
        if not _running(pid):
            return True
        time.sleep(0.02)
    return False


def test_the_deadline_kills_the_tool_and_its_children_and_keeps_the_output():
    # the child sleep, not the shell, is what would outlive a plain kill
    with pytest.raises(procs.ProcessTimeout) as caught:
        procs.run(["sh", "-c", "echo a; sleep 30 & echo $!; wait"], timeout=1)
    exc = caught.value
    first, pid = exc.output.split()
    assert first == "a"
    assert _gone(int(pid))
    assert exc.seconds == 1
    assert isinstance(exc, NapipatchError)
    assert str(exc) == "sh: timed out"


def test_timeout_output_survives_pickling():
    exc = procs.ProcessTimeout("tool", "timed out", "so far\n", 3.0)
    back = pickle.loads(pickle.dumps(exc))
    assert (str(back), back.output, back.seconds) == ("tool: timed out", "so far\n", 3.0)


def test_what_a_tool_started_in_the_background_on_purpose_is_left_alone():
    # a server started over a stand-in ssh, say: only a deadline kills the group
    cp = procs.run(["sh", "-c", "nohup sleep 30 >/dev/null 2>&1 & echo $!"], timeout=30)
    pid = int(cp.stdout)
    try:
        assert cp.returncode == 0 and _running(pid)
    finally:
        os.kill(pid, signal.SIGKILL)


def test_a_tool_stays_in_the_callers_group_unless_in_a_session_of_its_own():
    with procs.start(["sleep", "30"], timeout=60) as r:
        assert os.getpgid(r.proc.pid) == os.getpgrp()
    with procs.start(["sleep", "30"], timeout=60, session=True) as r:
        assert os.getpgid(r.proc.pid) == os.getsid(r.proc.pid) == r.proc.pid


def test_in_a_session_the_deadline_kills_the_whole_group():
    # (sleep &): an orphan at once, so out of the tool's tree, but in its group
    with pytest.raises(procs.ProcessTimeout) as caught:
        procs.run(["sh", "-c", "(sleep 30 & echo $!); sleep 40"], timeout=1, session=True)
    assert _gone(int(caught.value.output))


def test_an_orphan_holding_the_pipe_cannot_hold_the_run():
    # Out of the tool's tree and (here) in the caller's group: not killed,
    # but after the kill the pipe it holds is read for a grace period only.
    with pytest.raises(procs.ProcessTimeout) as caught:
        procs.run(["sh", "-c", "(sleep 30 & echo $!); sleep 40"], timeout=1)
    pid = int(caught.value.output)
    try:
        assert _running(pid)
    finally:
        os.kill(pid, signal.SIGKILL)


def test_a_missing_tool_is_a_one_line_error():
    with pytest.raises(procs.NotInstalled) as caught:
        procs.run(["napipatch-no-such-tool", "-x"], timeout=5, package="no-such-package")
    assert str(caught.value) == ("napipatch-no-such-tool: not installed "
                                 "(apt-get install no-such-package)")
    with pytest.raises(NapipatchError, match=r"^spatch: not installed$"):
        procs.run(["/nonexistent/bin/spatch"], timeout=5, name="spatch")


def test_a_missing_working_directory_is_not_a_missing_tool(tmp_path):
    with pytest.raises(FileNotFoundError):
        procs.run(["true"], timeout=5, cwd=tmp_path / "gone")


def test_the_tee_writes_the_log_and_calls_back_per_line(tmp_path):
    seen = []
    log = tmp_path / "make.log"
    with open(log, "w", buffering=1) as lf:
        lf.write("$ header\n")
        cp = procs.run(["sh", "-c", "echo one; echo two >&2; printf 'th\\r\\nree\\rfour'"],
                       timeout=30, stderr="merge", log=lf, on_line=seen.append)
    assert seen == ["one", "two", "th", "ree", "four"]
    assert log.read_text() == "$ header\none\ntwo\nth\nree\nfour\n"
    assert cp.returncode == 0 and cp.stderr is None
    assert cp.stdout == "one\ntwo\nth\nree\nfour"


def test_console_lines_end_at_newline_only_and_lose_their_crs():
    seen = []
    procs.run(["printf", "a\\r\\r\\nb\\rc\\n"], timeout=30, on_line=seen.append, newline="\n")
    assert seen == ["a", "b\rc"]


def test_both_streams_teed_apart_keep_their_lines_whole():
    seen = []
    cp = procs.run(["sh", "-c", "printf 'out-'; printf 'err-' >&2; echo 1; echo 2 >&2"],
                   timeout=30, on_line=seen.append)
    assert sorted(seen) == ["err-2", "out-1"]
    assert (cp.stdout, cp.stderr) == ("out-1\n", "err-2\n")


def test_a_callback_ends_the_run_early():
    seen = []
    cp = procs.run(["sh", "-c", "sleep 30 & echo $!; echo stop; wait; echo never"], timeout=60,
                   on_line=lambda line: seen.append(line) or line == "stop")
    assert cp.returncode == -signal.SIGKILL
    assert seen[1:] == ["stop"]
    assert _gone(int(seen[0]))
    ticks = []
    cp = procs.run(["sleep", "30"], timeout=60, tick=lambda s: ticks.append(s) or True)
    assert cp.returncode == -signal.SIGKILL and len(ticks) == 1


def test_a_callback_that_raises_kills_the_group():
    pids = []

    def boom(line):
        pids.append(int(line))
        raise RuntimeError("parser broke")
    with pytest.raises(RuntimeError):
        procs.run(["sh", "-c", "sleep 30 & echo $!; wait"], timeout=60, on_line=boom)
    assert _gone(pids[0])


def test_input_and_capture_as_text_and_as_bytes():
    assert procs.run(["cat"], timeout=30, input="x\r\ny\n").stdout == "x\ny\n"
    data = bytes(range(256)) * 1000     # more than a pipe holds: written as read
    cp = procs.run(["cat"], timeout=30, input=data, text=False)
    assert cp.stdout == data and cp.stderr == b""
    cp = procs.run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=30, stderr="null")
    assert (cp.returncode, cp.stdout, cp.stderr) == (3, "out\n", None)


def test_side_by_side_one_late_run_stops_them_all():
    a = procs.start(["sh", "-c", "sleep 30 & echo $!; wait"], timeout=60)
    b = procs.start(["sh", "-c", "echo b; sleep 30 & echo $!; wait"], timeout=1)
    with pytest.raises(procs.ProcessTimeout) as caught:
        procs.finish([a, b])
    assert caught.value.output.startswith("b\n")
    assert _gone(int(caught.value.output.split()[1]))
    assert _gone(int(a.output()))


def test_side_by_side_results_come_in_order():
    runs = [procs.start(["sh", "-c", f"sleep 0.{3 - i}; echo {i}"], timeout=30) for i in range(3)]
    assert [cp.stdout for cp in procs.finish(runs)] == ["0\n", "1\n", "2\n"]


def test_leaving_with_kills_a_run_never_finished(tmp_path):
    pidfile = tmp_path / "pid"
    script = f"sleep 30 & echo $! >{pidfile}.new; mv {pidfile}.new {pidfile}; wait"
    with procs.start(["sh", "-c", script], timeout=60) as r:
        while not pidfile.exists():     # started, never read
            time.sleep(0.02)
    assert r.proc.returncode == -signal.SIGKILL
    assert _gone(int(pidfile.read_text()))



def test_a_unit_past_its_budget_takes_its_tools_along(tmp_path):
    # The engine kills a forked unit's whole group when it ends: tools run
    # through procs stay in that group, so a tool still running then, and
    # what it started, go with the unit (a worker's group killed from
    # outside likewise takes its make along).
    pidfile = tmp_path / "pids"

    def hung():
        r = procs.start(["sh", "-c", f"sleep 30 & echo $! >{pidfile}; wait"], timeout=60)
        assert os.getpgid(r.proc.pid) == os.getpgrp()
        procs.finish([r])
    ended = run_forked([hung], 1, 1)
    assert ended[0].how == "timeout"
    assert _gone(int(pidfile.read_text()))


def test_in_a_unit_a_deadline_kills_the_tool_and_its_children():
    def unit():
        try:
            procs.run(["sh", "-c", "sleep 30 & echo $!; wait"], timeout=1)
        except procs.ProcessTimeout as exc:
            return int(exc.output), _gone(int(exc.output))
        return None
    ended = run_forked([unit], 1, 60)
    assert ended[0].how == "ok", ended[0]
    assert ended[0].value[1], "the tool's child still runs in the unit"


def test_kill_tree_spares_what_is_not_below():
    with procs.start(["sh", "-c", "sleep 30 & echo $!; exec sleep 40"], timeout=60) as r:
        line = b""
        while not line.endswith(b"\n"):
            line += os.read(r.proc.stdout.fileno(), 100)
        child = int(line)
        procs.kill_tree(r.proc.pid)
        assert r.proc.wait() == -signal.SIGKILL
    assert _gone(child)
    assert _running(os.getpid())


def test_the_make_log_has_the_command_the_lines_and_the_status(tmp_path):
    # jobs/build/builder.run_logged: the one make-log tee (builds and the
    # warning builds): stdout and stderr in the order make wrote them.
    from napipatch.jobs.build.builder import run_logged

    log = tmp_path / "logs" / "make.log"
    seen = []
    rc, lines = run_logged(["sh", "-c", "echo '  CC a.o'; echo 'a.c:1:2: warning: x' >&2; exit 2"],
                           log, dict(os.environ), on_line=seen.append)
    assert (rc, lines, seen) == (2, ["  CC a.o", "a.c:1:2: warning: x"], lines)
    rc, _ = run_logged(["true"], log, dict(os.environ), append=True)
    assert log.read_text() == ("$ sh -c echo '  CC a.o'; echo 'a.c:1:2: warning: x' >&2; exit 2\n"
                               "  CC a.o\na.c:1:2: warning: x\n# exit status 2\n"
                               "$ true\n# exit status 0\n")
    with pytest.raises(procs.NotInstalled, match=r"^napipatch-no-make: not installed "
                                                 r"\(apt-get install make\)$"):
        run_logged(["napipatch-no-make"], log, dict(os.environ), package="make")


# ---------------------------------------------- the consoles (QEMU, vng)
def _fake_qemu(monkeypatch, tmp_path, script: str):
    from napipatch.jobs.boot import qemu
    from napipatch.jobs.targets import load

    monkeypatch.setattr(qemu, "require_bootable", lambda *_a: None)
    monkeypatch.setattr(qemu, "build", lambda *_a: tmp_path / "initrd")  # the initramfs
    monkeypatch.setattr(qemu, "qemu_cmd", lambda *_a: ["sh", "-c", script])
    return qemu, load("virtio-net")


def test_the_qemu_console_is_logged_and_read_back(monkeypatch, tmp_path):
    qemu, target = _fake_qemu(monkeypatch, tmp_path, (
        "printf 'boot\\r\\nNAPIPATCH-PLAN-BEGIN\\r\\nok 1 - link\\rup\\r\\n'; "
        "echo 'NAPIPATCH-PLAN-END rc=0' >&2"))
    res = qemu.boot(tmp_path / "bzImage", target, tmp_path, timeout=60)
    assert res.console == "boot\nNAPIPATCH-PLAN-BEGIN\nok 1 - link\rup\nNAPIPATCH-PLAN-END rc=0\n"
    assert res.console_log.read_bytes().decode() == res.console
    assert (res.finished, res.timed_out, res.plan_rc) == (True, False, 0)


def test_a_hung_qemu_is_cut_with_its_console_so_far(monkeypatch, tmp_path):
    qemu, target = _fake_qemu(monkeypatch, tmp_path, (
        "echo NAPIPATCH-PLAN-BEGIN; echo 'ok 1 - link up'; sleep 30 & echo $!; wait"))
    seen = []
    res = qemu.boot(tmp_path / "bzImage", target, tmp_path, timeout=1, progress=seen.append)
    assert (res.finished, res.timed_out) == (False, True)
    assert [t.status for t in res.tests] == ["ok"]
    assert _gone(int(res.console.splitlines()[-1]))
    assert seen and seen[0].startswith("booting bzImage under TCG (")


def test_vng_lines_of_both_streams_and_the_end_of_the_guest(tmp_path):
    """vng.run: the script (stdout) and the console (stderr) each line whole
    in the log; once the guest said it is done, QEMU is not waited for."""
    from napipatch.jobs.boot import vng

    fake = tmp_path / "bin" / "vng"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nprintf '[ 1.0] kernel\\r\\n' >&2\n"
                    "echo 'NAPIPATCH-SELFTEST-BEGIN net:a'; echo 'ok 1 a'\n"
                    "echo 'NAPIPATCH-SELFTEST-END net:a rc=0'\n"
                    "echo NAPIPATCH-GUEST-DONE; echo 'reboot: System halted' >&2\n"
                    "sleep 30 & echo $! >&2; wait\n")
    fake.chmod(0o755)
    stamps: dict[str, float] = {}
    console, timed_out, _secs = vng.run([str(fake)], 120, tmp_path / "vng.log", stamps=stamps)
    assert not timed_out
    got = console.splitlines()
    # two pipes: lines of one stream keep their order, but not across the
    # two (on a loaded machine the PID on stderr may come before GUEST-DONE)
    (pid,) = [line for line in got if line.isdigit()]
    assert sorted(line for line in got if line != pid) == sorted(
        ["[ 1.0] kernel", "NAPIPATCH-SELFTEST-BEGIN net:a", "ok 1 a",
         "NAPIPATCH-SELFTEST-END net:a rc=0", "NAPIPATCH-GUEST-DONE", "reboot: System halted"])
    assert got.index("ok 1 a") > got.index("NAPIPATCH-SELFTEST-BEGIN net:a")
    assert got.index(pid) > got.index("reboot: System halted")  # stderr's own order
    assert set(stamps) == {"start", "end", "done"}
    assert _gone(int(pid))
    log = (tmp_path / "vng.log").read_text().splitlines()
    assert log[0].startswith("# virtme-ng ") and log[1] == f"$ {fake}"
    assert log[2:] == got


def test_a_hung_vng_guest_is_killed_and_said_so_in_the_log(tmp_path):
    from napipatch.jobs.boot import vng

    console, timed_out, _secs = vng.run(["sh", "-c", "echo booting; sleep 30"], 1,
                                        tmp_path / "vng.log")
    assert timed_out and console == "booting\n"
    assert (tmp_path / "vng.log").read_text().endswith("booting\n# napipatch: killed after 1 s\n")


def test_a_run_read_to_its_end_is_not_late_while_another_goes_on():
    first = procs.start(["sh", "-c", "echo first"], timeout=1)
    slow = procs.start(["sh", "-c", "sleep 3; echo slow"], timeout=60)
    assert [cp.stdout for cp in procs.finish([first, slow])] == ["first\n", "slow\n"]


def test_a_tool_that_closed_its_output_still_has_its_deadline():
    with pytest.raises(procs.ProcessTimeout):
        procs.run(["sh", "-c", "echo bye; exec >&- 2>&-; exec sleep 30"], timeout=1)


def test_a_deadline_bounds_every_tool_started_under_it():
    """A job's deadline (``procs.deadline``): the tool running when it passes
    is killed with its children, and none starts after it."""
    t0 = time.monotonic()
    with procs.deadline(1.0) as limit:
        with pytest.raises(procs.ProcessTimeout) as killed:
            procs.run(["sh", "-c", "sleep 60 & echo $!; wait"], timeout=30)
        assert limit.expired and time.monotonic() - t0 < 10
        with pytest.raises(procs.ProcessTimeout, match="not started: the job's deadline"):
            procs.run(["true"], timeout=None)
    child = int(killed.value.output.split()[0])
    assert _gone(child)
    assert procs.run(["true"], timeout=None).returncode == 0  # outside it, no deadline

