"""``napipatch fix``: the fixable findings of a run made fixup commits.

A check declaring ``fixes`` computes each finding's fix on the post-image
of the patch that introduced it (``Finding.fix``: edits of that patch's
files, or why it cannot). Here the edits of one patch are applied to the
files of its commit, carried onto the branch's tip with a three-way merge
(later patches may have moved those lines), and become one ``fixup!
<subject>`` commit of that patch on top of the branch, for ``git rebase -i
--autosquash BASE`` to fold where it belongs. A fix of the commit message
(a review trailer to carry) is an ``amend! <subject>`` commit instead,
whose message autosquash puts in the patch's place. Nothing is written
until every fixup is built (``napipatch.tree.fixups``); ``--diff`` writes
nothing.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from napipatch.report.findings import Finding, Severity
from napipatch.report.model import Report
from napipatch.tree import fixups


@dataclass
class PatchFix:
    """What fix does to one patch: its fixup's files and what it fixed."""

    n: int
    commit: str
    subject: str
    files: dict[str, str] = field(default_factory=dict)    # path -> text at the fixup
    before: dict[str, str] = field(default_factory=dict)   # path -> text at the tip before it
    fixed: list[Finding] = field(default_factory=list)
    unfixed: list[tuple[Finding, str]] = field(default_factory=list)
    # the commit message before and after its trailer fixes ("" when none)
    message_before: str = ""
    message_after: str = ""

    @property
    def message(self) -> str:
        """``git commit --fixup``'s subject, and what napipatch fixed in the files."""
        lines = [f"{f.file}:{f.line}: [{f.check}] {f.fix['says']}" for f in self.fixed
                 if f.fix.get("edits")]
        return f"fixup! {self.subject}\n\nnapipatch fix:\n" + "\n".join(lines) + "\n"

    @property
    def amend_message(self) -> str:
        """``git commit --fixup=amend:``'s message: the subject, then the
        patch's whole new message, which autosquash puts in its place."""
        return f"amend! {self.subject}\n\n{self.message_after}"

    def diff(self) -> str:
        """The fixup as a unified diff (``--diff``), file by file, the
        commit message first when it changes."""
        out = []
        if self.message_after:
            out += difflib.unified_diff(self.message_before.splitlines(keepends=True),
                                        self.message_after.splitlines(keepends=True),
                                        "a/COMMIT_MSG", "b/COMMIT_MSG")
        for path in sorted(self.files):
            out.append(f"diff --git a/{path} b/{path}\n")
            out += difflib.unified_diff(self.before[path].splitlines(keepends=True),
                                        self.files[path].splitlines(keepends=True),
                                        f"a/{path}", f"b/{path}")
        return "".join(out)


def _apply(text: str, edits: list[dict]) -> str | None:
    """``edits`` (one file's, non-overlapping) applied to ``text``, from the
    bottom up so that line numbers hold; None when one's old lines are not
    where it says."""
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: e["line"], reverse=True):
        at, old = e["line"] - 1, e["old"]
        if lines[at:at + len(old)] != old:
            return None
        lines[at:at + len(old)] = e["new"]
    return "\n".join(lines)


def _overlaps(e: dict, taken: list[dict]) -> bool:
    lo, hi = e["line"], e["line"] + len(e["old"])
    return any(t["file"] == e["file"] and t["line"] < hi + (not e["old"])
               and lo < t["line"] + len(t["old"]) + (not t["old"]) for t in taken)


def _choose(findings: list[Finding], pf: PatchFix) -> list[dict]:
    """The edits to make for one patch: each finding's edits once (two
    findings may ask for the same change: ynl's regenerated tools/ copy is
    also the copy of the uapi header), none overlapping another's."""
    taken: list[dict] = []
    for f in findings:
        edits = [e for e in f.fix["edits"] if e not in taken]
        if any(_overlaps(e, taken) for e in edits):
            pf.unfixed.append((f, "another fix changes the same lines"))
            continue
        taken += edits
        pf.fixed.append(f)
    return taken


def _carry(pf: PatchFix, rng: fixups.Range, tip: dict[str, str], edits: list[dict]) -> None:
    """The patch's edited files carried onto the tip (``tip``: the files as
    the fixups before this one left them); a file whose lines a later patch
    changed in a way that conflicts leaves its findings unfixed."""
    for path in sorted({e["file"] for e in edits}):
        mine = [e for e in edits if e["file"] == path]
        at_patch = fixups.text_at(rng.repo, pf.commit, path)
        fixed = None if at_patch is None else _apply(at_patch, mine)
        now = tip.get(path)
        if now is None:
            now = fixups.text_at(rng.repo, rng.head or rng.tip, path)
        why = "the file at the patch is not what the check read" if fixed is None else ""
        if not why and now is None:
            why = "a later patch removes the file"
        if not why and now != at_patch:
            fixed = fixups.merge3(at_patch, now, fixed)
            why = "" if fixed is not None else "a later patch changes the same lines"
        if not why and fixed == now:
            # a fixup made before and not folded yet: a second would be empty
            why = "a later commit of the range fixes it already (fold it: git rebase -i " \
                  "--autosquash BASE)"
        if why:
            gone = [f for f in pf.fixed if any(e["file"] == path for e in f.fix["edits"])]
            pf.fixed = [f for f in pf.fixed if f not in gone]
            pf.unfixed += [(f, why) for f in gone]
            continue
        pf.before[path], pf.files[path] = now, fixed
        tip[path] = fixed


def plan(report: Report, rng: fixups.Range) -> tuple[list[PatchFix], list[tuple[Finding, str]]]:
    """The fixup of each patch with something to fix, in patch order, and
    the error and warning findings left (each with why it is not fixed)."""
    fixes, left = [], []
    tip: dict[str, str] = {}
    by_patch: dict[int, list[Finding]] = {}
    for f in report.findings:
        if f.fixable and 0 < f.patch <= len(rng.commits):
            by_patch.setdefault(f.patch, []).append(f)
        elif f.severity is not Severity.INFO:
            left.append((f, _why_not(f)))
    for n in sorted(by_patch):
        commit = rng.commits[n - 1]
        pf = PatchFix(n, commit, fixups.subject_of(rng.repo, commit))
        edits = _choose([f for f in by_patch[n] if f.fix.get("edits")], pf)
        _carry(pf, rng, tip, edits)
        _amend(pf, rng, [f for f in by_patch[n] if f.fix.get("trailers")])
        left += [(f, why) for f, why in pf.unfixed if f.severity is not Severity.INFO]
        if pf.files or pf.message_after:
            fixes.append(pf)
    return fixes, left


def _amend(pf: PatchFix, rng: fixups.Range, findings: list[Finding]) -> None:
    """The patch's message with the trailers ``findings`` ask for; a
    finding whose trailers an ``amend!`` later in the range already adds
    stays unfixed (the user has not folded it yet)."""
    if not findings:
        return
    later = [c for c in rng.commits[pf.n:]
             if fixups.subject_of(rng.repo, c) == f"amend! {pf.subject}"]
    pending = "".join(fixups.message_of(rng.repo, c) for c in later)
    todo = []
    for f in findings:
        if all(t in pending for t in f.fix["trailers"]):
            pf.unfixed.append((f, "a later commit of the range fixes it already (fold it: "
                                  "git rebase -i --autosquash BASE)"))
        else:
            pf.fixed.append(f)
            todo += [t for t in f.fix["trailers"] if t not in todo]
    if todo:
        pf.message_before = fixups.message_of(rng.repo, pf.commit)
        pf.message_after = fixups.with_trailers(rng.repo, pf.message_before, todo)


def _why_not(f: Finding) -> str:
    if f.fix and f.fix.get("why"):
        return f.fix["why"]
    if f.patch == 0:
        # base-commit, the series' subject tag...: made when the mails are
        # (git format-patch), which the check's hint names
        return "about the series, not a commit" + (f": {f.hint}" if f.hint else "")
    return "no fixer for it"


def commit(fixes: list[PatchFix], rng: fixups.Range) -> list[str]:
    """The fixup commits, one per patch, chained on the branch's HEAD; then
    the branch and the work tree moved onto the last. Returns them."""
    made, parent = [], rng.head
    for pf in fixes:
        if pf.files:
            parent = fixups.commit_files(rng.repo, parent, pf.files, pf.message)
            made.append(parent)
        if pf.message_after:  # the same tree: only the message changes
            parent = fixups.commit_files(rng.repo, parent, {}, pf.amend_message)
            made.append(parent)
    if made:
        fixups.move_branch(rng, parent)
    return made
