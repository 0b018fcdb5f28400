"""``napipatch bot status``: what the bot has seen, one line per thing.

Archive positions, message counts, and every series with its state, the
errors/warnings its check found, its note (why it is where it is) and its
replies.
"""

from __future__ import annotations

from napipatch.bot.state import State
from napipatch.mails.addresses import one_line


def lines(state: State) -> list[str]:
    out = []
    for p in state.positions():
        out.append(f"inbox {p['inbox']} epoch {p['epoch']}: at {p['oid'][:12] or 'its start'}")
    seen, patches, bad = state.message_counts()
    out.append(f"messages: {seen} seen, {patches} patch mails, {bad} unreadable")
    for s in state.all_series():
        prev = f" (follows #{s['prev_id']})" if s["prev_id"] else ""
        have = state.patches_present(s["id"])
        counts = (f" {s['errors']}E/{s['warnings']}W" if s["errors"] is not None else "")
        out.append(f"series #{s['id']} {s['state']:10} v{s['version']} {have}/{s['total']} "
                   f"{one_line(s['title'], 70)!r} by {s['author_email']}{prev}{counts}"
                   + (f" -- {s['note']}" if s["note"] else ""))
        for r in state.replies_of(s["id"]):
            out.append(f"  reply {r['kind']} <{r['msgid']}> {r['state']}"
                       + (f" (attempts {r['attempts']})" if r["attempts"] else "")
                       + (f" -- {r['last_error']}" if r["last_error"] else ""))
    return out
