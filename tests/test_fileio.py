"""napipatch.fileio and its users with several real processes at once.

Each test starts its processes behind one barrier so they really overlap,
then checks what a user would find on disk: whole files, no update lost,
no temporary file or lock file left behind.
"""

from __future__ import annotations

import multiprocessing
import os
import stat
import threading
import time
import tomllib
from pathlib import Path

import pytest

from napipatch import fileio
from napipatch.errors import NapipatchError
from napipatch.mails.mbox import read_mbox
from napipatch.mails.series import assemble
from napipatch.store.store import Store
from napipatch.tree import export, gitutil, treegrep
from napipatch.tree.treegrep import TreeGrep

from conftest import LORE, git, small_repo

N = 6
CTX = multiprocessing.get_context("fork")


def _run_all(target, args_of, n: int = N, timeout: float = 120) -> list:
    """``target(barrier, queue, *args_of(i))`` in ``n`` processes; what each put."""
    barrier, q = CTX.Barrier(n), CTX.Queue()
    procs = [CTX.Process(target=target, args=(barrier, q, *args_of(i))) for i in range(n)]
    for p in procs:
        p.start()
    out = [q.get(timeout=timeout) for _ in procs]
    for p in procs:
        p.join(timeout)
        assert p.exitcode == 0, p.exitcode
    errors = [o for o in out if isinstance(o, str) and o.startswith("ERROR")]
    assert not errors, errors
    return out


def _stray(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if p.name.startswith("."))


# ------------------------------------------------------------ atomic_write
def _writer(barrier, q, path: str, i: int, size: int, rounds: int) -> None:
    barrier.wait()
    for _ in range(rounds):
        fileio.atomic_write(Path(path), bytes([65 + i]) * size)
    q.put(i)


def _reader(path: Path, size: int, stop: threading.Event, seen: list) -> None:
    while not stop.is_set():
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        seen.append((len(data), len(set(data))))


def test_concurrent_writers_leave_one_whole_file_and_no_temporary(tmp_path):
    f, size = tmp_path / "entry.json", 1 << 20
    stop, seen = threading.Event(), []
    reader = threading.Thread(target=_reader, args=(f, size, stop, seen))
    reader.start()
    try:
        _run_all(_writer, lambda i: (str(f), i, size, 20))
    finally:
        stop.set()
        reader.join()
    data = f.read_bytes()
    assert len(data) == size and len(set(data)) == 1 and 65 <= data[0] < 65 + N
    # Every read while they wrote saw one writer's whole content.
    assert seen and all(s == (size, 1) for s in seen), [s for s in seen if s != (size, 1)][:5]
    assert [p.name for p in tmp_path.iterdir()] == ["entry.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    f = tmp_path / "series.toml"
    f.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        fileio.atomic_write(f, "bad \udcff surrogate")
    with pytest.raises(RuntimeError):
        with fileio.replacing(f) as tmp:
            tmp.write_text("half")
            raise RuntimeError("tool failed")
    assert f.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["series.toml"]


def test_the_mode_is_kept_or_follows_the_umask(tmp_path):
    f = tmp_path / "hook"
    f.write_text("#!/bin/sh\n")
    f.chmod(0o750)
    fileio.atomic_write(f, "#!/bin/sh\nexit 0\n")
    assert stat.S_IMODE(f.stat().st_mode) == 0o750
    old = os.umask(0o027)
    try:
        new = fileio.atomic_write(tmp_path / "new", "x")
        d = fileio.temp_dir(tmp_path / "dir")
    finally:
        os.umask(old)
    assert stat.S_IMODE(new.stat().st_mode) == 0o640
    assert stat.S_IMODE(d.stat().st_mode) == 0o750


def _creator(barrier, q, path: str, i: int) -> None:
    barrier.wait()
    q.put((i, fileio.write_new(Path(path), f"writer {i}\n" * 10000)))


def test_write_new_creates_once(tmp_path):
    f = tmp_path / "napipatch-b4-saved.json"
    won = [i for i, ok in _run_all(_creator, lambda i: (str(f), i)) if ok]
    assert len(won) == 1
    assert f.read_text() == f"writer {won[0]}\n" * 10000
    assert [p.name for p in tmp_path.iterdir()] == [f.name]


# ------------------------------------------------------------- directories
def test_publish_dir_fills_only_an_absent_destination(tmp_path):
    a, b, dest = tmp_path / "a", tmp_path / "b", tmp_path / "dest"
    for d, text in ((a, "a"), (b, "b")):
        d.mkdir()
        (d / "f").write_text(text)
    assert fileio.publish_dir(a, dest)
    assert not fileio.publish_dir(b, dest)
    assert (dest / "f").read_text() == "a" and (b / "f").read_text() == "b"


# ------------------------------------------------------------------ locked
def _incrementer(barrier, q, path: str, lock: str, times: int) -> None:
    barrier.wait()
    try:
        for _ in range(times):
            with fileio.locked(Path(lock), timeout=60):
                n = int(Path(path).read_text())
                time.sleep(0.001)  # widen the read-modify-write window
                fileio.atomic_write(Path(path), f"{n + 1}\n")
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        q.put(f"ERROR {exc!r}")
        return
    q.put("done")


def test_the_lock_serialises_read_modify_write(tmp_path):
    counter, lock = tmp_path / "counter", tmp_path / ".counter.lock"
    counter.write_text("0\n")
    _run_all(_incrementer, lambda i: (str(counter), str(lock), 25))
    assert counter.read_text() == f"{N * 25}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counter"]  # lock file removed


def test_threads_exclude_each_other_too(tmp_path):
    lock, inside, most = tmp_path / ".l.lock", [0], [0]

    def work():
        for _ in range(20):
            with fileio.locked(lock, timeout=30):
                inside[0] += 1
                most[0] = max(most[0], inside[0])
                time.sleep(0.0005)
                inside[0] -= 1

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert most[0] == 1


def _holder(barrier, q, lock: str, hold: float) -> None:
    with fileio.locked(Path(lock)):
        barrier.wait()
        q.put(os.getpid())
        time.sleep(hold)


def test_a_lock_held_too_long_is_an_error_naming_the_file_and_holder(tmp_path):
    lock = tmp_path / ".series.toml.lock"
    barrier, q = CTX.Barrier(2), CTX.Queue()
    p = CTX.Process(target=_holder, args=(barrier, q, str(lock), 3))
    p.start()
    barrier.wait()
    pid = q.get(timeout=10)
    with pytest.raises(fileio.LockTimeout) as exc:
        with fileio.locked(lock, timeout=0.3):
            pytest.fail("got a lock another process holds")
    assert isinstance(exc.value, NapipatchError)
    assert str(exc.value) == f"{lock}: still locked after 0.3 s (by pid {pid})"
    p.join(10)
    with fileio.locked(lock, timeout=5):  # released when the holder ends
        pass
    assert not lock.exists()


# ------------------------------------------------------------------ export
def _exporter(barrier, q, repo: str, commit: str, dest: str) -> None:
    barrier.wait()
    try:
        d = export.export_paths(Path(repo), commit, ["scripts", "tools"], Path(dest))
        # Run from it while the others export: nothing may vanish under us.
        for _ in range(30):
            names = sorted(p.name for p in (d / "scripts").iterdir())
            assert names == sorted(f"s{j}.sh" for j in range(50)), names
            assert (d / "scripts" / "s7.sh").read_text() == "echo 7\n"
        q.put(str(d))
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        q.put(f"ERROR {exc!r}")


@pytest.fixture
def scripts_repo(tmp_path):
    r = small_repo(tmp_path / "repo")
    for j in range(50):
        (r / "scripts").mkdir(exist_ok=True)
        (r / "scripts" / f"s{j}.sh").write_text(f"echo {j}\n")
    (r / "tools").mkdir()
    (r / "tools" / "t").write_text("t\n")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "scripts")
    return r, git(r, "rev-parse", "HEAD")


def test_concurrent_exports_never_delete_the_copy_in_use(tmp_path, scripts_repo):
    repo, commit = scripts_repo
    dest = tmp_path / "cache" / "trusted" / commit
    got = _run_all(_exporter, lambda i: (str(repo), commit, str(dest)))
    assert set(got) == {str(dest)}
    assert export.is_exported(dest)
    assert sorted(p.name for p in dest.parent.iterdir()) == [commit]


def test_a_killed_exports_leftover_is_replaced(tmp_path, scripts_repo):
    repo, commit = scripts_repo
    dest = tmp_path / "trusted" / commit
    (dest / "scripts").mkdir(parents=True)
    (dest / "scripts" / "s1.sh").write_text("half")  # no .complete marker
    export.export_paths(repo, commit, ["scripts"], dest)
    assert export.is_exported(dest)
    assert (dest / "scripts" / "s1.sh").read_text() == "echo 1\n"
    assert len(list((dest / "scripts").iterdir())) == 50
    assert sorted(p.name for p in dest.parent.iterdir()) == [commit]


# --------------------------------------------------------------- the store
def _v4_variant(version: int) -> str:
    return (LORE / "threaded-busy-poll-v4.mbox").read_text().replace("net-next v4 ",
                                                                     f"net-next v{version} ")


def _importer(barrier, q, root: str, mbox: str) -> None:
    series = assemble(read_mbox(Path(mbox)), mbox, name="tbp")
    barrier.wait()
    try:
        Store(Path(root)).add_version(series)
        q.put(series.version)
    except NapipatchError as exc:
        q.put(f"refused v{series.version}: {exc}")


def test_concurrent_imports_into_one_series_lose_no_version(tmp_path):
    root = tmp_path / "series"
    mboxes = []
    for i in range(N):
        f = tmp_path / f"v{10 + i}.mbox"
        f.write_text(_v4_variant(10 + i))
        mboxes.append(f)
    got = _run_all(_importer, lambda i: (str(root), str(mboxes[i])))
    assert sorted(got) == list(range(10, 10 + N))
    rec = tomllib.loads((root / "tbp" / "series.toml").read_text())
    assert list(rec["versions"]) == [f"v{v}" for v in range(10, 10 + N)]
    for v in range(10, 10 + N):
        assert len(list((root / "tbp" / f"v{v}").glob("*.patch"))) == 5
    assert _stray(root / "tbp") == []


def test_the_same_version_twice_at_once_is_stored_once(tmp_path):
    root, f = tmp_path / "series", tmp_path / "v7.mbox"
    f.write_text(_v4_variant(7))
    got = _run_all(_importer, lambda i: (str(root), str(f)), n=3)
    assert sorted(map(str, got)) == ["7"] + ["refused v7: tbp@v7: already in the store "
                                             "(use --force to replace)"] * 2
    assert list(tomllib.loads((root / "tbp" / "series.toml").read_text())["versions"]) == ["v7"]
    assert _stray(root / "tbp") == []


# ---------------------------------------------------------------- treegrep
def _grepper(barrier, q, repo: str, base: str, cache: str) -> None:
    pat = treegrep.words({"dev_set_threaded"})
    tg = TreeGrep(Path(repo), base, gitutil.ObjectReader(Path(repo)), Path(cache))
    barrier.wait()
    got = tg.grep(base, pat)
    q.put((tg.how[pat.key()], got))


def test_processes_asking_for_one_grep_of_the_base_grep_it_once(tmp_path):
    r = small_repo(tmp_path / "repo")
    for j in range(300):
        (r / f"f{j}.c").write_text(f"int x{j};\n" + ("dev_set_threaded(d, 1);\n" if j % 7 == 0
                                                     else ""))
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "base")
    base = git(r, "rev-parse", "HEAD")
    got = _run_all(_grepper, lambda i: (str(r), base, str(tmp_path / "cache")))
    hows = sorted(how for how, _ in got)
    assert hows.count("cache") == N - 1, hows
    want = {f"f{j}.c": [2] for j in range(0, 300, 7)}
    assert all(m == want for _, m in got)
    grep_dir = tmp_path / "cache" / "grep" / base[:2]
    assert _stray(grep_dir) == []
