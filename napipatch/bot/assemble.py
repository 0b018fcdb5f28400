"""From archived mails to series: records, grouping, completeness.

A message becomes a record (what the bot keeps of it): patch mails
(``[PATCH ...]`` / ``[RFC ...]``, not ``Re:``) keep their raw bytes, and so
do the replies to them (``Re: [PATCH ...]``: their review comments and
trailers are the next version's history, ``napipatch.bot.archive_history``) and
replies that give a ``Reviewed-by``/``Acked-by``/``Tested-by``; other mail
keeps only its headers, so the bot can recognise its own replies when the
list sends them back, and the list's "net-next is OPEN/CLOSED"
announcements by their subject and date. Mail the parser refuses is a record
of kind ``bad`` with the reason.

Grouping runs over the patch mails not yet in a closed series:

1. a cover letter (``0/N``) starts a group keyed by its Message-ID;
2. a patch joins the cover it replies to (In-Reply-To/References, same vN
   and count), else the ``1/N`` patch its thread starts with (a series
   sent with --thread and no cover), else waits for the thread's root;
3. a patch with no threading headers at all (some senders, and the real
   v4 thread in tests/fixtures/lore) joins an open group of the same
   author, version, count and tree that still has its slot free.
"""

from __future__ import annotations

import email
import email.header
import email.parser
import email.policy
import email.utils
import json
import re
from dataclasses import dataclass, field

from napipatch.errors import NapipatchError
from napipatch.mails.mail import PatchMail, clean_msgid, parse_message
from napipatch.mails.series import Series, assemble, check_numbering, name_from
from napipatch.mails.subject import parse_subject

# compat32 leaves header values as strings (RFC 2047 decoded below only when
# present): ~20x cheaper than policy.default's header objects, which matters
# for the replies and discussion that make up most of a list's traffic.
# Patch mails are then parsed in full by napipatch.mails.mail.parse_message.
_HDR_PARSER = email.parser.BytesHeaderParser(policy=email.policy.compat32)
# A reply to a patch, or one that gives a review trailer, keeps its raw
# bytes (other mail only its headers); any charset, so bytes.
_REVIEW_LINE = re.compile(rb"(?im)^[ \t]*(?:reviewed|acked|tested)-by:")


def _flat(value) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):  # an email.header.Header (undecodable bytes)
        value = str(value)
    if "=?" in value:
        value = str(email.header.make_header(email.header.decode_header(value)))
    # Raw 8-bit header bytes arrive surrogate-escaped: keep them readable.
    value = value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return " ".join(value.split())


def record(raw: bytes, inbox: str, epoch: int, oid: str) -> dict:
    """What the bot stores of one archived message (never raises)."""
    origin = f"{inbox} epoch {epoch} commit {oid[:12]}"
    rec: dict = {"inbox": inbox, "epoch": epoch, "oid": oid, "msgid": f"commit:{oid}@{inbox}"}
    try:
        hdr = _HDR_PARSER.parsebytes(raw)
        msgid = clean_msgid(_flat(hdr["Message-ID"]))
        subject = _flat(hdr["Subject"])
        frm = _flat(hdr["From"])
        irt = clean_msgid(_flat(hdr["In-Reply-To"]))
        refs = re.findall(r"<([^<>\s]+)>", _flat(hdr["References"]))
    except Exception as exc:  # the email package raises many types on junk
        rec.update(kind="bad", error=f"{origin}: malformed headers ({exc})")
        return rec
    if msgid:
        rec["msgid"] = msgid
    name, addr = email.utils.parseaddr(frm)
    rec.update(subject=subject, author_name=name, author_email=addr, in_reply_to=irt,
               refs=refs, date=_flat(hdr["Date"]))
    subj = parse_subject(subject)
    if not subj.is_patch or subj.is_reply:
        rec["kind"] = "other"
        if subj.is_reply and (subj.is_patch or _REVIEW_LINE.search(raw)):
            # A review reply: its comments and trailers are the previous
            # version's history when the next version comes
            # (napipatch.bot.archive_history; review-followup reads the comments).
            rec["raw"] = raw
        return rec
    try:
        mail = parse_message(raw, origin)
    except NapipatchError as exc:
        rec.update(kind="bad", error=str(exc))
        return rec
    if subj.index > subj.total or subj.total < 1:
        rec.update(kind="bad", error=f"{origin} <{msgid}>: patch numbered {subj.index}/{subj.total}")
        return rec
    try:  # absurd numbering would make Group.missing a list of 10^30 numbers
        check_numbering(f"{origin} <{msgid}>", subj.version, subj.index, subj.total)
    except NapipatchError as exc:
        rec.update(kind="bad", error=str(exc))
        return rec
    rec.update(kind="patch", version=subj.version, idx=subj.index, total=subj.total,
               tree=subj.tree, title=subj.title, raw=raw,
               author_name=mail.author_name, author_email=mail.author_email)
    return rec


@dataclass
class Group:
    key: str
    version: int
    total: int
    author_email: str
    tree: str | None
    members: dict[int, dict] = field(default_factory=dict)  # idx -> row
    waits_for_root: str | None = None  # a thread root not seen yet
    duplicates: list[str] = field(default_factory=list)

    @property
    def cover(self) -> dict | None:
        return self.members.get(0)

    @property
    def head(self) -> dict:
        return self.members.get(0) or self.members[min(self.members)]

    @property
    def missing(self) -> list[int]:
        return [i for i in range(1, self.total + 1) if i not in self.members]

    @property
    def needs_cover(self) -> bool:
        """A cover letter is still expected (patches thread on an unseen root,
        or a multi-patch series sent without threading)."""
        if self.cover or self.total == 1:
            return False
        if self.waits_for_root is not None:
            return True
        p1 = self.members.get(1)
        # Sent with --thread and no cover: the other patches reply to 1/N.
        return not (p1 and any(p1["msgid"] in (m["refs"] + [m["in_reply_to"]])
                               for i, m in self.members.items() if i > 1))

    @property
    def complete(self) -> bool:
        return not self.missing and not self.needs_cover

    def add(self, row: dict) -> bool:
        i = row["idx"]
        if i in self.members and self.members[i]["msgid"] != row["msgid"]:
            self.duplicates.append(row["msgid"])
            return False
        self.members[i] = row
        return True


def _same(row: dict, g: Group) -> bool:
    return row["version"] == g.version and row["total"] == g.total


def group(rows: list[dict], known) -> tuple[list[Group], dict[str, int]]:
    """Group open patch rows. ``known(msgid)`` returns a stored message row
    (with its ``series_id`` and series state) or None.

    Returns the groups and {msgid: closed series id} for late mails that
    belong to a series already reported (they are attached, not regrouped).
    """
    groups: dict[str, Group] = {}
    late: dict[str, int] = {}
    by_id = {r["msgid"]: r for r in rows}

    def new(key: str, row: dict) -> Group:
        g = groups.get(key)
        if g is None:
            g = groups[key] = Group(key, row["version"], row["total"],
                                    (row["author_email"] or "").lower(), row["tree"])
        return g

    for r in rows:
        if r["idx"] == 0:
            new(r["msgid"], r).add(r)
    unthreaded = []
    for r in rows:
        if r["idx"] == 0:
            continue
        refs = list(r["refs"])
        if r["in_reply_to"] and r["in_reply_to"] not in refs:
            refs.append(r["in_reply_to"])
        if not refs:
            unthreaded.append(r)
            continue
        target = next((g for ref in reversed(refs) if (g := groups.get(ref))
                       and g.cover and _same(r, g)), None)
        if target is None:
            p1 = next((by_id[ref] for ref in refs if ref in by_id and by_id[ref]["idx"] == 1
                       and by_id[ref]["version"] == r["version"]
                       and by_id[ref]["total"] == r["total"]), None)
            if p1 is not None:
                target = new(p1["msgid"], p1)
                target.add(p1)
        if target is None:
            closed = next((k["series_id"] for ref in refs if (k := known(ref))
                           and k["series_id"] and k["state"] not in ("waiting", "incomplete")
                           and k["version"] == r["version"]), None)
            if closed:
                late[r["msgid"]] = closed
                continue
            root = refs[0]
            if root in by_id or known(root) is not None:
                # Threaded under a mail that is not this series' cover (a
                # discussion, an older version): a series of its own.
                key = r["msgid"] if r["idx"] == 1 else f"{root}#v{r['version']}/{r['total']}"
                target = new(key, r)
            else:
                target = new(root, r)
                target.waits_for_root = root
        target.add(r)
    for r in unthreaded:
        email_l = (r["author_email"] or "").lower()
        target = next((g for g in groups.values()
                       if _same(r, g) and g.author_email == email_l and g.tree == r["tree"]
                       and r["idx"] not in g.members and not g.waits_for_root), None)
        if target is None:
            target = new(r["msgid"], r)
        target.add(r)
    # A group keyed by an awaited root whose cover has now arrived was
    # merged in step 2 (the cover's group has that key); drop empty ones.
    return [g for g in groups.values() if g.members], late


def slots(members: list[dict]) -> list[dict]:
    """One mail per slot (a later duplicate in a slot was logged and is ignored)."""
    seen: dict[int, dict] = {}
    for m in sorted(members, key=lambda m: m["seen_at"]):
        seen.setdefault(m["idx"], m)
    return [seen[i] for i in sorted(seen)]


def to_series(rows: list[dict], name_hint: str = "") -> Series:
    """Parse the members' raw mails and assemble them with napipatch's rules."""
    mails: list[PatchMail] = []
    for r in rows:
        mails.append(parse_message(bytes(r["raw"]), f"{r['inbox']} <{r['msgid']}>"))
    head = next((m for m in mails if m.subject.index == 0), mails[0])
    source = f"{rows[0]['inbox']} <{head.msgid}>"
    version = mails[0].subject.version
    return assemble(mails, source, name=name_hint or name_from(head), version=version)


def row_dict(row) -> dict:
    d = dict(row)
    d["refs"] = json.loads(d.get("refs") or "[]")
    return d
