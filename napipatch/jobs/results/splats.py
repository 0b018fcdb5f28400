"""Kernel splats on a guest's console: found, attributed to what was running,
fingerprinted, and their frames decoded to FILE:LINE.

A splat is what the kernel prints when it catches itself misbehaving: a
``WARNING:`` with a call trace (WARN_ON and refcount_t warnings), lockdep's
reports, KASAN, UBSAN, ``BUG:``/Oops, a hung task, an RCU stall, a
ref_tracker report, and kmemleak's ``unreferenced object`` after a scan.
The shapes are those the netdev CI's crash detection knows (NIPA's
contest/remote/lib/crash.py starts a crash at ``Hardware name:``,
``ref_tracker:``, ``blocked for more than`` and ``unreferenced object``),
read from each headline here so a splat is named by its kind.

Every splat is attributed to what ran when it was printed: the boot, the
target's plan, or the selftest between its console markers (up to the next
marker: the kernel console reaches the host a little after the script's
own output). Its fingerprint is its kind and its first five function
names without offsets, skipping the splat machinery (``__warn``,
``report_bug``, ...) and frames the unwinder marks ``?``: the same splat at
the base has the same fingerprint.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from napipatch import procs
from napipatch.errors import NapipatchError
from napipatch.jobs.boot.console import BEGIN, DONE, END, SELFTEST_BEGIN
from napipatch.tree.trusted import scripts_root

BOOT, PLAN = "boot", "plan"  # what ran, besides a selftest's name
FRAMES = 5  # function names in a fingerprint (NIPA's crash.py uses 5)
MAX_LINES = 150  # a splat's block is cut after this many lines
DECODE_TIMEOUT = 120  # seconds decode_stacktrace.sh gets for one splat

# printk's optional prefixes: "[   12.345678]", "[ T123]" or "[    C3]", "<4>"
_PREFIX = re.compile(r"^(?:<\d>)?(?:\[\s*\d+\.\d+\])?(?:\[\s*[TC]\d+\])?\s?")
# (regex on the line without prefix, kind); the first that matches names it
_HEADLINES = [
    (re.compile(r"^WARNING: suspicious RCU usage"), "RCU"),
    (re.compile(r"^WARNING: (?:possible|inconsistent|bad unlock|lock held|held lock|"
                r"Nested lock|\S+-safe -> \S+-unsafe|.*lock.* detected)"), "lockdep"),
    (re.compile(r"^WARNING: (?:CPU: \d+|\S+:\d+ at )"), "WARNING"),
    (re.compile(r"^refcount_t: "), "refcount"),
    (re.compile(r"^BUG: KASAN: "), "KASAN"),
    (re.compile(r"^BUG: KFENCE: "), "KFENCE"),
    (re.compile(r"^UBSAN: "), "UBSAN"),
    (re.compile(r"^(?:BUG: |watchdog: BUG: |kernel BUG at )"), "BUG"),
    (re.compile(r"^(?:Oops: |general protection fault)"), "Oops"),
    (re.compile(r"^Kernel panic - not syncing"), "panic"),
    (re.compile(r"^ref_tracker: "), "ref_tracker"),
    (re.compile(r"^unregister_netdevice: waiting for "), "netdev refcount"),
    (re.compile(r"^INFO: task .* blocked for more than "), "hung task"),
    (re.compile(r"^(?:rcu: )?INFO: rcu_\w+ (?:self-)?detected"), "RCU stall"),
    (re.compile(r"^unreferenced object 0x"), "kmemleak"),
]
_CUT = "------------[ cut here ]------------"
_CONTEXT = ("CPU: ", "Hardware name:", "Modules linked in", "Tainted:", "Workqueue:", "RIP: ",
            "Code: ", "RSP: ", "RAX: ", "RDX: ", "RBP: ", "R10: ", "R13: ", "FS: ", "CS: ",
            "CR2: ", "DR0: ", "DR3: ", "PKRU: ")
_INDENTED = {"kmemleak", "ref_tracker"}  # no call trace: indented frames under the headline
_ONE_LINE = {"netdev refcount"}
# "func+0x1f/0x90", "RIP: 0010:func+0x1f/0x90", "[<ffffffff81234567>] func+0x..";
# a "? func+0x.." frame is a guess of the unwinder: not part of the fingerprint
_FRAME = re.compile(r"^(?:RIP: [0-9a-f]{4}:|\s*(?:\[<[0-9a-f]+>\]\s+)?)"
                    r"([A-Za-z_][\w.]*)\+0x[0-9a-f]+/0x[0-9a-f]+")
_AT = re.compile(r" at ([\w./-]+\.[chS]):(\d+)")  # WARNING ... at net/core/dev.c:123 (BUGVERBOSE)
_RCU_AT = re.compile(r"(?:^| in )([\w./-]+\.[chS]):(\d+)")  # RCU's and UBSAN's own FILE:LINE
# how the kernel reports, not where the fault is
_MACHINERY = {"dump_stack", "dump_stack_lvl", "__warn", "warn_slowpath_fmt", "__warn_printk",
              "report_bug", "handle_bug", "exc_invalid_op", "asm_exc_invalid_op",
              "refcount_warn_saturate", "print_report", "kasan_report", "ubsan_epilogue",
              "lockdep_rcu_suspicious", "print_circular_bug", "check_noncircular",
              "check_prev_add", "check_prevs_add", "validate_chain", "__lock_acquire",
              "lock_acquire", "lock_release", "__might_resched", "__might_sleep", "panic",
              "show_stack", "ref_tracker_dir_print", "ref_tracker_dir_print_locked"}
_MACHINERY_PREFIXES = ("__ubsan_handle_", "__asan_", "__kasan_", "kasan_", "__tsan_")
_DECODED = re.compile(r"^(?:RIP: [0-9a-f]{4}:|\s*)([A-Za-z_][\w.]*) \(([^()\s:]+):(\d+)")


@dataclass
class Splat:
    kind: str  # WARNING, lockdep, RCU, KASAN, UBSAN, refcount, ref_tracker, kmemleak, BUG, ...
    title: str  # its headline, as printed
    during: str  # BOOT, PLAN or the selftest's name (net:nl_netdev.py)
    lines: list[str] = field(default_factory=list)  # the block, prefixes stripped
    frames: list[str] = field(default_factory=list)  # function names, machinery skipped
    file: str | None = None  # the first frame's FILE:LINE (decoded, or the WARNING's "at")
    line: int | None = None
    decoded: str = ""  # decode_stacktrace.sh's output for the block
    note: str = ""  # why the frames were not decoded
    added: bool = False  # its FILE:LINE is a line the series adds: new without the base

    @property
    def fingerprint(self) -> str:
        return f"{self.kind}:{':'.join(self.frames[:FRAMES])}"

    @property
    def where(self) -> str:
        """``func at FILE:LINE`` (or what is known of the first frame)."""
        func = self.frames[0] if self.frames else ""
        at = f"{self.file}:{self.line}" if self.file else ""
        return f"{func} at {at}" if func and at else func or at or "no frames"

    def excerpt(self) -> str:
        text = self.decoded or "\n".join(self.lines)
        return text + (f"\n({self.note})" if self.note else "")


def _headline(text: str) -> str | None:
    for rx, kind in _HEADLINES:
        if rx.search(text):
            return kind
    return None


def kind_of(line: str) -> str | None:
    """The kind of splat a console line (printk prefix and all) starts, or
    None: how the bot's log pages mark a splat's first line."""
    return _headline(_PREFIX.sub("", line, count=1))


def _base_name(func: str) -> str:
    return func.split(".", 1)[0]  # tcp_ao_info_cmd.constprop.0 -> tcp_ao_info_cmd


def frames_of(lines: list[str]) -> list[str]:
    """The function names of a block's reliable frames, machinery skipped,
    a name repeated back to back (RIP, then the trace) once."""
    out: list[str] = []
    for ln in lines:
        m = _FRAME.match(ln)
        if not m:
            continue
        name = _base_name(m.group(1))
        if name in _MACHINERY or name.startswith(_MACHINERY_PREFIXES) or name.startswith("__pfx_"):
            continue
        if not out or out[-1] != name:
            out.append(name)
    return out


def _finish(s: Splat) -> Splat:
    # lockdep prints the dependency chain's stacks first: the fingerprint is
    # the task's own backtrace after "stack backtrace:", as NIPA's is
    tail = next((i for i, ln in enumerate(s.lines) if ln.startswith("stack backtrace:")), 0)
    s.frames = frames_of(s.lines[tail:])
    m = _AT.search(s.title) if s.kind == "WARNING" else None
    for ln in s.lines[:6] if s.kind in ("RCU", "UBSAN") else ():
        m = m or _RCU_AT.search(ln)  # "net/core/dev.c:123 suspicious rcu_dereference..."
    if m:
        s.file, s.line = m.group(1), int(m.group(2))
    return s


def _over(cur: Splat, text: str) -> bool:
    """Whether ``text`` is past ``cur``'s block (not part of it)."""
    if cur.kind in _INDENTED:  # the report's lines are indented under its headline
        return not text.strip() or not text.startswith((" ", "\t"))
    if cur.kind in _ONE_LINE:
        return True
    return len(cur.lines) >= MAX_LINES


def _ends(cur: Splat, text: str) -> bool:
    """Whether ``text``, part of ``cur``, is its last line."""
    t = text.strip()
    return t == "</TASK>" or t.startswith("---[ end ")


def scan(console: str) -> list[Splat]:
    """Every splat on ``console`` (a guest's merged log), in order."""
    out: list[Splat] = []
    during = BOOT
    cur: Splat | None = None

    def close() -> None:
        nonlocal cur
        if cur is not None:
            out.append(_finish(cur))
            cur = None

    last: list[str] = []  # the lines before: what a bare call trace is about
    for raw in console.splitlines():
        if raw.startswith((BEGIN, END, SELFTEST_BEGIN, DONE)):
            close()
            if raw.startswith(SELFTEST_BEGIN + " "):
                during = raw.split(" ", 1)[1].strip()
            elif raw.startswith(BEGIN):
                during = PLAN
            continue
        text = _PREFIX.sub("", raw.rstrip())
        kind = _headline(text)
        if kind == "WARNING" and cur is not None and cur.kind == "refcount" and len(cur.lines) < 4:
            kind = None  # refcount_t's message, then its WARNING line: one splat
        if kind:
            close()
            cur = Splat(kind, text.strip(), during, [text])
            continue
        if cur is None and text.strip() == "Call Trace:":
            # any other report with a trace (NIPA's crash.py: "Call Trace:"),
            # "irq 4: nobody cared" say: named by the line that led it
            lead = [ln for ln in last if ln.strip() and not ln.startswith(_CONTEXT)]
            cur = Splat("call trace", (lead[0] if lead else text).strip(), during,
                        [*last, text])
            continue
        last = (last + [text])[-5:]
        if cur is None:
            continue
        if text.strip() == _CUT or _over(cur, text):
            close()
            continue
        cur.lines.append(text)
        if _ends(cur, text):
            close()
    close()
    return out


def unique(splats: list[Splat]) -> list[Splat]:
    """One splat a (what ran, fingerprint): a warning repeated every few
    seconds (unregister_netdevice) is one finding."""
    seen: set[tuple[str, str]] = set()
    out: list[Splat] = []
    for s in splats:
        if (s.during, s.fingerprint) not in seen:
            seen.add((s.during, s.fingerprint))
            out.append(s)
    return out


def decode(splats: list[Splat], script: Path, vmlinux: Path, src: Path) -> None:
    """Decode each splat's frames with the tree's ``decode_stacktrace.sh``
    (``script``, from the trusted base) against ``vmlinux``, paths made
    relative to ``src``; the first decoded frame becomes its FILE:LINE
    unless the kernel printed one (a WARNING's "at FILE:LINE").
    Whatever fails leaves the raw frames and a note: never raises."""
    for s in splats:
        if not s.frames:
            continue
        try:
            # procs: on timeout the script's addr2line children die with it
            cp = procs.run(["bash", str(script), str(vmlinux), str(src)],
                           input="\n".join(s.lines) + "\n", timeout=DECODE_TIMEOUT)
        except (OSError, NapipatchError) as e:
            s.note = f"frames not decoded: {script.name}: {e}"
            continue
        first = first_decoded(cp.stdout, s.frames[0])
        if cp.returncode != 0 or not first:
            why = (cp.stderr.strip().splitlines() or [f"exit status {cp.returncode}"])[-1] \
                if cp.returncode else "no FILE:LINE for its frames (is vmlinux built with " \
                "CONFIG_DEBUG_INFO?)"
            s.note = f"frames not decoded: {why}"
            continue
        s.decoded = cp.stdout.rstrip("\n")
        if not s.line:  # a WARNING's own "at FILE:LINE" is exact; a decoded +offset is near
            s.file, s.line = first


def decode_trusted(found: list[Splat], repo: Path, trusted: str | None, cache: Path,
                   vmlinux: Path, src: Path) -> None:
    """``decode`` with the trusted base's decode_stacktrace.sh (``trusted``:
    the base commit; the patched tree's own copy never runs) against
    ``vmlinux``. Without a base or a vmlinux the frames stay raw, said so."""
    why = "no trusted base to take decode_stacktrace.sh from" if not trusted else \
        f"no {vmlinux}" if not vmlinux.is_file() else ""
    if not why:
        try:
            script = scripts_root(repo, trusted, cache) / "scripts" / "decode_stacktrace.sh"
        except Exception as e:  # an export that fails leaves the raw frames, said so
            why = f"the trusted scripts: {e}"
        else:
            decode(found, script, vmlinux, src)
            return
    for s in found:
        s.note = f"frames not decoded: {why}"


def as_data(found: list[Splat]) -> list[dict]:
    """The splats as a job's JSON result holds them."""
    return [{"kind": s.kind, "title": s.title, "during": s.during, "fingerprint": s.fingerprint,
             "frames": s.frames[:FRAMES], "file": s.file, "line": s.line,
             "decoded": bool(s.decoded), "note": s.note} for s in found]


def first_decoded(text: str, func: str) -> tuple[str, int] | None:
    """FILE:LINE of ``func``'s first decoded frame in decode_stacktrace.sh's output."""
    for ln in text.splitlines():
        m = _DECODED.match(_PREFIX.sub("", ln))
        if m and _base_name(m.group(1)) == func:
            return m.group(2), int(m.group(3))
    return None


_HUNK = re.compile(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", re.M)


def added_lines(diff: str) -> set[int]:
    """The new-side line numbers a ``git diff -U0`` of one file adds."""
    out: set[int] = set()
    for m in _HUNK.finditer(diff):
        start, count = int(m.group(1)), int(m.group(2) or 1)
        out.update(range(start, start + count))
    return out


def console_setup() -> str:
    """A guest shell line for the script's start: kernel messages up to
    KERN_INFO reach the console from then on (a target's ``loglevel=4``
    hides every WARNING and call trace), and the boot's own messages,
    printed before the script ran, are printed when they hold a splat."""
    shapes = ("cut here|Call Trace:|WARNING:|BUG:|UBSAN:|refcount_t:|ref_tracker:|"
              "unreferenced object|blocked for more than|Kernel panic")
    return f"dmesg -n 7 2>/dev/null; dmesg 2>/dev/null | grep -qE '{shapes}' && dmesg"


def kmemleak_scan() -> str:
    """A guest shell line: where the kernel has kmemleak, scan twice (objects
    younger than 5 s are not yet leaks, as NIPA waits), print what leaked
    and forget it, so each report lands on the test that ran."""
    k = "/sys/kernel/debug/kmemleak"
    return (f"[ -e {k} ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null; "
            f"if [ -w {k} ]; then echo scan > {k}; sleep 5; echo scan > {k}; cat {k}; "
            f"echo clear > {k}; fi")
