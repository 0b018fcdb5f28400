"""The NIPA forecast: what patchwork will show after posting, per patch and
context, in the JSON report (``series.patches[].nipa``) and the text table;
never success for what napipatch did not see."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import LORE, ROOT, commit_files, edit, format_patch, git, small_repo

from napipatch.mails.mbox import read_mbox
from napipatch.mails.series import assemble
from napipatch.report.findings import Finding, Severity
from napipatch.report.forecast import forecast
from napipatch.report.model import CheckResult, Report, build
from napipatch.report.nipa import CONTEXTS

V4 = LORE / "threaded-busy-poll-v4.mbox"
SKIP_LINES = {"No Rust files in patch. Skipping build", "No tools touched, skip",
              "No DT binding files touched, skip", "No DT schema or DTS files touched, skip",
              "No python scripts touched, skip", "No shell scripts touched, skip",
              "No YAML files touched, skip"}


def _nipa(data: dict) -> list[dict]:
    return [p["nipa"] for p in data["series"]["patches"]]


def _two_patches(tmp_path, files=("a.c", "tools/testing/selftests/net/x.py")):
    """Two patches on a small repository (no kernel): one file each."""
    repo = small_repo(tmp_path / "repo")
    for f in files:
        (repo / f).parent.mkdir(parents=True, exist_ok=True)
        (repo / f).write_text("x = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    for i, f in enumerate(files):
        (repo / f).write_text(f"x = {i + 2}\n")
        git(repo, "commit", "-q", "-am", f"net: x: change {f}\n\nBody.\n\n"
            "Signed-off-by: T <t@example.org>")
    d = format_patch(repo, f"{base}..HEAD", tmp_path / "out", "--cover-letter",
                     "--subject-prefix=PATCH net-next")
    cover = next(d.glob("0000-*"))
    cover.write_text(cover.read_text().replace("*** SUBJECT HERE ***", "net: x: two changes")
                     .replace("*** BLURB HERE ***", "Two."))
    return repo, base, d


def test_a_diff_only_run_forecasts_success_only_where_it_knows(cli, tmp_path):
    _repo, _base, d = _two_patches(tmp_path)
    cp = cli("check", d, "--format", "json")
    assert cp.returncode in (0, 1), cp.stderr
    cells = _nipa(json.loads(cp.stdout))
    assert len(cells) == 2
    for row in cells:
        assert set(row) <= {c.name for c in CONTEXTS}
        # Every success is NIPA's own skip, the tree tag, or a check that ran and found nothing.
        for name, c in row.items():
            assert c["state"] in ("success", "warning", "fail", "unknown"), (name, c)
            if c["state"] == "success":
                assert c["description"] in SKIP_LINES or c["description"] == \
                    "Clearly marked for net-next" or c["description"].startswith("no findings ("), \
                    (name, c)
            else:
                assert c["description"], (name, c)
        assert row["checkpatch"] == {"state": "unknown", "description": "not run: needs --tree"}
        assert row["kdoc"] == {"state": "unknown", "description": "not run: needs --tree"}
        assert row["apply"]["state"] == "unknown"
        assert row["build_clang"]["state"] == "unknown"
        assert "not selected (--only build-clang)" in row["build_clang"]["description"]
        assert row["ai-review"]["state"] == "unknown"
        assert row["tree_selection"] == {"state": "success",
                                         "description": "Clearly marked for net-next"}
        assert row["shellcheck"] == {"state": "success",
                                     "description": "No shell scripts touched, skip"}
    # patch 1 touches a.c only; patch 2 a .py under tools/
    assert cells[0]["build_tools"]["description"] == "No tools touched, skip"
    assert cells[1]["build_tools"]["state"] == "unknown"
    assert cells[0]["pylint"] == {"state": "success",
                                  "description": "No python scripts touched, skip"}
    assert cells[1]["pylint"]["state"] != "success" or \
        cells[1]["pylint"]["description"].startswith("no findings (")
    text = cli("check", d).stdout
    assert "NIPA forecast, what patchwork will show (s success, w warning, F fail, ? not known " \
        "here):\n  1 2\n" in text
    assert "  ? ?  build_allmodconfig_warn: not run here: build-w1, sparse not selected " \
        "(--only build-w1,sparse)" in text
    # build_tools is answered by the build-tools job check, which check does not run
    assert "  s ?  build_tools: not run here: build-tools not selected (--only build-tools)" \
        in text


def test_a_series_that_does_not_apply_gets_only_apply(cli, tmp_path):
    """NIPA posts apply (fail) and runs nothing else: the other contexts are
    not posted, so they are unknown here, never success."""
    repo, base, d = _two_patches(tmp_path)
    (repo / "a.c").write_text("something else\n")
    git(repo, "commit", "-q", "-am", "moved on")
    for p in d.glob("*.patch"):  # no base-commit: applied on the branch, where it conflicts
        p.write_text(p.read_text().replace(f"base-commit: {base}\n", ""))
    cp = cli("check", d, "--tree", repo, "--base", "main", "--only", "apply,kdoc",
             "--format", "json")
    assert cp.returncode == 1, cp.stderr
    for row in _nipa(json.loads(cp.stdout)):
        assert row["apply"]["state"] == "fail"
        assert row["apply"]["description"].startswith("Patch does not apply: patch 1: a.c")
        assert row["kdoc"] == {"state": "unknown", "description":
                               "not posted: NIPA stops when the series does not apply"}
        assert row["tree_selection"]["state"] == "success"
        assert not [n for n, c in row.items() if c["state"] == "success"
                    and n != "tree_selection"]


def _strict_budget(cli):
    subprocess.run(["git", "init", "-q", str(cli.cwd)], check=True)
    subprocess.run(["git", "-C", str(cli.cwd), "config", "napipatch.check-timeout", "0.000001"],
                   check=True)


def test_a_check_that_gave_no_result_is_unknown_and_fails_b4_review(cli):
    _strict_budget(cli)
    cp = cli("check", V4, "--only", "kdoc,subject", "--format", "json")
    assert cp.returncode == 2
    for row in _nipa(json.loads(cp.stdout)):
        assert row["kdoc"] == {"state": "unknown",
                               "description": "timed out: ran past 1e-06 s"}
    cp = cli("check", V4, "--only", "kdoc,subject", "--format", "b4-review")
    got = {e["tool"]: e for e in json.loads(cp.stdout)}
    assert set(got) == {"napipatch", "napipatch-nipa"}
    assert got["napipatch"]["status"] == "fail"
    assert got["napipatch"]["summary"] == "0 of 2 checks completed; 2 timed out: kdoc, subject"
    details = json.loads(got["napipatch"]["details"])
    assert {"status": "fail", "context": "kdoc", "description":
            "timed out: ran past 1e-06 s; this patch is not fully checked"} in details
    assert got["napipatch-nipa"]["status"] == "warn"  # unknowns: never a pass


# ------------------------------------------------ the rules, on built reports
def _report(findings, checks) -> Report:
    series = assemble(read_mbox(V4), "v4")
    return Report(series=series, tree=None, base=None, base_why="no tree",
                  findings=findings, checks=checks)


def _f(check, severity, patch, nipa=None, message="m"):
    return Finding(check=check, severity=Severity(severity), patch=patch, message=message,
                   file="f.c", line=3, nipa=nipa)


def test_states_come_from_nipa_rule_not_napipatch_severity():
    fc = forecast(_report(
        [_f("checkpatch", "info", 2, {"checkpatch": "warning"}, "SPACING: x"),
         _f("kdoc", "warning", 3, {"kdoc": "fail"}, "new kernel-doc warning: y"),
         _f("kdoc", "warning", 1, {}, "look-alike")],
        [CheckResult("checkpatch", "info", 0.1, nipa=("checkpatch",)),
         CheckResult("kdoc", "warn", 0.1, nipa=("kdoc",))]))
    assert [row["checkpatch"].state for row in fc] == ["success", "warning", "success", "success"]
    assert fc[1]["checkpatch"].description == "1 warning: f.c:3: [checkpatch] SPACING: x"
    assert [row["kdoc"].state for row in fc] == ["success", "success", "fail", "success"]
    assert fc[0]["kdoc"].description == "no findings (kdoc)"


def test_a_series_test_is_posted_on_every_patch():
    fc = forecast(_report([_f("ynl", "error", 2, message="stale header")],
                          [CheckResult("ynl", "fail", 0.1, nipa=("ynl",))]))
    assert {row["ynl"].description for row in fc} == {"1 fail: patch 2: f.c:3: [ynl] stale header"}
    assert {row["ynl"].state for row in fc} == {"fail"}


def test_a_fail_is_certain_without_every_check_a_warning_is_not():
    checks = [CheckResult("checkpatch", "warn", 0.1, nipa=("checkpatch",)),
              CheckResult("other", "timeout", 1.0, reason="ran past 1 s", nipa=("checkpatch",))]
    fail = forecast(_report([_f("checkpatch", "error", 1)], checks))
    assert fail[0]["checkpatch"].state == "fail"
    warn = forecast(_report([_f("checkpatch", "warning", 1)], checks))
    assert warn[0]["checkpatch"].state == "unknown"
    assert warn[0]["checkpatch"].description == "other: timed out: ran past 1 s"
    # a check that completed but could not evaluate NIPA's rule here
    fc = forecast(_report([], [CheckResult("kdoc", "pass", 0.1, nipa=("kdoc",),
                                           nipa_unknown="needs --tree")]))
    assert fc[0]["kdoc"].state == "unknown"


def test_a_context_no_selected_check_answers_is_unknown():
    r = _report([], [])
    r.coverage = {"checkpatch": ["checkpatch"]}
    fc = forecast(r)
    assert fc[0]["checkpatch"].description == "not run here: checkpatch not selected (--only checkpatch)"
    # ai-review has a check, but not in this report's registry: napipatch has none here
    assert fc[0]["ai-review"].description == "napipatch has no check for it"


def test_build_contexts_come_from_the_warnings_jobs_and_a_sampled_header_is_unknown():
    """`napipatch test warnings` answers the build tests through the same
    CheckResult.nipa and Finding.nipa as any check: a new warning is NIPA's
    fail; a header whose includers were only sampled leaves it unknown."""
    w1 = ("build_allmodconfig_warn",)
    checks = [CheckResult("build-w1", "warn", 9.0, nipa=w1),
              CheckResult("sparse", "info", 9.0, nipa=w1),
              CheckResult("build-clang", "info", 9.0, nipa=("build_clang",))]
    findings = [
        _f("build-w1", "warning", 1, {"build_allmodconfig_warn": "fail"}, "unused [-Wx]"),
        _f("build-clang", "info", 2, {"build_clang": "unknown"},
           "312 .c files see it; compiled 50 (clang): net/core/dev.o and 49 more"),
        _f("build-clang", "info", 3, None, "1 .c files see it; compiled 1 (clang): a.o")]
    fc = forecast(build(assemble(read_mbox(V4), "v4"), [(c, [f for f in findings if f.check == c.id])
                                                        for c in checks], whole=False))
    assert [set(row) for row in fc] == [{"build_allmodconfig_warn", "build_clang"}] * 4
    assert [row["build_allmodconfig_warn"].state for row in fc] == \
        ["fail", "success", "success", "success"]
    assert fc[0]["build_allmodconfig_warn"].description == "1 fail: f.c:3: [build-w1] unused [-Wx]"
    assert [row["build_clang"].state for row in fc] == ["success", "unknown", "success", "success"]
    assert fc[1]["build_clang"].description.startswith("not every object NIPA builds was "
                                                        "compiled here")
    # without the jobs, `check`'s forecast names the job checks that would answer them
    from napipatch.engine.outcomes import coverage
    from napipatch.engine.registry import discover
    unrun = _report([], [])
    unrun.coverage = coverage(discover().values())
    cell = forecast(unrun)[0]["build_clang"]
    assert (cell.state, cell.description) == \
        ("unknown", "not run here: build-clang not selected (--only build-clang)")


def test_a_finding_states_only_nipa_states():
    with pytest.raises(ValueError, match="NIPA state 'warn' is not one of"):
        Finding(check="x", severity=Severity.INFO, patch=1, message="m", nipa={"signed": "warn"})
    f = Finding(check="x", severity=Severity.INFO, patch=1, message="m", nipa={"signed": "warning"})
    assert Finding.from_json(json.loads(json.dumps(f.to_json()))) == f


# ---------------------------------------------------- on the real 6.12 tree
@pytest.mark.tree
def test_a_checkpatch_check_is_an_info_here_and_a_warning_on_patchwork(cli, kernel_tree,
                                                                       base_commit, tmp_path):
    path = "net/core/dev.c"
    text = edit(kernel_tree, base_commit, path, "static DEFINE_SPINLOCK(napi_hash_lock);",
                "static DEFINE_SPINLOCK(napi_hash_lock);\nstatic int napipatch_x = 1+2;")
    c = commit_files(kernel_tree, base_commit, {path: text}, "net: core: add a counter\n\nTest.\n")
    d = format_patch(kernel_tree, f"{base_commit}..{c}", tmp_path / "p",
                     "--subject-prefix=PATCH net-next")
    cp = cli("check", d, "--tree", kernel_tree, "--only", "checkpatch,kdoc", "--format", "json")
    assert cp.returncode == 0, cp.stderr  # an info is no error
    data = json.loads(cp.stdout)
    assert [(f["severity"], f["message"]) for f in data["findings"]] == [
        ("info", "SPACING: spaces preferred around that '+' (ctx:VxV)")]
    [row] = _nipa(data)
    line = text.splitlines().index("static int napipatch_x = 1+2;") + 1
    assert row["checkpatch"] == {"state": "warning", "description":
                                 f"1 warning: {path}:{line}: [checkpatch] SPACING: spaces "
                                 "preferred around that '+' (ctx:VxV)"}
    assert row["kdoc"] == {"state": "success", "description": "no findings (kdoc)"}
    text_out = cli("check", d, "--tree", kernel_tree, "--only", "checkpatch,kdoc").stdout
    assert f"  w  checkpatch: 1 warning: {path}:{line}: [checkpatch] SPACING" in text_out


def test_the_docs_table_is_the_generated_one(cli):
    """docs/nipa.md holds `napipatch checks nipa --format markdown` verbatim."""
    doc = (ROOT / "docs" / "nipa.md").read_text()
    start, end = "<!-- napipatch checks nipa --format markdown -->\n", \
        "<!-- end of the generated table -->"
    have = doc[doc.index(start) + len(start):doc.index(end)]
    made = cli("checks", "nipa", "--format", "markdown", check=0).stdout
    assert have == made, "docs/nipa.md: paste `napipatch checks nipa --format markdown` " \
        "between its markers"
    for ctx in CONTEXTS:
        assert f"| `{ctx.name}` |" in made
    text = cli("checks", "nipa", check=0).stdout
    assert text.splitlines()[0].split() == ["apply", "series", "apply"]
    assert cli("checks", "nipa", "--format", "html").stderr == \
        "napipatch: error: html: unknown format (text, markdown)\n"


def test_a_context_says_why_it_is_not_covered_only_when_no_check_covers_it():
    from napipatch.engine import registry
    covered = {n for c in registry.load().checks.values() for n in c.nipa}
    noted = {c.name for c in CONTEXTS if c.note or c.answered}
    assert not covered & noted, f"contexts a check covers that still say why none does: " \
        f"{sorted(covered & noted)} (napipatch/report/nipa.py)"
    assert {"apply", "checkpatch", "kdoc", "ynl"} <= covered


def test_no_skip_is_forecast_for_a_patch_whose_diff_cannot_be_read(tmp_path):
    """NIPA's "no .py touched, skip" needs the list of touched files."""
    text = V4.read_text()
    hunk = text.index("\n@@ ", text.index("diff --git"))
    cut = text.index("\n", hunk + 1)
    lines = text[cut:].split("\n")
    bad = tmp_path / "bad.mbox"
    bad.write_text(text[:cut] + "\n".join(lines[6:]))  # a hunk cut short
    series = assemble(read_mbox(bad), "bad")
    fc = forecast(Report(series=series, tree=None, base=None, base_why="no tree"))
    assert fc[0]["pylint"].state == "unknown"
    assert fc[1]["pylint"] == fc[2]["pylint"]
    assert fc[1]["dt_binding_check"].state == "success"


def test_napipatch_only_rules_do_not_colour_the_forecast(cli, tmp_path):
    """A placeholder cover letter is napipatch's error, not NIPA's: its
    series_format posts success; a missing sign-off fails both."""
    repo, base, d = _two_patches(tmp_path)
    cover = next(d.glob("0000-*"))
    cover.write_text(cover.read_text().replace("net: x: two changes", "*** SUBJECT HERE ***"))
    second = sorted(d.glob("0002-*"))[0]
    second.write_text(second.read_text().replace("Signed-off-by: T <t@example.org>\n", ""))
    cp = cli("check", d, "--only", "series-format,signoff", "--format", "json")
    data = json.loads(cp.stdout)
    assert cp.returncode == 1
    assert {(f["check"], f["severity"]) for f in data["findings"]} == {
        ("series-format", "error"), ("signoff", "error")}
    cells = _nipa(data)
    assert [c["series_format"]["state"] for c in cells] == ["success", "success"]
    assert [c["verify_signedoff"]["state"] for c in cells] == ["success", "fail"]
    assert cells[1]["verify_signedoff"]["description"] == \
        "1 fail: [signoff] no Signed-off-by"


def test_a_sender_s_sign_off_is_napipatch_s_rule_not_verify_signedoff(cli, tmp_path):
    """NIPA's verify_signedoff wants the author's and the committer's (its
    own git am -s); the sender's missing or not last sign-off is napipatch's."""
    _repo, _base, d = _two_patches(tmp_path)
    first, second = sorted(d.glob("0001-*"))[0], sorted(d.glob("0002-*"))[0]
    # patch 1: sent by S for the author T, without S's sign-off
    text = first.read_text().replace("From: T <t@example.org>", "From: S <s@example.org>", 1)
    head, body = text.split("\n\n", 1)
    first.write_text(f"{head}\n\nFrom: T <t@example.org>\n\n{body}")
    # patch 2: T sends it, but another sign-off comes after T's
    second.write_text(second.read_text().replace(
        "Signed-off-by: T <t@example.org>\n",
        "Signed-off-by: T <t@example.org>\nSigned-off-by: O <o@example.org>\n"))
    data = json.loads(cli("check", d, "--only", "signoff", "--format", "json").stdout)
    assert [(f["patch"], f["severity"], f["message"].split(",")[0]) for f in data["findings"]] \
        == [(1, "error", "no Signed-off-by from the sender S <s@example.org>"),
            (2, "warning", "Signed-off-by chain ends with o@example.org")]
    assert [c["verify_signedoff"]["state"] for c in _nipa(data)] == ["success", "success"]


# ------------------------------------------------ contest, from the guest's selftests
def _contest(findings, checks) -> list[dict]:
    """The ``contest`` cells of the JSON report of a run with these results."""
    from napipatch.report.render import render_report
    data = json.loads(render_report(_report(findings, checks), "json"))
    return [p["nipa"]["contest"] for p in data["series"]["patches"]]


_GUEST = [CheckResult("boot/virtio-net", "info", 30.0, nipa=("contest",)),
          CheckResult("selftest/virtio-net", "info", 20.0, nipa=("contest",))]


def _case(name, status, **kw):
    """A selftest case's finding, as the boot job makes it and the pipeline
    gives it to the selftest check (its id and contest context stamped)."""
    from napipatch.engine.registry import discover
    from napipatch.jobs.executor import JobResult
    from napipatch.jobs.results.selftests import CaseResult
    from napipatch.jobs.results.verdicts import selftest_findings
    from napipatch.pipeline.jobchecks import results_of
    case = CaseResult(f"net:nl_netdev.py:{name}", status)
    case.flaky = kw.pop("flaky", "")
    found = selftest_findings("virtio-net", [case], 5, "0123456789ab", **kw)
    [(_result, stamped)] = results_of([discover()["selftest"]],
                                      JobResult("boot", "virtio-net", "pass", found, 1.0))
    return stamped


def test_contest_is_success_when_every_selftest_case_passed():
    ok = _case("empty_check", "ok", on_base=None, console_log="c.log") + \
        _case("lo_check", "ok", on_base=None, console_log="c.log")
    cells = _contest(ok + [_f("boot", "info", 0, message="booted virtio-net")], _GUEST)
    assert cells == [{"state": "success", "description":
                      "2 test cases passed (boot/virtio-net, selftest/virtio-net)"}] * 4


def test_contest_failure_is_posted_as_pending_on_every_patch():
    bad = _case("napi_threaded_check", "not ok", on_base=None, console_log="c.log")
    ok = _case("empty_check", "ok", on_base=None, console_log="c.log")
    cells = _contest(ok + bad, [CheckResult("boot/virtio-net", "info", 30.0, nipa=("contest",)),
                                CheckResult("selftest/virtio-net", "fail", 20.0,
                                            nipa=("contest",))])
    assert {c["state"] for c in cells} == {"fail"} and len(cells) == 4
    assert cells[0]["description"] == (
        "patchwork shows pending (NIPA posts a contest failure as pending): 1 fail: patch 5: "
        "[selftest] virtio-net: selftest net:nl_netdev.py:napi_threaded_check failed at patch 5 "
        "(0123456789ab)")
    # a splat or a guest that did not finish (the boot check's errors) fails it too
    crash = _f("boot", "error", 0, message="virtio-net: test plan did not finish")
    assert _contest(ok + [crash], _GUEST)[0]["state"] == "fail"


def test_contest_is_unknown_when_no_selftest_ran():
    # nothing of the guest's ran (the checks not selected)
    r = _report([], [])
    r.coverage = {"contest": ["boot", "selftest"]}
    assert forecast(r)[0]["contest"].state == "unknown"
    # the guest booted, the plan passed, but no selftest case ran
    plan_only = [_f("boot", "info", 0, message="booted"),
                 _f("boot", "error", 0, {}, "virtio-net: test failed: napipatch's plan")]
    cells = _contest(plan_only, _GUEST)
    assert cells[0] == {"state": "unknown", "description": "no selftest or KUnit case ran here "
                        "(a guest with selftests: napipatch test boot)"}


def test_contest_skip_is_a_warning_and_a_failure_at_the_base_is_not_known():
    skip = _case("page_pool_check", "skip", on_base=None, console_log="c.log")
    ok = _case("empty_check", "ok", on_base=None, console_log="c.log")
    assert _contest(ok + skip, _GUEST)[0]["state"] == "warning"
    old = _case("lo_check", "not ok", on_base={"net:nl_netdev.py:lo_check"}, console_log="c.log")
    cell = _contest(ok + old, _GUEST)[0]
    assert cell["state"] == "unknown" and "already failing on base" in cell["description"]


def test_contest_flaky_case_is_a_warning_naming_the_retry():
    flaky = _case("napi_list_check", "ok", on_base=None, console_log="c.log",
                  flaky="failed on the first run: timeout, ok on the retry")
    ok = _case("empty_check", "ok", on_base=None, console_log="c.log")
    cell = _contest(ok + flaky, _GUEST)[0]
    assert cell["state"] == "warning" and "napi_list_check flaky" in cell["description"]
