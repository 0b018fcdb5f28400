"""`napipatch check` end to end: the v4 acceptance, trees, formats, cache."""

import json

import pytest

from conftest import ROOT, commit_files, edit, format_patch

STORE = ROOT / "series"


def _json(cp):
    assert cp.returncode in (0, 1), cp.stderr
    return json.loads(cp.stdout)


def _by_check(data, check):
    return [(f["patch"], f["severity"], f["file"], f["line"]) for f in data["findings"]
            if f["check"] == check]


def test_v4_without_tree(cli):
    cp = cli("--store", STORE, "check", "series/threaded-busy-poll@v4", "--format", "json")
    assert cp.returncode == 0  # warnings only
    data = _json(cp)
    assert sorted({p for p, *_ in _by_check(data, "subject")}) == [1, 3]
    assert _by_check(data, "base-commit") == [(0, "warning", None, None)]
    assert _by_check(data, "split") == [(3, "info", None, None)]
    skipped = {c["id"]: c["reason"] for c in data["checks"] if c["status"] == "skipped"}
    assert skipped["checkpatch"] == "needs --tree"
    assert data["tree"] is None and data["series"]["version"] == 4


def test_v4_text_report_reads_like_checkpatch(cli):
    cp = cli("--store", STORE, "check", "threaded-busy-poll@v4")
    lines = cp.stdout.splitlines()
    assert "PATCH 1/4: warning: [subject] no subsystem prefix in 'Add support to set napi threaded for individual napi'" in lines
    assert "SERIES: warning: [base-commit] no base-commit: in the cover letter" in lines
    # Findings in a file lead with FILE:LINE: (gcc, checkpatch --showfile) for editors.
    assert ("include/linux/netdevice.h:594: warning: PATCH 1/4 [kdoc] comment above "
            "napi_set_threaded() is shaped like kernel-doc but opens with /*, so kernel-doc "
            "never reads it") in lines
    assert not any(ln.startswith("PATCH 3/4 include/") for ln in lines)
    assert any(ln.startswith("skipped: checkpatch (needs --tree)") for ln in lines)
    assert lines[-1].startswith("total: 0 errors, ")
    md = cli("--store", STORE, "check", "threaded-busy-poll@v4", "--format", "markdown").stdout
    assert md.startswith("### napipatch: threaded-busy-poll v4: Add support to do threaded napi busy poll")
    assert "| subject | warn |" in md
    assert "- **warning** `subject` PATCH 3/4:" in md


@pytest.mark.tree
def test_v4_on_the_612_tree_does_not_apply_but_diff_checks_run(cli, kernel_tree):
    cp = cli("--store", STORE, "check", "threaded-busy-poll@v4", "--tree", kernel_tree,
             "--format", "json")
    assert cp.returncode == 1
    data = _json(cp)
    assert _by_check(data, "apply") == [(1, "error", "Documentation/netlink/specs/netdev.yaml", 280)]
    apply = [f for f in data["findings"] if f["check"] == "apply"][0]
    assert "hunk #1" in apply["message"]
    assert sorted({p for p, *_ in _by_check(data, "subject")}) == [1, 3]
    assert _by_check(data, "split") == [(3, "info", None, None)]
    status = {c["id"]: c["status"] for c in data["checks"]}
    assert status["apply"] == "fail"
    assert status["checkpatch"] in ("warn", "pass", "info")  # needs only the scripts
    # NIPA would post apply (fail) on every patch and run nothing else.
    for p in data["series"]["patches"]:
        assert p["nipa"]["apply"]["state"] == "fail"
        assert p["nipa"]["checkpatch"]["state"] == "unknown"


def _clean_series(repo, base, tmp_path):
    c = base
    for i, (old, new) in enumerate([
            ("static DEFINE_SPINLOCK(napi_hash_lock);",
             "static DEFINE_SPINLOCK(napi_hash_lock); /* napi_hash and ids */"),
            ("static DEFINE_SPINLOCK(ptype_lock);",
             "static DEFINE_SPINLOCK(ptype_lock); /* ptype lists */")], 1):
        text = edit(repo, c, "net/core/dev.c", old, new)
        c = commit_files(repo, c, {"net/core/dev.c": text},
                         f"net: core: document lock {i}\n\nSay what lock {i} protects.\n")
    d = format_patch(repo, f"{base}..{c}", tmp_path / "clean", "--cover-letter",
                     "--subject-prefix=PATCH net-next")
    cover = next(d.glob("0000-*"))
    cover.write_text(cover.read_text().replace("*** SUBJECT HERE ***", "net: core: document two locks")
                     .replace("*** BLURB HERE ***", "Two comments."))
    return d, c


@pytest.mark.tree
def test_clean_series_from_the_612_tree(cli, kernel_tree, base_commit, tmp_path):
    d, _tip = _clean_series(kernel_tree, base_commit, tmp_path)
    cp = cli("check", d, "--tree", kernel_tree, "--format", "json")
    data = _json(cp)
    assert cp.returncode == 0
    assert [f for f in data["findings"] if f["severity"] != "info"] == []
    assert data["base"] == base_commit
    assert data["base_why"].startswith("base-commit ")
    # every check ran but the opt-in ai-review, which waits for the user's agent
    assert {c["id"]: c.get("reason") for c in data["checks"] if c["status"] == "skipped"} \
        == {"ai-review": "napipatch.ai-review-command is not set"}
    assert all(c["status"] in ("pass", "info") for c in data["checks"]
               if c["id"] != "ai-review"), data["checks"]

    # The same series again: every result comes from the cache.
    again = _json(cli("check", d, "--tree", kernel_tree, "--format", "json"))
    assert again["findings"] == data["findings"]
    assert all(c["cached"] for c in again["checks"]
               if c["id"] not in ("apply", "ai-review")), again["checks"]


@pytest.mark.tree
def test_revision_range_in_tree(cli, kernel_tree, base_commit, tmp_path):
    _d, tip = _clean_series(kernel_tree, base_commit, tmp_path)
    cp = cli("check", f"{base_commit}..{tip}", "--tree", kernel_tree, "--format", "json",
             "--only", "apply,signoff,base-commit,checkpatch,series-format")
    data = _json(cp)
    assert cp.returncode == 0
    assert [c["id"] for c in data["checks"]] == ["apply", "base-commit", "checkpatch",
                                                 "series-format", "signoff"]
    # The range's cover letter is format-patch's placeholder: not judged;
    # its subjects have no tree tag yet, which NIPA warns about.
    assert [(f["check"], f["message"]) for f in data["findings"]] == \
        [("series-format", "no tree tag (net or net-next) in the subject")]
    assert len(data["series"]["patches"]) == 2


@pytest.mark.tree
def test_v5_flagship_is_clean_on_the_612_tree(cli, kernel_tree, base_commit):
    """The flagship: v5 applies to 6.12 at its base-commit with no error or warning."""
    cp = cli("--store", STORE, "check", "threaded-busy-poll@v5", "--tree", kernel_tree,
             "--format", "json")
    data = _json(cp)
    assert cp.returncode == 0
    assert data["base"] == base_commit and data["base_why"].startswith("base-commit")
    assert [f for f in data["findings"] if f["severity"] != "info"] == []
    status = {c["id"]: c["status"] for c in data["checks"]}
    assert status["apply"] == "pass"
    assert [i for i, st in status.items() if st == "skipped"] == ["ai-review"]  # no agent set
    # What v4's reviewers asked for, now visible as facts of v5:
    subjects = [p["subject"] for p in data["series"]["patches"]]
    assert all("] net: " in s or "] netdev-genl: " in s or "] selftests: net: " in s
               or "] net: core: " in s for s in subjects), subjects
    callsites = [f for f in data["findings"] if f["check"] == "callsites"]
    assert "6 call sites in the tree, 5 updated by this patch" in callsites[0]["message"]
    # What patchwork will show: nothing red, yellow only for the signature
    # (the stored mails are unsigned, as git send-email sends them), and
    # what napipatch cannot see (builds, tools/net/ynl) is not called green.
    for p in data["series"]["patches"]:
        states = {name: c["state"] for name, c in p["nipa"].items()}
        assert {n: s for n, s in states.items() if s in ("fail", "warning")} == \
            {"signed": "warning"}, p["nipa"]
        assert p["nipa"]["signed"]["description"].startswith("1 warning: [signed] unsigned: ")
        assert "apply" not in states  # posted only when the series does not apply
        assert states["checkpatch"] == states["kdoc"] == "success"
        assert states["build_clang"] == "unknown"
        assert p["nipa"]["ynl"] == {"state": "unknown", "description": "the generated code is "
                                    "checked, but tools/net/ynl was not built (ynl-build: "
                                    "napipatch test warnings)"}
