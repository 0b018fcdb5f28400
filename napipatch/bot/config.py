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
from napipatch.jobs import targets as targetdata
from napipatch.jobs.warnconfigs import WARNING_JOBS

POLICIES = ("problems", "always")


@dataclass
class Inbox:
    name: str
    url: str = ""   # http(s) URL of a public-inbox (…/LIST), or
    path: str = ""  # a local v2 inbox directory (holding git/N.git)
    address: str = ""  # the list's address, Cc'd on replies with reply.cc_list
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
    # build-warning jobs run with bot.jobs (w1, 32bit, clang, cocci, htmldocs); none by default
    warnings: list[str] = field(default_factory=list)
    tree_path: Path | None = None
    branches: dict[str, str] = field(default_factory=dict)
    remote: str = ""
    policy: str = "problems"
    reply_from: str = "napipatch-bot <napipatch-bot@localhost>"
    reply_to: list[str] = field(default_factory=list)
    reply_cc: list[str] = field(default_factory=list)
    # Cc the list itself? NIPA mails no one and the kernel test robot Cc's
    # the list only on build failures: by default only the author hears.
    reply_cc_list: bool = False
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
            "targets": "list", "warnings": "list"},
    "tree": {"path": str, "branches": dict, "remote": str},
    "reply": {"policy": str, "from": str, "to": "list", "cc": "list", "cc_list": bool,
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
    """Read the bot's config file; any problem raises NapipatchError naming the file."""
    path = Path(path)
    data = _read_toml(path)
    base = path.resolve().parent
    sec = _sections(path, data)
    if "dir" not in sec.get("state", {}):
        raise NapipatchError(path, "[state] dir is required")
    inboxes = _inboxes(path, base, data.get("inbox", []))
    _check_settings(path, sec)
    cfg = _build(path, base, sec, inboxes)
    tree = sec.get("tree", {})
    if cfg.tree_path is not None and tree.get("remote") and not tree.get("branches", {}):
        raise NapipatchError(path, "tree.remote needs tree.branches (which branches to fetch)")
    return cfg


def _read_toml(path: Path) -> dict:
    """The file's TOML; an unreadable or malformed file is a config error, not a traceback."""
    try:
        return tomllib.loads(path.read_text())
    except OSError as exc:
        raise NapipatchError(path, exc.strerror or str(exc)) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise NapipatchError(path, f"not valid TOML ({exc})") from None


def _sections(path: Path, data: dict) -> dict[str, dict]:
    """The [section] tables, every key known and typed (a typo must not silently
    turn a setting off); [[inbox]] is read by _inboxes."""
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
    return sec


def _under(base: Path, value: str) -> Path:
    """A path from the file: ~ expanded, relative to the config file's directory."""
    q = Path(value).expanduser()
    return q if q.is_absolute() else base / q


def _inboxes(path: Path, base: Path, raw_inboxes) -> list[Inbox]:
    """The [[inbox]] entries: at least one, since the bot has nothing to read otherwise."""
    if not isinstance(raw_inboxes, list) or not raw_inboxes:
        raise NapipatchError(path, "at least one [[inbox]] (name and url or path) is required")
    return [_inbox(path, base, i, ib) for i, ib in enumerate(raw_inboxes)]


def _inbox(path: Path, base: Path, i: int, ib: dict) -> Inbox:
    """One [[inbox]]: its name is used in file names, so it is kept to a safe alphabet."""
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
    return Inbox(name=name, url=ib.get("url", "").rstrip("/"),
                 path=str(_under(base, ib["path"])) if ib.get("path") else "",
                 address=ib.get("address", ""), start=start)


def _check_settings(path: Path, sec: dict[str, dict]) -> None:
    """Rules the per-key types cannot express: allowed values, keys that need
    others, known targets and well-formed addresses."""
    bot, tree, reply = sec.get("bot", {}), sec.get("tree", {}), sec.get("reply", {})
    policy = reply.get("policy", "problems")
    if policy not in POLICIES:
        raise NapipatchError(path, f"reply.policy: {policy!r} is not one of {', '.join(POLICIES)}")
    branches = tree.get("branches", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in branches.items()):
        raise NapipatchError(path, "tree.branches: expected {tag = \"branch\"} strings")
    if bot.get("jobs") and not tree.get("path"):
        raise NapipatchError(path, "bot.jobs = true needs tree.path (jobs build in a tree)")
    _check_targets(path, bot.get("targets", []))
    for w in bot.get("warnings", []):
        if w not in WARNING_JOBS:
            raise NapipatchError(path, f"bot.warnings: no such job {w!r} "
                                       f"(known: {', '.join(WARNING_JOBS)})")
    _check_addresses(path, reply)


def _check_targets(path: Path, targets: list[str]) -> None:
    """Every bot.targets entry names a target the project ships."""
    for t in targets:
        if t not in targetdata.names():
            raise NapipatchError(path, f"bot.targets: no such target {t!r} "
                                       f"(known: {', '.join(targetdata.names())})")


def _check_addresses(path: Path, reply: dict) -> None:
    """The reply addresses go into mail headers: each must be one clean address."""
    for key, values in (("reply.from", [reply.get("from", BotConfig.reply_from)]),
                        ("reply.to", reply.get("to", [])), ("reply.cc", reply.get("cc", []))):
        for v in values:
            _check_address(path, key, v)


def _build(path: Path, base: Path, sec: dict[str, dict], inboxes: list[Inbox]) -> BotConfig:
    """The checked sections as a BotConfig, defaults filled in and paths resolved."""
    state, bot, tree = sec["state"], sec.get("bot", {}), sec.get("tree", {})
    reply, smtp, checks = sec.get("reply", {}), sec.get("smtp", {}), sec.get("checks", {})
    return BotConfig(
        file=path,
        state_dir=_under(base, state["dir"]),
        inboxes=inboxes,
        interval=float(bot.get("interval", 60)),
        incomplete_after=float(bot.get("incomplete_after", 900)),
        jobs=bool(bot.get("jobs", False)),
        targets=list(bot.get("targets", [])),
        warnings=list(bot.get("warnings", [])),
        tree_path=_under(base, tree["path"]) if tree.get("path") else None,
        branches=dict(tree.get("branches", {})),
        remote=tree.get("remote", ""),
        policy=reply.get("policy", "problems"),
        reply_from=reply.get("from", BotConfig.reply_from),
        reply_to=reply.get("to", []),
        reply_cc=reply.get("cc", []),
        reply_cc_list=reply.get("cc_list", False),
        dry_run_dir=_under(base, reply["dry_run_dir"]) if reply.get("dry_run_dir") else None,
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
