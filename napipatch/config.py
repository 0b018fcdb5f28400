"""Configuration from git config keys ``napipatch.*``.

git users already keep per-repository and per-user settings there (b4 does
the same with ``b4.*``). One typed object is built at the entry point and
passed down; nothing reads git config behind the caller's back.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field, fields
from pathlib import Path


def _default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "napipatch"


# key -> (attribute, default, help). The README's table is generated from
# this list by tests/test_config.py, so the docs cannot drift from the code.
KEYS: list[tuple[str, str, str, str]] = [
    ("napipatch.series-dir", "series_dir", "series",
     "where the series store lives (relative to the current directory)"),
    ("napipatch.lore-url", "lore_url", "https://lore.kernel.org/all",
     "public-inbox used by `series import MSGID` (b4)"),
    ("napipatch.tree", "tree", "",
     "default kernel tree for --tree/--repo"),
    ("napipatch.tree-tag", "tree_tag", "net-next",
     "tree tag written into subjects by `series export`"),
    ("napipatch.cache-dir", "cache_dir", str(_default_cache()),
     "results cache, trusted script copies, build directories"),
    ("napipatch.jobs", "jobs", str(os.cpu_count() or 2),
     "checks run in parallel"),
    ("napipatch.checkpatch-ignore", "checkpatch_ignore",
     "COMMIT_LOG_LONG_LINE,MACRO_ARG_REUSE,ALLOC_SIZEOF_STRUCT,NO_AUTHOR_SIGN_OFF,"
     "GIT_COMMIT_ID,CAMELCASE,FILE_PATH_CHANGES,BAD_REPORTED_BY_LINK",
     "checkpatch types ignored (the netdev CI's list)"),
    ("napipatch.base-behind-warn", "base_behind_warn", "500",
     "warn when base-commit is this many commits behind the branch head"),
    ("napipatch.hook-strict", "hook_strict", "false",
     "a hook whose napipatch run fails blocks the send/push (default: warn and let it go)"),
    ("napipatch.executor", "executor", "local",
     "where build/boot jobs run: local, or celery (workers started with `napipatch worker`)"),
    ("napipatch.broker-url", "broker_url", "redis://127.0.0.1:6379/0",
     "Celery broker for the celery executor"),
    ("napipatch.result-backend", "result_backend", "",
     "Celery result backend (default: the broker)"),
    ("napipatch.broker-visibility-timeout", "broker_visibility_timeout", "3600",
     "seconds before a job taken by a worker that died is delivered again"),
    ("napipatch.job-retries", "job_retries", "3",
     "retries of a job that hit an infrastructure failure (host unreachable, disk full)"),
    ("napipatch.job-retry-delay", "job_retry_delay", "30",
     "seconds between those retries"),
]


@dataclass
class Config:
    series_dir: str = "series"
    lore_url: str = "https://lore.kernel.org/all"
    tree: str = ""
    tree_tag: str = "net-next"
    cache_dir: str = str(_default_cache())
    jobs: str = "2"
    checkpatch_ignore: str = ""
    base_behind_warn: str = "500"
    hook_strict: str = "false"
    executor: str = "local"
    broker_url: str = "redis://127.0.0.1:6379/0"
    result_backend: str = ""
    broker_visibility_timeout: str = "3600"
    job_retries: str = "3"
    job_retry_delay: str = "30"
    raw: dict = field(default_factory=dict)

    @property
    def cache(self) -> Path:
        p = Path(self.cache_dir).expanduser()
        p.mkdir(parents=True, exist_ok=True)
        return p

    @property
    def store_root(self) -> Path:
        return Path(self.series_dir).expanduser()

    @property
    def strict_hooks(self) -> bool:
        # A key written without a value ("[napipatch] hook-strict") is true in git.
        return self.hook_strict.strip().lower() in ("", "true", "yes", "on", "1")

    def get(self, key: str, default: str = "") -> str:
        return self.raw.get(key.lower(), default)


def load(repo: Path | None = None) -> Config:
    """Read ``napipatch.*`` from git config (global, then the repo's)."""
    cfg = Config(**{attr: default for _k, attr, default, _h in KEYS})
    cmd = ["git"] + (["-C", str(repo)] if repo else []) + [
        "config", "--get-regexp", r"^napipatch\."]
    try:
        cp = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        return cfg
    raw = {}
    for line in cp.stdout.splitlines():
        key, _, value = line.partition(" ")
        raw[key.lower()] = value
    cfg.raw = raw
    names = {f.name for f in fields(Config)}
    for key, attr, _default, _help in KEYS:
        if key in raw and attr in names:
            setattr(cfg, attr, raw[key])
    env_store = os.environ.get("NAPIPATCH_SERIES_DIR")
    if env_store:
        cfg.series_dir = env_store
    return cfg
