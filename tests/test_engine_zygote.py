"""The engine's two ways of not paying for work twice: a unit with nothing
to read starts no process (``files``), and a slow tool's start-up is paid
once, by a warm zygote forked when the run begins (``zygote``)."""

from __future__ import annotations

import os
import re
import select
import time
import types
from pathlib import Path

import pytest
from conftest import LORE

from napipatch import config as configmod
from napipatch.engine import registry, zygote
from napipatch.mails.mbox import read_mbox
from napipatch.pipeline import run as runmod
from napipatch.mails.series import assemble

V4 = LORE / "threaded-busy-poll-v4.mbox"
STATE: dict = {}


def _warm(work):
    STATE["warm"] = os.getpid()
    (work / "warm").write_text("here")


def _serve(request):
    if isinstance(request, tuple) and request[0] == "sleep":   # ("sleep", pid file)
        Path(request[1]).write_text(str(os.getpid()))
        time.sleep(3600)
    if request == "raise":
        raise ValueError("no")
    return STATE.get("warm"), os.getpid(), request


def _no_children():
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def _ends(pid: int, bound: float) -> bool:
    """Process ``pid`` (not a child of ours) ends within ``bound`` seconds,
    a bound only a broken run reaches."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], bound)[0])
    finally:
        os.close(fd)


def test_a_zygote_serves_each_request_from_a_warm_child_and_leaves_with_the_run(tmp_path):
    # A served child's own alarm ends it after 120 s: past the wait for the
    # late child below, so only ask() killing it ends that wait in time.
    pid = zygote.start("t", _warm, _serve, 120, tmp_path)
    try:
        warm, served, echo = zygote.ask("t", ("x", 1), 10)
        assert (warm, echo) == (pid, ("x", 1)), "served from the warmed zygote"
        assert served not in (pid, os.getpid()), "by a child of its own"
        assert "warm" not in STATE, "warming happened in the zygote, not here"
        assert (tmp_path / "warm").read_text() == "here"
        with pytest.raises(RuntimeError, match="ValueError: no"):
            zygote.ask("t", "raise", 10)
        late = tmp_path / "late.pid"
        with pytest.raises(TimeoutError):
            zygote.ask("t", ("sleep", str(late)), 2)
        # The late child (it would sleep an hour) was killed, not left running.
        assert late.exists(), "the served child never started"
        assert _ends(int(late.read_text()), 60), "a timed-out served child outlived ask()"
    finally:
        zygote.stop("t", pid)
    assert zygote.ask("t", "late", 10) is None, "no zygote: the caller does the work"
    _no_children()


def test_a_zygote_whose_warm_up_fails_answers_none(tmp_path):
    def broken(_work):
        raise ImportError("no pylint here")
    pid = zygote.start("broken", broken, _serve, 20, tmp_path)
    try:
        assert zygote.ask("broken", "x", 10) is None
    finally:
        zygote.stop("broken", pid)
    _no_children()


def _module(name: str, fn, **extra) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.run = fn
    for k, v in extra.items():
        setattr(mod, k, v)
    return mod


def test_units_with_nothing_to_read_start_no_process_and_a_zygote_serves_the_rest(
        tmp_path, monkeypatch):
    series = assemble(read_mbox(V4), str(V4))
    seen = tmp_path / "seen"
    seen.mkdir()

    def records(ctx):
        (seen / f"{os.getpid()}").write_text(str(ctx.n))
        answer = ctx.ask(ctx.n, 10)
        yield ctx.finding("warning", f"patch {ctx.n}: {answer and answer[2]}")

    fake = {
        "py": registry.CheckInfo("py", "py", "patch", "diff", 1,
                                 _module("fake_py", records), files=("*.sh",)),
        "served": registry.CheckInfo("served", "served", "patch", "diff", 1,
                                     _module("fake_served", records, warm=_warm,
                                             serve=_serve),
                                     files=("net/core/*",), zygote=True),
    }
    monkeypatch.setattr(runmod, "load", lambda: registry.Registry(fake, []))
    cfg = configmod.Config(cache_dir=str(tmp_path / "cache"), check_timeout=30, jobs=2)
    report = runmod.run(series, cfg, use_cache=False)

    def said(check):
        return sorted(f.message for f in report.findings if f.check == check)
    def touching(pattern):
        return [n for n, m in enumerate(series.patches, 1)
                if re.search(rf"^diff --git a/{pattern}", m.diff, re.MULTILINE)]
    assert touching(r"\S+\.sh ") == [4], "v4: only the selftest patch has a script"
    assert said("py") == ["patch 4: None"], "only the patch with a script ran, no zygote"
    core = touching("net/core/")
    assert core and said("served") == [f"patch {n}: {n}" for n in core]
    assert sorted(int(p.read_text()) for p in seen.iterdir()) == sorted([4, *core]), \
        "no process for a unit with nothing to read"
    assert {c.id: c.status for c in report.checks} == {"py": "warn", "served": "warn"}
    assert not any(c.cached for c in report.checks), "under --no-cache nothing is cached"
    assert zygote._CONTROL == {}
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [], "its work dir is gone"
    _no_children()


def test_a_diff_the_engine_cannot_read_still_runs_the_unit_which_says_why(tmp_path,
                                                                         monkeypatch):
    text = V4.read_text()
    broken = text.replace("@@ -280,6 +280,14 @@ attribute-sets:",   # a hunk cut short
                          "@@ -280,6 +280,40 @@ attribute-sets:", 1)
    assert broken != text
    mbox = tmp_path / "broken.mbox"
    mbox.write_text(broken)
    series = assemble(read_mbox(mbox), str(mbox))

    def reads_the_diff(ctx):
        list(ctx.diff)
        return []
    fake = {"py": registry.CheckInfo("py", "py", "patch", "diff", 1,
                                     _module("fake_py2", reads_the_diff), files=("*.nothing",))}
    monkeypatch.setattr(runmod, "load", lambda: registry.Registry(fake, []))
    cfg = configmod.Config(cache_dir=str(tmp_path / "cache"), check_timeout=30, jobs=2)
    report = runmod.run(series, cfg, use_cache=False)
    assert [c.status for c in report.checks] == ["error"]
    assert any("cannot be parsed" in f.message for f in report.findings)
