"""What each page of ``bot serve`` shows, as plain data read from the
bot's state: the HTML pages render it through templates/web-*.html.j2 and
the JSON twins (``?format=json``) return it as it is.

Nothing here writes; a name from a URL only ever selects among the names
the state lists (a series id, a kept output's name), so no URL reaches a
file outside the state dir.
"""

from __future__ import annotations

import email
import email.policy
import re
from urllib.parse import quote

from napipatch.bot import artefacts
from napipatch.bot.config import BotConfig
from napipatch.bot.archive_history import link
from napipatch.bot.state import State
from napipatch.jobs.results.splats import kind_of
from napipatch.report.nipa import CONTEXTS

PAGE = 50  # series per index page
RECENT = 20  # results per test on /tests
_WORDS = {"success": "success", "warning": "warning", "fail": "fail", "unknown": "not known here"}
_ERROR = re.compile(r"(?:^|\s)(?:error|ERROR|FAIL|not ok)\b|: error: |^\S+:\d+: error:")


class NotFound(Exception):
    """The URL names nothing the state has."""


def shown_state(row, replies: list) -> str:
    """The state a page shows: waiting, checked, replied, failed, superseded."""
    st = row["state"]
    if st in ("waiting", "queued", "checking"):
        return "waiting"
    if st in ("failed", "superseded"):
        return st
    return "replied" if any(r["state"] == "sent" for r in replies) else "checked"


def _summary(cfg: BotConfig, row, replies: list) -> dict:
    return {"id": row["id"], "title": row["title"] or "", "version": row["version"],
            "author": row["author_name"] or row["author_email"] or "",
            "email": row["author_email"] or "", "date": row["first_seen"],
            "state": shown_state(row, replies), "note": row["note"] or "",
            "errors": row["errors"], "warnings": row["warnings"],
            "thread": link(cfg, row["inbox"], quote(row["head_msgid"] or "", safe="@.+-_~"))
            + "T/" if row["head_msgid"] else "",
            "page": f"/series/{row['id']}"}


def index(cfg: BotConfig, state: State, page: int = 1) -> dict:
    """``/``: the series the bot has seen, newest first, PAGE a page."""
    page = max(1, page)
    rows = state.newest_series(PAGE, (page - 1) * PAGE)
    replies = state.replies_for_series([r["id"] for r in rows])
    total = state.series_count()
    return {"series": [_summary(cfg, r, replies.get(r["id"], [])) for r in rows],
            "page": page, "pages": max(1, -(-total // PAGE)), "total": total}


def _grid(data: dict) -> dict:
    """The forecast as a grid: one row per NIPA context, a cell per patch."""
    patches = data["series"]["patches"]
    names = [c.name for c in CONTEXTS if any(c.name in p["nipa"] for p in patches)]
    rows = []
    for name in names:
        cells = [p["nipa"].get(name) for p in patches]
        rows.append({"context": name, "cells": [
            {"state": c["state"], "words": _WORDS[c["state"]], "description": c["description"]}
            if c else None for c in cells]})
    return {"patches": [{"number": p["number"], "subject": p["subject"]} for p in patches],
            "rows": rows}


def _reply_text(mail: bytes | None) -> str:
    if not mail:
        return ""
    msg = email.message_from_bytes(mail, policy=email.policy.default)
    body = msg.get_body(preferencelist=("plain",))
    return body.get_content() if body is not None else ""


def series(cfg: BotConfig, state: State, sid: int) -> dict:
    """``/series/<id>``: the forecast grid, the findings, each check with
    its output's link, the versions around it and the bot's replies."""
    row = state.series(sid)
    if row is None:
        raise NotFound(f"no series #{sid}")
    replies = state.replies_of(sid)
    out = _summary(cfg, row, replies)
    nxt = state.next_version(sid)
    out.update(previous=f"/series/{row['prev_id']}" if row["prev_id"] else "",
               next=f"/series/{nxt['id']}" if nxt else "", base=row["base"] or "",
               replies=[{"kind": r["kind"], "state": r["state"], "msgid": r["msgid"],
                         "text": _reply_text(r["mail"])} for r in replies])
    kept = state.report_of(sid)
    if kept is None:
        out.update(checked=False, grid=None, findings=[], checks=[], summary=None)
        return out
    data, logs = kept
    checks = [{"id": c["id"], "status": c["status"], "reason": c["reason"],
               "log": f"/log/{sid}/{artefacts.name_of(c['id'])}"
               if artefacts.name_of(c["id"]) in logs else ""} for c in data["checks"]]
    total = len(data["series"]["patches"])
    findings = [dict(f, where=(f"{f['file']}:{f['line']}" if f["file"] and f["line"]
                               else f["file"] or ""),
                     label="SERIES" if f["patch"] == 0 else f"PATCH {f['patch']}/{total}")
                for f in data["findings"]]
    out.update(checked=True, grid=_grid(data), findings=findings, checks=checks,
               summary=data["summary"], base=data["base"] or out["base"])
    return out


def log(cfg: BotConfig, state: State, sid: int, name: str) -> dict:
    """``/log/<id>/<name>``: a kept output, line by line, errors and splats marked."""
    kept = state.report_of(sid)
    if kept is None or name not in kept[1] or not artefacts.NAME.match(name):
        raise NotFound(f"no output {name!r} for series #{sid}")
    root = cfg.state_dir.resolve()
    path = (artefacts.log_dir(cfg.state_dir, sid) / f"{name}.log").resolve()
    if not path.is_relative_to(root) or not path.is_file():
        raise NotFound(f"no output {name!r} for series #{sid}")
    lines = []
    for n, text in enumerate(path.read_text(errors="replace").splitlines(), 1):
        splat = kind_of(text)
        mark = f"{splat} splat" if splat else "error" if _ERROR.search(text) else ""
        lines.append({"n": n, "text": text, "mark": mark})
    return {"series": sid, "name": name, "title": state.series(sid)["title"] or "",
            "lines": lines, "marked": [x for x in lines if x["mark"]]}


def tests(state: State) -> dict:
    """``/tests``: every test case run, its last results per base and
    target, and the known failures the bot runs with."""
    window, known = state.memory_settings()
    rows = []
    for t in state.tested():
        recent = state.recent_results(t["test"], t["base"], t["target"], RECENT)
        rows.append({"test": t["test"], "base": t["base"], "target": t["target"],
                     "runs": t["n"], "results": [{"result": r["result"],
                                                  "series": r["series_id"]} for r in recent]})
    return {"tests": rows, "known_failures": known, "flaky_window": window}
