"""Configuration from git config keys ``napipatch.*``, typed once at load.

git users already keep per-repository and per-user settings there (b4 does
the same with ``b4.*``). Values are read through GitPython's git command,
so git's own rules hold (``include.path``, ``includeIf``,
``GIT_CONFIG_GLOBAL``), and the layers are merged in this order, later
winning: system and global config, the current directory's repository,
then the repository of the kernel tree the command works on. Each value
is parsed into its type here, so a bad number or boolean is a one-line
error naming the key and the file it came from, not a traceback later.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import NamedTuple

import git

from napipatch.errors import NapipatchError


def _default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "napipatch"


def _key(name: str, default: object, helptext: str):
    """A Config field that is the git config key ``name``: its default (of
    the field's type) and the help ``napipatch config`` prints beside it."""
    return field(default=default, metadata={"key": name, "help": helptext})


@dataclass
class Config:
    """Every napipatch.* key declared once, as a field: its type, its
    default and its help. KEYS (below) is derived from these fields."""

    series_dir: str = _key("napipatch.series-dir", "series",
                           "where the series store lives (relative to the current directory)")
    lore_url: str = _key("napipatch.lore-url", "https://lore.kernel.org/all",
                         "public-inbox used by `series import MSGID` (b4)")
    tree: str = _key("napipatch.tree", "", "default kernel tree for --tree")
    tree_tag: str = _key("napipatch.tree-tag", "net-next",
                         "tree tag written into subjects by `series export`")
    cache_dir: str = _key("napipatch.cache-dir", str(_default_cache()),
                          "results cache, trusted script copies, build directories")
    jobs: int = _key("napipatch.jobs", os.cpu_count() or 2,
                     "checks run in parallel, and make -j of build/boot jobs (test --jobs overrides)")
    check_timeout: float = _key(
        "napipatch.check-timeout", 600.0,
        "seconds one check may run on one patch before it is reported as timed out (0: no limit)")
    get_maintainer_timeout: float = _key(
        "napipatch.get-maintainer-timeout", 300.0,
        "seconds scripts/get_maintainer.pl may run on one patch, for send and the "
        "cc-maintainers check (0: no limit)")
    checkpatch_ignore: str = _key(
        "napipatch.checkpatch-ignore",
        "COMMIT_LOG_LONG_LINE,MACRO_ARG_REUSE,ALLOC_SIZEOF_STRUCT,NO_AUTHOR_SIGN_OFF,"
        "GIT_COMMIT_ID,CAMELCASE,FILE_PATH_CHANGES,BAD_REPORTED_BY_LINK",
        "checkpatch types ignored (the netdev CI's list)")
    base_behind_warn: int = _key(
        "napipatch.base-behind-warn", 500,
        "warn when base-commit is this many commits behind the branch named by --base "
        "(the bot: its branch for the tree tag)")
    hook_strict: bool = _key(
        "napipatch.hook-strict", True,
        "a hook that could not check everything (a check crashed, timed out or could not run) "
        "blocks the send/push; false: warn, saying what was not checked, and let it go")
    job_timeout: float = _key(
        "napipatch.job-timeout", 14400.0,
        "seconds one job (the builds of every patch for a target, a boot, a build test) may "
        "run before it is stopped with what it started and its checks time out; "
        "napipatch.KIND.job-timeout for one kind of job (build, boot, warnings-w1 ...; "
        "napipatch checks doc ID names a check's); 0: no limit")
    executor: str = _key(
        "napipatch.executor", "local",
        "where build/boot jobs run: local, or celery (workers started with `napipatch worker`)")
    broker_url: str = _key("napipatch.broker-url", "redis://127.0.0.1:6379/0",
                           "Celery broker for the celery executor")
    result_backend: str = _key("napipatch.result-backend", "",
                               "Celery result backend (default: the broker)")
    broker_visibility_timeout: int = _key(
        "napipatch.broker-visibility-timeout", 3600,
        "seconds before a job taken by a worker that died is delivered again")
    job_retries: int = _key(
        "napipatch.job-retries", 3,
        "retries of a job that hit an infrastructure failure (host unreachable, disk full)")
    job_retry_delay: float = _key("napipatch.job-retry-delay", 30.0,
                                  "seconds between those retries")
    warnings_objects: int = _key(
        "napipatch.warnings-objects", 50,
        "most objects `test warnings` compiles a patch for its headers and build files, "
        "per configuration")
    signed_keyring: str = _key(
        "napipatch.signed-keyring", "patatt",
        "the keys the signed check trusts: patatt (patatt's keyrings only) or gnupg (also a "
        "read-only copy of your GnuPG public keys); gpg runs in a home of napipatch's own")
    net_next: str = _key(
        "napipatch.net-next", "",
        "open or closed, as the list's last 'net-next is OPEN/CLOSED' announcement said "
        "(the net-next-closed check; empty: not known here)")
    ai_review_command: str = _key(
        "napipatch.ai-review-command", "",
        "your AI review agent, run through the shell in a throwaway checkout of the series tip "
        "(the ai-review check; empty: not run)")
    ai_review_prompt: str = _key(
        "napipatch.ai-review-prompt", "",
        "the review prompt the agent is given (at $NAPIPATCH_AI_PROMPT), e.g. review-prompts' "
        "kernel/review-core.md")
    ai_review_timeout: float = _key(
        "napipatch.ai-review-timeout", 1800.0,
        "seconds the agent may run on a series before it is stopped with what it started "
        "(0: no limit)")
    ai_review_checkout: str = _key(
        "napipatch.ai-review-checkout", "touched",
        "what of the series tip the agent's checkout holds: touched (the directories the "
        "series touches) or full")
    ai_review_sandbox: bool = _key(
        "napipatch.ai-review-sandbox", True,
        "run the agent where your tree, the series store and the cache are read-only "
        "(unshare); false: no sandbox")
    # Every napipatch.* value as git gave it (per-target keys such as
    # napipatch.idpf.host live only here), and where each one came from.
    raw: dict = field(default_factory=dict)
    origins: dict = field(default_factory=dict)

    @property
    def cache(self) -> Path:
        # Absolute: its paths go to subprocesses that run elsewhere
        # (make -C SRC O=..., perl in a scratch directory).
        p = Path(self.cache_dir).expanduser().absolute()
        p.mkdir(parents=True, exist_ok=True)
        return p

    @property
    def store_root(self) -> Path:
        return Path(self.series_dir).expanduser()

    def get(self, key: str, default: str = "") -> str:
        return self.raw.get(key.lower(), default)

    def job_seconds(self, kind: str) -> float:
        """``napipatch.KIND.job-timeout``, else ``napipatch.job-timeout``."""
        return float(self.section(kind, {"job-timeout": float}).get("job-timeout",
                                                                    self.job_timeout))

    def section(self, name: str, types: dict[str, type]) -> dict[str, object]:
        """The ``napipatch.NAME.*`` keys that are set (a target's host, say),
        each parsed into its type from ``types`` (others stay strings); a
        bad value names the key and its file."""
        prefix = f"napipatch.{name}.".lower()
        out: dict[str, object] = {}
        for key, value in self.raw.items():
            if key.startswith(prefix) and value:
                sub = key[len(prefix):]
                out[sub] = parse_value(key, value, types.get(sub, str), self.origins.get(key, ""))
        return out


class Key(NamedTuple):
    key: str  # napipatch.jobs
    attr: str  # jobs: the Config field
    default: str  # the default as git config would spell it
    help: str


def _spelled(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return f"{value:g}" if isinstance(value, float) else str(value)


# The keys in declaration order, for `napipatch config` and the docs'
# table (tests/test_config.py checks every key is documented).
KEYS: list[Key] = [Key(f.metadata["key"], f.name, _spelled(f.default), f.metadata["help"])
                   for f in fields(Config) if "key" in f.metadata]

_TRUE = ("", "true", "yes", "on", "1")  # a key with no value is true in git
_FALSE = ("false", "no", "off", "0")


def parse_value(key: str, value: str, kind: type | str, origin: str = "") -> object:
    """``value`` as the type of its field; a bad one names the key and file."""
    kind = {"int": int, "bool": bool, "float": float, "str": str}.get(kind, kind)
    where = f"{key} ({origin})" if origin else key
    v = value.strip()
    if kind is bool:
        if v.lower() in _TRUE:
            return True
        if v.lower() in _FALSE:
            return False
        raise NapipatchError(where, f"{value!r} is not a boolean (true or false)")
    if kind is int:
        try:
            n = int(v, 0)
        except ValueError:
            raise NapipatchError(where, f"{value!r} is not a whole number") from None
        if n < 0:
            raise NapipatchError(where, f"{value!r} must not be negative")
        return n
    if kind is float:
        try:
            x = float(v)
        except ValueError:
            raise NapipatchError(where, f"{value!r} is not a number") from None
        if not x >= 0 or x == float("inf"):
            raise NapipatchError(where, f"{value!r} must be a number of seconds >= 0")
        return x
    return value


def find_repo(path: Path | str | None = None) -> Path | None:
    """The top of the git repository holding ``path`` (default: the current
    directory), or None outside any repository."""
    try:
        repo = git.Repo(path or Path.cwd(), search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    return Path(repo.working_tree_dir) if repo.working_tree_dir else None


def _entries(repo: Path | None) -> list[tuple[str, str, str, str]]:
    """(scope, origin, key, value) of every napipatch.* entry git sees from
    ``repo`` (or from no repository at all)."""
    cmd = git.Git(str(repo) if repo else os.path.expanduser("~"))
    env = {} if repo else {"GIT_DIR": os.devnull}  # only system and global
    try:
        # with_exceptions=False: git's own stderr, not GitPython's wrapper of it.
        status, out, err = cmd.config(
            "--show-scope", "--show-origin", "-z", "--get-regexp", r"^napipatch\.", env=env,
            with_extended_output=True, with_exceptions=False, strip_newline_in_stdout=False)
    except git.GitCommandNotFound:
        return []
    if status == 1:  # no such key: not an error
        return []
    if status != 0:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        raise NapipatchError("git config", lines[-1].removeprefix("fatal: ") if lines
                             else f"exit status {status}")
    fields_ = out.split("\0")
    entries = []
    for i in range(0, len(fields_) - 2, 3):
        scope, origin, kv = fields_[i:i + 3]
        key, _, value = kv.partition("\n")
        entries.append((scope, _absolute(origin, repo), key.lower(), value))
    return entries


def _absolute(origin: str, repo: Path | None) -> str:
    """git's origin with the file made absolute: git prints a repository's
    own config as ``file:.git/config``, which cannot tell the current
    directory's repository from the tree's."""
    kind, _, path = origin.partition(":")
    if kind != "file" or not path or repo is None or Path(path).is_absolute():
        return origin
    return f"file:{(repo / path).absolute()}"


def layers(tree: Path | None = None) -> list[tuple[str, str, str, str]]:
    """napipatch.* entries in the order they apply: system and global, the
    current directory's repository, then the tree's repository."""
    here = find_repo()
    there = find_repo(tree) if tree is not None and Path(tree).is_dir() else None
    out = [e for e in _entries(None)]
    seen: set[Path] = set()
    for repo in (here, there):
        if repo is None or repo.resolve() in seen:
            continue
        seen.add(repo.resolve())
        out += [e for e in _entries(repo) if e[0] in ("local", "worktree", "command")]
    return out


def load(repo: Path | None = None) -> Config:
    """The typed configuration for a command working on the tree ``repo``."""
    cfg = Config()
    raw: dict[str, str] = {}
    origins: dict[str, str] = {}
    for _scope, origin, key, value in layers(repo):
        raw[key], origins[key] = value, origin
    cfg.raw, cfg.origins = raw, origins
    env_store = os.environ.get("NAPIPATCH_SERIES_DIR")
    if env_store:
        raw["napipatch.series-dir"], origins["napipatch.series-dir"] = env_store, \
            "env:NAPIPATCH_SERIES_DIR"
    kinds = {f.name: f.type for f in fields(Config)}
    for k in KEYS:
        if k.key in raw:
            setattr(cfg, k.attr, parse_value(k.key, raw[k.key], kinds[k.attr], origins[k.key]))
    return cfg
