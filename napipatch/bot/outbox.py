"""Delivering queued replies, and settling those a crash left half-sent.

A reply is marked 'sending' before the SMTP transaction and appended to
the sent-log once the server accepted it. After a restart a reply still
in 'sending' counts as sent when its Message-ID is in the sent-log or came
back through the archive, else it is queued again (``settle``). ``send``
hands queued replies to SMTP (or the dry-run directory); a server that is
down or busy leaves them queued for the next pass.
"""

from __future__ import annotations

import json
import logging
import time

from napipatch.bot import mailer
from napipatch.bot.config import BotConfig
from napipatch.bot.faults import crash_point
from napipatch.bot.state import State

log = logging.getLogger("napipatch.bot")


def settle(cfg: BotConfig, state: State) -> None:
    """Replies left in 'sending' by a crash: sent, or queued again."""
    sent = mailer.sent_ids(cfg.sent_log)
    for r in state.replies_in("sending"):
        if r["msgid"] in sent or state.has_message(r["msgid"]):
            where = "sent-log" if r["msgid"] in sent else "archive"
            log.info("reply <%s> was sent before a restart (found in the %s)", r["msgid"], where)
            state.set_reply_state(r["id"], "sent", sent_at=time.time(),
                                  last_error=f"confirmed by the {where} after a restart")
        else:
            log.warning("reply <%s> was interrupted while sending and is not in the "
                        "sent-log or archive: sending again", r["msgid"])
            state.set_reply_state(r["id"], "queued", last_error="interrupted while sending")


def send(cfg: BotConfig, state: State) -> int:
    """Send every queued reply; the number sent (or written, in a dry run)."""
    n = 0
    for r in state.replies_in("queued"):
        rcpts = _json_list(r["rcpts"])
        if cfg.dry_run_dir is not None:
            path = mailer.write_dry_run(cfg.dry_run_dir, r["id"], r["msgid"], bytes(r["mail"]))
            state.set_reply_state(r["id"], "sent", sent_at=time.time(), dry_run=1,
                                  last_error=f"dry run: {path}")
            log.info("dry run: reply <%s> written to %s", r["msgid"], path)
            n += 1
            continue
        if not rcpts:
            state.set_reply_state(r["id"], "failed", last_error="no valid recipient address")
            continue
        state.set_reply_state(r["id"], "sending", attempts=r["attempts"] + 1)
        crash_point("before-send")
        try:
            mailer.send_smtp(cfg, r["sender"], rcpts, bytes(r["mail"]))
        except mailer.TransientError as exc:
            log.warning("reply <%s> stays queued: %s", r["msgid"], exc)
            state.set_reply_state(r["id"], "queued", last_error=str(exc))
            break  # the server is down or busy: try the rest next pass
        except mailer.PermanentError as exc:
            log.error("reply <%s> refused: %s", r["msgid"], exc)
            state.set_reply_state(r["id"], "failed", last_error=str(exc))
            continue
        crash_point("after-send")
        mailer.log_sent(cfg.sent_log, r["msgid"], rcpts)
        crash_point("after-log")
        state.set_reply_state(r["id"], "sent", sent_at=time.time(), last_error="")
        log.info("sent reply <%s> to %s", r["msgid"], ", ".join(rcpts))
        n += 1
    return n


def _json_list(text: str) -> list[str]:
    try:
        v = json.loads(text or "[]")
    except ValueError:
        return []
    return [x for x in v if isinstance(x, str)]
