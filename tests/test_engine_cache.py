"""The result cache key covers the code a check runs, not only its own file."""

import importlib
import sys
from pathlib import Path

from conftest import LORE

from napipatch.config import Config
from napipatch.engine import cache as cachemod
from napipatch.engine.context import SeriesContext
from napipatch.engine.registry import CheckInfo, discover
from napipatch.engine.statics import Unit, run_units
from napipatch.mails.mbox import read_mbox
from napipatch.mails.series import assemble

PKG = Path(__file__).resolve().parent.parent / "napipatch"


def test_a_checks_closure_holds_the_helpers_it_imports():
    files = {p.relative_to(PKG).as_posix() for p in cachemod.source_closure("napipatch.checks.callsites")
             if PKG in p.parents}
    # callsites -> kernel/cparse_calls (its parser) and tree/treegrep -> tree/gitutil
    assert {"kernel/cparse_calls.py", "tree/treegrep.py", "tree/gitutil.py"} <= files
    assert "cli/__init__.py" not in files  # the front-end is not code a check runs


def _fake_check(tmp_path: Path, helper_body: str):
    pkg = tmp_path / "fakechecks"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "helper.py").write_text(helper_body)
    # The helper is imported inside the function: it runs all the same.
    (pkg / "shout.py").write_text(
        "ID = 'shout'\nSUMMARY = 's'\nSCOPE = 'series'\nNEEDS = 'diff'\n"
        "def run(ctx):\n    from fakechecks.helper import message\n"
        "    yield ctx.finding('warning', message())\n")
    return pkg


def _shout(tmp_path, monkeypatch):
    """The fake check, the v4 series, a config, a series context and a result cache."""
    monkeypatch.syspath_prepend(str(tmp_path))
    _fake_check(tmp_path, "def message():\n    return 'old'\n")
    mod = importlib.import_module("fakechecks.shout")
    check = CheckInfo(id="shout", summary="s", scope="series", needs="diff", version=1, module=mod)
    series = assemble(read_mbox(LORE / "threaded-busy-poll-v4.mbox"), "v4")
    cfg = Config(cache_dir=str(tmp_path / "cache"))
    ctx = SeriesContext(series=series, config=cfg, patches=[])
    return check, series, cfg, ctx, cachemod.ResultCache(cfg.cache)


def test_editing_a_helper_is_a_cache_miss(tmp_path, monkeypatch):
    check, series, cfg, ctx, rcache = _shout(tmp_path, monkeypatch)

    def run():
        return run_units([Unit(check, ctx)], series, None, cfg, rcache)[0]

    first, again = run(), run()
    assert (first.cached, again.cached) == (False, True)
    assert [f.message for f in again.findings] == ["old"]

    # A new process sees the edited helper: drop what this one loaded.
    (tmp_path / "fakechecks" / "helper.py").write_text("def message():\n    return 'new'\n")
    for name in [n for n in sys.modules if n.startswith("fakechecks")]:
        del sys.modules[name]
    cachemod._closure_hash.cache_clear()
    edited = run()
    assert edited.cached is False
    assert [f.message for f in edited.findings] == ["new"]
    cachemod._closure_hash.cache_clear()


def _fingerprint(name: str, version: int = 1) -> str:
    """The fingerprint a fresh process would compute for fakechecks.NAME."""
    for mod in [n for n in sys.modules if n.startswith("fakechecks")]:
        del sys.modules[mod]
    cachemod._closure_hash.cache_clear()
    mod = importlib.import_module(f"fakechecks.{name}")
    return CheckInfo(id=name, summary="s", scope="series", needs="diff", version=version,
                     module=mod).fingerprint


def test_a_fingerprint_changes_with_the_checks_code_and_its_helpers(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    pkg = _fake_check(tmp_path, "def message():\n    return 'old'\n")
    # A second check running the same helper: same helper, other code.
    (pkg / "whisper.py").write_text((pkg / "shout.py").read_text().replace("shout", "whisper"))
    try:
        first = _fingerprint("shout")
        assert _fingerprint("shout") == first  # stable while nothing changes
        assert _fingerprint("whisper") != first  # differs between checks
        assert _fingerprint("shout", version=2) != first

        (pkg / "helper.py").write_text("def message():\n    return 'new'\n")
        helper_edited = _fingerprint("shout")
        assert helper_edited != first

        (pkg / "shout.py").write_text((pkg / "shout.py").read_text() + "# edited\n")
        assert _fingerprint("shout") not in (first, helper_edited)
    finally:
        cachemod._closure_hash.cache_clear()


def test_registered_checks_have_distinct_fingerprints():
    checks = discover().values()
    prints = {c.fingerprint for c in checks}
    assert len(prints) == len(checks)
    assert all(c.fingerprint.startswith(f"{c.version}-") for c in checks)


def test_a_new_c_grammar_is_a_cache_miss(tmp_path, monkeypatch):
    """A tree-sitter-c upgrade changes the trees the C checks read: results
    cached under the old grammar must not be served."""
    check, series, cfg, ctx, rcache = _shout(tmp_path, monkeypatch)
    installed = {"tree-sitter": "0.26.1", "tree-sitter-c": "0.24.2"}
    monkeypatch.setattr(cachemod, "_dist_version", lambda name: installed[name])

    def key():
        cachemod.parser_versions.cache_clear()
        return cachemod.result_key("shout", check.fingerprint, series, 1, None, "")

    def run():
        cachemod.parser_versions.cache_clear()
        return run_units([Unit(check, ctx)], series, None, cfg, rcache)[0]

    try:
        old_key = key()
        assert key() == old_key
        assert (run().cached, run().cached) == (False, True)
        installed["tree-sitter-c"] = "0.25.0"
        assert key() != old_key
        assert run().cached is False
        installed["tree-sitter"] = "0.27.0"
        assert run().cached is False
    finally:
        cachemod.parser_versions.cache_clear()


def test_the_key_reads_the_installed_parser_versions():
    from importlib.metadata import version

    cachemod.parser_versions.cache_clear()
    assert cachemod.parser_versions() == (f"tree-sitter=={version('tree-sitter')} "
                                          f"tree-sitter-c=={version('tree-sitter-c')}")


def test_only_the_checks_that_read_the_history_are_keyed_by_it(tmp_path, monkeypatch):
    """A series checked as a format-patch directory and through the send
    hook has another name, so another history ("no earlier version of NAME");
    the checks that never read it must still share their results."""
    _check, series, _cfg, _ctx, _rcache = _shout(tmp_path, monkeypatch)
    checks = discover()
    readers = {c.id for c in checks.values() if c.history}
    assert readers == {"repost-wait", "new-thread", "version-link", "review-tags",
                       "review-followup"}

    def key(check_id: str, why: str) -> str:
        series.inputs.history = {"previous": None, "why": why}
        c = checks[check_id]
        return cachemod.result_key(c.id, c.fingerprint, series, 1, None, "s", history=c.history)

    assert key("subject", "no earlier version of 'outgoing'") == \
        key("subject", "no earlier version of 'net-add-x'")
    assert key("version-link", "no earlier version of 'outgoing'") != \
        key("version-link", "no earlier version of 'net-add-x'")


def test_whatever_rides_beside_the_mails_is_part_of_the_key(tmp_path, monkeypatch):
    """Series.inputs is hashed whole (the history aside): every field, the
    ones added tomorrow too, and any key of the stored record give another
    result key, never a stale cached result."""
    import dataclasses

    _check, series, _cfg, _ctx, _rcache = _shout(tmp_path, monkeypatch)
    c = discover()["subject"]

    def key() -> str:
        return cachemod.result_key(c.id, c.fingerprint, series, 1, None, "s")

    before = key()
    others = {"record": {"sent": "x"}, "recipients": {"to": ["a@example.org"]},
              "base_commit": "0" * 40, "synthetic_cover": True, "net_next": {"state": "closed"},
              "reply_mails": ["a reply"], "reply_link": "https://example.org/{msgid}"}
    named = [f.name for f in dataclasses.fields(series.inputs) if f.name != "history"]
    assert sorted(named) == sorted(others), "a new Inputs field: give it a value here"
    for name in named:
        kept = getattr(series.inputs, name)
        setattr(series.inputs, name, others[name])
        assert key() != before, name
        setattr(series.inputs, name, kept)
        assert key() == before, name
    series.inputs.record["a-key-nobody-listed"] = {"tags": ["Reviewed-by: A <a@example.org>"]}
    assert key() != before
    series.inputs.record["a-key-nobody-listed"] = {"tags": ["Reviewed-by: B <b@example.org>"]}
    after = key()
    del series.inputs.record["a-key-nobody-listed"]
    assert len({before, after, key()}) == 2 and key() == before


def test_a_check_reading_the_history_undeclared_is_refused(monkeypatch):
    import inspect
    import types

    from napipatch.checks import Declaration

    from napipatch.engine.registry import problems
    mod = types.ModuleType("fake")
    decl = Declaration("fake", "a fake", "series", "diff")
    monkeypatch.setattr(inspect, "getsource", lambda m: "def run(ctx):\n    return ctx.history\n")
    assert any("reads ctx.history without history=True" in p for p in problems(decl, "", mod))
    declared = Declaration("fake", "a fake", "series", "diff", history=True)
    assert not any("ctx.history" in p for p in problems(declared, "", mod))
