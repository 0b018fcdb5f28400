"""ynl-build, build-tools and dt-binding-check (NIPA's ynl, build_tools and
dt_binding_check) through the CLI on
the real 6.12 tree: the forecast they make known, what build-tools picks,
and a missing tool. The good and bad builds themselves are the fixtures'
(tests/test_checks_fixtures.py, marked build); the fixtures' mboxes are
reused here, so these runs share their kept results."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import IDENT, commit_files, edit, git

FIX = Path(__file__).parent / "fixtures" / "checks"
# the tools builds have worktrees of their own: the second build group (tests/conftest.py)
pytestmark = [pytest.mark.timeout(3600), pytest.mark.side_build]


def _report(cli, mbox: Path, tree: Path, only: str, build_dir: Path | None = None,
            env: dict | None = None):
    e = {**({"NAPIPATCH_BUILD_DIR": str(build_dir)} if build_dir else {}), **(env or {})}
    return cli("check", mbox, "--tree", tree, "--only", only, "--format", "json", env=e)


def _forecast(report: dict, context: str) -> list[str]:
    return [p["nipa"][context]["state"] for p in report["series"]["patches"]]


@pytest.mark.build
@pytest.mark.tree
def test_ynl_is_known_once_ynl_build_ran(cli, kernel_tree, build_dir):
    """The regeneration check alone leaves the ynl context unknown (it does
    not build tools/net/ynl); with ynl-build it is NIPA's state."""
    mbox = FIX / "ynl-build" / "good.mbox"
    alone = _report(cli, mbox, kernel_tree, "ynl")
    assert alone.returncode == 0, alone.stderr
    assert _forecast(json.loads(alone.stdout), "ynl") == ["unknown"]
    both = _report(cli, mbox, kernel_tree, "ynl,ynl-build", build_dir)
    assert both.returncode == 0, both.stderr
    assert _forecast(json.loads(both.stdout), "ynl") == ["success"]
    bad = _report(cli, FIX / "ynl-build" / "bad.mbox", kernel_tree, "ynl,ynl-build", build_dir)
    assert _forecast(json.loads(bad.stdout), "ynl") == ["fail"]


@pytest.mark.build
@pytest.mark.tree
def test_build_tools_forecast_fails_on_a_new_warning_and_an_untracked_program_only(
        cli, kernel_tree, build_dir):
    cp = _report(cli, FIX / "build-tools" / "bad.mbox", kernel_tree, "build-tools", build_dir)
    assert cp.returncode == 1, cp.stderr
    report = json.loads(cp.stdout)
    assert _forecast(report, "build_tools") == ["fail", "fail"]
    assert "[build-tools]" in report["series"]["patches"][1]["nipa"]["build_tools"]["description"]
    good = _report(cli, FIX / "build-tools" / "good.mbox", kernel_tree, "build-tools", build_dir)
    assert good.returncode == 0, good.stderr
    assert _forecast(json.loads(good.stdout), "build_tools") == ["success"]


@pytest.mark.build
@pytest.mark.tree
def test_fix_lists_a_leftover_of_the_selftest_build_in_its_gitignore(cli, kernel_tree,
                                                                    base_commit, build_dir):
    """build-tools' fix (napipatch fix --only build-tools runs the build):
    patch 1 gives af_unix a sorted .gitignore, patch 2 adds a program and
    forgets it there. check marks it fixable by `fix --only build-tools`;
    --diff shows the fixup of patch 2 with the name at its
    sorted place; that fixup folded into patch 2, the build leaves nothing
    untracked and build-tools passes."""
    d = "tools/testing/selftests/net/af_unix"
    one = commit_files(kernel_tree, base_commit, {
        f"{d}/.gitignore": "diag_uid\nmsg_oob\nscm_pidfd\nscm_rights\nunix_connect\n"},
        "selftests: af_unix: ignore the built programs\n")
    msg = "selftests: af_unix: add a program\n"
    two = commit_files(kernel_tree, one, {
        f"{d}/Makefile": edit(kernel_tree, one, f"{d}/Makefile", "msg_oob scm_pidfd",
                              "msg_oob napipatch_fixme scm_pidfd"),
        f"{d}/napipatch_fixme.c": "int main(void)\n{\n\treturn 0;\n}\n"}, msg)
    env = {"NAPIPATCH_BUILD_DIR": str(build_dir)}
    # check says it is fixable, and with what: plain `fix` runs no build
    shown = cli("check", f"{base_commit}..{two}", "--tree", kernel_tree,
                "--only", "build-tools", env=env, check=1)
    assert "[build-tools] [*]" in shown.stdout, shown.stdout
    assert "1 fixable [*] (napipatch fix --only build-tools);" in shown.stdout, shown.stdout
    cp = cli("fix", f"{base_commit}..{two}", "--tree", kernel_tree, "--diff",
             "--only", "build-tools", env=env)
    assert cp.returncode == 0, (cp.stdout[-3000:], cp.stderr[-3000:])
    diff = cp.stdout[cp.stdout.index("diff --git"):cp.stdout.index("\nPATCH ") + 1]
    assert cp.stdout.startswith(f"fixup! {msg}"), cp.stdout
    assert [ln for ln in diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")] \
        == ["+napipatch_fixme"], diff
    assert " msg_oob\n+napipatch_fixme\n scm_pidfd\n" in diff
    assert f"PATCH 2/2 {msg.strip()}:\n{d}/napipatch_fixme: would fix [build-tools] listed " \
           f"napipatch_fixme in {d}/.gitignore (line 3)" in cp.stdout
    # the fixup folded into patch 2 (what autosquash makes of the last patch)
    with tempfile.TemporaryDirectory() as td:
        idx = {"GIT_INDEX_FILE": str(Path(td) / "index")}
        git(kernel_tree, "read-tree", two, env=idx)
        git(kernel_tree, "apply", "--cached", "-", input=diff, env=idx)
        # a named committer: a new HOME has no git identity (the cold CI run)
        folded = git(kernel_tree, "commit-tree", git(kernel_tree, "write-tree", env=idx),
                     "-p", one, "-m", msg, env=IDENT)
    again = cli("check", f"{base_commit}..{folded}", "--tree", kernel_tree,
                "--only", "build-tools", "--format", "json", env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    report = json.loads(again.stdout)
    assert not [f for f in report["findings"] if f["severity"] != "info"], report["findings"]
    assert _forecast(report, "build_tools") == ["success", "success"]


@pytest.mark.tree
def test_build_tools_picks_what_a_uapi_header_reaches_and_names_nipas_skips(kernel_tree):
    """netdev.h is included by the net and bpf selftests: net is built, bpf
    is one of NIPA's SKIP_TARGETS."""
    from napipatch.jobs.tools.selftest_targets import pick

    got = pick(kernel_tree, "HEAD", ["include/uapi/linux/netdev.h",
                                     "tools/testing/selftests/net/af_unix/diag_uid.c",
                                     "tools/lib/bpf/btf.c"])
    assert got.targets[0] == "net/af_unix"       # touched directly: first
    assert "net" in got.targets
    assert "bpf" in got.skipped and "bpf" not in got.targets
    assert got.unseen == ["tools/lib/bpf/btf.c"]


@pytest.mark.tree
@pytest.mark.parametrize("check_id", ["ynl-build", "build-tools", "dt-binding-check"])
def test_a_missing_tool_is_one_line_naming_the_package(cli, kernel_tree, tmp_path, check_id):
    """Only git on PATH: no make, no gcc. Status error, exit 2, the context unknown."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(shutil.which("git"), bin_dir / "git")
    cp = _report(cli, FIX / check_id / "good.mbox", kernel_tree, check_id,
                 env={"PATH": str(bin_dir), "NAPIPATCH_BUILD_DIR": str(tmp_path / "b")})
    assert cp.returncode == 2, (cp.stdout[-2000:], cp.stderr[-2000:])
    err = [ln for ln in cp.stderr.splitlines() if ln.startswith("napipatch: error:")]
    assert len(err) == 1 and "not installed (apt-get install" in err[0] and " make" in err[0], \
        cp.stderr
    assert "Traceback" not in cp.stderr
    report = json.loads(cp.stdout)
    assert {c["id"]: c["status"] for c in report["checks"]} == {check_id: "error"}
    context = {"ynl-build": "ynl", "build-tools": "build_tools",
               "dt-binding-check": "dt_binding_check"}[check_id]
    assert set(_forecast(report, context)) == {"unknown"}


@pytest.mark.build
@pytest.mark.tree
def test_dt_binding_check_puts_an_invalid_binding_at_file_line_and_a_valid_one_is_silent(
        cli, kernel_tree, build_dir):
    """The bad binding: an example property its schema does not allow
    (dt-validate) and a yamllint error, each new at the binding's line; its
    one referrer (fsl,fman.yaml) is checked too. The valid change: no
    warning, and NIPA's dt_binding_check known (success). The fixtures'
    runs are kept (per commit): this reuses them."""
    bad = _report(cli, FIX / "dt-binding-check" / "bad.mbox", kernel_tree, "dt-binding-check",
                  build_dir)
    # new lines are warnings (exit 0, as build-w1's); NIPA's fail is the forecast's
    assert bad.returncode == 0, bad.stderr[-2000:]
    report = json.loads(bad.stdout)
    assert _forecast(report, "dt_binding_check") == ["fail"]
    path = "Documentation/devicetree/bindings/net/fsl,fman-muram.yaml"
    at = {(f["file"], f["line"]) for f in report["findings"]
          if f["check"] == "dt-binding-check" and f["severity"] != "info"}
    assert (path, 27) in at and (path, 40) in at, at    # maxItems:  1 ; fsl,bogus = <1>;
    infos = [f["message"] for f in report["findings"] if f["severity"] == "info"]
    assert any("net/fsl,fman.yaml ($ref fsl,fman-muram.yaml)" in m for m in infos), infos
    good = _report(cli, FIX / "dt-binding-check" / "good.mbox", kernel_tree,
                   "dt-binding-check", build_dir)
    assert good.returncode == 0, good.stderr[-2000:]
    report = json.loads(good.stdout)
    assert _forecast(report, "dt_binding_check") == ["success"]
    assert [f for f in report["findings"] if f["severity"] != "info"] == []


@pytest.mark.tree
def test_dt_binding_check_picks_the_referrers_nearest_first_and_bounded(kernel_tree):
    """fsl,fman-muram.yaml has one referrer (a relative $ref beside it);
    ethernet-controller.yaml has scores: four are checked (same directory
    first, then by name), and the rest are named."""
    from napipatch.jobs.tools.dtbinding import BINDINGS, MAX_REFERRERS, pick

    one = pick(kernel_tree, "HEAD", [BINDINGS + "net/fsl,fman-muram.yaml"])
    assert one.files == [BINDINGS + "net/fsl,fman-muram.yaml", BINDINGS + "net/fsl,fman.yaml"]
    assert one.dropped == []
    many = pick(kernel_tree, "HEAD", [BINDINGS + "net/ethernet-controller.yaml"])
    assert len(many.files) == 1 + MAX_REFERRERS and len(many.dropped) > 20
    assert all(f.startswith(BINDINGS + "net/") for f in many.files)
    assert many.files[1:] == sorted(many.files[1:]) and many.files[-1] < many.dropped[0]


@pytest.mark.tree
def test_dt_binding_check_without_dtschema_names_the_pip_packages(kernel_tree, tmp_path):
    """napipatch's interpreter in a venv without the dt extra (and without
    yamllint), make, gcc, flex and bison on PATH: status error, exit 2,
    one line naming the packages, NIPA's dt_binding_check unknown."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    shutil.copy(Path(sys.prefix) / "pyvenv.cfg", venv / "pyvenv.cfg")
    os.symlink(Path(sys.prefix) / "lib", venv / "lib")      # napipatch, not dtschema's programs
    os.symlink(sys.executable, venv / "bin" / "python")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "make", "gcc", "flex", "bison"):
        os.symlink(shutil.which(tool), bin_dir / tool)
    cp = subprocess.run([str(venv / "bin" / "python"), "-m", "napipatch", "check",
                         str(FIX / "dt-binding-check" / "good.mbox"), "--tree", str(kernel_tree),
                         "--only", "dt-binding-check", "--format", "json"],
                        capture_output=True, text=True, cwd=tmp_path,
                        env=dict(os.environ, PATH=str(bin_dir),
                                 NAPIPATCH_BUILD_DIR=str(tmp_path / "b"),
                                 NAPIPATCH_SERIES_DIR=str(tmp_path / "series"),
                                 XDG_CACHE_HOME=str(tmp_path / "cache")))
    assert cp.returncode == 2, (cp.stdout[-2000:], cp.stderr[-2000:])
    err = [ln for ln in cp.stderr.splitlines() if ln.startswith("napipatch: error:")]
    assert err == ["napipatch: error: dt-binding-check could not run: dt-doc-validate, "
                   "dt-mk-schema, dt-extract-example, dt-validate, yamllint not installed "
                   "(pip install dtschema yamllint)"], cp.stderr
    report = json.loads(cp.stdout)
    assert {c["id"]: c["status"] for c in report["checks"]} == {"dt-binding-check": "error"}
    assert set(_forecast(report, "dt_binding_check")) == {"unknown"}
