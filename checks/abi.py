"""abi: a new sysfs attribute without its Documentation/ABI entry.

What it catches:
    A sysfs attribute the patch adds -- ``DEVICE_ATTR_RO/RW/WO``,
    ``DEVICE_ATTR``, ``__ATTR*``, ``CLASS_ATTR*``, net-sysfs.c's
    ``NETDEVICE_SHOW_RO/RW`` and ``NETSTAT_ENTRY``, the netdev queue and
    byte_queue_limits attributes, or an ``&VAR.attr`` newly listed in a
    ``struct attribute *...[]`` array -- that no ``What:`` line documents:
    neither one the series adds under ``Documentation/ABI/`` nor, with a
    tree, one already in the tree's ABI files (matched by the attribute's
    path for net-sysfs.c, ``/sys/class/net/<iface>/NAME`` and the queue
    directories, else by its name). Without a tree only the series' own ABI
    changes count, and an attribute is new when the patch does not also
    remove it.

Why a reviewer cares:
    A sysfs file is user ABI the day it is merged and cannot be taken back;
    ``Documentation/process/submitting-patches.rst`` asks for an ABI entry
    with it, and "please document the new sysfs file in
    Documentation/ABI" is a classic netdev review comment.

Example:
    ``static DEVICE_ATTR_RW(busy_poll_budget);`` and
    ``&dev_attr_busy_poll_budget.attr,`` added to net-sysfs.c's
    ``net_class_attrs`` with no change to
    ``Documentation/ABI/testing/sysfs-class-net``.

Fix:
    Add an entry (``What: /sys/class/net/<iface>/busy_poll_budget``,
    ``Date:``, ``KernelVersion:``, ``Contact: netdev@vger.kernel.org``,
    ``Description:``) to the ABI file the finding names, in the same patch.
"""

from __future__ import annotations

from napipatch.checks import check
from napipatch.kernel.abidoc import ABI_DIR, What, documented, parse_whats
from napipatch.kernel.sysfsattrs import (
    Attr,
    defined_at,
    defined_names,
    member_at,
    mentions_attr,
    resolve,
    sysfs_path,
)
from napipatch.mails.hunks import (
    added_lines,
    parse_diff,
    post_image,
    pre_image,
    source_files,
)
from napipatch.tree import treegrep


def _series_whats(ctx) -> list[What]:
    """What: lines any patch of the series adds or shows under Documentation/ABI."""
    out: list[What] = []
    for mail in ctx.series.patches:
        diff = ctx.diff if mail is ctx.mail else parse_diff(mail.diff, mail.origin)
        for pf in diff:
            if not pf.path.startswith(ABI_DIR) or pf.is_removed_file:
                continue
            for h in pf:
                img = post_image(h)
                if img:
                    out += parse_whats("\n".join(ln.text for ln in img), pf.path, img[0].new)
    return out


def _tree_whats(ctx, names: set[str]) -> list[What]:
    """What: lines of the post-patch tree's ABI files that mention any of ``names``."""
    hits = ctx.tree.grep.grep(ctx.post, treegrep.words(names, paths=(ABI_DIR + "*",)))
    out: list[What] = []
    for path in sorted(hits):
        text = ctx.post_text(path)
        if text is not None:
            out += parse_whats(text, path)
    return out


def _new_attrs(pf, pre: str | None, post: str | None) -> list[Attr]:
    """Attributes the patch defines or lists in this file that were not there before."""
    if post is not None:
        lines = dict(enumerate(post.split("\n"), 1))
        context = post
    else:
        lines = {ln.new: ln.text for h in pf for ln in post_image(h)}
        context = "\n".join(lines[n] for n in sorted(lines))
    if pre is not None:
        old_names, old_text = defined_names(pre), pre
    else:
        old = {ln.old: ln.text for h in pf for ln in pre_image(h) if ln.kind == "-"}
        old_names = {a.name for n in old if (a := defined_at(old, n))}
        old_text = "\n".join(old.values())
    out: dict[str, Attr] = {}
    for n in sorted(added_lines(pf)):
        a = defined_at(lines, n)
        if a is not None:
            if a.name not in old_names:
                out.setdefault(a.name, a)
            continue
        mem = member_at(lines, n)
        if mem is None or f"&{mem[0]}.attr" in old_text:
            continue
        got = resolve(mem[0], context)
        if got is not None:
            out.setdefault(got[0], Attr(got[0], got[1], n,
                                        f"listed in {mem[1]}" if mem[1] else "listed"))
    return list(out.values())


@check(id="abi",
       summary="new sysfs attributes without a Documentation/ABI What: entry",
       scope="patch",
       needs="diff",
       version=1)
def run(ctx):
    found: list[tuple[str, Attr]] = []
    for pf in source_files(ctx.diff):
        if pf.path.startswith(("tools/", "Documentation/", "scripts/")):
            continue
        if not any(ln.is_added and mentions_attr(ln.value) for h in pf for ln in h):
            continue
        pre = post = None
        if ctx.applied:
            post = ctx.post_text(pf.path)
            pre = None if pf.is_added_file else ctx.pre_text(pf.path)
            pre = "" if pre is None and post is not None else pre
        found += [(pf.path, a) for a in _new_attrs(pf, pre, post)]
    if not found:
        return
    whats = _series_whats(ctx)
    if ctx.applied:
        whats += _tree_whats(ctx, {a.name for _, a in found})
    for path, a in found:
        where, abi = sysfs_path(path, a)
        if documented(whats, where, a.name):
            continue
        shown = where or f"a sysfs file named '{a.name}'"
        yield ctx.finding(
            "warning",
            f"new sysfs attribute '{a.name}' ({shown}) has no Documentation/ABI entry",
            file=path, line=a.line,
            hint=f"add a 'What: {where or '/sys/.../' + a.name}' entry to {abi} in this patch",
            details=f"{a.how} by this patch; no What: line of the series"
                    + (" or of the tree" if ctx.applied else "") + " matches it")
