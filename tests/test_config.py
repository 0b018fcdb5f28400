"""napipatch.* keys: documented in README.md and honoured from git config."""

from conftest import LORE, ROOT

from napipatch.config import KEYS


def test_every_key_is_documented():
    readme = (ROOT / "README.md").read_text()
    for key, _attr, _default, _help in KEYS:
        assert f"| `{key}` |" in readme, key


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
