"""A series' history (the previous version, from the store) and the netdev
process checks that read it: repost-wait, new-thread, version-link,
review-tags.

Real inputs: the v4 thread of the flagship series (../shared/lore), v5 as
shipped (series/threaded-busy-poll/v5), and a small v1 thread with review
replies (tests/fixtures/history/v1.mbox) with v2 postings made from it.
"""

import json
import shutil
import re
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import LORE

ROOT = Path(__file__).resolve().parent.parent
HIST = Path(__file__).parent / "fixtures" / "history"
FIX = Path(__file__).parent / "fixtures" / "checks"
V1 = HIST / "v1.mbox"
GOOD = FIX / "repost-wait" / "good.mbox"  # the same v2 for the four checks
V4 = LORE / "threaded-busy-poll-v4.mbox"
V3 = LORE / "threaded-busy-poll-v3-cover.mbox"
PROCESS = ("repost-wait", "new-thread", "version-link", "review-tags")
JOE = "Reviewed-by: Joe Reviewer <joe@example.org>"


def reply(to: str, subject: str, msgid: str, text: str, frm: str = "Joe Reviewer <joe@example.org>",
          charset: str = "UTF-8") -> bytes:
    head = (f"From mboxrd@z Thu Jan  1 00:00:00 1970\nFrom: {frm}\nSubject: Re: {subject}\n"
            f"Date: Mon, 02 Nov 2026 15:00:00 +0000\nMessage-ID: <{msgid}>\n"
            f"In-Reply-To: <{to}>\nReferences: <{to}>\nMIME-Version: 1.0\n"
            f"Content-Type: text/plain; charset={charset}\nContent-Transfer-Encoding: 8bit\n\n")
    return head.encode() + text.encode(charset if charset != "x-unknown" else "latin-1") + b"\n\n"


def check(cli, target, *only, env=None) -> dict:
    cp = cli("check", target, "--only", ",".join(only or PROCESS), "--format", "json", env=env)
    assert cp.returncode in (0, 1), cp.stderr
    assert "Traceback" not in cp.stderr
    return json.loads(cp.stdout)


def findings(report: dict) -> list[tuple[str, str, int, str]]:
    return sorted((f["check"], f["severity"], f["patch"], f["message"]) for f in report["findings"])


def status(report: dict) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report["checks"]}


def record(cli, name: str) -> dict:
    return tomllib.loads((cli.store / name / "series.toml").read_text())


# ------------------------------------------------------------- series import
def test_import_of_the_real_v4_thread_keeps_reply_trailers_and_who_gave_them(cli, tmp_path):
    alone = record_of_import(cli, V4, "tbp")["versions"]["v4"]
    # The real thread gives no review trailer; its 17 replies are known by Message-ID.
    assert "review" not in alone and "trailers" not in alone
    assert len(alone["thread-ids"]) == 22
    assert "20250321090221.r15-stfomichev@reconstructed.invalid" in alone["thread-ids"]

    mbox = tmp_path / "v4-reviewed.mbox"
    mbox.write_bytes(V4.read_bytes() + reply(
        "20250321021517.2-skhawaja@reconstructed.invalid",
        "[PATCH net-next v4 2/4] net: Create separate gro_flush helper function",
        "rb-2@example.org", "Looks good.\n\nReviewed-by: Joe Damato <jdamato@fastly.com>",
        frm="Joe Damato <jdamato@fastly.com>") + reply(
        "20250321021517.0-skhawaja@reconstructed.invalid",
        "[PATCH net-next v4 0/4] Add support to do threaded napi busy poll",
        "ack-0@example.org", "For the series:\n\nAcked-by: Stanislav Fomichev <sdf@fomichev.me>",
        frm="Stanislav Fomichev <stfomichev@gmail.com>"))
    v4 = record_of_import(cli, mbox, "tbp2")["versions"]["v4"]
    assert v4["review"] == [
        {"patch": 0, "trailer": "Acked-by: Stanislav Fomichev <sdf@fomichev.me>",
         "by": "Stanislav Fomichev <stfomichev@gmail.com>", "message-id": "ack-0@example.org"},
        {"patch": 2, "trailer": "Reviewed-by: Joe Damato <jdamato@fastly.com>",
         "by": "Joe Damato <jdamato@fastly.com>", "message-id": "rb-2@example.org"}]


def record_of_import(cli, source, name: str) -> dict:
    cli("series", "import", source, "--name", name, check=0)
    return record(cli, name)


def test_the_committed_fixture_store_is_what_import_writes_today(cli):
    """tests/fixtures/history/store is make_fixtures.py's import of v1.mbox."""
    got = record_of_import(cli, V1, "dummy-cleanups")
    kept = tomllib.loads((HIST / "store" / "dummy-cleanups" / "series.toml").read_text())
    assert got == kept
    assert got["versions"]["v1"]["review"] == [
        {"patch": 2, "trailer": JOE, "by": "Joe Reviewer <joe@example.org>",
         "message-id": "r1@example.org"}]


def test_a_reply_in_latin1_keeps_its_trailer_and_giver(cli, tmp_path):
    mbox = tmp_path / "latin.mbox"
    mbox.write_bytes(V1.read_bytes() + reply(
        "v1-2@example.org", "[PATCH net-next 2/2] net: dummy: drop a stray blank line",
        "r9@example.org", "Très bien.\n\nAcked-by: José Müller <jm@example.org>",
        frm="=?iso-8859-1?q?Jos=E9_M=FCller?= <jm@example.org>", charset="iso-8859-1"))
    review = record_of_import(cli, mbox, "d")["versions"]["v1"]["review"]
    assert {"patch": 2, "trailer": "Acked-by: José Müller <jm@example.org>",
            "by": "José Müller <jm@example.org>", "message-id": "r9@example.org"} in review


@pytest.mark.parametrize("charset, why", [
    ("UTF-8", "body is not valid utf-8"), ("x-unknown", "unknown charset 'x-unknown'")])
def test_an_unreadable_reply_is_left_out_in_one_line(cli, tmp_path, charset, why):
    mbox = tmp_path / "odd.mbox"
    head = reply("v1-2@example.org", "[PATCH net-next 2/2] net: dummy: drop a stray blank line",
                 "r9@example.org", "x", charset="UTF-8")
    body = "Très bien.\n\nAcked-by: José Müller <jm@example.org>".encode("latin-1")
    mbox.write_bytes(V1.read_bytes() + head.replace(b"charset=UTF-8", f"charset={charset}".encode())
                     .replace(b"\n\nx\n\n", b"\n\n" + body + b"\n\n"))
    cp = cli("series", "import", mbox, "--name", "d", check=0)
    assert cp.stderr == f"napipatch: warning: {mbox} message 7 <r9@example.org>: reply left " \
                        f"out: {why}" + (" (byte 2)" if charset == "UTF-8" else "") + "\n"
    rec = record(cli, "d")["versions"]["v1"]
    assert [r["trailer"] for r in rec["review"]] == [JOE]


def test_an_unreadable_patch_is_still_an_error(cli, tmp_path):
    mbox = tmp_path / "bad-patch.mbox"
    mbox.write_bytes(V1.read_bytes().replace(b"The dummy device can carry any MTU.",
                                             "Tr\xe8s".encode("latin-1"), 1))
    cp = cli("series", "import", mbox, "--name", "d", check=2)
    assert cp.stderr.count("\n") == 1 and "body is not valid utf-8" in cp.stderr


# ------------------------------------------------- the checks on v1 -> v2
@pytest.fixture
def v1(cli):
    cli("series", "import", V1, "--name", "dummy-cleanups", check=0)
    return cli


def v2(tmp_path: Path, subs: dict | None = None, name: str = "v2.mbox",
       text: str | None = None) -> Path:
    """The control v2 (or ``text``) with each ``old: new`` of ``subs`` made once."""
    out = text if text is not None else GOOD.read_text()
    for old, new in (subs or {}).items():
        assert old in out, f"{old!r} not in the v2 fixture"
        out = out.replace(old, new, 1)
    (tmp_path / name).write_text(out)
    return tmp_path / name


def test_the_control_v2_is_clean_and_every_rule_is_evaluated(v1):
    got = check(v1, GOOD)
    assert status(got) == dict.fromkeys(PROCESS, "pass")
    assert findings(got) == []


def test_v1_itself_is_not_judged(v1):
    got = check(v1, V1)
    assert status(got) == dict.fromkeys(PROCESS, "pass")


@pytest.mark.parametrize("url", [
    "https://lore.kernel.org/all/v1-cover@example.org/",
    "https://lore.kernel.org/netdev/v1-cover@example.org/T/#u",
    "https://lore.kernel.org/r/v1-cover@example.org",
    "https://patch.msgid.link/v1-cover@example.org",
    "https://lore.kernel.org/netdev/v1-cover%40example.org/",
])
def test_a_link_to_v1_counts_whatever_the_inbox(v1, tmp_path, url):
    mbox = v2(tmp_path, {"https://lore.kernel.org/netdev/v1-cover@example.org/": url})
    assert findings(check(v1, mbox, "version-link")) == []


def test_a_link_to_another_message_is_no_link_and_the_hint_is_the_stored_one(v1, tmp_path):
    mbox = v2(tmp_path, {"netdev/v1-cover@": "netdev/v1-1@"})
    got = check(v1, mbox, "version-link")
    assert findings(got) == [("version-link", "warning", 0, ("the changelog of the cover letter "
                              "has no lore link to v1 <v1-cover@example.org>"))]
    assert got["findings"][0]["hint"] == "v1: https://lore.kernel.org/all/v1-cover@example.org/"


def test_threaded_under_any_mail_of_v1s_thread(v1, tmp_path):
    text = GOOD.read_text().replace(
        "Message-ID: <v2-cover@example.org>\n",
        "Message-ID: <v2-cover@example.org>\nIn-Reply-To: <v1-cover@example.org>\n"
        "References: <v1-cover@example.org>\n", 1)
    got = check(v1, v2(tmp_path, text=text), "new-thread")
    assert findings(got) == [("new-thread", "warning", 0, ("v2's cover letter is threaded under "
                              "v1: its In-Reply-To names <v1-cover@example.org>"))]


def test_a_dropped_tag_is_named_with_who_gave_it_and_a_changed_patch_is_not(v1, tmp_path):
    mbox = v2(tmp_path, {JOE + "\n": ""})
    got = check(v1, mbox, "review-tags")
    assert findings(got) == [("review-tags", "warning", 2, (f"{JOE} given on v1 2/2 (a reply "
                              "<r1@example.org>) is missing; the diff did not change"))]
    # The same tag dropped from a patch whose diff changed is the reviewer's call.
    changed = v2(tmp_path, {" \tdev_kfree_skb(skb);": "-\tdev_kfree_skb(skb);\n+\tconsume_skb(skb);"},
                 name="changed.mbox", text=mbox.read_text())
    assert findings(check(v1, changed, "review-tags")) == []


def test_reposting_too_soon_says_when_it_may_go(v1, tmp_path):
    mbox = v2(tmp_path, {"Tue, 03 Nov 2026 12:00:00": "Mon, 02 Nov 2026 20:00:00"})
    got = check(v1, mbox, "repost-wait")
    assert findings(got) == [("repost-wait", "warning", 0, ("v2 was posted 2026-11-02 20:00 UTC, "
                              "10.0 hours after v1: v1 was posted 2026-11-02 10:00 UTC (Date: of "
                              "its cover letter); it may go after 2026-11-03 10:00 UTC"))]


def _dated_v1(cli, tmp_path, when: datetime) -> None:
    stamp = when.strftime("%a, %d %b %Y %H:%M:%S +0000")
    mbox = tmp_path / "v1-dated.mbox"
    mbox.write_text(re.sub(r"^Date: Mon, 02 Nov 2026 10:00:00 \+0000$", f"Date: {stamp}",
                           V1.read_text(), flags=re.MULTILINE))
    cli("series", "import", mbox, "--name", "dummy-cleanups", "--force", check=0)


def _unsent(tmp_path) -> Path:
    """The control v2 as format-patch writes it before sending: no Message-ID."""
    text = re.sub(r"^(Message-ID|In-Reply-To|References): .*\n", "", GOOD.read_text(), flags=re.MULTILINE)
    return v2(tmp_path, name="unsent.mbox", text=text)


def test_an_unsent_version_is_held_until_24_hours_after_the_last(cli, tmp_path):
    v1_at = (datetime.now(UTC) - timedelta(hours=2)).replace(second=0, microsecond=0)
    _dated_v1(cli, tmp_path, v1_at)
    got = check(cli, _unsent(tmp_path), "repost-wait")
    may_go = (v1_at + timedelta(hours=24)).strftime("%Y-%m-%d %H:%M UTC")
    assert findings(got) == [("repost-wait", "warning", 0, ("v2 is not sent yet and v1 was posted "
                              f"{v1_at:%Y-%m-%d %H:%M} UTC (Date: of its cover letter): it may go "
                              f"after {may_go}"))]


def test_an_unsent_version_may_go_a_day_after_the_last(cli, tmp_path):
    _dated_v1(cli, tmp_path, datetime.now(UTC) - timedelta(hours=30))
    got = check(cli, _unsent(tmp_path), "repost-wait")
    assert (status(got), findings(got)) == ({"repost-wait": "pass"}, [])


# ------------------------------------------------------- unknown, bad input
def test_without_a_previous_version_each_rule_says_it_cannot_tell(cli, tmp_path):
    got = check(cli, GOOD)
    why = f"no earlier version of 'good' in the store ({cli.store})"
    assert findings(got) == [
        ("repost-wait", "info", 0, f"the 24-hour rule: unknown, {why}"),
        ("review-tags", "info", 0, f"review tags carried over: unknown, {why}"),
        ("version-link", "info", 0, f"the link to the previous version: unknown, {why}")]
    assert status(got)["new-thread"] == "pass"  # not a reply to anything: clean either way
    threaded = check(cli, FIX / "new-thread" / "bad.mbox", "new-thread")
    assert findings(threaded) == [("new-thread", "info", 0, ("threading: unknown, no earlier "
                                   f"version of 'bad' in the store ({cli.store})"))]


@pytest.mark.parametrize("date, why", [
    ("Date: someday soon", "v1's cover letter has a Date: that is not a date ('someday soon')"),
    ("", "v1's cover letter has no Date:")])
def test_a_previous_version_with_a_broken_date_is_a_reason_not_a_crash(cli, tmp_path, date, why):
    mbox = tmp_path / "v1-broken.mbox"
    mbox.write_text(V1.read_text().replace("Date: Mon, 02 Nov 2026 10:00:00 +0000\n",
                                           f"{date}\n" if date else "", 1))
    cli("series", "import", mbox, "--name", "dummy-cleanups", check=0)
    got = check(cli, GOOD)
    assert findings(got) == [("repost-wait", "info", 0, f"the 24-hour rule: unknown, {why}")]
    assert status(got) == {**dict.fromkeys(PROCESS, "pass"), "repost-wait": "info"}


def test_a_broken_date_on_the_checked_version_is_a_reason(v1, tmp_path):
    mbox = v2(tmp_path, {"Date: Tue, 03 Nov 2026 12:00:00 +0000": "Date: tomorrow"})
    got = check(v1, mbox, "repost-wait")
    assert findings(got) == [("repost-wait", "info", 0, ("the 24-hour rule: unknown, v2's cover "
                              "letter has a Date: that is not a date ('tomorrow')"))]


# ------------------------------------------------------------------- cache
def test_a_change_to_the_previous_record_is_never_a_stale_result(v1, tmp_path):
    mbox = v2(tmp_path, {JOE + "\n": ""})
    first, again = check(v1, mbox, "review-tags"), check(v1, mbox, "review-tags")
    assert [c["cached"] for c in (first["checks"] + again["checks"])] == [False, True]
    assert len(first["findings"]) == 1
    # An Acked-by on v1 2/2 arrives and the thread is imported again.
    thread = tmp_path / "v1-more.mbox"
    thread.write_bytes(V1.read_bytes() + reply(
        "v1-2@example.org", "[PATCH net-next 2/2] net: dummy: drop a stray blank line",
        "r10@example.org", "Acked-by: Ann Maintainer <ann@example.org>",
        frm="Ann Maintainer <ann@example.org>"))
    v1("series", "import", thread, "--name", "dummy-cleanups", "--force", check=0)
    after = check(v1, mbox, "review-tags")
    assert after["checks"][0]["cached"] is False
    assert [f[3].split(" given")[0] for f in findings(after)] == [
        "Acked-by: Ann Maintainer <ann@example.org>", JOE]


# ------------------------------------------------- the flagship: v5 against v4
def test_v5_against_the_real_v4_every_rule_evaluated_and_true(cli):
    cli("series", "import", V3, "--name", "tbp", "--cover-only", check=0)
    cli("series", "import", V4, "--name", "tbp", check=0)
    cli("series", "import", ROOT / "series" / "threaded-busy-poll" / "v5", "--name", "tbp",
        check=0)
    v5 = check(cli, "tbp@v5")
    # v5 is unsent (no Message-ID) and v4 went out in March 2025; v5 starts
    # its own thread; its changelog links v4's cover; v4 got no review tag.
    assert status(v5) == dict.fromkeys(PROCESS, "pass")
    assert findings(v5) == []
    # v4 against v3 (stored as its cover letter): the real v4 changelog has
    # no link to v3, and v3's patches are not in the store.
    v4 = check(cli, "tbp@v4")
    assert findings(v4) == [
        ("review-tags", "info", 0, ("review tags carried over: unknown, v3 is stored without its "
                                   "patches (cover letter only)")),
        ("version-link", "warning", 0, ("the changelog of the cover letter has no lore link to v3 "
                                       "<20250205001000.0-skhawaja@reconstructed.invalid>"))]
    assert status(v4)["repost-wait"] == "pass" and status(v4)["new-thread"] == "pass"


def test_the_carry_of_v4_onto_6_12_shares_the_postings_history(cli):
    """series/threaded-busy-poll-6.12 holds v4 carried onto 6.12 under its own
    name; its ``carried-from`` makes v3 of the posting its previous version,
    so the process checks say what they say of the posting itself."""
    for name in ("threaded-busy-poll", "threaded-busy-poll-6.12"):
        shutil.copytree(ROOT / "series" / name, cli.store / name)
    carry = check(cli, "threaded-busy-poll-6.12@v4")
    assert findings(carry) == findings(check(cli, "threaded-busy-poll@v4")) == [
        ("review-tags", "info", 0, ("review tags carried over: unknown, v3 is stored without its "
                                   "patches (cover letter only)")),
        ("version-link", "warning", 0, ("the changelog of the cover letter has no lore link to v3 "
                                       "<20250205001000.0-skhawaja@reconstructed.invalid>"))]
    assert status(carry)["repost-wait"] == "pass" and status(carry)["new-thread"] == "pass"
    # Without the key it is a series of its own, with no history.
    toml = cli.store / "threaded-busy-poll-6.12" / "series.toml"
    toml.write_text(re.sub(r'(?m)^carried-from = .*\n', "", toml.read_text()))
    alone = check(cli, "threaded-busy-poll-6.12@v4", "version-link")
    assert findings(alone) == [("version-link", "info", 0, (
        "the link to the previous version: unknown, no earlier version of "
        f"'threaded-busy-poll-6.12' in the store ({cli.store})"))]


def test_send_holds_a_version_until_24_hours_after_the_last_unless_forced(cli, tmp_path):
    v1_at = (datetime.now(UTC) - timedelta(hours=2)).replace(second=0, microsecond=0)
    _dated_v1(cli, tmp_path, v1_at)
    cli("series", "import", _unsent(tmp_path), "--name", "dummy-cleanups", check=0)
    may_go = (v1_at + timedelta(hours=24)).strftime("%Y-%m-%d %H:%M UTC")
    cp = cli("send", "dummy-cleanups@v2", "--only", "repost-wait", "--to", "netdev@example.org",
             "--dry-run", check=2)
    assert cp.stderr.endswith(f"it may go after {may_go} (--force sends anyway)\n"), cp.stderr
    assert "napipatch: dummy-cleanups@v2: not sent: v2 is not sent yet" in cp.stderr
    env = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.org"}
    cp = cli("send", "dummy-cleanups@v2", "--only", "repost-wait", "--to", "netdev@example.org",
             "--dry-run", "--force", env=env)
    assert cp.returncode == 0, cp.stderr
    assert "would send dummy-cleanups@v2" in cp.stdout


def test_net_next_closed_is_said_from_the_setting_only(cli, tmp_path):
    bad = FIX / "net-next-closed" / "bad.mbox"
    cfg = tmp_path / "gitconfig"

    def said(state: str | None) -> list[tuple[str, str, int, str]]:
        cfg.write_text(f"[napipatch]\n\tnet-next = {state}\n" if state else "")
        return findings(check(cli, bad, "net-next-closed", env={"GIT_CONFIG_GLOBAL": str(cfg)}))

    assert said("closed") == [("net-next-closed", "warning", 0, "net-next is closed (git config "
                               "napipatch.net-next): the list takes no new net-next content "
                               "until it reopens")]
    assert said("open") == []
    assert said(None) == []   # most of the year it is open: no info on every series


ANN_CLOSED = ("From mboxrd@z Thu Jan  1 00:00:00 1970\nFrom: Jakub Kicinski <kuba@kernel.org>\n"
              "Subject: [ANN] net-next is CLOSED\nDate: Sun, 01 Nov 2026 18:00:00 -0800\n"
              "Message-ID: <ann-closed@kernel.org>\n\nMerge window: no new net-next content.\n\n")


def test_an_imported_announcement_sets_net_next_and_the_warning_names_it(cli, tmp_path):
    """``series import`` of the list's "net-next is CLOSED" records it in the
    store; the check names it (subject, date, lore link); an older OPEN
    imported later changes nothing; git config napipatch.net-next, when set,
    is the user's own word and wins."""
    bad = FIX / "net-next-closed" / "bad.mbox"
    ann = tmp_path / "closed.mbox"
    ann.write_text(ANN_CLOSED)
    cp = cli("series", "import", ann, check=0)
    assert cp.stdout == ("net-next is closed: [ANN] net-next is CLOSED (2026-11-02T02:00:00Z, "
                         "https://lore.kernel.org/all/ann-closed@kernel.org/)\n")
    assert (cli.store / "net-next.toml").is_file()
    empty = tmp_path / "gitconfig"
    empty.write_text("")
    env = {"GIT_CONFIG_GLOBAL": str(empty)}
    named = [("net-next-closed", "warning", 0,
              "net-next is closed (the list's announcement \"[ANN] net-next is CLOSED\" of "
              "2026-11-02 02:00 UTC, https://lore.kernel.org/all/ann-closed@kernel.org/): the "
              "list takes no new net-next content until it reopens")]
    assert findings(check(cli, bad, "net-next-closed", env=env)) == named
    older = tmp_path / "open.mbox"
    older.write_text(ANN_CLOSED.replace("CLOSED", "OPEN").replace("01 Nov", "01 Oct")
                     .replace("ann-closed", "ann-open"))
    cp = cli("series", "import", older, check=0)
    assert "not recorded, a newer announcement is in the store" in cp.stdout
    assert findings(check(cli, bad, "net-next-closed", env=env)) == named
    empty.write_text("[napipatch]\n\tnet-next = open\n")
    assert findings(check(cli, bad, "net-next-closed", env=env)) == []


def test_an_announcement_with_a_broken_date_is_no_announcement(cli, tmp_path):
    ann = tmp_path / "closed.mbox"
    ann.write_text(ANN_CLOSED.replace("Sun, 01 Nov 2026 18:00:00 -0800", "soon"))
    cp = cli("series", "import", ann, check=2)
    assert cp.stderr == ("napipatch: error: <ann-closed@kernel.org>: the announcement '[ANN] "
                         "net-next is CLOSED' has a Date: that is not a date ('soon'): it "
                         "cannot be ordered\n")
    assert not (cli.store / "net-next.toml").exists()


def test_export_says_which_tags_it_could_carry_and_carries_them_with_a_flag(cli, tmp_path):
    """v1 posted (format-patch --thread, imported with a review reply to
    2/2); v2 exported from the same commits lacks Joe's tag: export names
    it, and with --carry-tags writes it into the unchanged patch, before
    the sender's Signed-off-by, so review-tags has nothing to say."""
    from conftest import commit_files, format_patch, small_repo

    repo = small_repo(tmp_path / "repo")
    base = commit_files(repo, git_empty_tree(repo), {"a.c": "int a;\n", "b.c": "int b;\n"},
                        "base")
    c1 = commit_files(repo, base, {"a.c": "int a = 1;\n"}, "net: a: set a")
    c2 = commit_files(repo, c1, {"b.c": "int b = 2;\n"}, "net: b: set b")
    d = format_patch(repo, f"{base}..{c2}", tmp_path / "v1", "--thread", "--cover-letter",
                     "--subject-prefix=PATCH net-next")
    files = sorted(d.glob("*.patch"))
    p2 = re.search(r"^Message-ID: <([^>]+)>", files[2].read_text(), re.M | re.I).group(1)
    mbox = tmp_path / "v1.mbox"
    mbox.write_bytes(b"".join(f.read_bytes() + b"\n" for f in files)
                     + reply(p2, "[PATCH net-next 2/2] net: b: set b", "r-b@example.org",
                             f"Looks right.\n\n{JOE}"))
    cli("series", "import", mbox, "--name", "demo", check=0)
    export = ("series", "export", f"{base}..{c2}", "--name", "demo", "--repo", repo,
              "--base", base)
    cp = cli(*export, check=0)
    said = (f"PATCH 2/2: {JOE} (given on v1 2/2, a reply <r-b@example.org>; the diff did "
            "not change)")
    assert f"could carry: {said}\n" in cp.stdout, cp.stdout
    assert "export again with --carry-tags --force" in cp.stderr
    assert JOE not in (cli.store / "demo" / "v2" / "0002-net-b-set-b.patch").read_text()
    cp = cli(*export, "--version", "2", "--force", "--carry-tags", check=0)
    assert f"carried: {said}\n" in cp.stdout and cp.stderr == ""
    text = (cli.store / "demo" / "v2" / "0002-net-b-set-b.patch").read_text()
    assert f"{JOE}\nSigned-off-by: Test Author <author@example.org>\n---\n" in text
    assert JOE not in (cli.store / "demo" / "v2" / "0001-net-a-set-a.patch").read_text()
    got = check(cli, "demo@v2", "review-tags")
    assert status(got) == {"review-tags": "pass"} and findings(got) == []


def git_empty_tree(repo: Path) -> str:
    """A root commit with no files."""
    from conftest import git
    tree = git(repo, "mktree", input="")
    return git(repo, "commit-tree", tree, "-m", "root")
