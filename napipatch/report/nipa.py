"""The netdev CI's (NIPA's) patchwork contexts: what each one tests, and
when NIPA answers it without testing anything.

NIPA (linux-netdev/nipa, read at 95a29267) runs every test in its
``tests/patch/`` on each patch and every one in ``tests/series/`` once, and
posts each result to patchwork as a check named after the test (its
*context*): success, warning or fail, with a one-line description. A
series test's result is posted on every patch of the series
(``pw_upload.py``), as are ``tree_selection`` (always success) and
``apply`` (posted only when the series does not apply; then nothing else
runs). Tests that do not concern a patch (no Rust file for
``build_clang_rust``) exit 0: patchwork shows success with NIPA's "skip"
line, which ``skip`` below reproduces from the files the patch touches.

Which NIPA tests netdev's deployment enables is its configuration, not in
NIPA's repository; this is the set in its ``tests/`` directories. The
checks that answer for a context say so with ``@check(nipa=...)``; the
``note`` here says why napipatch gives no answer where it has no check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from napipatch.mails.hunks import UnparsableDiff, parse_diff
from napipatch.mails.mail import PatchMail

# NIPA's dtbs_check builds the device trees of these architectures.
_DTS_ARCHES = ("arc", "arm", "arm64", "csky", "loongarch", "microblaze", "mips", "nios2",
               "openrisc", "powerpc", "riscv", "sh", "xtensa")

Files = list[tuple[str, str]]  # (path, A|M|D|R) of one patch


def touched(mail: PatchMail) -> Files | None:
    """The files a patch changes, with git's status letter; None when its
    diff cannot be read (then no "NIPA skips it" is forecast)."""
    try:
        diff = parse_diff(mail.diff)
    except UnparsableDiff:
        return None
    out = []
    for pf in diff:
        status = "A" if pf.is_added_file else "D" if pf.is_removed_file else \
            "R" if pf.is_rename else "M"
        out.append((pf.path, status))
    return out


def _added_or_modified(files: Files, pattern: str) -> bool:
    """As ``git show --diff-filter=AM --name-only | grep -E pattern``."""
    return any(st in "AM" and re.search(pattern, p) for p, st in files)


def _skip_unless(pattern: str, text: str, am_only: bool = True) -> Callable[[Files], str]:
    def skip(files: Files) -> str:
        hit = _added_or_modified(files, pattern) if am_only else \
            any(re.search(pattern, p) for p, _st in files)
        return "" if hit else text
    return skip


def _dtbs_skip(files: Files) -> str:
    pattern = r"^Documentation/devicetree/bindings/|^arch/(" + "|".join(_DTS_ARCHES) + \
        r")/boot/dts/"
    return "" if _added_or_modified(files, pattern) else \
        "No DT schema or DTS files touched, skip"


@dataclass(frozen=True)
class Context:
    """One NIPA test, as patchwork shows it.

    Attributes:
        name: the patchwork context (NIPA's test directory).
        scope: ``patch`` (run on each patch) or ``series`` (run once,
            posted on every patch).
        rule: NIPA's rule in one line (the docs' table).
        note: why napipatch gives no answer here, for a context no check
            answers for ("" where one does).
        partial: what of NIPA's rule napipatch does not do, where a check
            answers for the context in part (the description of the
            "unknown" its check gives where that part matters).
        skip: the patch's files -> NIPA's own "skip" description when NIPA
            does not test the patch and posts success; "" when it tests.
        on_success: NIPA posts the context when it passes (``apply`` is
            posted only when the series does not apply).
        answered: what answers it where no registered check does ("" when a
            check answers or nothing does).
        partial_by: the check that does what ``partial`` names: once it
            completed, another check's "unknown" for that part no longer
            holds (``ynl``'s regeneration check and ``ynl-build``).
    """

    name: str
    scope: str
    rule: str
    note: str = ""
    partial: str = ""
    skip: Callable[[Files], str] | None = None
    on_success: bool = True
    answered: str = ""
    partial_by: str = ""


# Why a build context is unknown though its job ran (a finding says which
# header and how many objects): NIPA compiles everything, napipatch a sample.
_SAMPLED = ("not every object NIPA builds was compiled here (a changed header's includers "
            "are sampled; the job's info says how many)")


CONTEXTS: tuple[Context, ...] = (
    Context("apply", "series", "the series applies to the target tree; only posted when it "
            "does not, and then no other test runs", on_success=False),
    Context("tree_selection", "series", "which tree the series is for (always success; the "
            "description says how it was chosen)",
            answered="the forecast, from the tree tag in the subjects"),
    Context("series_format", "series", "cover letter from 3 patches (warning); at most 15 "
            "patches (fail); a tree tag in the subject (warning)"),
    Context("fixes_present", "series", "a series for net (no \"next\") has a Fixes: tag, "
            "unless it changes only Documentation/ or MAINTAINERS"),
    Context("maintainers", "series", "each new file falls in a MAINTAINERS section of 1-74 "
            "files (warning; fail from 500)"),
    Context("ynl", "series", "ynl-regen.sh -f leaves the tree clean; tools/net/ynl builds "
            "without warnings",
            partial="the generated code is checked, but tools/net/ynl was not built "
                    "(ynl-build: napipatch test warnings)",
            partial_by="ynl-build"),
    Context("contest", "series", "the series merged into a test branch: kselftests in "
            "virtme-ng (crashes scanned, a failure retried) and KUnit; posted on every patch: "
            "success when every test passed, warning when one skipped, pending when one "
            "failed (pw_contest.py's code_to_pw); napipatch runs the selftests the series "
            "changes or exercises and its target's list, not NIPA's whole set"),
    Context("ai-review", "patch", "net and net-next series of at most 24 patches (longer: "
            "warning): an LLM agent with netdev's review prompts; warning on each patch it "
            "commented on, success on the others"),
    Context("build_allmodconfig_warn", "patch", "allmodconfig W=1 C=1 (sparse): fail when "
            "the build fails or the count of warning lines grows", partial=_SAMPLED),
    Context("build_32bit", "patch", "ARCH=i386 allmodconfig W=1: fail when warnings grow",
            partial=_SAMPLED),
    Context("build_clang", "patch", "LLVM=1 allmodconfig W=1: fail when warnings grow",
            partial=_SAMPLED),
    Context("build_clang_rust", "patch", "LLVM=1 allmodconfig with Rust, when a .rs file "
            "changes: fail when warnings grow",
            note="a Rust-enabled LLVM=1 allmodconfig build of the whole tree (hours on 2 cores) "
                 "with a rustc at least the tree's scripts/min-tool-version.sh (6.12: 1.78, "
                 "7.2: 1.85), bindgen and rust-src: napipatch does not build Rust (measured "
                 "here: rustup's rustc 1.95.0 without rust-src or bindgen; Debian 12's rustc is "
                 "1.63)",
            skip=_skip_unless(r"\.rs$", "No Rust files in patch. Skipping build",
                              am_only=False)),
    Context("build_tools", "patch", "when include/ or tools/ change: make headers and the "
            "selftests; fail when warnings or untracked files grow",
            partial="not every selftest target NIPA builds was built here (the job's info "
                    "says which)",
            # NIPA's own pattern: a path starting "include" or holding "tools/".
            skip=_skip_unless(r"^(include)|(tools)/", "No tools touched, skip", am_only=False)),
    Context("cc_maintainers", "patch", "get_maintainer.pl's people are on To/Cc; the author "
            "of a commit named in Fixes: must be"),
    Context("check_selftest", "patch", "a new selftest is in its Makefile (and .gitignore); "
            "config, .gitignore and Makefile lists sorted"),
    Context("checkpatch", "patch", "checkpatch.pl --strict --codespell with NIPA's ignore "
            "list: warning at 0 errors but warnings or checks"),
    Context("deprecated_api", "patch", "new module_param (fail); new dev_hold/dev_put/"
            "get_net/put_net/init_dummy_netdev, __free() in drivers/net (warning)"),
    Context("dt_binding_check", "patch", "make dt_binding_check when a DT binding changes: "
            "fail when its warnings grow",
            partial="not every binding NIPA checks was checked here (the changed ones and "
                    "those that $ref them, bounded; the job's info says which)",
            skip=_skip_unless(r"^Documentation/devicetree/bindings/",
                              "No DT binding files touched, skip")),
    Context("dtbs_check", "patch", "make dtbs CHECK_DT_BINDING=y for the touched "
            "architectures: fail when its warnings grow",
            note="allmodconfig and make dtbs CHECK_DT_BINDING=y for each of 13 architectures "
                 "(all 13 when a binding changes), host gcc behind a shim, at the parent and "
                 "the patch: napipatch does not build them",
            skip=_dtbs_skip),
    Context("header_inline", "patch", "a static function without inline added in a .h"),
    Context("kdoc", "patch", "kernel-doc -Wall on the touched files: fail when a warning "
            "is new"),
    Context("pylint", "patch", "changed .py: more errors fail, more warnings warning",
            skip=_skip_unless(r"\.py$", "No python scripts touched, skip")),
    Context("ruff", "patch", "changed .py: more ruff findings fail",
            skip=_skip_unless(r"\.py$", "No python scripts touched, skip")),
    Context("shellcheck", "patch", "changed .sh (shellcheck -x): more errors fail, more "
            "warnings warning; in a new file every finding counts",
            skip=_skip_unless(r"\.sh$", "No shell scripts touched, skip")),
    Context("signed", "patch", "patatt validates the mail's signature; unsigned is a warning"),
    Context("source_inline", "patch", "inline added in a .c (warning when as many removed)"),
    Context("verify_fixes", "patch", "Fixes: names an ancestor by 12+ hex digits, with its "
            "subject, well-formed"),
    Context("verify_signedoff", "patch", "Signed-off-by from the author and the committer"),
    Context("yamllint", "patch", "changed .yaml: more errors fail, more warnings warning",
            skip=_skip_unless(r"\.yaml$", "No YAML files touched, skip")),
)

BY_NAME = {c.name: c for c in CONTEXTS}
