"""``napipatch send``: check a stored version, mail it with git send-email,
record its Message-IDs and tag it.

The files sent are the store's ``series/NAME/vN/*.patch``. napipatch makes
the Message-IDs itself and writes them into copies of the files (git
send-email keeps a ``Message-ID:`` it finds in a file), so what is recorded
in series.toml is exactly what went out; ``--thread --no-chain-reply-to``
makes every patch a reply to the cover letter. SMTP is git's own business
(``sendemail.smtpServer``, ``sendemail.smtpServerPort``, ...).

Anything from series data that lands in a header (addresses from
series.toml, get_maintainer.pl or the command line; the Message-ID's parts)
is made one line first (``mails.addresses.one_line``: CR, LF and every other
control character removed).
"""

from __future__ import annotations

import re
import secrets
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from napipatch.config import Config
from napipatch.errors import NapipatchError
from napipatch.kernel.getmaintainer import get_maintainers, recipients
from napipatch.mails import mbox
from napipatch.mails.addresses import addresses, one_line
from napipatch.pipeline.run import run
from napipatch.report.model import Report
from napipatch.store.history import attach
from napipatch.store.store import LORE_LINK, Store
from napipatch.tree import gitutil

_THREAD_HEADERS = {b"message-id", b"in-reply-to", b"references"}
_DOMAIN = re.compile(r"^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")


@dataclass
class Outcome:
    report: Report
    sent: bool = False
    to: list[str] = field(default_factory=list)
    cc: list[str] = field(default_factory=list)
    cover_id: str | None = None
    patch_ids: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    output: str = ""
    held: str = ""  # why a clean series is not sent yet (netdev's 24 hours)


def new_message_id(name: str, version: int, n: int, domain: str) -> str:
    stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime())
    left = one_line(f"{stamp}.{secrets.token_hex(4)}-{n}-{name}-v{version}", None).replace(" ", "")
    return f"{left}@{domain}"


def with_message_id(data: bytes, msgid: str, origin: str) -> bytes:
    """``data`` (a format-patch file) with its threading headers replaced by ``msgid``."""
    head, sep, body = data.partition(b"\n\n")
    if not sep:
        raise NapipatchError(origin, "no blank line after the headers")
    out, dropping = [], False
    for i, line in enumerate(head.split(b"\n")):
        if i == 0 and line.startswith(b"From "):
            out.append(line)
            continue
        if line[:1] in (b" ", b"\t"):
            if not dropping:
                out.append(line)
            continue
        dropping = line.split(b":", 1)[0].strip().lower() in _THREAD_HEADERS
        if not dropping:
            out.append(line)
    out.append(b"Message-ID: <" + msgid.replace("\r", "").replace("\n", "").encode() + b">")
    return b"\n".join(out) + sep + body


def send_series(store: Store, spec: str, cfg: Config, repo: Path | None = None,
                to: list[str] | None = None, cc: list[str] | None = None,
                dry_run: bool = False, force: bool = False, only: list[str] | None = None,
                skip: list[str] | None = None) -> Outcome:
    series = attach(store.load(spec), store)
    if series.inputs.record.get("cover-only") or not series.patches:
        raise NapipatchError(spec, "only a cover letter is stored: nothing to send")
    vkey = f"v{series.version}"
    vdir = store.path(series.name) / vkey
    files = sorted(p for p in vdir.iterdir() if re.match(r"^\d{4}-.*\.patch$", p.name))
    repo = gitutil.require_repo(repo) if repo is not None else None
    report = run(series, cfg, repo, only=only, skip=skip)
    outcome = Outcome(report=report)
    if not report.clean and not force:   # error findings, or not everything checked
        return outcome
    # netdev's 24 hours between postings: the list's bot would answer with
    # a form letter, so the version waits unless --force.
    soon = [f for f in report.findings if f.check == "repost-wait" and f.severity == "warning"]
    if soon and not force:
        outcome.held = soon[0].message
        return outcome
    rec = store.record(series.name)
    to_l = addresses(to, "--to") + addresses(rec.get("to"), f"{series.name}/series.toml to")
    cc_l = addresses(cc, "--cc") + addresses(rec.get("cc"), f"{series.name}/series.toml cc")
    wanted = []
    if repo is not None and report.base:
        patch_files = [f for f in files if not f.name.startswith("0000-")]
        wanted = get_maintainers(repo, report.base, cfg.cache, patch_files,
                                 cfg.get_maintainer_timeout)
    # The cc-maintainers check takes a stored series to go where this says.
    outcome.to, outcome.cc = recipients(to_l, cc_l, wanted)
    if not outcome.to:
        raise NapipatchError(spec, "no recipients: pass --to, add to = [...] to series.toml, "
                             "or --tree for the tree's get_maintainer.pl")
    domain = series.head.author_email.rpartition("@")[2].strip().lower()
    domain = domain if _DOMAIN.match(domain) else "napipatch.invalid"
    cwd = repo or Path.cwd()
    with tempfile.TemporaryDirectory(prefix="napipatch-send-") as td:
        copies, ids = [], []
        for n, f in enumerate(files):
            mid = new_message_id(series.name, series.version, n, domain)
            out = Path(td) / f.name
            out.write_bytes(with_message_id(f.read_bytes(), mid, str(f)))
            copies.append(out)
            ids.append((mbox.read_mbox(out)[0], mid))
        args = ["--thread", "--no-chain-reply-to", "--confirm=never"]
        args += [f"--to={a}" for a in outcome.to] + [f"--cc={a}" for a in outcome.cc]
        if dry_run:
            args.append("--dry-run")
        if force and not report.clean:
            args.append("--no-validate")  # the hook would refuse what --force sends
        cp = gitutil.send_email(cwd, args + ["--no-format-patch", *map(str, copies)],
                                {"NAPIPATCH_RUN_ID": secrets.token_hex(8)})
    outcome.output = cp.stdout + cp.stderr
    if cp.returncode != 0:
        raise SendFailed(cp.stderr, gitutil.why(cp.stderr, cp.returncode))
    for m, mid in ids:
        if m.subject.has_counter and m.subject.index == 0:
            outcome.cover_id = mid
        else:
            outcome.patch_ids.append(mid)
    if dry_run:
        outcome.notes.append("dry run: nothing sent, recorded or tagged")
        return outcome
    outcome.sent = True
    _record(store, series.name, vkey, outcome)
    outcome.notes.append(f"recorded the Message-IDs in {store.path(series.name) / 'series.toml'}")
    outcome.notes.append(_tag(repo, series))
    return outcome


class SendFailed(NapipatchError):
    def __init__(self, stderr: str, why: str):
        super().__init__("git send-email", why)
        self.stderr = stderr


def _record(store: Store, name: str, vkey: str, o: Outcome) -> None:
    # Re-read under the lock: an import may have added a version since.
    with store.updating(name) as rec:
        info = rec.setdefault("versions", {}).setdefault(vkey, {})
        if o.cover_id:
            info["cover-message-id"] = o.cover_id
            info["lore"] = LORE_LINK.format(msgid=o.cover_id)
        else:
            info["lore"] = LORE_LINK.format(msgid=o.patch_ids[0])
        info["message-ids"] = o.patch_ids
        info["sent"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        info["sent-to"] = o.to
        if o.cc:
            info["sent-cc"] = o.cc


def _tag(repo: Path | None, series) -> str:
    tag = f"{series.name}-v{series.version}"
    if repo is None:
        return f"not tagged: no --tree to tag {tag} in"
    tip = series.patches[-1].commit
    sha = gitutil.resolve(repo, tip) if tip else None
    if not sha:
        return f"not tagged: the series' commits are not in {repo}"
    if gitutil.git(repo, "check-ref-format", f"refs/tags/{tag}", check=False).returncode != 0:
        return f"not tagged: {tag!r} is not a valid tag name"
    gitutil.git(repo, "tag", "-f", tag, sha)
    return f"tagged {tag} at {sha[:12]} in {repo}"
