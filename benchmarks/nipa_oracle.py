"""By hand: NIPA's own test scripts as the oracle for napipatch's NIPA checks.

    .venv/bin/python benchmarks/nipa_oracle.py --nipa NIPA_CHECKOUT [--tree ~/.cache/napipatch/linux-6.12]

For each small series (each meant to turn exactly one NIPA test red, or to
keep it green) it prints NIPA's exit code and description beside
napipatch's findings, for: verify_signedoff, verify_fixes (NIPA's shell
scripts, run after ``git am -s`` in a worktree of a throwaway repository),
cc_maintainers, fixes_present, series_format and maintainers (NIPA's Python
tests, imported from the checkout and called with small stand-in objects).
NIPA is read, never copied; nothing in the tests or CI needs it: the same
series and the outcomes seen here are in tests/test_check_*.py and the
fixtures.

cc_maintainers runs get_maintainer.pl in a directory of symlinks to the
kernel tree's entries, with git through GIT_DIR (its lore search for stale
addresses is replaced by "not stale"); maintainers runs in a hard-link copy
of the tree with the series' files written in (each replaced file is
unlinked first: the shared tree is never written) and an index of the
series' commit (GIT_INDEX_FILE), as get_maintainer.pl asks git which files
are tracked. Exit codes: 0 success, 250 warning, anything else fail.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from conftest import commit_files, edit, format_patch, git, small_repo  # noqa: E402

NP = [sys.executable, "-m", "napipatch"]
SOB = "Signed-off-by: Ada Lovelace <ada@example.org>\n"


class Stub:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def ours(target, check, *extra) -> list:
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_INDEX_FILE")}
    cp = subprocess.run([*NP, "check", str(target), "--only", check, "--format", "json",
                         "--no-cache", *extra], capture_output=True, text=True, env=env, cwd=ROOT)
    return [(f["severity"], f["patch"], f["message"][:100])
            for f in json.loads(cp.stdout)["findings"]]


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def mail(subject: str, message: str) -> str:
    diff = ("diff --git a/net/core/x.c b/net/core/x.c\n--- a/net/core/x.c\n+++ b/net/core/x.c\n"
            "@@ -1 +1 @@\n-int x = 1;\n+int x = 2;\n")
    return (f"From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
            f"From: Ada Lovelace <ada@example.org>\nDate: Thu, 1 Jan 2026 00:00:00 +0000\n"
            f"Subject: {subject}\n\n{message.rstrip()}\n---\n{diff}-- \n2.39.5\n\n")


def git_scripts(nipa: Path, tmp: Path) -> None:
    repo = small_repo(tmp / "repo")
    root = git(repo, "commit-tree", git(repo, "write-tree"), "-m", "root")
    base = commit_files(repo, root, {"net/core/x.c": "int x;\n"}, "net: core: add x\n\nBase.\n")
    culprit = commit_files(repo, base, {"net/core/x.c": "int x = 1;\n"}, "net: core: set x\n\nSet.\n")
    short = culprit[:12]
    cases = [
        ("verify_signedoff", "signoff", "no sign-off", "Nothing.\n"),
        ("verify_signedoff", "signoff", "another's", "Fix.\n\nSigned-off-by: Else <else@example.org>\n"),
        ("verify_signedoff", "signoff", "name only", "Fix.\n\nSigned-off-by: ada lovelace <o@example.org>\n"),
        ("verify_signedoff", "signoff", "in-body author", "From: Jane <jane@example.org>\n\nFix.\n\n" + SOB),
        ("verify_fixes", "fixes-tag", "good", f'Fix.\n\nFixes: {short} ("net: core: set x")\n' + SOB),
        ("verify_fixes", "fixes-tag", "8 digits", f'Fix.\n\nFixes: {culprit[:8]} ("net: core: set x")\n' + SOB),
        ("verify_fixes", "fixes-tag", "commit word", f'Fix.\n\nFixes: commit {short} ("net: core: set x")\n' + SOB),
        ("verify_fixes", "fixes-tag", "other subject", f'Fix.\n\nFixes: {short} ("net: core: set y")\n' + SOB),
        ("verify_fixes", "fixes-tag", "prefix", f'Fix.\n\nFixes: {short} ("net: core: se")\n' + SOB),
        ("verify_fixes", "fixes-tag", "missing", f'Fix.\n\nFixes: 0123456789abcdef ("net: core: set x")\n' + SOB),
        ("verify_fixes", "fixes-tag", "bare subject", f"Fix.\n\nFixes: {short} net: core: set x\n" + SOB),
        ("verify_fixes", "fixes-tag", "blank lines", f'Fix.\n\nFixes: {short} ("net: core: set x")\n\n' + SOB),
    ]
    for i, (test, check, name, message) in enumerate(cases):
        text = mail("[PATCH net] net: core: fix x", message)
        wt = tmp / f"wt{i}"
        git(repo, "worktree", "add", "-q", "--detach", str(wt), culprit)
        (tmp / f"m{i}").write_text(text)
        env = dict(os.environ, GIT_COMMITTER_NAME="NIPA", GIT_COMMITTER_EMAIL="nipa@localhost")
        subprocess.run(["git", "am", "-q", "-s", str(tmp / f"m{i}")], cwd=wt, env=env, check=True)
        r, w = os.pipe()
        cp = subprocess.run(["bash", str(nipa / "tests/patch" / test / f"{test}.sh"), "HEAD~..HEAD"],
                            cwd=wt, capture_output=True, env=dict(os.environ, DESC_FD=str(w)),
                            pass_fds=(w,))
        os.close(w)
        desc = os.read(r, 4096).decode().strip()
        os.close(r)
        print(f"{test} {name}: NIPA {cp.returncode} {desc!r}\n    napipatch "
              f"{ours(tmp / f'm{i}', check, '--tree', repo, '--base', culprit)}")


def cc_maintainers(nipa: Path, tree: Path, tmp: Path) -> None:
    mod = load(nipa / "tests/patch/cc_maintainers/test.py", "nipa_cc")
    mod.stale_db.is_stale = lambda *_a, **_k: False       # no lore search here
    fake = tmp / "fake"
    fake.mkdir()
    for e in tree.iterdir():
        if e.name != ".git":
            (fake / e.name).symlink_to(e)
    (fake / ".git").mkdir()
    os.environ["GIT_DIR"] = str(tree / ".git")
    base = git(tree, "rev-parse", "HEAD")
    path = "net/core/gro_cells.c"

    def commit(parent, message, n=1):
        text = edit(tree, parent, path, "#include <net/gro_cells.h>",
                    "#include <net/gro_cells.h>\n" + "/* c */\n" * n)
        return commit_files(tree, parent, {path: text}, message)
    general = ["edumazet@google.com", "kuba@kernel.org", "pabeni@redhat.com",
               "horms@kernel.org", "netdev@vger.kernel.org"]
    plain = commit(base, "net: gro_cells: add a comment\n\nWhy.\n")
    culprit = commit(base, "net: gro_cells: add a bug\n\nOops.\n\nSigned-off-by: Bug "
                     "<bug@example.org>\nReviewed-by: Rev <rev@example.org>\n")
    fix = commit(culprit, f'net: gro_cells: fix\n\nFix.\n\nFixes: {culprit[:12]} ("net: '
                 f'gro_cells: add a bug")\n{SOB}', 2)
    for name, b, t, to in (("all", base, plain, general), ("one missing", base, plain, general[1:]),
                           ("list only", base, plain, general[-1:]),
                           ("blamed missing", culprit, fix, general),
                           ("blamed there", culprit, fix, general + ["bug@example.org",
                                                                     "rev@example.org"])):
        d = format_patch(tree, f"{b}..{t}", tmp / f"cc-{name.replace(' ', '-')}",
                         "--subject-prefix=PATCH net-next", *[f"--to={a}" for a in to])
        text = next(d.glob("0001-*")).read_text()
        patch = Stub(raw_patch=text, series=Stub(cover_pull=False),
                     write_out=lambda fp, t=text: (fp.write(t.encode()), fp.flush()))
        rc, desc, _log = mod.cc_maintainers(Stub(path=str(fake)), patch, None)
        print(f"cc_maintainers {name}: NIPA {rc} {desc[:90]!r}\n    napipatch "
              f"{ours(d, 'cc-maintainers', '--tree', tree)}")
    del os.environ["GIT_DIR"]


def series_tests(nipa: Path, tmp: Path) -> None:
    fixes = load(nipa / "tests/series/fixes_present/test.py", "nipa_fixes")
    fmt = load(nipa / "tests/series/series_format/test.py", "nipa_fmt")
    fx = ROOT / "tests/fixtures/checks"
    for name in ("bad", "good"):
        mbox = fx / "fixes-present" / f"{name}.mbox"
        env_line = "From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001\n"
        parts = [p for p in mbox.read_text().split(env_line)[1:] if " 0/" not in p[:200]]
        rc, desc = fixes.fixes_present(Stub(pfx="net"), Stub(patches=[Stub(raw_patch=p)
                                                                     for p in parts]), None)
        print(f"fixes_present {name}: NIPA {rc} {desc!r}\n    napipatch {ours(mbox, 'fixes-present')}")
    for n, cover, tag in ((2, False, "net-next"), (3, False, "net-next"), (16, True, "net-next"),
                          (2, True, "")):
        sub = f"[PATCH {tag} {{i}}/{n}]".replace("  ", " ")
        mails = ([mail(sub.format(i=0), "Cover.\n")] if cover else []) + \
            [mail(sub.format(i=i) + " net: core: x", "X.\n\n" + SOB) for i in range(1, n + 1)]
        mbox = tmp / f"fmt-{n}-{cover}-{tag}.mbox"
        mbox.write_text("".join(mails))
        rc, desc = fmt.series_format(None, Stub(cover_letter=cover, cover_pull=False,
                                                patches=mails[cover:], tree_mark_expected=True,
                                                tree_marked=bool(tag)), None)
        print(f"series_format {n} patches, cover {cover}, tag {tag!r}: NIPA {rc} {desc!r}\n"
              f"    napipatch {ours(mbox, 'series-format')}")


def maintainers(nipa: Path, tree: Path, tmp: Path) -> None:
    mod = load(nipa / "tests/series/maintainers/test.py", "nipa_maint")
    farm = tmp / "farm"
    shutil.copytree(tree, farm, copy_function=os.link, symlinks=True,
                    ignore=shutil.ignore_patterns(".git"))
    (farm / ".git").mkdir()
    base = git(tree, "rev-parse", "HEAD")
    src = "// SPDX-License-Identifier: GPL-2.0\nint acme;\n"
    whole = (tree / "MAINTAINERS").read_text()
    own = whole.replace("ACER ASPIRE", "ACME\nM:\tAda <ada@example.org>\nS:\tMaintained\n"
                        "F:\tdrivers/net/ethernet/acme/\n\nACER ASPIRE", 1)
    for name, files in (("no entry", {"drivers/net/ethernet/acme/a.c": src}),
                        ("own entry", {"drivers/net/ethernet/acme/a.c": src, "MAINTAINERS": own})):
        for p, text in files.items():
            f = farm / p
            if f.exists():
                f.unlink()          # a hard link: never write through it
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text)
        c = commit_files(tree, base, files, "net: acme: add\n\nNew.\n")
        d = format_patch(tree, f"{base}..{c}", tmp / f"m-{name.replace(' ', '-')}",
                         "--subject-prefix=PATCH net-next")
        env = dict(os.environ, GIT_DIR=str(tree / ".git"), GIT_INDEX_FILE=str(tmp / f"i{c}"))
        subprocess.run(["git", "read-tree", c], env=env, check=True)
        saved = dict(os.environ)
        os.environ.update(GIT_DIR=env["GIT_DIR"], GIT_INDEX_FILE=env["GIT_INDEX_FILE"])
        rc, desc, _log = mod.maintainers(Stub(path=str(farm)), Stub(patches=[
            Stub(raw_patch=p.read_text()) for p in sorted(d.glob("0*.patch"))]), None)
        os.environ.clear()
        os.environ.update(saved)
        print(f"maintainers {name}: NIPA {rc} {desc!r}\n    napipatch "
              f"{ours(d, 'maintainers', '--tree', tree)}")
        for p in files:
            (farm / p).unlink()
        if "MAINTAINERS" in files:
            os.link(tree / "MAINTAINERS", farm / "MAINTAINERS")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nipa", type=Path, required=True, help="a checkout of linux-netdev/nipa")
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="nipa-oracle-") as td:
        tmp = Path(td)
        git_scripts(a.nipa, tmp)
        series_tests(a.nipa, tmp)
        cc_maintainers(a.nipa, a.tree, tmp)
        maintainers(a.nipa, a.tree, tmp)


if __name__ == "__main__":
    main()
