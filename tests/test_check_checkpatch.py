"""checkpatch on the real 6.12 tree, and the trusted-scripts guarantee."""

import json
import uuid
from pathlib import Path

import pytest

from conftest import commit_files, edit, format_patch, git

pytestmark = pytest.mark.tree


def _check(cli, d, tree, *extra):
    cp = cli("check", d, "--tree", tree, "--format", "json", *extra)
    assert cp.returncode in (0, 1), cp.stderr
    return json.loads(cp.stdout)


def test_checkpatch_finding_has_file_and_line(cli, kernel_tree, base_commit, tmp_path):
    path = "net/core/dev.c"
    text = edit(kernel_tree, base_commit, path, "static DEFINE_SPINLOCK(napi_hash_lock);",
                "static DEFINE_SPINLOCK(napi_hash_lock);\nint  napipatch_unused_with_a_name_long_enough_to_pass_the_eighty_columns_limit_x = 1 ;")
    c = commit_files(kernel_tree, base_commit, {path: text}, "net: core: add a badly styled line\n\nFor a test.\n")
    d = format_patch(kernel_tree, f"{base_commit}..{c}", tmp_path / "p")
    data = _check(cli, d, kernel_tree, "--only", "checkpatch")
    got = {(f["file"], f["line"], f["message"].split(":")[0]) for f in data["findings"]}
    line = text.splitlines().index(
        "int  napipatch_unused_with_a_name_long_enough_to_pass_the_eighty_columns_limit_x = 1 ;") + 1
    assert (path, line, "SPACING") in got
    assert (path, line, "LONG_LINE") in got


def test_a_line_checkpatch_complains_about_thousands_of_times_is_bounded(
        cli, kernel_tree, base_commit, tmp_path):
    """20,000 commas on a 40,000-column line: checkpatch would print 20,000
    messages quoting the line (800 MB); the report keeps the first and says
    the rest were not read, and the check completes."""
    path = "net/core/dev.c"
    text = edit(kernel_tree, base_commit, path, "static DEFINE_SPINLOCK(napi_hash_lock);",
                "static DEFINE_SPINLOCK(napi_hash_lock);\nint " + "a," * 20000 + "b;")
    c = commit_files(kernel_tree, base_commit, {path: text}, "net: core: a comma storm\n\nFor a test.\n")
    d = format_patch(kernel_tree, f"{base_commit}..{c}", tmp_path / "p")
    data = _check(cli, d, kernel_tree, "--only", "checkpatch")
    assert {c["id"]: c["status"] for c in data["checks"]}["checkpatch"] == "fail"
    msgs = [f["message"] for f in data["findings"]]
    assert any(m.startswith("SPACING: space required after that ','") for m in msgs), msgs
    assert any("more than 200 things" in m for m in msgs), msgs
    assert max(len(f["details"]) for f in data["findings"]) < 2000
    # the unread rest leaves NIPA's state open, but an ERROR shown is its fail already
    assert [p["nipa"]["checkpatch"]["state"] for p in data["series"]["patches"]] == ["fail"]


def test_clean_patch_has_no_checkpatch_findings(cli, kernel_tree, base_commit, tmp_path):
    path = "net/core/dev.c"
    text = edit(kernel_tree, base_commit, path, "static DEFINE_SPINLOCK(napi_hash_lock);",
                "static DEFINE_SPINLOCK(napi_hash_lock); /* napi_hash and its ids */")
    c = commit_files(kernel_tree, base_commit, {path: text}, "net: core: comment napi_hash_lock\n\nSay what it protects.\n")
    d = format_patch(kernel_tree, f"{base_commit}..{c}", tmp_path / "p",
                     "--subject-prefix=PATCH net-next")
    # (cc-maintainers would say the mail is not addressed yet, signed that it is unsigned)
    data = _check(cli, d, kernel_tree, "--skip", "cc-maintainers,signed")
    assert data["findings"] == [], data["findings"]
    assert {c["id"]: c["status"] for c in data["checks"]}["checkpatch"] == "pass"


def test_patched_checkpatch_never_runs(cli, kernel_tree, base_commit, tmp_path):
    """A patch that rewrites scripts/checkpatch.pl to write outside the tree."""
    victim = Path("/tmp") / f"napipatch-pwned-{uuid.uuid4().hex}"
    script = f'#!/usr/bin/env perl\nopen(my $f, ">", "{victim}"); print $f "pwned\\n"; close($f);\n'
    c = commit_files(kernel_tree, base_commit, {"scripts/checkpatch.pl": script},
                     "scripts: checkpatch: replace it\n\nHostile.\n")
    d = format_patch(kernel_tree, f"{base_commit}..{c}", tmp_path / "p")
    data = _check(cli, d, kernel_tree)
    assert not victim.exists(), "the patched checkpatch.pl ran"
    status = {c["id"]: c["status"] for c in data["checks"]}
    assert status["apply"] == "pass" and status["checkpatch"] != "skipped"


def _typo_series(kernel_tree, base_commit, tmp_path):
    path = "net/core/dev.c"
    text = edit(kernel_tree, base_commit, path, "static DEFINE_SPINLOCK(napi_hash_lock);",
                "static DEFINE_SPINLOCK(napi_hash_lock); /* proctects the napi hash */")
    c = commit_files(kernel_tree, base_commit, {path: text},
                     "net: core: comment napi_hash_lock\n\nSay what it protects.\n")
    return format_patch(kernel_tree, f"{base_commit}..{c}", tmp_path / "p",
                        "--subject-prefix=PATCH net-next"), text.splitlines().index(
        "static DEFINE_SPINLOCK(napi_hash_lock); /* proctects the napi hash */") + 1


def test_codespell_finds_what_the_netdev_ci_finds(cli, kernel_tree, base_commit, tmp_path):
    """NIPA runs checkpatch --codespell: a typo in a new comment is a finding."""
    from napipatch.checks.checkpatch import codespell_dictionary
    assert codespell_dictionary() is not None, "codespell is not installed (scripts/install.sh)"
    d, line = _typo_series(kernel_tree, base_commit, tmp_path)
    data = _check(cli, d, kernel_tree, "--only", "checkpatch")
    got = [(f["file"], f["line"], f["message"]) for f in data["findings"]]
    assert got == [("net/core/dev.c", line,
                    "TYPO_SPELLING: 'proctects' may be misspelled - perhaps 'protects'?")], got


def test_without_a_dictionary_checkpatch_says_so_once(kernel_tree, base_commit, tmp_path,
                                                      monkeypatch):
    """No codespell: checkpatch still runs, and one warning says spelling was not checked."""
    import napipatch.checks.checkpatch as mod
    from napipatch import config as configmod
    from napipatch.mails.mbox import read_patch_dir
    from napipatch.pipeline import run as runmod
    from napipatch.mails.series import assemble
    monkeypatch.setattr(mod, "codespell_dictionary", lambda: None)   # forked units inherit it
    d, _line = _typo_series(kernel_tree, base_commit, tmp_path)
    series = assemble(read_patch_dir(d), str(d))
    cfg = configmod.Config(cache_dir=str(tmp_path / "cache"))
    report = runmod.run(series, cfg, kernel_tree, only=["checkpatch"],
                               use_cache=False)
    assert [(f.severity.value, f.patch, f.message.split(":")[0]) for f in report.findings] == \
        [("warning", 0, "no codespell dictionary on this machine")]
    # NIPA's checkpatch reports the spelling: what it posts is not known here
    from napipatch.report.forecast import forecast
    assert [row["checkpatch"].state for row in forecast(report)] == \
        ["unknown"] * len(series.patches)


def test_the_trimmed_dictionary_finds_what_the_whole_one_finds(kernel_tree, tmp_path):
    """checkpatch with only the entries whose misspelling is a token of the
    patch says exactly what it says with all 37,000 (and in a fraction of
    the time): typos in every case, next to punctuation, with apostrophes."""
    import random
    import subprocess as sp

    from napipatch.checks.checkpatch import codespell_dictionary, trimmed_dictionary
    words = codespell_dictionary()
    assert words is not None, "codespell is not installed (scripts/install.sh)"
    entries = [ln.split("->")[0] for ln in words.read_text().splitlines()
               if "->" in ln and ", disabled" not in ln]
    picked = random.Random(7).sample(entries, 60) + [e for e in entries if "'" in e][:5]
    comment = " ".join(w.upper() if i % 3 == 0 else w.capitalize() if i % 3 == 1 else w
                       for i, w in enumerate(picked))
    patch = _patch_with_comment(kernel_tree, tmp_path, comment + ", x-" + picked[0] + ".")
    script = kernel_tree / "scripts" / "checkpatch.pl"

    def run(dictionary):
        return sp.run(["perl", str(script), "--no-tree", "--strict", "--codespell",
                       "--codespellfile", str(dictionary), "-"], input=patch,
                      capture_output=True, text=True, cwd=tmp_path).stdout

    whole = run(words)
    assert whole.count("may be misspelled") >= 30   # checkpatch skips a typo right after one
    trimmed = run(trimmed_dictionary(words, patch, tmp_path / "d.txt"))
    assert trimmed == whole
    assert len((tmp_path / "d.txt").read_text().splitlines()) < 200


def _patch_with_comment(kernel_tree, tmp_path, comment: str) -> str:
    base = git(kernel_tree, "rev-parse", "HEAD")
    path = "net/core/gro_cells.c"
    text = edit(kernel_tree, base, path, "struct gro_cell {\n", f"/* {comment} */\nstruct gro_cell {{\n")
    c = commit_files(kernel_tree, base, {path: text}, f"net: gro_cells: {comment[:40]}\n\nBody.\n")
    return git(kernel_tree, "format-patch", "-1", "--stdout", c) + "\n"


def test_checkpatch_saying_without_end_is_stopped_past_the_messages_kept():
    """A checkpatch that never stops talking (the 20,000-comma line) is
    stopped once parse has one message more than it shows."""
    from napipatch import procs
    from napipatch.checks.checkpatch import MAX_MESSAGES, _reader, parse

    lines: list[str] = []
    cp = procs.run(["sh", "-c", "while :; do echo 'WARNING:LONG_LINE: x'; echo '#1: FILE: a.c:1:'; "
                    "done"], timeout=None, on_line=_reader(lines))
    assert cp.returncode != 0            # killed, not ended
    items = parse(lines)
    assert len(items) == MAX_MESSAGES + 1
    assert items[0] == {"severity": "warning", "nipa": "warning", "type": "LONG_LINE",
                        "message": "x", "file": "a.c", "line": 1, "excerpt": []}
