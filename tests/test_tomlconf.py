"""The one TOML reader (napipatch.tomlconf): every problem is one line
naming the file and the key, and the targets read through it refuse a
bad target.toml with exit 2 (the bot's config and experiment.toml are
tested in test_bot.py and test_bench.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import ROOT, commit_files, format_patch, git, small_repo

from napipatch import tomlconf
from napipatch.errors import NapipatchError
from napipatch.jobs import targets

SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["boot"],
    "properties": {
        "boot": {"type": "object", "additionalProperties": False, "required": ["plan"],
                 "properties": {"plan": {"type": "string"},
                                "timeout": {"type": "number", "exclusiveMinimum": 0,
                                            "default": 300},
                                "cpus": {"type": ["string", "integer"]}}},
        "extra": {"type": "object", "default": {},
                  "properties": {"jobs": {"type": "boolean", "default": False}}},
        "loads": {"type": "array", "minItems": 1, "x-error": "needs at least one [[loads]]",
                  "items": {"type": "object", "additionalProperties": False,
                            "properties": {"rate": {"type": "integer"},
                                           "delay": {"type": "integer", "default": 0}}}},
        "policy": {"enum": ["problems", "always"]},
    },
}


def _error(text: str) -> str:
    with pytest.raises(NapipatchError) as exc:
        tomlconf.parse(text, SCHEMA, "t.toml")
    assert "\n" not in str(exc.value)
    return str(exc.value)


@pytest.mark.parametrize("text, message", [
    ("[boot]\ntimeout = 3\n", "t.toml: boot.plan: missing"),
    # a missing table is reported at the key it needs
    ("", "t.toml: boot.plan: missing"),
    ('[boot]\nplan = 1\n', "t.toml: boot.plan: must be a string, not integer 1"),
    ('[boot]\nplan = "p"\ntimeout = true\n',
     "t.toml: boot.timeout: must be a number, not boolean true"),
    ('[boot]\nplan = "p"\ncpus = 1.5\n',
     "t.toml: boot.cpus: must be a string or an integer, not float 1.5"),
    ('[boot]\nplan = "p"\ntimeout = 0\n', "t.toml: boot.timeout: must be > 0, not 0"),
    ('[boot]\nplan = "p"\ntimout = 3\n',
     "t.toml: boot.timout: unknown key (did you mean timeout?)"),
    ('[boot]\nplan = "p"\nzzz = 3\n', "t.toml: boot.zzz: unknown key (known: plan, timeout, cpus)"),
    ('[boot]\nplan = "p"\n[bot]\n', "t.toml: bot: unknown table (did you mean boot?)"),
    ('[boot]\nplan = "p"\n[[loads]]\nrate = 1\n[[loads]]\nrate = 3.0\n',
     "t.toml: loads[1].rate: must be an integer, not float 3.0"),
    ('loads = []\n[boot]\nplan = "p"\n', "t.toml: loads: needs at least one [[loads]]"),
    ('policy = "sometimes"\n[boot]\nplan = "p"\n',
     "t.toml: policy: 'sometimes' is not one of problems, always"),
    ('[boot]\nplan = "p"\n"odd key" = 1\n',
     't.toml: boot."odd key": unknown key (known: plan, timeout, cpus)'),
    ("[boot\n", "t.toml: not valid TOML"),
])
def test_each_problem_is_one_line_naming_file_and_key(text, message):
    assert _error(text).startswith(message)


def test_defaults_are_filled_in_at_every_depth():
    data = tomlconf.parse('[boot]\nplan = "p"\n[[loads]]\nrate = 1\n[[loads]]\nrate = 2\n'
                          'delay = 5\n', SCHEMA, "t.toml")
    assert data["boot"] == {"plan": "p", "timeout": 300}
    assert data["extra"] == {"jobs": False}  # an absent table with a default gets its keys'
    assert data["loads"] == [{"rate": 1, "delay": 0}, {"rate": 2, "delay": 5}]
    assert "policy" not in data  # no default: absent stays absent


def test_an_unreadable_file_is_one_line(tmp_path):
    with pytest.raises(NapipatchError, match=r"^.*/nope.toml: No such file or directory$"):
        tomlconf.read(tmp_path / "nope.toml", SCHEMA)
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe")
    with pytest.raises(NapipatchError, match=r"bin.toml: not valid TOML"):
        tomlconf.read(tmp_path / "bin.toml", SCHEMA)


def test_key_spelling():
    assert tomlconf.key(("loads", 2, "rate")) == "loads[2].rate"
    assert tomlconf.key(("tree", "branches", "net.next")) == 'tree.branches."net.next"'
    assert str(tomlconf.error("f.toml", (), "bad")) == "f.toml: bad"


# ------------------------------------------------------------------ targets
def _own_targets(tmp_path: Path, toml: str) -> Path:
    """A targets directory: the shipped virtio-net and a target 'broken'."""
    d = tmp_path / "mytargets"
    shutil.copytree(ROOT / "targets" / "virtio-net", d / "virtio-net")
    (d / "broken").mkdir()
    (d / "broken" / "config.fragment").write_text("CONFIG_NET=y\n")
    (d / "broken" / "target.toml").write_text(toml)
    return d


@pytest.mark.parametrize("toml, message", [
    ('[boot]\ntimeout = 10\n', "boot.plan: missing"),
    ('[boot]\nplan = "plan.sh"\n', "boot.plan: plan.sh: no such file"),
    ('fragments = ["config.fragment"]\nmake-targets = "bzImage"\n',
     "make-targets: must be a list, not string 'bzImage'"),
    ('imgae = "x"\n', "imgae: unknown key (did you mean image?)"),
    ('[selftests]\nmax-timeout = 0\n', "selftests.max-timeout: must be > 0, not 0"),
    ('[boot]\nplan = "config.fragment"\nbackend = "qemu"\n',
     "boot.backend: 'qemu' is not one of vng, busybox"),
])
def test_a_bad_target_toml_names_its_file_and_key(tmp_path, monkeypatch, toml, message):
    d = _own_targets(tmp_path, toml)
    monkeypatch.setenv(targets.ENV, str(d))
    assert targets.names() == ["broken", "virtio-net"]
    with pytest.raises(NapipatchError) as exc:
        targets.load("broken")
    assert str(exc.value) == f"{d}/broken/target.toml: {message}"
    assert targets.load("virtio-net").boot.plan == d / "virtio-net" / "plan.sh"


def test_shipped_targets_load_and_are_named_relative(monkeypatch):
    monkeypatch.delenv(targets.ENV, raising=False)
    assert targets.names() == ["idpf", "virtio-net"]
    assert targets.load("idpf").boot is None
    assert targets.load("virtio-net").boot.backend == "vng"
    with pytest.raises(NapipatchError, match="^nope: no such target"):
        targets.load("nope")
    with pytest.raises(NapipatchError, match=r"^\.\./targets: no such target"):
        targets.load("../targets")


def test_cli_boot_of_a_target_without_a_plan_is_exit_2_and_one_line(cli, tmp_path):
    """The real command on a real (small) series: the target's file and
    key, not a KeyError (which was exit 3)."""
    d = _own_targets(tmp_path, '# no plan\n[boot]\ntimeout = 10\n')
    tree = small_repo(tmp_path / "linux")
    (tree / "a.c").write_text("int a;\n")
    git(tree, "add", "a.c")
    git(tree, "commit", "-q", "-m", "a: add")
    tip = commit_files(tree, "HEAD", {"a.c": "int a;\nint b;\n"}, "a: add b")
    series = format_patch(tree, f"HEAD..{tip}", tmp_path / "mails")
    cp = cli("test", "boot", series, "--tree", tree, "--target", "broken",
             env={targets.ENV: str(d)})
    assert (cp.returncode, cp.stderr) == (
        2, f"napipatch: error: {d}/broken/target.toml: boot.plan: missing\n")


def test_the_debug_flavour_adds_its_fragment_and_builds_apart(monkeypatch):
    monkeypatch.delenv(targets.ENV, raising=False)
    plain, debug = targets.load("virtio-net"), targets.load("virtio-net", "debug")
    assert plain.flavours == ("debug",) and plain.build_name == "virtio-net"
    assert debug.build_name == "virtio-net.debug" and debug.label == "virtio-net (debug flavour)"
    assert [f.name for f in debug.fragments] == ["config.fragment", "debug.fragment"]
    opts = debug.options()
    assert (opts["CONFIG_PROVE_LOCKING"], opts["CONFIG_DEBUG_KMEMLEAK"], opts["CONFIG_KASAN"],
            opts["CONFIG_SLUB_TINY"]) == ("y", "y", "y", "n")
    assert "CONFIG_KASAN" not in plain.options() and debug.config_hash != plain.config_hash
    assert debug.boot.timeout > plain.boot.timeout
    with pytest.raises(NapipatchError) as exc:
        targets.load("idpf", "debug")
    assert str(exc.value) == "--flavour debug: target idpf has no such flavour (its flavours: none)"


def test_cli_boot_with_an_unknown_flavour_is_exit_2_before_any_work(cli, tmp_path):
    cp = cli("test", "boot", ROOT / "series" / "threaded-busy-poll" / "v5", "--tree", tmp_path,
             "--flavour", "fast")
    assert (cp.returncode, cp.stderr) == (
        2, "napipatch: error: --flavour fast: target virtio-net has no such flavour "
           "(its flavours: debug)\n")


@pytest.mark.parametrize("toml, message", [
    ('[flavours.debug]\ndescription = "x"\n', "flavours.debug.fragments: missing"),
    ('[flavours.debug]\nfragments = ["nope.fragment"]\n',
     "flavours.debug.fragments[0]: nope.fragment: no such file"),
])
def test_a_bad_flavour_names_its_key(tmp_path, monkeypatch, toml, message):
    d = _own_targets(tmp_path, toml)
    monkeypatch.setenv(targets.ENV, str(d))
    with pytest.raises(NapipatchError) as exc:
        targets.load("broken", "debug")
    assert str(exc.value) == f"{d}/broken/target.toml: {message}"
