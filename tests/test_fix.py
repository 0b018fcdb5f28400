"""`napipatch fix`: the mechanical findings fixed as fixup commits.

A repository fix could hurt is refused in one line, exit 2, with nothing
changed (no kernel needed). On the real 6.12 tree: v4 carried onto 6.12
(series/threaded-busy-poll-6.12, its review defects kept) made commits on a
branch; fix makes one `fixup!` commit per patch for the /* kdoc look-alike
(patch 1), the `threaded` net_cachelines row and the stale tools/ uapi
copy (patch 3); autosquash folds them without a conflict, and `check --tree`
on the folded branch no longer reports them and reports nothing new.
"""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, Cli, commit_files, edit, git, own_cache, small_repo

CARRY = ROOT / "series" / "threaded-busy-poll-6.12" / "v4"


def _state(repo: Path) -> tuple:
    """What a refused or dry run must leave as it was: the branch and where
    it points, the index, the files (tracked and untracked)."""
    files = sorted((str(p.relative_to(repo)), p.read_bytes()) for p in repo.rglob("*")
                   if p.is_file() and ".git" not in p.parts)
    head = git(repo, "rev-parse", "HEAD")
    ref = subprocess.run(["git", "-C", str(repo), "symbolic-ref", "-q", "HEAD"],
                         capture_output=True, text=True).stdout
    return ref, head, git(repo, "ls-files", "-s"), files


def _refused(cp, *needles):
    assert cp.returncode == 2, (cp.stdout, cp.stderr)
    lines = cp.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("napipatch: error: "), cp.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    assert cp.stdout == ""


@pytest.fixture
def three(tmp_path) -> Path:
    """A branch of three commits over a base commit, with an untracked file."""
    repo = small_repo(tmp_path / "repo")
    (repo / "a.c").write_text("int a;\n")
    git(repo, "add", "a.c")
    git(repo, "commit", "-qm", "base")
    for n in (1, 2, 3):
        (repo / "a.c").write_text((repo / "a.c").read_text() + f"int b{n};\n")
        git(repo, "commit", "-qam", f"net: change {n}")
    (repo / "notes.txt").write_text("mine\n")
    return repo


def test_a_dirty_work_tree_is_refused_and_left_alone(cli, three):
    (three / "a.c").write_text("int a; /* editing */\n")
    before = _state(three)
    _refused(cli("fix", "HEAD~3..HEAD", "--tree", three), "uncommitted changes", "a.c")
    assert _state(three) == before
    # an untracked file alone is no reason to refuse
    git(three, "checkout", "-q", "a.c")
    assert cli("fix", "HEAD~3..HEAD", "--tree", three, "--only", "subject").returncode == 0
    # a check that cannot run here (no MAINTAINERS): not everything checked, 2
    cp = cli("fix", "HEAD~3..HEAD", "--tree", three, "--only", "subject,cc-maintainers")
    assert cp.returncode == 2 and "NOT CHECKED: cc-maintainers (" in cp.stdout, cp.stdout


def test_a_detached_head_is_refused(cli, three):
    git(three, "checkout", "-q", "--detach", "HEAD")
    before = _state(three)
    _refused(cli("fix", "HEAD~3..HEAD", "--tree", three), "HEAD is detached")
    assert _state(three) == before


def test_a_merge_in_the_range_is_refused(cli, three):
    git(three, "checkout", "-q", "-b", "side", "HEAD~2")
    (three / "b.c").write_text("int c;\n")
    git(three, "add", "b.c")
    git(three, "commit", "-qm", "side")
    git(three, "checkout", "-q", "main")
    git(three, "merge", "-q", "--no-edit", "side")
    before = _state(three)
    _refused(cli("fix", "HEAD~4..HEAD", "--tree", three), "not a straight line", "is a merge")
    _refused(cli("fix", "HEAD~4..HEAD", "--tree", three, "--diff"), "is a merge")
    assert _state(three) == before


def test_not_a_range_is_refused(cli, three):
    _refused(cli("fix", "HEAD", "--tree", three), "not a range BASE..HEAD")
    _refused(cli("fix", "nosuch..HEAD", "--tree", three), "no commit 'nosuch'")


# ------------------------------------------------------------------ on the 6.12 tree
FIXED = {  # (check, patch, file, line) of the three findings the Done-when names
    ("kdoc", 1, "include/linux/netdevice.h", 560),
    ("cachelines", 3, "include/linux/netdevice.h", 2390),
    ("ynl", 3, "tools/include/uapi/linux/netdev.h", 77),
}


def _paths(patches: list[Path]) -> list[str]:
    got = {m for p in patches for m in re.findall(r"^diff --git a/(\S+) ", p.read_text(), re.M)}
    return sorted(got | {"Documentation/networking/net_cachelines/net_device.rst"})


@pytest.fixture(scope="module")
def carried(tmp_path_factory, kernel_tree, base_commit) -> tuple[Path, str]:
    """v4 carried onto 6.12 as the commits of branch v4c over the base, in
    a clone sharing the 6.12 tree's objects, checked out sparsely (only the
    files the series and its fixes touch: the rest of the kernel is never
    written out)."""
    repo = tmp_path_factory.mktemp("fix") / "linux"
    git(kernel_tree.parent, "clone", "-q", "--shared", "--no-checkout", str(kernel_tree),
        str(repo))
    git(repo, "config", "user.name", "Dev Eloper")
    git(repo, "config", "user.email", "dev@example.org")
    patches = sorted(CARRY.glob("000[1-9]-*.patch"))
    git(repo, "sparse-checkout", "set", "--no-cone", *(f"/{p}" for p in _paths(patches)))
    git(repo, "checkout", "-q", "-b", "v4c", base_commit)
    git(repo, "am", "-q", *map(str, patches))
    return repo, base_commit


@pytest.fixture(scope="module")
def in_repo(carried, tmp_path_factory, shared_base_cache) -> Cli:
    repo, _base = carried
    return Cli(repo, repo.parent / "series",
               own_cache(tmp_path_factory.mktemp("fixcache") / "cache", shared_base_cache))


def _findings(cli: Cli, base: str) -> list[dict]:
    cp = cli("check", f"{base}..HEAD", "--format", "json")
    assert cp.returncode in (0, 1), cp.stderr
    return json.loads(cp.stdout)["findings"]


@pytest.mark.tree
def test_fix_on_v4_carried_then_autosquash_leaves_no_finding_it_fixed(carried, in_repo):
    repo, base = carried
    before = _findings(in_repo, base)
    fixable = [(f["check"], f["patch"], f["file"], f["line"]) for f in before if f["fixable"]]
    # ynl's two findings on the tools/ copy (stale copy, not regenerated): one change
    assert sorted(fixable) == sorted([*FIXED, ("ynl", 3, "tools/include/uapi/linux/netdev.h", 77)])
    assert not any(f["fixable"] for f in before if f["check"] == "callsites")
    text = in_repo("check", f"{base}..HEAD").stdout.splitlines()
    assert ("include/linux/netdevice.h:560: warning: PATCH 1/4 [kdoc] [*] comment above "
            "napi_set_threaded() is shaped like kernel-doc but opens with /*, so kernel-doc "
            "never reads it") in text
    assert re.search(rf"; {len(fixable)} fixable \[\*\] \(napipatch fix\); ", text[-1]), text[-1]

    # --diff: what the commits would hold, and nothing changed
    state = _state(repo)
    dry = in_repo("fix", f"{base}..HEAD", "--diff")
    assert _state(repo) == state
    assert dry.returncode == 1, dry.stderr  # callsites' warning is left
    out = dry.stdout
    assert "fixup! Add support to set napi threaded for individual napi\n" in out
    assert "-/*\n+/**\n" in out
    assert "- * Return 0 on success and negative errno on failure.\n" \
           "+ * Return: 0 on success and negative errno on failure.\n" in out
    assert re.search(r"^-unsigned:1 +threaded +", out, re.M)
    assert re.search(r"^\+u8 +threaded +", out, re.M)
    assert "+++ b/tools/include/uapi/linux/netdev.h\n" in out
    assert "nothing changed" in out

    head = git(repo, "rev-parse", "HEAD")
    cp = in_repo("fix", f"{base}..HEAD")
    assert cp.returncode == 1, cp.stderr
    lines = cp.stdout.splitlines()
    assert ("include/linux/netdevice.h:560: fixed [kdoc] opened the comment with /** and wrote "
            "its return line as a Return: section (line 565)") in lines
    assert any(ln.startswith("include/linux/netdevice.h:2390: fixed [cachelines] wrote the "
                             "'threaded' row of ") for ln in lines), lines
    assert any(ln.startswith("tools/include/uapi/linux/netdev.h:77: fixed [ynl] ")
               for ln in lines), lines
    assert any(ln.startswith("drivers/net/wireless/mediatek/mt76/debugfs.c:37: not fixed: "
                             "warning: [callsites] ") and ln.endswith("(no fixer for it)")
               for ln in lines), lines
    assert f"fold them with: git rebase -i --autosquash {base[:12]}" in cp.stdout
    # one fixup per patch fixed, on the branch; the work tree moved with it
    subjects = git(repo, "log", "--format=%s", f"{head}..HEAD").splitlines()
    assert subjects == ["fixup! Extend napi threaded polling to allow kthread based busy polling",
                        "fixup! Add support to set napi threaded for individual napi"]
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert "/**\n * napi_set_threaded" in (repo / "include/linux/netdevice.h").read_text()

    env = dict(os.environ, GIT_EDITOR=":", LC_ALL="C")
    rb = subprocess.run(["git", "-C", str(repo), "-c", "sequence.editor=:", "rebase", "-i",
                         "--autosquash", base], capture_output=True, text=True, env=env)
    assert rb.returncode == 0, rb.stderr
    assert len(git(repo, "rev-list", f"{base}..HEAD").split()) == 4

    after = _findings(in_repo, base)
    left = {(f["check"], f["patch"], f["file"], f["line"]) for f in after}
    assert not FIXED & left
    loud = lambda fs: {(f["check"], f["patch"], f["severity"], f["message"])  # noqa: E731
                       for f in fs if f["severity"] != "info"}
    assert loud(after) <= loud(before), loud(after) - loud(before)


KDOC_GOOD_AND_BAD = """\
/*
 * dev_set_threaded - set the threaded mode of a device's NAPIs
 * @dev: the device
 * @threaded: whether its NAPIs poll in kthreads
 *
 * Returns 0 on success, a negative errno otherwise.
 */
int dev_set_threaded(struct net_device *dev, bool threaded);

/*
 * napi_fixture_bad - kernel-doc would warn on this one as /**
 * @nap: not the parameter's name
 */
void napi_fixture_bad(struct napi_struct *napi);

/**
 * napi_fixture_good - a real kernel-doc comment: nothing to fix
 * @napi: NAPI context
 */
void napi_fixture_good(struct napi_struct *napi);
"""


RCT_GOOD_AND_BAD = """\
static int napi_fixture_rct(struct napi_struct *napi)
{
	int n = 0;
	struct net_device *dev = napi->dev;
	unsigned long flags = 0;

	return n + dev->ifindex + flags;
}

static int napi_fixture_rct_reads(struct napi_struct *napi)
{
	int w = napi->weight;
	struct net_device *dev = napi->dev;
	int doubled = w * 2;

	return doubled + dev->ifindex;
}
"""


@pytest.mark.tree
def test_each_fixer_on_its_good_and_bad_cases(carried, in_repo):
    """kdoc: a look-alike with 'Returns x' fixed (proved by kernel-doc), one
    kernel-doc would warn on left with kernel-doc's words, a real one left
    alone; cachelines: a removed member's row deleted, a new member's row
    added after its neighbour's, in the table's alignment; rct: a block
    reordered, one whose initializer reads another local left; selftest-lists:
    a new program listed in its Makefile, its .gitignore line left (no file)."""
    repo, base = carried
    h = "include/linux/netdevice.h"
    rst = "Documentation/networking/net_cachelines/net_device.rst"
    one = commit_files(repo, base, {h: edit(repo, base, h, "int dev_set_threaded(struct "
                                            "net_device *dev, bool threaded);\n",
                                            KDOC_GOOD_AND_BAD)}, "net: document napi helpers")
    two = commit_files(repo, one, {h: edit(repo, one, h, "\tbool\t\t\tproto_down;\n"
                                           "\tbool\t\t\tthreaded;\n",
                                           "\tbool\t\t\tthreaded;\n\tu8\t\t\tnapi_fixture;\n")},
                       "net: drop proto_down, add napi_fixture")
    dev_c = "net/core/dev.c"
    prog = "tools/testing/selftests/net/napi_fixture_prog.c"
    three = commit_files(repo, two, {dev_c: git(repo, "cat-file", "blob", f"{two}:{dev_c}")
                                     + "\n" + RCT_GOOD_AND_BAD,
                                     prog: "int main(void)\n{\n\treturn 0;\n}\n"},
                         "net: napi fixture helpers")
    git(repo, "checkout", "-q", "-B", "fixtures", three)
    cp = in_repo("fix", f"{base}..HEAD")
    assert cp.returncode == 1, cp.stderr
    lines = cp.stdout.splitlines()
    assert "include/linux/netdevice.h:558: fixed [kdoc] opened the comment with /** and wrote " \
           "its return line as a Return: section (line 563)" in lines
    bad = [ln for ln in lines if ln.startswith("include/linux/netdevice.h:567: not fixed: "
                                              "warning: [kdoc] comment above napi_fixture_bad()")]
    assert len(bad) == 1 and "kernel-doc -Wall would warn on it as /**: " in bad[0], lines
    assert not any("napi_fixture_good" in ln for ln in lines)
    assert f"include/linux/netdevice.h:2389: fixed [cachelines] deleted the 'proto_down' row " \
           f"of {rst} (line 164)" in lines
    assert f"include/linux/netdevice.h:2390: fixed [cachelines] added a 'napi_fixture' row to " \
           f"{rst} after 'threaded'" in lines, lines
    assert any(re.fullmatch(r"net/core/dev\.c:\d+: fixed \[rct\] reordered the declarations "
                            r"longest line first", ln) for ln in lines), lines
    assert any(re.fullmatch(r"net/core/dev\.c:\d+: not fixed: warning: \[rct\] .*\(an "
                            r"initializer reads another local of the block: move that "
                            r"initialization into the body first\)", ln) for ln in lines), lines
    # selftest-lists: the program listed where the Makefile's format holds; 6.12 has
    # no net/.gitignore to list its binary in, which fix does not create
    mk = "tools/testing/selftests/net/Makefile"
    assert f"{prog}:1: fixed [selftest-lists] listed napi_fixture_prog in {mk} (line 92)" \
        in lines, lines
    assert f"{prog}:1: not fixed: error: [selftest-lists] napi_fixture_prog is not in " \
           "tools/testing/selftests/net/.gitignore (there is no " \
           "tools/testing/selftests/net/.gitignore to list it in)" in lines, lines
    assert git(repo, "show", f"HEAD:{mk}").splitlines()[91] == \
        "TEST_GEN_PROGS += napi_fixture_prog"
    assert "\tstruct net_device *dev = napi->dev;\n\tunsigned long flags = 0;\n\tint n = 0;\n" \
        in (repo / dev_c).read_text()
    assert git(repo, "log", "--format=%s", f"{three}..HEAD").splitlines() == [
        "fixup! net: napi fixture helpers",
        "fixup! net: drop proto_down, add napi_fixture", "fixup! net: document napi helpers"]
    # again, before folding: nothing more to commit; the fixups already hold it
    tip = git(repo, "rev-parse", "HEAD")
    again = in_repo("fix", f"{base}..HEAD")
    assert again.returncode == 1 and git(repo, "rev-parse", "HEAD") == tip
    assert "nothing to fix" in again.stdout
    assert "a later commit of the range fixes it already" in again.stdout
    table = (repo / rst).read_text().splitlines()
    k = next(i for i, ln in enumerate(table) if ln.split()[1:2] == ["threaded"])
    assert table[k + 1] == "u8" + " " * 34 + "napi_fixture"      # Name column at 36, no blanks
    assert not any(ln.split()[1:2] == ["proto_down"] for ln in table)
    rb = subprocess.run(["git", "-C", str(repo), "-c", "sequence.editor=:", "rebase", "-i",
                         "--autosquash", base], capture_output=True, text=True,
                        env=dict(os.environ, GIT_EDITOR=":"))
    assert rb.returncode == 0, rb.stderr
    after = in_repo("check", f"{base}..HEAD", "--only", "kdoc,cachelines,rct,selftest-lists",
                    "--format", "json")
    left = [(f["check"], f["message"]) for f in json.loads(after.stdout)["findings"]
            if f["severity"] != "info"]
    assert not any(c == "cachelines" or "dev_set_threaded" in m for c, m in left), left
    assert [m for c, m in left if c == "selftest-lists"] == [
        "napi_fixture_prog is not in tools/testing/selftests/net/.gitignore"]
    assert [m for c, m in left if c == "rct"] == [
        "local variables not in reverse xmas tree order: struct net_device *dev = napi->dev;"]
    assert ("kdoc", "comment above napi_fixture_bad() is shaped like kernel-doc but opens with "
            "/*, so kernel-doc never reads it") in left
    # the fixture's struct kernel-doc (proto_down, napi_fixture) is not fix's to write
    assert all("napi_fixture_bad" in m or "'net_device'" in m for c, m in left if c == "kdoc")


RCT_C = """\
int napi_fixture_small(int x)
{
	int n = x;
	unsigned long flags = 0;

	return n + flags;
}
"""


@pytest.fixture
def rct_branch(three) -> Path:
    """``three`` with a fourth commit adding locals out of reverse xmas tree
    order in net/ (rct fixes them with the tree: this repository)."""
    (three / "net").mkdir()
    (three / "net" / "small.c").write_text(RCT_C)
    git(three, "add", "net/small.c")
    git(three, "commit", "-qm", "net: add a small helper")
    return three


def test_a_fixup_moves_the_branch_and_the_files_and_autosquash_folds_it(cli, rct_branch):
    repo = rct_branch
    head = git(repo, "rev-parse", "HEAD")
    cp = cli("fix", "HEAD~4..HEAD", "--tree", repo, "--only", "rct")
    assert cp.returncode == 0, (cp.stdout, cp.stderr)
    assert "net/small.c:4: fixed [rct] reordered the declarations longest line first" \
        in cp.stdout.splitlines()
    assert git(repo, "log", "-1", "--format=%s%n%n%b") == (
        "fixup! net: add a small helper\n\nnapipatch fix:\n"
        "net/small.c:4: [rct] reordered the declarations longest line first")
    assert git(repo, "rev-parse", "HEAD~1") == head
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert "\tunsigned long flags = 0;\n\tint n = x;\n" in (repo / "net/small.c").read_text()
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert (repo / "notes.txt").read_text() == "mine\n"        # untracked: untouched
    rb = subprocess.run(["git", "-C", str(repo), "-c", "sequence.editor=:", "rebase", "-i",
                         "--autosquash", "HEAD~5"], capture_output=True, text=True)
    assert rb.returncode == 0, rb.stderr
    assert git(repo, "log", "-1", "--format=%s") == "net: add a small helper"
    assert cli("fix", "HEAD~4..HEAD", "--tree", repo, "--only", "rct").stdout.splitlines()[-2:] \
        == ["nothing to fix", "left: 0 error and warning findings not fixed"]


def test_a_fix_that_cannot_commit_leaves_head_where_it_was(cli, rct_branch, tmp_path):
    """No identity to commit as: git commit-tree fails; one line, exit 2,
    the branch, the index and the files as they were."""
    repo = rct_branch
    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")
    before = _state(repo)
    home = tmp_path / "home"
    home.mkdir()
    cp = cli("fix", "HEAD~4..HEAD", "--tree", repo, "--only", "rct",
             env={"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "EMAIL": "",
                  "GIT_AUTHOR_NAME": "", "GIT_COMMITTER_NAME": ""})
    _refused(cp, "git commit-tree")
    assert _state(repo) == before


def test_diff_changes_nothing_and_shows_the_commit(cli, rct_branch):
    (rct_branch / "a.c").write_text("int a; /* mine, uncommitted */\n")   # --diff writes nothing
    before = _state(rct_branch)
    cp = cli("fix", "HEAD~4..HEAD", "--tree", rct_branch, "--only", "rct", "--diff")
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.startswith("fixup! net: add a small helper\ndiff --git a/net/small.c "
                                "b/net/small.c\n--- a/net/small.c\n+++ b/net/small.c\n")
    assert "+\tunsigned long flags = 0;\n \tint n = x;\n-\tunsigned long flags = 0;\n" in cp.stdout
    assert "net/small.c:4: would fix [rct] " in cp.stdout
    assert _state(rct_branch) == before


def test_a_range_checked_again_is_answered_from_the_cache(cli, rct_branch):
    """fix runs the checks as check does and must find their results: the
    range's cover letter (format-patch's placeholder) is dated as its tip,
    not "now", so a second run has the same mails."""
    def cached(cp):
        data = json.loads(cp.stdout)
        return [c["id"] for c in data["checks"] if c["status"] in ("pass", "info", "warn", "fail")
                and not c["cached"]]
    first = cli("check", "HEAD~4..HEAD", "--tree", rct_branch, "--format", "json")
    assert cached(first)
    again = cli("check", "HEAD~4..HEAD", "--tree", rct_branch, "--format", "json")
    assert cached(again) == []


REVIEW = """From mboxrd@z Thu Jan  1 00:00:00 1970
From: Joe Reviewer <joe@example.org>
Date: Mon, 07 Dec 2026 10:00:00 +0000
Subject: Re: {subject}
Message-Id: <review-1@example.org>
In-Reply-To: {patch}
References: {cover} {patch}

> Body.

Reviewed-by: Joe Reviewer <joe@example.org>
"""


def test_a_review_tag_of_v1_is_carried_by_an_amend_commit_on_the_b4_prep_branch(cli, tmp_path):
    """v1 of a b4 prep series went out (b4 send -o) and got a Reviewed-by
    on patch 1, imported into the store; the branch is now v2 with the
    same diffs. `fix` (no range: the prep series, whose change-id finds v1)
    makes an `amend!` commit adding the tag, autosquash folds it into
    patch 1's message, and review-tags has nothing left to say."""
    import sys
    b4 = str(Path(sys.executable).parent / "b4")
    repo = small_repo(tmp_path / "repo")
    for name in ("a.c", "b.c"):
        (repo / name).write_text(f"int {name[0]};\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "b4cache"),
               NAPIPATCH_SERIES_DIR=str(cli.store))

    def b4run(*args):
        cp = subprocess.run([b4, *args], cwd=repo, capture_output=True, text=True, env=env)
        assert cp.returncode == 0, cp.stdout + cp.stderr
    b4run("prep", "-n", "demo")
    for name, subj in (("a.c", "net: a: add x"), ("b.c", "net: b: add y")):
        (repo / name).write_text((repo / name).read_text() + "int x;\n")
        git(repo, "commit", "-qam", f"{subj}\n\nBody.\n\nSigned-off-by: T <t@example.org>")
    b4run("send", "--no-sign", "-o", str(tmp_path / "v1"))
    mails = sorted((tmp_path / "v1").iterdir())
    ids = [re.search(r"(?mi)^Message-Id: (<[^>]+>)", m.read_text()).group(1) for m in mails]
    mbox = tmp_path / "v1.mbox"
    mbox.write_text("".join("From mboxrd@z Thu Jan  1 00:00:00 1970\n" + m.read_text() + "\n"
                            for m in mails)
                    + REVIEW.format(subject="[PATCH 1/2] net: a: add x", cover=ids[0],
                                    patch=ids[1]))
    cli("series", "import", mbox, "--name", "demo", check=0)
    b4run("prep", "--force-revision", "2")
    start = git(repo, "rev-parse", "HEAD~2")   # b4's cover letter commit
    inside = Cli(repo, cli.store, cli.cache)

    shown = inside("fix", "--only", "review-tags", "--diff")
    assert shown.returncode == 0, shown.stdout + shown.stderr   # all it finds it can fix
    assert "amend! net: a: add x\n--- a/COMMIT_MSG\n+++ b/COMMIT_MSG\n" in shown.stdout
    assert "+Reviewed-by: Joe Reviewer <joe@example.org>\n" in shown.stdout
    assert "PATCH 1/2: would fix [review-tags] adds Reviewed-by: Joe Reviewer " \
           "<joe@example.org>" in shown.stdout

    done = inside("fix", "--only", "review-tags")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PATCH 1/2: fixed [review-tags] adds Reviewed-by: Joe Reviewer <joe@example.org>" \
        in done.stdout
    assert f"1 fixup commit made for 1 finding; fold them with: git rebase -i --autosquash " \
           f"{start[:12]}" in done.stdout
    assert git(repo, "log", "-1", "--format=%s") == "amend! net: a: add x"
    assert git(repo, "diff", "HEAD~1", "HEAD") == ""   # only the message changes
    # not folded yet: asked again, fix says so instead of a second amend!
    again = inside("fix", "--only", "review-tags")
    assert "a later commit of the range fixes it already" in again.stdout, again.stdout
    assert git(repo, "log", "-1", "--format=%s") == "amend! net: a: add x"

    git(repo, "-c", "sequence.editor=:", "rebase", "-q", "-i", "--autosquash", start)
    assert git(repo, "log", "--format=%s", f"{start}..HEAD").splitlines() == [
        "net: b: add y", "net: a: add x"]
    assert git(repo, "log", "-1", "--format=%B", "HEAD~1").rstrip().endswith(
        "Signed-off-by: T <t@example.org>\nReviewed-by: Joe Reviewer <joe@example.org>")
    after = json.loads(inside("check", "--only", "review-tags", "--format", "json").stdout)
    assert [f for f in after["findings"] if f["check"] == "review-tags"] == []
