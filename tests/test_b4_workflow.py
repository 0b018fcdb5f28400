"""Where netdev developers work: format-patch -vN directories, standard
input, b4's per-patch check commands, the current repository."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import format_patch, git, small_repo
from test_bad_input import _gitconfig, lore_server  # noqa: F401 - a fixture


def _series_repo(path: Path, subjects=("net: a: set a", "net: b: set b")) -> tuple[Path, str]:
    """A repository with a base commit and one commit per subject; (repo, base)."""
    repo = small_repo(path)
    (repo / "a.c").write_text("int a;\n")
    (repo / "b.c").write_text("int b;\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    for i, subj in enumerate(subjects):
        f = repo / ("a.c" if i % 2 == 0 else "b.c")
        f.write_text(f.read_text() + f"int x{i};\n")
        git(repo, "commit", "-q", "-am", f"{subj}\n\nBody {i}.\n\nSigned-off-by: T <t@example.org>")
    return repo, base


def test_format_patch_v2_directory_with_other_files(cli, tmp_path):
    repo, base = _series_repo(tmp_path / "repo")
    out = format_patch(repo, f"{base}..HEAD", tmp_path / "outgoing", "-v2", "--cover-letter",
                       "--subject-prefix=PATCH net-next")
    names = sorted(p.name for p in out.iterdir())
    assert names[0] == "v2-0000-cover-letter.patch" and names[1].startswith("v2-0001-")
    (out / "notes.txt").write_text("to: netdev\n")
    (out / "v2-0000-cover-letter.patch.orig").write_text("junk\n")
    data = json.loads(cli("check", out, "--only", "subject", "--format", "json").stdout)
    assert data["series"]["version"] == 2
    assert [p["subject"] for p in data["series"]["patches"]] == [
        "[PATCH net-next v2 1/2] net: a: set a", "[PATCH net-next v2 2/2] net: b: set b"]
    cp = cli("series", "import", out, "--name", "ab", check=0)
    assert "ab/v2:" in cp.stdout and "(2 patches, cover letter)" in cp.stdout
    assert sorted(p.name for p in (cli.store / "ab" / "v2").iterdir())[1] == "0001-net-a-set-a.patch"


KDOC = "int a;\n/*\n * foo_bar() - do a thing\n * @x: the x\n */\nint foo_bar(int x);\n"
B4 = str(Path(sys.executable).parent / "b4")


def _kdoc_repo(path: Path, signoff: bool = False) -> Path:
    """A repository whose last commit adds a kernel-doc look-alike (a kdoc
    warning at a.c:2) with or without a Signed-off-by (a signoff error)."""
    repo = small_repo(path)
    (repo / "a.c").write_text("int a;\n")
    git(repo, "add", "a.c")
    git(repo, "commit", "-q", "-m", "base")
    (repo / "a.c").write_text(KDOC)
    msg = "net: a: add foo_bar\n\nBody.\n" + ("\nSigned-off-by: T <t@example.org>\n" if signoff else "")
    git(repo, "commit", "-q", "-am", msg)
    return repo


def _patch(repo: Path, *extra: str) -> str:
    return git(repo, "format-patch", "-1", "--stdout", "--subject-prefix=PATCH net-next", *extra) + "\n"


def test_stdin_terse_lines_for_b4(cli, tmp_path):
    repo = _kdoc_repo(tmp_path / "repo")
    cp = cli("check", "-", "--format", "terse", input=_patch(repo))
    assert cp.returncode == 1, cp.stderr
    assert cp.stdout.splitlines() == [
        "ERROR: [signoff] no Signed-off-by",
        "a.c:2: WARNING: [kdoc] comment above foo_bar() is shaped like kernel-doc but opens "
        "with /*, so kernel-doc never reads it"]
    assert cp.stderr == ""  # b4 counts any stderr line as a failure


def test_stdin_clean_patch_prints_nothing(cli, tmp_path):
    repo = small_repo(tmp_path / "repo")
    (repo / "a.c").write_text("int a;\n")
    git(repo, "add", "a.c")
    git(repo, "commit", "-q", "-m", "base")
    (repo / "a.c").write_text("int a = 1;\n")
    git(repo, "commit", "-q", "-am", "net: a: initialise a\n\nSo it is 1.\n\n"
        "Signed-off-by: T <t@example.org>")
    cp = cli("check", "-", "--format", "terse", input=_patch(repo))
    assert (cp.returncode, cp.stdout, cp.stderr) == (0, "", "")


def test_stdin_commit_of_this_repo_gets_tree_checks_at_its_parent(cli, tmp_path):
    """From the repository (as b4 runs it, from the top): the tree is this
    repository at the patch's parent, and series checks do not run. The
    same mail from elsewhere is diff-only. b4 drops the From <sha> line, so
    both forms are tried."""
    repo = _kdoc_repo(tmp_path / "repo", signoff=True)
    parent = git(repo, "rev-parse", "HEAD~1")
    inside = cli.__class__(repo, cli.store, cli.cache)
    for text in (_patch(repo), _patch(repo).split("\n", 1)[1]):
        data = json.loads(inside("check", "-", "--format", "json", input=text).stdout)
        assert (data["tree"], data["base"]) == (str(repo), parent)
        ids = {c["id"]: c["status"] for c in data["checks"]}
        assert ids["callsites"] == "pass" and "series-format" not in ids and "base-commit" not in ids
    data = json.loads(cli("check", "-", "--format", "json", input=_patch(repo)).stdout)
    assert data["tree"] is None
    assert {c["id"]: c["status"] for c in data["checks"]}["callsites"] == "skipped"


def test_stdin_mail_naming_a_commit_the_repo_lacks_is_diff_only(cli, tmp_path):
    """A mail from lore ("From 0000...") or from another tree, piped in
    inside a repository: its commit is not here, so the checks are diff-only
    (a root commit has no parent to check at, so it is diff-only too)."""
    repo = _kdoc_repo(tmp_path / "repo", signoff=True)
    inside = cli.__class__(repo, cli.store, cli.cache)
    text = _patch(repo).split("\n", 1)[1]
    for sha in ("0" * 40, git(repo, "rev-list", "--max-parents=0", "HEAD")):
        cp = inside("check", "-", "--format", "json", input=f"From {sha} Mon Sep 17 00:00:00 2001\n"
                    + text.replace("net: a: add foo_bar", "net: a: add foo_bar elsewhere"))
        assert cp.returncode in (0, 1), cp.stderr
        data = json.loads(cp.stdout)
        assert data["tree"] is None and data["findings"], data


def test_stdin_bad_input_one_line(cli):
    cp = cli("check", "-", input="")
    assert cp.returncode == 2 and cp.stderr == "napipatch: error: stdin: empty file\n"


def test_no_target_checks_the_b4_prep_series_then_upstream(cli, tmp_path):
    repo, base = _series_repo(tmp_path / "repo")
    inside = cli.__class__(repo, cli.store, cli.cache)
    cp = inside("check")
    assert cp.returncode == 2
    assert "no TARGET, the branch is no b4 prep branch and has no commits over an upstream: " \
           "pass a revision range (BASE..HEAD)" in cp.stderr
    git(repo, "branch", "--set-upstream-to=main", "main")  # itself: nothing over it
    git(repo, "branch", "up", base)
    git(repo, "branch", "--set-upstream-to=up", "main")
    data = json.loads(inside("check", "--format", "json").stdout)
    assert [p["subject"] for p in data["series"]["patches"]] == [
        "[PATCH 1/2] net: a: set a", "[PATCH 2/2] net: b: set b"]
    assert (data["tree"], data["base"]) == (str(repo), base)
    # b4 prep on a fresh branch: only its commits, on its base.
    env = {"XDG_CACHE_HOME": str(tmp_path / "b4cache")}
    subprocess.run([B4, "prep", "-n", "demo"], cwd=repo, check=True, capture_output=True, env=env)
    (repo / "a.c").write_text(KDOC)
    git(repo, "commit", "-q", "-am", "net: a: add foo_bar\n\nBody.\n\nSigned-off-by: T <t@example.org>")
    data = json.loads(inside("check", "--format", "json").stdout)
    assert [p["subject"] for p in data["series"]["patches"]] == ["[PATCH] net: a: add foo_bar"]
    assert data["base"] == git(repo, "rev-parse", "main")


def test_range_and_branch_default_to_this_repository(cli, tmp_path):
    repo, base = _series_repo(tmp_path / "repo")
    inside = cli.__class__(repo, cli.store, cli.cache)
    data = json.loads(inside("check", "HEAD~1..HEAD", "--format", "json").stdout)
    assert data["tree"] == str(repo) and len(data["series"]["patches"]) == 1
    git(repo, "branch", "up", base)
    git(repo, "branch", "--set-upstream-to=up", "main")
    data = json.loads(inside("check", "main", "--format", "json").stdout)
    assert data["tree"] == str(repo) and len(data["series"]["patches"]) == 2


def test_hook_install_b4_runs_in_b4_prep_check_and_uninstall_restores(cli, tmp_path):
    repo = small_repo(tmp_path / "repo")
    (repo / "a.c").write_text("int a;\n")
    git(repo, "add", "a.c")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "config", "--add", "b4.am-perpatch-check-cmd", "echo one")
    git(repo, "config", "--add", "b4.am-perpatch-check-cmd", "echo 'two  spaces'")
    before = (repo / ".git" / "config").read_text()
    # the toy repository has no MAINTAINERS to judge the Cc list by
    cp = cli("hook", "install", "--b4", "--repo", repo, "--skip", "cc-maintainers", check=0)
    assert "b4.prep-perpatch-check-cmd" in cp.stdout
    am = git(repo, "config", "--get-all", "b4.am-perpatch-check-cmd").splitlines()
    assert am[:2] == ["echo one", "echo 'two  spaces'"] and am[2].endswith(
        " -m napipatch check - --format terse --skip cc-maintainers")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "b4cache"))
    run = lambda *a: subprocess.run([B4, *a], cwd=repo, capture_output=True, text=True, env=env)  # noqa: E731
    assert run("prep", "-n", "demo").returncode == 0
    (repo / "a.c").write_text(KDOC)
    git(repo, "commit", "-q", "-am", "net: a: add foo_bar\n\nBody.\n")
    cp = run("prep", "--check")
    out = cp.stdout + cp.stderr
    assert "python: ERROR: [signoff] no Signed-off-by" in out, out
    assert "python: a.c:2: WARNING: [kdoc] comment above foo_bar()" in out
    assert "Error: 1" in out
    cp = cli("hook", "uninstall", "--b4", "--repo", repo, check=0)
    assert "b4.am-perpatch-check-cmd restored (2 value(s))" in cp.stdout
    after = (repo / ".git" / "config").read_text()
    assert git(repo, "config", "--get-all", "b4.am-perpatch-check-cmd").splitlines() == \
        ["echo one", "echo 'two  spaces'"]
    assert "perpatch" not in after.split("[b4]", 1)[0]
    assert subprocess.run(["git", "-C", str(repo), "config", "b4.prep-perpatch-check-cmd"]
                          ).returncode == 1
    assert before.count("am-perpatch-check-cmd") == after.count("am-perpatch-check-cmd")


def _b4_prep_repo(cli, tmp_path: Path):
    """A repository with napipatch as b4's check commands (the toy tree has
    no MAINTAINERS to judge Cc by) and a b4 prep branch; (repo, run b4, env)."""
    repo = small_repo(tmp_path / "repo")
    (repo / "a.c").write_text("int a;\n")
    git(repo, "add", "a.c")
    git(repo, "commit", "-q", "-m", "base")
    cli("hook", "install", "--b4", "--repo", repo, "--skip", "cc-maintainers", check=0)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "b4cache"))

    def run(*args):
        return subprocess.run([B4, *args], cwd=repo, capture_output=True, text=True, env=env)
    assert run("prep", "-n", "demo").returncode == 0
    return repo, run, env


def test_b4_prep_check_never_passes_a_patch_whose_checks_gave_no_result(cli, tmp_path):
    """b4 counts a line with ERROR: as a failure: a check that timed out is one."""
    repo, run, env = _b4_prep_repo(cli, tmp_path)
    (repo / "a.c").write_text("int a = 1;\n")
    git(repo, "commit", "-q", "-am", "net: a: initialise a\n\nSo it is 1.\n\n"
        "Signed-off-by: T <t@example.org>")
    cp = run("prep", "--check")
    assert "Error: 0" in cp.stdout + cp.stderr, cp.stdout + cp.stderr
    git(repo, "config", "napipatch.check-timeout", "0.000001")
    env["XDG_CACHE_HOME"] = str(tmp_path / "b4cache2")   # b4 caches a commit's check results
    cp = run("prep", "--check")
    out = cp.stdout + cp.stderr
    assert "python: ERROR: [signoff] timed out: ran past 1e-06 s; this patch is not fully " \
        "checked" in out, out
    # one error line a check that timed out (however many checks there are)
    errors = re.search(r"Error: (\d+)", out)
    assert errors and int(errors.group(1)) >= 1, out


def test_b4_prep_check_judges_the_posting_rules_with_the_store(cli, tmp_path):
    """The series checks on b4 prep's last patch see what the store knows:
    here the list's "net-next is CLOSED", imported with ``series import``,
    fails a net-next series in ``b4 prep --check`` (b4 send's pre-flight)."""
    from test_history import ANN_CLOSED
    ann = tmp_path / "closed.mbox"
    ann.write_text(ANN_CLOSED)
    cli("series", "import", ann, check=0)
    repo, run, env = _b4_prep_repo(cli, tmp_path)
    env.update(NAPIPATCH_SERIES_DIR=str(cli.store), GIT_CONFIG_GLOBAL=str(tmp_path / "none"))
    assert run("prep", "--set-prefixes", "net-next").returncode == 0
    (repo / "a.c").write_text("int a = 1;\n")
    git(repo, "commit", "-q", "-am", "net: a: initialise a\n\nSo it is 1.\n\n"
        "Signed-off-by: T <t@example.org>")
    out = run("prep", "--check")
    text = out.stdout + out.stderr
    assert "[net-next-closed] net-next is closed (the list's announcement \"[ANN] net-next " \
        "is CLOSED\"" in text, text


MID = "20250321021517.0-skhawaja@reconstructed.invalid"


@pytest.mark.parametrize("suffix", ["/", "/T/", ""])
def test_import_by_lore_url(cli, lore_server, tmp_path, suffix):
    """A message URL names its archive: napipatch.lore-url is not used."""
    env = {"GIT_CONFIG_GLOBAL": str(_gitconfig(tmp_path, "http://127.0.0.1:9/nothing"))}
    cp = cli("series", "import", f"{lore_server}/{MID}{suffix}", "--name", "tbp", env=env, check=0)
    assert "(4 patches, cover letter)" in cp.stdout
    assert f"lore {lore_server} <{MID}>" in (cli.store / "tbp" / "series.toml").read_text()


def test_configured_b4_midmask_is_respected(cli, lore_server, tmp_path):
    cfg = _gitconfig(tmp_path, "http://127.0.0.1:9/nothing")
    cfg.write_text(cfg.read_text() + f"\tmidmask = {lore_server}/%s\n")
    cp = cli("series", "import", f"<{MID}>", "--name", "tbp", env={"GIT_CONFIG_GLOBAL": str(cfg)},
             check=0)
    assert "(4 patches, cover letter)" in cp.stdout


def test_b4_error_is_shown(cli, lore_server, tmp_path):
    env = {"GIT_CONFIG_GLOBAL": str(_gitconfig(tmp_path, lore_server))}
    cp = cli("series", "import", f"{lore_server}/nobody@nowhere.invalid/T/", env=env)
    assert cp.returncode == 2
    [line] = cp.stderr.splitlines()
    assert line.startswith(f"napipatch: error: <nobody@nowhere.invalid>: no such message at "
                           f"{lore_server} (b4: ")


def test_cli_help_completion_and_empty_store(cli, tmp_path):
    top = cli("--help", check=0).stdout
    assert "--install-completion" in top and "--show-completion" in top
    for cmd in (["send"], ["check"], ["series", "import"], ["hook", "install"]):
        text = cli(*cmd, "--help", check=0).stdout
        assert not re.search(r"<(bool|str|int|path|list\[str\])>", text), text
    send = cli("send", "--help", check=0).stdout
    assert re.search(r"--to +TEXT +Another To address", send)
    assert re.search(r"--dry-run +git send-email", send)
    assert "[TARGET]" in cli("check", "--help", check=0).stdout
    cp = cli("series", "list", check=0)
    assert cp.stdout == "" and cp.stderr == \
        f"napipatch: no series store at {cli.store.resolve()} (napipatch.series-dir, or --store DIR)\n"


# b4 review (a TUI) runs its per-patch check commands through these two
# functions of b4 0.16 (b4/review_tui/_common.py _fetch_and_check); the test
# calls them as it does, on the patch as a mail, in the repository.
B4_REVIEW = """
import argparse, email, json, sys
import b4
from b4.review import checks
b4.setup_config(argparse.Namespace(config={}))
perpatch, _series = checks.load_check_cmds()
msg = email.message_from_bytes(sys.stdin.buffer.read(), policy=b4.emlpolicy)
print(json.dumps({"cmds": perpatch, "results": checks.run_perpatch_checks(
    [("m1", msg)], perpatch, b4.git_get_toplevel())["m1"]}))
"""


def _b4_review(repo: Path, patch: str, tmp_path: Path) -> dict:
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"),
               XDG_DATA_HOME=str(tmp_path / "data"))
    cp = subprocess.run([sys.executable, "-c", B4_REVIEW], cwd=repo, input=patch.encode(),
                        capture_output=True, env=env, timeout=300)
    assert cp.returncode == 0, cp.stderr
    return json.loads(cp.stdout)


def _repo_with_checkpatch(path: Path) -> Path:
    """A repository whose tree has an executable scripts/checkpatch.pl (that
    finds nothing), so b4 review would run its built-in checkpatch."""
    repo = small_repo(path)
    (repo / "scripts").mkdir()
    (repo / "scripts" / "checkpatch.pl").write_text("#!/usr/bin/perl\nexit 0;\n")
    (repo / "scripts" / "checkpatch.pl").chmod(0o755)
    (repo / "a.c").write_text("int a;\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    (repo / "a.c").write_text(KDOC)
    git(repo, "commit", "-q", "-am", "net: a: add foo_bar\n\nBody.\n")  # no Signed-off-by
    return repo


def test_b4_review_shows_napipatch_and_its_nipa_forecast_beside_checkpatch(cli, tmp_path):
    repo = _repo_with_checkpatch(tmp_path / "repo")
    cli("hook", "install", "--b4", "--repo", repo, check=0)
    got = _b4_review(repo, _patch(repo), tmp_path)
    assert got["cmds"][0] == "_builtin_checkpatch"
    assert got["cmds"][1].endswith(" -m napipatch check - --format b4-review")
    by = {r["tool"]: r for r in got["results"]}
    assert list(by) == ["checkpatch", "napipatch", "napipatch-nipa"]
    assert by["checkpatch"]["status"] == "pass"
    assert (by["napipatch"]["status"], by["napipatch"]["summary"]) == ("fail", "1 error, 1 warning")
    details = json.loads(by["napipatch"]["details"])
    assert {"status": "fail", "context": "signoff", "description": "no Signed-off-by"} in details
    assert {"status": "warn", "context": "kdoc", "description": "a.c:2: comment above foo_bar() "
            "is shaped like kernel-doc but opens with /*, so kernel-doc never reads it"} in details
    nipa = {d["context"]: d for d in json.loads(by["napipatch-nipa"]["details"])}
    assert nipa["checkpatch"]["state"] == "success"   # the tree's checkpatch.pl found nothing
    assert nipa["build_clang"]["state"] == "unknown"  # and what was not run is not green
    # NIPA's verify_signedoff fails the missing sign-off; an unsigned mail is signed's warning
    assert (nipa["verify_signedoff"]["state"], nipa["signed"]["state"]) == ("fail", "warning")
    assert by["napipatch-nipa"]["status"] == "fail"
    cp = cli("hook", "uninstall", "--b4", "--repo", repo, check=0)
    assert "b4.review-perpatch-check-cmd restored (0 value(s))" in cp.stdout
    assert subprocess.run(["git", "-C", str(repo), "config", "b4.review-perpatch-check-cmd"]
                          ).returncode == 1


def test_b4_review_values_already_there_are_kept_and_put_back(cli, tmp_path):
    """Including those of a repository where an older napipatch saved only
    the prep and am keys before b4 review existed."""
    repo = _repo_with_checkpatch(tmp_path / "repo")
    git(repo, "config", "--add", "b4.review-perpatch-check-cmd", "echo []")
    cli("hook", "install", "--b4", "--repo", repo, check=0)
    assert git(repo, "config", "--get-all", "b4.review-perpatch-check-cmd").splitlines()[0] == \
        "echo []"
    cli("hook", "uninstall", "--b4", "--repo", repo, check=0)
    assert git(repo, "config", "--get-all", "b4.review-perpatch-check-cmd") == "echo []"
    saved = repo / ".git" / "napipatch-b4-saved.json"
    saved.write_text(json.dumps({"b4.prep-perpatch-check-cmd": [],
                                 "b4.am-perpatch-check-cmd": []}))
    cli("hook", "install", "--b4", "--repo", repo, check=0)
    cli("hook", "uninstall", "--b4", "--repo", repo, check=0)
    assert git(repo, "config", "--get-all", "b4.review-perpatch-check-cmd") == "echo []"


def test_b4_review_of_a_cover_letter_has_nothing_to_report(cli, tmp_path):
    repo, base = _series_repo(tmp_path / "repo")
    d = format_patch(repo, f"{base}..HEAD", tmp_path / "out", "--cover-letter")
    cover = next(d.glob("0000-*")).read_text()
    cp = cli("check", "-", "--format", "b4-review", input=cover)
    assert (cp.returncode, cp.stdout, cp.stderr) == (0, "[]\n", "")


def test_b4_prep_check_reports_the_series_checks_on_the_last_patch(cli, tmp_path):
    """b4 prep --check (and so b4 send's pre-flight) has no series command:
    the series checks run with the last patch of the prep series, on the
    series as b4 mails it, and appear once, in that patch's row."""
    repo, run, env = _b4_prep_repo(cli, tmp_path)
    for name in ("b", "c"):
        (repo / "a.c").write_text((repo / "a.c").read_text() + f"int {name};\n")
        git(repo, "commit", "-q", "-am", f"net: a: add {name}\n\nWhy {name}.\n\n"
            "Signed-off-by: T <t@example.org>")
    cp = run("prep", "--check")
    out = cp.stdout + cp.stderr
    # b4's default subject prefix has no tree tag: a series-format warning,
    # which no per-patch run could give
    line = "python: WARNING: [series-format] no tree tag (net or net-next) in the subject"
    assert out.count(line) == 1, out
    assert out.index("net: a: add c") < out.index(line), out
    assert out.index("net: a: add b") < out.index("net: a: add c")
    # the series checks ran on the real cover letter, b4's, not a placeholder
    assert "placeholder" not in out


# b4 review runs the series command on the cover letter, with the review
# branch's tracking data in B4_TRACKING_FILE (b4/review_tui/_common.py
# _fetch_and_check). The review branch is made by b4's own code, as its TUI
# makes it on checkout: git am of the series (git_fetch_am_into_repo), then
# create_review_branch.
B4_REVIEW_SERIES = """
import argparse, email, io, json, mailbox, os, sys, tempfile
import b4, b4.review
from b4.review import checks, _review
b4.setup_config(argparse.Namespace(config={}))
topdir = b4.git_get_toplevel()
read = lambda f: email.message_from_binary_file(f, policy=b4.emlpolicy)
raw = list(mailbox.mbox(sys.argv[1], factory=read))
lmbx = b4.LoreMailbox()
for msg in raw:
    lmbx.add_message(msg)
lser = lmbx.get_series(sloppytrailers=False)
am = lser.get_am_ready(noaddtrailers=True, addmysob=False, addlink=False, cherrypick=None,
                       copyccs=False, allowbadchars=False, showchecks=False)
ifh = io.BytesIO()
b4.save_git_am_mbox(am, ifh)
b4.git_fetch_am_into_repo(topdir, ambytes=ifh.getvalue(), at_base=sys.argv[2])
branch = "b4/review/demo-change"
_review.create_review_branch(topdir, branch, sys.argv[2], lser, "", "https://lore.kernel.org/r/%s")
env = {}
if sys.argv[3] == "tracked":
    _cover, tracking = _review.load_tracking(topdir, branch)
    fd, env["B4_TRACKING_FILE"] = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as fp:
        json.dump(tracking, fp)
_perpatch, series = checks.load_check_cmds()
print(json.dumps({"cmds": series, "results": checks.run_series_checks(
    (lser.patches[0].msgid, raw[0]), series, topdir, extra_env=env)}))
"""


def _review_branch(repo: Path, mbox: Path, base: str, tmp_path: Path, tracked: str) -> dict:
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"),
               XDG_DATA_HOME=str(tmp_path / "data"))
    cp = subprocess.run([sys.executable, "-c", B4_REVIEW_SERIES, str(mbox), base, tracked],
                        cwd=repo, capture_output=True, env=env, timeout=300)
    assert cp.returncode == 0, cp.stderr
    return json.loads(cp.stdout)


def test_b4_review_series_command_checks_the_review_branch(cli, tmp_path):
    repo, base = _series_repo(tmp_path / "repo")
    d = format_patch(repo, f"{base}..HEAD", tmp_path / "out", "--thread", "--cover-letter", "-v2",
                     "--subject-prefix=PATCH net-next")
    mbox = tmp_path / "series.mbox"
    mbox.write_bytes(b"".join(b"From nobody Mon Sep 17 00:00:00 2001\n" +
                              f.read_bytes().split(b"\n", 1)[1] + b"\n"
                              for f in sorted(d.glob("*.patch"))))
    git(repo, "checkout", "-q", "-b", "reviewer", base)
    cli("hook", "install", "--b4", "--repo", repo, check=0)
    got = _review_branch(repo, mbox, base, tmp_path, "tracked")
    assert got["cmds"] == [f"{sys.executable} -m napipatch check --b4-series --format b4-review"]
    by = {r["tool"]: r for r in got["results"]}
    assert list(by) == ["napipatch", "napipatch-nipa"]
    details = {(d["context"], d["description"]) for d in json.loads(by["napipatch"]["details"])}
    # the posted cover letter is judged (format-patch's placeholder, no changelog)...
    assert ("series-format", "the cover letter still has format-patch's placeholder text") \
        in details
    assert ("series-format", "v2 cover letter has no changelog") in details
    # ...with its subject prefix: the series carries net-next
    assert not any("no tree tag" in d for _c, d in details)
    assert by["napipatch"]["status"] in ("warn", "fail")
    nipa = {d["context"]: d["state"] for d in json.loads(by["napipatch-nipa"]["details"])}
    # NIPA's series_format has no rule for a placeholder or a changelog; the
    # tree tag came through, so NIPA need not guess the tree
    assert nipa["series_format"] == "success" and nipa["tree_selection"] == "success"
    assert nipa["build_clang"] == "unknown"   # not run here is never green
    # Without the tracking data (a series not on a review branch) nothing is
    # checked, and b4 says so instead of a pass.
    git(repo, "checkout", "-q", "reviewer")
    git(repo, "branch", "-D", "b4/review/demo-change")
    got = _review_branch(repo, mbox, base, tmp_path, "untracked")
    (only,) = got["results"]
    assert (only["tool"], only["status"]) == ("napipatch", "fail")
    assert only["summary"] == "B4_TRACKING_FILE: not set: b4 review sets it for a series on a " \
        "review branch (b4/review/<change-id>); nothing to check"


def test_hook_install_b4_global_writes_the_users_gitconfig_and_uninstall_restores(cli, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    git(tmp_path, "config", "--global", "b4.review-series-check-cmd", "echo []", env=env)
    before = (home / ".gitconfig").read_text()
    cp = cli("hook", "install", "--b4", "--global", env=env, check=0)
    assert cp.stdout.splitlines()[-1] == "~/.gitconfig: b4.review-series-check-cmd = echo [] ; " \
        f"{sys.executable} -m napipatch check --b4-series --format b4-review"
    cfg = (home / ".gitconfig").read_text()
    assert "prep-perpatch-check-cmd" in cfg and "checkpatch" not in cfg
    assert not (tmp_path / ".b4-config").exists()
    cp = cli("hook", "uninstall", "--b4", "--global", env=env, check=0)
    assert "~/.gitconfig: b4.review-series-check-cmd restored (1 value(s))" in cp.stdout
    assert git(tmp_path, "config", "--global", "--get-all", "b4.review-series-check-cmd",
               env=env) == "echo []"
    assert "perpatch" not in (home / ".gitconfig").read_text()
    assert before.strip() in (home / ".gitconfig").read_text()
    cp = cli("hook", "install", "--global", env=env, check=2)
    assert cp.stderr == "napipatch: error: --global: only b4's check commands go to " \
        "~/.gitconfig (--b4)\n"


def test_bad_b4_tracking_data_is_one_failed_entry_never_a_hang(cli, tmp_path):
    repo, _base = _series_repo(tmp_path / "repo")
    inside = cli.__class__(repo, cli.store, cli.cache)
    fifo = tmp_path / "tracking.json"
    os.mkfifo(fifo)
    for path, why in ((fifo, "is a FIFO (named pipe), not a regular file"),
                      (tmp_path / "none.json", "No such file or directory")):
        cp = inside("check", "--b4-series", "--format", "b4-review", input="",
                    env={"B4_TRACKING_FILE": str(path)}, check=2)
        (entry,) = json.loads(cp.stdout)
        assert (entry["tool"], entry["status"]) == ("napipatch", "fail")
        assert entry["summary"].startswith(f"{path}: ") and why in entry["summary"], entry
    (tmp_path / "bad.json").write_text('{"series": {}}')
    cp = inside("check", "--b4-series", "--format", "b4-review", input="",
                env={"B4_TRACKING_FILE": str(tmp_path / "bad.json")}, check=2)
    assert "b4's tracking data has no series 'first-patch-commit'" in cp.stdout


def test_send_hook_ignores_a_fifo_among_the_format_patch_files(cli, tmp_path):
    """The first message reads the series' files beside it: a FIFO named
    *.patch there is passed over, not opened (that would hang the send)."""
    repo, base = _series_repo(tmp_path / "repo")
    d = format_patch(repo, f"{base}..HEAD", tmp_path / "out", "--cover-letter")
    os.mkfifo(d / "0003-not-a-patch.patch")
    env = dict(os.environ, XDG_CACHE_HOME=str(cli.cache), NAPIPATCH_SERIES_DIR=str(cli.store),
               NAPIPATCH_RUN_ID="fifo-test")
    cp = subprocess.run([sys.executable, "-m", "napipatch", "hook", "run", "--skip",
                         "cc-maintainers", "sendemail-validate", "--",
                         str(next(d.glob("0000-*")))], cwd=repo, capture_output=True,
                        text=True, env=env, timeout=300)
    assert cp.returncode == 0, cp.stderr
    assert "Traceback" not in cp.stderr


def test_send_hook_diff_only_message_is_checked_without_the_tree_not_blocked(cli, tmp_path):
    """A message that is no commit of the repository and names no base it
    has: the diff-only checks run, the hook says so once, and the checks
    that need the tree (which the user did not name) are skipped, not
    errors that would block the send."""
    repo, _base = _series_repo(tmp_path / "repo")
    other = small_repo(tmp_path / "other")
    (other / "z.c").write_text("int z;\n")
    git(other, "add", "z.c")
    git(other, "commit", "-q", "-m", "another base")
    (other / "z.c").write_text("int z = 1;\n")
    git(other, "commit", "-q", "-am", "net: z: set z\n\nSo it is 1.\n\n"
        "Signed-off-by: T <t@example.org>")
    d = format_patch(other, "HEAD~1..HEAD", tmp_path / "out")
    env = dict(os.environ, XDG_CACHE_HOME=str(cli.cache), NAPIPATCH_SERIES_DIR=str(cli.store),
               NAPIPATCH_RUN_ID="diff-only-test")
    cp = subprocess.run([sys.executable, "-m", "napipatch", "hook", "run", "sendemail-validate",
                         "--", str(next(d.glob("0001-*")))], cwd=repo, capture_output=True,
                        text=True, env=env, timeout=300)
    assert cp.returncode == 0, cp.stderr
    assert "napipatch: note: sendemail-validate: diff-only checks: " in cp.stderr
    assert "could not run" not in cp.stderr and "not fully checked" not in cp.stderr.lower()
