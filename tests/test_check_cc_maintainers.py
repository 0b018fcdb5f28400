"""cc-maintainers on the real 6.12 tree: get_maintainer.pl's addresses against To/Cc.

Each series turns exactly NIPA's cc_maintainers red (or keeps it green) the
way its tests/patch/cc_maintainers does: a blamed signer missing fails,
maintainers missing warn when more than one wanted address is there and
fail otherwise. net/core/gro_cells.c is NETWORKING [GENERAL]'s: davem
(never required), edumazet, kuba, pabeni, horms and netdev@vger.
"""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import check_findings, check_json, commit_files, edit, format_patch, git, \
    nipa_states
from napipatch.errors import NapipatchError
from napipatch.kernel import getmaintainer as G
from napipatch.mails.addresses import address_of

pytestmark = pytest.mark.tree

PATH = "net/core/gro_cells.c"
GENERAL = ["edumazet@google.com", "kuba@kernel.org", "pabeni@redhat.com", "horms@kernel.org",
           "netdev@vger.kernel.org"]


def _commit(tree, parent, message, n=1):
    text = edit(tree, parent, PATH, "#include <net/gro_cells.h>",
                "#include <net/gro_cells.h>\n" + "/* a comment */\n" * n)
    return commit_files(tree, parent, {PATH: text}, message)


def _mails(tree, base, tip, tmp_path, name, *args):
    return format_patch(tree, f"{base}..{tip}", tmp_path / name,
                        "--subject-prefix=PATCH net-next", *args)


def _to(*addrs):
    return [f"--to={a}" for a in addrs]


def test_unaddressed_mails_get_one_info(cli, kernel_tree, base_commit, tmp_path):
    c1 = _commit(kernel_tree, base_commit, "net: gro_cells: add a comment\n\nWhy.\n")
    c2 = _commit(kernel_tree, c1, "net: gro_cells: add another\n\nWhy.\n", n=2)
    d = _mails(kernel_tree, base_commit, c2, tmp_path, "p")
    data = check_json(cli, d, "cc-maintainers", "--tree", kernel_tree)
    got = data["findings"]
    assert [(f["severity"], f["patch"]) for f in got] == [("info", 0)], got
    # whom it will be sent to is not known yet, so neither is NIPA's answer
    assert nipa_states(data, "cc_maintainers") == ["unknown", "unknown"]
    assert got[0]["message"].startswith("not addressed yet (no To or Cc on any mail)")
    lines = got[0]["details"].split("\n")
    assert [ln.split(":")[0] for ln in lines] == ["patch 1", "patch 2"]
    assert all(set(GENERAL) <= set(ln.split(": ")[1].split()) for ln in lines)
    assert "linux-kernel@vger.kernel.org" not in got[0]["details"]


def test_all_maintainers_on_cc_is_clean(cli, kernel_tree, base_commit, tmp_path):
    c = _commit(kernel_tree, base_commit, "net: gro_cells: add a comment\n\nWhy.\n")
    d = _mails(kernel_tree, base_commit, c, tmp_path, "p", *_to(*GENERAL))
    assert check_findings(cli, d, "cc-maintainers", "--tree", kernel_tree) == []


def test_one_maintainer_missing_is_a_warning(cli, kernel_tree, base_commit, tmp_path):
    c = _commit(kernel_tree, base_commit, "net: gro_cells: add a comment\n\nWhy.\n")
    d = _mails(kernel_tree, base_commit, c, tmp_path, "p", *_to(*GENERAL[1:]))
    got = check_findings(cli, d, "cc-maintainers", "--tree", kernel_tree)
    assert [(f["severity"], f["message"]) for f in got] == \
        [("warning", "1 maintainer(s) not CCed: edumazet@google.com")]


def test_only_the_list_is_a_fail(cli, kernel_tree, base_commit, tmp_path):
    c = _commit(kernel_tree, base_commit, "net: gro_cells: add a comment\n\nWhy.\n")
    d = _mails(kernel_tree, base_commit, c, tmp_path, "p", *_to("netdev@vger.kernel.org"))
    got = check_findings(cli, d, "cc-maintainers", "--tree", kernel_tree)
    assert [f["severity"] for f in got] == ["error"]
    assert got[0]["message"].startswith("4 maintainer(s) not CCed: ")


def test_an_imported_posted_series_is_judged_by_its_headers(cli, kernel_tree, base_commit,
                                                            tmp_path):
    """Mails that went to the list only (as the bot saw them), imported into
    the store as the bot's reproduce commands do: the same fail the bot
    gives, not what send would have done."""
    c = _commit(kernel_tree, base_commit, "net: gro_cells: add a comment\n\nWhy.\n")
    d = _mails(kernel_tree, base_commit, c, tmp_path, "p", *_to("netdev@vger.kernel.org"))
    cli("series", "import", d, "--name", "posted", check=0)
    got = check_findings(cli, "posted", "cc-maintainers", "--tree", kernel_tree)
    assert [f["severity"] for f in got] == ["error"], got
    assert got[0]["message"].startswith("4 maintainer(s) not CCed: ")


def test_a_mailmap_alias_counts(cli, kernel_tree, base_commit, tmp_path):
    # NIPA accepts an address a .mailmap line names beside the wanted one.
    base = commit_files(kernel_tree, base_commit, {".mailmap": (
        "Jakub Kicinski <kuba@kernel.org> <jakub.kicinski@netronome.com>\n")},
        "mailmap: add an alias\n\nFor a test.\n")
    c = _commit(kernel_tree, base, "net: gro_cells: add a comment\n\nWhy.\n")
    others = [a for a in GENERAL if a != "kuba@kernel.org"]
    d = _mails(kernel_tree, base, c, tmp_path, "p", *_to(*others, "jakub.kicinski@netronome.com"))
    assert check_findings(cli, d, "cc-maintainers", "--tree", kernel_tree) == []
    d = _mails(kernel_tree, base, c, tmp_path, "q", *_to(*others, "jakub@example.org"))
    got = check_findings(cli, d, "cc-maintainers", "--tree", kernel_tree)
    assert [f["message"] for f in got] == ["1 maintainer(s) not CCed: kuba@kernel.org"]


def test_blamed_signer_missing_fails(cli, kernel_tree, base_commit, tmp_path):
    culprit = _commit(kernel_tree, base_commit,
                      "net: gro_cells: add a bug\n\nOops.\n\n"
                      "Signed-off-by: Bug Author <bug.author@example.org>\n"
                      "Reviewed-by: Bug Reviewer <bug.reviewer@example.org>\n")
    subject = git(kernel_tree, "log", "-1", "--format=%s", culprit)
    fix = _commit(kernel_tree, culprit, f"net: gro_cells: fix the bug\n\nFix it.\n\n"
                  f"Fixes: {culprit[:12]} (\"{subject}\")\n", n=2)
    d = _mails(kernel_tree, culprit, fix, tmp_path, "p", *_to(*GENERAL))
    got = check_findings(cli, d, "cc-maintainers", "--tree", kernel_tree)
    assert [(f["severity"], f["message"]) for f in got] == \
        [("error", "2 signer(s) of the commit Fixes: names not CCed: "
                   "bug.author@example.org bug.reviewer@example.org")]
    ok = _mails(kernel_tree, culprit, fix, tmp_path, "ok",
                *_to(*GENERAL, "bug.author@example.org"), "--cc=bug.reviewer@example.org")
    assert check_findings(cli, ok, "cc-maintainers", "--tree", kernel_tree) == []


def test_stored_series_goes_where_send_would_send_it(cli, kernel_tree, base_commit, tmp_path):
    culprit = _commit(kernel_tree, base_commit, "net: gro_cells: add a bug\n\nOops.\n\n"
                      "Signed-off-by: Bug Author <bug.author@example.org>\n")
    subject = git(kernel_tree, "log", "-1", "--format=%s", culprit)
    fix = _commit(kernel_tree, culprit, f"net: gro_cells: fix the bug\n\nFix it.\n\n"
                  f"Fixes: {culprit[:12]} (\"{subject}\")\n", n=2)
    cli("series", "export", f"{culprit}..{fix}", "--name", "gro", "--repo", kernel_tree,
        "--base", culprit, check=0)
    assert check_findings(cli, "gro", "cc-maintainers", "--tree", kernel_tree) == []
    # send puts the blamed signer on Cc: the same function answers both.
    wanted = G.get_maintainers(kernel_tree, culprit, cli.cache,
                               sorted((cli.store / "gro" / "v1").glob("0001-*.patch")))
    to, cc = G.recipients(["rev@example.org"], [], wanted)
    assert to[0] == "rev@example.org"
    assert "bug.author@example.org" in {address_of(a) for a in cc}
    assert {address_of(a) for a in to} >= set(GENERAL[:4])


def test_trimmed_maintainers_gives_what_the_whole_file_gives(kernel_tree, base_commit):
    """The copy get_maintainer.pl reads holds only the sections that can
    take part; its answer is the one the whole file gives in the tree."""
    v5 = Path(__file__).resolve().parent.parent / "series" / "threaded-busy-poll" / "v5"
    patches = sorted(v5.glob("000[1-5]-*.patch"))
    script = kernel_tree / "scripts" / "get_maintainer.pl"
    runner = G.GetMaintainer(kernel_tree, _worktree(kernel_tree), "worktree")
    got = runner.wanted([p.read_text() for p in patches])
    for p, mine in zip(patches, got):
        whole = subprocess.run(["perl", str(script), "--nogit", "--nogit-fallback",
                                "--nogit-chief-penguins", str(p)], cwd=kernel_tree,
                               capture_output=True, text=True, check=True).stdout
        theirs = {(w.address, w.is_list) for ln in whole.splitlines() if (w := G.wanted_line(ln))}
        assert {(w.address, w.is_list) for w in mine} == theirs, p.name


def _worktree(tree):
    """read(base, name) for the files of ``tree``'s checkout."""
    return lambda _base, n: (tree / n).read_bytes() if (tree / n).is_file() else None


def test_the_deadline_comes_from_config(cli, kernel_tree, base_commit, tmp_path):
    """get_maintainer.pl past napipatch.get-maintainer-timeout is stopped: the
    runner says so, and the check reports it could not run (exit 2)."""
    v5 = Path(__file__).resolve().parent.parent / "series" / "threaded-busy-poll" / "v5"
    runner = G.GetMaintainer(kernel_tree, _worktree(kernel_tree), "worktree", timeout=1e-6)
    with pytest.raises(NapipatchError, match=r"still running after 1e-06 s; stopped"):
        runner.wanted([next(v5.glob("0001-*.patch")).read_text()])
    c = _commit(kernel_tree, base_commit, "net: gro_cells: add a comment\n\nWhy.\n")
    d = _mails(kernel_tree, base_commit, c, tmp_path, "p", *_to(*GENERAL))
    cp = cli("check", d, "--tree", kernel_tree, "--only", "cc-maintainers", "--format", "json",
             env={"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "napipatch.get-maintainer-timeout",
                  "GIT_CONFIG_VALUE_0": "0.000001"})
    assert cp.returncode == 2, cp.stderr
    got = {c["id"]: c for c in json.loads(cp.stdout)["checks"]}["cc-maintainers"]
    assert got["status"] == "error" and "still running after 1e-06 s" in got["reason"], got
