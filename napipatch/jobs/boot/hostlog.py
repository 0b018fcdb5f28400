"""The kernel log of an SSH host (the remote job's), read from a recorded
position: what the kernel printed during the boot or the plan, for the
splat scan.

Read as root from ``/dev/kmsg``: one record a read, each with its sequence
number (``PRI,SEQ,USEC,FLAGS;TEXT``), by ``dd iflag=nonblock`` (stops at
the end of the log instead of waiting for more) piped into awk on the
host, both in every Debian. Only records after a sequence number come
back, at most ``CAP`` bytes of them, then a summary line: the first and
last sequence number the buffer holds (the last is the position for the
next read) and whether the cap cut. Sequence numbers start at 0 with
each boot: a kexec'd or rebooted kernel's log is its own from its start.
Nothing is written to the host's log.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from napipatch.errors import NapipatchError

CAP = 1 << 20  # bytes of records one read brings back
END = 1 << 62  # read after this: no records, only the position
READ_TIMEOUT = 120  # seconds a read of the host's log may take
SUMMARY = "napipatch-kmsg"
_AWK = ("BEGIN { FS = \",\" } "
        "/^[0-9]+,[0-9]+,/ { if (first == \"\") first = $2; last = $2; "
        "if ($2 + 0 > after + 0 && !cut) { if (n + length($0) + 1 > cap + 0) cut = 1; "
        "else { print; n += length($0) + 1 } } } "
        f"END {{ print \"{SUMMARY} first=\" first \" last=\" last \" cut=\" (cut + 0) }}")
_RECORD = re.compile(r"^\d+,(\d+),(\d+),[^;]*;(.*)$")
_SUM = re.compile(SUMMARY + r" first=(\d*) last=(\d*) cut=(\d)")


@dataclass
class KernelLog:
    text: str  # the records read, as dmesg prints them ("[   12.345678] text")
    first: int  # the first sequence number the host's buffer holds
    last: int  # the last: where the next read starts after
    cut: bool  # records past CAP were left out
    early: str = ""  # why dd stopped before the end of the log ("": it reached it)


def command(after: int, cap: int = CAP) -> str:
    """The host's shell line reading the records after sequence number ``after``."""
    return (f"LC_ALL=C dd if=/dev/kmsg iflag=nonblock bs=65536 | "
            f"awk -v after={int(after)} -v cap={int(cap)} {shlex.quote(_AWK)}")


def parse(out: str, err: str) -> KernelLog:
    """``command``'s output (and dd's stderr) as a KernelLog; a one-line
    NapipatchError when nothing was read (no /dev/kmsg, no permission)."""
    m = _SUM.search(out)
    if not m or not m.group(1):
        lines = [ln for ln in err.strip().splitlines() if "records in" not in ln
                 and "records out" not in ln and "copied" not in ln]
        raise NapipatchError("/dev/kmsg", (lines or ["nothing read"])[-1])
    text: list[str] = []
    for ln in out[:m.start()].splitlines():
        r = _RECORD.match(ln)
        if not r:
            continue
        us = int(r.group(2))
        # /dev/kmsg escapes a backslash, a newline and what is not printable as \xNN
        body = re.sub(r"\\x([0-9a-f]{2})", lambda x: chr(int(x.group(1), 16)), r.group(3))
        text += [f"[{us // 10**6:5d}.{us % 10**6:06d}] {part}" for part in body.split("\n")]
    stop = [ln for ln in err.strip().splitlines() if "error reading" in ln]
    early = stop[-1] if stop and "Resource temporarily unavailable" not in stop[-1] else ""
    return KernelLog("\n".join(text), int(m.group(1)), int(m.group(2)), m.group(3) == "1", early)


def read(ssh, after: int) -> KernelLog:
    """The host's records after sequence number ``after`` (``END``: none,
    only the position), over ``ssh`` (remote.Ssh). Raises NapipatchError
    when the log cannot be read, InfraError/SshTimeout when the host does
    not answer."""
    cp = ssh.run(command(after), timeout=READ_TIMEOUT, check=False)
    return parse(cp.stdout, cp.stderr)
