"""The bot's TOML configuration file, read into one typed object.

The file is read by ``tomlconf`` against SCHEMA below: unknown sections or
keys are refused (a typo must not silently turn a setting off), and every
error is one line naming the file and the key.
"""

from __future__ import annotations

import datetime
import email.utils
from dataclasses import dataclass, field
from pathlib import Path

from napipatch import tomlconf
from napipatch.bot.memory import KnownFailure
from napipatch.engine.registry import discover
from napipatch.jobs import targets as targetdata
from napipatch.jobs.kinds import kind

POLICIES = ("problems", "always")


@dataclass
class Inbox:
    name: str
    url: str   # http(s) URL of a public-inbox (…/LIST), or
    path: str  # a local v2 inbox directory (holding git/N.git)
    address: str  # the list's address, Cc'd on replies with reply.cc_list
    start: str  # first pass: "now" skips the archive's history, "beginning" reads it

    @property
    def source(self) -> str:
        return self.url or self.path


@dataclass
class BotConfig:
    """The file's settings; their defaults are in SCHEMA, with their types."""

    file: Path
    state_dir: Path
    inboxes: list[Inbox]
    interval: float
    incomplete_after: float
    jobs: bool
    targets: list[str]  # empty: every target
    warnings: list[str]  # `test warnings` checks and kunit, run with jobs (build-w1, sparse, ...)
    ai_review: str  # "count": the reply counts the AI's comments; "reply": it quotes them
    tree_path: Path | None
    branches: dict[str, str]
    remote: str
    policy: str
    reply_from: str
    reply_to: list[str]
    reply_cc: list[str]
    reply_cc_list: bool  # Cc the list's address too
    dry_run_dir: Path | None
    rate_per_hour: int
    smtp_host: str
    smtp_port: int
    smtp_starttls: bool
    smtp_user: str
    smtp_password: str
    smtp_timeout: float
    only: list[str] | None
    skip: list[str] | None
    url: str = ""  # where `bot serve` is reached: the reply links to the series' page
    flaky_window: int = 10  # runs of other series the memory looks back (bot.memory)
    known_failures: list[KnownFailure] = field(default_factory=list)

    @property
    def db_path(self) -> Path:
        return self.state_dir / "bot.sqlite3"

    @property
    def mirror_dir(self) -> Path:
        return self.state_dir / "mirrors"

    @property
    def sent_log(self) -> Path:
        return self.state_dir / "sent.log"


# A list of strings may also be written as one comma-separated string.
_LIST = {"type": ["array", "string"], "items": {"type": "string"}}
_SECONDS = {"type": "number", "minimum": 0}


def _table(properties: dict, **more) -> dict:
    return {"type": "object", "additionalProperties": False, "default": {},
            "properties": properties, **more}


# The bot's TOML file: every key, its type and its default (tomlconf reads it).
SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["state", "inbox"],
    "properties": {
        "state": _table({"dir": {"type": "string"}}, required=["dir"]),
        "inbox": {
            "type": "array", "minItems": 1,
            "x-error": "at least one [[inbox]] (name and url or path) is required",
            "items": {
                "type": "object", "additionalProperties": False,
                "properties": {
                    "name": {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
                             "x-error": "letters, digits, '.', '_', '-' (it names files)"},
                    "url": {"type": "string", "default": ""},   # http(s) URL of a public-inbox
                    "path": {"type": "string", "default": ""},  # or a local v2 inbox directory
                    "address": {"type": "string", "default": ""},
                    "start": {"enum": ["now", "beginning"], "default": "now"},
                },
            },
        },
        "bot": _table({"interval": {**_SECONDS, "default": 60},
                       "incomplete_after": {**_SECONDS, "default": 900},
                       "jobs": {"type": "boolean", "default": False},
                       "targets": {**_LIST, "default": []},  # empty: every target
                       "warnings": {**_LIST, "default": []},  # none by default
                       # netdev keeps AI text for a human to confirm: by default a
                       # reply counts the ai-review comments and quotes none.
                       "ai_review": {"enum": ["count", "reply"], "default": "count"},
                       "url": {"type": "string", "pattern": r"^(https?://\S+)?$", "default": "",
                               "x-error": "an http(s) URL (where `bot serve` is reached)"},
                       "flaky_window": {"type": "integer", "minimum": 1, "default": 10}}),
        # Tests that fail for a known reason, not the series': an info until the date.
        "known_failure": {"type": "array", "default": [], "items": {
            "type": "object", "additionalProperties": False,
            "required": ["test", "reason", "until"],
            "properties": {
                "test": {"type": "string", "minLength": 1},
                "reason": {"type": "string", "pattern": r"\S",
                           "x-error": "the reason the test fails (shown in the report)"},
                "until": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$",
                          "x-error": "a date, \"YYYY-MM-DD\" (quoted): the last day it holds"}}}},
        "tree": _table({"path": {"type": "string"},
                        "branches": {"type": "object", "default": {},
                                     "additionalProperties": {"type": "string"}},
                        "remote": {"type": "string", "default": ""}}),
        "reply": _table({"policy": {"enum": list(POLICIES), "default": "problems"},
                         "from": {"type": "string",
                                  "default": "napipatch-bot <napipatch-bot@localhost>"},
                         "to": {**_LIST, "default": []},
                         "cc": {**_LIST, "default": []},
                         # Cc the list itself? NIPA mails no one and the kernel test robot
                         # Cc's the list only on build failures: by default only the author.
                         "cc_list": {"type": "boolean", "default": False},
                         "dry_run_dir": {"type": "string"},
                         "rate_per_hour": {"type": "integer", "minimum": 0, "default": 10}}),
        "smtp": _table({"host": {"type": "string", "default": "localhost"},
                        "port": {"type": "integer", "minimum": 0, "maximum": 65535,
                                 "default": 25},
                        "starttls": {"type": "boolean", "default": False},
                        "user": {"type": "string", "default": ""},
                        "password": {"type": "string", "default": ""},
                        "timeout": {**_SECONDS, "default": 30}}),
        "checks": _table({"only": {**_LIST, "default": []}, "skip": {**_LIST, "default": []}}),
    },
}


def _strings(value: list[str] | str) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return list(value)


def load(path: Path) -> BotConfig:
    """Read the bot's config file; any problem raises NapipatchError naming the file and key."""
    path = Path(path)
    data = tomlconf.read(path, SCHEMA)
    base = path.resolve().parent
    inboxes = [_inbox(path, base, i, ib) for i, ib in enumerate(data["inbox"])]
    _check_settings(path, data)
    return _build(path, base, data, inboxes)


def _under(base: Path, value: str) -> Path:
    """A path from the file: ~ expanded, relative to the config file's directory."""
    q = Path(value).expanduser()
    return q if q.is_absolute() else base / q


def _inbox(path: Path, base: Path, i: int, ib: dict) -> Inbox:
    """One [[inbox]], read from exactly one of a URL or a local path."""
    name = ib.get("name") or f"inbox{i}"
    if bool(ib["url"]) == bool(ib["path"]):
        raise tomlconf.error(path, ("inbox", i), f"{name}: give exactly one of url or path")
    if ib["address"]:
        _check_address(path, ("inbox", i, "address"), ib["address"])
    return Inbox(name=name, url=ib["url"].rstrip("/"),
                 path=str(_under(base, ib["path"])) if ib["path"] else "",
                 address=ib["address"], start=ib["start"])


def _check_address(path: Path, key: tuple, value: str) -> None:
    name, addr = email.utils.parseaddr(value)
    if (any(ord(c) < 32 or ord(c) == 127 for c in value) or not addr or "@" not in addr
            or (addr != value.strip() and f"<{addr}>" not in value)):
        raise tomlconf.error(path, key, f"{value!r} is not an address ('Name <user@host>')")


def _check_settings(path: Path, data: dict) -> None:
    """Rules the schema cannot express: keys that need others, known
    targets and well-formed addresses."""
    bot, tree, reply = data["bot"], data["tree"], data["reply"]
    if bot["jobs"] and not tree.get("path"):
        raise tomlconf.error(path, ("bot", "jobs"), "true needs tree.path (jobs build in a tree)")
    if tree.get("path") and tree["remote"] and not tree["branches"]:
        raise tomlconf.error(path, ("tree", "remote"),
                             "needs tree.branches (which branches to fetch)")
    for i, t in enumerate(_strings(bot["targets"])):
        if t not in targetdata.names():
            raise tomlconf.error(path, ("bot", "targets", i), f"no such target {t!r} "
                                 f"(known: {', '.join(targetdata.names())})")
        targetdata.load(t)  # a broken target stops the bot now, not at its first job
    known = warning_checks()
    for i, w in enumerate(_strings(bot["warnings"])):
        if w not in known:
            raise tomlconf.error(path, ("bot", "warnings", i), f"no such check {w!r} "
                                 f"(known: {', '.join(known)})")
    ids = list(discover())
    for key in ("only", "skip"):
        for i, c in enumerate(_strings(data["checks"][key])):
            if c not in ids:
                raise tomlconf.error(path, ("checks", key, i), f"no such check {c!r} "
                                     f"(known: {', '.join(ids)})")
    _check_address(path, ("reply", "from"), reply["from"])
    for key in ("to", "cc"):
        for i, v in enumerate(_strings(reply[key])):
            _check_address(path, ("reply", key, i), v)


def _build(path: Path, base: Path, data: dict, inboxes: list[Inbox]) -> BotConfig:
    """The checked data as a BotConfig, paths resolved."""
    tree, reply, smtp, checks = data["tree"], data["reply"], data["smtp"], data["checks"]
    return BotConfig(
        file=path,
        state_dir=_under(base, data["state"]["dir"]),
        inboxes=inboxes,
        interval=float(data["bot"]["interval"]),
        incomplete_after=float(data["bot"]["incomplete_after"]),
        jobs=data["bot"]["jobs"],
        targets=_strings(data["bot"]["targets"]),
        warnings=_strings(data["bot"]["warnings"]),
        ai_review=data["bot"]["ai_review"],
        tree_path=_under(base, tree["path"]) if tree.get("path") else None,
        branches=tree["branches"],
        remote=tree["remote"],
        policy=reply["policy"],
        reply_from=reply["from"],
        reply_to=_strings(reply["to"]),
        reply_cc=_strings(reply["cc"]),
        reply_cc_list=reply["cc_list"],
        dry_run_dir=_under(base, reply["dry_run_dir"]) if reply.get("dry_run_dir") else None,
        rate_per_hour=reply["rate_per_hour"],
        smtp_host=smtp["host"],
        smtp_port=smtp["port"],
        smtp_starttls=smtp["starttls"],
        smtp_user=smtp["user"],
        smtp_password=smtp["password"],
        smtp_timeout=float(smtp["timeout"]),
        only=_strings(checks["only"]) or None,
        skip=_strings(checks["skip"]) or None,
        url=data["bot"]["url"].rstrip("/"),
        flaky_window=data["bot"]["flaky_window"],
        known_failures=[_known(path, i, k) for i, k in enumerate(data["known_failure"])],
    )


def _known(path: Path, i: int, k: dict) -> KnownFailure:
    try:
        until = datetime.date.fromisoformat(k["until"])
    except ValueError:
        raise tomlconf.error(path, ("known_failure", i, "until"),
                             f"{k['until']!r} is no date") from None
    return KnownFailure(k["test"], k["reason"].strip(), until)


def warning_checks() -> list[str]:
    """The ids ``bot.warnings`` takes: the checks of `napipatch test warnings`, and kunit."""
    return [c.id for c in discover().values() if c.job and kind(c.job).opt_in]
