"""The series store on real inputs: the v4 lore thread and the 6.12 tree."""

import re
import tomllib

import pytest

from conftest import LORE, commit_files, edit, git

V4 = LORE / "threaded-busy-poll-v4.mbox"
V3 = LORE / "threaded-busy-poll-v3-cover.mbox"


def test_import_v4_gives_cover_and_four_patches(cli):
    cp = cli("series", "import", V4, "--name", "tbp", check=0)
    assert "tbp/v4: Add support to do threaded napi busy poll (4 patches, cover letter)" in cp.stdout
    files = sorted(p.name for p in (cli.store / "tbp" / "v4").iterdir())
    assert files == [
        "0000-cover-letter.patch",
        "0001-Add-support-to-set-napi-threaded-for-individual-napi.patch",
        "0002-net-Create-separate-gro_flush-helper-function.patch",
        "0003-Extend-napi-threaded-polling-to-allow-kthread-based.patch",
        "0004-selftests-Add-napi-threaded-busy-poll-test-in-busy_p.patch",
        "replies.mbox",  # the 17 replies, whole: review-followup reads them
    ]
    p3 = (cli.store / "tbp" / "v4" / files[3]).read_text()
    assert "Subject: [PATCH net-next v4 3/4] Extend napi threaded polling to allow kthread based busy polling\n" in p3
    assert "From: Samiullah Khawaja <skhawaja@google.com>\n" in p3
    rec = tomllib.loads((cli.store / "tbp" / "series.toml").read_text())
    v4 = rec["versions"]["v4"]
    assert rec["tree"] == "net-next"
    assert v4["cover-message-id"] == "20250321021517.0-skhawaja@reconstructed.invalid"
    assert len(v4["message-ids"]) == 4
    assert "base-commit" not in v4
    assert v4["changelog"].startswith("v4:\n - Using AF_XDP based benchmark")
    show = cli("series", "show", "tbp@v4", check=0).stdout
    assert "3/4 Extend napi threaded polling to allow kthread based busy polling" in show
    assert "Signed-off-by: Samiullah Khawaja <skhawaja@google.com>" in show
    assert "drivers/net/ethernet/renesas/ravb_main.c  +1 -1" in show
    # What git am sees is what was posted: same diff, byte for byte.
    assert p3.split("\ndiff --git", 1)[1][:2000] in V4.read_text()


def test_review_trailers_from_replies_are_collected(cli, tmp_path):
    reply = (
        "From mboxrd@z Thu Jan  1 00:00:00 1970\n"
        "From: Joe Damato <jdamato@fastly.com>\n"
        "Subject: Re: [PATCH net-next v4 2/4] net: Create separate gro_flush helper function\n"
        "Date: Fri, 21 Mar 2025 18:00:00 +0000\n"
        "Message-ID: <review-2@example.org>\n"
        "In-Reply-To: <20250321021517.2-skhawaja@reconstructed.invalid>\n"
        "References: <20250321021517.0-skhawaja@reconstructed.invalid> <20250321021517.2-skhawaja@reconstructed.invalid>\n"
        "\nLooks good.\n\nReviewed-by: Joe Damato <jdamato@fastly.com>\n\n")
    mbox = tmp_path / "with-review.mbox"
    mbox.write_text(V4.read_text() + reply)
    cli("series", "import", mbox, "--name", "tbp", check=0)
    rec = tomllib.loads((cli.store / "tbp" / "series.toml").read_text())
    assert rec["versions"]["v4"]["trailers"] == {"2": ["Reviewed-by: Joe Damato <jdamato@fastly.com>"]}
    show = cli("series", "show", "tbp", check=0).stdout
    assert "Reviewed-by: Joe Damato <jdamato@fastly.com>  (from a reply)" in show


def test_versions_sit_beside_each_other(cli):
    cli("series", "import", V3, "--name", "tbp", "--cover-only", check=0)
    cli("series", "import", V4, "--name", "tbp", check=0)
    out = cli("series", "list", check=0).stdout
    assert re.search(r"^tbp\s+net-next\s+v3 v4$", out, re.M), out
    again = cli("series", "import", V4, "--name", "tbp")
    assert again.returncode == 2
    assert again.stderr.strip() == "napipatch: error: tbp@v4: already in the store (use --force to replace)"


def _own_series(repo, base, n=2, tweak=""):
    """n commits on the 6.12 tree touching net/core/dev.c comments."""
    c = base
    for i in range(1, n + 1):
        text = edit(repo, c, "net/core/dev.c", "static DEFINE_SPINLOCK(napi_hash_lock);",
                    f"static DEFINE_SPINLOCK(napi_hash_lock);\n/* napipatch test {i}{tweak} */", 1)
        c = commit_files(repo, c, {"net/core/dev.c": text},
                         f"net: core: add test comment {i}\n\nComment {i}{tweak}.\n")
    return c


@pytest.mark.tree
def test_export_import_apply_range_diff_round_trip(cli, kernel_tree, base_commit, tmp_path):
    tip1 = _own_series(kernel_tree, base_commit)
    cli("series", "export", f"{base_commit}..{tip1}", "--name", "own", "--repo", kernel_tree,
        "--base", base_commit, "--title", "net: core: test comments",
        "--blurb", _write(tmp_path / "blurb", "Two comments for a test.\n"), check=0)
    v1 = cli.store / "own" / "v1"
    cover = (v1 / "0000-cover-letter.patch").read_text()
    assert "Subject: [PATCH net-next 0/2] net: core: test comments" in cover
    assert "Two comments for a test." in cover
    assert f"base-commit: {base_commit}" in cover
    p1 = (v1 / "0001-net-core-add-test-comment-1.patch").read_text()
    assert "Subject: [PATCH net-next 1/2] net: core: add test comment 1" in p1

    # v2: a changed second patch; its cover carries the changelog.
    tip2 = _own_series(kernel_tree, base_commit, tweak=" (v2)")
    cli("series", "export", f"{base_commit}..{tip2}", "--name", "own", "--repo", kernel_tree,
        "--base", base_commit, "--changes", "reworded both comments", check=0)
    cover2 = (cli.store / "own" / "v2" / "0000-cover-letter.patch").read_text()
    assert "Subject: [PATCH net-next v2 0/2] net: core: test comments" in cover2
    assert "Two comments for a test." in cover2
    assert "v2:\n - reworded both comments\n" in cover2

    # Import the exported files back under another name: same patches.
    cli("series", "import", v1, "--name", "back", check=0)
    for f in v1.glob("000[12]-*.patch"):
        again = (cli.store / "back" / "v1" / f.name).read_text()
        assert _strip_dates(again).split("\n---\n", 1)[1] == _strip_dates(f.read_text()).split("\n---\n", 1)[1]

    # Apply in a fresh worktree: the user's checkout is not involved.
    head_before = git(kernel_tree, "rev-parse", "HEAD")
    wt = tmp_path / "wt"
    out = cli("series", "apply", "back@v1", "--repo", kernel_tree, "--worktree", wt, check=0).stdout
    assert f"2 patches applied on {base_commit[:12]}" in out
    assert "/* napipatch test 2 */" in (wt / "net/core/dev.c").read_text()
    assert git(wt, "log", "-1", "--format=%s") == "net: core: add test comment 2"
    assert git(kernel_tree, "rev-parse", "HEAD") == head_before
    git(kernel_tree, "worktree", "remove", "--force", str(wt))

    # Range-diff of the two versions names the changed patches.
    rd = cli("series", "diff", "own", "v1", "v2", "--repo", kernel_tree, check=0).stdout
    assert re.search(r"1:  \w+ ! 1:  \w+ net: core: add test comment 1", rd), rd
    assert "+    Comment 1 (v2)." in rd

    # export -> import -> export is stable except dates (and the commit
    # ids in the envelope, which depend on them).
    applied_tip = _apply_tip(cli, kernel_tree, "back@v1", tmp_path)
    cli("series", "export", f"{base_commit}..{applied_tip}", "--name", "again", "--repo",
        kernel_tree, "--base", base_commit, "--title", "net: core: test comments",
        "--blurb", tmp_path / "blurb", check=0)
    for f in sorted(v1.iterdir()):
        a = _strip_dates((cli.store / "again" / "v1" / f.name).read_text())
        assert a == _strip_dates(f.read_text()), f.name


def _apply_tip(cli, repo, spec, tmp_path):
    wt = tmp_path / "wt2"
    cli("series", "apply", spec, "--repo", repo, "--worktree", wt, check=0)
    tip = git(wt, "rev-parse", "HEAD")
    git(repo, "worktree", "remove", "--force", str(wt))
    return tip


def _write(p, text):
    p.write_text(text)
    return p


def _strip_dates(text):
    text = re.sub(r"^From [0-9a-f]{40} ", "From X ", text, flags=re.M)
    return re.sub(r"^Date: .*$", "Date: X", text, flags=re.M)


@pytest.mark.tree
def test_apply_failure_names_patch_file_and_hunk(cli, kernel_tree, tmp_path):
    cli("series", "import", V4, "--name", "tbp", check=0)
    head_before = git(kernel_tree, "rev-parse", "HEAD")
    wt = tmp_path / "wt"
    cp = cli("series", "apply", "tbp@v4", "--repo", kernel_tree, "--worktree", wt)
    assert cp.returncode == 1
    assert cp.stderr.strip() == ("napipatch: error: tbp@v4: patch 1 does not apply: "
                                 "Documentation/netlink/specs/netdev.yaml hunk #1 (at line 280): "
                                 "context does not match the tree")
    assert not wt.exists()
    assert str(wt) not in git(kernel_tree, "worktree", "list")
    assert git(kernel_tree, "rev-parse", "HEAD") == head_before
    assert git(kernel_tree, "status", "--porcelain", "--untracked-files=no") == ""
