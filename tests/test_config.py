"""napipatch.* keys: documented in docs/configuration.md and honoured from git config."""

from conftest import LORE, ROOT, format_patch, git, small_repo

from dataclasses import fields

from napipatch.config import KEYS, Config, parse_value


def test_every_key_is_documented():
    doc = (ROOT / "docs" / "configuration.md").read_text()
    for key, _attr, _default, _help in KEYS:
        assert f"| `{key}` |" in doc, key


def test_defaults_are_declared_once(tmp_path, monkeypatch):
    """What `load` gives with no git config, what Config() gives, and the
    default KEYS (napipatch config, the docs) spell are the same values."""
    from napipatch.config import load

    gc = tmp_path / "gitconfig"
    gc.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gc))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("NAPIPATCH_SERIES_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    loaded, plain = load(), Config()
    kinds = {f.name: f.type for f in fields(Config)}
    assert len(KEYS) == len(kinds) - 2  # every field but raw and origins is a key
    for key, attr, default, _help in KEYS:
        assert getattr(loaded, attr) == getattr(plain, attr) == \
            parse_value(key, default, kinds[attr]), key
        assert key not in loaded.origins
    assert "GIT_COMMIT_ID" in plain.checkpatch_ignore.split(",")


def test_series_dir_from_git_config(cli, tmp_path):
    gc = tmp_path / "gitconfig"
    store = tmp_path / "elsewhere"
    gc.write_text(f"[napipatch]\n\tseries-dir = {store}\n")
    env = {"GIT_CONFIG_GLOBAL": str(gc), "NAPIPATCH_SERIES_DIR": ""}
    cli("series", "import", LORE / "threaded-busy-poll-v4.mbox", "--name", "tbp", env=env, check=0)
    assert (store / "tbp" / "v4" / "0000-cover-letter.patch").is_file()
    out = cli("config", env=env, check=0).stdout
    assert f"napipatch.series-dir         = {store}" in out


def test_values_are_typed_when_loaded(tmp_path, monkeypatch):
    from napipatch.config import load

    gc = tmp_path / "gitconfig"
    gc.write_text("[napipatch]\n\tjobs = 3\n\thook-strict\n\tjob-retry-delay = 2.5\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gc))
    monkeypatch.chdir(tmp_path)
    cfg = load()
    assert (cfg.jobs, cfg.hook_strict, cfg.job_retry_delay) == (3, True, 2.5)
    assert cfg.origins["napipatch.jobs"] == f"file:{gc}"


def test_a_bad_value_is_one_line_naming_the_key(cli, tmp_path):
    gc = tmp_path / "gitconfig"
    for line, why in (("jobs = many", "'many' is not a whole number"),
                      ("hook-strict = maybe", "'maybe' is not a boolean"),
                      ("job-retry-delay = -1", "must be a number of seconds")):
        gc.write_text(f"[napipatch]\n\t{line}\n")
        for args in (["config"], ["check", LORE / "threaded-busy-poll-v4.mbox"]):
            cp = cli(*args, env={"GIT_CONFIG_GLOBAL": str(gc)})
            assert cp.returncode == 2, (args, cp.stderr)
            key = "napipatch." + line.split(" =")[0]
            assert cp.stderr.startswith(f"napipatch: error: {key} (file:{gc}): "), cp.stderr
            assert why in cp.stderr and cp.stderr.count("\n") == 1 and "Traceback" not in cp.stderr


def test_a_config_file_git_cannot_read_is_gits_own_line(cli, tmp_path):
    """git's words, not GitPython's wrapper of them ("stderr: '...'")."""
    repo = small_repo(tmp_path / "repo")
    cfg = repo / ".git" / "config"
    bad = len(cfg.read_text().splitlines()) + 1
    cfg.write_text(cfg.read_text() + "[napipatch\n\tjobs = 3\n")
    cli.cwd = repo
    cp = cli("config")
    assert (cp.returncode, cp.stderr) == (
        2, f"napipatch: error: git config: bad config line {bad} in file .git/config\n")


# ------------------------------------------------ which repository's config
def _layers(cli, tmp_path):
    """The project directory (cli.cwd) and a tree, each a repository with
    its own napipatch.executor; git's global and system config left out.
    Returns (env, tree, series directory made from the tree's last commit)."""
    gc = tmp_path / "gitconfig"
    gc.write_text("")
    env = {"GIT_CONFIG_GLOBAL": str(gc), "GIT_CONFIG_NOSYSTEM": "1"}
    git(cli.cwd, "init", "-q")
    git(cli.cwd, "config", "napipatch.executor", "from-project")
    git(cli.cwd, "config", "napipatch.jobs", "3")
    tree = small_repo(tmp_path / "linux")
    (tree / "a.c").write_text("int a;\n")
    git(tree, "add", "a.c")
    git(tree, "commit", "-q", "-m", "a: add")
    (tree / "a.c").write_text("int a;\nint b;\n")
    git(tree, "commit", "-q", "-am", "a: add b\n\nSigned-off-by: T <t@example.org>")
    git(tree, "config", "napipatch.executor", "from-tree")
    series = format_patch(tree, "HEAD~1..HEAD", tmp_path / "mails")
    return env, tree, series


def _line(out: str, key: str) -> str:
    return next(ln for ln in out.splitlines() if ln.startswith(key + " "))


def test_tree_repository_config_wins_over_the_current_directory(cli, tmp_path):
    env, tree, series = _layers(cli, tmp_path)
    here, there = f"file:{cli.cwd}/.git/config", f"file:{tree}/.git/config"
    # napipatch config: every value with the file it came from, as git says
    out = cli("config", env=env, check=0).stdout
    assert _line(out, "napipatch.executor").split("#")[0].split("=")[1].strip() == "from-project"
    assert f"# {here}: where build/boot jobs run" in _line(out, "napipatch.executor")
    assert "# default: " in _line(out, "napipatch.broker-url")
    out = cli("config", "--tree", tree, env=env, check=0).stdout
    assert "= from-tree" in _line(out, "napipatch.executor")
    assert f"# {there}: " in _line(out, "napipatch.executor")
    assert "= 3" in _line(out, "napipatch.jobs") and f"# {here}: " in _line(out, "napipatch.jobs")
    # napipatch test build --tree reads the same layers: the tree's value wins
    # (an unknown executor stops it before anything is built).
    cp = cli("test", "build", series, "--tree", tree, env=env)
    assert (cp.returncode, cp.stderr.strip()) == (
        2, "napipatch: error: napipatch.executor: unknown executor 'from-tree' (local, celery)")
    # ... and the project's value applies when the tree's repository says nothing.
    git(tree, "config", "--unset", "napipatch.executor")
    cp = cli("test", "build", series, "--tree", tree, env=env)
    assert (cp.returncode, cp.stderr.strip()) == (
        2, "napipatch: error: napipatch.executor: unknown executor 'from-project' (local, celery)")


def test_tree_from_napipatch_tree_is_a_layer_too(cli, tmp_path):
    # No --tree: napipatch.tree (here relative, in the project's config)
    # names the tree, and its repository's config is read all the same.
    env, tree, series = _layers(cli, tmp_path)
    git(cli.cwd, "config", "napipatch.tree", "linux")
    assert "= from-tree" in _line(cli("config", env=env, check=0).stdout, "napipatch.executor")
    cp = cli("test", "build", series, env=env)
    assert (cp.returncode, cp.stderr.strip()) == (
        2, "napipatch: error: napipatch.executor: unknown executor 'from-tree' (local, celery)")


def test_check_tree_reads_the_tree_config_and_names_its_file(cli, tmp_path):
    env, tree, series = _layers(cli, tmp_path)
    git(tree, "config", "napipatch.jobs", "many")
    cp = cli("check", series, "--tree", tree, "--only", "apply", env=env)
    assert (cp.returncode, cp.stderr) == (
        2, f"napipatch: error: napipatch.jobs (file:{tree}/.git/config): "
           "'many' is not a whole number\n")
    cp = cli("check", series, "--only", "subject", env=env)  # no tree: the project's 3
    assert cp.returncode == 0, cp.stderr
