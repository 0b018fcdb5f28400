"""napipatch's own fuzz test: a seeded generator of hostile inputs built from
the real lore mails (tests/fixtures/lore) and the shipped series (series/).

Classes: truncated mails, bit flips, charsets and transfer encodings,
header injection (control characters, newlines, the Message-ID the stdlib
parser chokes on, undecodable bytes), patch numbering (huge, zero,
inverted, mixed), sizes (long headers, many messages, a 20,000-line hunk;
test_hostile.py has the 100,000-line one), diff paths (``..``, absolute,
newlines, symlinks, binary), MIME structure, filesystem oddities in patch
directories and as the target (FIFOs, /dev/zero, symlink loops, directories
named like patches), and imports under hostile names followed by checks of
what was stored.

Every input must: exit 0, 1 or 2 (3 is an internal error: a failure
here), print no traceback, finish within its time limit, and write
nothing outside the cache and the store (fresh HOME, cwd and TMPDIR under
tmp_path; the repository is compared before and after). A payload that
would create a file if any script ran is planted; the file must not appear.

NAPIPATCH_FUZZ_SEED and NAPIPATCH_FUZZ_COUNT change the seed and the number
of inputs; the seed is in every failure message so a failure replays.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import LORE, ROOT

SEED = int(os.environ.get("NAPIPATCH_FUZZ_SEED", "19"))
COUNT = int(os.environ.get("NAPIPATCH_FUZZ_COUNT", "320"))
LIMIT = 60.0          # seconds per input
WORKERS = 2           # driver processes
ENVELOPE = b"From mboxrd@z Thu Jan  1 00:00:00 1970\n"
PWNED = "napipatch-fuzz-pwned"
DRIVER = Path(__file__).with_name("fuzz_driver.py")


# ------------------------------------------------------------------ sources
def lore_messages() -> list[bytes]:
    out = []
    for f in sorted(LORE.glob("*.mbox")):
        out += [ENVELOPE + p for p in f.read_bytes().split(ENVELOPE) if p.strip()]
    return out


def shipped_series() -> list[list[bytes]]:
    """Each shipped version's format-patch files, in order."""
    return [[f.read_bytes() for f in sorted(v.glob("*.patch"))]
            for v in sorted((ROOT / "series").glob("*/v*")) if list(v.glob("*.patch"))]


# ------------------------------------------------------------------ mutators
CHARSETS = ["utf-8", "us-ascii", "iso-8859-1", "utf-16", "utf-7", "punycode", "idna", "rot13",
            "x-unknown", "", "utf-8\"; x=\"", "cp1252", "base64", "uu"]
HOSTILE = ["\n", "\r\n", "\x00", "\x1b[31m", "\u2028", "\udcff", "<<a b>> <c@d> <", "=?utf-8?q?=FF?=",
           "=?x-bogus?b?AAAA?=", "$(touch " + PWNED + ")", "`touch " + PWNED + "`", "\\", "'\"",
           "%s%n", "../../../../etc/passwd", "A" * 5000, "\t\t", "=?utf-8?b?", "<>", "@"]
NUMBERING = ["1/1000000000000000000000000000000", "0/0", "5/3", "-1/4", "1/0", "01/04",
             "1/1001", "1000/1000", "v0", "v1000000000000000000000000000000", "v-1", "vv4",
             "1/4 2/4", "RFC v2 1/2", "999999999999/1", "v999 1/1"]
PATHS = ["../../etc/passwd", "/etc/passwd", "a b/c d.c", "x\ny.c", "net/core/\x1b.c",
         "include/linux/netdevice.h", "", ".git/config", "a" * 300 + ".c", "dev/null",
         "Documentation/netlink/specs/netdev.yaml", "net/core/dev.c\t"]


def split(msg: bytes) -> tuple[bytes, bytes]:
    i = msg.find(b"\n\n")
    return (msg, b"") if i < 0 else (msg[:i], msg[i + 2:])


def set_header(msg: bytes, name: str, value: bytes) -> bytes:
    head, body = split(msg)
    lines = [ln for ln in head.split(b"\n") if not ln.lower().startswith(name.lower().encode() + b":")]
    return b"\n".join(lines + [name.encode() + b": " + value]) + b"\n\n" + body


def m_truncate(r, m):
    return m[:r.randrange(len(m))] if m else m


def m_bitflip(r, m):
    if not m:
        return m
    b = bytearray(m)
    for _ in range(r.randint(1, 40)):
        i = r.randrange(len(b))
        b[i] ^= 1 << r.randrange(8)
    return bytes(b)


def m_charset(r, m):
    cs = r.choice(CHARSETS)
    m = set_header(m, "Content-Type", f"text/plain; charset={cs}".encode())
    if r.random() < 0.4:
        m = set_header(m, "Content-Transfer-Encoding",
                       r.choice([b"base64", b"quoted-printable", b"7bit", b"x-uue", b"8bit"]))
    if r.random() < 0.3:
        head, body = split(m)
        m = head + b"\n\n" + body.decode("utf-8", "replace").encode("latin-1", "replace")
    return m


def m_header(r, m):
    name = r.choice(["Subject", "From", "Message-ID", "In-Reply-To", "References", "Date",
                     "Content-Type", "MIME-Version", "To"])
    v = r.choice(HOSTILE)
    if name == "Subject" and r.random() < 0.5:
        v = "[PATCH net-next v4 1/4] " + v
    raw = v.encode("utf-8", "surrogateescape")
    if r.random() < 0.3:
        raw += bytes(r.randrange(256) for _ in range(r.randint(1, 12)))
    return set_header(m, name, raw)


def m_numbering(r, m):
    return set_header(m, "Subject", f"[PATCH net-next {r.choice(NUMBERING)}] net: fuzz".encode())


def m_size(r, m):
    kind = r.randrange(4)
    if kind == 0:
        return set_header(m, "Subject", b"[PATCH net-next 1/1] " + b"x " * r.choice([5000, 70000]))
    if kind == 1:
        return set_header(m, "X-Junk", b"y" * r.choice([100_000, 300_000]))
    if kind == 2:
        return m * r.choice([50, 200])
    return m + b"\n" + b"+" * 70 + b"\n" * r.choice([10, 1000])


def m_paths(r, m):
    p = r.choice(PATHS).encode()
    out = m.replace(b"diff --git a/", b"diff --git a/" + p + b"/", 1) if r.random() < 0.5 \
        else m.replace(b"+++ b/", b"+++ b/" + p, 1)
    if r.random() < 0.3:
        out = out.replace(b"index ", b"new mode 120000\nindex ", 1)
    if r.random() < 0.2:
        out = out.replace(b"@@ -", b"GIT binary patch\nliteral 5\nMcmZ\n\n@@ -", 1)
    return out


def m_mime(r, m):
    head, body = split(m)
    bnd = b"b" * r.randint(1, 3)
    parts = b"--" + bnd + b"\nContent-Type: text/html\n\n<p>x</p>\n--" + bnd + \
        b"\nContent-Type: " + r.choice([b"text/plain", b"multipart/mixed", b"message/rfc822"]) + \
        b"\n\n" + body + (b"\n--" + bnd + b"--\n" if r.random() < 0.5 else b"")
    return set_header(head + b"\n\n" + parts, "Content-Type",
                      b"multipart/" + r.choice([b"mixed", b"alternative"]) + b"; boundary=" + bnd)


MAIL_MUTATORS = [m_truncate, m_bitflip, m_charset, m_header, m_numbering, m_size, m_paths,
                 m_mime]
NAMES = ["ok\n", "series.toml", "CON", "nul.txt", "..", ".", "-rf", "--help", "a/b", "x" * 65,
         "\x1b[31m", "v1", "NAME@v2", "tbp", "tbp ", " tbp", "t\tb", "ok", "Ok.v2", "a..b",
         "$(touch " + PWNED + ")", "\u00e9t\u00e9"]


# ------------------------------------------------------------------ cases
class Case:
    """One input: files to write under the case directory, then a command line."""

    def __init__(self, label: str, files: dict, args: list[str]):
        self.label, self.files, self.args = label, files, args


def mbox_case(r, i, msgs, series) -> Case:
    if r.random() < 0.5:
        mails = list(r.choice(series))
        mails = [(ENVELOPE + x if not x.startswith(b"From ") else x) for x in mails]
    else:
        mails = list(msgs)
    n = r.randint(1, 3)
    muts = []
    for _ in range(n):
        mut = r.choice(MAIL_MUTATORS)
        j = r.randrange(len(mails))
        mails[j] = mut(r, mails[j])
        muts.append(mut.__name__)
    if r.random() < 0.15:
        r.shuffle(mails)
    if r.random() < 0.1:
        mails.append(r.choice(mails))
    data = b"\n".join(mails)
    cmd = r.choice([["check", "{d}/in.mbox"], ["check", "{d}/in.mbox", "--format", "json"],
                    ["check", "{d}/in.mbox", "--format", "markdown"],
                    ["series", "import", "{d}/in.mbox", "--name", f"fz{i}"]])
    return Case("mbox " + "+".join(muts), {"in.mbox": data}, cmd)


def dir_case(r, i, msgs, series) -> Case:
    files = {}
    src = r.choice(series)
    for k, text in enumerate(src):
        files[f"out/{k:04d}-p.patch"] = text
    k = r.randrange(len(src))
    name = f"out/{k:04d}-p.patch"
    files[name] = r.choice(MAIL_MUTATORS)(r, files[name])
    odd = r.choice(["fifo", "loop", "zero", "dir", "empty", "dangling", "none", "none"])
    bad = f"out/{len(src):04d}-odd.patch"
    files[bad] = {"fifo": "FIFO", "loop": "LOOP", "zero": "ZERO", "dir": "DIR",
                  "empty": b"", "dangling": "DANGLING", "none": None}[odd]
    if files[bad] is None:
        del files[bad]
    cmd = r.choice([["check", "{d}/out"], ["series", "import", "{d}/out", "--name", f"fd{i}"]])
    return Case(f"dir {odd}", files, cmd)


def target_case(r, i, msgs, series) -> Case:
    kind = r.choice(["fifo", "zero", "loop", "newline", "range", "version", "store"])
    files = {"t": {"fifo": "FIFO", "zero": "ZERO", "loop": "LOOP"}.get(kind, b"x")}
    target = {"fifo": "{d}/t", "zero": "{d}/t", "loop": "{d}/t",
              "newline": "{d}/no\nsuch\x1b[2J", "range": "HEAD~3..\nHEAD",
              "version": "series/tbp@v1000000000000000000000000000000",
              "store": r.choice(["tbp@vx", "tbp@v", "series.toml", "../tbp", "CON@v1"])}[kind]
    cmd = r.choice([["check", target], ["series", "import", target, "--name", f"ft{i}"],
                    ["series", "show", target]])
    return Case(f"target {kind}", files, cmd)


def name_case(r, i, msgs, series) -> Case:
    name = r.choice(NAMES) if r.random() < 0.7 else \
        "".join(r.choice("aZ09._-/\n\x00\x7f@ é") for _ in range(r.randint(1, 12)))
    name = name.replace("\x00", "")  # argv cannot carry NUL
    src = str(LORE / "threaded-busy-poll-v4.mbox")
    follow = r.choice([["series", "show", name], ["check", name], ["series", "list"]])
    return Case(f"name {name!r}", {"_then": json.dumps(follow).encode()},
                ["series", "import", src, "--name", name, "--force"])


GENERATORS = [(mbox_case, 0.5), (dir_case, 0.2), (target_case, 0.15), (name_case, 0.15)]


# Shapes that once crashed or ran unbounded, always in the set (after the
# seeded ones, so a seed replays the same random cases): non-ASCII From:
# addresses, a 1000-patch mbox, an OpenPGP-signed mail (patatt runs gpg).
FROMS = [b"Samiullah Khawaja <skhawaja\xff\xfe@google.com>",
         b"J\xc3\xb6rg M\xc3\xbcller <skhawaja@google.com>",
         b"Jorg <j\xc3\xb6rg@google.com>",
         b"=?utf-8?q?J=C3=B6rg?= <j=?utf-8?q?=C3=B6?=rg@google.com>"]


def big_mbox(n: int) -> bytes:
    out = []
    for i in range(n + 1):
        body = "The cover.\n" if i == 0 else (
            f"net: change {i}\n\nSigned-off-by: Dev <dev@example.org>\n---\n"
            f"diff --git a/net/core/f{i}.c b/net/core/f{i}.c\nnew file mode 100644\n"
            f"index 0000000..1111111\n--- /dev/null\n+++ b/net/core/f{i}.c\n@@ -0,0 +1 @@\n"
            f"+int x{i};\n-- \n2.47.0\n")
        out.append(f"{ENVELOPE.decode()}From: Dev <dev@example.org>\n"
                   f"Date: Mon, 1 Dec 2025 10:00:00 +0000\n"
                   f"Subject: [PATCH net-next {i:04d}/{n}] change {i}\n"
                   f"Message-ID: <big-{i}@example.org>\n\n{body}\n")
    return "".join(out).encode()


def fixed_cases(start: int) -> list[Case]:
    v4 = (LORE / "threaded-busy-poll-v4.mbox").read_bytes()
    out = []
    for k, frm in enumerate(FROMS):
        data = v4.replace(b"From: Samiullah Khawaja <skhawaja@google.com>", b"From: " + frm)
        for cmd in (["check", "{d}/in.mbox", "--format", "json"],
                    ["series", "import", "{d}/in.mbox", "--name", f"fx{start}-{k}"]):
            out.append(Case(f"fixed from {frm!r}", {"in.mbox": data}, cmd))
    big = big_mbox(1000)
    for cmd in (["check", "{d}/in.mbox"], ["check", "{d}/in.mbox", "--format", "json"],
                ["series", "import", "{d}/in.mbox", "--name", f"fx{start}-big"]):
        out.append(Case("fixed 1000 patches", {"in.mbox": big}, cmd))
    signed = (ROOT / "tests" / "fixtures" / "signed" / "signed.patch").read_bytes()
    signed = re.sub(rb"(?m)^X-Developer-Signature: .*(\n[ \t].*)*",
                    b"X-Developer-Signature: v=1; a=openpgp-sha256; t=1700000000; "
                    b"h=from:subject; bh=AAAA; b=iHUEABYIAB0WIQQ=", signed)
    signed = re.sub(rb"(?m)^X-Developer-Key: .*", b"X-Developer-Key: i=nobody@example.org; "
                    b"a=openpgp; fpr=0123456789ABCDEF0123456789ABCDEF01234567", signed)
    out.append(Case("fixed openpgp-signed", {"in.patch": signed}, ["check", "{d}/in.patch"]))
    return out


def generate(seed: int, count: int) -> list[Case]:
    r = random.Random(seed)
    msgs = lore_messages()
    series = shipped_series()
    gens = [g for g, _ in GENERATORS]
    weights = [w for _, w in GENERATORS]
    out = []
    for i in range(count):
        g = r.choices(gens, weights)[0]
        out.append(g(r, i, msgs, series))
    return out + fixed_cases(count)


def materialise(case: Case, d: Path) -> list[list[str]]:
    """Write the case's files under ``d``; its command lines."""
    d.mkdir(parents=True)
    then = None
    for rel, data in case.files.items():
        p = d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if rel == "_then":
            then = json.loads(data)
        elif data == "FIFO":
            os.mkfifo(p)
        elif data == "LOOP":
            os.symlink(p.name + ".2", p)
            os.symlink(p.name, p.with_name(p.name + ".2"))
        elif data == "ZERO":
            os.symlink("/dev/zero", p)
        elif data == "DANGLING":
            os.symlink("/nonexistent/x.patch", p)
        elif data == "DIR":
            p.mkdir()
        else:
            p.write_bytes(data)
    cmds = [[a.replace("{d}", str(d)) for a in case.args]]
    return cmds + ([then] if then else [])


# ------------------------------------------------------------------ running
def snapshot(root: Path, skip: set[Path]) -> set[str]:
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [x for x in dirnames if Path(dirpath, x) not in skip]
        out |= {os.path.join(dirpath, f) for f in filenames + dirnames}
    return out


def repo_state() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--ignored",
                           "--untracked-files=all", "--", ".", ":!.venv", ":!tests/__pycache__"],
                          capture_output=True, text=True).stdout


def run_batch(jobs: list[dict], env: dict, cwd: Path) -> list[dict]:
    cp = subprocess.run([sys.executable, str(DRIVER)], input=json.dumps(jobs), text=True,
                        capture_output=True, env=env, cwd=cwd,
                        timeout=LIMIT * len(jobs) + 120)
    got = [json.loads(ln) for ln in cp.stdout.splitlines() if ln.startswith("{")]
    assert len(got) == len(jobs), f"driver died: {cp.returncode} {cp.stderr[-3000:]}"
    return got


def one_error(stderr: str) -> bool:
    """One ``napipatch: error:`` line, or click's usage message (an argument
    such as ``-rf`` taken for an option)."""
    lines = stderr.strip().splitlines()
    if lines and lines[0].startswith("Usage: "):
        return any(ln.startswith("Error: ") for ln in lines)
    return len(lines) == 1 and lines[0].startswith("napipatch: error: ")


def test_fuzz(tmp_path):
    home, work, tmp, cache, store, inputs = (tmp_path / n for n in
                                             ("home", "work", "tmp", "cache", "store", "in"))
    for d in (home, work, tmp):
        d.mkdir()
    cases = generate(SEED, COUNT)
    jobs = []
    for i, case in enumerate(cases):
        for args in materialise(case, inputs / f"{i:04d}"):
            jobs.append({"args": args, "timeout": LIMIT, "case": i})
    env = dict(os.environ, HOME=str(home), TMPDIR=str(tmp), XDG_CACHE_HOME=str(cache),
               NAPIPATCH_SERIES_DIR=str(store), GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), COLUMNS="120")
    env.pop("NAPIPATCH_TEST_TREE", None)
    before_repo = repo_state()
    before = snapshot(tmp_path, {cache, store})
    t0 = time.monotonic()
    # Consecutive slices, so an import and the command that follows it stay
    # in one process, in order.
    per = -(-len(jobs) // WORKERS)
    batches = [jobs[k:k + per] for k in range(0, len(jobs), per)]
    with ThreadPoolExecutor(WORKERS) as pool:
        results = [r for got in pool.map(lambda b: run_batch(b, env, work), batches) for r in got]
    elapsed = time.monotonic() - t0
    problems = []
    for job, res in zip(jobs, results):
        what = f"seed {SEED} case {job['case']} ({cases[job['case']].label}): {job['args']!r}"
        if res["late"]:
            problems.append(f"{what}: still running after {LIMIT} s")
        elif res["rc"] not in (0, 1, 2):
            problems.append(f"{what}: exit {res['rc']}: {res['stderr'][-600:]}")
        elif "Traceback" in res["stderr"] or "Traceback" in res["stdout"]:
            problems.append(f"{what}: traceback: {res['stderr'][-600:]}")
        elif "check crashed" in res["stdout"]:
            problems.append(f"{what}: a check crashed: {res['stdout'][-600:]}")
        elif res["rc"] == 2 and not one_error(res["stderr"]):
            problems.append(f"{what}: exit 2 without one error line: {res['stderr'][-600:]}")
    print(f"\nfuzz: seed {SEED}: {len(cases)} inputs, {len(jobs)} command lines in "
          f"{elapsed:.0f} s; exit statuses "
          f"{dict(sorted(Counter(r['rc'] for r in results).items()))}")
    assert not problems, "\n".join(problems[:20])
    assert len(cases) >= 300 or COUNT < 300
    after = snapshot(tmp_path, {cache, store})
    assert sorted(after - before) == [], "written outside the cache and the store"
    assert repo_state() == before_repo, "the repository changed"
    assert not list(tmp.iterdir()), f"temporary files left: {list(tmp.iterdir())[:5]}"
    for where in (tmp_path, work, ROOT, Path("/tmp")):
        assert not (where / PWNED).exists(), f"a hostile payload ran ({where / PWNED})"
    assert not any(tmp_path.rglob(PWNED))


def test_generator_is_seeded():
    a = [(c.label, c.args) for c in generate(7, 40)]
    b = [(c.label, c.args) for c in generate(7, 40)]
    assert a == b
    assert {c.label.split()[0] for c in generate(7, 200)} == {"mbox", "dir", "target", "name", "fixed"}


# ------------------------------------------------------------------ with --tree
TREE_FILES = ["net/core/dev.c", "include/linux/netdevice.h", "include/net/busy_poll.h",
              "Documentation/netlink/specs/netdev.yaml", "include/uapi/linux/netdev.h",
              "net/core/netdev-genl.c", "drivers/net/ethernet/intel/idpf/idpf_txrx.h"]
TREE_COUNT = int(os.environ.get("NAPIPATCH_FUZZ_TREE_COUNT", "48"))


def _tree_edit(r, text: str, path: str) -> str | None:
    """A hostile version of ``text`` (None: delete the file)."""
    kind = r.randrange(11)
    lines = text.split("\n")
    at = r.randrange(len(lines))
    if kind == 0:
        return None
    if kind == 1:
        return ""
    if kind == 2:   # a 20,000-line hunk (test_hostile.py: a 100,000-line one, no --tree)
        return text + "".join(f"static int fuzz_{i}\n" for i in range(20_000))
    if kind == 3:   # an unterminated comment or kernel-doc block
        return "\n".join(lines[:at] + ["/**", " * fuzz() - broken", " * @x:"] + lines[at:])
    if kind == 4:   # a python tag where YAML is read
        return text.replace("name:", "name: !!python/object/apply:os.system [\"touch "
                            + PWNED + "\"]\nx:", 1)
    if kind == 5:   # a huge struct member
        return text.replace("struct net_device {", "struct net_device {\n\tint "
                            + "a," * 20000 + "b;", 1)
    if kind == 6:   # unbalanced parentheses and braces
        return "\n".join(lines[:at] + ["int fuzz(" * 200, "{" * 50] + lines[at:])
    if kind == 7:   # control characters and invalid UTF-8 stand-ins
        return text.replace("\n", "\n\x1b[31m\u2028", r.randint(1, 50))
    if kind == 8:   # every prototype renamed
        return text.replace("(", "_fz(", 400)
    if kind == 9:   # a script the patch would like napipatch to run
        return text + "\n# $(touch " + PWNED + ")\n`touch " + PWNED + "`\n"
    return "\n".join(r.sample(lines, min(len(lines), 2000)))


def _tree_case(r, tree, base, k: int, out: Path) -> Path:
    from conftest import commit_files, format_patch

    changes, links = {}, []
    for path in r.sample(TREE_FILES, r.randint(1, 2)):
        if r.random() < 0.15:
            links.append(path)
            continue
        text = subprocess.run(["git", "-C", str(tree), "cat-file", "blob", f"{base}:{path}"],
                              capture_output=True, text=True).stdout
        changes[path] = _tree_edit(r, text, path)
    if r.random() < 0.1:
        changes["scripts/checkpatch.pl"] = f"#!/usr/bin/perl\nsystem('touch {PWNED}');\n"
    c = commit_files(tree, base, changes or {"net/core/fz.c": "int x;\n"},
                     f"net: fuzz {k}\n\nHostile tree input {k}.\n")
    for path in links:   # a header replaced by a symlink
        c = _link(tree, c, path, "../../tools/include/linux/types.h", k)
    d = format_patch(tree, f"{base}..{c}", out)
    if r.random() < 0.25:   # and the mail mangled after format-patch
        f = sorted(d.glob("*.patch"))[0]
        f.write_bytes(r.choice(MAIL_MUTATORS)(r, f.read_bytes()))
    return d


def _link(tree, parent, path, target, k):
    from conftest import git

    idx = Path(os.environ.get("TMPDIR", "/tmp")) / f"fz-index-{os.getpid()}-{k}"
    env = {"GIT_INDEX_FILE": str(idx)}
    git(tree, "read-tree", parent, env=env)
    blob = git(tree, "hash-object", "-w", "--stdin", input=target)
    git(tree, "update-index", "--cacheinfo", f"120000,{blob},{path}", env=env)
    t = git(tree, "write-tree", env=env)
    idx.unlink()
    ident = {"GIT_AUTHOR_NAME": "F", "GIT_AUTHOR_EMAIL": "f@example.org",
             "GIT_COMMITTER_NAME": "F", "GIT_COMMITTER_EMAIL": "f@example.org",
             "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    return git(tree, "commit-tree", t, "-p", parent, "-F", "-",
               input=f"net: link {k}\n\nSigned-off-by: F <f@example.org>\n", env=ident)


@pytest.mark.tree
def test_fuzz_tree(tmp_path, kernel_tree, base_commit):
    """48 hostile patches checked with --tree: same rules, and checks that
    run too long (30 s here) end as ``timeout`` findings instead of holding
    the report."""
    r = random.Random(SEED)
    home, work, tmp, cache, inputs = (tmp_path / n for n in ("home", "work", "tmp", "cache", "in"))
    for d in (home, work, tmp):
        d.mkdir()
    jobs = []
    for k in range(TREE_COUNT):
        d = _tree_case(r, kernel_tree, base_commit, k, inputs / f"{k:02d}")
        fmt = r.choice(["text", "json"])
        jobs.append({"args": ["check", str(d), "--tree", str(kernel_tree), "--format", fmt],
                     "timeout": 300, "case": k})
    env = dict(os.environ, HOME=str(home), TMPDIR=str(tmp), XDG_CACHE_HOME=str(cache),
               NAPIPATCH_SERIES_DIR=str(tmp_path / "store"), GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_COUNT="1",
               GIT_CONFIG_KEY_0="napipatch.check-timeout", GIT_CONFIG_VALUE_0="30")
    before_repo = repo_state()
    t0 = time.monotonic()
    per = -(-len(jobs) // WORKERS)
    batches = [jobs[k:k + per] for k in range(0, len(jobs), per)]
    with ThreadPoolExecutor(WORKERS) as pool:
        results = [x for got in pool.map(lambda b: run_batch(b, env, work), batches) for x in got]
    elapsed = time.monotonic() - t0
    problems = []
    for job, res in zip(jobs, results):
        what = f"seed {SEED} tree case {job['case']}: {job['args']!r}"
        if res["late"]:
            problems.append(f"{what}: still running after 300 s")
        elif res["rc"] not in (0, 1, 2):
            problems.append(f"{what}: exit {res['rc']}: {res['stderr'][-600:]}")
        elif "Traceback" in res["stderr"] or "check crashed" in res["stdout"]:
            problems.append(f"{what}: traceback or crashed check: "
                            f"{(res['stderr'] or res['stdout'])[-600:]}")
    print(f"\nfuzz --tree: seed {SEED}: {len(jobs)} patches in {elapsed:.0f} s; exit statuses "
          f"{dict(sorted(Counter(x['rc'] for x in results).items()))}; slowest "
          f"{max(x['seconds'] for x in results):.0f} s")
    assert not problems, "\n".join(problems[:20])
    assert repo_state() == before_repo
    assert not any(tmp_path.rglob(PWNED)) and not (ROOT / PWNED).exists()
    assert not (kernel_tree / PWNED).exists()
