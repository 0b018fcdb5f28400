"""The signed check: patatt validates a signed mail; an unsigned one is said plainly.

tests/fixtures/signed/ holds a patch signed with ``patatt sign`` (an
ed25519 key made for these tests; its public half is under public/, laid
out as patatt's keyring is), the same patch with one word of its commit
message changed after signing (badsig), and the patch unsigned. The
netdev CI's own ``signed`` test, run by hand on these, posts success,
fail and warning.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, check_json, nipa_states

FIX = ROOT / "tests" / "fixtures" / "signed"


def _keyring(tmp_path, with_key: bool) -> dict:
    """The environment for a user whose patatt keyring has (or lacks) the key."""
    data = tmp_path / "data"
    (data / "patatt").mkdir(parents=True)
    if with_key:
        shutil.copytree(FIX / "public", data / "patatt" / "public")
    home = tmp_path / "home"
    home.mkdir()
    return {"XDG_DATA_HOME": str(data), "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "GIT_CONFIG_NOSYSTEM": "1"}


def _check(cli, target, env):
    cp = cli("check", target, "--only", "signed", "--format", "json", env=env)
    assert cp.returncode in (0, 1), cp.stderr
    data = json.loads(cp.stdout)
    return data, [f for f in data["findings"] if f["check"] == "signed"]


def test_a_valid_signature_passes(cli, tmp_path):
    data, found = _check(cli, FIX / "signed.patch", _keyring(tmp_path, True))
    assert found == []
    assert {c["id"]: c["status"] for c in data["checks"]}["signed"] == "pass"
    assert nipa_states(data, "signed") == ["success"]


def test_a_changed_mail_is_an_error(cli, tmp_path):
    data, found = _check(cli, FIX / "badsig.patch", _keyring(tmp_path, True))
    assert [(f["severity"], f["patch"]) for f in found] == [("error", 1)]
    assert found[0]["message"] == ("signature of author@example.org does not verify "
                                   "(BADSIG; the netdev CI posts fail)")
    assert "failed to validate" in found[0]["details"]
    assert data["summary"]["exit_status"] == 1
    assert nipa_states(data, "signed") == ["fail"]


def test_a_key_missing_from_the_keyring_is_an_info(cli, tmp_path):
    data, found = _check(cli, FIX / "signed.patch", _keyring(tmp_path, False))
    assert [(f["severity"], f["patch"]) for f in found] == [("info", 1)]
    # NIPA's keyring, not yours, decides between its success and warning
    assert nipa_states(data, "signed") == ["unknown"]
    assert found[0]["message"].startswith("signed, but the signing key is not in your patatt "
                                          "keyring (NOKEY; the netdev CI posts warning")


def test_unsigned_is_said_plainly(cli):
    data = check_json(cli, FIX / "unsigned.patch", "signed")
    assert [(f["severity"], f["message"]) for f in data["findings"]] == [
        ("info", "unsigned: no X-Developer-Signature header (the netdev CI posts warning "
                 "for an unsigned patch)")]
    assert nipa_states(data, "signed") == ["warning"]


def _without_tools(tmp_path, target) -> subprocess.CompletedProcess:
    """napipatch as run by an interpreter with no tools beside it and only
    git on PATH: what a machine without the pinned linters sees."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git"))
    code = ("import sys; sys.executable = '/nonexistent/bin/python'; "
            "from napipatch.cli import main; sys.argv[0] = 'napipatch'; main()")
    env = {"PATH": str(bin_dir), "XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    return subprocess.run([sys.executable, "-c", code, "check", str(target), "--only", "signed",
                           "--format", "json"], capture_output=True, text=True, env=env,
                          cwd=tmp_path)


def test_patatt_missing_is_an_environment_error(tmp_path):
    """Without patatt the check cannot run: status error, exit 2, the package named."""
    cp = _without_tools(tmp_path, FIX / "signed.patch")
    assert cp.returncode == 2, (cp.stdout[-2000:], cp.stderr[-2000:])
    data = json.loads(cp.stdout)
    assert {c["id"]: c["status"] for c in data["checks"]}["signed"] == "error"
    msgs = [f["message"] for f in data["findings"] if f["check"] == "signed"]
    assert msgs == ["could not run: patatt: not installed (pip install patatt==0.8.0; "
                    "scripts/install.sh installs it)"]


def test_unsigned_needs_no_patatt(tmp_path):
    """An unsigned mail is known from its headers: no tool runs."""
    cp = _without_tools(tmp_path, FIX / "unsigned.patch")
    assert cp.returncode == 0, cp.stderr[-2000:]
    assert [f["severity"] for f in json.loads(cp.stdout)["findings"]] == ["info"]


def _tree_files(root) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_gpg_runs_in_napipatchs_own_home_and_gnupg_keys_decide_only_when_asked(cli, tmp_path):
    """An OpenPGP-signed mail (patatt runs gpg for it): by default the user's
    GnuPG keys do not decide (NOKEY), with napipatch.signed-keyring=gnupg
    they do (valid); either way the user's GnuPG home is byte-for-byte what
    it was (no lock, trustdb or import), and a user without one gets none."""
    if not shutil.which("gpg"):
        raise AssertionError("gpg missing: scripts/install.sh installs it (gnupg)")
    user = tmp_path / "gnupg"
    user.mkdir(mode=0o700)
    genv = dict(os.environ, GNUPGHOME=str(user))
    subprocess.run(["gpg", "--batch", "--passphrase", "", "--quick-gen-key",
                    "Author <author@example.org>", "ed25519", "sign", "never"],
                   env=genv, check=True, capture_output=True)
    keys = subprocess.run(["gpg", "--with-colons", "--list-keys"], env=genv, check=True,
                          capture_output=True, text=True).stdout
    fpr = next(ln.split(":")[9] for ln in keys.splitlines() if ln.startswith("fpr:"))
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(f"[patatt]\n\tsigningkey = openpgp:{fpr}\n"
                         "\tidentity = author@example.org\n")
    mail = tmp_path / "m.patch"
    shutil.copyfile(FIX / "unsigned.patch", mail)
    subprocess.run([str(Path(sys.executable).with_name("patatt")), "sign", str(mail)],
                   env=dict(genv, GIT_CONFIG_GLOBAL=str(gitconfig)), check=True, capture_output=True)
    assert b"a=openpgp" in mail.read_bytes()
    subprocess.run(["gpgconf", "--kill", "all"], env=genv, capture_output=True)
    before = _tree_files(user)
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "GNUPGHOME": str(user), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": str(tmp_path / "napipatch.gitconfig")}
    (tmp_path / "napipatch.gitconfig").write_text("")
    _, found = _check(cli, mail, env)
    assert [f["message"].split(";")[0] for f in found] == [
        "signed, but the signing key is not in your patatt keyring (NOKEY"]
    (tmp_path / "napipatch.gitconfig").write_text("[napipatch]\n\tsigned-keyring = gnupg\n")
    data, found = _check(cli, mail, env)
    assert found == [] and {c["id"]: c["status"] for c in data["checks"]}["signed"] == "pass"
    assert _tree_files(user) == before, "the user's GnuPG home changed"
    # A user without a GnuPG home (nor patatt's data directory) gets none.
    bare = dict(env, GNUPGHOME="")
    del bare["GNUPGHOME"]
    _check(cli, mail, bare)
    assert sorted(p.name for p in home.iterdir()) == [], "written into HOME"
