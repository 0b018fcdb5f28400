"""``series export``: git format-patch --base into the store, with a cover
letter rendered from templates/cover-letter.j2 and the changelog of every
earlier version (with lore links)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from napipatch.errors import NapipatchError
from napipatch.mails import mail as mailmod
from napipatch.mails.series import assemble, check_name
from napipatch.report.render import render
from napipatch.mails.revisions import has_trailer
from napipatch.store.history import history_of
from napipatch.store.store import LORE_LINK, Store
from napipatch.tree import gitutil
from napipatch.tree.gitutil import git, patch_id

_VHEAD = re.compile(r"^v(\d+)\s*:?\s*(.*)$")


def parse_changelog(text: str) -> dict[int, list[str]]:
    """``vN:`` blocks of a cover changelog -> {N: [lines]} (links dropped)."""
    out: dict[int, list[str]] = {}
    cur = None
    for line in (text or "").splitlines():
        m = _VHEAD.match(line.strip()) if not line.startswith((" ", "\t", "-")) else None
        if m:
            cur = int(m.group(1))
            out.setdefault(cur, [])
            continue
        if cur is not None and line.strip() and not line.strip().startswith("http"):
            out[cur].append(line.rstrip())
    return out


def changelog_entries(store: Store, name: str, version: int, changes: str) -> list[dict]:
    """Newest first: this version's changes, then each earlier version's."""
    rec = store.record(name) if (store.path(name) / "series.toml").is_file() else {}
    versions = rec.get("versions", {})
    known: dict[int, list[str]] = {}
    links: dict[int, str] = {}
    for key, info in versions.items():
        v = int(key[1:])
        if info.get("lore"):
            links[v] = info["lore"]
        elif info.get("cover-message-id"):
            links[v] = LORE_LINK.format(msgid=info["cover-message-id"])
        for cv, lines in parse_changelog(info.get("changelog", "")).items():
            known.setdefault(cv, lines)  # the first version that told it wins
    if changes.strip():
        # Keep the user's indentation: " - item" stays as written.
        known[version] = [ln if ln.startswith((" ", "-")) else f" - {ln}"
                          for ln in changes.strip("\n").splitlines() if ln.strip()]
    return [{"version": v, "lines": known.get(v, []), "link": links.get(v - 1)}
            for v in sorted(set(known) | {v + 1 for v in links if v + 1 <= version}, reverse=True)
            if 1 < v <= version]


def _cover_text(store: Store, name: str, version: int) -> tuple[str, str]:
    """Title and blurb from the newest earlier version's cover letter."""
    try:
        prev = [v for v in store.versions(name) if v < version]
    except NapipatchError:
        prev = []
    if not prev:
        return "", ""
    s = store.load(f"{name}@v{prev[-1]}")
    if not s.cover:
        return s.title, ""
    body = s.cover.message
    cut = re.search(r"^(v\d+\s*:|changes (in|since) v\d+)", body, re.I | re.M)
    blurb = body[: cut.start()] if cut else body
    return s.cover.subject.title, blurb.strip("\n")


def export_series(store: Store, repo: Path, revrange: str, name: str, version: int | None,
                  tree_tag: str, base: str = "auto", title: str | None = None,
                  blurb: str | None = None, changes: str = "", force: bool = False,
                  results: dict | None = None, carry: bool = False,
                  carried: list[dict] | None = None) -> Path:
    """Export ``revrange`` as NAME@vN; ``results`` (napipatch.bench.render.results)
    renders a recorded latency run as the cover letter's results section.

    ``carried`` (a list to fill): the review trailers given on the previous
    version for a patch whose diff did not change and that the commit
    lacks (what the review-tags check warns about), ``{"patch", "trailer",
    "in", "carried"}``; with ``carry`` they are added to the patches."""
    check_name(name)
    repo = gitutil.require_repo(repo)
    if version is None:
        try:
            vs = store.versions(name)
        except NapipatchError:
            vs = []
        version = (vs[-1] + 1) if vs else 1
    ptitle, pblurb = _cover_text(store, name, version)
    title = title or ptitle or "*** SUBJECT HERE ***"
    blurb = blurb if blurb is not None else (pblurb or "*** BLURB HERE ***")
    with tempfile.TemporaryDirectory(prefix="napipatch-fp-") as td:
        args = ["format-patch", "-q", f"--base={base}", "--cover-letter",
                "--subject-prefix", f"PATCH {tree_tag}".strip(), "-o", td]
        if version > 1:
            args += ["-v", str(version)]
        cp = git(repo, *args, revrange, check=False)
        if cp.returncode != 0:
            last = (cp.stderr.strip().splitlines() or ["git format-patch failed"])[-1]
            hint = " (no upstream for --base=auto: pass --base REV)" if "upstream" in last else ""
            raise NapipatchError(revrange, last.removeprefix("fatal: ") + hint)
        files: dict[str, str] = {}
        for f in sorted(Path(td).iterdir()):
            fname = re.sub(r"^v\d+-", "", f.name)
            files[fname] = f.read_text()
    if len(files) < 2:
        raise NapipatchError(revrange, "no commits in range")
    cover_name = "0000-cover-letter.patch"
    files[cover_name] = _fill_cover(files[cover_name], title, blurb,
                                    changelog_entries(store, name, version, changes), results)
    series = _assembled(files, revrange, name, version)
    if carried is not None or carry:
        got = _carry(store, series, files, carry)
        if carried is not None:
            carried += got
        if carry and got:
            series = _assembled(files, revrange, name, version)
    return store.add_version(series, source=f"git {repo.name} {revrange}", force=force,
                             exported_from=revrange, files=files)


def _assembled(files: dict[str, str], source: str, name: str, version: int):
    mails = []
    for fname, text in files.items():
        mails += [mailmod.parse_message(raw, fname, env)
                  for env, raw in mailmod.split_mbox(text.encode(), fname)]
    return assemble(mails, source, name=name, version=version)


def _carry(store: Store, series, files: dict[str, str], carry: bool) -> list[dict]:
    """The trailers the previous version got for an unchanged patch that this
    one lacks (``store.history``, compared by patch-id as review-tags does);
    with ``carry``, each is written into its patch file, before the last
    Signed-off-by of the commit message (the sender's stays last)."""
    prev = history_of(series, store).get("previous") or {}
    old = {q["patch-id"]: q for q in prev.get("patches", []) if q.get("patch-id")}
    found: list[dict] = []
    names = [f for f in sorted(files) if re.match(r"^\d{4}-", f) and not f.startswith("0000-")]
    for n, (mail, fname) in enumerate(zip(series.patches, names), 1):
        was = old.get(patch_id(mail.diff))
        if was is None:
            continue
        want = []
        for t in was["trailers"]:
            if not has_trailer(mail.trailers, t["trailer"]) and t["trailer"] not in want:
                want.append(t["trailer"])
                found.append({"patch": n, "total": len(series.patches), "trailer": t["trailer"],
                              "in": f"v{prev['version']} {was['n']}/{len(prev['patches'])}, "
                                    f"{t['in']}", "carried": carry})
        if carry and want:
            files[fname] = _with_trailers(files[fname], want)
    return found


def _with_trailers(text: str, trailers: list[str]) -> str:
    """``text`` (a format-patch file) with ``trailers`` in its commit message."""
    head, sep, rest = text.partition("\n---\n")
    lines = head.split("\n")
    sob = max((i for i, ln in enumerate(lines) if ln.lower().startswith("signed-off-by:")),
              default=None)
    if sob is None:
        lines += ([""] if lines[-1].strip() else []) + trailers
    else:
        lines[sob:sob] = trailers
    return "\n".join(lines) + sep + rest


def _fill_cover(text: str, title: str, blurb: str, entries: list[dict],
                results: dict | None = None) -> str:
    body = render("cover-letter.j2", blurb=blurb, changelog=entries,
                  results=results).rstrip("\n")
    text = text.replace("*** SUBJECT HERE ***", title, 1)
    return text.replace("*** BLURB HERE ***", body, 1)
