"""fixes-tag with a tree: the commit a Fixes: tag names exists, is an
ancestor and has the subject quoted (NIPA's verify_fixes)."""

import pytest

from conftest import check_findings, check_json, commit_files, format_patch, git, nipa_states

pytestmark = pytest.mark.tree


def _fix(cli, tree, base, tag, tmp_path, name):
    c = commit_files(tree, base, {"net/core/acme.c": f"int {name};\n"},
                     f"net: core: fix it\n\nFix it.\n\nFixes: {tag}\n"
                     "Signed-off-by: Test Author <author@example.org>\n")
    d = format_patch(tree, f"{base}..{c}", tmp_path / name, "--subject-prefix=PATCH net")
    return [f["message"] for f in check_findings(cli, d, "fixes-tag", "--tree", tree)]


def test_fixes_tag_against_the_tree(cli, kernel_tree, base_commit, tmp_path):
    culprit = commit_files(kernel_tree, base_commit, {"net/core/acme.c": "int a;\n"},
                           "net: core: add acme, which has a long subject line\n\nNew.\n")
    short = culprit[:12]
    subj = "net: core: add acme, which has a long subject line"
    assert _fix(cli, kernel_tree, culprit, f'{short} ("{subj}")', tmp_path, "good") == []
    # NIPA takes a prefix of the subject, and "..." for the rest.
    assert _fix(cli, kernel_tree, culprit, f'{short} ("net: core: add acme, ...")',
                tmp_path, "cut") == []
    assert _fix(cli, kernel_tree, culprit, f'{short} ("net: core: add a bug")', tmp_path,
                "wrong") == [f'Fixes: {short} ("net: core: add a bug"): subject does not '
                             f'match the commit\'s ("{subj}")']
    gone = "0123456789abcdef0123"
    assert _fix(cli, kernel_tree, culprit, f'{gone} ("{subj}")', tmp_path, "gone") == \
        [f'Fixes: {gone} ("{subj}"): the tree has no such commit (or the SHA1 is ambiguous)']
    # A commit of another branch: napipatch's own error (NIPA never gets to it).
    assert _fix(cli, kernel_tree, base_commit, f'{short} ("{subj}")', tmp_path, "aside") == \
        [f'Fixes: {short} ("{subj}"): {short} is not an ancestor of the patch\'s base']


def test_what_nipa_s_verify_fixes_would_post(cli, kernel_tree, base_commit, tmp_path):
    """The forecast follows NIPA's rule, not napipatch's severity: a commit
    that is not an ancestor of this base, or a tag in another form, are
    napipatch's own findings (verify_fixes success); a wrong subject fails.
    Without a tree whether the commit exists is not known (unknown)."""
    culprit = commit_files(kernel_tree, base_commit, {"net/core/acme.c": "int a;\n"},
                           "net: core: add acme\n\nNew.\n")
    short = culprit[:12]

    def forecast(base, tag, name, *args):
        c = commit_files(kernel_tree, base, {"net/core/acme.c": f"int {name};\n"},
                         f"net: core: fix it\n\nFix it.\n\nFixes: {tag}\n"
                         "Signed-off-by: Test Author <author@example.org>\n")
        d = format_patch(kernel_tree, f"{base}..{c}", tmp_path / name,
                         "--subject-prefix=PATCH net")
        data = check_json(cli, d, "fixes-tag", *args)
        return [f["severity"] for f in data["findings"]], nipa_states(data, "verify_fixes")

    tree = ("--tree", kernel_tree)
    assert forecast(base_commit, f'{short} ("net: core: add acme")', "aside", *tree) == \
        (["error"], ["success"])
    assert forecast(culprit, f'{short} (\u201cnet: core: add acme\u201d)', "curly", *tree) == \
        (["warning"], ["success"])
    assert forecast(culprit, f'{short} ("net: core: add a bug")', "wrong", *tree) == \
        (["error"], ["fail"])
    assert forecast(culprit, f'{short} ("net: core: add acme")', "notree") == ([], ["unknown"])
