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
