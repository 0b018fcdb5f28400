"""A check declared ``group="netdev process"`` (napipatch's own reading of
maintainer-netdev.rst, no NIPA test): the registry holds it to ``nipa=()``,
and the text and markdown reports and the bot's reply show its findings
apart, under "netdev process"; ``checks list`` says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

from conftest import LORE

from napipatch.bot.reply import report_body
from napipatch.bot.trees import TreeChoice
from napipatch.engine import registry
from napipatch.mails.mbox import read_mbox
from napipatch.mails.series import assemble
from napipatch.report.findings import Finding
from napipatch.report.model import CheckResult, Report

V4 = LORE / "threaded-busy-poll-v4.mbox"
DOC = ('"""Doc.\n\nWhat it catches:\n    x\n\nWhy a reviewer cares:\n    y\n\n'
       'Example:\n    z\n\nFix:\n    w\n"""\n')
# A process check that flags every patch; it claims a NIPA state, which the
# engine drops: NIPA has no such rule.
PROC = DOC + ("from napipatch.checks import check\n\n"
              "@check(id='zz-proc', summary='a planted process rule', scope='patch', "
              "needs='diff', group='netdev process')\n"
              "def run(ctx):\n"
              "    yield ctx.finding('warning', f'process rule broken in patch {ctx.n}', "
              "file='net/core/dev.c', line=7, hint='reorder it', "
              "nipa={'checkpatch': 'fail'})\n")
HEADING = ("netdev process (napipatch's reading of Documentation/process/maintainer-netdev.rst; "
           "no NIPA test checks these):")


def _cli(tmp_path, *args) -> subprocess.CompletedProcess:
    d = tmp_path / "planted"
    d.mkdir(exist_ok=True)
    (d / "zz_proc.py").write_text(PROC)
    code = ("import sys, napipatch.checks as k, napipatch.cli as c\n"
            f"k.__path__.append({str(d)!r})\n"
            "sys.argv = ['napipatch', *sys.argv[1:]]\nc.main()\n")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], check=False,
                          capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)


def test_a_group_is_known_and_answers_for_no_nipa_test():
    bad = registry.problems(registry.Declaration("zz", "s", "patch", "diff", group="netdev"),
                            DOC)
    assert bad == ["group 'netdev' is not one of '', 'netdev process'"]
    bad = registry.problems(registry.Declaration("zz", "s", "patch", "diff", group="netdev process",
                                                 nipa=("checkpatch",)), DOC)
    assert bad == ["group 'netdev process' is napipatch's own rules, no NIPA test: nipa=()"]
    assert registry.problems(registry.Declaration("zz", "s", "patch", "diff",
                                                  group="netdev process"), DOC) == []


def test_checks_list_and_doc_name_the_group(tmp_path):
    cp = _cli(tmp_path, "checks", "list")
    assert cp.returncode == 0, cp.stderr
    [line] = [ln for ln in cp.stdout.splitlines() if ln.startswith("zz-proc")]
    assert line.endswith("a planted process rule [netdev process]")
    [subject] = [ln for ln in cp.stdout.splitlines() if ln.startswith("subject ")]
    assert "netdev process" not in subject
    cp = _cli(tmp_path, "checks", "list", "--format", "markdown")
    assert "| `zz-proc` | patch | diff | none: netdev process | a planted process rule |" \
        in cp.stdout
    cp = _cli(tmp_path, "checks", "doc", "zz-proc")
    assert "scope: patch, needs: diff, group: netdev process\n" in cp.stdout


def test_text_report_shows_process_findings_apart_under_their_heading(tmp_path):
    cp = _cli(tmp_path, "check", V4, "--only", "zz-proc,subject")
    assert cp.returncode == 0, cp.stderr
    lines = cp.stdout.splitlines()
    head = lines.index(HEADING)
    subject = [i for i, ln in enumerate(lines) if "[subject]" in ln]
    proc = [i for i, ln in enumerate(lines) if "[zz-proc]" in ln]
    assert subject and max(subject) < head          # the others first
    assert len(proc) == 4 and min(proc) > head       # then the group's, under its name
    assert lines[proc[0]] == ("net/core/dev.c:7: warning: PATCH 1/4 [zz-proc] "
                              "process rule broken in patch 1")
    assert lines[proc[0] + 1] == "    hint: reorder it"
    assert lines[head - 1] == ""
    # no NIPA context counts it
    assert "zz-proc" not in cp.stdout.split("NIPA")[-1].split("total:")[0]


def test_report_without_process_findings_has_no_heading(tmp_path):
    cp = _cli(tmp_path, "check", V4, "--only", "subject")
    assert "netdev process" not in cp.stdout


def test_markdown_and_json_show_the_group(tmp_path):
    cp = _cli(tmp_path, "check", V4, "--only", "zz-proc,subject", "--format", "markdown")
    assert cp.returncode == 0, cp.stderr
    text = cp.stdout
    head = text.index("#### netdev process\n")
    assert text.index("`subject`", text.index("| check |") + 200) < head
    assert text.index("- **warning** `zz-proc` PATCH 1/4 net/core/dev.c:7: "
                      "process rule broken in patch 1") > head
    cp = _cli(tmp_path, "check", V4, "--only", "zz-proc", "--format", "json")
    data = json.loads(cp.stdout)
    assert [c["group"] for c in data["checks"]] == ["netdev process"]
    assert [f["nipa"] for f in data["findings"]] == [{}, {}, {}, {}]


def test_bot_reply_shows_process_findings_apart(tmp_path):
    data = json.loads(_cli(tmp_path, "check", V4, "--only", "zz-proc,subject",
                           "--format", "json").stdout)
    series = assemble(read_mbox(V4), str(V4))
    report = Report(series, None, None, "",
                    findings=[Finding.from_json(f) for f in data["findings"]],
                    checks=[CheckResult(c["id"], c["status"], c["seconds"], group=c["group"])
                            for c in data["checks"]])
    body = report_body(SimpleNamespace(inboxes=[], ai_review="count", url=""), {"inbox": "netdev", "head_msgid": "m@x"},
                       None, series, report, TreeChoice(None, None, None, "net-next", ""))
    before, _, after = body.partition(HEADING + "\n\n")
    assert after, body
    assert "[subject]" in before and "[zz-proc]" not in before
    assert "[subject]" not in after.split("total:")[0]
    assert ("PATCH 1/4: [PATCH net-next v4 1/4] Add support to set napi threaded for individual napi\n"
            "  net/core/dev.c:7: warning: [zz-proc] process rule broken in patch 1\n"
            "      hint: reorder it\n") in after
