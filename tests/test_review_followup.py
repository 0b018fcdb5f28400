"""Review comments across versions: the replies ``series import`` keeps, the
comments found in them, and what the next version did with each
(review-followup, ``series show --replies``, ``series changelog``).

Real inputs: the v4 thread of the flagship series (17 replies) and v5 as
shipped (series/threaded-busy-poll/v5); small threads written here.
"""

import json
import shutil

from conftest import LORE, ROOT

V4 = LORE / "threaded-busy-poll-v4.mbox"
AUTHOR = "Ada Lovelace <ada@example.org>"
CID = "20261201-dummy-mtu-0a1b2c"


def mail(frm, subject, msgid, body, reply_to="", refs="", charset="UTF-8") -> bytes:
    head = ["From mboxrd@z Thu Jan  1 00:00:00 1970", f"From: {frm}", f"Subject: {subject}",
            "Date: Tue, 01 Dec 2026 10:00:00 +0000", f"Message-ID: <{msgid}>"]
    if reply_to:
        head += [f"In-Reply-To: <{reply_to}>",
                 "References: " + " ".join(f"<{r}>" for r in (refs or reply_to).split())]
    head += ["MIME-Version: 1.0", f"Content-Type: text/plain; charset={charset}",
             "Content-Transfer-Encoding: 8bit"]
    return ("\n".join(head) + "\n\n").encode() + body.encode(
        "latin-1" if charset != "UTF-8" else "utf-8") + b"\n\n"


def diff(max_mtu: str, at: int = 120) -> str:
    return f"""diff --git a/drivers/net/dummy.c b/drivers/net/dummy.c
index 1111111..2222222 100644
--- a/drivers/net/dummy.c
+++ b/drivers/net/dummy.c
@@ -{at},7 +{at},9 @@ static void dummy_setup(struct net_device *dev)
 \tdev->lltx = true;
 \tdev->features\t|= NETIF_F_SG | NETIF_F_FRAGLIST;
 \tdev->features\t|= NETIF_F_GSO_SOFTWARE;
-\tdev->max_mtu = 0;
+\tdev->max_mtu = {max_mtu};
+\tdev->min_mtu = 68;
+\tdev->priv_flags |= IFF_NO_QUEUE;
 \teth_hw_addr_random(dev);
 
 \tdev->needs_free_netdev = true;
"""


def version(v: int, max_mtu: str, changes: str = "", at: int = 120) -> bytes:
    tag, pre = ("", "v1") if v == 1 else (f" v{v}", f"v{v}")
    cover = (f"Set the dummy MTU range.\n\n{changes}---\nbase-commit: "
             f"4dbd6e6e2d1b2f1f1e1b2f1f1e1b2f1f1e1b2f1f\nchange-id: {CID}\n")
    body = ("The dummy device can carry any MTU.\n\nSigned-off-by: " + AUTHOR + "\n---\n"
            " drivers/net/dummy.c | 4 +++-\n 1 file changed\n\n" + diff(max_mtu, at) + "-- \n2.39.5\n")
    return (mail(AUTHOR, f"[PATCH net-next{tag} 0/1] net: dummy: MTU range", f"{pre}-cover@x", cover)
            + mail(AUTHOR, f"[PATCH net-next{tag} 1/1] net: dummy: set the MTU range",
                   f"{pre}-1@x", body, reply_to=f"{pre}-cover@x"))


SUBJ = "Re: [PATCH net-next 1/1] net: dummy: set the MTU range"
REFS = "v1-cover@x v1-1@x"


def review(frm: str, msgid: str, body: str, to: str = "v1-1@x", refs: str = REFS, **kw) -> bytes:
    return mail(frm, SUBJ, msgid, body, reply_to=to, refs=refs, **kw)


def v1_thread() -> bytes:
    return version(1, "65535") + b"".join([
        review("Joe Reviewer <joe@example.org>", "joe@x",
               "On Tue, Dec 01, 2026, Ada Lovelace wrote:\n> +\tdev->max_mtu = 65535;\n\n"
               "Please use ETH_MAX_MTU here.\n"),
        review("Zoe Reviewer <zoe@example.org>", "zoe@x",
               "> +\tdev->max_mtu = 65535;\n> +\tdev->min_mtu = 68;\n\n"
               "Why 68? Please use ETH_MIN_MTU.\n\nThanks,\nZoe\n"),
        review("Max Reviewer <max@example.org>", "max@x",
               "> +\tdev->priv_flags |= IFF_NO_QUEUE;\n\nIs this needed for a dummy device?\n"),
        review(AUTHOR, "ada-max@x",
               "> Is this needed for a dummy device?\n\nYes: without it the core attaches a "
               "qdisc that only costs time on a device that drops everything.\n",
               to="max@x", refs=REFS + " max@x"),
        review("Tom Thanks <tom@example.org>", "tom@x", "> +\tdev->min_mtu = 68;\n\nThanks!\n"),
        review("Rex Reviewer <rex@example.org>", "rex@x",
               "Reviewed-by: Rex Reviewer <rex@example.org>\n"),
    ])


def imported(cli, tmp_path, thread: bytes, name: str = "dummy-mtu") -> None:
    (tmp_path / "v1.mbox").write_bytes(thread)
    cli("series", "import", tmp_path / "v1.mbox", "--name", name, check=0)


def check(cli, target) -> list[dict]:
    cp = cli("check", target, "--only", "review-followup", "--format", "json")
    assert cp.returncode in (0, 1), cp.stderr
    assert "Traceback" not in cp.stderr
    return [f for f in json.loads(cp.stdout)["findings"] if f["check"] == "review-followup"]


def warnings(found: list[dict]) -> list[dict]:
    return [f for f in found if f["severity"] == "warning"]


# ------------------------------------------------------------ small threads
def test_v2_changing_one_comment_leaving_one_and_answering_one(cli, tmp_path):
    imported(cli, tmp_path, v1_thread())
    # v2: ETH_MAX_MTU as Joe asked; the hunk moved 10 lines down (an earlier
    # change grew the file): a moved hunk is no change of Zoe's lines.
    v2 = tmp_path / "v2.mbox"
    v2.write_bytes(version(2, "ETH_MAX_MTU", at=130))
    found = check(cli, v2)
    (w,) = warnings(found)
    assert w["file"] == "drivers/net/dummy.c" and w["line"] == 134 and w["patch"] == 1
    assert w["message"].startswith('Zoe Reviewer <zoe@example.org> on v1 1/1: "Why 68?')
    assert "https://lore.kernel.org/all/zoe@x/" in w["message"]
    infos = sorted(f["message"].split(":")[0] for f in found if f["severity"] == "info")
    assert infos == ["answered", "changed"]
    assert any("Joe Reviewer" in f["message"] and f["message"].startswith("changed")
               for f in found)
    assert any("Max Reviewer" in f["message"] and "Yes: without it" in f["message"]
               for f in found)
    # The thank-you and the bare Reviewed-by are no comments.
    assert not any("Tom Thanks" in f["message"] or "Rex" in f["message"] for f in found)


def test_a_promise_that_v2_did_not_keep_is_open_and_quoted(cli, tmp_path):
    imported(cli, tmp_path, v1_thread() + review(
        AUTHOR, "ada-joe@x", "> Please use ETH_MAX_MTU here.\n\nWill do in v2.\n",
        to="joe@x", refs=REFS + " joe@x"))
    v2 = tmp_path / "v2.mbox"
    v2.write_bytes(version(2, "65535"))
    msgs = [w["message"] for w in warnings(check(cli, v2))]
    assert any("Joe Reviewer" in m and 'promised: "Will do in v2."' in m for m in msgs), msgs
    assert len(msgs) == 2  # Joe's and Zoe's


def test_the_changelog_crediting_the_reviewer_is_mentioned(cli, tmp_path):
    imported(cli, tmp_path, v1_thread())
    v2 = tmp_path / "v2.mbox"
    v2.write_bytes(version(2, "ETH_MAX_MTU", changes="Changes in v2:\n - kept 68 as the "
                           "minimum: ETH_MIN_MTU is the same value (Zoe)\n\n"))
    found = check(cli, v2)
    assert not warnings(found)
    assert any(f["message"].startswith("mentioned: Zoe Reviewer") for f in found)


def test_a_version_imported_without_replies_says_so(cli, tmp_path):
    (tmp_path / "v1.mbox").write_bytes(version(1, "65535"))
    cli("series", "import", tmp_path / "v1.mbox", "--name", "dummy-mtu", check=0)
    assert not (cli.store / "dummy-mtu" / "v1" / "replies.mbox").exists()
    v2 = tmp_path / "v2.mbox"
    v2.write_bytes(version(2, "ETH_MAX_MTU"))
    (f,) = check(cli, v2)
    assert f["severity"] == "info" and f["message"] == (
        "review follow-up: unknown, v1's thread replies are not in the store (imported "
        "without replies, or before napipatch kept them)")


# ------------------------------------------------------------ hostile replies
def test_hostile_replies_give_no_crash_and_no_false_warning(cli, tmp_path):
    whole = "".join(f"> {ln}\n" for ln in version(1, "65535").decode().split("\n")[12:])
    thread = v1_thread() + b"".join([
        # quoted text that matches nothing of the patch
        review("Ann Other <ann@example.org>", "ann@x",
               "> +\tthis_is_in_no_patch(dev);\n\nWhere does this come from?\n"),
        # the whole patch quoted, a word at the end
        review("Bob Whole <bob@example.org>", "bob@x", whole + "\nI do not like this patch.\n"),
        # the author's address under another name: the author, never a reviewer
        review("Not Ada <ada@example.org>", "fake@x",
               "> +\tdev->min_mtu = 68;\n\nThis line is wrong.\n"),
        # not UTF-8: left out with a reason
        review("Zé <ze@example.org>", "ze@x", "> +\tdev->min_mtu = 68;\n\nPourquoi 68 ?\n",
               charset="UTF-8").replace(b"Pourquoi", b"Pourquoi \xe9"),
        # a reply to a mail that is not in the thread
        review("Lost Soul <lost@example.org>", "lost@x", "> x\n\nWhat?\n", to="elsewhere@x",
               refs="elsewhere@x"),
    ])
    (tmp_path / "v1.mbox").write_bytes(thread)
    cp = cli("series", "import", tmp_path / "v1.mbox", "--name", "dummy-mtu", check=0)
    assert "ze@x" in cp.stderr and "reply left out" in cp.stderr
    v2 = tmp_path / "v2.mbox"
    v2.write_bytes(version(2, "ETH_MAX_MTU"))
    found = check(cli, v2)
    assert [w["message"].split(" on ")[0] for w in warnings(found)] == \
        ["Zoe Reviewer <zoe@example.org>"]
    assert any("Ann Other" in f["message"] and f["severity"] == "info" for f in found)
    assert any("Bob Whole" in f["message"] for f in found)
    assert not any("Not Ada" in f["message"] for f in found)
    shown = cli("series", "show", "dummy-mtu@v1", "--replies", check=0).stdout
    assert "<lost@x>" in shown and "a reply to no mail of this version" in shown


def test_a_thousand_replies_stay_bounded_and_past_the_bound_is_one_line(cli, tmp_path):
    many = b"".join(review(f"R{i} <r{i}@example.org>", f"m{i}@x",
                           f"> +\tdev->min_mtu = 68;\n\nComment number {i} on this line.\n")
                    for i in range(1000))
    imported(cli, tmp_path, v1_thread() + many)
    v2 = tmp_path / "v2.mbox"
    v2.write_bytes(version(2, "ETH_MAX_MTU"))
    assert len(warnings(check(cli, v2))) == 1001
    too_many = v1_thread() + many + many.replace(b"@x>", b"@y>") + many.replace(b"@x>", b"@z>")
    (tmp_path / "huge.mbox").write_bytes(too_many)
    cp = cli("series", "import", tmp_path / "huge.mbox", "--name", "huge")
    assert cp.returncode == 2 and "Traceback" not in cp.stderr
    assert "3006 replies; napipatch keeps at most 2000" in cp.stderr.strip().splitlines()[-1]


# ------------------------------------------------------------ the real thread
def real_store(cli) -> None:
    shutil.copytree(ROOT / "series" / "threaded-busy-poll", cli.store / "threaded-busy-poll")
    cli("series", "import", V4, "--name", "threaded-busy-poll", "--version", "4", "--force",
        check=0)


def test_the_real_v4_thread_judged_against_v5(cli):
    real_store(cli)
    shown = cli("series", "show", "threaded-busy-poll@v4", "--replies", check=0).stdout
    assert shown.count("<2025032") == 17
    found = check(cli, "threaded-busy-poll@v5")
    states = sorted(f["message"].split(":")[0] if f["severity"] == "info" else "open"
                    for f in found)
    assert states == sorted(["answered"] * 4 + ["changed"] * 4 + ["mentioned"] * 4
                            + ["open"] + ["unanswered"] * 5)
    (w,) = warnings(found)
    assert (w["file"], w["line"], w["patch"]) == ("Documentation/netlink/specs/netdev.yaml", 260, 4)
    assert "Joe Damato" in w["message"] and "uint instead of u32" in w["message"]
    assert "https://lore.kernel.org/all/20250321025221.r5-jdamato@reconstructed.invalid/" \
        in w["message"]
    def state(first: str) -> str:
        (got,) = [f["message"].split(":")[0] for f in found
                  if f["severity"] == "info" and f'"{first}' in f["message"]]
        return got
    assert state("Please make this a real kdoc") == "changed"
    assert state("As mentioned in the previous review") == "mentioned"  # napi_complete_done
    assert state("Doesn't Documentation/networking/net_cachelines") == "mentioned"
    assert state("In general, when sending the patches") == "answered"
    assert state("And we should probably have a test") == "unanswered"


def test_the_changelog_draft_of_v5_has_a_line_per_v4_comment(cli):
    real_store(cli)
    out = cli("series", "changelog", "threaded-busy-poll@v5", check=0).stdout.splitlines()
    assert out[0] == "v5:" and len(out) == 2 + 18
    assert any(ln.startswith(" - TODO (not done) patch 1: I think the type should be uint")
               and "(Joe Damato, https://lore.kernel.org/all/20250321025221.r5" in ln
               for ln in out)
    cp = cli("series", "changelog", "threaded-busy-poll@v4")
    assert cp.returncode == 2 and "v3's review comments are unknown" in cp.stderr


def test_a_broken_replies_file_in_the_store_gives_no_traceback(cli, tmp_path):
    imported(cli, tmp_path, v1_thread())
    (cli.store / "dummy-mtu" / "v1" / "replies.mbox").write_bytes(
        b"From mboxrd@z Thu Jan  1 00:00:00 1970\n\xff\xfe\x00junk\n\nFrom nowhere\n")
    v2 = tmp_path / "v2.mbox"
    v2.write_bytes(version(2, "ETH_MAX_MTU"))
    (f,) = check(cli, v2)
    assert f["severity"] == "info" and "replies.mbox: not an mbox: binary data" in f["message"]
    cp = cli("series", "show", "dummy-mtu@v1", "--replies")
    assert cp.returncode == 2 and cp.stderr == \
        "napipatch: error: dummy-mtu@v1/replies.mbox: not an mbox: binary data\n"
