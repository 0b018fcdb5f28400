"""Running the user's AI review agent as the ai-review check does.

Not a check (the registry skips modules starting with ``_``). The agent is
the user's command (``napipatch.ai-review-command``), run through the
shell as git runs its configured commands, under the one process helper
(``napipatch.procs``: its deadline, what it started killed with it):

- its working directory is a throwaway checkout of the series tip
  (``napipatch.tree.trusted.throwaway_checkout``), removed afterwards;
- the series as an mbox on standard input and at ``$NAPIPATCH_SERIES_MBOX``,
  the base at ``$NAPIPATCH_BASE``, the prompt at ``$NAPIPATCH_AI_PROMPT``;
- with ``napipatch.ai-review-sandbox`` (the default), in a mount namespace
  of its own (util-linux ``unshare``) where the user's tree, the series
  store and napipatch's cache are read-only: the agent may write only in
  its checkout, /tmp and its own home;
- it writes ``review-inline.txt`` in its working directory, which is read
  back as text, at most ``MAX_REVIEW`` bytes.

Anything that keeps a review from being read (a non-zero exit, the
deadline, too much output, a file that is not text) is a NapipatchError
naming the reason and quoting the agent's last lines of stderr: the check
could not run, and the verdict says so.
"""

from __future__ import annotations

import collections
import os
from dataclasses import dataclass
from pathlib import Path

from napipatch import procs
from napipatch.errors import NapipatchError
from napipatch.mails.series import Series
from napipatch.tree import trusted

REVIEW = "review-inline.txt"
MAX_REVIEW = 8 << 20       # a review longer than this is no review a human reads
MAX_OUTPUT = 16 << 20      # what the agent may print before it is stopped
KEY = "napipatch.ai-review-command"
_SANDBOX_FAIL = "napipatch-sandbox:"

# In the new mount namespace: each directory bound read-only onto itself,
# then the user's command. $1 the command, the rest the directories.
_SANDBOX = (
    'cmd=$1; shift; for d; do '
    'mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" "$d" '
    f'|| {{ echo "{_SANDBOX_FAIL} cannot make $d read-only" >&2; exit 125; }}; '
    'done; exec /bin/sh -c "$cmd"')


@dataclass(frozen=True)
class Request:
    command: str
    repo: Path                 # the user's tree (the trusted repository)
    tip: str
    base: str
    series: Series
    timeout: float
    prompt: str = ""           # a file path, or ""
    paths: set[str] | None = None   # what to check out (None: everything)
    sandbox: bool = True
    protect: tuple[Path, ...] = ()  # read-only for the agent, besides the tree


def mbox(series: Series) -> str:
    """The series as ``git format-patch --stdout`` gives it (cover first)."""
    return "".join(m.as_format_patch() for m in series.mails)


def _argv(req: Request) -> list[str]:
    if not req.sandbox:
        return ["/bin/sh", "-c", req.command]
    # the tree and, when it is a worktree, the repository whose objects and refs it uses
    mine = (req.repo, trusted.git_common_dir(req.repo), *req.protect)
    ro = list(dict.fromkeys(str(p) for p in mine if p.is_dir()))
    user = [] if os.geteuid() == 0 else ["--map-root-user"]
    return ["unshare", "--mount", "--propagation", "private", *user,
            "/bin/sh", "-c", _SANDBOX, "napipatch-sandbox", req.command, *ro]


def _tail(text: str, lines: int = 5) -> str:
    got = [ln.rstrip() for ln in text.splitlines() if ln.strip()][-lines:]
    return " | ".join(got)[-600:]


def _why(what: str, stderr: str) -> str:
    last = _tail(stderr)
    return f"{what}; its last stderr: {last}" if last else f"{what} (no stderr)"


def _run(req: Request, cwd: Path, box: Path) -> None:
    text = mbox(req.series)
    (box / "series.mbox").write_text(text, encoding="utf-8")
    env = dict(os.environ, NAPIPATCH_SERIES_MBOX=str(box / "series.mbox"),
               NAPIPATCH_BASE=req.base, NAPIPATCH_TIP=req.tip,
               NAPIPATCH_AI_PROMPT=str(Path(req.prompt).expanduser()) if req.prompt else "")
    size = [0]
    last: collections.deque[str] = collections.deque(maxlen=5)

    def bounded(line: str) -> bool:
        size[0] += len(line) + 1
        if line.strip():
            last.append(line[:200])
        return size[0] > MAX_OUTPUT
    try:
        cp = procs.run(_argv(req), timeout=req.timeout or None, name="ai-review-command",
                       package="util-linux" if req.sandbox else None, cwd=cwd, env=env,
                       input=text, on_line=bounded)
    except procs.ProcessTimeout as exc:
        said = " | ".join(last)
        raise NapipatchError(KEY, f"still running after {exc.seconds:g} s "
                             "(napipatch.ai-review-timeout); stopped with what it started"
                             + (f"; its last output: {said[-600:]}" if said else "")) from None
    if size[0] > MAX_OUTPUT:
        raise NapipatchError(KEY, f"printed over {MAX_OUTPUT >> 20} MiB; stopped")
    if cp.returncode != 0:
        if _SANDBOX_FAIL in (cp.stderr or ""):
            raise NapipatchError(KEY, _why("the sandbox could not be made (set "
                                           "napipatch.ai-review-sandbox false to run the "
                                           "agent without one)", cp.stderr))
        raise NapipatchError(KEY, _why(f"exited with status {cp.returncode}", cp.stderr or ""))


def read_review(path: Path) -> str:
    """The review the agent wrote ("" when it wrote none)."""
    try:
        size = path.lstat().st_size
    except FileNotFoundError:
        return ""
    if not path.is_file() or path.is_symlink():
        raise NapipatchError(path.name, "is not a regular file")
    if size > MAX_REVIEW:
        raise NapipatchError(path.name, f"is {size >> 20} MiB, over the {MAX_REVIEW >> 20} MiB "
                                        "a review may have")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NapipatchError(path.name, f"is not UTF-8 text (byte {exc.start})") from None
    if "\0" in text:
        raise NapipatchError(path.name, "is not text (it holds NUL bytes)")
    return text


def review(req: Request) -> str:
    """Run the agent on the series; the inline review it wrote."""
    with trusted.throwaway_checkout(req.repo, req.tip, req.paths) as tree:
        _run(req, tree, tree.parent)
        return read_review(tree / REVIEW)
