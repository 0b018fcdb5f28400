"""Kernel splats on a guest's console: each shape found, attributed to the
test that ran, fingerprinted without offsets, and a finding on that test
(no guest). The WARNING is recorded from the real guest run of
tests/test_splat_guest.py; the other shapes are written in the kernel's
formats (6.12's printk lines), not recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from napipatch.errors import NapipatchError
from napipatch.jobs.boot import vng
from napipatch.jobs.results import splats
from napipatch.jobs.results.selftests import Selftest
from napipatch.jobs.results.verdicts import splat_findings

WARN = (Path(__file__).parent / "fixtures" / "splat-warn-console.txt").read_text()

LOCKDEP = """\
======================================================
WARNING: possible circular locking dependency detected
6.12.0-virtme #1 Not tainted
------------------------------------------------------
python3/412 is trying to acquire lock:
ffff888006a1c0b8 (&dev->lock){+.+.}-{3:3}, at: netdev_nl_napi_get_doit+0x7e/0x190

but task is already holding lock:
ffffffff83b2f6e8 (rtnl_mutex){+.+.}-{3:3}, at: rtnl_lock+0x15/0x20

which lock already depends on the new lock.


the existing dependency chain (in reverse order) is:

-> #1 (&dev->lock){+.+.}-{3:3}:
       lock_acquire+0xd1/0x2e0
       __mutex_lock+0x9a/0xb70
       netif_napi_set_threaded+0x3c/0x120
       dev_set_threaded+0x51/0x1b0

-> #0 (rtnl_mutex){+.+.}-{3:3}:
       __lock_acquire+0x1468/0x2390
       lock_acquire+0xd1/0x2e0
       __mutex_lock+0x9a/0xb70
       netdev_nl_napi_get_doit+0x7e/0x190

other info that might help us debug this:

 Possible unsafe locking scenario:

       CPU0                    CPU1
       ----                    ----
  lock(rtnl_mutex);

 *** DEADLOCK ***

1 lock held by python3/412:
 #0: ffffffff83b2f6e8 (rtnl_mutex){+.+.}-{3:3}, at: rtnl_lock+0x15/0x20

stack backtrace:
CPU: 0 UID: 0 PID: 412 Comm: python3 Not tainted 6.12.0-virtme #1
Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
Call Trace:
 <TASK>
 dump_stack_lvl+0x6f/0xb0
 print_circular_bug+0x26a/0x340
 check_noncircular+0x148/0x160
 __lock_acquire+0x1468/0x2390
 lock_acquire+0xd1/0x2e0
 ? netdev_nl_napi_get_doit+0x7e/0x190
 __mutex_lock+0x9a/0xb70
 netdev_nl_napi_get_doit+0x7e/0x190
 genl_family_rcv_msg_doit+0xdb/0x130
 genl_rcv_msg+0x183/0x290
 netlink_rcv_skb+0x50/0x100
 </TASK>
"""

RCU = """\
=============================
WARNING: suspicious RCU usage
6.12.0-virtme #1 Not tainted
-----------------------------
net/core/dev.c:6712 suspicious rcu_dereference_check() usage!

other info that might help us debug this:

rcu_scheduler_active = 2, debug_locks = 1
1 lock held by python3/415:
 #0: ffffffff83b2f6e8 (rtnl_mutex){+.+.}-{3:3}, at: rtnl_lock+0x15/0x20

stack backtrace:
CPU: 1 UID: 0 PID: 415 Comm: python3 Not tainted 6.12.0-virtme #1
Call Trace:
 <TASK>
 dump_stack_lvl+0x6f/0xb0
 lockdep_rcu_suspicious+0x14f/0x1c0
 napi_by_id+0x9d/0xb0
 netdev_nl_napi_get_doit+0x5a/0x190
 genl_family_rcv_msg_doit+0xdb/0x130
 </TASK>
"""

KASAN = """\
==================================================================
BUG: KASAN: slab-use-after-free in napi_threaded_poll+0x3f2/0x410
Read of size 8 at addr ffff888007d45a10 by task napi/eth0-8193/230

CPU: 0 UID: 0 PID: 230 Comm: napi/eth0-8193 Not tainted 6.12.0-virtme #1
Call Trace:
 <TASK>
 dump_stack_lvl+0x6f/0xb0
 print_report+0xce/0x620
 kasan_report+0xbd/0xf0
 napi_threaded_poll+0x3f2/0x410
 kthread+0x102/0x130
 ret_from_fork+0x34/0x50
 </TASK>

Allocated by task 1:
 kasan_save_stack+0x33/0x60
==================================================================
"""

UBSAN = """\
[   21.501212] ------------[ cut here ]------------
[   21.501318] UBSAN: shift-out-of-bounds in net/core/netdev-genl.c:212:23
[   21.501410] shift exponent 64 is too large for 64-bit type 'long long unsigned int'
[   21.501522] CPU: 0 UID: 0 PID: 418 Comm: python3 Not tainted 6.12.0-virtme #1
[   21.501630] Call Trace:
[   21.501671]  <TASK>
[   21.501702]  dump_stack_lvl+0x6f/0xb0
[   21.501771]  __ubsan_handle_shift_out_of_bounds+0x16c/0x2f0
[   21.501870]  netdev_nl_napi_fill_one+0x2b7/0x2d0
[   21.501951]  netdev_nl_napi_get_doit+0xfb/0x190
[   21.502032]  </TASK>
[   21.502061] ---[ end trace ]---
"""

REFCOUNT = """\
------------[ cut here ]------------
refcount_t: underflow; use-after-free.
WARNING: CPU: 0 PID: 419 at lib/refcount.c:28 refcount_warn_saturate+0xba/0x110
Modules linked in:
CPU: 0 UID: 0 PID: 419 Comm: python3 Not tainted 6.12.0-virtme #1
RIP: 0010:refcount_warn_saturate+0xba/0x110
Call Trace:
 <TASK>
 ? __warn+0x89/0x130
 ? refcount_warn_saturate+0xba/0x110
 ? report_bug+0x164/0x190
 ? handle_bug+0x58/0x90
 page_pool_put_unrefed_netmem+0x1d4/0x240
 netdev_nl_page_pool_get_doit+0x60/0xa0
 genl_family_rcv_msg_doit+0xdb/0x130
 </TASK>
---[ end trace 0000000000000000 ]---
"""

REF_TRACKER = """\
[  868.101] unregister_netdevice: waiting for veth0 to become free. Usage count = 3
[  868.102] ref_tracker: veth0@ffff8880060c45e0 has 1/2 users at
[  868.102]      netdev_get_by_index+0x5e/0x80
[  868.102]      fib6_nh_init+0x3dd/0x15c0
[  868.102]      nh_create_ipv6+0x377/0x600
[  868.102]      nexthop_create+0x311/0x650
[  868.102]      rtm_new_nexthop+0x3f0/0x5c0
[  868.102]      rtnetlink_rcv_msg+0x2fb/0xc10
[  868.102] 
[  878.201] unregister_netdevice: waiting for veth0 to become free. Usage count = 3
"""

KMEMLEAK = """\
unreferenced object 0xffff888006e21c00 (size 64):
  comm "python3", pid 433, jiffies 4294902341
  hex dump (first 32 bytes):
    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
  backtrace (crc 5fa2d1e3):
    [<ffffffff812e4a35>] __kmalloc_cache_noprof+0x1e5/0x2d0
    [<ffffffff81c3a0f1>] netdev_nl_qstats_get_dumpit.constprop.0+0x41/0x2a0
    [<ffffffff81c01b7e>] genl_dumpit+0x2e/0x90
    [<ffffffff81bf63a2>] netlink_dump+0x1a2/0x3f0
"""


def _in_test(name: str, text: str) -> str:
    return f"NAPIPATCH-SELFTEST-BEGIN {name}\nok 1 x\n{text}NAPIPATCH-SELFTEST-END {name} rc=0\n"


def test_a_recorded_warn_on_is_found_with_its_site_and_frames():
    found = splats.scan(WARN)
    assert [(s.kind, s.during) for s in found] == [("WARNING", "net:nl_netdev.py")], found
    s = found[0]
    assert s.title.startswith("WARNING: CPU: ") and "net/core/netdev-genl.c" in s.title
    assert (s.file, s.line) == ("net/core/netdev-genl.c", 118)  # BUGVERBOSE's "at", undecoded
    # the RIP; this kernel's unwinder marks every trace frame "?": not in the fingerprint
    assert s.frames == ["netdev_nl_dev_get_doit"], s.frames
    assert s.fingerprint == "WARNING:netdev_nl_dev_get_doit"
    assert s.lines[-1] == "</TASK>"


def test_each_splat_shape_has_its_kind_and_first_real_frame():
    console = "".join(_in_test(f"net:t{i}.py", text) for i, text in enumerate(
        [LOCKDEP, RCU, KASAN, UBSAN, REFCOUNT, REF_TRACKER, KMEMLEAK]))
    found = splats.unique(splats.scan(console))
    got = [(s.during, s.kind, s.frames[0] if s.frames else None) for s in found]
    assert got == [
        ("net:t0.py", "lockdep", "__mutex_lock"),
        ("net:t1.py", "RCU", "napi_by_id"),
        ("net:t2.py", "KASAN", "napi_threaded_poll"),
        ("net:t3.py", "UBSAN", "netdev_nl_napi_fill_one"),
        ("net:t4.py", "refcount", "page_pool_put_unrefed_netmem"),
        ("net:t5.py", "netdev refcount", None),  # repeated every 10 s: one
        ("net:t5.py", "ref_tracker", "netdev_get_by_index"),
        ("net:t6.py", "kmemleak", "__kmalloc_cache_noprof"),
    ], got
    by = {s.kind: s for s in found}
    # lockdep: the task's own backtrace, not the dependency chain's stacks
    assert by["lockdep"].frames[:2] == ["__mutex_lock", "netdev_nl_napi_get_doit"]
    assert (by["RCU"].file, by["RCU"].line) == ("net/core/dev.c", 6712)
    assert (by["UBSAN"].file, by["UBSAN"].line) == ("net/core/netdev-genl.c", 212)
    # refcount_t's WARNING line is its own, not a second splat; lib/refcount.c is not the site
    assert by["refcount"].file is None and "refcount_warn_saturate" not in by["refcount"].frames
    # ".constprop.0" is not part of a name
    assert by["kmemleak"].frames[1] == "netdev_nl_qstats_get_dumpit"


def test_a_fingerprint_ignores_offsets_addresses_and_timestamps():
    moved = UBSAN.replace("+0x2b7/0x2d0", "+0x2c1/0x2e0").replace("[   21.", "[   99.")
    a, b = splats.scan(UBSAN)[0], splats.scan(moved)[0]
    assert a.fingerprint == b.fingerprint == \
        "UBSAN:netdev_nl_napi_fill_one:netdev_nl_napi_get_doit"


def test_splats_are_attributed_to_the_boot_the_plan_or_the_test_that_ran():
    console = (REFCOUNT + "NAPIPATCH-PLAN-BEGIN\n" + RCU + "NAPIPATCH-PLAN-END rc=0\n"
               + _in_test("net:a.sh", "") + "NAPIPATCH-SELFTEST-BEGIN net:b.sh\n"
               + "NAPIPATCH-SELFTEST-END net:b.sh rc=0\n" + KASAN)  # the console lags the script
    assert [(s.during, s.kind) for s in splats.scan(console)] == [
        ("boot", "refcount"), ("plan", "RCU"), ("net:b.sh", "KASAN")]


def test_a_splat_is_an_error_on_its_test_even_when_it_printed_ok_unless_the_base_has_it():
    found = splats.scan(WARN)
    new = splat_findings("virtio-net", found, 1, "a" * 40, None, "/x.log")
    assert [(f.check, f.severity.value, f.file, f.line) for f in new] == \
        [("tests", "error", "net/core/netdev-genl.c", 118)]
    assert new[0].message.startswith("virtio-net: kernel WARNING splat during selftest "
                                     "net:nl_netdev.py at patch 1 (aaaaaaaaaaaa): WARNING: CPU:")
    assert "first frame netdev_nl_dev_get_doit at net/core/netdev-genl.c:118" in new[0].message
    old = splat_findings("virtio-net", found, 1, "a" * 40, {found[0].fingerprint}, "/x.log")
    assert [f.severity.value for f in old] == ["info"]
    assert old[0].message.endswith("pre-existing, the base shows the same splat")
    plan = splat_findings("virtio-net", splats.scan("NAPIPATCH-PLAN-BEGIN\n" + RCU), 1,
                          "a" * 40, set(), "/x.log")
    assert [(f.check, f.severity.value) for f in plan] == [("guest", "error")]


def test_a_decode_that_fails_keeps_the_raw_frames_and_says_why(tmp_path):
    found = splats.scan(WARN)
    splats.decode(found, tmp_path / "no-such-decode_stacktrace.sh", tmp_path / "vmlinux",
                  tmp_path)
    s = found[0]
    assert s.decoded == "" and s.note.startswith("frames not decoded: ")
    assert (s.file, s.line) == ("net/core/netdev-genl.c", 118)
    assert "netdev_nl_dev_get_doit+0x" in s.excerpt() and s.note in s.excerpt()


def test_decoded_output_gives_the_first_frames_file_and_line():
    out = ("RIP: 0010:netdev_nl_dev_get_doit (net/core/netdev-genl.c:118)\n"
           " genl_family_rcv_msg_doit (net/netlink/genetlink.c:1115)\n")
    assert splats.first_decoded(out, "netdev_nl_dev_get_doit") == ("net/core/netdev-genl.c", 118)
    assert splats.first_decoded(out, "nope") is None


def test_the_guest_scans_kmemleak_after_each_test_before_the_next_marker(tmp_path):
    text = vng.guest_script(None, tmp_path, [Selftest("net", "a.sh"), Selftest("net", "b.sh")])
    end_a = text.index("NAPIPATCH-SELFTEST-END net:a.sh")
    scan = text.index("echo scan > /sys/kernel/debug/kmemleak", end_a)
    assert scan < text.index("NAPIPATCH-SELFTEST-BEGIN net:b.sh")


def test_a_splat_at_a_line_the_series_adds_is_new_without_the_base():
    diff = ("diff --git a/net/core/netdev-genl.c b/net/core/netdev-genl.c\n"
            "@@ -117,0 +118 @@ int netdev_nl_dev_get_doit(struct sk_buff *skb, ...)\n"
            "+\tWARN_ON_ONCE(ifindex == 1);\n@@ -200,2 +201,3 @@\n")
    assert splats.added_lines(diff) == {118, 201, 202, 203}
    s = splats.scan(WARN)[0]
    s.added = True
    f = splat_findings("virtio-net", [s], 1, "a" * 40, {s.fingerprint}, "/x.log")
    assert f[0].severity.value == "error" and f[0].message.endswith("(a line this series adds)")


def test_the_guest_puts_warnings_on_the_console_before_the_plan(tmp_path):
    # the target boots with loglevel=4: without this, no WARNING reaches the console
    text = vng.guest_script(tmp_path / "plan.sh", tmp_path, [])
    assert text.index("dmesg -n 7") < text.index("NAPIPATCH-PLAN-BEGIN")


BAD_IRQ = """\
[ 1081.418714][    C3] irq 4: nobody cared (try booting with the "irqpoll" option)
[ 1081.419111][    C3] CPU: 3 PID: 3703 Comm: perl Not tainted 6.10.0-rc3-virtme #1
[ 1081.419389][    C3] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996)
[ 1081.419773][    C3] Call Trace:
[ 1081.419909][    C3]  <IRQ>
[ 1081.420008][    C3]  dump_stack_lvl+0x82/0xd0
[ 1081.420197][    C3]  __report_bad_irq+0x5f/0x180
[ 1081.420371][    C3]  note_interrupt+0x6b3/0x860
[ 1081.421330][    C3]  </IRQ>
[ 1081.421430][    C3]  <TASK>
[ 1081.421526][    C3]  asm_common_interrupt+0x26/0x40
[ 1081.431290][    C3]  </TASK>
[ 1081.431421][    C3] handlers:
"""


def test_any_other_call_trace_is_a_splat_named_by_the_line_that_led_it():
    found = splats.scan(BAD_IRQ)
    assert [(s.kind, s.title) for s in found] == \
        [("call trace", 'irq 4: nobody cared (try booting with the "irqpoll" option)')]
    assert found[0].frames[:2] == ["__report_bad_irq", "note_interrupt"]


def test_a_hosts_kmsg_records_become_dmesg_lines_after_the_recorded_position():
    """What the remote job's host read (hostlog.command: /dev/kmsg records
    after a sequence number, then a summary) as the lines the scan reads:
    a record's escaped newline splits it, its KEY=value lines are not text."""
    from napipatch.jobs.boot import hostlog

    out = ("4,41,12345678,-;WARNING: CPU: 0 PID: 1 at net/core/dev.c:1234 dev_open+0x10/0x20\n"
           " SUBSYSTEM=net\n"
           "4,42,12345679,-;Call Trace:\\x0a dev_open+0x10/0x20\n"
           f"{hostlog.SUMMARY} first=3 last=42 cut=0\n")
    log = hostlog.parse(out, "dd: error reading '/dev/kmsg': Resource temporarily unavailable\n")
    assert (log.first, log.last, log.cut, log.early) == (3, 42, False, "")
    assert log.text.splitlines() == [
        "[   12.345678] WARNING: CPU: 0 PID: 1 at net/core/dev.c:1234 dev_open+0x10/0x20",
        "[   12.345679] Call Trace:", "[   12.345679]  dev_open+0x10/0x20"]
    (s,) = splats.scan(log.text)
    assert (s.kind, s.file, s.line, s.frames) == ("WARNING", "net/core/dev.c", 1234, ["dev_open"])
    # an unreadable log never reads as an empty one
    with pytest.raises(NapipatchError, match=r"^/dev/kmsg: dd: failed to open '/dev/kmsg': "
                                             r"Operation not permitted$"):
        hostlog.parse(f"{hostlog.SUMMARY} first= last= cut=0\n",
                      "dd: failed to open '/dev/kmsg': Operation not permitted\n")
