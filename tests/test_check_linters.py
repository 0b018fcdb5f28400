"""The linter checks (shellcheck, pylint, ruff, yamllint) on the 6.12 tree.

Each patch is a commit on the real tree (temporary index), so the checks
lint the files before and after it as the netdev CI does; NIPA's own
scripts, run by hand on the same commits, gave the states the tests name.
The bad/good fixtures in tests/fixtures/checks/<id>/ cover new files
without a tree.
"""

from __future__ import annotations

import shutil

import pytest

from conftest import (ROOT, check_findings, check_json, commit_files, edit, format_patch, git,
                      nipa_states, one_patch)

pytestmark = pytest.mark.tree

V5 = ROOT / "series" / "threaded-busy-poll" / "v5"
NET = "tools/testing/selftests/net"
SPEC = "Documentation/netlink/specs/netdev.yaml"
DT = "Documentation/devicetree/bindings/net/ethernet-phy-package.yaml"


def _found(fs):
    return sorted((f["severity"], f["file"], f["line"], f["message"]) for f in fs)


def test_v5_is_clean_for_every_linter(cli, kernel_tree):
    for check in ("shellcheck", "pylint", "ruff", "yamllint"):
        assert check_findings(cli, V5, check, "--tree", kernel_tree) == [], check


def _v5_as_first_written(tmp_path):
    """v5 before its fixes for the netdev CI: spaces inside the enum's
    brackets (patches 1 and 3), open() without an encoding and a test
    function without a docstring (patch 5). Only the patch text changes:
    the hunks keep their line counts, but patch 5's header must say one
    line less."""
    out = tmp_path / "v5-first"
    shutil.copytree(V5, out, ignore=shutil.ignore_patterns("bench"))
    p1, p3, p5 = (next(out.glob(f"000{n}-*.patch")) for n in (1, 3, 5))
    p1.write_text(p1.read_text().replace("[disabled, enabled]", "[ disabled, enabled ]"))
    p3.write_text(p3.read_text().replace("[disabled, enabled]", "[ disabled, enabled ]")
                  .replace("[disabled, enabled, busy-poll]", "[ disabled, enabled, busy-poll ]"))
    t = p5.read_text()
    doc = '+    """Every threaded mode through sysfs, read back per NAPI with napi-get."""\n'
    t = t.replace(doc, "")
    t = t.replace('encoding="utf-8"', "").replace('"w", )', '"w")').replace("(path, )", "(path)")
    p5.write_text(t.replace("@@ -87,9 +87,69 @@", "@@ -87,9 +87,68 @@"))
    return out


def test_v5_as_first_written_is_what_nipa_flags(cli, kernel_tree, tmp_path):
    # NIPA: yamllint fail on patch 1 (errors 13 -> 15), pylint warning on
    # patch 5 (warnings 7 -> 10), shellcheck and ruff success.
    first = _v5_as_first_written(tmp_path)
    yaml = check_findings(cli, first, "yamllint", "--tree", kernel_tree)
    assert [(f["severity"], f["patch"], f["file"], f["line"], f["message"]) for f in yaml] == [
        ("error", 1, SPEC, 84, "too many spaces inside brackets (brackets)")]
    py = check_findings(cli, first, "pylint", "--tree", kernel_tree)
    assert [(f["severity"], f["patch"], f["line"], f["message"].split(":")[0]) for f in py] == [
        ("warning", 5, 90, "C0116"), ("warning", 5, 98, "W1514"), ("warning", 5, 102, "W1514")]
    assert check_findings(cli, first, "ruff", "--tree", kernel_tree) == []


def test_shellcheck_new_findings_by_level_and_a_moved_one_is_not_new(cli, kernel_tree,
                                                                     base_commit, tmp_path):
    # in_netns.sh has one SC2155 warning before: the patch moves that line,
    # adds another SC2155 (a warning) and an unquoted $NETNS (SC2086, info).
    path = f"{NET}/in_netns.sh"
    netns = 'readonly NETNS="ns-$(mktemp -u XXXXXX)"\n'
    text = edit(kernel_tree, base_commit, path, f"set -e\n\n{netns}",
                f"{netns}set -e\n\n"
                'readonly STAMP="$(date +%s)"\necho $NETNS "${STAMP}"\n')
    d, _ = one_patch(kernel_tree, base_commit, tmp_path, {path: text}, "selftests: net: stamp")
    got = check_findings(cli, d, "shellcheck", "--tree", kernel_tree)
    assert _found(got) == [
        ("info", path, 10, "SC2086 (info): Double quote to prevent globbing and word splitting."),
        ("warning", path, 9, "SC2155 (warning): Declare and assign separately to avoid "
                             "masking return values."),
    ]


def test_shellcheck_a_clean_script_stays_clean(cli, kernel_tree, base_commit, tmp_path):
    # test_bpf.sh has no finding before: NIPA counts every new one as an error.
    path = f"{NET}/test_bpf.sh"
    text = edit(kernel_tree, base_commit, path, '\techo "test_bpf: ok";\n',
                '\techo "test_bpf: ok";\n\techo $1;\n')
    d, _ = one_patch(kernel_tree, base_commit, tmp_path, {path: text}, "selftests: net: echo")
    got = check_findings(cli, d, "shellcheck", "--tree", kernel_tree)
    assert _found(got) == [("error", path, 8, "SC2086 (info): Double quote to prevent globbing "
                            "and word splitting. (the script was shellcheck-clean before)")]


def test_a_python_syntax_error_is_a_finding(cli, kernel_tree, base_commit, tmp_path):
    path = f"{NET}/nl_netdev.py"
    text = edit(kernel_tree, base_commit, path, "def main() -> None:\n", "def main( -> None:\n")
    d, _ = one_patch(kernel_tree, base_commit, tmp_path, {path: text}, "selftests: net: typo")
    pyl = check_findings(cli, d, "pylint", "--tree", kernel_tree)
    assert [(f["severity"], f["message"].split(":")[0]) for f in pyl] == [("error", "E0001")]
    ruff = check_findings(cli, d, "ruff", "--tree", kernel_tree)
    assert ruff and all(f["severity"] == "error" and f["file"] == path for f in ruff)


def test_yamllint_takes_the_kernels_config_from_the_base(cli, kernel_tree, base_commit,
                                                          tmp_path):
    # Documentation/devicetree/bindings/.yamllint allows 110 columns and
    # makes longer lines a warning (yamllint's default: an error past 80).
    # The patch also switches line-length off in that config: napipatch
    # reads the config of the base, never the patched one.
    long90, long120 = ("abcd " * 17).strip(), ("wxyz " * 23).strip()   # 84 and 114
    text = edit(kernel_tree, base_commit, DT, "  the MDIO bus.\n",
                f"  the MDIO bus.\n  {long90}\n  {long120}\n")
    conf = "Documentation/devicetree/bindings/.yamllint"
    loose = edit(kernel_tree, base_commit, conf, "    max: 110\n", "    max: 200\n")
    d, _ = one_patch(kernel_tree, base_commit, tmp_path, {DT: text, conf: loose},
                     "dt-bindings: net: longer words")
    got = check_findings(cli, d, "yamllint", "--tree", kernel_tree)
    assert _found(got) == [("warning", DT, 21, "line too long (116 > 110 characters) "
                                                "(line-length)")]


def test_a_line_that_grows_longer_is_not_a_new_finding(cli, kernel_tree, base_commit, tmp_path):
    # netdev.yaml:392 is 82 columns in 6.12; at 90 it is the same finding.
    text = git(kernel_tree, "cat-file", "blob", f"{base_commit}:{SPEC}").split("\n")
    assert len(text[391]) == 82
    text[391] += " feature"
    d, _ = one_patch(kernel_tree, base_commit, tmp_path, {SPEC: "\n".join(text) + "\n"},
                     "netlink: specs: netdev: wider")
    got = check_findings(cli, d, "yamllint", "--tree", kernel_tree)
    assert got == []


def test_binary_and_huge_files_are_not_linted(cli, kernel_tree, base_commit, tmp_path):
    big = "#!/bin/sh\n" + "echo $x\n" * 70000            # ~560 KiB
    d, _ = one_patch(kernel_tree, base_commit, tmp_path, {f"{NET}/huge.sh": big},
                     "selftests: net: huge")
    data = check_json(cli, d, "shellcheck", "--tree", kernel_tree)
    assert [(f["severity"], f["message"]) for f in data["findings"]] == [
        ("info", f"shellcheck: {NET}/huge.sh not linted (over 512 KiB)")]
    assert nipa_states(data, "shellcheck") == ["unknown"]   # what NIPA's shellcheck says
    # a changed script without the tree is not compared with its parent: not known either
    script = f"{NET}/udpgro.sh"
    text = edit(kernel_tree, base_commit, script, "#!/bin/bash\n", "#!/bin/bash\n# x\n")
    d, _ = one_patch(kernel_tree, base_commit, tmp_path, {script: text}, "selftests: net: x",
                     name="notree")
    data = check_json(cli, d, "shellcheck")
    assert [f["message"] for f in data["findings"]] == [
        f"shellcheck: {script} not compared with its version before the patch (needs --tree)"]
    assert nipa_states(data, "shellcheck") == ["unknown"]
    c = commit_files(kernel_tree, base_commit, {f"{NET}/blob.py": "x = 1\n\0\1\2\n"},
                     "selftests: net: blob\n\nA binary.\n")
    out = format_patch(kernel_tree, f"{base_commit}..{c}", tmp_path / "bin", "--binary")
    data = check_json(cli, out, "pylint", "--tree", kernel_tree)
    assert [(f["severity"], f["message"]) for f in data["findings"]] == [
        ("info", f"pylint: {NET}/blob.py is a binary patch; not linted")]
    assert nipa_states(data, "pylint") == ["unknown"]


def test_pylint_in_the_warm_zygote_says_what_the_executable_says(kernel_tree, base_commit,
                                                                 tmp_path):
    """The pylint check asks the engine's warm zygote instead of starting
    pylint: on real files of the tree, the messages must be the
    executable's, message for message (run-clang-tools.py reads
    ``sys.stdout.buffer``: a zygote that swapped sys.stdout would say more)."""
    import json

    from napipatch.checks import pylint as check
    from napipatch.checks._lint import run_all

    from napipatch.engine import zygote

    files = [f"{NET}/nl_netdev.py", f"{NET}/lib/py/utils.py", f"{NET}/lib/py/ksft.py",
             "tools/net/ynl/lib/nlspec.py", "scripts/clang-tools/run-clang-tools.py",
             "scripts/checkkconfigsymbols.py"]
    (tmp_path / "pylintrc").write_text("# pylint's defaults\n")
    for f in files:
        dest = tmp_path / f
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(git(kernel_tree, "show", f"{base_commit}:{f}"))
    (tmp_path / "warm").mkdir()
    pid = zygote.start("pylint", check.warm, check.serve, 120, tmp_path / "warm")
    said = 0
    try:
        for f in files:
            args = ["--rcfile=pylintrc", *check.ARGS, f]
            _status, warm = zygote.ask("pylint", (str(tmp_path), args), 120)
            cold = json.loads(run_all("pylint", [args], tmp_path, ok=range(32))[0])
            assert json.loads(warm) == cold, f
            said += len(cold)
    finally:
        zygote.stop("pylint", pid)
    assert said > 20, "real files with real messages, not an empty comparison"
