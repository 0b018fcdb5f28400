"""``series show``, ``series diff`` and a version's changelog and review
replies: reading the store for a person.
"""

from __future__ import annotations

import email.utils
from pathlib import Path

from napipatch.errors import NapipatchError
from napipatch.mails import followup, patchtext, replies
from napipatch.mails.hunks import UnparsableDiff, parse_diff
from napipatch.mails.series import Series
from napipatch.store.history import history_of
from napipatch.store.store import REPLIES, Store
from napipatch.tree import gitutil
from napipatch.tree.apply import apply_in_index


def show(store: Store, spec: str) -> str:
    s = store.load(spec)
    info = s.inputs.record
    out = [f"{s.name} v{s.version}: {s.title}",
           f"  tree: {s.tree or '-'}   base-commit: {s.base_commit or '(none)'}",
           f"  date: {info.get('date', '-')}   source: {info.get('source', '-')}"]
    if info.get("lore"):
        out.append(f"  lore: {info['lore']}")
    if info.get("carried-from"):
        # A carry is no posting: say so before anything is read as one.
        out.append(f"  carried from: {info['carried-from']} (not a posting; its history is "
                   "that one's; series.toml says what the carry changed)")
    trailers = info.get("trailers", {})
    for i, p in enumerate(s.patches, 1):
        out.append(f"  {i}/{len(s.patches)} {p.subject.title}")
        try:
            ps = parse_diff(p.diff, p.origin)
        except UnparsableDiff as exc:
            out.append(f"      {p.author}  {exc.reason}")
            ps = []
        else:
            out.append(f"      {p.author}  {len(ps)} files, +{ps.added} -{ps.removed}")
        for f in ps:
            out.append(f"        {f.path}  +{f.added} -{f.removed}")
        for key, value, _line in p.trailers:
            out.append(f"      {key}: {value}")
        for t in trailers.get(str(i), []):
            out.append(f"      {t}  (from a reply)")
    for t in trailers.get("0", []):
        out.append(f"  series: {t}  (from a reply to the cover)")
    return "\n".join(out) + "\n"


def range_diff(store: Store, name: str, va: str, vb: str, repo: Path, base: str | None) -> str:
    repo = gitutil.require_repo(repo)
    ends = []
    for v in (va, vb):
        s = store.load(f"{name}@{v if v.startswith('v') else 'v' + v}")
        res = apply_in_index(repo, s, base)
        if res.failure:
            raise NapipatchError(f"{name}@v{s.version}", str(res.failure))
        ends.append(f"{res.base}..{res.tip}")
    return gitutil.git(repo, "range-diff", "--no-color", *ends).stdout


# ----------------------------------------------------------------------
# ``series show NAME@vN --replies`` and ``series changelog NAME@vN``: the
# replies kept with a version, and what vN did with vN-1's review comments
# (the same judgement as the review-followup check, from the same record).


def judged(store: Store, spec: str) -> tuple[Series, dict | None, list[tuple[dict, object]]]:
    """vN, its previous version's record (None when there is none) and each
    of that version's review comments with its verdict in vN."""
    s = store.load(spec)
    prev = history_of(s, store)["previous"]
    if prev is None or "unknown" in prev.get("review-comments", {"unknown": ""}):
        return s, prev, []
    lines = [patchtext.patch_lines(p.diff) for p in s.patches]
    found = followup.entries(s)
    return s, prev, [(c, followup.judge(c, s, lines, found))
                     for c in prev["review-comments"]["comments"]]


def show_replies(store: Store, spec: str) -> str:
    """The replies kept with vN, then vN-1's review comments and their state."""
    s = store.load(spec)
    out = [f"{s.name} v{s.version}: replies kept in {REPLIES}"]
    data = store.replies(s.name, s.version)
    if data is None:
        out.append("  none kept (imported as patches only, or before napipatch kept replies)")
    else:
        skipped: list[str] = []
        mails = replies.unpack(data, f"{spec}/{REPLIES}", skipped)
        t = replies.thread(s.cover.msgid if s.cover else "", [p.msgid for p in s.patches], mails)
        for m in mails:
            on = f"{t.patch[m.msgid]}/{len(s.patches)}" if m.msgid in t.patch else "?"
            out.append(f"  {on:5} {_who(m.author)}  {m.date}  <{m.msgid}>")
        out += [f"  {why}" for why in skipped + t.skipped]
    out += _comments(store, spec)
    return "\n".join(out) + "\n"


def _comments(store: Store, spec: str) -> list[str]:
    s, prev, got = judged(store, spec)
    if prev is None:
        return [f"v{s.version}: no previous version in the store to follow up"]
    if "unknown" in prev["review-comments"]:
        why = prev["review-comments"]["unknown"]
        return [f"v{prev['version']}'s review comments: unknown, {why}"]
    out = [f"v{prev['version']}'s review comments, as v{s.version} left them ({len(got)}):"]
    for c, v in got:
        where = f"{c['file']}:{c['line']}" if "file" in c else f"general, {c['general']}"
        out.append(f"  {v.state:10} v{prev['version']} {c['patch']}/{c['total']} "
                   f"{_who(c['reviewer'])} [{where}]")
        out.append(f"             \"{c['first']}\"")
        out.append(f"             {v.why}")
        if v.state == "open":
            out.append(f"             now at {v.file}:{v.line} (v{s.version} patch {v.patch})")
        out.append(f"             {c['link']}")
    return out


def changelog(store: Store, spec: str) -> str:
    """A draft of vN's changelog: a line per review comment of vN-1, for
    the author to edit (netdev asks what changed, and for whom)."""
    s, prev, got = judged(store, spec)
    if prev is None:
        raise NapipatchError(spec, "no previous version in the store: nothing to follow up")
    if "unknown" in prev["review-comments"]:
        raise NapipatchError(spec, f"v{prev['version']}'s review comments are unknown: "
                                   f"{prev['review-comments']['unknown']}")
    out = [f"v{s.version}:", f" - v{prev['version']}: {prev['lore'] or '(no lore link)'}"]
    todo = {"changed": "", "mentioned": "(already in the changelog) ",
            "answered": "(answered on the list) ", "open": "TODO (not done) ",
            "unanswered": "TODO (not answered) "}
    for c, v in got:
        on = f"patch {c['patch']}" if c["patch"] else "cover letter"
        out.append(f" - {todo[v.state]}{on}: {c['first']} "
                   f"({_who(c['reviewer'])}, {c['link']})")
    return "\n".join(out) + "\n"


def _who(person: str) -> str:
    name, addr = email.utils.parseaddr(person)
    return name or addr or person
