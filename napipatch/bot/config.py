"""The bot's TOML configuration file, read into one typed object.

Unknown sections or keys are refused (a typo must not silently turn a
setting off), and every error names the file and the key.
"""

from __future__ import annotations

import email.utils
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from napipatch.errors import NapipatchError

POLICIES = ("problems", "always")


@dataclass
class Inbox:
    name: str
    url: str = ""   # http(s) URL of a public-inbox (…/LIST), or
    path: str = ""  # a local v2 inbox directory (holding git/N.git)
    address: str = ""  # the list's address, Cc'd on replies when set
    start: str = "now"  # first pass: "now" skips the archive's history, "beginning" reads it

    @property
    def source(self) -> str:
        return self.url or self.path


@dataclass
class BotConfig:
    file: Path
    state_dir: Path
    inboxes: list[Inbox]
    interval: float = 60.0
    incomplete_after: float = 900.0
    jobs: bool = False
    targets: list[str] = field(default_factory=list)  # empty: every target
    tree_path: Path | None = None
    branches: dict[str, str] = field(default_factory=dict)
    remote: str = ""
    policy: str = "problems"
    reply_from: str = "napipatch-bot <napipatch-bot@localhost>"
    reply_to: list[str] = field(default_factory=list)
    reply_cc: list[str] = field(default_factory=list)
    dry_run_dir: Path | None = None
    rate_per_hour: int = 10
    smtp_host: str = "localhost"
    smtp_port: int = 25
    smtp_starttls: bool = False
    smtp_user: str = ""
    smtp_password: str = ""
    smtp_timeout: float = 30.0
    only: list[str] | None = None
    skip: list[str] | None = None

    @property
    def db_path(self) -> Path:
        return self.state_dir / "bot.sqlite3"

    @property
    def mirror_dir(self) -> Path:
        return self.state_dir / "mirrors"

    @property
    def sent_log(self) -> Path:
        return self.state_dir / "sent.log"


# section -> {key: type}; "list" means a list of strings.
_SCHEMA: dict[str, dict[str, object]] = {
    "state": {"dir": str},
    "bot": {"interval": (int, float), "incomplete_after": (int, float), "jobs": bool,
            "targets": "list"},
    "tree": {"path": str, "branches": dict, "remote": str},
    "reply": {"policy": str, "from": str, "to": "list", "cc": "list",
              "dry_run_dir": str, "rate_per_hour": int},
    "smtp": {"host": str, "port": int, "starttls": bool, "user": str, "password": str,
             "timeout": (int, float)},
    "checks": {"only": "list", "skip": "list"},
}
_INBOX_KEYS = {"name": str, "url": str, "path": str, "address": str, "start": str}


def _typed(where: str, key: str, value, want):
    if want == "list":
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise NapipatchError(where, f"{key}: expected a list of strings")
        return value
    if want is bool and not isinstance(value, bool):
        raise NapipatchError(where, f"{key}: expected true or false")
    if not isinstance(value, want) or (want is int and isinstance(value, bool)):
        raise NapipatchError(where, f"{key}: expected {getattr(want, '__name__', 'a number')}")
    return value


def _check_address(path: Path, key: str, value: str) -> None:
    name, addr = email.utils.parseaddr(value)
    if (any(ord(c) < 32 or ord(c) == 127 for c in value) or not addr or "@" not in addr
            or (addr != value.strip() and f"<{addr}>" not in value)):
        raise NapipatchError(path, f"{key}: {value!r} is not an address ('Name <user@host>')")


def load(path: Path) -> BotConfig:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise NapipatchError(path, exc.strerror or str(exc)) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise NapipatchError(path, f"not valid TOML ({exc})") from None
    base = path.resolve().parent
    sec: dict[str, dict] = {}
    for name, value in data.items():
        if name == "inbox":
            continue
        if name not in _SCHEMA:
            raise NapipatchError(path, f"unknown section [{name}]")
        if not isinstance(value, dict):
            raise NapipatchError(path, f"{name}: expected a [{name}] table")
        for key, v in value.items():
            if key not in _SCHEMA[name]:
                raise NapipatchError(path, f"unknown key {name}.{key}")
            value[key] = _typed(str(path), f"{name}.{key}", v, _SCHEMA[name][key])
        sec[name] = value

    def p(value: str) -> Path:
        q = Path(value).expanduser()
        return q if q.is_absolute() else base / q

    state = sec.get("state", {})
    if "dir" not in state:
        raise NapipatchError(path, "[state] dir is required")
    inboxes = []
    raw_inboxes = data.get("inbox", [])
    if not isinstance(raw_inboxes, list) or not raw_inboxes:
        raise NapipatchError(path, "at least one [[inbox]] (name and url or path) is required")
    for i, ib in enumerate(raw_inboxes):
        for key, v in ib.items():
            if key not in _INBOX_KEYS:
                raise NapipatchError(path, f"unknown key inbox.{key}")
            _typed(str(path), f"inbox.{key}", v, _INBOX_KEYS[key])
        name = ib.get("name") or f"inbox{i}"
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", name):
            raise NapipatchError(path, f"inbox name {name!r}: letters, digits, '.', '_', '-'")
        if bool(ib.get("url")) == bool(ib.get("path")):
            raise NapipatchError(path, f"inbox {name}: give exactly one of url or path")
        start = ib.get("start", "now")
        if start not in ("now", "beginning"):
            raise NapipatchError(path, f"inbox {name}: start = {start!r} is not one of now, beginning")
        inboxes.append(Inbox(name=name, url=ib.get("url", "").rstrip("/"),
                             path=str(p(ib["path"])) if ib.get("path") else "",
                             address=ib.get("address", ""), start=start))
    bot, tree, reply = sec.get("bot", {}), sec.get("tree", {}), sec.get("reply", {})
    smtp, checks = sec.get("smtp", {}), sec.get("checks", {})
    policy = reply.get("policy", "problems")
    if policy not in POLICIES:
        raise NapipatchError(path, f"reply.policy: {policy!r} is not one of {', '.join(POLICIES)}")
    branches = tree.get("branches", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in branches.items()):
        raise NapipatchError(path, "tree.branches: expected {tag = \"branch\"} strings")
    if bot.get("jobs") and not tree.get("path"):
        raise NapipatchError(path, "bot.jobs = true needs tree.path (jobs build in a tree)")
    from napipatch.jobs import targets as targetdata
    for t in bot.get("targets", []):
        if t not in targetdata.names():
            raise NapipatchError(path, f"bot.targets: no such target {t!r} "
                                       f"(known: {', '.join(targetdata.names())})")
    for key, values in (("reply.from", [reply.get("from", BotConfig.reply_from)]),
                        ("reply.to", reply.get("to", [])), ("reply.cc", reply.get("cc", []))):
        for v in values:
            _check_address(path, key, v)
    cfg = BotConfig(
        file=path,
        state_dir=p(state["dir"]),
        inboxes=inboxes,
        interval=float(bot.get("interval", 60)),
        incomplete_after=float(bot.get("incomplete_after", 900)),
        jobs=bool(bot.get("jobs", False)),
        targets=list(bot.get("targets", [])),
        tree_path=p(tree["path"]) if tree.get("path") else None,
        branches=dict(branches),
        remote=tree.get("remote", ""),
        policy=policy,
        reply_from=reply.get("from", BotConfig.reply_from),
        reply_to=reply.get("to", []),
        reply_cc=reply.get("cc", []),
        dry_run_dir=p(reply["dry_run_dir"]) if reply.get("dry_run_dir") else None,
        rate_per_hour=reply.get("rate_per_hour", 10),
        smtp_host=smtp.get("host", "localhost"),
        smtp_port=smtp.get("port", 25),
        smtp_starttls=smtp.get("starttls", False),
        smtp_user=smtp.get("user", ""),
        smtp_password=smtp.get("password", ""),
        smtp_timeout=float(smtp.get("timeout", 30)),
        only=checks.get("only") or None,
        skip=checks.get("skip") or None,
    )
    if cfg.tree_path is not None and tree.get("remote") and not branches:
        raise NapipatchError(path, "tree.remote needs tree.branches (which branches to fetch)")
    return cfg
