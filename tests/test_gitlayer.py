"""The git layer (napipatch/tree/gitutil.py, gitrepo.py): object reads that
survive the engine's forks, and git's own words for a bad revision range.

The engine runs every check unit in a forked child (engine/forked.py).
A reader's ``git cat-file --batch`` belongs to the process that started
it: a child must neither talk to its parent's (both would read each
other's answers) nor end it when the child drops its copy of the reader.
"""

from __future__ import annotations

import gc
import os
import threading
from pathlib import Path

from conftest import git, small_repo

from napipatch.engine.forked import run_forked
from napipatch.tree import gitutil


def _blobs(tmp_path: Path) -> tuple[Path, str, dict[str, bytes]]:
    """A repository with files of many sizes (one larger than a pipe's
    buffer), and its commit."""
    r = small_repo(tmp_path / "repo")
    files = {f"d{i % 5}/f{i}.txt": f"file {i}\n".encode() * (i * 37 % 3000 + 1)
             for i in range(60)}
    files["big.bin"] = bytes(range(256)) * 1024
    for path, data in files.items():
        (r / path).parent.mkdir(parents=True, exist_ok=True)
        (r / path).write_bytes(data)
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "blobs")
    return r, git(r, "rev-parse", "HEAD"), files


def _cat_files() -> set[int]:
    """Pids of the ``git cat-file`` processes this process started."""
    me = str(os.getpid())
    found = set()
    for d in Path("/proc").iterdir():
        try:
            if not d.name.isdigit() or b"cat-file" not in (d / "cmdline").read_bytes():
                continue
            status = (d / "status").read_text()
        except OSError:
            continue
        ppid = next(ln.split()[1] for ln in status.splitlines() if ln.startswith("PPid:"))
        state = next(ln.split()[1] for ln in status.splitlines() if ln.startswith("State:"))
        if ppid == me and state != "Z":
            found.add(int(d.name))
    return found


def _all_right(reader: gitutil.ObjectReader, commit: str, files: dict[str, bytes]) -> bool:
    return all(reader.read(commit, p) == data for p, data in files.items())


def test_forked_children_and_their_parent_each_read_their_own_answers(tmp_path):
    repo, commit, files = _blobs(tmp_path)
    shared = gitutil.ObjectReader(repo)
    held = {"dropped": gitutil.ObjectReader(repo)}
    assert _all_right(shared, commit, files) and _all_right(held["dropped"], commit, files)
    parents_own = _cat_files()
    assert len(parents_own) == 2

    stop, tally = threading.Event(), {"reads": 0, "wrong": 0}

    def parent_keeps_reading():
        while not stop.is_set():
            for p, data in files.items():
                tally["reads"] += 1
                tally["wrong"] += shared.read(commit, p) != data

    def child():
        right = _all_right(shared, commit, files) and _all_right(held["dropped"], commit, files)
        # The child lets go of a reader it inherited: GitPython would end
        # the process behind it, which is the parent's.
        held.pop("dropped")
        gc.collect()
        return right and _all_right(shared, commit, files)

    thread = threading.Thread(target=parent_keeps_reading)
    thread.start()
    try:
        ended = run_forked([child] * 6, jobs=2, budget=60)
    finally:
        stop.set()
        thread.join()
    assert [(e.how, e.value, e.error) for e in ended] == [("ok", True, "")] * 6
    assert tally["reads"] > 0 and tally["wrong"] == 0
    # The parent's readers work on, with the very processes they started.
    assert _all_right(shared, commit, files) and _all_right(held["dropped"], commit, files)
    assert _cat_files() == parents_own
    shared.close()
    held["dropped"].close()
    assert _cat_files() == set()


def test_a_missing_or_odd_object_name_reads_as_nothing(tmp_path):
    repo, commit, files = _blobs(tmp_path)
    reader = gitutil.ObjectReader(repo)
    try:
        assert reader.read(commit, "no/such/file") is None
        assert reader.read(commit, "d0") is None               # a directory is no blob
        assert reader.object(f"{commit}:d0")[0] == "tree"
        assert reader.read(commit, "d0/f0.txt\nHEAD:big.bin") is None
        assert reader.read("0" * 40, "big.bin") is None
        # ... and the batch is still in step afterwards.
        assert _all_right(reader, commit, files)
    finally:
        reader.close()


def test_a_bad_revision_range_says_what_git_said(cli, tmp_path):
    repo = small_repo(tmp_path / "repo")
    git(repo, "commit", "-q", "--allow-empty", "-m", "one")
    cp = cli("check", "nosuch..HEAD", "--tree", repo)
    assert (cp.returncode, cp.stderr) == (
        2, "napipatch: error: nosuch..HEAD: bad revision 'nosuch..HEAD'\n")
    cp = cli("check", "HEAD..HEAD", "--tree", repo)
    assert (cp.returncode, cp.stderr) == (2, "napipatch: error: HEAD..HEAD: no commits in range\n")
