"""A series: one version's cover letter and patches, assembled from mails."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from napipatch.errors import NapipatchError
from napipatch.mails.mail import PatchMail

# The cover's changelog: from the first "vN:" / "Changes in vN" line to the
# shortlog, diffstat or trailers that git format-patch appends.
_CHANGELOG_START = re.compile(r"^(v\d+\s*[:\-]|changes (in|since) v\d+|changelog)", re.I | re.M)
_CHANGELOG_END = re.compile(r"^(\S.* \(\d+\):$|base-commit:|-- $| \S+.*\|\s+\d+)", re.M)

# netdev takes at most 15 patches a series; these bounds only keep absurd
# numbering ("1/10^30", "v10^30") from turning into huge lists and names.
MAX_PATCHES = 1000
MAX_VERSION = 999
# The most patches napipatch checks, builds or boots in one series: netdev
# takes 15 (NIPA's series_format), so a series past this is never a netdev
# posting, and checking it would take minutes per hundred patches.
MAX_CHECKED = 100


def check_numbering(source: str, version: int, index: int, total: int) -> None:
    """A one-line error for a subject numbered past the bounds."""
    if total > MAX_PATCHES or index > MAX_PATCHES:
        raise NapipatchError(source, f"patch {index}/{total}: more than {MAX_PATCHES} "
                                     "patches in a series")
    if version > MAX_VERSION:
        raise NapipatchError(source, f"version v{version} is past v{MAX_VERSION}")


@dataclass
class Inputs:
    """What the front-ends know of a series beside its mails, typed, so a
    reader names a field that exists. Hashed whole into every check's cache
    key (``engine/cache.py``), ``history`` only for the checks that read it:
    a field added here can never give a stale cached result."""

    # The stored version's series.toml table (sent, message-ids, lore,
    # carried-from, trailers ...), or what the bot knows of an archived
    # version in the same keys: a file people write, so a mapping.
    record: dict = field(default_factory=dict)
    recipients: dict | None = None   # who `napipatch send` would address (cc-maintainers)
    base_commit: str | None = None   # a stored version's, or a commit checked alone: its parent
    synthetic_cover: bool = False    # the cover letter is a placeholder (a range's, b4's)
    history: dict | None = None      # vN-1's record (ctx.history)
    net_next: dict | None = None     # the list's newest net-next announcement
    reply_mails: list | None = None  # an archived version's review replies (review-followup)
    reply_link: str = ""             # how links to those replies are written


@dataclass
class Series:
    """The cover letter (if any) and patches 1..N of one version.

    Attributes:
        name: the store name (or the input's name).
        version: N of ``vN``.
        cover: patch 0, or None for a single patch without one.
        patches: patches 1..N, in order.
        source: where it was read from (for messages).
        inputs: what the front-ends know beside the mails.
    """

    name: str
    version: int
    cover: PatchMail | None
    patches: list[PatchMail]
    source: str = ""
    inputs: Inputs = field(default_factory=Inputs)

    @property
    def mails(self) -> list[PatchMail]:
        return ([self.cover] if self.cover else []) + self.patches

    @property
    def head(self) -> PatchMail:
        """The mail that speaks for the series: the cover, or the only patch."""
        return self.cover or self.patches[0]

    @property
    def title(self) -> str:
        return self.head.subject.title

    @property
    def base_commit(self) -> str | None:
        # A patch checked on its own (check -) knows its base: the parent
        # of the commit it was made from, not the series' base-commit.
        if self.inputs.base_commit:
            return self.inputs.base_commit
        for m in [self.head] + self.patches:
            if m.base_commit:
                return m.base_commit
        return None

    @property
    def tree(self) -> str | None:
        for m in self.mails:
            if m.subject.tree:
                return m.subject.tree
        return None

    @property
    def changelog(self) -> str:
        return changelog_of(self.cover.body) if self.cover else ""


def changelog_of(body: str) -> str:
    m = _CHANGELOG_START.search(body)
    if not m:
        return ""
    rest = body[m.start():]
    e = _CHANGELOG_END.search(rest)
    return (rest[: e.start()] if e else rest).strip("\n") + "\n"


def check_size(series: Series) -> None:
    """Refuse a series too large to check in bounded time, in one line."""
    n = len(series.patches)
    if n > MAX_CHECKED:
        raise NapipatchError(series.source or series.name,
                             f"v{series.version} has {n} patches; napipatch checks at most "
                             f"{MAX_CHECKED} (netdev takes 15 a series): split it")


def assemble(mails: list[PatchMail], source: str, name: str | None = None,
             version: int | None = None) -> Series:
    """Pick the patches of one version out of a thread and check it is whole."""
    patches = [m for m in mails if m.subject.is_patch and not m.subject.is_reply]
    if not patches:
        # A bare commit mail without a [PATCH] tag (git format-patch -k, or
        # a single format-patch file) still counts as a one-patch series.
        patches = [m for m in mails if not m.subject.is_reply and m.diff]
        if len(patches) != 1:
            raise NapipatchError(source, "no patches found (no [PATCH] subjects with a diff)")
    by_version: dict[int, list[PatchMail]] = defaultdict(list)
    for m in patches:
        check_numbering(m.origin or source, m.subject.version, m.subject.index, m.subject.total)
        by_version[m.subject.version].append(m)
    if version is None:
        if len(by_version) > 1:
            vs = ", ".join(f"v{v}" for v in sorted(by_version))
            raise NapipatchError(source, f"mixes versions {vs}; pick one with NAME@vN or --version")
        version = next(iter(by_version))
    if version not in by_version:
        raise NapipatchError(source, f"has no v{version}")
    chosen = by_version[version]
    totals = {m.subject.total for m in chosen}
    if len(totals) > 1:
        raise NapipatchError(source, f"v{version} patches disagree on the count ({sorted(totals)})")
    total = totals.pop()
    slots: dict[int, PatchMail] = {}
    for m in chosen:
        i = m.subject.index
        if i in slots:
            if slots[i].diff == m.diff and slots[i].message == m.message:
                continue  # the same mail twice (cross-posted): harmless
            raise NapipatchError(source, f"patch {i}/{total} appears twice in v{version}")
        if i > total:
            raise NapipatchError(source, f"patch {i}/{total} numbered beyond the total")
        slots[i] = m
    missing = [i for i in range(1, total + 1) if i not in slots]  # total <= MAX_PATCHES
    if missing:
        what = ", ".join(f"{i}/{total}" for i in missing[:10])
        if len(missing) > 10:
            what += f" ... ({len(missing)} patches)"
        raise NapipatchError(source, f"v{version} is incomplete: patch {what} missing")
    return Series(name=name or name_from(slots.get(0) or slots[1]), version=version,
                  cover=slots.get(0), patches=[slots[i] for i in range(1, total + 1)],
                  source=source)


def name_from(mail: PatchMail) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", mail.subject.title.lower()).strip("-")
    return s[:40].rstrip("-") or "series"


NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# The store's own file name, and device names Windows cannot create as
# files, with any extension (a store may live on a shared drive).
STORE_FILES = {"series.toml"}
DEVICES = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)),
           *(f"lpt{i}" for i in range(10))}


def valid_name(name: str) -> bool:
    """A store name: ``[A-Za-z0-9][A-Za-z0-9._-]*`` (the whole string: no
    trailing newline), no ``..``, not reserved, at most 64 characters."""
    return (bool(NAME_RE.fullmatch(name)) and ".." not in name
            and name.lower() not in STORE_FILES and name.split(".")[0].lower() not in DEVICES)


def check_name(name: str) -> str:
    if not valid_name(name):
        if NAME_RE.fullmatch(name) and ".." not in name:
            raise NapipatchError(name, "reserved name: the store uses it or a system cannot "
                                       "create it; pick another --name")
        raise NapipatchError(name, "bad series name: use letters, digits, '.', '_', '-' "
                                   "(at most 64, no '/' or '..')")
    return name
