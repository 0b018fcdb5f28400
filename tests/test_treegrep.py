"""TreeGrep gives what ``git grep -n REV`` gives, from one grep of the base.

Each case compares against real ``git grep`` over the commit's objects, in a
small repository (so every path is fast): a clean checkout at the base, a
checkout at another commit (the difference is re-matched), a dirty checkout
(the objects are grepped), and the on-disk cache of a second run.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from napipatch.tree import gitutil, treegrep
from napipatch.tree.treegrep import TreeGrep

from conftest import git, small_repo

YNL = treegrep.regex(r"^/\* YNL-GEN (kernel|uapi|user)", fixed="/* YNL-GEN ")
WORDS = treegrep.words({"napi_set_threaded", "dev_set_threaded"})


def _commit(repo: Path, files: dict[str, str | None], msg: str) -> str:
    for path, text in files.items():
        p = repo / path
        if text is None:
            git(repo, "rm", "-q", path)
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        git(repo, "add", path)
    git(repo, "commit", "-q", "-m", msg)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path):
    r = small_repo(tmp_path / "repo")
    base = _commit(r, {
        "include/uapi/linux/netdev.h": "/* SPDX */\n/* YNL-GEN uapi header */\n#define X 1\n",
        "net/core/netdev-genl-gen.c": "/* YNL-GEN kernel source */\nint x;\n",
        "net/core/dev.c": "int dev_set_threaded(struct net_device *d, bool t);\n"
                          "int r = dev_set_threaded(d, true);\nint my_dev_set_threaded_x;\n",
        "drivers/a.c": "void f(void) { dev_set_threaded(d, false); }\n",
        "docs/a.txt": "dev_set_threaded is not in a .c file\n",
        "bin/blob.c": "dev_set_threaded\0binary\n",
        "net/core/notgen.c": "x; /* YNL-GEN kernel source */\n/* YNL-GEN other */\n",
    }, "base")
    tip = _commit(r, {
        "net/core/dev.c": "int napi_set_threaded(struct napi_struct *n, u8 t);\n"
                          "int dev_set_threaded(struct net_device *d, u8 t);\n",
        "drivers/a.c": None,                                       # removed
        "drivers/b.c": "x = napi_set_threaded(n, 2);\n",           # added
        "tools/net/ynl/generated/netdev-user.c": "/* YNL-GEN user source */\n",
        "include/uapi/linux/netdev.h": "/* SPDX */\n#define X 1\n",  # no longer generated
    }, "tip")
    return r, base, tip


def _git_grep(repo: Path, rev: str, pat: treegrep.Pattern) -> dict[str, list[int]]:
    """The oracle: git grep of the commit's objects with the pattern itself."""
    args = ["grep", "-n", "-I", "--null"]
    if pat.regex is not None:
        args += ["-E", "-e", pat.regex]
    else:
        args += ["-w", "-F"] + [a for w in pat.words for a in ("-e", w)]
    cp = subprocess.run(["git", "-C", str(repo), *args, rev, "--", *pat.paths],
                        capture_output=True, text=True)
    return treegrep.parse_output(cp.stdout, f"{rev}:")


def _grep(repo, base, rev, pat, cache=None):
    reader = gitutil.ObjectReader(repo)
    try:
        g = TreeGrep(repo, base, reader, cache)
        return g.grep(rev, pat), g.how[pat.key()]
    finally:
        reader.close()


@pytest.mark.parametrize("pat", [YNL, WORDS], ids=["regex", "words"])
def test_clean_checkout_at_the_base(repo, pat):
    r, base, tip = repo
    git(r, "checkout", "-q", base)
    for rev in (base, tip):
        got, how = _grep(r, base, rev, pat)
        assert how == "checkout"
        assert got == _git_grep(r, rev, pat)
    assert _grep(r, base, tip, WORDS)[0] == {"net/core/dev.c": [1, 2], "drivers/b.c": [1]}


@pytest.mark.parametrize("pat", [YNL, WORDS], ids=["regex", "words"])
def test_checkout_at_another_commit(repo, pat):
    r, base, tip = repo
    git(r, "checkout", "-q", tip)          # the user's branch, the base is behind it
    got, how = _grep(r, base, tip, pat)
    assert how.startswith("checkout +")
    assert got == _git_grep(r, tip, pat)
    assert _grep(r, base, base, pat)[0] == _git_grep(r, base, pat)


def test_dirty_checkout_greps_the_objects(repo):
    r, base, tip = repo
    git(r, "checkout", "-q", base)
    (r / "drivers/a.c").write_text("nothing here\n")       # modified, not committed
    got, how = _grep(r, base, tip, WORDS)
    assert how == "objects"
    assert got == _git_grep(r, tip, WORDS)
    git(r, "checkout", "-q", "--", ".")
    (r / "extra.c").write_text("dev_set_threaded\n")
    git(r, "add", "extra.c")                               # staged only
    assert _grep(r, base, tip, WORDS)[1] == "objects"


def test_sparse_checkout_greps_the_objects(repo):
    r, base, tip = repo
    git(r, "checkout", "-q", base)
    git(r, "sparse-checkout", "set", "--no-cone", "/net/")  # drivers/a.c leaves the worktree
    assert not (r / "drivers/a.c").exists()
    got, how = _grep(r, base, tip, WORDS)
    assert how == "objects"
    assert got == _git_grep(r, tip, WORDS)


def test_the_base_result_is_kept_on_disk(repo, tmp_path):
    r, base, tip = repo
    git(r, "checkout", "-q", base)
    cache = tmp_path / "cache"
    first, how = _grep(r, base, tip, WORDS, cache)
    assert how == "checkout"
    again, how = _grep(r, base, tip, WORDS, cache)
    assert (again, how) == (first, "cache")
    # A different pattern is a different entry.
    assert _grep(r, base, tip, YNL, cache)[1] == "checkout"


def test_a_path_with_a_newline_does_not_desynchronise_the_reader(repo):
    """Paths come from mailed patches; one with a newline must not make every
    later read return the wrong file."""
    r, base, tip = repo
    reader = gitutil.ObjectReader(r)
    try:
        assert reader.read(base, f"x\n{base}:net/core/dev.c") is None
        assert reader.text(base, "net/core/dev.c").startswith("int dev_set_threaded(")
        assert reader.text(tip, "drivers/b.c") == "x = napi_set_threaded(n, 2);\n"
    finally:
        reader.close()
