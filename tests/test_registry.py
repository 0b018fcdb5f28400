"""A check is a declaration the registry validates; a broken one is named,
and the others still run."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import napipatch.checks
import pytest
from conftest import LORE

import napipatch
from napipatch.engine import registry

V4 = LORE / "threaded-busy-poll-v4.mbox"

GOOD_DOC = ('"""Doc.\n\nWhat it catches:\n    x\n\nWhy a reviewer cares:\n    y\n\n'
            'Example:\n    z\n\nFix:\n    w\n"""\n')
HEAD = "from napipatch.checks import check\n\n"
PLANTED = {
    "zz_nodecl": GOOD_DOC + "def run(ctx):\n    return []\n",
    "zz_scope": GOOD_DOC + HEAD + "@check(id='zz-scope', summary='s', scope='tree', needs='diff')\n"
                "def run(ctx):\n    return []\n",
    "zz_nodoc": '"""Only a line."""\n' + HEAD + "@check(id='zz-nodoc', summary='s', "
                "scope='patch', needs='diff')\ndef run(ctx):\n    return []\n",
    "zz_syntax": GOOD_DOC + "def run(ctx:\n",
    "zz_twice": GOOD_DOC + HEAD + "@check(id='subject', summary='s', scope='patch', needs='diff')\n"
                "def run(ctx):\n    return []\n",
    "zz_build": GOOD_DOC + HEAD + "@check(id='zz-build', summary='s', scope='patch', needs='compile')\n"
                "def run(ctx):\n    return []\n",
    "zz_nojob": GOOD_DOC + HEAD + "@check(id='zz-nojob', summary='s', scope='patch', needs='build')\n"
                "def run(job):\n    return []\n",
    "zz_badjob": GOOD_DOC + HEAD + "@check(id='zz-badjob', summary='s', scope='patch', "
                 "needs='build', job='warnings-w2', nipa=('build_allmodconfig_wrn',))\n"
                 "def run(job):\n    return []\n",
    "zz_jobdiff": GOOD_DOC + HEAD + "@check(id='zz-jobdiff', summary='s', scope='patch', "
                  "needs='diff', job='build')\ndef run(ctx):\n    return []\n",
    "zz_nipa": GOOD_DOC + HEAD + "@check(id='zz-nipa', summary='s', scope='patch', needs='diff', "
               "nipa=('checkpatch', 'check_patch'))\ndef run(ctx):\n    return []\n",
}
REASONS = {
    "zz_nodecl": "declares no check (a run(ctx) decorated with @check(...))",
    "zz_scope": "scope 'tree' is not one of patch, series",
    "zz_nodoc": "docstring lacks the sections What it catches, Why a reviewer cares, Example, Fix",
    "zz_syntax": "does not import: SyntaxError:",
    "zz_twice": "check id 'subject' is taken already",
    "zz_build": "needs 'compile' is not one of diff, scripts, tree, build, boot",
    "zz_nojob": "job '' is not one of build, warnings-w1, warnings-32bit",
    "zz_badjob": "nipa: 'build_allmodconfig_wrn' is no NIPA test",
    "zz_jobdiff": "job 'build' is for needs build or boot, not 'diff'",
    "zz_nipa": "nipa: 'check_patch' is no NIPA test (napipatch/report/nipa.py lists them)",
}


def test_every_shipped_check_is_valid_with_its_four_doc_sections():
    reg = registry.load()
    assert reg.broken == []
    # exact: a check lost from discovery fails here (a new one: count it)
    assert (len(reg.checks), sum(c.is_job for c in reg.checks.values())) == (48, 14)
    for c in reg.checks.values():
        assert registry.problems(registry.Declaration(c.id, c.summary, c.scope, c.needs,
                                                      c.version, job=c.job), c.doc) == [], c.id
        for section in registry.SECTIONS:
            assert f"\n{section}:\n" in f"\n{c.doc}\n", (c.id, section)


def _plant(tmp_path):
    d = tmp_path / "planted"
    d.mkdir()
    for name, text in PLANTED.items():
        (d / f"{name}.py").write_text(text)
    return d


def test_malformed_check_modules_are_named_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setattr(napipatch.checks, "__path__", [*napipatch.checks.__path__,
                                                       str(_plant(tmp_path))])
    reg = registry.load()
    got = {b.id: b.reason for b in reg.broken}
    assert set(got) == set(PLANTED)
    for name, reason in REASONS.items():
        assert got[name].startswith(reason), (name, got[name])
    assert "subject" in reg.checks and reg.checks["subject"].module.__name__.endswith(".subject")
    for name in PLANTED:
        sys.modules.pop(f"napipatch.checks.{name}", None)


def _cli_with_planted(tmp_path, *args) -> subprocess.CompletedProcess:
    code = ("import sys, napipatch.checks as k, napipatch.cli as c\n"
            f"k.__path__.append({str(_plant(tmp_path))!r})\n"
            "sys.argv = ['napipatch', *sys.argv[1:]]\nc.main()\n")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)


def test_a_broken_check_module_does_not_stop_the_others_and_is_never_clean(tmp_path):
    cp = _cli_with_planted(tmp_path, "check", V4)
    assert cp.returncode == 3, cp.stderr
    assert "SERIES: warning: [zz_nodecl] checks/zz_nodecl.py is not a valid check: declares no " \
        "check" in cp.stdout
    assert "NOT CHECKED: zz_scope crashed (checks/zz_scope.py: scope 'tree'" in cp.stdout
    # the real checks ran and reported as usual
    assert "[subject] no subsystem prefix in 'Add support to set napi threaded" in cp.stdout
    diff_checks = sum(1 for c in registry.discover().values() if c.needs == "diff")
    n = len(PLANTED)
    assert f"{diff_checks} of {diff_checks + n} checks completed; {n} crashed: zz_badjob, " \
        "zz_build, zz_jobdiff, zz_nipa, zz_nodecl" in cp.stdout   # without a tree only the diff checks run


def test_checks_list_names_a_broken_module_in_one_line(tmp_path):
    cp = _cli_with_planted(tmp_path, "checks", "list")
    assert cp.returncode == 3
    assert "subject" in cp.stdout
    errors = cp.stderr.strip().splitlines()
    assert len(errors) == len(PLANTED)
    assert "napipatch: error: checks/zz_nodoc.py: docstring lacks the sections" in cp.stderr


@pytest.mark.parametrize("bad", ["Bad_Id", "x", "has space"])
def test_ids_are_short_lower_case_words(bad):
    assert registry.problems(registry.Declaration(bad, "s", "patch", "diff"), GOOD_DOC)



def _stamps(tree) -> list[tuple[int, str]]:
    """What a module writes as a finding's check (``Finding(check=...)``,
    ``replace(f, check=...)``) and as its NIPA contexts (``nipa={KEY: ...}``):
    the names and strings of those expressions (a call: its function's name)."""
    def parts(e):
        if isinstance(e, ast.Call):
            return [ast.unparse(e.func)]
        if isinstance(e, ast.Constant):
            return [repr(e.value)]
        if isinstance(e, (ast.Name, ast.Attribute)):
            return [ast.unparse(e)]
        if isinstance(e, ast.IfExp):  # the condition is not what is written
            return parts(e.body) + parts(e.orelse)
        return [p for c in ast.iter_child_nodes(e) for p in parts(c)]

    out = []
    for n in ast.walk(tree):
        for kw in n.keywords if isinstance(n, ast.Call) else []:
            if kw.arg == "check":
                out += [(n.lineno, p) for p in parts(kw.value)]
            if kw.arg == "nipa":
                out += [(n.lineno, f"nipa key {ast.unparse(k)}") for d in ast.walk(kw.value)
                        if isinstance(d, ast.Dict) for k in d.keys]
    return out


def test_no_job_names_a_check_or_a_nipa_context():
    """Jobs produce, checks declare: a job under napipatch/jobs/ puts its
    findings on its channels (``jobs.executor``: STEPS, GUEST, ...) and says
    a NIPA state for "the reading check" (``OWN``), never a check id or a
    NIPA context; the pipeline stamps both from the check's one declaration.
    The channels are words no check or context has."""
    from napipatch.jobs import executor

    reg = registry.load()
    words = set(reg.checks) | {ctx for c in reg.checks.values() for ctx in c.nipa}
    channels = {"STEPS", "GUEST", "TESTS", "HOST", "COMPILER", "CHECKER", "OUTPUT", "INFRA"}
    assert {getattr(executor, c) for c in channels} & words == set()
    allowed = channels | {"channel", "_channel_of", "nipa key OWN", "False", "True"}
    root = Path(napipatch.__file__).parent / "jobs"
    found = [f"{path.relative_to(root)}:{line}: {what}"
             for path in sorted(root.rglob("*.py"))
             for line, what in _stamps(ast.parse(path.read_text()))
             if what not in allowed]
    assert found == []
