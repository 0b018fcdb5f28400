"""The ynl check on the real 6.12 tree: specs, regenerated code, uapi copies.

Every fixture is a commit on 6.12 made with commit_files/edit, mailed with
format_patch and checked through the CLI, as a user would. The "with
regenerated code" variants run the base tree's own ynl-gen-c.py here in the
test (exported with git archive, independent of napipatch's code).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import check_json, commit_files, edit, git, one_patch

pytestmark = pytest.mark.tree

SPEC = "Documentation/netlink/specs/netdev.yaml"
NETDEV_FILES = {  # as ynl-regen.sh reads them from the files' headers
    "include/uapi/linux/netdev.h": ("uapi", "header"),
    "net/core/netdev-genl-gen.c": ("kernel", "source"),
    "net/core/netdev-genl-gen.h": ("kernel", "header"),
    "tools/include/uapi/linux/netdev.h": ("uapi", "header"),
}
ENUM = """  -
    name: qstats-scope
    type: flags
    entries: [ queue ]
"""
NAPI_PID = """        name: pid
        doc: PID of the napi thread, if NAPI is configured to operate in
             threaded mode. If NAPI is not in threaded mode (i.e. uses normal
             softirq context), the attribute will be absent.
        type: u32
"""
NAPI_REPLY = """        reply: &napi-get-op
          attributes:
            - id
            - ifindex
            - irq
            - pid
"""


def _spec(tree, base, *, in_reply=True, checks="", unused_enum=False, attr_type="u32") -> str:
    enum = ENUM + "  -\n    name: napi-threaded\n    type: enum\n    entries: [ disabled, enabled, busy-poll ]\n"
    if unused_enum:
        enum += "  -\n    name: napi-defer\n    type: enum\n    entries: [ never, always ]\n"
    text = edit(tree, base, SPEC, ENUM, enum)
    attr = (NAPI_PID + "      -\n        name: threaded\n        doc: napi threaded mode\n"
            f"        type: {attr_type}\n        enum: napi-threaded\n" + checks)
    text = text.replace(NAPI_PID, attr, 1)
    if in_reply:
        text = text.replace(NAPI_REPLY, NAPI_REPLY + "            - threaded\n", 1)
    return text


def _regenerate(tree: Path, base: str, spec_text: str, tmp: Path) -> dict[str, str]:
    """The four netdev files, made by the base tree's own generator."""
    root = tmp / "gen"
    root.mkdir()
    arch = subprocess.run(["git", "-C", str(tree), "archive", base, "tools/net/ynl",
                           "Documentation/netlink"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(root)], input=arch.stdout, check=True)
    (root / "MAINTAINERS").write_text("")
    (root / SPEC).write_text(spec_text)
    out = {}
    for path, (mode, kind) in NETDEV_FILES.items():
        dest = root / "out" / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(root / "tools/net/ynl/ynl-gen-c.py"), "--mode", mode,
                        f"--{kind}", "--spec", str(root / SPEC), "-o", str(dest)],
                       cwd=root, check=True, capture_output=True)
        out[path] = dest.read_text()
    return out


def _check(cli, tree, base, changes, tmp_path, subject="net: netdev: add napi threaded"):
    d, c = one_patch(tree, base, tmp_path, changes, subject)
    data = check_json(cli, d, "ynl", "--tree", tree)
    assert [c["id"] for c in data["checks"]] == ["ynl"]
    return data["findings"], c


def _summary(findings):
    return sorted((f["severity"], f["file"], f["line"]) for f in findings
                  if f["severity"] != "info")


def _infos(findings):
    return [f["message"] for f in findings if f["severity"] == "info"]


ONLY_NETDEV = " (1 of 8 YNL families in the tree; the others are not affected by this patch)"


def test_spec_change_without_regenerated_code(cli, kernel_tree, base_commit, tmp_path):
    findings, _ = _check(cli, kernel_tree, base_commit, {SPEC: _spec(kernel_tree, base_commit)},
                         tmp_path)
    # The new enum and attribute land in both uapi copies; the kernel policy
    # is unchanged (threaded is only in a reply).
    assert _summary(findings) == [
        ("error", "include/uapi/linux/netdev.h", 77),
        ("error", "tools/include/uapi/linux/netdev.h", 77),
    ]
    errs = [f for f in findings if f["severity"] == "error"]
    for f in errs:
        assert "not what the YNL generator makes from Documentation/netlink/specs/netdev.yaml" in f["message"]
        assert "not regenerated after the spec change" in f["message"]
        assert f["hint"] == "tools/net/ynl/ynl-regen.sh -f"
        assert "+enum netdev_napi_threaded {" in f["details"]
        assert "+\tNETDEV_A_NAPI_THREADED," in f["details"]
    # A series touching only the netdev spec regenerates only netdev.
    assert _infos(findings) == ["regenerated netdev: 2 of 4 files differ" + ONLY_NETDEV]
    regen = next(f for f in findings if f["severity"] == "info")
    assert sorted(regen["details"].splitlines()) == sorted(
        f"netdev: {m} {k}: {p}" for p, (m, k) in NETDEV_FILES.items())


def test_spec_change_with_regenerated_code(cli, kernel_tree, base_commit, tmp_path):
    spec = _spec(kernel_tree, base_commit)
    changes = {SPEC: spec, **_regenerate(kernel_tree, base_commit, spec, tmp_path)}
    assert changes["include/uapi/linux/netdev.h"] == changes["tools/include/uapi/linux/netdev.h"]
    findings, _ = _check(cli, kernel_tree, base_commit, changes, tmp_path)
    assert _summary(findings) == []
    assert _infos(findings) == ["regenerated netdev: 4 files match" + ONLY_NETDEV]


def test_spec_warnings(cli, kernel_tree, base_commit, tmp_path):
    spec = _spec(kernel_tree, base_commit, in_reply=False, unused_enum=True,
                 checks="        checks:\n          max: 1\n")
    changes = {SPEC: spec, **_regenerate(kernel_tree, base_commit, spec, tmp_path)}
    findings, _ = _check(cli, kernel_tree, base_commit, changes, tmp_path)
    lines = spec.splitlines()
    enum_line = lines.index("    name: napi-defer") + 1
    attr_line = lines.index("        name: threaded") + 1
    max_line = lines.index("          max: 1") + 1
    assert _summary(findings) == [("warning", SPEC, enum_line), ("warning", SPEC, attr_line),
                                  ("warning", SPEC, max_line)]
    msgs = {f["line"]: f["message"] for f in findings if f["severity"] == "warning"}
    assert "enum 'napi-defer' in definitions is used by no attribute" in msgs[enum_line]
    assert "attribute 'threaded' of attribute-set 'napi' is in no operation" in msgs[attr_line]
    assert "checks: max: 1 contradicts enum 'napi-threaded' (its max value is 2)" in msgs[max_line]
    assert _infos(findings) == ["regenerated netdev: 4 files match" + ONLY_NETDEV]


def test_spec_that_does_not_validate(cli, kernel_tree, base_commit, tmp_path):
    spec = _spec(kernel_tree, base_commit, attr_type="u33")
    findings, _ = _check(cli, kernel_tree, base_commit, {SPEC: spec}, tmp_path)
    line = spec.splitlines().index("        type: u33") + 1
    assert _summary(findings) == [("error", SPEC, line)]
    err = next(f for f in findings if f["severity"] == "error")
    assert "does not validate against Documentation/netlink/genetlink.yaml" in err["message"]
    assert "'u33' is not one of" in err["message"]
    assert _infos(findings) == ["not regenerating netdev: Documentation/netlink/specs/netdev.yaml does not validate"]


def test_generated_file_edited_by_hand(cli, kernel_tree, base_commit, tmp_path):
    path = "net/core/netdev-genl-gen.c"
    text = edit(kernel_tree, base_commit, path, "[NETDEV_A_QUEUE_TYPE] = NLA_POLICY_MAX(NLA_U32, 1),",
                "[NETDEV_A_QUEUE_TYPE] = NLA_POLICY_MAX(NLA_U32, 2),")
    findings, _ = _check(cli, kernel_tree, base_commit, {path: text}, tmp_path,
                         subject="net: netdev: widen queue type policy")
    # the first of the two queue-get policies (line 33 in 6.12)
    assert _summary(findings) == [("error", path, 33)]
    err = next(f for f in findings if f["severity"] == "error")
    assert "(edited by hand?)" in err["message"]
    assert "-\t[NETDEV_A_QUEUE_TYPE] = NLA_POLICY_MAX(NLA_U32, 2)," in err["details"]
    assert "+\t[NETDEV_A_QUEUE_TYPE] = NLA_POLICY_MAX(NLA_U32, 1)," in err["details"]
    assert _infos(findings) == ["regenerated netdev: 1 of 4 files differ" + ONLY_NETDEV]


def test_uapi_change_with_stale_tools_copy_of_hand_written_header(cli, kernel_tree,
                                                                  base_commit, tmp_path):
    # if_xdp.h is hand-written (no YNL-GEN header): its tools/ copy is
    # synced separately, so a patch changing only one copy is not an error.
    path = "include/uapi/linux/if_xdp.h"
    text = edit(kernel_tree, base_commit, path, "#define XDP_USE_SG\t(1 << 4)\n",
                "#define XDP_USE_SG\t(1 << 4)\n#define XDP_USE_NEW\t(1 << 5)\n")
    findings, _ = _check(cli, kernel_tree, base_commit, {path: text}, tmp_path,
                         subject="xsk: add XDP_USE_NEW")
    new_line = text.splitlines().index("#define XDP_USE_NEW\t(1 << 5)") + 1
    assert _summary(findings) == []
    info = findings[0]
    assert (info["severity"], info["file"], info["line"]) == \
        ("info", "tools/include/uapi/linux/if_xdp.h", new_line)
    assert info["message"] == (
        "tools/include/uapi/linux/if_xdp.h differs from include/uapi/linux/if_xdp.h after this "
        "patch; if_xdp.h is not generated by YNL, so its tools/ copy is synced separately")
    assert "+#define XDP_USE_NEW\t(1 << 5)" in info["details"]


def test_one_copy_of_if_addr_and_rtnetlink_changed(cli, kernel_tree, base_commit, tmp_path):
    # As between 7.2 and 7.3: the tree has tools/ copies of if_addr.h and
    # rtnetlink.h (6.12 has none: a base commit adds them, in sync), and a
    # patch changes the include/uapi copy of one and the tools/ copy of the
    # other. Neither is made by the YNL generator: info, not error.
    addr, rtnl = "include/uapi/linux/if_addr.h", "include/uapi/linux/rtnetlink.h"
    copies = {f"tools/{p}": git(kernel_tree, "cat-file", "blob", f"{base_commit}:{p}") + "\n"
              for p in (addr, rtnl)}
    base = commit_files(kernel_tree, base_commit, copies, "tools: sync if_addr.h rtnetlink.h\n")
    addr_text = edit(kernel_tree, base, addr, "\tIFA_PROTO,\t\t/* u8, address protocol */\n",
                     "\tIFA_PROTO,\t\t/* u8, address protocol */\n\tIFA_NEW,\n")
    rtnl_text = edit(kernel_tree, base, f"tools/{rtnl}", "\tRTM_NEWLINK\t= 16,\n",
                     "\tRTM_NEWLINK\t= 16,\t/* link */\n")
    findings, _ = _check(cli, kernel_tree, base, {addr: addr_text, f"tools/{rtnl}": rtnl_text},
                         tmp_path, subject="net: uapi: add IFA_NEW")
    assert _summary(findings) == []
    assert sorted((f["severity"], f["file"]) for f in findings) == [
        ("info", "include/uapi/linux/rtnetlink.h"), ("info", "tools/include/uapi/linux/if_addr.h")]
    assert all("is not generated by YNL, so its tools/ copy is synced separately"
               in f["message"] for f in findings)


def test_generated_uapi_header_with_stale_tools_copy(cli, kernel_tree, base_commit, tmp_path):
    # netdev.h is made by the YNL generator: a stale tools/ copy stays an error.
    spec = _spec(kernel_tree, base_commit)
    changes = {SPEC: spec, **_regenerate(kernel_tree, base_commit, spec, tmp_path)}
    del changes["tools/include/uapi/linux/netdev.h"]
    findings, _ = _check(cli, kernel_tree, base_commit, changes, tmp_path)
    errs = [f for f in findings if f["severity"] == "error"]
    assert {f["file"] for f in errs} == {"tools/include/uapi/linux/netdev.h"}
    assert "tools/include/uapi/linux/netdev.h differs from include/uapi/linux/netdev.h " \
           "after this patch" in [f["message"] for f in errs]
    pair = next(f for f in errs if f["message"].endswith("after this patch"))
    assert pair["hint"] == ("cp include/uapi/linux/netdev.h tools/include/uapi/linux/netdev.h"
                            " (or tools/net/ynl/ynl-regen.sh -f)")


def test_uapi_copies_both_updated_and_old_drift(cli, kernel_tree, base_commit, tmp_path):
    # if_xdp.h updated in both copies: fine. if_link.h was already out of
    # sync in 6.12: not this patch's doing, so not an error.
    x = "include/uapi/linux/if_xdp.h"
    text = edit(kernel_tree, base_commit, x, "#define XDP_USE_SG\t(1 << 4)\n",
                "#define XDP_USE_SG\t(1 << 4)\n#define XDP_USE_NEW\t(1 << 5)\n")
    link = "include/uapi/linux/if_link.h"
    ltext = edit(kernel_tree, base_commit, link, "\tIFLA_UNSPEC,\n", "\tIFLA_UNSPEC,\t/* unused */\n")
    assert git(kernel_tree, "rev-parse", f"{base_commit}:{link}") != \
        git(kernel_tree, "rev-parse", f"{base_commit}:tools/{link}")
    findings, _ = _check(cli, kernel_tree, base_commit,
                         {x: text, f"tools/{x}": text, link: ltext}, tmp_path,
                         subject="net: uapi: update")
    assert _summary(findings) == []
    assert _infos(findings) == [
        "tools/include/uapi/linux/if_link.h was already out of sync with "
        "include/uapi/linux/if_link.h before this patch; not comparing them"]


def test_regenerate_reproduces_every_generated_file_of_the_tree(kernel_tree, base_commit):
    """The batched generator (one interpreter, libyaml, validation once per
    spec) makes all of 6.12's generated YNL files byte for byte."""
    from napipatch.tree import treegrep
    from napipatch.kernel import ynlspec
    from napipatch.tree.applied import Applied
    from napipatch.config import Config
    from napipatch.engine.context import TreeView

    view = TreeView(repo=kernel_tree, applied=Applied(kernel_tree, base_commit, "test"),
                    config=Config(), use_cache=False)
    try:
        found = view.grep.grep(base_commit, treegrep.regex(ynlspec.GEN_REGEX))
        gens = [g for p in sorted(found)
                if (g := ynlspec.parse_header(p, view.text(base_commit, p) or ""))]
        by_spec: dict[str, list] = {}
        for g in gens:
            by_spec.setdefault(g.spec, []).append(g)
        assert len(gens) == 24 and len(by_spec) == 8
        schemas = {f"{ynlspec.SCHEMA_DIR}{n}": view.text(base_commit, f"{ynlspec.SCHEMA_DIR}{n}")
                   for n in ("genetlink.yaml", "genetlink-c.yaml", "genetlink-legacy.yaml",
                             "netlink-raw.yaml")}
        differ = []
        for spec, files in by_spec.items():
            inputs = {spec: view.text(base_commit, spec), **schemas}
            for r in ynlspec.regenerate(view.scripts, files, inputs):
                if r.text != view.text(base_commit, r.file.path):
                    differ.append((r.file.path, r.error[-300:]))
        assert differ == []
    finally:
        view.close()
