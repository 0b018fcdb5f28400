"""Re-checking an unchanged series reuses the commits of the first apply,
and applies again when those commits are gone or the patches changed."""

from __future__ import annotations

import json

import pytest

from napipatch.tree.apply import apply_in_index
from napipatch.store.inputs import resolve
from napipatch.store.store import Store

from conftest import one_patch

pytestmark = pytest.mark.tree


def test_apply_is_reused_while_its_commits_exist(kernel_tree, base_commit, tmp_path):
    text = "napipatch apply cache\n"
    d, commit = one_patch(kernel_tree, base_commit, tmp_path, {"napipatch-a.txt": text},
                          "doc: add a note")
    series = resolve(str(d), Store(tmp_path / "store"), kernel_tree)
    cache = tmp_path / "cache"

    first = apply_in_index(kernel_tree, series, cache=cache)
    [entry] = (cache / "applied").glob("*.json")
    assert json.loads(entry.read_text())["commits"] == first.commits
    again = apply_in_index(kernel_tree, series, cache=cache)
    assert again.commits == first.commits and again.failure is None

    # The entry is what is used (any existing commit recorded there comes back).
    entry.write_text(json.dumps({"commits": [base_commit], "failure": None}))
    assert apply_in_index(kernel_tree, series, cache=cache).commits == [base_commit]

    # A recorded commit that no longer exists (gc) is not trusted: apply again.
    entry.write_text(json.dumps({"commits": ["0" * 40], "failure": None}))
    redone = apply_in_index(kernel_tree, series, cache=cache)
    assert redone.commits == first.commits

    # A changed patch is a different entry.
    d2, _ = one_patch(kernel_tree, base_commit, tmp_path, {"napipatch-a.txt": text + "more\n"},
                      "doc: add a note", name="mail2")
    changed = apply_in_index(kernel_tree, resolve(str(d2), Store(tmp_path / "store"),
                                                  kernel_tree), cache=cache)
    assert changed.commits != first.commits
    assert len(list((cache / "applied").glob("*.json"))) == 2


def test_a_failed_apply_is_remembered_with_its_reason(kernel_tree, base_commit, tmp_path):
    d, _ = one_patch(kernel_tree, base_commit, tmp_path, {"MAINTAINERS": "replaced\n"},
                     "MAINTAINERS: replace")
    # Make it not apply: change the context it expects.
    f = next(d.glob("0001-*.patch"))
    f.write_text(f.read_text().replace("-List of maintainers", "-List of maintainerz", 1))
    series = resolve(str(d), Store(tmp_path / "store"), kernel_tree)
    cache = tmp_path / "cache"
    first = apply_in_index(kernel_tree, series, cache=cache)
    assert first.failure is not None and first.failure.file == "MAINTAINERS"
    again = apply_in_index(kernel_tree, series, cache=cache)
    assert again.commits == [None] and str(again.failure) == str(first.failure)
