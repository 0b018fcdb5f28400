"""Hostile input (issue 19): every crash and hang found by the fuzz run, one
test each, checked as a user sees it -- one line, the right exit status, no
traceback, and no hang. No test asserts how long anything took (a loaded
machine is slow, not wrong): a bounded input is refused up front, and a
late check is proven stopped.

Exit statuses: 0 clean, 1 error findings, 2 bad input or a check that timed
out or could not run, 3 a crash (napipatch/report/model.py EXIT). Each test
asserts the one status its input must give.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import types

import pytest
from conftest import LORE, ROOT, commit_files, format_patch, git

V4 = LORE / "threaded-busy-poll-v4.mbox"
ENVELOPE = "From mboxrd@z Thu Jan  1 00:00:00 1970\n"


def run(cli, *args, timeout=60, env=None):
    """The CLI with a hang guard: a hang is a failure, not a stuck test run."""
    e = dict(os.environ, NAPIPATCH_SERIES_DIR=str(cli.store), XDG_CACHE_HOME=str(cli.cache),
             COLUMNS="200", **(env or {}))
    return subprocess.run([sys.executable, "-m", "napipatch", *map(str, args)], cwd=cli.cwd,
                          capture_output=True, text=True, env=e, timeout=timeout)


def refused(cp, *needles):
    """Exit 2, one line ``napipatch: error: ...`` holding every needle."""
    assert cp.returncode == 2, (cp.returncode, cp.stdout[-2000:], cp.stderr[-2000:])
    assert "Traceback" not in cp.stderr
    lines = cp.stderr.strip().splitlines()
    assert len(lines) == 1, cp.stderr
    assert lines[0].startswith("napipatch: error: "), lines[0]
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def messages():
    return [ENVELOPE + p for p in V4.read_text().split(ENVELOPE) if p]


def one_mail():
    """Patch 3/4 of the real v4 thread, renumbered as a one-patch series."""
    m = next(m for m in messages() if "[PATCH net-next v4 3/4]" in m.split("\n\n", 1)[0])
    return m.replace("[PATCH net-next v4 3/4]", "[PATCH net-next v4 1/1]", 1)


def with_header(mail: str, name: str, value: str) -> str:
    head, body = mail.split("\n\n", 1)
    lines = [ln for ln in head.split("\n") if not ln.lower().startswith(name.lower() + ":")]
    return "\n".join(lines + [f"{name}: {value}"]) + "\n\n" + body


# ------------------------------------------------------------- email headers
def test_message_id_the_parser_chokes_on(cli, tmp_path):
    f = tmp_path / "mid.mbox"
    f.write_text(with_header(one_mail(), "Message-ID", "<<a b>> <c@d> <"))
    # Python's header parser raises on it: refused as bad input, naming the file.
    refused(run(cli, "check", f), str(f), "message 1: malformed message headers")


def test_undecodable_from(cli, tmp_path):
    mail = with_header(one_mail(), "From", "Samiullah \udcff\udcfe <skhawaja@google.com>")
    f = tmp_path / "from.mbox"
    f.write_bytes(mail.encode("utf-8", "surrogateescape"))
    cp = run(cli, "series", "import", f, "--name", "from8bit")
    assert cp.returncode == 0, cp.stderr
    text = (cli.store / "from8bit" / "v4").glob("0001-*.patch")
    assert "skhawaja@google.com" in next(text).read_text()
    cp = run(cli, "check", "from8bit", "--format", "json")
    assert cp.returncode == 0, cp.stderr  # the diff-only checks find no error in patch 3/4
    assert json.loads(cp.stdout)["series"]["name"] == "from8bit"


def test_huge_header_is_refused(cli, tmp_path):
    f = tmp_path / "subject.mbox"
    f.write_text(with_header(one_mail(), "Subject", "[PATCH net-next 1/1] " + "x " * 20000))
    refused(run(cli, "check", f), str(f), "Subject header too long")


# ------------------------------------------------------------- numbering
@pytest.mark.parametrize("cmd", [("check",), ("series", "import")])
def test_absurd_patch_count(cli, tmp_path, cmd):
    mail = one_mail().replace("[PATCH net-next v4 1/1]",
                              "[PATCH net-next 1/1000000000000000000000000000000]")
    f = tmp_path / "count.mbox"
    f.write_text(mail)
    cp = run(cli, *cmd, f, *(["--name", "x"] if len(cmd) == 2 else []))
    # Refused from the subject, before any list of that length is made.
    refused(cp, "patch 1/1000000000000000000000000000000: more than 1000 patches")
    assert not cli.store.exists() or not any(cli.store.rglob("*.patch"))


def test_absurd_version(cli, tmp_path):
    f = tmp_path / "ver.mbox"
    f.write_text(one_mail().replace("[PATCH net-next v4 1/1]",
                                    "[PATCH net-next v1000000000000000000000000000000 1/1]"))
    refused(run(cli, "series", "import", f, "--name", "x"), "past v999")


def test_bot_refuses_absurd_numbering():
    from napipatch.bot.assemble import record

    raw = one_mail().split("\n", 1)[1].replace(
        "[PATCH net-next v4 1/1]", "[PATCH net-next 1/1000000000000000000000000000000]").encode()
    rec = record(raw, "netdev", 0, "0" * 40)
    assert rec["kind"] == "bad"
    assert "more than 1000 patches" in rec["error"]


# ------------------------------------------------------------- patch directories
def _patch_dir(tmp_path):
    d = tmp_path / "outgoing"
    d.mkdir()
    (d / "0001-net-add.patch").write_text(one_mail().split("\n", 1)[1])
    return d


def _loop(p):
    os.symlink("0002-loop.patch", p)
    os.symlink(p.name, p.with_name("0002-loop.patch"))


@pytest.mark.parametrize("what,make", [
    ("symbolic link loop", _loop),
    ("a directory", lambda p: p.mkdir()),
    ("a FIFO", lambda p: os.mkfifo(p)),
    ("a character device", lambda p: os.symlink("/dev/zero", p)),
])
def test_patch_dir_holds_only_regular_files(cli, tmp_path, what, make):
    d = _patch_dir(tmp_path)
    bad = d / "0002-evil.patch"
    make(bad)
    cp = run(cli, "check", d, timeout=30)
    refused(cp, "0002-evil.patch", what)
    cp = run(cli, "series", "import", d, "--name", "x", timeout=30)
    refused(cp, "0002-evil.patch", what)


def test_symlink_to_a_regular_file_is_followed(cli, tmp_path):
    d = _patch_dir(tmp_path)
    real = tmp_path / "elsewhere.patch"
    (d / "0001-net-add.patch").rename(real)
    os.symlink(real, d / "0001-net-add.patch")
    cp = run(cli, "check", d, "--format", "json")
    assert cp.returncode == 0, cp.stderr
    data = json.loads(cp.stdout)
    (patch,) = data["series"]["patches"]  # the link's target was read
    assert patch["subject"] == ("[PATCH net-next v4 1/1] Extend napi threaded polling to allow "
                                "kthread based busy polling"), patch


@pytest.mark.parametrize("make,what", [
    (lambda p: os.mkfifo(p), "a FIFO"),
    (lambda p: os.symlink("/dev/zero", p), "a character device"),
])
def test_target_that_is_neither_file_nor_directory(cli, tmp_path, make, what):
    t = tmp_path / "thing"
    make(t)
    refused(run(cli, "check", t, timeout=30), str(t), what)
    refused(run(cli, "series", "import", t, "--name", "x", timeout=30), str(t), what)


def test_target_with_a_newline_is_escaped(cli):
    cp = run(cli, "check", "no\nsuch\x1b[31m")
    line = refused(cp, "no\\nsuch\\x1b[31m")
    assert "\x1b" not in line


# ------------------------------------------------------------- store names
@pytest.mark.parametrize("name", ["ok\n", "series.toml", "CON", "con.txt", "a\tb", ".hidden",
                                  "a/b", "x" * 65])
def test_bad_store_names(cli, name):
    cp = run(cli, "series", "import", V4, "--name", name)
    refused(cp, "name")
    assert not cli.store.exists() or not any(cli.store.iterdir())


def test_store_name_rules():
    from napipatch.mails.series import valid_name

    assert valid_name("threaded-busy-poll") and valid_name("v1.2_x")
    assert not valid_name("ok\n") and not valid_name("SERIES.TOML") and not valid_name("lpt1")


# ------------------------------------------------------------- linear time
def test_function_finder_is_linear():
    """Half a million hostile lines, answered right: a few seconds for the
    linear patterns, hours for the quadratic ones they replaced (a lazy
    head or comment free to run to the end of the text from every line),
    which pyproject.toml's timeout then stops. Nothing here is timed."""
    from napipatch.kernel.cparse_calls import find_functions
    from napipatch.kernel.cparse import blank_comments

    # An unterminated comment ends the text (it does not restart at every line).
    assert blank_comments("/* x\n" * 3) == "    \n" * 3
    assert blank_comments("a /* b */ c // d\n") == "a         c     \n"
    n = 500_000
    assert find_functions("static int foo\n" * n) == []
    assert find_functions("int foo(\n" * n) == []     # no ")": no parameter list
    assert blank_comments("/* x\n" * n) == "    \n" * n
    assert find_functions("/* x\n" * n) == []
    # Still finds what it found before: multi-line heads, prototypes, definitions.
    got = find_functions("static int\nfoo(int a,\n    long b)\n{\n}\nvoid bar(void);\n")
    assert [(f.name, f.params, f.first_line, f.is_definition) for f in got] == \
        [("foo", ["a", "b"], 1, True), ("bar", [], 6, False)]


def test_100000_line_hunk(cli, tmp_path):
    body = "".join(f"+static int f{i}\n" for i in range(100_000))
    mail = one_mail()
    head, rest = mail.split("\ndiff --git ", 1)
    patch = (head + "\ndiff --git a/net/core/big.c b/net/core/big.c\nnew file mode 100644\n"
             "--- /dev/null\n+++ b/net/core/big.c\n@@ -0,0 +1,100000 @@\n" + body + "-- \n2.49\n")
    f = tmp_path / "big.mbox"
    f.write_text(patch)
    cp = run(cli, "check", f, "--format", "json", timeout=240)
    assert cp.returncode == 0, cp.stderr  # 100,000 added lines, no error among them
    data = json.loads(cp.stdout)
    assert "crashed" not in {c["status"] for c in data["checks"]}


def test_grep_word_lists_are_bounded():
    from napipatch.tree import treegrep

    treegrep.words([f"f{i}" for i in range(treegrep.MAX_WORDS)])
    with pytest.raises(treegrep.TooManyWords):
        treegrep.words([f"f{i}" for i in range(treegrep.MAX_WORDS + 1)])


# ------------------------------------------------------------- time budget
def test_a_late_check_is_a_timeout_and_the_report_still_comes(tmp_path, monkeypatch):
    """A check past napipatch.check-timeout is stopped (its process is gone
    when the report comes), reported as a timeout, and the others report."""
    from napipatch import config as configmod
    from napipatch.engine import registry
    from napipatch.mails.mbox import read_mbox
    from napipatch.pipeline import run as runmod
    from napipatch.mails.series import assemble
    from napipatch.report.render import render_report

    pidfile = tmp_path / "slow.pid"

    def sleeps(ctx):
        pidfile.write_text(str(os.getpid()))    # first thing: its unit's pid
        time.sleep(30)
        return []

    slow = types.ModuleType("slow")
    slow.run = sleeps
    real = registry.discover()
    fake = dict(real, slow=registry.CheckInfo("slow", "sleeps", "series", "diff", 1, slow))
    monkeypatch.setattr(runmod, "load", lambda: registry.Registry(fake, []))
    # 5 s: ample for the other checks and for the slow one's first line on a
    # loaded machine; the slow one would sleep 30.
    cfg = configmod.Config(cache_dir=str(tmp_path / "cache"), check_timeout=5.0, jobs=2)
    series = assemble(read_mbox(V4), str(V4))
    report = runmod.run(series, cfg, only=["slow", "subject", "signoff"], use_cache=False)
    status = {c.id: c.status for c in report.checks}
    assert status["slow"] == "timeout"
    assert status["subject"] != "timeout" and status["signoff"] != "timeout"
    # Stopped, not abandoned: its unit was killed and reaped before the report came.
    with pytest.raises(ProcessLookupError):
        os.kill(int(pidfile.read_text()), 0)
    text = render_report(report, "text", colour=False)
    assert "[slow] check timed out: still running after 5 s" in text
    data = json.loads(render_report(report, "json", colour=False))
    assert {c["id"]: c["status"] for c in data["checks"]}["slow"] == "timeout"


# ------------------------------------------------------------- internal errors
def test_internal_error_exits_3_with_one_line(cli, tmp_path):
    code = ("import sys; import napipatch.cli as c\n"
            "def boom(*a, **kw): raise IndexError('list index out of range')\n"
            "sys.modules['napipatch.cli.check'].resolve = boom\nsys.argv = ['napipatch', 'check', sys.argv[1]]\nc.main()\n")
    env = dict(os.environ, XDG_CACHE_HOME=str(cli.cache), NAPIPATCH_SERIES_DIR=str(cli.store))
    cp = subprocess.run([sys.executable, "-c", code, str(V4)], capture_output=True, text=True,
                        env=env, cwd=tmp_path, timeout=60)
    assert cp.returncode == 3, cp.stderr
    assert "Traceback" not in cp.stderr
    lines = cp.stderr.strip().splitlines()
    assert len(lines) == 1, cp.stderr
    assert lines[0].startswith("napipatch: internal error: IndexError: list index out of range")
    assert f"napipatch check {V4}" in lines[0]
    crash = sorted((cli.cache / "napipatch" / "crash").glob("*.txt"))
    assert len(crash) == 1 and str(crash[0]) in lines[0]
    assert "Traceback" in crash[0].read_text() and "boom" in crash[0].read_text()
    # --debug shows the traceback itself.
    code_dbg = code.replace("'check', sys.argv[1]", "'--debug', 'check', sys.argv[1]")
    cp = subprocess.run([sys.executable, "-c", code_dbg, str(V4)], capture_output=True,
                        text=True, env=env, cwd=tmp_path, timeout=60)
    assert cp.returncode != 0 and "Traceback" in cp.stderr


# ------------------------------------------------------------- ssh host keys
def test_ssh_checks_host_keys_unless_a_target_opts_out():
    from napipatch.config import Config
    from napipatch.jobs.boot.remote import RemoteHost, Ssh

    raw = {"napipatch.idpf.host": "h", "napipatch.idpf.iface": "eth0"}
    ssh = Ssh(RemoteHost.from_config(Config(raw=dict(raw)), "idpf"))
    assert "StrictHostKeyChecking=accept-new" in ssh.base
    assert not any(a.startswith("UserKnownHostsFile") for a in ssh.base)
    assert "StrictHostKeyChecking=no" not in ssh.base
    own = dict(raw, **{"napipatch.idpf.known-hosts": "/etc/np/known"})
    assert "UserKnownHostsFile=/etc/np/known" in Ssh(RemoteHost.from_config(Config(raw=own),
                                                                             "idpf")).base
    loose = dict(raw, **{"napipatch.idpf.insecure-host-key": "true"})
    base = Ssh(RemoteHost.from_config(Config(raw=loose), "idpf")).base
    assert "StrictHostKeyChecking=no" in base and "UserKnownHostsFile=/dev/null" in base
    bad = dict(raw, **{"napipatch.idpf.insecure-host-key": "maybe"})
    with pytest.raises(Exception, match="insecure-host-key.*not a boolean"):
        RemoteHost.from_config(Config(raw=bad), "idpf")


# ------------------------------------------------------------- with the tree
def _symlink_commit(repo, parent, path, target, message):
    """A commit on ``parent`` turning ``path`` into a symlink to ``target``."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as td:
        env = {"GIT_INDEX_FILE": str(Path(td) / "index")}
        git(repo, "read-tree", parent, env=env)
        blob = git(repo, "hash-object", "-w", "--stdin", input=target)
        git(repo, "update-index", "--cacheinfo", f"120000,{blob},{path}", env=env)
        tree = git(repo, "write-tree", env=env)
    ident = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.org",
             "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.org",
             "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
             "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    return git(repo, "commit-tree", tree, "-p", parent, "-F", "-",
               input=message + "\n\nSigned-off-by: T <t@example.org>\n", env=ident)


@pytest.mark.tree
def test_header_replaced_by_a_symlink(cli, kernel_tree, base_commit, tmp_path):
    c = _symlink_commit(kernel_tree, base_commit, "include/linux/netdevice.h",
                        "../../tools/include/linux/types.h", "net: make netdevice.h a link")
    d = format_patch(kernel_tree, f"{base_commit}..{c}", tmp_path / "link")
    cp = run(cli, "check", d, "--tree", kernel_tree, "--only", "callsites", "--format", "json",
             timeout=300)
    assert cp.returncode == 0, cp.stderr  # callsites says what it could not check, no error
    data = json.loads(cp.stdout)
    assert data["checks"][0]["status"] not in ("crashed", "timeout")
    msgs = [f["message"] for f in data["findings"]]
    assert any("callers not checked (at most 64 functions at a time)" in m for m in msgs), msgs


@pytest.mark.tree
def test_ynl_spec_with_a_python_tag(cli, kernel_tree, base_commit, tmp_path):
    spec = "Documentation/netlink/specs/netdev.yaml"
    text = git(kernel_tree, "cat-file", "blob", f"{base_commit}:{spec}") + "\n"
    text = text.replace("name: netdev", "name: !!python/object/apply:os.system [\"touch pwned\"]", 1)
    c = commit_files(kernel_tree, base_commit, {spec: text}, "netdev: python tag\n\nFixture.\n")
    d = format_patch(kernel_tree, f"{base_commit}..{c}", tmp_path / "ynl")
    cp = run(cli, "check", d, "--tree", kernel_tree, "--only", "ynl", "--format", "json",
             timeout=300)
    assert cp.returncode == 1, cp.stderr
    data = json.loads(cp.stdout)
    assert data["checks"][0]["status"] == "fail"
    errs = [f["message"] for f in data["findings"] if f["severity"] == "error"]
    assert any(m.startswith(f"{spec} does not load: not valid YAML") and "python/object" in m
               for m in errs), errs
    assert not (tmp_path / "pwned").exists() and not (ROOT / "pwned").exists()


@pytest.mark.tree
def test_ynl_schema_with_a_python_tag(cli, kernel_tree, base_commit, tmp_path):
    """The schema the spec is validated against comes from the patch too."""
    spec, schema = "Documentation/netlink/specs/netdev.yaml", "Documentation/netlink/genetlink.yaml"
    text = git(kernel_tree, "cat-file", "blob", f"{base_commit}:{spec}") + "\n# touched\n"
    sch = git(kernel_tree, "cat-file", "blob", f"{base_commit}:{schema}") + "\n"
    sch = sch.replace("$schema:", "x-evil: !!python/name:os.system\n$schema:", 1)
    c = commit_files(kernel_tree, base_commit, {spec: text, schema: sch},
                     "netdev: python tag in the schema\n\nFixture.\n")
    d = format_patch(kernel_tree, f"{base_commit}..{c}", tmp_path / "ynl")
    cp = run(cli, "check", d, "--tree", kernel_tree, "--only", "ynl", "--format", "json",
             timeout=300)
    assert cp.returncode == 1, cp.stderr
    data = json.loads(cp.stdout)
    assert data["checks"][0]["status"] == "fail"
    errs = [f["message"] for f in data["findings"] if f["severity"] == "error"]
    assert any(f"{spec}: {schema}: its schema does not load" in m for m in errs), errs


def _sshd(d, hostkey, port):
    (d / "config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {hostkey}\n"
        f"AuthorizedKeysFile {d / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
        f"StrictModes no\nUsePAM no\nPidFile {d / 'pid'}\nPasswordAuthentication no\n")
    p = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", str(d / "config")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import socket
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return p
        except OSError:
            time.sleep(0.1)
    p.kill()
    pytest.fail("sshd did not start")


def test_ssh_host_key_recorded_then_a_changed_key_refused(tmp_path):
    import socket

    assert os.path.exists("/usr/sbin/sshd"), \
        "sshd missing: scripts/install.sh installs openssh-server"

    from napipatch.jobs.boot.remote import RemoteHost, Ssh

    d = tmp_path
    for k in ("host", "host2", "user"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / k)],
                       check=True)
    (d / "authorized_keys").write_text((d / "user.pub").read_text())
    os.makedirs("/run/sshd", exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    h = RemoteHost(host="127.0.0.1", iface="lo", port=port, key=str(d / "user"),
                   known_hosts=str(d / "known_hosts"))
    p = _sshd(d, d / "host", port)
    try:
        assert Ssh(h).run("echo first").stdout.strip() == "first"   # accept-new
        assert (d / "known_hosts").read_text().strip()
    finally:
        p.kill()
        p.wait()
    p = _sshd(d, d / "host2", port)   # the same host with another key
    try:
        with pytest.raises(Exception, match="Host key verification failed"):
            Ssh(h).run("echo changed")
        h.insecure_host_key = True
        assert Ssh(h).run("echo loose").stdout.strip() == "loose"
    finally:
        p.kill()
        p.wait()
