"""Hooks and ``napipatch send`` with real git send-email to a real SMTP server.

The server (aiosmtpd) listens on loopback and only collects what it is
given; git finds it through sendemail.smtpServer/smtpServerPort in a
throwaway global git config (the system config is ignored). Commits are
made on a ``git clone --shared`` of the prepared 6.12 tree, never on the
tree itself.
"""

from __future__ import annotations

import email
import email.policy
import os
import socket
import stat
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller

from conftest import commit_files, edit, git

pytestmark = pytest.mark.tree

ONLY = "signoff,subject,series-format"
GRO = "net/core/gro_cells.c"


class Smtp:
    """Collects every message it is given."""

    def __init__(self):
        self.envelopes = []
        self._got = threading.Condition()
        with socket.socket() as s:  # Controller cannot listen on port 0
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]

    async def handle_DATA(self, server, session, envelope):
        with self._got:
            self.envelopes.append(envelope)
            self._got.notify_all()
        return "250 OK"

    def received(self, n: int, sender) -> list:
        """The envelopes once ``n`` have arrived: what git send-email's exit
        says was sent is awaited by the server's own event (each DATA),
        never by a sleep. ``sender`` (its CompletedProcess) is shown if they
        do not come, since then git said 250 to some other server."""
        with self._got:
            if not self._got.wait_for(lambda: len(self.envelopes) >= n, timeout=60):
                raise AssertionError(f"{len(self.envelopes)} of {n} messages reached the SMTP "
                                     f"server on port {self.port}; git send-email said:\n"
                                     f"{sender.stdout[-3000:]}\n{sender.stderr[-2000:]}")
            return list(self.envelopes)

    def messages(self):
        return [email.message_from_bytes(e.original_content or e.content, policy=email.policy.default)
                for e in self.envelopes]


@pytest.fixture
def smtp():
    server = Smtp()
    ctl = Controller(server, hostname="127.0.0.1", port=server.port)
    ctl.start()
    yield server
    ctl.stop()


@pytest.fixture
def env(tmp_path, smtp) -> dict:
    """git's config for the test: an identity and the loopback SMTP server only."""
    gc = tmp_path / "gitconfig"
    gc.write_text("[user]\n\tname = Test Author\n\temail = author@example.org\n"
                  f"[sendemail]\n\tsmtpServer = 127.0.0.1\n\tsmtpServerPort = {smtp.port}\n")
    return {"GIT_CONFIG_GLOBAL": str(gc), "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.fixture
def linux(kernel_tree, tmp_path) -> Path:
    """A clone sharing the prepared tree's objects: hooks, commits and tags go here."""
    dest = tmp_path / "linux"
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(kernel_tree), str(dest)],
                   check=True)
    return dest


def _change(repo, parent, old, new, message):
    return commit_files(repo, parent, {GRO: edit(repo, parent, GRO, old, new)}, message)


@pytest.fixture
def commits(linux):
    """base, two clean commits, and one signed off by someone other than its author."""
    base = git(linux, "rev-parse", "HEAD")
    c1 = _change(linux, base, "struct gro_cell {\n", "/* One GRO cell per CPU. */\nstruct gro_cell {\n",
                 "net: gro_cells: say what a cell is\n\nA one-line comment above struct gro_cell.\n")
    c2 = _change(linux, c1, "int gro_cells_receive(", "/* Called in the receive path. */\nint gro_cells_receive(",
                 "net: gro_cells: say where gro_cells_receive() runs\n\nA comment for the reader.\n")
    bad = _change(linux, base, "struct gro_cell {\n", "/* A cell. */\nstruct gro_cell {\n",
                  "net: gro_cells: comment the cell\n\nA comment.\n\n"
                  "Signed-off-by: Someone Else <else@example.org>\n")
    return {"base": base, "c1": c1, "c2": c2, "bad": bad}


def _export(cli, env, linux, base, tip, name, title="net: gro_cells: comments"):
    blurb = cli.cwd / f"{name}-blurb.txt"
    blurb.write_text("Two comments for readers of gro_cells.c.\n")
    extra = ["--title", title, "--blurb", blurb] if title else []
    cli("series", "export", f"{base}..{tip}", "--name", name, "--repo", linux, "--base", base,
        *extra, env=env, check=0)
    return sorted((cli.store / name / "v1").glob("*.patch"))


def _send_email(linux, env, files, *extra):
    e = dict(os.environ, **env)
    return subprocess.run(["git", "-C", str(linux), "send-email", "--confirm=never",
                           "--to", "netdev@example.org", *extra, *map(str, files)],
                          capture_output=True, text=True, env=e, stdin=subprocess.DEVNULL)


def _hook_run(cwd, env, *args, extra_env=None):
    e = dict(os.environ, **env, **(extra_env or {}))
    return subprocess.run([sys.executable, "-m", "napipatch", "hook", "run", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, env=e)


# ---------------------------------------------------------------- napipatch send
def test_send_refuses_error_findings_before_anything_leaves(cli, env, smtp, linux, commits):
    _export(cli, env, linux, commits["base"], commits["bad"], "bad")
    cp = cli("send", "bad", "--repo", linux, "--only", "signoff", "--to", "netdev@example.org", env=env)
    assert cp.returncode == 1, (cp.stdout, cp.stderr)
    assert "PATCH 1/1: error: [signoff] no Signed-off-by from the author Test Author " \
        "<author@example.org>" in cp.stdout
    assert "napipatch: bad: not sent: 1 error finding (--force sends anyway)" in cp.stderr
    assert smtp.envelopes == []
    rec = tomllib.loads((cli.store / "bad" / "series.toml").read_text())
    assert "sent" not in rec["versions"]["v1"]
    assert git(linux, "tag", "-l", "bad-v1") == ""


def test_send_clean_series_arrives_threaded_recorded_and_tagged(cli, env, smtp, linux, commits):
    _export(cli, env, linux, commits["base"], commits["c2"], "gro")
    toml = cli.store / "gro" / "series.toml"
    # Series data with a line break must not become a header of its own.
    toml.write_text('to = ["Reviewer <rev@example.org>\\r\\nX-Injected: yes"]\n' + toml.read_text())
    before = toml.read_text()

    dry = cli("send", "gro", "--only", ONLY, "--dry-run", env=env, check=0)
    assert "Dry-OK" in dry.stdout and "would send gro: 3 messages" in dry.stdout
    assert smtp.envelopes == [] and toml.read_text() == before

    cp = cli("send", "gro", "--repo", linux, "--only", ONLY, "--to", "extra@example.org",
             "--cc", "watcher@example.org", env=env, check=0)
    assert "sent gro: 3 messages" in cp.stdout
    assert f"tagged gro-v1 at {commits['c2'][:12]}" in cp.stdout
    msgs = smtp.messages()
    assert len(msgs) == 3
    cover = [m for m in msgs if "0/2]" in m["Subject"]]
    assert len(cover) == 1
    cover = cover[0]
    assert cover["In-Reply-To"] is None
    cover_id = cover["Message-ID"].strip()
    patches = sorted((m for m in msgs if m is not cover), key=lambda m: m["Subject"])
    assert ["1/2]" in patches[0]["Subject"], "2/2]" in patches[1]["Subject"]] == [True, True]
    for m in patches:
        assert m["In-Reply-To"].strip() == cover_id
        assert cover_id in m["References"]
    for env_ in smtp.envelopes:
        rcpt = {r.lower() for r in env_.rcpt_tos}
        # --to, --cc, series.toml's to, and get_maintainer.pl (net/core: netdev@vger)
        assert {"extra@example.org", "watcher@example.org", "rev@example.org",
                "netdev@vger.kernel.org"} <= rcpt, rcpt
    assert all("X-Injected" not in m for m in msgs)
    assert all("rev@example.org" in m["To"] for m in msgs)

    rec = tomllib.loads(toml.read_text())["versions"]["v1"]
    assert f"<{rec['cover-message-id']}>" == cover_id
    assert [f"<{i}>" for i in rec["message-ids"]] == [m["Message-ID"].strip() for m in patches]
    assert rec["lore"] == f"https://lore.kernel.org/all/{rec['cover-message-id']}/"
    assert git(linux, "rev-parse", "gro-v1^{commit}") == commits["c2"]


def test_send_dry_run_from_the_project_directory_with_relative_store(cli, env, smtp, linux,
                                                                      commits):
    # The default set-up: run from the project's repository, the store the
    # relative ./series, and a relative napipatch.cache-dir there too.
    # get_maintainer.pl runs in a scratch directory, so every path napipatch
    # hands it (the patches, the trusted script) must be absolute.
    git(cli.cwd, "init", "-q")
    git(cli.cwd, "config", "napipatch.cache-dir", "cache-rel")
    rel = {**env, "NAPIPATCH_SERIES_DIR": "series"}
    blurb = cli.cwd / "blurb.txt"
    blurb.write_text("Two comments for readers of gro_cells.c.\n")
    cli("series", "export", f"{commits['base']}..{commits['c2']}", "--name", "gro", "--repo",
        linux, "--base", commits["base"], "--title", "net: gro_cells: comments", "--blurb",
        blurb, env=rel, check=0)
    assert len(list((cli.cwd / "series" / "gro" / "v1").glob("*.patch"))) == 3
    cp = cli("send", "gro@v1", "--repo", linux, "--only", ONLY, "--dry-run", env=rel)
    assert cp.returncode == 0, cp.stderr
    assert "would send gro@v1: 3 messages" in cp.stdout
    to = next(ln for ln in cp.stdout.splitlines() if ln.startswith("To: "))
    cc = next(ln for ln in cp.stdout.splitlines() if ln.startswith("Cc: "))
    # net/core/gro_cells.c: NETWORKING [GENERAL]'s maintainers in To, netdev in Cc
    assert "davem@davemloft.net" in to and "netdev@vger.kernel.org" in cc
    assert list((cli.cwd / "cache-rel" / "trusted").glob("*/scripts/get_maintainer.pl"))
    assert smtp.envelopes == []


def test_send_bad_input(cli, env, smtp):
    cp = cli("send", "nosuch", "--to", "a@example.org", env=env)
    assert cp.returncode == 2
    assert cp.stderr.startswith("napipatch: error: nosuch: no such series") and cp.stderr.count("\n") == 1


# ---------------------------------------------------------------- sendemail-validate
def test_validate_hook_blocks_git_send_email_and_no_validate_bypasses(cli, env, smtp, linux, commits):
    files = _export(cli, env, linux, commits["base"], commits["bad"], "bad")
    cli("hook", "install", "--repo", linux, "--sendemail", "--only", ONLY, env=env, check=0)
    assert not (linux / ".git" / "hooks" / "pre-push").exists()
    cp = _send_email(linux, env, files)
    assert cp.returncode != 0
    assert "error: [signoff] no Signed-off-by from the author" in cp.stderr
    assert "rejected by sendemail-validate hook" in cp.stderr
    assert smtp.envelopes == []
    cp = _send_email(linux, env, files, "--no-validate")
    assert cp.returncode == 0, cp.stderr
    assert len(smtp.received(len(files), cp)) == len(files) == 2


def test_validate_hook_series_checks_on_the_last_message(cli, env, smtp, linux, commits):
    # No title: the cover letter keeps format-patch's "*** SUBJECT HERE ***",
    # a series-level error no single message shows.
    files = _export(cli, env, linux, commits["base"], commits["c2"], "gro", title=None)
    assert len(files) == 3
    cli("hook", "install", "--repo", linux, "--sendemail", "--only", ONLY, env=env, check=0)
    # git 2.39 (no file counter): the series is whole after its last patch.
    cp = _send_email(linux, env, files)
    assert cp.returncode != 0
    assert "SERIES: error: [series-format] the cover letter still has format-patch's placeholder text" \
        in cp.stderr
    assert smtp.envelopes == []
    # git 2.41+: GIT_SENDEMAIL_FILE_COUNTER/TOTAL say which message is the last.
    codes = [_hook_run(linux, env, "--only", ONLY, "sendemail-validate", "--", f,
                       extra_env={"GIT_SENDEMAIL_FILE_COUNTER": str(i),
                                  "GIT_SENDEMAIL_FILE_TOTAL": "3"})
             for i, f in enumerate(files, 1)]
    assert [c.returncode for c in codes] == [0, 0, 1], [c.stderr for c in codes]
    assert "placeholder text" in codes[2].stderr
    assert not any((linux / ".git" / "napipatch" / "sendemail").iterdir())


def test_checks_that_gave_no_result_block_the_hook_and_send(cli, env, smtp, linux, commits):
    """A series nobody finished checking is never let through as clean."""
    files = _export(cli, env, linux, commits["base"], commits["c1"], "slow")
    cli("hook", "install", "--repo", linux, "--sendemail", "--only", ONLY, env=env, check=0)
    # A budget no check can meet: every unit is stopped as soon as it starts.
    git(linux, "config", "napipatch.check-timeout", "0.000001")
    cp = _send_email(linux, env, files)
    assert cp.returncode != 0
    assert "NOT CHECKED: signoff timed out" in cp.stderr
    assert "napipatch: sendemail-validate: " in cp.stderr and "not fully checked (0 of 2 checks " \
        "completed; 2 timed out: signoff, subject); this blocks" in cp.stderr
    assert smtp.envelopes == []

    cp = cli("send", "slow", "--repo", linux, "--only", ONLY, "--to", "netdev@example.org",
             "--dry-run", env=env)
    assert cp.returncode == 2, (cp.stdout, cp.stderr)
    assert "napipatch: slow: not sent: not fully checked (0 of 3 checks completed; 3 timed " \
        "out: series-format, signoff, subject) (--force sends anyway)" in cp.stderr

    git(linux, "config", "napipatch.hook-strict", "false")
    cp = _send_email(linux, env, files)
    assert cp.returncode == 0, cp.stderr
    assert "NOT fully checked (" in cp.stderr and "letting it go" in cp.stderr
    assert len(smtp.received(len(files), cp)) == len(files)


def test_validate_hook_chains_existing_hook_and_uninstall_restores_it(cli, env, smtp, linux, commits):
    files = _export(cli, env, linux, commits["base"], commits["c2"], "gro")
    log = linux.parent / "old-hook.log"
    hook = linux / ".git" / "hooks" / "sendemail-validate"
    hook.write_text(f'#!/bin/sh\necho "old hook: $(basename "$1")" >> {log}\n')
    hook.chmod(0o750)
    original, mode = hook.read_bytes(), stat.S_IMODE(hook.stat().st_mode)

    cp = cli("hook", "install", "--repo", linux, "--only", ONLY, env=env, check=0)
    assert "sendemail-validate.napipatch-chained and runs first" in cp.stdout
    assert hook.read_bytes() != original
    cp = _send_email(linux, env, files)
    assert cp.returncode == 0, cp.stderr
    assert len(smtp.received(3, cp)) == 3
    assert log.read_text().splitlines() == [f"old hook: {f.name}" for f in files]

    # The old hook failing blocks the send too.
    hook.with_name("sendemail-validate.napipatch-chained").write_text("#!/bin/sh\nexit 3\n")
    assert _send_email(linux, env, files).returncode != 0
    assert len(smtp.envelopes) == 3
    hook.with_name("sendemail-validate.napipatch-chained").write_bytes(original)

    cp = cli("hook", "uninstall", "--repo", linux, env=env, check=0)
    assert "the earlier hook is back" in cp.stdout
    assert hook.read_bytes() == original
    assert stat.S_IMODE(hook.stat().st_mode) == mode
    assert not hook.with_name("sendemail-validate.napipatch-chained").exists()
    assert not hook.with_name("pre-push").exists()


def test_install_respects_core_hooks_path_and_refuses_a_clash(cli, env, linux):
    git(linux, "config", "core.hooksPath", "myhooks")
    cli("hook", "install", "--repo", linux, env=env, check=0)
    script = (linux / "myhooks" / "sendemail-validate").read_text()
    assert f"{sys.executable} -m napipatch hook run sendemail-validate" in script
    assert os.access(linux / "myhooks" / "pre-push", os.X_OK)
    assert not (linux / ".git" / "hooks" / "pre-push").exists()
    # A foreign hook where ours was, with a chained one still there: refuse, touch nothing.
    cli("hook", "uninstall", "--repo", linux, env=env, check=0)
    (linux / "myhooks" / "pre-push").write_text("#!/bin/sh\nexit 0\n")
    (linux / "myhooks" / "pre-push.napipatch-chained").write_text("#!/bin/sh\nexit 0\n")
    cp = cli("hook", "install", "--repo", linux, env=env)
    assert cp.returncode == 2
    assert "pre-push: not napipatch's and pre-push.napipatch-chained exists too" in cp.stderr
    assert not (linux / "myhooks" / "sendemail-validate").exists()


def test_hook_internal_failure_blocks_unless_relaxed(env, linux, tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("just some notes\n")
    cp = _hook_run(linux, env, "sendemail-validate", "--", junk)
    assert cp.returncode == 2
    assert "napipatch: error: sendemail-validate hook could not check:" in cp.stderr
    assert "not an mbox" in cp.stderr and "--no-validate sends anyway" in cp.stderr
    git(linux, "config", "napipatch.hook-strict", "false")
    cp = _hook_run(linux, env, "sendemail-validate", "--", junk)
    assert cp.returncode == 0
    assert "napipatch: warning: sendemail-validate hook could not check" in cp.stderr
    assert "NOT checked, letting it go (napipatch.hook-strict is false)" in cp.stderr
    cp = _hook_run(linux, env, "post-commit")
    assert cp.returncode == 2 and "post-commit: no such hook" in cp.stderr


# ---------------------------------------------------------------- pre-push
def test_pre_push_blocks_error_commit_and_allows_clean(cli, env, kernel_tree, linux, commits, tmp_path):
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", "--shared", str(kernel_tree), str(remote)], check=True)
    git(linux, "remote", "add", "pub", str(remote))
    log = tmp_path / "old-pre-push.log"
    old_hook = linux / ".git" / "hooks" / "pre-push"
    old_hook.write_text(f'#!/bin/sh\necho "$1" >> {log}\ncat >> {log}\n')
    old_hook.chmod(0o755)
    cli("hook", "install", "--repo", linux, "--pre-push", "--only", "signoff", env=env, check=0)
    assert not (linux / ".git" / "hooks" / "sendemail-validate").exists()

    def push(rev, ref="topic"):
        e = dict(os.environ, **env)
        return subprocess.run(["git", "-C", str(linux), "push", "pub", f"{rev}:refs/heads/{ref}"],
                              capture_output=True, text=True, env=e)

    def remote_has(ref):
        return subprocess.run(["git", "-C", str(remote), "rev-parse", "-q", "--verify",
                               f"refs/heads/{ref}"], capture_output=True, text=True).stdout.strip()

    cp = push(commits["bad"])  # a new branch: the commits on no remote-tracking ref
    assert cp.returncode != 0
    assert "PATCH 1/1: error: [signoff] no Signed-off-by from the author" in cp.stderr
    assert "napipatch: pre-push: topic: 1 error finding; push refused" in cp.stderr
    assert remote_has("topic") == ""

    cp = push(commits["c2"])
    assert cp.returncode == 0, cp.stderr
    assert remote_has("topic") == commits["c2"]
    # The chained hook ran first each time, with the same ref lines on stdin.
    seen = log.read_text().splitlines()
    assert seen[0] == seen[2] == "pub"
    assert seen[3].endswith(f"{commits['c2']} refs/heads/topic {'0' * 40}"), seen

    # An existing branch: only remote-oid..local-oid is checked.
    on_top = commit_files(linux, commits["c2"], {"net/core/gro_cells.h.txt": "notes\n"},
                          "net: gro_cells: notes\n\nSigned-off-by: Someone Else <else@example.org>\n")
    cp = push(on_top)
    assert cp.returncode != 0 and "PATCH 1/1: error: [signoff]" in cp.stderr
    assert remote_has("topic") == commits["c2"]
    assert "--no-verify" in cp.stderr


# ---------------------------------------------------------------- sendemail-validate with the tree
NETDEVICE = "include/linux/netdevice.h"
TX_OLD, TX_NEW = "netif_napi_add_tx_weight(", "netif_napi_add_tx_weighted("
TX_CALLERS = ["drivers/crypto/caam/caamalg_qi2.c", "drivers/crypto/caam/qi.c",
              "drivers/net/ethernet/freescale/gianfar.c",
              "drivers/net/ethernet/microchip/lan743x_main.c"]
VIRTIO = "drivers/net/virtio_net.c"  # calls netif_napi_add_tx_weight() at 6281 in 6.12
TREE_CHECKS = "ynl,callsites,apply,subject,signoff,series-format,base-commit"


def _tree_series(linux, base, tmp_path, fixed: bool) -> list[str]:
    """Three commits on ``base``: the netdev spec with its generated code
    (but for the tools/ copy of the uapi header unless ``fixed``), a
    comment, and a rename of netif_napi_add_tx_weight() (leaving virtio_net's
    caller unless ``fixed``)."""
    from test_check_ynl import _regenerate, _spec, SPEC  # noqa: PLC0415 - its fixtures

    spec = _spec(linux, base)
    work = tmp_path / ("fixed" if fixed else "stale")
    work.mkdir()
    gen = _regenerate(linux, base, spec, work)
    if not fixed:
        del gen["tools/include/uapi/linux/netdev.h"]
    c1 = commit_files(linux, base, {SPEC: spec, **gen},
                      "net: netdev: add the napi threaded attribute\n\nSays whether a NAPI "
                      "instance runs in a thread.\n")
    c2 = _change(linux, c1, "struct gro_cell {\n", "/* One GRO cell per CPU. */\nstruct gro_cell {\n",
                 "net: gro_cells: say what a cell is\n\nA one-line comment above struct gro_cell.\n")
    changes = {NETDEVICE: edit(linux, base, NETDEVICE, TX_OLD, TX_NEW, count=2)}
    for path in TX_CALLERS + ([VIRTIO] if fixed else []):
        changes[path] = edit(linux, base, path, TX_OLD, TX_NEW)
    c3 = commit_files(linux, c2, changes, "net: rename netif_napi_add_tx_weight()\n\n"
                      "The new name says what the function adds.\n")
    return [c1, c2, c3]


def _format(linux, base, tip, out) -> list[Path]:
    """git format-patch --cover-letter --base, the cover's placeholders filled in."""
    # The cover letter's From: is the user's git identity; a new HOME (CI)
    # has none, and git would write root@HOST.(none), which send-email refuses.
    git(linux, "format-patch", "-q", "--cover-letter", f"--base={base}", "--subject-prefix",
        "PATCH net-next", "-o", str(out), f"{base}..{tip}",
        env={"GIT_COMMITTER_NAME": "Test Author", "GIT_COMMITTER_EMAIL": "author@example.org"})
    files = sorted(out.glob("*.patch"))
    cover = files[0]
    cover.write_text(cover.read_text().replace("*** SUBJECT HERE ***", "net: napi threads")
                     .replace("*** BLURB HERE ***", "The napi threaded attribute, and a rename."))
    return files


def test_validate_hook_checks_with_the_tree_and_blocks_stale_generated_code_and_callers(
        cli, env, smtp, linux, tmp_path):
    env = {**env, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    base = git(linux, "rev-parse", "HEAD")
    bad = _tree_series(linux, base, tmp_path, fixed=False)
    # The branch being sent is checked out (no work tree needed: the hook
    # finds each commit by subject and patch-id among HEAD's).
    git(linux, "update-ref", "refs/heads/threads", bad[-1])
    git(linux, "symbolic-ref", "HEAD", "refs/heads/threads")
    files = _format(linux, base, bad[-1], tmp_path / "bad")
    assert len(files) == 4
    cli("hook", "install", "--repo", linux, "--sendemail", "--only", TREE_CHECKS, env=env, check=0)
    cp = _send_email(linux, env, files)
    assert cp.returncode != 0
    assert "tools/include/uapi/linux/netdev.h:" in cp.stderr and "error: PATCH 1/3 [ynl]" in cp.stderr
    assert f"{VIRTIO}:6281: error: PATCH 3/3 [callsites] netif_napi_add_tx_weight() is renamed" \
        in cp.stderr
    assert "no tree" not in cp.stderr and "diff-only" not in cp.stderr
    assert smtp.envelopes == []

    good = _tree_series(linux, base, tmp_path, fixed=True)
    git(linux, "update-ref", "refs/heads/threads", good[-1])
    files = _format(linux, base, good[-1], tmp_path / "good")
    cp = _send_email(linux, env, files)
    assert cp.returncode == 0, cp.stderr
    hook_lines = [ln for ln in cp.stderr.splitlines() if "napipatch" in ln or ": error:" in ln
                  or ": warning:" in ln]
    assert len(hook_lines) == 1, cp.stderr
    assert hook_lines[0].startswith(f"napipatch: sendemail-validate: net-napi-threads v1, 3 patches, "
                                    f"checked with the tree at {base[:12]}: clean; NIPA forecast: 9 success")
    assert len(smtp.received(4, cp)) == 4
