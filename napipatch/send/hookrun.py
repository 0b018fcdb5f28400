"""What the installed hooks do (``napipatch hook run NAME ...``).

``sendemail-validate``: git send-email calls it once per message, before
any message leaves. Each patch is checked with the repository as the tree
(``send.sendtree``): patches 1..k applied at the series' base (the cover's
``base-commit:``, else the first patch's parent), else at the parent of the
commit it was made from, else diff-only, said once. Only the message's own
finding lines are printed. git send-email stops at the first refusal, so a
message with errors also checks the later patches of its series from the
format-patch files beside it, naming every defect in one try. The messages
seen so far are kept in ``<git-dir>/napipatch/sendemail/<run>/`` (``<run>``
names the git send-email process, or ``$NAPIPATCH_RUN_ID``); once the last
one is seen the whole series is checked at its base (the patches' results
come from the cache), its own findings and the forecast printed, or one line
when clean. git 2.41 and newer say which message is the last
(``GIT_SENDEMAIL_FILE_COUNTER`` / ``_TOTAL``); with older git (2.39 in
Debian 12) the series is checked as soon as the messages form a whole series
(patches 1..N), which with git format-patch's file order (cover letter
first) is the last message.

``pre-push``: the commits a push would add (``remote-oid..local-oid``, or
for a new branch the commits on no remote-tracking ref) are checked as a
series against the repository.

Error findings block (exit 1, the text report on stderr). So does a run
that did not check everything: a check that crashed, timed out or could
not run, or napipatch failing outright (exit 3 or 2, naming what was not
checked), because letting it go would call an unchecked series clean.
``git config napipatch.hook-strict false`` turns those into a warning that
says plainly what was not checked, and lets the send or push go.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from napipatch import fileio
from napipatch.config import Config
from napipatch.engine.registry import among, scoped
from napipatch.errors import NapipatchError
from napipatch.mails import mail as mailmod
from napipatch.mails import mbox
from napipatch.mails.mail import PatchMail
from napipatch.mails.series import Series, assemble, name_from
from napipatch.pipeline.run import run
from napipatch.report.forecast import forecast, summary
from napipatch.report.model import Report
from napipatch.report.render import render_report
from napipatch.send import sendtree
from napipatch.store.history import attach
from napipatch.store.store import Store
from napipatch.tree import gitutil

STALE_SECONDS = 12 * 3600
PUSH_LIMIT = 100  # more new commits than this is not a patch series: not checked


def _err(text: str) -> None:
    sys.stderr.write(text if text.endswith("\n") else text + "\n")


_BYPASS = {"sendemail-validate": "git send-email --no-validate sends anyway",
           "pre-push": "git push --no-verify pushes anyway"}


def guarded(name: str, cfg: Config, fn, err=_err) -> int:
    """Run a hook body; napipatch's own failure blocks unless hook-strict is false."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - any failure of ours, by policy
        reason = str(exc) if isinstance(exc, NapipatchError) else f"{type(exc).__name__}: {exc}"
        code = 2 if isinstance(exc, NapipatchError) else 3
        if cfg.hook_strict:
            err(f"napipatch: error: {name} hook could not check: {reason}; this blocks "
                f"({_BYPASS.get(name, 'bypass the hook')}; git config napipatch.hook-strict "
                "false lets it go)")
            return code
        err(f"napipatch: warning: {name} hook could not check: {reason}; NOT checked, letting "
            "it go (napipatch.hook-strict is false)")
        return 0


def verdict(name: str, what: str, report: Report, cfg: Config, err=_err) -> int:
    """The hook's exit status for ``report`` on ``what`` (a message, a ref)."""
    if report.incomplete:
        line = report.completion_line()
        if cfg.hook_strict:
            err(f"napipatch: {name}: {what}: not fully checked ({line}); this blocks "
                f"({_BYPASS.get(name, 'bypass the hook')}; git config napipatch.hook-strict "
                "false lets it go)")
            return report.exit_code
        err(f"napipatch: warning: {name}: {what}: NOT fully checked ({line}); letting it go "
            "(napipatch.hook-strict is false)")
    return 1 if report.errors else 0


# ---------------------------------------------------------------- sendemail-validate
def _is_cover(m: PatchMail) -> bool:
    return m.subject.has_counter and m.subject.index == 0


def _per_message_text(report: Report, m: PatchMail) -> str:
    """``report``'s lines for message ``m``, labelled with its own M/N."""
    text = render_report(report, "lines")
    if m.subject.has_counter:
        # The label follows FILE:LINE: and the severity, or leads the line.
        text = re.sub(r"(^|: )PATCH \d+/\d+\b",
                      rf"\g<1>PATCH {m.subject.index}/{m.subject.total}", text, flags=re.MULTILINE)
    return text


def _complete(mails: list[PatchMail]) -> bool:
    """The messages hold patches 1..N of the newest message's series."""
    patches = [m for m in mails if not m.subject.is_reply and not _is_cover(m)]
    if not patches:
        return False
    last = patches[-1].subject
    have = {m.subject.index for m in patches
            if m.subject.version == last.version and m.subject.total == last.total}
    return have >= set(range(1, last.total + 1))


def _proc_stat(pid: int) -> list[str] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()  # [0] is field 3 (state)


def run_key(env=os.environ) -> str:
    """Names one git send-email run: its process (pid and start time)."""
    if env.get("NAPIPATCH_RUN_ID"):
        return "run-" + re.sub(r"[^A-Za-z0-9_.-]", "_", env["NAPIPATCH_RUN_ID"])[:64]
    pid = os.getppid()
    for _ in range(8):  # hook <- git hook run <- git-send-email (perl)
        st = _proc_stat(pid)
        if st is None:
            break
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            break
        if b"send-email" in cmd:
            return f"{pid}-{st[19]}"
        pid = int(st[1])
        if pid <= 1:
            break
    st = _proc_stat(os.getppid())
    return f"{os.getppid()}-{st[19] if st else 0}"


def _alive(key: str) -> bool:
    m = re.match(r"^(\d+)-(\d+)$", key)
    if not m:
        return True  # a run id: only its age retires it
    st = _proc_stat(int(m.group(1)))
    return st is not None and st[19] == m.group(2)


class RunState:
    """The messages one git send-email run has shown the hook so far."""

    def __init__(self, root: Path, key: str):
        self.root, self.dir = root, root / key

    @classmethod
    def open(cls, key: str) -> RunState:
        gitdir = Path(gitutil.out(None, "rev-parse", "--absolute-git-dir"))
        root = gitdir / "napipatch" / "sendemail"
        root.mkdir(parents=True, exist_ok=True)
        now = time.time()
        for d in root.iterdir():
            if d.name == key:
                continue
            try:
                old = now - d.stat().st_mtime > STALE_SECONDS
            except OSError:
                continue
            if old or not _alive(d.name):
                fileio.discard_dir(d)  # another run's hook may be pruning it too
        return cls(root, key)

    def add(self, name: str, data: bytes) -> None:
        """Keep one message: the next free ``NNNN-name``, written whole."""
        self.dir.mkdir(parents=True, exist_ok=True)
        n = sum(1 for p in self.dir.iterdir() if not p.name.startswith("."))
        while not fileio.write_new(self.dir / f"{n:04d}-{name}", data):
            n += 1

    def mails(self) -> list[PatchMail]:
        out: list[PatchMail] = []
        if self.dir.is_dir():
            for f in sorted(p for p in self.dir.iterdir() if not p.name.startswith(".")):
                origin = f.name[5:]
                out += [mailmod.parse_message(raw, origin, env)
                        for env, raw in mailmod.split_mbox(f.read_bytes(), origin)]
        return out

    def note_once(self, tag: str, text: str, err) -> None:
        """Say ``text`` once in this run (the first message that needs it)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        if fileio.write_new(self.dir / f".{tag}", b""):
            err(text)

    def discard(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def sendemail_validate(path: Path, cfg: Config, only: list[str] | None = None,
                       skip: list[str] | None = None, env=os.environ, err=_err) -> int:
    """Check one outgoing message; the series once its last message is seen."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise NapipatchError(path, exc.strerror or str(exc)) from None
    mails = [mailmod.parse_message(raw, path.name, envl)
             for envl, raw in mailmod.split_mbox(data, str(path))]
    counter = env.get("GIT_SENDEMAIL_FILE_COUNTER", "")
    total = env.get("GIT_SENDEMAIL_FILE_TOTAL", "")
    state = RunState.open(run_key(env))
    if counter.isdigit() and counter == "1":
        state.discard()  # git 2.41+: a new run starts
    repo = sendtree.repo_top()
    seen = state.mails()
    patch_ids, series_ids = scoped("patch", only, skip), scoped("series", only, skip)
    # apply says which patch did not apply; without it a tree check would
    # quietly skip a patch that did not apply.
    ids = patch_ids + [i for i in series_ids if i == "apply"]
    if not seen and repo is not None:
        _warm_cache(path, mails, repo, cfg, patch_ids + series_ids)
    rc = 0
    for m in mails:
        if not (_is_cover(m) or not patch_ids or m.subject.is_reply
                or not (m.diff or m.subject.is_patch)):
            rc = max(rc, _check_message(m, seen, repo, cfg, ids, state, str(path), err))
        seen.append(m)
    if rc == 1:
        # git send-email stops at the first refusal: name the rest of the
        # series' defects now, from the files beside this one.
        for m in _later(path, seen):
            _check_message(m, seen, repo, cfg, ids, state, m.origin, err)
            seen.append(m)
    if rc:
        state.discard()
        if rc == 1:
            err(f"napipatch: sendemail-validate: {path.name}: error findings; nothing is sent "
                "(git send-email --no-validate sends anyway)")
        return rc
    state.add(path.name, data)
    if counter.isdigit() and total.isdigit():
        last = int(counter) >= int(total)
    else:
        last = _complete(state.mails())
    if not last:
        return 0
    seen = state.mails()
    try:
        return _check_series(seen, repo, cfg, patch_ids + series_ids, state, err)
    finally:
        state.discard()


def _warm_cache(path: Path, mails: list[PatchMail], repo: Path, cfg: Config,
                ids: list[str]) -> None:
    """On a send's first message, when the whole series is beside it (git
    format-patch's files), check it all at once, as ``napipatch check``
    would, and print nothing: every message then finds its results in the
    cache. One run uses both cores on every patch; a run per message would
    start the tools once per message and use one."""
    first = next((m for m in mails if m.subject.has_counter and not m.subject.is_reply), None)
    if first is None or first.subject.index > 1:
        return
    whole = _beside(path, first, range(first.subject.total + 1))
    if len(whole) < first.subject.total:
        return
    series = attach(assemble(whole, "the messages of this send", name=_series_name(whole)),
                    Store(cfg.store_root))
    base = sendtree.series_base(repo, series.mails)
    if base is not None:
        run(series, cfg, repo, base=base, default=among(ids))


def _check_message(m: PatchMail, seen: list[PatchMail], repo: Path | None, cfg: Config,
                   ids: list[str], state: RunState, source: str, err) -> int:
    """One message's patch checks, in the repository when it can be applied
    there; only its own findings are printed (FILE:LINE lines)."""
    w = sendtree.where(repo, seen, m, source)
    # Keyed as the series run is (its history too), so they share results.
    attach(w.series, Store(cfg.store_root))
    if w.tree is None:
        state.note_once("diff-only", f"napipatch: note: sendemail-validate: diff-only checks: "
                        f"{w.why}", err)
    report = run(w.series, cfg, w.tree, base=w.base, default=among(ids))
    mine = report.of_patch(w.index)
    text = _per_message_text(mine, m)
    if text.strip():
        err(text)
    return verdict("sendemail-validate", m.origin or source, mine, cfg, err)


def _check_series(seen: list[PatchMail], repo: Path | None, cfg: Config, ids: list[str],
                  state: RunState, err) -> int:
    """The whole series once its last message is seen: every check, with the
    tree at the series' base (the patches' results come from the cache);
    the series' own findings, the forecast once, or one line when clean."""
    try:
        series = attach(assemble(seen, "the messages of this send", name=_series_name(seen)),
                        Store(cfg.store_root))
    except NapipatchError as exc:
        err(f"napipatch: note: sendemail-validate: series checks skipped: {exc.reason}")
        return 0
    base = sendtree.series_base(repo, series.mails) if repo is not None else None
    if base is None:
        state.note_once("diff-only", "napipatch: note: sendemail-validate: diff-only series "
                        "checks: " + ("not run inside a git work tree" if repo is None else
                                      f"no base-commit: of the series is in {repo} and its "
                                      "first patch is no commit there"), err)
    report = run(series, cfg, repo if base else None, base=base, default=among(ids))
    own = report.of_patch(0)
    text = render_report(own, "lines")
    if text.strip():
        err(text)
    rc = verdict("sendemail-validate", "the series", report, cfg, err)
    where = f"with the tree at {base[:12]}" if base else "diff-only"
    n = len(series.patches)
    head = (f"napipatch: sendemail-validate: {series.name} v{series.version}, {n} patch"
            f"{'es' if n != 1 else ''}, checked {where}")
    if rc == 1:
        err(render_report(report, "forecast").rstrip("\n"))
        err(f"{head}: {report.errors} error finding{'s' if report.errors != 1 else ''}; "
            "nothing is sent (git send-email --no-validate sends anyway)")
    elif rc == 0:
        said = [f"{report.warnings} warning{'s' if report.warnings != 1 else ''}"] \
            if report.warnings else []
        said += ["NOT fully checked"] if report.incomplete else []
        err(f"{head}: {', '.join(said) or 'clean'}; {summary(forecast(report))}")
    return rc


def _later(path: Path, seen: list[PatchMail]) -> list[PatchMail]:
    """The patches after the last one seen of its series, from the
    git format-patch files in ``path``'s directory (none when they are not
    all there: another message is not guessed at)."""
    last = next((m for m in reversed(seen) if m.subject.has_counter and m.subject.index), None)
    if last is None or last.subject.index >= last.subject.total:
        return []
    want = range(last.subject.index + 1, last.subject.total + 1)
    found = _beside(path, last, want)
    return found if len(found) == len(want) else []


BESIDE_LIMIT = 1000  # format-patch files read beside a message (a series is far shorter)


def _beside(path: Path, like: PatchMail, want: range) -> list[PatchMail]:
    """The messages of ``like``'s series (its version and count) numbered
    ``want`` among the git format-patch files in ``path``'s directory, in
    order; those missing are left out."""
    found: dict[int, PatchMail] = {}
    # Only regular files of a bounded size, and not too many: a FIFO named
    # *.patch must not hang the send, nor a huge directory stall it.
    for f in sorted(path.parent.glob("*.patch"))[:BESIDE_LIMIT]:
        try:
            got = [mailmod.parse_message(raw, f.name, envl)
                   for envl, raw in mailmod.split_mbox(mbox.read_regular(f), str(f))]
        except NapipatchError:
            continue
        for m in got:
            s = m.subject
            if s.has_counter and not s.is_reply and s.index in want and \
                    (s.version, s.total) == (like.subject.version, like.subject.total):
                found.setdefault(s.index, m)
    return [found[i] for i in want if i in found]


def _series_name(mails: list[PatchMail]) -> str:
    heads = [m for m in mails if _is_cover(m)] or mails
    return name_from(heads[0])


# ---------------------------------------------------------------- pre-push
def _zero(oid: str) -> bool:
    return set(oid) == {"0"}


def _series_from_commits(repo: Path, commits: list[str], revargs: list[str], tree_tag: str,
                         label: str) -> Series:
    """The commits as git format-patch mails (a cover letter for 2 or more)."""
    base = gitutil.out(repo, "rev-parse", f"{commits[0]}^")
    with tempfile.TemporaryDirectory(prefix="napipatch-push-") as td:
        args = ["format-patch", "-q", f"--base={base}", "--subject-prefix",
                f"PATCH {tree_tag}".strip(), "-o", td]
        if len(commits) > 1:
            args.append("--cover-letter")
        cp = gitutil.git(repo, *args, *revargs, check=False)
        if cp.returncode != 0:  # --base refuses a non-linear history
            args.remove(f"--base={base}")
            gitutil.git(repo, *args, *revargs)
        mails = []
        for f in sorted(Path(td).iterdir()):
            text = f.read_text(errors="replace")
            text = text.replace("*** SUBJECT HERE ***", f"{len(commits)} commits pushed to {label}", 1)
            text = text.replace("*** BLURB HERE ***", "Checked by napipatch's pre-push hook.", 1)
            mails += [mailmod.parse_message(raw, f.name, env)
                      for env, raw in mailmod.split_mbox(text.encode(), f.name)]
    return assemble(mails, f"push to {label}", name=re.sub(r"[^A-Za-z0-9._-]", "-", label))


def pre_push(repo: Path, lines: list[str], cfg: Config, only: list[str] | None = None,
             skip: list[str] | None = None, err=_err) -> int:
    """Check each pushed ref's new commits as a series against ``repo``."""
    repo = gitutil.require_repo(repo)
    rc = 0
    for line in lines:
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 4:
            raise NapipatchError("pre-push input", f"not '<local-ref> <local-oid> <remote-ref> "
                                 f"<remote-oid>': {line.strip()!r}")
        _lref, loid, rref, roid = parts
        if _zero(loid):
            continue  # a deletion
        tip = gitutil.resolve(repo, loid)
        if tip is None:
            continue  # a tag of a tree or blob: no commits
        old = None if _zero(roid) else gitutil.resolve(repo, roid)
        revargs = [f"{old}..{tip}"] if old else [tip, "--not", "--remotes"]
        commits = gitutil.out(repo, "rev-list", "--reverse", "--topo-order", "--no-merges",
                              *revargs).split()
        label = rref.removeprefix("refs/heads/")
        if commits and gitutil.git(repo, "rev-parse", "-q", "--verify", f"{commits[0]}^",
                                   check=False).returncode != 0:
            err(f"napipatch: note: pre-push: {label}: root commit {commits[0][:12]} not checked")
            commits = commits[1:]
            revargs = [f"{commits[0]}^..{tip}"] if commits else revargs
        if not commits:
            continue
        if len(commits) > PUSH_LIMIT:
            err(f"napipatch: warning: pre-push: {label}: {len(commits)} new commits is not a "
                f"patch series (limit {PUSH_LIMIT}); not checked")
            continue
        series = _series_from_commits(repo, commits, revargs, cfg.tree_tag, label)
        report = run(series, cfg, repo, only=only, skip=skip)
        if report.findings or report.incomplete:
            err(render_report(report, "text"))
        got = verdict("pre-push", label, report, cfg, err)
        if got == 1:
            err(f"napipatch: pre-push: {label}: {report.errors} error finding"
                f"{'s' if report.errors != 1 else ''}; push refused "
                "(git push --no-verify pushes anyway)")
        rc = max(rc, got)
    return rc
