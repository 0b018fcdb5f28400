"""The bot's replies: what they say, whether a series gets one, and
queueing one under the per-author rate limit.

A report carries the run's verdict (napipatch.report.model): it never
calls a series clean when a planned check or job gave no result (it
crashed, timed out, or could not run here). Then its verdict line says
INCOMPLETE, it names what did not run and why, and the "nothing to
report" wording is not used. ``reply.policy = "problems"`` (the default)
replies on errors, warnings, and incomplete runs: only a series whose
every planned check completed with no error or warning goes unanswered.
"""

from __future__ import annotations

import logging
import time

from napipatch import __version__ as napipatch_version
from napipatch.bot import mailer
from napipatch.bot.assemble import Group, row_dict
from napipatch.bot.config import BotConfig
from napipatch.bot.state import State
from napipatch.bot.trees import TreeChoice
from napipatch.mails.addresses import one_line
from napipatch.mails.series import Series
from napipatch.report.model import LETTERS, MAINTAINER_NETDEV, Report
from napipatch.report.render import grouped, render, to_data

log = logging.getLogger("napipatch.bot")


def verdict(report: Report) -> str:
    """The word in ``[static check WORD on ...]``: INCOMPLETE before all
    else, since a missing result may hide any error."""
    if report.incomplete:
        return "INCOMPLETE"
    return "ERROR" if report.errors else "WARNING" if report.warnings else "OK"


def wants_reply(policy: str, report: Report) -> bool:
    """Whether ``report`` gets a reply under ``policy``: an incomplete run
    is never taken for a clean one."""
    return policy == "always" or bool(report.errors or report.warnings or report.incomplete)


def series_note(report: Report) -> str:
    """The series' note in the state database after its check ('' keeps the note it had)."""
    if report.incomplete:
        return f"incomplete: {report.completion_line()}"
    return ""


def not_run(report: Report) -> list[str]:
    """``checkpatch: timed out (ran past 600 s)``, one per check or job with no result."""
    return [f"{c.id}: {c.status.words}" + (f" ({one_line(c.reason)})" if c.reason else "")
            for c in report.incomplete]


def reproduce(series: Series, report: Report, source: str) -> list[str]:
    """The commands that give the same findings locally, like the kernel
    test robot's "reproduce" block: import the thread, check on the base."""
    name = series.name
    cmds = [f"napipatch series import {source} --name {name}"]
    check = f"napipatch check {name}@v{series.version}"
    if report.base:
        check += f" --tree ~/linux --base {report.base}"
    return cmds + [check]


def hi(name: str | None, addr: str | None) -> str:
    name = one_line(name)
    return name.split()[0] if name else (one_line(addr) or "there")


def _patches(series: Series, findings: list[dict]) -> list[dict]:
    """Per mail (cover first), its subject and errors and warnings, each with where it is."""
    def where(f):
        return (f"{f['file']}:{f['line']}: " if f["file"] and f["line"]
                else f"{f['file']}: " if f["file"] else "")

    total = len(series.patches)
    out = []
    for n, mail in [(0, series.cover)] + list(enumerate(series.patches, 1)):
        # Infos are suggestions: a mail to the list carries only what needs
        # acting on; the total counts them and the reproduce commands show them.
        fs = [f for f in findings if f["patch"] == n and f["severity"] != "info"]
        if n == 0 and mail is None and not fs:
            continue
        out.append({
            "label": "SERIES" if n == 0 else f"PATCH {n}/{total}",
            "subject": one_line(mail.subject.raw if mail else series.title),
            "findings": [dict(f, where=where(f)) for f in fs],
        })
    return out


def ai_counted(findings: list[dict]) -> list[dict]:
    """``findings`` with the ai-review comments of each patch made one
    finding that counts them and says where they are, quoting none of the
    AI's words (``bot.ai_review = "count"``)."""
    ai = [f for f in findings if f["check"] == "ai-review" and f["severity"] != "info"]
    out = [f for f in findings if f not in ai]
    for n in dict.fromkeys(f["patch"] for f in ai):
        mine = [f for f in ai if f["patch"] == n]
        at = [f"{f['file']}:{f['line']}" for f in mine if f["file"] and f["line"]]
        out.append(dict(mine[0], file=None, line=None, details="", message=(
            f"AI review: {len(mine)} comment{'s' * (len(mine) != 1)}"
            + (f" (at {', '.join(at[:5])}{', ...' if len(at) > 5 else ''})" if at else "")
            + ": not quoted on the list; the author's own agent shows them"),
            hint="napipatch check with napipatch.ai-review-command set (docs/ai-review.md)"))
    return out


def report_body(cfg: BotConfig, s, prev, series: Series, report: Report,
                choice: TreeChoice) -> str:
    """The report on series row ``s`` (``prev``: the row of its previous version)."""
    data = to_data(report)
    if cfg.ai_review == "count":
        data["findings"] = ai_counted(data["findings"])
    plain, groups = grouped(data)
    inbox = next((i for i in cfg.inboxes if i.name == s["inbox"]), None)
    url = f"{inbox.url}/{s['head_msgid']}/" if inbox and inbox.url else ""
    thread = f"{url}T/" if url else ""
    previous = f"v{prev['version']} <{prev['head_msgid']}>" if prev else ""
    base = (f"{report.base} ({choice.why or report.base_why})" if report.base
            else "none: diff-only checks")
    return render("bot-reply.j2", kind="report", r=data,
                  hi=hi(series.head.author_name, series.head.author_email),
                  verdict=verdict(report), tree_label=choice.label, url=url, base=base,
                  subject=one_line(series.head.subject.raw), previous=previous,
                  ran=[f"{c['id']} ({c['status']})" for c in data["checks"]
                       if c["status"] != "skipped"],
                  skipped=[f"{c['id']} ({c['reason']})" for c in data["checks"]
                           if c["status"] == "skipped"],
                  not_run=not_run(report), completion=report.completion_line(),
                  patches=_patches(series, plain), bot_version=napipatch_version,
                  groups=[dict(g, patches=_patches(series, g["findings"]),
                               letters=letters(g["findings"]))
                          for g in groups if any(f["severity"] != "info" for f in g["findings"])],
                  see=MAINTAINER_NETDEV, page=f"{cfg.url}/series/{s['id']}" if cfg.url else "",
                  thread=thread, reproduce=reproduce(series, report, thread or s["head_msgid"]))


def letters(findings: list[dict]) -> list[str]:
    """Once per series, in the order the checks ran: the rule of each
    check of a group that warned or erred (``report.model.LETTERS``)."""
    ids = dict.fromkeys(f["check"] for f in findings if f["severity"] != "info")
    return [LETTERS[c] for c in ids if c in LETTERS]


def incomplete_body(cfg: BotConfig, g: Group) -> tuple[str, list[str]]:
    """The notice that a series' patches did not all arrive, and what is missing."""
    head = g.head
    missing = [f"patch {i}/{g.total}" for i in g.missing]
    if g.needs_cover:
        missing.insert(0, f"the cover letter (0/{g.total})")
    mins = cfg.incomplete_after / 60
    body = render("bot-reply.j2", kind="incomplete", hi=hi(head["author_name"], head["author_email"]),
                  inbox=head["inbox"], missing=missing,
                  waited=f"{mins:g} minute{'s' if mins != 1 else ''}",
                  subject=one_line(head["subject"]),
                  present=[one_line(m["subject"]) for _i, m in sorted(g.members.items())],
                  bot_version=napipatch_version)
    return body, missing


def queue(cfg: BotConfig, state: State, s, head: dict, kind: str, body: str,
          series_state: str, note: str = "", **extra) -> bool:
    """Build the reply (its Message-ID fixed now) and store it with the
    series' new state in one transaction; never twice per series and kind.
    Past ``reply.rate_per_hour`` replies to the author it is stored as
    'ratelimited', not sent. True: queued to be sent."""
    if state.reply_for(s["id"], kind) is not None:
        state.set_series_state(s["id"], series_state, **extra)
        return False
    inbox = next((i for i in cfg.inboxes if i.name == head["inbox"]), None)
    refs = head["refs"] if isinstance(head["refs"], list) else row_dict(head)["refs"]
    out = mailer.build(cfg, subject=head["subject"], in_reply_to=head["msgid"],
                       references=refs, author_name=head["author_name"] or "",
                       author_email=head["author_email"] or "",
                       list_address=inbox.address if inbox else "", body=body)
    author = (head["author_email"] or "").lower()
    recent = state.replies_to_author_since(author, time.time() - 3600)
    reply_state, why = "queued", note
    if recent >= cfg.rate_per_hour:
        reply_state = "ratelimited"
        why = f"not sent: {recent} replies to {author} in the last hour (rate_per_hour)"
        log.warning("series #%d: %s", s["id"], why)
    with state.tx():
        state.add_reply(s["id"], kind, out.msgid, author, out.sender, out.rcpts, out.data,
                        reply_state, dry_run=cfg.dry_run_dir is not None, note=why)
        state.set_series_state(s["id"], series_state, **(dict(note=note) if note else {}),
                               **extra)
    return reply_state == "queued"
