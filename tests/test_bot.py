"""The CI bot end to end: a real public-inbox, a real SMTP server, kill -9.

Mails reach the archive through public-inbox-mda (and are served over
http by public-inbox-httpd), the bot runs as ``napipatch bot once|run``
subprocesses, and replies are captured by an aiosmtpd server on loopback.
"""

from __future__ import annotations

import email
import email.policy
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller

from conftest import LORE, commit_files, edit, git

V4 = LORE / "threaded-busy-poll-v4.mbox"
V3 = LORE / "threaded-busy-poll-v3-cover.mbox"
LIST = "netdev@example.org"
BOT = "napipatch-bot <bot@example.org>"
DEV_C_MAINTAINERS = ["edumazet@google.com", "kuba@kernel.org", "pabeni@redhat.com",
                     "horms@kernel.org", "netdev@vger.kernel.org"]

# The tests that use an archive need public-inbox (scripts/install.sh
# installs it): the ``inbox`` fixture fails them when it is missing, so a
# CI without it cannot pass by skipping the bot suite.
HAVE_PUBLIC_INBOX = shutil.which("public-inbox-mda") is not None


# ---------------------------------------------------------------- helpers
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mbox_messages(path: Path) -> list[bytes]:
    parts = path.read_bytes().split(b"From mboxrd@z Thu Jan  1 00:00:00 1970\n")
    return [p for p in parts if p.strip()]


def header(raw: bytes, name: str) -> str:
    return str(email.message_from_bytes(raw, policy=email.policy.default)[name] or "")


class Inbox:
    """A public-inbox v2 archive (public-inbox-init -V2 -L full)."""

    def __init__(self, root: Path, port: int | None = None):
        self.root = root
        self.dir = root / "netdev"
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/netdev"
        self.env = dict(os.environ, PI_CONFIG=str(root / "config"), HOME=str(root))
        self._run("public-inbox-init", "-V2", "-L", "full", "netdev", str(self.dir), self.url, LIST)
        self._run("git", "config", "-f", str(root / "config"), "publicinboxmda.spamcheck", "none")
        self.httpd: subprocess.Popen | None = None

    def _run(self, *cmd, input=None):
        cp = subprocess.run(cmd, env=self.env, input=input, capture_output=True)
        assert cp.returncode == 0, (cmd, cp.stderr.decode(errors="replace"))

    def deliver(self, *msgs: bytes) -> None:
        for m in msgs:
            self._run("env", f"ORIGINAL_RECIPIENT={LIST}", "public-inbox-mda", "--no-precheck",
                      input=m)

    def serve(self) -> str:
        self.httpd = subprocess.Popen(["public-inbox-httpd", "-l", f"http://127.0.0.1:{self.port}"],
                                      env=self.env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self.url
            except OSError:
                time.sleep(0.05)
        raise AssertionError("public-inbox-httpd did not start")

    def stop(self):
        if self.httpd:
            self.httpd.terminate()
            self.httpd.wait(timeout=30)


class Capture:
    def __init__(self):
        self.mails: list[tuple[str, list[str], bytes]] = []

    async def handle_DATA(self, server, session, envelope):
        self.mails.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content
                           or envelope.content))
        return "250 OK"


class Smtp:
    """A real SMTP server on loopback that keeps what it is sent."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        self.capture = Capture()
        self.controller = None

    def start(self):
        self.controller = Controller(self.capture, hostname="127.0.0.1", port=self.port)
        self.controller.start()
        return self

    def stop(self):
        if self.controller:
            self.controller.stop()
            self.controller = None

    @property
    def mails(self):
        return self.capture.mails


@pytest.fixture
def inbox(tmp_path):
    if not HAVE_PUBLIC_INBOX:
        pytest.fail("public-inbox-mda missing: scripts/install.sh installs public-inbox")
    ib = Inbox(tmp_path / "pi")
    yield ib
    ib.stop()


@pytest.fixture
def smtp():
    s = Smtp().start()
    yield s
    s.stop()


def write_config(tmp_path: Path, source: str, smtp_port: int | None = None, *, tree=None,
                 extra: str = "", policy="problems", incomplete_after=3600, dry_run=False,
                 rate=10, skip=("checkpatch", "callsites", "ynl"), start="beginning",
                 cc_list: bool = False) -> Path:
    key = "url" if source.startswith("http") else "path"
    cfg = tmp_path / "bot.toml"
    text = f"""
[state]
dir = "{tmp_path / 'state'}"

[bot]
interval = 0.5
incomplete_after = {incomplete_after}

[[inbox]]
name = "netdev"
{key} = "{source}"
address = "{LIST}"
start = "{start}"

[reply]
policy = "{policy}"
from = "{BOT}"
cc = ["ci-log@example.org"]
rate_per_hour = {rate}
{'cc_list = true' if cc_list else ''}
{f'dry_run_dir = "{tmp_path / "out"}"' if dry_run else ''}

[smtp]
host = "127.0.0.1"
port = {smtp_port or 1}
timeout = 10

[checks]
skip = {list(skip)!r}
""".replace("'", '"')
    if tree:
        text += f'\n[tree]\npath = "{tree}"\n'
    cfg.write_text(text + extra)
    return cfg


def once(cli, cfg, env=None, check=0):
    return cli("bot", "once", "--config", cfg, "-v", env=env, check=check)


def status(cli, cfg) -> str:
    return cli("bot", "status", "--config", cfg, check=0).stdout


def own_series(repo: Path, base: str, outdir: Path, subjects: list[str], cover: bool = True,
               author=("Test Author", "author@example.org")) -> list[bytes]:
    """Commits on ``base`` (one comment line each in net/core/dev.c), sent the
    way git send-email threads them: format-patch --thread --cover-letter."""
    parent = base
    for i, subj in enumerate(subjects):
        text = edit(repo, parent, "net/core/dev.c", "#include <linux/uaccess.h>\n",
                    f"#include <linux/uaccess.h>\n/* bot test line {i} of {subj[:20]} */\n")
        parent = commit_files(repo, parent, {"net/core/dev.c": text},
                              f"{subj}\n\nA line of comment for the CI bot tests, number {i}.\n",
                              author=author)
    # Addressed as a sender would: the list, and get_maintainer.pl's people
    # for net/core/dev.c (NETWORKING [GENERAL]), so cc-maintainers is clean.
    extra = ["--thread=shallow", f"--to={LIST}", "--subject-prefix=PATCH net-next",
             *(f"--cc={a}" for a in DEV_C_MAINTAINERS)]
    if cover:
        extra.append("--cover-letter")
    outdir.mkdir(parents=True, exist_ok=True)
    # The cover letter is From the committer: the same person here.
    git(repo, "format-patch", "-q", f"--base={base}", "-o", str(outdir), *extra,
        f"{base}..{parent}", env={"GIT_COMMITTER_NAME": author[0], "GIT_COMMITTER_EMAIL": author[1]})
    d = outdir
    out = []
    for f in sorted(d.glob("*.patch")):
        data = f.read_bytes().split(b"\n", 1)[1]  # drop the "From <sha>" line
        data = data.replace(b"*** SUBJECT HERE ***", b"Comment lines for the CI bot")
        data = data.replace(b"*** BLURB HERE ***", b"Two comments, to test the bot.")
        out.append(data)
    return out


def m_cc(raw: bytes) -> str:
    return str(parsed(raw)["Cc"] or "")


def parsed(raw: bytes):
    """The mail as a reader's client sees it (SMTP's CRLF line ends undone)."""
    return email.message_from_bytes(raw.replace(b"\r\n", b"\n"), policy=email.policy.default)


# ---------------------------------------------------------------- tests
@pytest.mark.tree
def test_v4_thread_over_http_waits_then_replies(cli, tmp_path, inbox, smtp, kernel_tree):
    """The real v4 thread, delivered over time and followed over http."""
    msgs = mbox_messages(V4)
    cover, patches, replies = msgs[0], msgs[1:5], msgs[5:]
    url = inbox.serve()
    tag = git(kernel_tree, "rev-parse", "HEAD")
    cfg = write_config(tmp_path, url, smtp.port, tree=kernel_tree,
                       extra=f'branches = {{net-next = "{tag}", net = "{tag}"}}\n')
    inbox.deliver(mbox_messages(V3)[0], cover, patches[0])
    cp = once(cli, cfg)
    assert "3 new messages" in cp.stdout
    st = status(cli, cfg)
    assert "superseded v3 0/4 'Add support to do threaded napi busy poll'" in st
    assert "waiting    v4 1/4 'Add support to do threaded napi busy poll' " \
           "by skhawaja@google.com (follows #1)" in st
    assert smtp.mails == []

    inbox.deliver(*patches[1:], *replies)
    cp = once(cli, cfg)
    assert "1 series checked" in cp.stdout and "1 sent" in cp.stdout, cp.stdout
    assert len(smtp.mails) == 1
    mail_from, rcpts, raw = smtp.mails[0]
    m = parsed(raw)
    assert mail_from == "bot@example.org"
    # reply.cc_list is false by default: the list is not Cc'd.
    assert sorted(rcpts) == ["ci-log@example.org", "skhawaja@google.com"]
    assert m_cc(raw) == "ci-log@example.org"
    assert m["From"] == BOT
    assert m["To"] == "Samiullah Khawaja <skhawaja@google.com>"
    assert m["Subject"] == "Re: [PATCH net-next v4 0/4] Add support to do threaded napi busy poll"
    assert m["In-Reply-To"] == "<20250321021517.0-skhawaja@reconstructed.invalid>"
    assert "<20250321021517.0-skhawaja@reconstructed.invalid>" in m["References"]
    assert m["Auto-Submitted"] == "auto-generated"
    body = m.get_content()
    assert body.startswith("Hi Samiullah,\n")
    assert "[static check ERROR on net-next/" in body
    assert f"base:           {tag} (no usable base-commit; net-next branch {tag})" in body
    assert f"url:            {url}/20250321021517.0-skhawaja@reconstructed.invalid/" in body
    thread = f"{url}/20250321021517.0-skhawaja@reconstructed.invalid/T/"
    assert f"thread:         {thread}\n" in body
    # The reproduce block: the same findings locally, from the archive.
    assert "reproduce (in a kernel tree at ~/linux that has the base):\n" in body
    assert f"        napipatch series import {thread} --name " in body
    name = re.search(r"--name (\S+)\n", body).group(1)
    assert f"        napipatch check {name}@v4 --tree ~/linux --base {tag}\n" in body
    assert "previous:       v3 <20250205001000.0-skhawaja@reconstructed.invalid>" in body
    assert "SERIES: [PATCH net-next v4 0/4]" in body
    assert "warning: [base-commit] no base-commit: in the cover letter" in body
    p1 = body.index("PATCH 1/4: [PATCH net-next v4 1/4]")
    p3 = body.index("PATCH 3/4: [PATCH net-next v4 3/4]")
    assert p1 < body.index("include/linux/netdevice.h:594: warning: [kdoc]") < p3
    assert body.index("[cachelines] 'threaded' in struct net_device changed") > p3
    assert "error: [apply]" in body  # made against 2025 net-next, not 6.12
    st = status(cli, cfg)
    assert "reported   v4 4/4" in st and "reply report <" in st and "> sent" in st
    assert m["Message-ID"].strip("<>") in st

    # Nothing is ever sent twice, and the bot's own reply coming back via the
    # list is just another mail.
    inbox.deliver(raw)
    cp = once(cli, cfg)
    assert "1 new messages" in cp.stdout and "0 sent" in cp.stdout
    assert len(smtp.mails) == 1


@pytest.mark.tree
def test_reply_reproduce_block_gives_the_same_findings(cli, tmp_path, inbox, smtp, kernel_tree,
                                                       base_commit):
    """The reply's reproduce commands, run as written (with the tree for
    ~/linux), find what the bot found."""
    msgs = own_series(kernel_tree, base_commit, tmp_path / "two",
                      ["net: core: note the first thing", "Note the second thing"])
    url = inbox.serve()
    cfg = write_config(tmp_path, url, smtp.port, tree=kernel_tree, policy="always",
                       skip=("checkpatch", "callsites", "ynl", "kdoc", "cachelines"))
    inbox.deliver(*msgs)
    once(cli, cfg)
    body = parsed(smtp.mails[0][2]).get_content()
    block = body.split("reproduce (in a kernel tree at ~/linux that has the base):\n", 1)[1]
    cmds = [ln.strip() for ln in block.splitlines()[:2]]
    assert cmds[0].startswith(f"napipatch series import {url}/") and cmds[0].split()[3].endswith("/T/")
    assert cmds[1].endswith(f" --tree ~/linux --base {base_commit}")
    cli(*cmds[0].split()[1:], check=0)
    args = [str(kernel_tree) if a == "~/linux" else a for a in cmds[1].split()[1:]]
    data = json.loads(cli(*args, "--skip", "checkpatch,callsites,ynl,kdoc,cachelines",
                          "--format", "json").stdout)
    total = re.search(r"^total: (\d+) errors?, (\d+) warnings?", body, re.M).groups()
    assert (str(data["summary"]["errors"]), str(data["summary"]["warnings"])) == total
    assert data["summary"]["warnings"] >= 1  # the patch without a subsystem prefix


@pytest.mark.tree
def test_own_series_base_commit_and_policy(cli, tmp_path, inbox, smtp, kernel_tree, base_commit):
    """A series of our own with base-commit, threaded by format-patch; a clean
    single patch gets no reply under the default policy."""
    two = own_series(kernel_tree, base_commit, tmp_path / "two",
                     ["net: core: note the first thing", "Note the second thing"])
    one = own_series(kernel_tree, base_commit, tmp_path / "one",
                     ["net: core: a single clean comment"], cover=False,
                     author=("Other Person", "other@example.org"))
    cfg = write_config(tmp_path, str(inbox.dir), smtp.port, tree=kernel_tree)
    inbox.deliver(two[0], two[1])
    once(cli, cfg)
    assert "waiting    v1 1/2 'Comment lines for the CI bot'" in status(cli, cfg)
    assert smtp.mails == []

    inbox.deliver(two[2], one[0])
    cp = once(cli, cfg)
    assert "2 series checked" in cp.stdout, cp.stdout
    assert len(smtp.mails) == 1
    _f, rcpts, raw = smtp.mails[0]
    m = parsed(raw)
    assert m["To"] == "Test Author <author@example.org>"
    assert m["Subject"] == "Re: [PATCH net-next 0/2] Comment lines for the CI bot"
    assert m["In-Reply-To"] == header(two[0], "Message-ID")
    body = m.get_content()
    assert f"base:           {base_commit} (base-commit)" in body
    assert "[static check WARNING on net-next/base-commit " in body
    assert "PATCH 1/2" not in body  # nothing to say about patch 1
    assert "PATCH 2/2: [PATCH net-next 2/2] Note the second thing\n" \
           "  warning: [subject] no subsystem prefix in 'Note the second thing'" in body
    assert "apply (pass)" in body and "kdoc (pass)" in body
    st = status(cli, cfg)
    assert "'net: core: a single clean comment' by other@example.org 0E/0W -- clean: no reply (policy)" in st


@pytest.mark.tree
def test_incomplete_notice_then_report_dry_run(cli, tmp_path, inbox, kernel_tree, base_commit):
    """Missing patches past incomplete_after: one 'incomplete' reply, then the
    report when the rest arrives; dry-run writes mails to a directory."""
    two = own_series(kernel_tree, base_commit, tmp_path / "two",
                     ["net: core: first", "net: core: second"])
    cfg = write_config(tmp_path, str(inbox.dir), incomplete_after=0, dry_run=True,
                       policy="always")
    inbox.deliver(two[0], two[1])
    once(cli, cfg)
    once(cli, cfg)
    out = sorted((tmp_path / "out").glob("*.eml"))
    assert len(out) == 1
    m = parsed(out[0].read_bytes())
    assert m["Subject"] == "Re: [PATCH net-next 0/2] Comment lines for the CI bot"
    body = m.get_content()
    assert "patch 2/2 did not reach the list within 0 minutes" in body
    assert "have: [PATCH net-next 1/2] net: core: first" in body
    assert "incomplete v1 1/2" in status(cli, cfg)

    inbox.deliver(two[2])
    once(cli, cfg)
    out = sorted((tmp_path / "out").glob("*.eml"))
    assert len(out) == 2
    body = parsed(out[1].read_bytes()).get_content()
    assert "nothing to report" in body and "[static check OK on net-next (diff-only checks)]" in body
    st = status(cli, cfg)
    assert "reported   v1 2/2" in st and "reply incomplete <" in st and "reply report <" in st


@pytest.mark.tree
def test_rate_limit_per_author(cli, tmp_path, inbox, kernel_tree, base_commit):
    a = own_series(kernel_tree, base_commit, tmp_path / "a", ["First thing without prefix"], cover=False)
    b = own_series(kernel_tree, base_commit, tmp_path / "b", ["Second thing without prefix"], cover=False)
    cfg = write_config(tmp_path, str(inbox.dir), dry_run=True, rate=1)
    inbox.deliver(a[0], b[0])
    once(cli, cfg)
    assert len(list((tmp_path / "out").glob("*.eml"))) == 1
    st = status(cli, cfg)
    assert "ratelimited -- not sent: 1 replies to author@example.org in the last hour" in st


@pytest.mark.tree
def test_hostile_headers_and_bad_mail(cli, tmp_path, inbox, smtp, kernel_tree, base_commit):
    """CR/LF smuggled into the subject and name never reach a header or the
    envelope; unreadable mail is logged and skipped without stopping the pass."""
    [patch] = own_series(kernel_tree, base_commit, tmp_path / "p", ["Harmless looking change"],
                         cover=False)
    head, body = patch.split(b"\n\n", 1)
    lines = [ln for ln in head.split(b"\n") if not ln.startswith((b"Subject:", b"From:", b" "))]
    lines.append(b"Subject: =?utf-8?q?[PATCH_net-next]_evil=0D=0ABcc:_victim@example.org?=")
    # A Unicode line separator and NUL in the name (the email package itself
    # refuses CR/LF in an address: that mail is unreadable, below).
    hostile = b"\n".join(lines + [
        b"From: =?utf-8?q?Mallory=E2=80=A8Cc:_victim2@example.org=00?= <mallory@example.org>"]) \
        + b"\n\n" + body
    crlf_from = b"\n".join(lines + [
        b"From: =?utf-8?q?Mallory=0D=0ACc:_victim3@example.org?= <mallory@example.org>"]) \
        + b"\n\n" + body
    crlf_from = re.sub(rb"(?im)^(message-id: <)", rb"\1crlf.", crlf_from, count=1)
    latin = re.sub(rb"(?im)^(message-id: <)", rb"\1latin.", patch, count=1).replace(
        b"A line of comment", b"Caf\xe9 \xff line of comment")
    cfg = write_config(tmp_path, str(inbox.dir), smtp.port, policy="always", cc_list=True)
    raw8bit = (b"From: Ren\xe9 <rene@example.org>\nSubject: Re: caf\xe9 \xff\nMessage-ID: <r8@x>\n"
               b"Date: Thu, 01 Jan 2026 00:00:00 +0000\n\nraw 8-bit headers\n")
    inbox.deliver(latin, crlf_from, raw8bit, hostile)
    cp = once(cli, cfg)
    assert "(2 unreadable)" in cp.stdout
    assert "unreadable mail, skipped" in cp.stderr and "not valid utf-8" in cp.stderr
    assert "address parts cannot contain CR or LF" in cp.stderr
    assert len(smtp.mails) == 1
    mail_from, rcpts, raw = smtp.mails[0]
    assert sorted(rcpts) == ["ci-log@example.org", "mallory@example.org", LIST]
    hdr = raw.split(b"\r\n\r\n", 1)[0]
    assert b"\nBcc:" not in hdr and b"\nCc: victim" not in hdr and b"victim2@example.org>" not in hdr
    assert b"victim3" not in raw
    m = parsed(raw)
    assert m["Bcc"] is None
    assert m["Cc"] == f"ci-log@example.org, {LIST}"
    assert m["Subject"] == "Re: [PATCH net-next] evil Bcc: victim@example.org"
    assert m["To"] == '"Mallory Cc: victim2@example.org" <mallory@example.org>'
    assert "messages: 4 seen, 1 patch mails, 2 unreadable" in status(cli, cfg)


@pytest.mark.tree
def test_start_now_skips_history(cli, tmp_path, inbox, kernel_tree, base_commit):
    """A bot started on an existing archive replies to new series only."""
    [old] = own_series(kernel_tree, base_commit, tmp_path / "old", ["Old work"], cover=False)
    [new] = own_series(kernel_tree, base_commit, tmp_path / "new", ["New work"], cover=False)
    cfg = write_config(tmp_path, str(inbox.dir), dry_run=True, start="now")
    inbox.deliver(old)
    assert "pass: 0 new messages" in once(cli, cfg).stdout
    inbox.deliver(new)
    assert "pass: 1 new messages" in once(cli, cfg).stdout
    [mail] = (tmp_path / "out").glob("*.eml")
    assert parsed(mail.read_bytes())["Subject"] == "Re: [PATCH net-next] New work"


def test_tree_tag_branch_fetched_from_remote(cli, tmp_path, inbox):
    """No base-commit: the subject's tree tag picks the configured branch,
    fetched fresh from the tree's remote before the series is applied."""
    up, tree = tmp_path / "upstream", tmp_path / "tree"
    ident = {"GIT_AUTHOR_NAME": "Up", "GIT_AUTHOR_EMAIL": "up@example.org",
             "GIT_COMMITTER_NAME": "Up", "GIT_COMMITTER_EMAIL": "up@example.org"}
    subprocess.run(["git", "init", "-q", "-b", "main", str(up)], check=True)
    (up / "a.c").write_text("int a;\n")
    git(up, "add", "a.c")
    git(up, "commit", "-q", "-m", "a", env=ident)
    subprocess.run(["git", "clone", "-q", str(up), str(tree)], check=True)
    (up / "b.c").write_text("int b;\n")  # only upstream has it after the clone
    git(up, "add", "b.c")
    git(up, "commit", "-q", "-m", "b", env=ident)
    head = git(up, "rev-parse", "HEAD")
    git(up, "checkout", "-q", "-b", "work")  # the author's branch, made on main
    (up / "b.c").write_text("int b = 1;\n")
    git(up, "commit", "-q", "-am", "net: b: initialise b\n\nSigned-off-by: Up <up@example.org>",
        env=ident)
    patch = git(up, "format-patch", "-1", "--stdout", "--subject-prefix=PATCH net",
                "--thread=shallow", env=ident).split("\n", 1)[1]
    cfg = tmp_path / "bot.toml"
    cfg.write_text(f"""
[state]
dir = "{tmp_path / 'state'}"
[[inbox]]
name = "netdev"
path = "{inbox.dir}"
start = "beginning"
[tree]
path = "{tree}"
remote = "origin"
branches = {{net = "main", net-next = "next"}}
[reply]
policy = "always"
dry_run_dir = "{tmp_path / 'out'}"
[checks]
only = ["apply", "subject"]
""")
    inbox.deliver(patch.encode())
    once(cli, cfg)
    [mail] = (tmp_path / "out").glob("*.eml")
    body = parsed(mail.read_bytes()).get_content()
    assert f"base:           {head} (no usable base-commit; net branch main of origin)" in body
    assert "[static check OK on net/main]" in body
    assert "apply (pass), subject (pass)" in body


IDENT = {"GIT_AUTHOR_NAME": "Up", "GIT_AUTHOR_EMAIL": "up@example.org",
         "GIT_COMMITTER_NAME": "Up", "GIT_COMMITTER_EMAIL": "up@example.org"}


def small_upstream(up: Path, files: dict[str, str]) -> str:
    """A repository with one commit of ``files`` on main; its id."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(up)], check=True)
    for name, text in files.items():
        (up / name).parent.mkdir(parents=True, exist_ok=True)
        (up / name).write_text(text)
    git(up, "add", ".")
    git(up, "commit", "-q", "-m", "base", env=IDENT)
    return git(up, "rev-parse", "HEAD")


def one_patch_on(repo: Path, base: str, prefix: str = "PATCH net") -> bytes:
    """A one-patch series on ``base`` with its base-commit: trailer, as mailed."""
    git(repo, "checkout", "-q", "-b", "work", base)
    (repo / "a.c").write_text("int a = 1;\n")
    git(repo, "commit", "-q", "-am", "net: a: initialise a\n\nSigned-off-by: Up <up@example.org>",
        env=IDENT)
    return git(repo, "format-patch", "-1", "--stdout", f"--subject-prefix={prefix}",
               f"--base={base}", env=IDENT).split("\n", 1)[1].encode()


def test_check_that_times_out_is_named_and_never_called_clean(cli, tmp_path, inbox, smtp):
    """A check past napipatch.check-timeout (the tree's own checkpatch.pl,
    which hangs here) gives no result: the reply says which check, why,
    and that the report is incomplete; nothing calls the series clean."""
    tree = tmp_path / "tree"
    base = small_upstream(tree, {"a.c": "int a;\n",
                                 "scripts/checkpatch.pl": "sleep 120;\n"})
    git(tree, "config", "napipatch.check-timeout", "2")
    patch = one_patch_on(tree, base)
    cfg = write_config(tmp_path, str(inbox.dir), smtp.port, tree=tree)
    cfg.write_text(cfg.read_text().replace('skip = ["checkpatch", "callsites", "ynl"]',
                                           'only = ["subject", "checkpatch"]'))
    inbox.deliver(patch)
    cp = once(cli, cfg)
    assert "1 series checked" in cp.stdout and "1 sent" in cp.stdout, cp.stdout
    [(_f, _rcpts, raw)] = smtp.mails
    body = parsed(raw).get_content()
    assert f"[static check INCOMPLETE on net/base-commit {base[:12]}]" in body
    assert "this report is incomplete" in body
    assert "1 of 2 checks completed; 1 timed out: checkpatch." in body
    assert "checks:         checkpatch (timeout), subject (pass)\n" in body
    assert "did not run:    checkpatch: timed out (ran past 2 s)\n" in body
    assert "warning: [checkpatch] check timed out on patch 1" in body
    assert "nothing to report" not in body and "clean" not in body.lower()
    st = status(cli, cfg)
    assert "-- incomplete: 1 of 2 checks completed; 1 timed out: checkpatch" in st, st
    assert "clean" not in st


def test_base_commit_behind_is_measured_against_the_bots_branch(cli, tmp_path, inbox):
    """A series on a usable but old base-commit is applied there, and how
    far behind it is counts against the branch for its tree tag (fetched
    from the remote first), not the tree's HEAD, which never moves."""
    up, tree = tmp_path / "upstream", tmp_path / "tree"
    base = small_upstream(up, {"a.c": "int a;\n"})
    subprocess.run(["git", "clone", "-q", str(up), str(tree)], check=True)
    git(tree, "config", "napipatch.base-behind-warn", "2")
    for i in range(4):  # upstream moves on after the clone: only a fetch sees it
        (up / f"n{i}.c").write_text(f"int n{i};\n")
        git(up, "add", f"n{i}.c")
        git(up, "commit", "-q", "-m", f"n{i}", env=IDENT)
    patch = one_patch_on(up, base)
    cfg = tmp_path / "bot.toml"
    cfg.write_text(f"""
[state]
dir = "{tmp_path / 'state'}"
[[inbox]]
name = "netdev"
path = "{inbox.dir}"
start = "beginning"
[tree]
path = "{tree}"
remote = "origin"
branches = {{net = "main"}}
[reply]
policy = "always"
dry_run_dir = "{tmp_path / 'out'}"
[checks]
only = ["apply", "base-commit"]
""")
    inbox.deliver(patch)
    once(cli, cfg)
    [mail] = (tmp_path / "out").glob("*.eml")
    body = parsed(mail.read_bytes()).get_content()
    assert f"base:           {base} (base-commit)" in body
    assert f"[static check WARNING on net/base-commit {base[:12]}]" in body
    assert f"warning: [base-commit] base-commit {base[:12]} is 4 commits behind " \
           "refs/remotes/origin/main" in body
    assert "apply (pass), base-commit (warn)" in body


@pytest.mark.parametrize("prefix", ["PATCHv3 net", "PATCH bpf-next/net v2", "RFC PATCH net"])
def test_every_netdev_subject_form_is_a_patch(cli, tmp_path, inbox, prefix):
    """``[PATCHv3 net ...]`` and the other forms b4 reads are patches to the bot."""
    repo = tmp_path / "repo"
    ident = {"GIT_AUTHOR_NAME": "Up", "GIT_AUTHOR_EMAIL": "up@example.org",
             "GIT_COMMITTER_NAME": "Up", "GIT_COMMITTER_EMAIL": "up@example.org"}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "a.c").write_text("int a;\n")
    git(repo, "add", "a.c")
    git(repo, "commit", "-q", "-m", "a", env=ident)
    (repo / "a.c").write_text("int a = 1;\n")
    git(repo, "commit", "-q", "-am", "net: a: initialise a\n\nSigned-off-by: Up <up@example.org>",
        env=ident)
    patch = git(repo, "format-patch", "-1", "--stdout", f"--subject-prefix={prefix}",
                env=ident).split("\n", 1)[1]
    cfg = tmp_path / "bot.toml"
    cfg.write_text(f"""
[state]
dir = "{tmp_path / 'state'}"
[[inbox]]
name = "netdev"
path = "{inbox.dir}"
start = "beginning"
[tree]
path = "{repo}"
[reply]
policy = "always"
dry_run_dir = "{tmp_path / 'out'}"
[checks]
only = ["subject"]
""")
    inbox.deliver(patch.encode())
    assert "1 series checked" in once(cli, cfg).stdout
    [mail] = (tmp_path / "out").glob("*.eml")
    assert parsed(mail.read_bytes())["Subject"] == f"Re: [{prefix}] net: a: initialise a"


@pytest.mark.tree
def test_smtp_down_then_up(cli, tmp_path, inbox, kernel_tree, base_commit):
    [patch] = own_series(kernel_tree, base_commit, tmp_path / "p", ["No prefix here"], cover=False)
    port = free_port()
    cfg = write_config(tmp_path, str(inbox.dir), port)
    inbox.deliver(patch)
    cp = once(cli, cfg)
    assert "0 sent, 1 waiting to be sent" in cp.stdout
    assert "stays queued" in cp.stderr
    assert "queued (attempts 1) -- 127.0.0.1:" in status(cli, cfg)
    server = Smtp(port).start()
    try:
        cp = once(cli, cfg)
        assert "1 sent, 0 waiting" in cp.stdout
        assert len(server.mails) == 1
        once(cli, cfg)
        assert len(server.mails) == 1
    finally:
        server.stop()


@pytest.mark.tree
@pytest.mark.parametrize("point", ["after-ingest", "after-assemble", "checking", "after-queue",
                                   "before-send", "after-log"])
def test_crash_and_restart_sends_once(cli, tmp_path, inbox, smtp, kernel_tree, base_commit, point):
    """SIGKILL at each step (fault injection), restart: exactly one reply."""
    msgs = own_series(kernel_tree, base_commit, tmp_path / "s", ["Lacks a prefix", "net: fine"])
    cfg = write_config(tmp_path, str(inbox.dir), smtp.port)
    inbox.deliver(*msgs)
    cp = once(cli, cfg, env={"NAPIPATCH_BOT_CRASH_AT": point}, check=None)
    assert cp.returncode == -signal.SIGKILL, (cp.stdout, cp.stderr)
    assert f"fault injection: SIGKILL at {point}" in cp.stderr
    once(cli, cfg)
    once(cli, cfg)
    assert len(smtp.mails) == 1
    st = status(cli, cfg)
    assert st.count("reply report <") == 1 and "> sent" in st


@pytest.mark.tree
def test_crash_after_smtp_accepted_reply_found_in_archive(cli, tmp_path, inbox, smtp, kernel_tree,
                                                         base_commit):
    """Killed after the server accepted the reply but before the sent-log: the
    reply came back through the list, so the restart does not send it again."""
    msgs = own_series(kernel_tree, base_commit, tmp_path / "s", ["Lacks a prefix"], cover=False)
    cfg = write_config(tmp_path, str(inbox.dir), smtp.port)
    inbox.deliver(*msgs)
    cp = once(cli, cfg, env={"NAPIPATCH_BOT_CRASH_AT": "after-send"}, check=None)
    assert cp.returncode == -signal.SIGKILL
    assert len(smtp.mails) == 1
    assert "> sending (attempts 1)" in status(cli, cfg)
    inbox.deliver(smtp.mails[0][2])  # the list echoes the bot's reply
    once(cli, cfg)
    assert len(smtp.mails) == 1
    assert "> sent (attempts 1) -- confirmed by the archive after a restart" in status(cli, cfg)


def _db_state(db: Path) -> set[str]:
    if not db.exists():
        return set()
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return {r[0] for r in con.execute("SELECT state FROM series")} | \
                   {"reply-" + r[0] for r in con.execute("SELECT state FROM replies")}
        finally:
            con.close()
    except sqlite3.Error:
        return set()


def _wait_for(pred, proc, what, limit=300):
    t0 = time.monotonic()
    while not pred():
        assert proc.poll() is None, f"bot exited early waiting for {what}"
        assert time.monotonic() - t0 < limit, f"gave up waiting for {what}"
        time.sleep(0.05)


@pytest.mark.tree
def test_daemon_sigkill_and_sigterm(cli, tmp_path, inbox, smtp, kernel_tree, base_commit):
    """A real kill -9 of `bot run` while it checks (checkpatch on the tree
    takes seconds), a restart, one reply; then SIGTERM stops it cleanly."""
    msgs = own_series(kernel_tree, base_commit, tmp_path / "s", ["Lacks a prefix", "net: fine"])
    cfg = write_config(tmp_path, str(inbox.dir), smtp.port, tree=kernel_tree, skip=())
    db = tmp_path / "state" / "bot.sqlite3"
    env = dict(os.environ, XDG_CACHE_HOME=str(cli.cache))
    cmd = [sys.executable, "-m", "napipatch", "bot", "run", "--config", str(cfg)]
    inbox.deliver(*msgs)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for(lambda: "checking" in _db_state(db), proc, "the checks to start")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    assert smtp.mails == []
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: "reply-sent" in _db_state(db), proc, "the reply")
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "stopping after this step" in err and "napipatch-bot: INFO: stopped" in err
    assert len(smtp.mails) == 1
    body = parsed(smtp.mails[0][2]).get_content()
    assert "checkpatch (" in body and "PATCH 1/2: [PATCH net-next 1/2] Lacks a prefix" in body
    once(cli, cfg)
    assert len(smtp.mails) == 1


def test_bad_config_one_line(cli, tmp_path):
    cfg = tmp_path / "bot.toml"
    cfg.write_text('[state]\ndir = "s"\n[[inbox]]\nname = "x"\npath = "y"\n[reply]\npolicy = "sometimes"\n')
    cp = cli("bot", "once", "--config", cfg)
    assert cp.returncode == 2
    assert cp.stderr.strip() == f"napipatch: error: {cfg}: reply.policy: 'sometimes' is not one " \
                                "of problems, always"
    for text, line in (
            ('[smtp]\nprot = 25\n', "smtp.prot: unknown key (did you mean port?)"),
            ('[smtp]\nport = "25"\n', "smtp.port: must be an integer, not string '25'"),
            ('[reply]\nto = ["a@b.org", "not an address"]\n',
             "reply.to[1]: 'not an address' is not an address ('Name <user@host>')"),
            ('[[inbox]]\nname = "z"\n', "inbox[1]: z: give exactly one of url or path"),
            ('[checks]\nonly = ["kdoc", "kdcc"]\n', "checks.only[1]: no such check 'kdcc' "
             "(known: ")):
        cfg.write_text('[state]\ndir = "s"\n[[inbox]]\nname = "x"\npath = "y"\n' + text)
        cp = cli("bot", "once", "--config", cfg)
        assert cp.returncode == 2 and cp.stderr.startswith(f"napipatch: error: {cfg}: {line}")
        assert cp.stderr.count("\n") == 1
    cfg.write_text('[[inbox]]\nname = "x"\npath = "y"\n')
    cp = cli("bot", "once", "--config", cfg)
    assert (cp.returncode, cp.stderr) == (2, f"napipatch: error: {cfg}: state.dir: missing\n")


@pytest.mark.tree
@pytest.mark.build
@pytest.mark.timeout(3600)  # may pay the first kernel build (pyproject.toml: timeout)
def test_bot_with_jobs_reports_a_build_break(cli, tmp_path, inbox, kernel_tree, base_commit,
                                             build_dir):
    """bot.jobs: every patch is built (here for virtio-net) and the reply
    carries the build error of the patch that broke it; bot.warnings runs
    the netdev CI's i386 build on the objects the patch changes, which
    blames the same patch."""
    text = edit(kernel_tree, base_commit, "net/core/dev.c", "#include <linux/uaccess.h>\n",
                "#include <linux/uaccess.h>\nstatic int napipatch_bot_broken = ;\n")
    c = commit_files(kernel_tree, base_commit, {"net/core/dev.c": text},
                     "net: core: break the build\n\nFor the bot's job test.\n")
    out = tmp_path / "fp"
    git(kernel_tree, "format-patch", "-q", f"--base={base_commit}", "-o", str(out),
        f"--to={LIST}", "--subject-prefix=PATCH net-next", f"{base_commit}..{c}")
    cfg = write_config(tmp_path, str(inbox.dir), dry_run=True, tree=kernel_tree,
                       extra="", skip=("checkpatch", "callsites", "ynl", "kdoc", "cachelines"))
    cfg.write_text(cfg.read_text().replace("incomplete_after = 3600",
                                           'incomplete_after = 3600\njobs = true\ntargets = ["virtio-net"]'
                                           '\nwarnings = ["build-32bit"]'))
    inbox.deliver(*[f.read_bytes().split(b"\n", 1)[1] for f in sorted(out.glob("*.patch"))])
    once(cli, cfg, env={"NAPIPATCH_BUILD_DIR": str(build_dir)})
    mails = sorted((tmp_path / "out").glob("*.eml"))
    assert len(mails) == 1
    body = parsed(mails[0].read_bytes()).get_content()
    assert "does not build for virtio-net" in body
    assert "net/core/dev.c" in body
    assert "[build-32bit] does not build (gcc ARCH=i386 allmodconfig W=1)" in body


# ------------------------------------------------ netdev process rules (#36)
# vN-1 found in the archive the bot follows, net-next's state from the
# list's own announcements, and the reply that quotes each rule once per
# series. The v1 thread (with review replies; one more, in latin-1, below)
# and the control v2 are the fixtures tests/test_history.py checks from the
# store.

HIST = Path(__file__).parent / "fixtures" / "history"
HIST_V1 = HIST / "v1.mbox"
GOOD = Path(__file__).parent / "fixtures" / "checks" / "repost-wait" / "good.mbox"
PROCESS = ("repost-wait", "new-thread", "version-link", "review-tags", "net-next-closed")
ZOE = "Tested-by: Zoé Testeuse <zoe@example.org>"


def process_config(tmp_path: Path, inbox, smtp) -> Path:
    cfg = write_config(tmp_path, str(inbox.dir), smtp.port, policy="always")
    cfg.write_text(cfg.read_text().replace('skip = ["checkpatch", "callsites", "ynl"]',
                                           f"only = {list(PROCESS)!r}".replace("'", '"')))
    return cfg


def latin1_reply() -> bytes:
    """A review reply to v1 2/2 written in latin-1 (and labelled so)."""
    return ("From: =?iso-8859-1?q?Zo=E9?= Testeuse <zoe@example.org>\n"
            "Subject: Re: [PATCH net-next 2/2] net: dummy: drop a stray blank line\n"
            "Date: Mon, 02 Nov 2026 12:30:00 +0000\nMessage-ID: <r-latin@example.org>\n"
            "In-Reply-To: <v1-2@example.org>\n"
            "References: <v1-cover@example.org> <v1-2@example.org>\n"
            "MIME-Version: 1.0\nContent-Type: text/plain; charset=ISO-8859-1\n"
            "Content-Transfer-Encoding: 8bit\n\nTrès bien, testé sur ma machine.\n\n"
            f"{ZOE}\n").encode("latin-1")


def mislabelled_reply() -> bytes:
    """A reply that says UTF-8 and is latin-1: left out, in one line."""
    return latin1_reply().replace(b"ISO-8859-1", b"UTF-8").replace(
        b"r-latin@", b"r-mislabelled@").replace(b"Zo=E9?= Testeuse <zoe@", b"Zo=E9?= <bc@")


def control() -> str:
    """v2 a day after v1, a new thread, linking v1, carrying the tags."""
    return GOOD.read_text().replace("Reviewed-by: Joe Reviewer <joe@example.org>\n",
                                    f"Reviewed-by: Joe Reviewer <joe@example.org>\n{ZOE}\n", 1)


def bad() -> str:
    """v2 ten hours after v1, in v1's thread, no link, Joe's and Zoé's tags dropped."""
    text = GOOD.read_text()
    text = text.replace("Tue, 03 Nov 2026 12:00:00 +0000", "Mon, 02 Nov 2026 20:00:00 +0000")
    text = text.replace("@example.org>\nMIME-Version", "@example.org>\nIn-Reply-To: "
                        "<v1-cover@example.org>\nReferences: <v1-cover@example.org>\n"
                        "MIME-Version", 1)
    text = text.replace(" - v1: https://lore.kernel.org/netdev/v1-cover@example.org/\n", "")
    text = text.replace("Reviewed-by: Joe Reviewer <joe@example.org>\n", "")
    return re.sub(r"<v2-", "<v2bad-", text)


def mails(text: str) -> list[bytes]:
    parts = text.encode().split(b"From mboxrd@z Thu Jan  1 00:00:00 1970\n")
    return [p for p in parts if p.strip()]


def replies_by_thread(smtp) -> dict[str, str]:
    return {str(parsed(raw)["In-Reply-To"]).strip("<>"): parsed(raw).get_content()
            for _f, _r, raw in smtp.mails}


def test_vN_minus_1_from_the_archive_the_bot_follows(cli, tmp_path, inbox, smtp):
    """v1 with review replies (one in latin-1), then two v2: one posted ten
    hours later in v1's thread, without a link, dropping both tags -- the
    reply names all four rules, each rule's letter once; the control v2 (a
    day later, a new thread, the link, the tags carried) gets none."""
    inbox.deliver(*mbox_messages(HIST_V1), latin1_reply(), mislabelled_reply(),
                  *mails(bad()), *mails(control()))
    cfg = process_config(tmp_path, inbox, smtp)
    cp = once(cli, cfg)
    assert "Traceback" not in cp.stderr
    assert re.search(r"WARNING: netdev <r-mislabelled@example.org>: reply left out: body is "
                     r"not valid utf-8 \(byte \d+\)\n", cp.stderr), cp.stderr
    # v1, still waiting when its v2 came in the same pass, is superseded.
    assert "2 series checked" in cp.stdout, cp.stdout + cp.stderr
    got = replies_by_thread(smtp)
    body = got["v2bad-cover@example.org"]
    assert "v2 was posted 2026-11-02 20:00 UTC, 8.0 hours after v1" not in body
    assert ("warning: [repost-wait] v2 was posted 2026-11-02 20:00 UTC, 10.0 hours after v1: "
            "v1 was posted 2026-11-02 10:00 UTC (Date: of its cover letter)") in body, body
    assert ("warning: [new-thread] v2's cover letter is threaded under v1: its In-Reply-To "
            "names <v1-cover@example.org>") in body
    assert "warning: [version-link] the changelog of the cover letter has no lore link to v1 " \
           "<v1-cover@example.org>" in body
    assert "hint: v1: https://lore.kernel.org/all/v1-cover@example.org/" in body
    # Who gave each tag: the trailer names them, the reply's Message-ID is given.
    assert "[review-tags] Reviewed-by: Joe Reviewer <joe@example.org> given on v1 2/2 (a " \
           "reply <r1@example.org>) is missing; the diff did not change" in body
    assert f"[review-tags] {ZOE} given on v1 2/2 (a reply <r-latin@example.org>) is missing" \
        in body
    assert "\ufffd" not in body and "bc@example.org" not in body
    # The rules, quoted the way the list's letters do: once per series.
    flat = " ".join(body.split())
    for rule in ("less than 24 hours after the previous one",
                 "posted as a reply to the previous version",
                 "include a lore link to each previous version",
                 "review tags given on the previous version are missing"):
        assert flat.count(rule) == 1, (rule, body)
    assert flat.count("See https://www.kernel.org/doc/html/next/process/"
                      "maintainer-netdev.html") == 1
    assert "net-next is currently closed" not in flat
    # The control: every rule evaluated against v1, none fires.
    ok = got["v2-cover@example.org"]
    assert "[static check OK on net-next (diff-only checks)]" in ok, ok
    for rule in PROCESS:
        assert f"[{rule}]" not in ok
    assert "total: 0 errors, 0 warnings, 0 info\n" in ok


def announcement(msgid: str, subject: str, date: str) -> bytes:
    return (f"From: Jakub Kicinski <kuba@kernel.org>\nSubject: {subject}\nDate: {date}\n"
            f"Message-ID: <{msgid}>\nMIME-Version: 1.0\n"
            "Content-Type: text/plain; charset=UTF-8\n\n"
            "Linus tagged a release; net-next is closed for new features.\n").encode()


def test_net_next_state_from_the_lists_newest_announcement(cli, tmp_path, inbox, smtp):
    """The newest announcement by Date: sets net-next's state (an older OPEN
    delivered later changes nothing); the warning names the announcement;
    a reply to it ("Re: net-next is OPEN") is no announcement."""
    inbox.deliver(announcement("closed@kernel.org", "[ANN] net-next is CLOSED",
                               "Sun, 01 Nov 2026 18:00:00 -0800"),
                  announcement("older-open@kernel.org", "net-next is OPEN",
                               "Mon, 28 Sep 2026 09:00:00 -0700"),
                  b"From: A <a@example.org>\nSubject: Re: net-next is OPEN\nDate: Tue, 03 Nov "
                  b"2026 09:00:00 +0000\nMessage-ID: <re-open@x>\nIn-Reply-To: "
                  b"<closed@kernel.org>\n\nyay\n",
                  *mbox_messages(HIST_V1))
    cfg = process_config(tmp_path, inbox, smtp)
    cp = once(cli, cfg)
    assert "Traceback" not in cp.stderr
    body = replies_by_thread(smtp)["v1-cover@example.org"]
    flat = " ".join(body.split())
    assert ("warning: [net-next-closed] net-next is closed (the list's announcement \"[ANN] "
            "net-next is CLOSED\" of 2026-11-02 02:00 UTC, "
            "https://lore.kernel.org/all/closed@kernel.org/)") in flat, body
    assert flat.count("net-next is currently closed for new drivers") == 1


def test_a_vN_minus_1_with_a_broken_date_is_a_reason_in_the_bot(cli, tmp_path, inbox, smtp):
    """v1's Date: is not a date: the 24-hour rule is unknowable (an info, in
    the total), the other rules still judge v2, nothing crashes."""
    v1 = [m.replace(b"Date: Mon, 02 Nov 2026 10:00:00 +0000", b"Date: someday soon")
          for m in mbox_messages(HIST_V1)]
    inbox.deliver(*v1, *mails(bad()))
    cfg = process_config(tmp_path, inbox, smtp)
    cp = once(cli, cfg)
    assert "Traceback" not in cp.stderr and "1 series checked" in cp.stdout, cp.stderr
    body = replies_by_thread(smtp)["v2bad-cover@example.org"]
    assert "[repost-wait]" not in body
    assert "[new-thread]" in body and "[version-link]" in body and "[review-tags]" in body
    assert re.search(r"total: 0 errors, \d+ warnings, 1 info", body), body


AI_AGENT = """\
import sys
from pathlib import Path
assert "+int a = 1;" in sys.stdin.read()
Path("review-inline.txt").write_text("> +int a = 1;\\n\\nWhy one? The zero default was on purpose.\\n")
"""


@pytest.mark.parametrize("mode", ["count", "reply"])
def test_ai_review_is_counted_not_quoted_unless_asked(cli, tmp_path, inbox, mode):
    """The bot runs the agent its tree's config names; its reply on the list
    counts the AI's comments and says where, without a word of theirs,
    unless ``bot.ai_review = "reply"`` (netdev keeps AI text for a human)."""
    tree = tmp_path / "tree"
    base = small_upstream(tree, {"a.c": "int a;\n"})
    (tmp_path / "agent.py").write_text(AI_AGENT)
    git(tree, "config", "napipatch.ai-review-command", f"{sys.executable} {tmp_path / 'agent.py'}")
    patch = one_patch_on(tree, base)
    cfg = write_config(tmp_path, str(inbox.dir), tree=tree, dry_run=True, policy="always")
    text = cfg.read_text().replace('skip = ["checkpatch", "callsites", "ynl"]',
                                   'only = ["subject", "ai-review"]')
    cfg.write_text(text.replace("[bot]\n", f'[bot]\nai_review = "{mode}"\n'))
    inbox.deliver(patch)
    once(cli, cfg)
    [mail] = (tmp_path / "out").glob("*.eml")
    body = parsed(mail.read_bytes()).get_content()
    assert "ai-review (warn), subject (pass)" in body
    if mode == "count":
        assert "warning: [ai-review] AI review: 1 comment (at a.c:1): not quoted on the list" \
            in body
        assert "zero default" not in body and "Why one?" not in body
    else:
        assert "a.c:1: warning: [ai-review] AI review: Why one? The zero default was on purpose." \
            in body


def test_the_bot_replies_with_the_review_comments_vN_left_open(cli, tmp_path, inbox, smtp):
    """v1's thread from the archive: Joe asked for ETH_MAX_MTU, the author
    promised it; a v2 still with 65535 gets the comment back, with the
    promise and the link, in the bot's reply."""
    v2 = (Path(__file__).parent / "fixtures" / "checks" / "review-followup" / "bad.mbox")
    inbox.deliver(*mbox_messages(HIST_V1), *mails(v2.read_text()))
    cfg = write_config(tmp_path, str(inbox.dir), smtp.port, policy="always")
    cfg.write_text(cfg.read_text().replace('skip = ["checkpatch", "callsites", "ynl"]',
                                           'only = ["review-followup"]'))
    cp = once(cli, cfg)
    assert "Traceback" not in cp.stderr
    body = replies_by_thread(smtp)["v2-cover@example.org"]
    assert ('[review-followup] Joe Reviewer <joe@example.org> on v1 1/2: "Please use '
            'ETH_MAX_MTU here." left open: unchanged though the author promised: "Will do in '
            'v2."') in " ".join(body.split()), body
    assert "r2@example.org/" in body
    assert "Please answer each comment" in " ".join(body.split())
