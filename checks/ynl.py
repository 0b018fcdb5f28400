"""YNL netlink specs and the code generated from them stay in step.

What it catches:
    For a patch touching ``Documentation/netlink/specs/*.yaml`` or a file
    with a ``/* YNL-GEN ... */`` header:

    - a spec that does not validate against its schema
      (``Documentation/netlink/genetlink*.yaml`` or ``netlink-raw.yaml``,
      picked by ``protocol:``);
    - a generated file (``include/uapi/linux/X.h``, ``net/.../X-gen.[ch]``,
      ``tools/include/uapi/linux/X.h`` ...) whose post-patch content is not
      what the generator makes from the post-patch spec: the generated code
      was not regenerated, or was edited by hand;
    - ``include/uapi/linux/X.h`` and ``tools/include/uapi/linux/X.h`` that
      differ after a patch touching either (when they were in sync before),
      for a header the YNL generator makes (``netdev.h``); for a
      hand-written header (``if_addr.h``, ``rtnetlink.h``, ``if_tun.h``)
      that is only an info line, as its tools/ copy is synced separately;
    - spec warnings: an attribute added to an attribute-set used by
      operations but listed by none of them, an enum added to
      ``definitions`` that no attribute uses, ``checks: max:``/``min:``
      contradicting the attribute's enum.

    Only the families the patch affects are regenerated, with the trusted
    generator of the base commit (``tools/net/ynl/ynl-gen-c.py``, or
    ``tools/net/ynl/pyynl/ynl_gen_c.py`` in newer trees) in a scratch
    directory, a family's files in one interpreter
    (``napipatch/kernel/ynlbatch.py``); an info line says which. Generated
    files are found as ``ynl-regen.sh`` finds them, by their ``YNL-GEN``
    header.

    NIPA's ynl test runs ``ynl-regen.sh -f`` on the whole series and
    fails when the tree is dirty (napipatch's errors here), then builds
    ``tools/net/ynl``, which napipatch does not: where a patch regenerates
    a family, the NIPA forecast for ynl is "unknown" unless it fails.
    The spec warnings are napipatch's own.

Why a reviewer cares:
    The netdev CI runs ``ynl-regen.sh -f`` and fails the series when the
    tree is not clean afterwards, hours after posting. A stale uapi header
    ships the wrong ABI; a stale tools/ copy breaks the YNL library and the
    selftests built against it. An attribute no operation lists is never
    sent to user space.

Example:
    The threaded busy poll v4 series adds the ``threaded`` attribute and the
    ``napi-threaded`` enum to ``netdev.yaml``; a version that edits the spec
    but not ``include/uapi/linux/netdev.h`` gets::

        error: include/uapi/linux/netdev.h is not what ynl-gen-c.py makes
        from Documentation/netlink/specs/netdev.yaml

Fix:
    ``tools/net/ynl/ynl-regen.sh -f`` and commit the result with the spec
    change; copy ``include/uapi/linux/X.h`` to ``tools/include/uapi/linux/``;
    list new attributes in the operations' request/reply. ``napipatch fix``
    writes what the base's generator makes from the patch's spec into each
    stale generated file (the kernel code, the uapi header, its tools/
    copy), and copies a stale tools/ uapi copy, in the patch that made them
    stale; not when the patch changes the generator itself.
"""

from __future__ import annotations

import re

from napipatch.checks import check
from napipatch.kernel import ynlspec
from napipatch.report.findings import edit_between, fix, not_fixable
from napipatch.tree import treegrep


REGEN_HINT = "tools/net/ynl/ynl-regen.sh -f"
_UAPI = re.compile(r"^(?:tools/)?include/uapi/linux/(.+\.h)$")


def _touched(ctx) -> set[str]:
    out = set()
    for pf in ctx.diff:
        for p in (pf.source_file, pf.target_file):
            if p and p != "/dev/null":
                out.add(p[2:] if p[:2] in ("a/", "b/") else p)
    return out


@check(id="ynl",
       summary="netlink specs validate; generated YNL code and uapi copies match the spec",
       scope="patch",
       needs="tree",
       version=2,
       nipa=("ynl",),
       fixes="regenerates the stale generated files with the base's generator, in the patch "
             "that changed the spec")
def run(ctx):
    if not ctx.applied:
        return []
    touched = _touched(ctx)
    findings = list(_uapi_pairs(ctx, touched))
    specs = {p for p in touched if ynlspec.is_spec(p)}
    gen_touched = []
    for p in sorted(touched):
        if p.endswith((".c", ".h")):
            g = ynlspec.parse_header(p, ctx.post_text(p) or ctx.pre_text(p) or "")
            if g:
                gen_touched.append(g)
    if not specs and not gen_touched:
        return findings
    gen_changed = any(p.startswith("tools/net/ynl/") and p.endswith(".py") for p in touched)
    findings += _families(ctx, specs, gen_touched, gen_changed)
    return findings


# ------------------------------------------------------------------ uapi copies
def _generated(ctx, *paths: str) -> bool:
    """Whether the YNL generator makes any of ``paths`` (a ``YNL-GEN`` header
    before or after the patch)."""
    return any(ynlspec.parse_header(p, text or "")
               for p in paths for text in (ctx.pre_text(p), ctx.post_text(p)))


def _uapi_pairs(ctx, touched: set[str]):
    names = sorted({m.group(1) for p in touched if (m := _UAPI.match(p))})
    for name in names:
        kern, tools = f"include/uapi/linux/{name}", f"tools/include/uapi/linux/{name}"
        k_post, t_post = ctx.post_text(kern), ctx.post_text(tools)
        if k_post is None or t_post is None or k_post == t_post:
            continue
        k_pre, t_pre = ctx.pre_text(kern), ctx.pre_text(tools)
        # Point at the copy the patch left behind (the tools one when both moved).
        stale = kern if (tools in touched and kern not in touched) else tools
        fresh = tools if stale == kern else kern
        fresh_text, stale_text = (k_post, t_post) if fresh == kern else (t_post, k_post)
        details, first = ynlspec.diff(stale_text, fresh_text, f"a/{stale}", f"b/{stale}")
        if k_pre is not None and t_pre is not None and k_pre != t_pre:
            yield ctx.finding(
                "info", f"{tools} was already out of sync with {kern} before this patch; "
                        "not comparing them", file=stale,
                hint="the tools/ copies of uapi headers are synced separately (perf/tools)")
            continue
        if not _generated(ctx, kern, tools):
            # Hand-written headers: upstream syncs their tools/ copies
            # separately, and accepts patches that change one copy.
            yield ctx.finding(
                "info", f"{stale} differs from {fresh} after this patch; {name} is not "
                        "generated by YNL, so its tools/ copy is synced separately",
                file=stale, line=first, details=details, hint=f"cp {fresh} {stale} (optional)")
            continue
        yield ctx.finding(
            "error", f"{stale} differs from {fresh} after this patch",
            file=stale, line=first, details=details, hint=f"cp {fresh} {stale} (or {REGEN_HINT})",
            fix=fix(f"copied {fresh} to {stale}", edit_between(stale, stale_text, fresh_text)))


# ------------------------------------------------------------------ families
def _generated_files(ctx) -> list[ynlspec.Generated]:
    """Every generated file in the post-patch tree, found as ynl-regen.sh does."""
    found = ctx.tree.grep.grep(ctx.post, treegrep.regex(ynlspec.GEN_REGEX, fixed=ynlspec.GEN_FIXED))
    out = []
    for path in sorted(found):
        g = ynlspec.parse_header(path, ctx.post_text(path) or "")
        if g:
            out.append(g)
    return out


def _families(ctx, specs: set[str], gen_touched: list[ynlspec.Generated], gen_changed: bool):
    """Check each family the patch affects (its spec, then its generated files
    regenerated), and say in one line which families were regenerated."""
    all_gen = _generated_files(ctx)
    by_spec: dict[str, list[ynlspec.Generated]] = {}
    for g in all_gen:
        by_spec.setdefault(g.spec, []).append(g)
    affected = sorted(specs | {g.spec for g in gen_touched})
    scripts = ctx.tree.scripts
    schemas = sorted(p.name for p in (scripts / "Documentation/netlink").glob("*.yaml"))
    hand_edited = {g.path for g in gen_touched}
    findings = []
    regenerated: list[tuple[str, str, list[str]]] = []
    for spec_path in affected:
        files = by_spec.get(spec_path, [])
        edited = spec_path in specs
        got, post, family = _check_spec(ctx, spec_path, files, edited)
        findings += got
        if post is None:
            continue
        results = ynlspec.regenerate(scripts, files, _generator_inputs(ctx, spec_path, post,
                                                                       schemas))
        stale = 0
        for r in results:
            finding = _compare_generated(ctx, spec_path, r, edited, hand_edited, gen_changed)
            if finding is not None:
                stale += 1
                findings.append(finding)
        regenerated.append(_family_state(family, results, stale))
    if regenerated:
        findings.append(_regenerated_summary(ctx, regenerated, all_gen))
    return findings


def _check_spec(ctx, spec_path: str, files: list[ynlspec.Generated],
                edited: bool) -> tuple[list, str | None, str]:
    """Findings about the spec itself; its post-patch text only when its family
    should be regenerated (it exists, validates and has generated files), and
    its family name."""
    post = ctx.post_text(spec_path)
    if post is None:
        return [ctx.finding(
            "error", f"{g.path} is generated from {spec_path}, which this patch removes",
            file=g.path, hint="remove the generated files with the spec")
            for g in files], None, ""
    try:
        spec = ynlspec.load(post)
    except Exception:  # noqa: BLE001 - reported by validate() below
        spec = None
    family = ynlspec.family_name(spec_path, spec)
    findings = []
    valid = True
    if edited:
        got, valid = _validate(ctx, spec_path, post, spec)
        findings += got
        if valid and isinstance(spec, dict):
            findings += _lint(ctx, spec_path, post, spec)
    if not valid:
        findings.append(ctx.finding(
            "info", f"not regenerating {family}: {spec_path} does not validate"))
        return findings, None, family
    if not files:
        if edited:
            findings.append(ctx.finding(
                "info", f"{spec_path}: no file in the tree is generated from it"))
        return findings, None, family
    return findings, post, family


def _generator_inputs(ctx, spec_path: str, post: str, schemas: list[str]) -> dict[str, str]:
    """The post-patch spec and schemas: the generator reads them, not the base's."""
    inputs = {spec_path: post}
    for name in schemas:
        text = ctx.post_text(f"{ynlspec.SCHEMA_DIR}{name}")
        if text is not None:
            inputs[f"{ynlspec.SCHEMA_DIR}{name}"] = text
    return inputs


def _compare_generated(ctx, spec_path: str, r, edited: bool, hand_edited: set[str],
                       gen_changed: bool):
    """A finding when a generated file is not what the generator makes (or the
    generator fails); None when it matches."""
    have = ctx.post_text(r.file.path) or ""
    if r.text is None:
        return ctx.finding(
            "error", f"the YNL generator fails on {spec_path} ({r.file.mode} "
                     f"{r.file.kind} for {r.file.path})",
            file=spec_path, details=r.error, hint="fix the spec; then " + REGEN_HINT)
    if r.text == have:
        return None
    details, first = ynlspec.diff(have, r.text, f"a/{r.file.path}",
                                  f"b/{r.file.path} (regenerated)")
    why = (" (not regenerated after the spec change)"
           if edited and r.file.path not in hand_edited
           else " (edited by hand?)")
    if gen_changed:
        # The patch changes the generator, which napipatch never runs:
        # the base copy's output is only an indication.
        why = (" by the base commit's generator; this patch changes the generator, "
               "so the difference may be intended")
    return ctx.finding(
        "warning" if gen_changed else "error",
        f"{r.file.path} is not what the YNL generator makes from {spec_path}" + why,
        file=r.file.path, line=first, details=details, hint=REGEN_HINT,
        fix=not_fixable("this patch changes the generator, and napipatch runs only the "
                        "base's") if gen_changed else
        fix(f"regenerated it from {spec_path} with the base's generator",
            edit_between(r.file.path, have, r.text)))


def _family_state(family: str, results, stale: int) -> tuple[str, str, list[str]]:
    """One family's line for the summary, and its files for the details."""
    n = len(results)
    state = f"{n} files match" if not stale else f"{stale} of {n} files differ"
    return (family, state, [f"{family}: {r.file.mode} {r.file.kind}: "
                            f"{r.file.path}" for r in results])


def _regenerated_summary(ctx, regenerated: list[tuple[str, str, list[str]]],
                         all_gen: list[ynlspec.Generated]):
    """One line: which families were regenerated, out of how many."""
    total = len({g.spec for g in all_gen})
    return ctx.finding(
        "info", "regenerated " + "; ".join(f"{fam}: {state}" for fam, state, _ in regenerated)
                + f" ({len(regenerated)} of {total} YNL families in the tree; "
                  "the others are not affected by this patch)",
        details="\n".join(ln for _, _, lines in regenerated for ln in lines),
        # NIPA's ynl test also builds tools/net/ynl with the regenerated
        # code, which napipatch does not: its state is not known here.
        nipa={"ynl": "unknown"})


def _validate(ctx, spec_path: str, post: str, spec) -> tuple[list, bool]:
    schema_rel = ynlspec.schema_path(spec) if isinstance(spec, dict) else None
    schema = ctx.post_text(schema_rel) if schema_rel else None
    if isinstance(spec, dict) and schema is None:
        return [ctx.finding("error", f"{spec_path}: no schema {schema_rel} for protocol "
                                     f"{spec.get('protocol', 'genetlink')!r}",
                            file=spec_path, hint="use genetlink, genetlink-c, genetlink-legacy "
                                                 "or netlink-raw")], False
    problems = ynlspec.validate(post, schema or "{}")
    if not problems:
        return [], True
    pre = ctx.pre_text(spec_path)
    old = set()
    if pre is not None and schema_rel:
        old = {p.key for p in ynlspec.validate(pre, ctx.pre_text(schema_rel) or schema or "{}")}
    out = [ctx.finding("error", _problem_text(spec_path, schema_rel, p), file=spec_path,
                       line=p.line, hint="see Documentation/userspace-api/netlink/specs.rst")
           for p in problems if p.key not in old]
    return out, False


def _problem_text(spec_path: str, schema_rel: str | None, p) -> str:
    if p.key in ("yaml", "schema"):   # the spec or its schema does not load
        return f"{spec_path} {p.message}" if p.key == "yaml" else \
            f"{spec_path}: {schema_rel or 'schema'}: {p.message}"
    return f"{spec_path} does not validate against {schema_rel or 'YAML'}: {p.message}"


def _lint(ctx, spec_path: str, post: str, spec: dict) -> list:
    pre = ctx.pre_text(spec_path)
    old = set()
    if pre is not None:
        try:
            old = {p.key for p in ynlspec.lint(ynlspec.load(pre), {})}
        except Exception:  # noqa: BLE001 - an unparsable old spec has no old warnings
            old = set()
    hints = {"noop": "add it to the request or reply attributes of the operations that "
                     "should carry it",
             "unused": "use it as 'enum:' of an attribute, or drop it",
             "checks": "drop the checks (the enum bounds the value) or make them match the enum"}
    # A split series may add a definition in one patch and its user in a
    # later one (as the reviewers asked of threaded busy poll): judge such a
    # warning by the spec at the end of the series too.
    later = _tip_keys(ctx, spec_path)
    out = []
    for p in ynlspec.lint(spec, ynlspec.line_map(post)):
        if p.key in old:
            continue
        if later is not None and p.key not in later:
            out.append(ctx.finding("info", f"{spec_path}: {p.message} (a later patch of the "
                                   "series resolves it)", file=spec_path, line=p.line))
            continue
        out.append(ctx.finding("warning", f"{spec_path}: {p.message}", file=spec_path,
                               line=p.line, hint=hints[p.key.split(":")[0]],
                               nipa={}))  # NIPA does not lint specs
    return out


def _tip_keys(ctx, spec_path: str) -> set | None:
    """Lint keys of the spec at the series' tip, when that is a later commit."""
    tip = ctx.tree.applied.tip if ctx.tree else None
    if tip is None or ctx.n >= ctx.total:
        return None
    text = ctx.tree.text(tip, spec_path)
    if text is None:
        return None
    try:
        return {p.key for p in ynlspec.lint(ynlspec.load(text), {})}
    except Exception:  # noqa: BLE001 - an unparsable spec at the tip: no opinion
        return None
