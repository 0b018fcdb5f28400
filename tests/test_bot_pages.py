"""The bot's web pages in a real browser: the bot checks series from a real
public-inbox archive, ``napipatch bot serve`` serves its state on loopback,
and Debian's headless chromium (driven by selenium through chromedriver)
loads the pages. Assertions are on what a reader sees: text, links, the
line a ``#L<n>`` link lands on, the page title.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import Cli, commit_files, git, own_cache
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from test_bot import IDENT, Inbox, free_port, small_upstream

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
HOSTILE = "<script>document.title='PWNED'</script>"
INLINE = "static inline int helper(void)\n{\n\treturn 1;\n}\n"


def patch_mails(repo: Path, base: str, patches: list[tuple[str, str]], version: int = 1,
                cover: bool = False) -> list[bytes]:
    """Commits of (subject, text of a.c) on ``base``, as git send-email mails them."""
    parent = base
    for subject, text in patches:
        parent = commit_files(repo, parent, {"a.c": text},
                              f"{subject}\n\nA change for the page tests (v{version}).\n",
                              author=("Up", "up@example.org"))
    out = repo.parent / f"out-{parent[:8]}"
    git(repo, "format-patch", "-q", "--thread=shallow", "--subject-prefix=PATCH net",
        f"-v{version}", f"--base={base}", "-o", str(out), *(["--cover-letter"] if cover else []),
        f"{base}..{parent}", env=IDENT)
    return [f.read_bytes().split(b"\n", 1)[1]
            .replace(b"*** SUBJECT HERE ***", patches[-1][0].encode())
            .replace(b"*** BLURB HERE ***", b"Two patches for the page tests.")
            # the cover's Message-ID is cover.<seconds>: the same for v1 and v2 made at once
            .replace(b"<cover.", f"<cover.v{version}.".encode())
            for f in sorted(out.glob("*.patch"))]


def wait_port(port: int, proc: subprocess.Popen) -> None:
    for _ in range(300):
        if proc.poll() is not None:
            raise AssertionError(f"bot serve exited: {proc.stderr.read()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("bot serve did not start")


@contextlib.contextmanager
def serving(cfg: Path, port: int, env: dict | None = None):
    """``napipatch bot serve`` on loopback ``port`` while in the block."""
    proc = subprocess.Popen([sys.executable, "-m", "napipatch", "bot", "serve", "--config",
                             str(cfg), "--listen", f"127.0.0.1:{port}"], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_port(port, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def site(tmp_path_factory, shared_base_cache):
    """Three series checked by the bot (v1 with an error, its clean v2, and
    one whose subject is a script), served by ``bot serve``: its URL."""
    if not (shutil.which("public-inbox-mda") and Path(CHROMIUM).exists()
            and Path(CHROMEDRIVER).exists()):
        pytest.fail("public-inbox, chromium or chromium-driver missing: scripts/install.sh")
    tmp = tmp_path_factory.mktemp("pages")
    cli = Cli(tmp, tmp / "series", own_cache(tmp / "cache", shared_base_cache))
    inbox = Inbox(tmp / "pi")
    tree = tmp / "tree"
    base = small_upstream(tree, {"a.c": "int a;\n"})
    cfg = tmp / "bot.toml"
    port = free_port()
    cfg.write_text(f"""
[state]
dir = "{tmp / 'state'}"
[bot]
url = "http://127.0.0.1:{port}"
[[inbox]]
name = "netdev"
path = "{inbox.dir}"
start = "beginning"
[tree]
path = "{tree}"
[reply]
policy = "always"
dry_run_dir = "{tmp / 'out'}"
[checks]
only = ["apply", "subject", "source-inline"]
""")
    v1 = patch_mails(tree, base, [("net: a: add b", "int a;\nint b;\n"),
                                  ("net: a: add a helper", f"int a;\nint b;\n{INLINE}")],
                     cover=True)
    v2 = patch_mails(tree, base, [("net: a: add b", "int a;\nint b;\n"),
                                  ("net: a: add a helper",
                                   "int a;\nint b;\nstatic int helper(void)\n{\n\treturn 1;\n}\n")],
                     version=2, cover=True)
    hostile = patch_mails(tree, base, [(f"net: {HOSTILE}", "int a;\nint c;\n")])
    for mails, checked in ((v1, 1), (v2 + hostile, 2)):  # v2 comes after v1 was answered
        inbox.deliver(*mails)
        cp = cli("bot", "once", "--config", cfg, check=0)
        assert f"{checked} series checked" in cp.stdout, cp.stdout + cp.stderr
    with serving(cfg, port, dict(os.environ, XDG_CACHE_HOME=str(cli.cache))) as url:
        yield {"url": url, "port": port, "tmp": tmp}


@pytest.fixture(scope="module")
def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1280,1100"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def text(driver) -> str:
    return driver.find_element(By.TAG_NAME, "body").text


def series_link(driver, site, title: str, version: int = 1) -> str:
    """The link of ``title`` vN in the index, as a reader finds it."""
    driver.get(site["url"] + "/")
    for row in driver.find_elements(By.CSS_SELECTOR, "table.series tbody tr"):
        if row.text.startswith(f"{title} v{version} "):
            return row.find_element(By.LINK_TEXT, title).get_attribute("href")
    raise AssertionError(f"{title} v{version} not in the index")


def test_index_lists_the_series_newest_first_with_their_state(site, browser):
    browser.get(site["url"] + "/")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.series tbody tr")
    seen = [r.text for r in rows]
    assert len(seen) == 3, seen
    assert seen[0].startswith(f"net: {HOSTILE} v1 Up ")  # the newest first
    v1 = next(r for r in seen if r.startswith("net: a: add a helper v1"))
    v2 = next(r for r in seen if r.startswith("net: a: add a helper v2"))
    # replied: the reply was written (dry run counts as sent); 1 error on v1, none on v2
    assert " replied 1 0 thread" in v1 and " replied 0 0 thread" in v2, seen


def test_series_page_grid_findings_and_log_anchor(site, browser):
    browser.get(series_link(browser, site, "net: a: add a helper"))
    page = text(browser)
    assert "\nstate\nreplied\n" in page and "\nversion\nv1 · next version\n" in page, page
    # the forecast grid: source-inline passes patch 1 and fails patch 2, in words
    row = browser.find_element(By.XPATH, "//table[@class='grid']//tr[th='source_inline']")
    cells = row.find_elements(By.TAG_NAME, "td")
    assert [c.text.split("\n")[0] for c in cells] == ["success", "fail"], row.text
    # the finding, FILE:LINE first, as an editor takes it
    assert "a.c:3: error: PATCH 2/2 [source-inline]" in page, page
    assert "next version" in page and "previous version" not in page
    # the reply the bot sent links back to this page
    assert f"details:        {browser.current_url}" in page
    # the check's output opens and #L<n> lands on the marked line
    browser.find_element(By.LINK_TEXT, "output of source-inline").click()
    assert "source-inline" in browser.title
    marked = browser.find_element(By.PARTIAL_LINK_TEXT, "line ")
    n = marked.text.split()[1].rstrip(":")
    marked.click()
    assert browser.current_url.endswith(f"#L{n}")
    target = browser.execute_script("return document.querySelector(':target')")
    assert target.get_attribute("id") == f"L{n}"
    assert "error" in target.text and "a.c:3" in target.text
    y = browser.execute_script("return arguments[0].getBoundingClientRect().top", target)
    assert 0 <= y < browser.execute_script("return window.innerHeight")
    # the screenshot the docs show (docs/bot-series-page.png)
    browser.get(series_link(browser, site, "net: a: add a helper"))
    shot = site["tmp"] / "bot-series-page.png"
    browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    if os.environ.get("NAPIPATCH_SCREENSHOT"):
        shutil.copy(shot, os.environ["NAPIPATCH_SCREENSHOT"])


def test_versions_link_each_other(site, browser):
    browser.get(series_link(browser, site, "net: a: add a helper"))
    browser.find_element(By.LINK_TEXT, "next version").click()
    page = text(browser)
    assert "v2" in page and "No findings." in page
    row = browser.find_element(By.XPATH, "//table[@class='grid']//tr[th='source_inline']")
    assert [c.text for c in row.find_elements(By.TAG_NAME, "td")] == ["success", "success"]
    browser.find_element(By.LINK_TEXT, "previous version").click()
    assert "a.c:3: error:" in text(browser)


def test_hostile_subject_is_text_and_never_runs(site, browser):
    browser.get(site["url"] + "/")
    assert browser.title != "PWNED"
    assert f"net: {HOSTILE}" in text(browser)  # shown as the characters it is
    browser.find_element(By.PARTIAL_LINK_TEXT, "<script>").click()
    assert browser.title != "PWNED" and browser.title.startswith("net: <script>")
    assert f"net: {HOSTILE}" in text(browser)
    assert browser.find_elements(By.TAG_NAME, "script") == []


@pytest.mark.parametrize("path", ["/log/1/..%2f..%2fbot.toml", "/log/1/%2e%2e",
                                  "/log/1/../../bot.toml", "/series/1%2f..", "/log/1/%2e%2e%2fbot",
                                  "/series/..%2fbot.toml", "/log/1/bot.sqlite3", "/series/99"])
def test_paths_out_of_the_state_are_404(site, browser, path):
    # as sent (http.client does not normalise ../), and as the browser shows it
    conn = http.client.HTTPConnection("127.0.0.1", site["port"], timeout=30)
    conn.request("GET", path)
    resp = conn.getresponse()
    body = resp.read().decode()
    assert resp.status == 404, (path, resp.status, body[:200])
    assert "[state]" not in body and "SQLite" not in body
    browser.get(site["url"] + path)
    assert "Not found" in text(browser)


def test_json_twins_and_headers(site):
    with urllib.request.urlopen(site["url"] + "/?format=json") as r:
        data = json.load(r)
        csp = r.headers["Content-Security-Policy"]
    assert "script-src" not in csp and "default-src 'none'" in csp
    assert data["series"][0]["title"] == f"net: {HOSTILE}"
    sid = next(s["id"] for s in data["series"] if s["version"] == 1 and "helper" in s["title"])
    with urllib.request.urlopen(f"{site['url']}/series/{sid}?format=json") as r:
        page = json.load(r)
    assert page["grid"]["rows"] and page["summary"]["errors"] == 1
    assert any(f["where"] == "a.c:3" and f["check"] == "source-inline" for f in page["findings"])


def test_tests_page_shows_the_memory_and_known_failures(tmp_path, browser):
    """The memory as the bot keeps it (results recorded by Memory.judge on a
    boot job's result) and the config's known failures, read in the browser."""
    from test_bot_memory import BASE, TEST, boot_result

    from napipatch.bot.memory import Memory
    from napipatch.bot.state import State

    cfg = tmp_path / "bot.toml"
    cfg.write_text(f"""
[state]
dir = "{tmp_path / 'state'}"
[[inbox]]
name = "netdev"
path = "{tmp_path}"
[[known_failure]]
test = "net:nl_netdev.py:page_pool_check"
reason = "<b>netdevsim</b> lacks page pool stats"
until = "2099-01-31"
""")
    state = State(tmp_path / "state" / "bot.sqlite3")
    state.save_memory_settings(10, [{"test": "net:nl_netdev.py:page_pool_check",
                                     "reason": "<b>netdevsim</b> lacks page pool stats",
                                     "until": "2099-01-31"}])
    for sid, failing in ((1, True), (2, False), (3, True)):
        Memory(state, series_id=sid).judge(boot_result(failing), BASE)
    state.close()
    port = free_port()
    with serving(cfg, port):
        browser.get(f"http://127.0.0.1:{port}/")
        browser.find_element(By.LINK_TEXT, "tests").click()
        row = browser.find_element(By.XPATH, f"//table[@class='tests']//tr[td='{TEST}']")
        assert row.text == f"{TEST} {BASE[:12]} virtio-net 3 fail pass fail", row.text
        links = [a.get_attribute("href") for a in row.find_elements(By.TAG_NAME, "a")]
        assert links == [f"http://127.0.0.1:{port}/series/{n}" for n in (3, 2, 1)]
        known = browser.find_element(By.CSS_SELECTOR, "table.known tbody").text
        assert known == "net:nl_netdev.py:page_pool_check 2099-01-31 " \
                        "<b>netdevsim</b> lacks page pool stats"


def test_a_jobs_console_is_kept_and_its_splat_marked(tmp_path, browser):
    """A boot job's finding names its console log: the bot keeps a copy
    under its state (the job's cache may go), and the log page marks the
    splat's first line and lands on it."""
    from test_bot import V4
    from test_bot_memory import SPLAT

    from napipatch.bot import artefacts
    from napipatch.bot.state import State
    from napipatch.mails.mbox import read_mbox
    from napipatch.mails.series import assemble
    from napipatch.report.findings import Finding, Severity
    from napipatch.report.model import CheckResult, build

    console = tmp_path / "job" / "console.log"
    console.parent.mkdir()
    boot = "".join(f"[    1.{n:06d}] booting, line {n}\n" for n in range(200))
    console.write_text(boot + SPLAT + "[   13.000000] ok 1 selftests: net: nl_netdev.py\n")
    series = assemble(read_mbox(V4), str(V4))
    boot = (CheckResult("boot/virtio-net", "fail", 42.0), [Finding(
        "boot", Severity.ERROR, 0, "virtio-net: kernel WARNING splat during the boot",
        hint=f"first frames: napi_threaded_poll < kthread; console log: {console}")])
    state = State(tmp_path / "state" / "bot.sqlite3")
    state.db.execute("INSERT INTO series(id, key, title, version, state, first_seen, updated) "
                     "VALUES(1, 'k', ?, 4, 'reported', 0, 0)", (series.title,))
    # a finding's text may quote the guest: a file outside the job's cache is never copied
    secret = tmp_path / "secret.log"
    secret.write_text("not for the web\n")
    report = build(series, [boot, (CheckResult("kunit", "fail", 1.0), [Finding(
        "kunit", Severity.ERROR, 1, "KUnit x fails", hint=f"x; console log: {secret}")])])
    assert artefacts.keep(tmp_path / "state", state, 1, report, console.parent) == \
        ["boot-virtio-net", "kunit"]
    state.close()
    console.unlink()  # the page serves the bot's copy
    cfg = tmp_path / "bot.toml"
    cfg.write_text(f'[state]\ndir = "{tmp_path / "state"}"\n[[inbox]]\nname = "netdev"\n'
                   f'path = "{tmp_path}"\n')
    port = free_port()
    with serving(cfg, port) as url:
        browser.get(f"{url}/series/1")
        browser.find_element(By.LINK_TEXT, "output of boot/virtio-net").click()
        marked = browser.find_element(By.CSS_SELECTOR, "ul.marked").text.splitlines()
        # the finding's own line, and the splat's first line in the console
        assert marked[0].endswith(": error") and marked[1].endswith(": WARNING splat"), marked
        n = int(marked[1].split()[1].rstrip(":"))
        browser.find_element(By.LINK_TEXT, f"line {n}").click()
        target = browser.execute_script("return document.querySelector(':target')")
        assert target.get_attribute("id") == f"L{n}"
        assert "WARNING: CPU: 0 PID: 77 at net/core/dev.c:6789" in target.text
        # a long console: the browser scrolled to the line
        assert browser.execute_script("return window.scrollY") > 0
        top = browser.execute_script("return arguments[0].getBoundingClientRect().top", target)
        assert 0 <= top < browser.execute_script("return window.innerHeight")
        browser.get(f"{url}/log/1/kunit")
        assert f"console log: {secret}" in text(browser) and "not for the web" not in text(browser)


def test_serve_bad_input_is_one_line(cli, tmp_path):
    cfg = tmp_path / "bot.toml"
    cfg.write_text(f'[state]\ndir = "{tmp_path / "state"}"\n[[inbox]]\nname = "netdev"\n'
                   f'path = "{tmp_path}"\n')
    cp = cli("bot", "serve", "--config", cfg, check=2)
    assert cp.stderr.count("\n") == 1 and "no state yet" in cp.stderr, cp.stderr
    from napipatch.bot.state import State

    State(tmp_path / "state" / "bot.sqlite3").close()
    for listen, why in (("8080", "--listen takes HOST:PORT"), ("localhost:http", "HOST:PORT"),
                        ("192.0.2.1:8080", "cannot listen there: ")):
        cp = cli("bot", "serve", "--config", cfg, "--listen", listen, check=2)
        assert cp.stderr.count("\n") == 1 and why in cp.stderr, cp.stderr
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        cp = cli("bot", "serve", "--config", cfg, "--listen", f"127.0.0.1:{port}", check=2)
    assert cp.stderr.count("\n") == 1 and "Address already in use" in cp.stderr, cp.stderr
