"""Bad input: one line naming the input and the reason, exit 2, nothing written."""

import gzip
import http.server
import threading
import urllib.parse

import pytest

from conftest import LORE

V4 = LORE / "threaded-busy-poll-v4.mbox"
V3 = LORE / "threaded-busy-poll-v3-cover.mbox"


def _messages(text):
    parts = text.split("From mboxrd@z Thu Jan  1 00:00:00 1970\n")
    return [p for p in parts if p]


def _join(msgs):
    return "".join("From mboxrd@z Thu Jan  1 00:00:00 1970\n" + m for m in msgs)


def _assert_refused(cp, *needles):
    assert cp.returncode == 2, (cp.stdout, cp.stderr)
    lines = cp.stderr.strip().splitlines()
    assert len(lines) == 1, cp.stderr
    assert lines[0].startswith("napipatch: error: ")
    for n in needles:
        assert n in lines[0], lines[0]
    assert "Traceback" not in cp.stderr


def _nothing_written(cli):
    assert not cli.store.exists() or not any(cli.store.rglob("*.patch"))


def test_not_an_mbox(cli, tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("just some notes\nnothing else\n")
    _assert_refused(cli("series", "import", f, "--name", "x"), str(f), "not an mbox")
    _nothing_written(cli)


def test_binary_file(cli, tmp_path):
    f = tmp_path / "blob.bin"
    f.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    _assert_refused(cli("series", "import", f, "--name", "x"), str(f), "binary")
    _nothing_written(cli)


def test_missing_patch(cli, tmp_path):
    msgs = [m for m in _messages(V4.read_text()) if "v4 2/4]" not in m.split("\n\n", 1)[0]]
    f = tmp_path / "missing.mbox"
    f.write_text(_join(msgs))
    _assert_refused(cli("series", "import", f, "--name", "x"), str(f), "patch 2/4 missing")
    _nothing_written(cli)
    _assert_refused(cli("check", f), "patch 2/4 missing")


def test_two_versions_mixed(cli, tmp_path):
    f = tmp_path / "mixed.mbox"
    f.write_text(V3.read_text() + V4.read_text())
    _assert_refused(cli("series", "import", f, "--name", "x"), str(f), "mixes versions v3, v4")
    _nothing_written(cli)
    # Picking a version is the way out.
    cli("series", "import", f, "--name", "x", "--version", "4", check=0)


def test_non_utf8_body(cli, tmp_path):
    msgs = _messages(V4.read_text())
    head, body = msgs[2].split("\n\n", 1)
    bad = (_join(msgs[:2]) + "From mboxrd@z Thu Jan  1 00:00:00 1970\n" + head + "\n\n").encode() \
        + b"caf\xe9 \xff\n" + body.encode() + _join(msgs[3:]).encode()
    f = tmp_path / "latin.mbox"
    f.write_bytes(bad)
    _assert_refused(cli("series", "import", f, "--name", "x"), str(f),
                    "20250321021517.2-skhawaja@reconstructed.invalid", "not valid utf-8")
    _nothing_written(cli)


@pytest.mark.parametrize("name", ["a/b", "..", "../escape", "x/../../y", ""])
def test_bad_names(cli, name):
    _assert_refused(cli("series", "import", V4, "--name", name), "bad series name")
    _nothing_written(cli)
    assert not (cli.cwd / "escape").exists()


def test_empty_series(cli, tmp_path):
    d = tmp_path / "empty"
    d.mkdir()
    _assert_refused(cli("check", d), str(d), "no NNNN-*.patch or vN-NNNN-*.patch files")
    _assert_refused(cli("check", V3), "patch 1/4, 2/4, 3/4, 4/4 missing")


def test_binary_diff_is_not_a_traceback(cli, tmp_path):
    patch = (
        "From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001\n"
        "From: Ada Lovelace <ada@example.org>\nDate: Thu, 1 Jan 2026 00:00:00 +0000\n"
        "Subject: [PATCH net-next] net: add firmware blob\n\nBlob.\n\n"
        "Signed-off-by: Ada Lovelace <ada@example.org>\n---\n"
        "diff --git a/firmware/x.bin b/firmware/x.bin\nnew file mode 100644\n"
        "index 0000000..1111111\nBinary files /dev/null and b/firmware/x.bin differ\n-- \n2.39.5\n")
    f = tmp_path / "bin.mbox"
    f.write_text(patch)
    cp = cli("check", f)
    assert cp.returncode in (0, 1) and "Traceback" not in cp.stderr, cp.stderr
    assert "total:" in cp.stdout


def test_unknown_target_and_format(cli):
    _assert_refused(cli("check", "no-such-series"), "no-such-series", "no such file")
    _assert_refused(cli("check", V4, "--format", "xml"), "xml", "unknown format")
    _assert_refused(cli("check", V4, "--only", "nope"), "nope", "no such check")


class _NotFound(http.server.BaseHTTPRequestHandler):
    """A lore-like server that knows one thread and nothing else."""

    known: dict[str, bytes] = {}

    def do_GET(self):  # noqa: N802 - http.server's naming
        path = urllib.parse.unquote(self.path)
        for msgid, data in self.known.items():
            if msgid in path and self.path.endswith("t.mbox.gz"):
                self.send_response(200)
                self.send_header("Content-Type", "application/gzip")
                self.end_headers()
                self.wfile.write(gzip.compress(data))
                return
        self.send_response(404)
        self.end_headers()

    def log_message(self, *a):
        pass


@pytest.fixture
def lore_server():
    # The archived patches carry no threading headers (see LORE/README.md);
    # git send-email would have made them replies to the cover, as here.
    cover = "<20250321021517.0-skhawaja@reconstructed.invalid>"
    text = V4.read_text()
    for i in range(1, 5):
        mid = f"Message-ID: <20250321021517.{i}-skhawaja@reconstructed.invalid>\n"
        text = text.replace(mid, mid + f"In-Reply-To: {cover}\nReferences: {cover}\n")
    _NotFound.known = {cover.strip("<>"): text.encode()}
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/netdev"
    srv.shutdown()


def test_import_by_message_id_through_b4(cli, lore_server, tmp_path):
    env = {"GIT_CONFIG_GLOBAL": str(_gitconfig(tmp_path, lore_server))}
    cp = cli("series", "import", "<20250321021517.0-skhawaja@reconstructed.invalid>",
             "--name", "tbp", env=env, check=0)
    assert "(4 patches, cover letter)" in cp.stdout
    rec = (cli.store / "tbp" / "series.toml").read_text()
    assert f"lore {lore_server} <20250321021517.0-skhawaja@reconstructed.invalid>" in rec


def test_unknown_message_id(cli, lore_server, tmp_path):
    env = {"GIT_CONFIG_GLOBAL": str(_gitconfig(tmp_path, lore_server))}
    cp = cli("series", "import", "nobody@nowhere.invalid", "--name", "x", env=env)
    _assert_refused(cp, "<nobody@nowhere.invalid>", "no such message at " + lore_server)
    _nothing_written(cli)


def _gitconfig(tmp_path, url):
    f = tmp_path / "gitconfig"
    f.write_text(f"[napipatch]\n\tlore-url = {url}\n[b4]\n\tcache-expire = 0\n")
    return f


@pytest.mark.tree
def test_patch_with_a_path_outside_the_tree(cli, kernel_tree, base_commit, tmp_path):
    """A mailed patch naming ../../x is reported as such, and nothing is written there."""
    target = tmp_path / "outside" / "pwned.txt"
    rel = "../" * 12 + str(target).lstrip("/")
    patch = (
        "From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001\n"
        "From: Eve <eve@example.org>\nDate: Thu, 1 Jan 2026 00:00:00 +0000\n"
        "Subject: [PATCH net-next] net: escape\n\nEscape.\n\n"
        "Signed-off-by: Eve <eve@example.org>\n---\n"
        f"diff --git a/{rel} b/{rel}\nnew file mode 100644\nindex 0000000..1111111\n"
        f"--- /dev/null\n+++ b/{rel}\n@@ -0,0 +1 @@\n+pwned\n-- \n2.39.5\n\n"
        f"base-commit: {base_commit}\n")
    f = tmp_path / "escape.mbox"
    f.write_text(patch)
    cp = cli("check", f, "--tree", kernel_tree, "--no-cache")
    assert cp.returncode == 1, cp.stderr
    assert "names a path outside the tree" in cp.stdout
    assert "hint: do not apply it" in cp.stdout and "rebase" not in cp.stdout
    assert not target.exists() and not target.parent.exists()


@pytest.mark.tree
def test_a_series_past_the_bound_is_refused_in_one_line_and_still_stored(cli, kernel_tree, tmp_path):
    """1000 patches: check (with and without a tree) refuses at once with
    one line naming the mbox, exit 2; import keeps the mails; 100 are checked."""
    from test_fuzz import big_mbox

    big = tmp_path / "big.mbox"
    big.write_bytes(big_mbox(1000))
    for extra in ([], ["--tree", kernel_tree]):
        cp = cli("check", big, *extra)
        assert cp.returncode == 2 and cp.stdout == ""
        assert cp.stderr.strip() == (f"napipatch: error: {big}: v1 has 1000 patches; napipatch "
                                     "checks at most 100 (netdev takes 15 a series): split it")
    cli("series", "import", big, "--name", "big", check=0)
    assert len(list((cli.store / "big" / "v1").glob("*.patch"))) == 1001
    ok = tmp_path / "b100.mbox"
    ok.write_bytes(big_mbox(100))
    cp = cli("check", ok, "--only", "series-format")
    assert cp.returncode == 1, cp.stderr
    assert "100 patches: netdev takes at most 15 per series" in cp.stdout
