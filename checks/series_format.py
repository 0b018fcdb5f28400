"""Series shape: cover letter, size, numbering, versions, changelog.

What it catches:
    NIPA's series_format (tests/series/series_format), with its split: a
    series of three or more patches without a cover letter (warning); more
    than 15 patches (fail: error here); no tree tag (``net``, ``net-next``)
    in any subject (warning).

    napipatch's own, which NIPA does not flag: two patches without a cover
    letter (info: NIPA lets a feature and its selftest go without one);
    numbering with gaps or a total that disagrees; patches that carry
    different ``vN`` tags; from v2 on, a cover letter without a changelog
    (``vN:`` / ``Changes in vN``); a cover letter that still says
    ``*** SUBJECT HERE ***`` or ``*** BLURB HERE ***``.

Why a reviewer cares:
    netdev's rules (Documentation/process/maintainer-netdev.rst): at most
    15 patches, a cover letter for multi-patch series, and a per-version
    changelog with links to earlier postings so reviewers can see what
    changed since they last looked. The netdev CI's ``series_format``
    fails these, hours after posting.

Example:
    ``[PATCH net-next v2 0/3]`` whose cover letter has no ``v2:`` section.

Fix:
    ``git format-patch --cover-letter -v N`` and write the changelog in the
    cover letter (``napipatch series export`` renders it for you).

    A revision range checked with ``--tree`` gets format-patch's
    placeholder cover letter; its text is not judged.
"""

from __future__ import annotations

from napipatch.checks import check


MAX_PATCHES = 15


@check(id="series-format",
       summary="cover letter, at most 15 patches, tree tag, numbering, versions, changelog",
       scope="series",
       needs="diff",
       version=2,
       nipa=("series_format",))
def run(ctx):
    s = ctx.series
    n = len(s.patches)
    if n >= 2 and s.cover is None:
        yield ctx.finding("warning" if n >= 3 else "info", f"{n} patches without a cover letter",
                          hint="git format-patch --cover-letter; explain the series in patch 0")
    if n > MAX_PATCHES:
        yield ctx.finding("error", f"{n} patches: netdev takes at most {MAX_PATCHES} per series",
                          hint="split it into smaller series posted one after another")
    if s.mails and s.tree is None:
        yield ctx.finding("warning", "no tree tag (net or net-next) in the subject",
                          hint='git format-patch --subject-prefix="PATCH net-next"')
    for i, m in enumerate(s.patches, 1):
        subj = m.subject
        if n > 1 and not subj.has_counter:
            yield ctx.finding("warning", f"patch {i} has no M/N counter in its subject",
                              patch=i, hint="git format-patch numbers patches of a series",
                              nipa={})  # the rest is napipatch's own
        elif subj.has_counter and (subj.index != i or subj.total != n):
            yield ctx.finding("error", f"patch {i} is numbered {subj.index}/{subj.total} "
                              f"in a series of {n}", patch=i, nipa={})
    versions = {m.subject.version for m in s.mails}
    if len(versions) > 1:
        yield ctx.finding("error", "patches carry different versions: " +
                          ", ".join(f"v{v}" for v in sorted(versions)),
                          hint="re-send the whole series with one -v N", nipa={})
    if s.cover and not s.inputs.synthetic_cover:
        body = s.cover.body
        if "*** SUBJECT HERE ***" in s.cover.subject.raw or "*** BLURB HERE ***" in body:
            yield ctx.finding("error", "the cover letter still has format-patch's placeholder text",
                              hint="write the cover letter (or use napipatch series export)",
                              nipa={})
        if s.version >= 2 and not s.changelog:
            yield ctx.finding("warning", f"v{s.version} cover letter has no changelog",
                              hint=f"add a 'v{s.version}:' section listing what changed, "
                                   "with lore links to earlier versions", nipa={})
        elif s.version >= 2 and f"v{s.version}" not in s.changelog:
            yield ctx.finding("warning", f"the changelog does not say what changed in v{s.version}",
                              hint=f"add a 'v{s.version}:' entry", nipa={})
