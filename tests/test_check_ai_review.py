"""The ai-review check: the user's own AI agent, run as netdev runs it.

No model runs here: each test writes the agent, a Python script standing in
for ``claude -p ...``, that reads the series mbox from its standard input,
looks at its working directory and writes ``review-inline.txt`` as
netdev's review prompts have an agent write it. Everything up to the agent
(the throwaway checkout, the sandbox, the deadline, reading the review back
into findings and the NIPA forecast) is napipatch's real code, run through
the CLI as a user runs it.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import commit_files, format_patch, git, small_repo

BASE_C = "".join(f"int base_{i};\n" for i in range(1, 41))
AGENT_HEAD = textwrap.dedent("""\
    import os, subprocess, sys
    from pathlib import Path
    mbox = sys.stdin.read()
    assert Path(os.environ["NAPIPATCH_SERIES_MBOX"]).read_text() == mbox
    tip = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert tip == os.environ["NAPIPATCH_TIP"], (tip, os.environ["NAPIPATCH_TIP"])
    """)


def _root(repo) -> str:
    return git(repo, "commit-tree", git(repo, "mktree", input=""), "-m", "root")


@pytest.fixture
def series(tmp_path):
    """A tree with net/core/dev.c and a two-patch series on it (patch 2 adds
    ``return -EINVAL;`` where patch 1 added the same line elsewhere)."""
    repo = small_repo(tmp_path / "repo")
    base = commit_files(repo, _root(repo), {"net/core/dev.c": BASE_C, "Makefile": "all:\n",
                                            "drivers/net/other.c": "int other;\n"}, "base\n")
    git(repo, "update-ref", "refs/heads/main", base)
    git(repo, "checkout", "-q", "main")
    one = commit_files(repo, base, {"net/core/dev.c": BASE_C.replace(
        "int base_5;\n", "int base_5;\nstatic int one(void)\n{\n\treturn -EINVAL;\n}\n")},
        "net: add one()\n\nOne is needed.\n")
    text = git(repo, "cat-file", "blob", f"{one}:net/core/dev.c") + "\n"
    two = commit_files(repo, one, {"net/core/dev.c": text.replace(
        "int base_30;\n", "int base_30;\nstatic int two(int x)\n{\n\tif (x)\n"
                          "\t\treturn -EINVAL;\n\treturn 0;\n}\n")},
        "net: add two()\n\nTwo is needed too.\n")
    mails = format_patch(repo, f"{base}..{two}", tmp_path / "mails", "--cover-letter",
                         "--subject-prefix=PATCH net-next")
    return repo, mails


def _agent(tmp_path: Path, repo: Path, body: str, name: str = "agent.py") -> None:
    script = tmp_path / name
    script.write_text(AGENT_HEAD + textwrap.dedent(body))
    git(repo, "config", "napipatch.ai-review-command", f"{sys.executable} {script}")


def _check(cli, mails, repo, *extra):
    cp = cli("check", mails, "--tree", repo, "--only", "ai-review", "--format", "json", *extra)
    assert cp.stdout, cp.stderr
    return cp, json.loads(cp.stdout)


def _states(data) -> list[str]:
    return [p["nipa"]["ai-review"]["state"] for p in data["series"]["patches"]]


REVIEW_2 = '''
    Path("review-inline.txt").write_text("""commit 0123456789ab
    Author: Test Author <author@example.org>

    net: add two()

    > diff --git a/net/core/dev.c b/net/core/dev.c
    > --- a/net/core/dev.c
    > +++ b/net/core/dev.c

    [ ... ]

    > +static int two(int x)
    > +{
    > +\\tif (x)
    > +\\t\\treturn -EINVAL;

    Is -EINVAL right for every non-zero x?
    Callers pass -1 on purpose.

    > +\\treturn 0;
    """)
'''


def test_a_comment_on_patch_2_is_a_warning_at_its_line(cli, tmp_path, series):
    repo, mails = series
    _agent(tmp_path, repo, textwrap.dedent("""\
        assert "Subject: [PATCH net-next 2/2] net: add two()" in mbox
        assert Path("net/core/dev.c").read_text().count("return -EINVAL;") == 2
        """) + textwrap.dedent(REVIEW_2))
    cp, data = _check(cli, mails, repo)
    assert cp.returncode == 0, cp.stderr
    (f,) = [f for f in data["findings"] if f["check"] == "ai-review"]
    # patch 2's "return -EINVAL;", not patch 1's: the quote's lines before it decide
    assert (f["severity"], f["patch"], f["file"], f["line"]) == \
        ("warning", 2, "net/core/dev.c", 38)
    assert f["message"] == "AI review: Is -EINVAL right for every non-zero x?"
    assert "Callers pass -1 on purpose." in f["details"]
    assert _states(data) == ["success", "warning"]

    text = cli("check", mails, "--tree", repo, "--only", "ai-review").stdout
    assert "net/core/dev.c:38: warning: PATCH 2/2 [ai-review] AI review: Is -EINVAL right" in text
    assert "  s w  ai-review: 1 warning: net/core/dev.c:38: [ai-review] AI review: Is" in text
    # b4 review shows it too (the cached result: the agent is not asked again)
    b4 = json.loads(cli("check", mails, "--tree", repo, "--only", "ai-review",
                        "--format", "b4-review").stdout)
    (ours,) = [e for e in b4 if e["tool"] == "napipatch"]
    assert {"status": "warn", "context": "ai-review", "description":
            "net/core/dev.c:38: AI review: Is -EINVAL right for every non-zero x?"} \
        in json.loads(ours["details"])


def test_an_empty_review_is_success_everywhere(cli, tmp_path, series):
    repo, mails = series
    _agent(tmp_path, repo, """\
        Path("review-inline.txt").write_text("commit 0123456789ab\\n\\nNo issues found.\\n")
        """)
    cp, data = _check(cli, mails, repo)
    assert cp.returncode == 0
    assert [f for f in data["findings"] if f["check"] == "ai-review"] == []
    assert {c["id"]: c["status"] for c in data["checks"]}["ai-review"] == "pass"
    assert _states(data) == ["success", "success"]


def test_a_failing_agent_is_exit_2_with_its_stderr(cli, tmp_path, series):
    repo, mails = series
    _agent(tmp_path, repo, """\
        print("API error: quota exceeded for this month", file=sys.stderr)
        sys.exit(1)
        """)
    cp, data = _check(cli, mails, repo)
    assert cp.returncode == 2
    (res,) = [c for c in data["checks"] if c["id"] == "ai-review"]
    assert res["status"] == "error"
    assert "exited with status 1" in res["reason"]
    assert "quota exceeded for this month" in res["reason"]
    assert _states(data) == ["unknown", "unknown"]


def test_an_agent_past_its_timeout_is_killed_with_its_children(cli, tmp_path, series):
    repo, mails = series
    pids = tmp_path / "pids"
    _agent(tmp_path, repo, f"""\
        child = subprocess.Popen(["sleep", "300"])
        Path({str(pids)!r}).write_text(str(child.pid))
        print("thinking...", file=sys.stderr, flush=True)
        import time
        time.sleep(300)
        """)
    git(repo, "config", "napipatch.ai-review-timeout", "3")
    cp, data = _check(cli, mails, repo)
    assert cp.returncode == 2
    (res,) = [c for c in data["checks"] if c["id"] == "ai-review"]
    assert "still running after 3 s" in res["reason"]
    assert "its last output: thinking..." in res["reason"]
    child = int(pids.read_text())
    assert not Path(f"/proc/{child}").exists() or \
        Path(f"/proc/{child}/stat").read_text().split()[2] == "Z"


def test_a_second_run_does_not_call_the_agent(cli, tmp_path, series):
    repo, mails = series
    calls = tmp_path / "calls"
    _agent(tmp_path, repo, textwrap.dedent(f"""\
        with open({str(calls)!r}, "a") as f:
            f.write("called\\n")
        """) + textwrap.dedent(REVIEW_2))
    first = _check(cli, mails, repo)[1]
    again = _check(cli, mails, repo)[1]
    assert calls.read_text() == "called\n"
    assert again["findings"] == first["findings"]
    assert {c["id"]: c["cached"] for c in again["checks"]}["ai-review"]
    # another prompt is another review
    prompt = tmp_path / "prompt.md"
    prompt.write_text("Review the series.\n")
    git(repo, "config", "napipatch.ai-review-prompt", str(prompt))
    _check(cli, mails, repo)
    assert calls.read_text() == "called\ncalled\n"


@pytest.mark.parametrize("worktree", [False, True])
def test_the_agent_cannot_write_into_the_user_s_tree(cli, tmp_path, series, worktree):
    repo, mails = series
    tree = repo
    if worktree:   # the tree a git worktree: its repository's .git is elsewhere
        tree = tmp_path / "wt"
        git(repo, "worktree", "add", "-q", "--detach", str(tree), "main")
    head = git(tree, "rev-parse", "HEAD")
    refs = git(repo, "for-each-ref")
    _agent(tmp_path, repo, f"""\
        # in its own checkout it may do anything, git included
        Path("scratch.txt").write_text("notes")
        subprocess.run(["git", "add", "scratch.txt"], check=True)
        subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qam",
                        "agent"], check=True)
        subprocess.run(["git", "checkout", "-qb", "agent-branch"], check=True)
        # the user's tree and repository are read-only for it
        for target in ({str(tree / "evil.txt")!r}, {str(tree / "net/core/dev.c")!r},
                       {str(repo / ".git/refs/heads/evil")!r}):
            try:
                with open(target, "a") as f:
                    f.write("evil")
                sys.exit("wrote " + target)
            except OSError as exc:
                print(exc, file=sys.stderr)
        """)
    cp, data = _check(cli, mails, tree)
    assert cp.returncode == 0, data["checks"]
    assert not (tree / "evil.txt").exists()
    assert git(tree, "status", "--porcelain") == ""
    assert git(tree, "rev-parse", "HEAD") == head and git(repo, "for-each-ref") == refs
    assert "agent-branch" not in git(repo, "branch", "-a")


def test_without_a_command_it_is_skipped_and_only_asks_for_one(cli, tmp_path, series):
    repo, mails = series
    cp = cli("check", mails, "--tree", repo, "--only", "ai-review,subject", "--format", "json")
    data = json.loads(cp.stdout)
    (res,) = [c for c in data["checks"] if c["id"] == "ai-review"]
    assert (res["status"], cp.returncode) == ("error", 2)
    assert res["reason"] == "napipatch.ai-review-command is not set (--only ai-review)"
    cp = cli("check", mails, "--tree", repo, "--format", "json")
    data = json.loads(cp.stdout)
    (res,) = [c for c in data["checks"] if c["id"] == "ai-review"]
    assert (res["status"], res["reason"]) == ("skipped", "napipatch.ai-review-command is not set")
    # not among what the verdict misses (this toy tree lacks MAINTAINERS: cc-maintainers is)
    assert "ai-review" not in [c["id"] for c in data["summary"]["incomplete"]]
    assert _states(data) == ["unknown", "unknown"]


@pytest.mark.parametrize("write, why", [
    ("Path('review-inline.txt').write_bytes(b'\\x00\\xff' * 100)", "is not UTF-8 text"),
    ("f = open('review-inline.txt', 'wb'); f.truncate(100 << 20); f.close()", "over the 8 MiB"),
    ("os.symlink('/etc/passwd', 'review-inline.txt')", "review-inline.txt: is not a regular file"),
    ("os.mkfifo('review-inline.txt')", "review-inline.txt: is not a regular file"),
    ("sys.stdout.write('x' * (1 << 20) + '\\n'); sys.stdout.flush(); "
     "[print('y' * 4096) for _ in range(6000)]", "printed over 16 MiB"),
])
def test_an_unreadable_review_is_one_line_and_exit_2(cli, tmp_path, series, write, why):
    repo, mails = series
    _agent(tmp_path, repo, write + "\n")
    cp, data = _check(cli, mails, repo)
    assert cp.returncode == 2
    (res,) = [c for c in data["checks"] if c["id"] == "ai-review"]
    assert why in res["reason"] and "\n" not in res["reason"]


def test_quotes_matching_nothing_or_everything(cli, tmp_path, series):
    repo, mails = series
    diffs = [t[t.index("diff --git"):t.rindex("\n-- \n")]
             for t in (m.read_text() for m in sorted(mails.glob("000[12]-*.patch")))]
    every = "".join(f"> {ln}\n" for d in diffs for ln in d.splitlines()
                    if ln[:1] in "+- " and not ln.startswith(("+++", "---")))
    review = ("> +\tthis line is in no patch\n\nWhat is this?\n\n" + every +
              "\nThe whole series, reviewed at once.\n\n> One is needed.\n\nWhy?\n")
    (tmp_path / "review.txt").write_text(review)
    _agent(tmp_path, repo, f"""\
        Path("review-inline.txt").write_text(Path({str(tmp_path / "review.txt")!r}).read_text())
        """)
    cp, data = _check(cli, mails, repo)
    assert cp.returncode == 0
    got = [(f["patch"], f["file"], f["line"], f["message"]) for f in data["findings"]
           if f["check"] == "ai-review"]
    assert got == [
        (0, None, None, "AI review: What is this? (its quote matches no line of the series)"),
        (1, None, None, "AI review: Why?"),   # a quote of patch 1's commit message
        (2, "net/core/dev.c", 43, "AI review: The whole series, reviewed at once."),
    ]
    # a series-level comment is not known to be on any one patch: warning on each
    assert _states(data) == ["warning", "warning"]


def _long_series(tmp_path, n: int, tag: str):
    repo = small_repo(tmp_path / f"repo-{n}")
    base = commit_files(repo, _root(repo), {"a.c": "int a;\n"}, "base\n")
    tip = base
    for i in range(n):
        tip = commit_files(repo, tip, {f"f{i}.c": f"int f{i};\n"}, f"net: add f{i}\n")
    mails = format_patch(repo, f"{base}..{tip}", tmp_path / f"mails-{n}", "--cover-letter",
                         f"--subject-prefix=PATCH {tag}")
    return repo, mails


@pytest.mark.parametrize("n, tag, state, says", [
    (25, "net-next", "warning", "25 patches: NIPA does not submit a series over 24"),
    (2, "bpf-next", "success", "tree bpf-next: netdev's AI review runs on net and net-next"),
])
def test_a_series_nipa_does_not_review_is_not_given_to_the_agent(cli, tmp_path, n, tag, state,
                                                                 says):
    repo, mails = _long_series(tmp_path, n, tag)
    calls = tmp_path / "calls"
    _agent(tmp_path, repo, f"Path({str(calls)!r}).write_text('called')\n")
    _cp, data = _check(cli, mails, repo)
    assert not calls.exists()
    (f,) = [f for f in data["findings"] if f["check"] == "ai-review"]
    assert f["severity"] == "info" and says in f["message"]
    assert set(_states(data)) == {state}


def test_the_checkout_holds_the_touched_directories_or_everything(cli, tmp_path, series):
    repo, mails = series
    seen = tmp_path / "seen"
    _agent(tmp_path, repo, f"""\
        Path({str(seen)!r}).write_text(" ".join(sorted(
            str(p) for p in Path(".").rglob("*") if p.is_file() and ".git" not in p.parts)))
        """)
    _check(cli, mails, repo)
    assert seen.read_text() == "Makefile net/core/dev.c"
    git(repo, "config", "napipatch.ai-review-checkout", "full")
    _check(cli, mails, repo)
    assert seen.read_text() == "Makefile drivers/net/other.c net/core/dev.c"
