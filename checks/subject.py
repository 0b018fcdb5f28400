"""Subject lines in netdev form: ``[PATCH net-next vN M/T] subsys: summary``.

What it catches:
    A patch subject without a ``[PATCH ...]`` tag, or without a subsystem
    prefix after it (``net:``, ``net: core:``, ``selftests: net:``,
    ``eth: idpf:``). A summary that ends in a full stop, or longer than 75
    characters with the tag. (A missing tree tag, ``net`` or ``net-next``,
    is series-format's: NIPA judges it once per series.)

Why a reviewer cares:
    Maintainers and patchwork route and triage by the tag; ``git log
    --oneline`` of net/ is read by subsystem prefix. On the threaded busy
    poll v4 series, patches 1 and 3 had no prefix while 2 and 4 did.

Example:
    ``[PATCH net-next v4 1/4] Add support to set napi threaded``

Fix:
    ``[PATCH net-next v4 1/4] net: add support to set napi threaded``
    (``git format-patch --subject-prefix="PATCH net-next"``).
"""

from __future__ import annotations

from napipatch.checks import check


@check(id="subject",
       summary="[PATCH tree vN M/T] form, subsystem prefix",
       scope="patch",
       needs="diff",
       version=2)
def run(ctx):
    s = ctx.mail.subject
    if not s.is_patch:
        yield ctx.finding("warning", f"subject has no [PATCH ...] tag: {s.raw!r}",
                          hint="send with git format-patch / git send-email")
    if not s.subsystem:
        yield ctx.finding("warning", f"no subsystem prefix in {s.title!r}",
                          hint="start the summary with the subsystem, e.g. 'net: ' or 'eth: idpf: '")
    if s.title.endswith("."):
        yield ctx.finding("info", "summary ends with a full stop",
                          hint="drop the trailing '.'")
    if len(s.title) > 75:
        yield ctx.finding("info", f"summary is {len(s.title)} characters long",
                          hint="keep the summary short; details go in the message")
