"""``series show`` and ``series diff``: reading the store for a person."""

from __future__ import annotations

from pathlib import Path

from napipatch.errors import NapipatchError
from napipatch.mails.hunks import UnparsableDiff, parse_diff
from napipatch.store.store import Store
from napipatch.tree import gitutil
from napipatch.tree.apply import apply_in_index


def show(store: Store, spec: str) -> str:
    s = store.load(spec)
    info = s.inputs.record
    out = [f"{s.name} v{s.version}: {s.title}",
           f"  tree: {s.tree or '-'}   base-commit: {s.base_commit or '(none)'}",
           f"  date: {info.get('date', '-')}   source: {info.get('source', '-')}"]
    if info.get("lore"):
        out.append(f"  lore: {info['lore']}")
    if info.get("carried-from"):
        # A carry is no posting: say so before anything is read as one.
        out.append(f"  carried from: {info['carried-from']} (not a posting; its history is "
                   "that one's; series.toml says what the carry changed)")
    trailers = info.get("trailers", {})
    for i, p in enumerate(s.patches, 1):
        out.append(f"  {i}/{len(s.patches)} {p.subject.title}")
        try:
            ps = parse_diff(p.diff, p.origin)
        except UnparsableDiff as exc:
            out.append(f"      {p.author}  {exc.reason}")
            ps = []
        else:
            out.append(f"      {p.author}  {len(ps)} files, +{ps.added} -{ps.removed}")
        for f in ps:
            out.append(f"        {f.path}  +{f.added} -{f.removed}")
        for key, value, _line in p.trailers:
            out.append(f"      {key}: {value}")
        for t in trailers.get(str(i), []):
            out.append(f"      {t}  (from a reply)")
    for t in trailers.get("0", []):
        out.append(f"  series: {t}  (from a reply to the cover)")
    return "\n".join(out) + "\n"


def range_diff(store: Store, name: str, va: str, vb: str, repo: Path, base: str | None) -> str:
    repo = gitutil.require_repo(repo)
    ends = []
    for v in (va, vb):
        s = store.load(f"{name}@{v if v.startswith('v') else 'v' + v}")
        res = apply_in_index(repo, s, base)
        if res.failure:
            raise NapipatchError(f"{name}@v{s.version}", str(res.failure))
        ends.append(f"{res.base}..{res.tip}")
    return gitutil.git(repo, "range-diff", "--no-color", *ends).stdout
