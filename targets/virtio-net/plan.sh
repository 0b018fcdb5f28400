#!/bin/sh
# Threaded NAPI test plan for a virtio-net guest. Runs as root in a
# virtme-ng guest (the host's root read-only: python3 and the tree's YNL CLI
# at $YNL with specs in $YNL_SPECS run the netlink napi-get steps) or in the
# busybox initramfs (no python: the napi-get steps are skipped).
# Prints TAP on the console; "# " lines after a "not ok" are its details.

DEV=${DEV:-eth0}
# Where to ping through the NAPI under test: QEMU's slirp gateway in the
# guest; on a remote host (REMOTE=1) a peer given by napipatch.idpf.peer.
PEER=${PEER:-10.0.2.2}
ADDR=${ADDR-10.0.2.15/24}
N=0
FAILED=0

ok()      { N=$((N+1)); echo "ok $N - $1"; }
notok()   { N=$((N+1)); FAILED=$((FAILED+1)); echo "not ok $N - $1"; shift
            for l in "$@"; do printf '%s\n' "$l" | sed 's/^/# /'; done; }
skip()    { N=$((N+1)); echo "ok $N - $1 # SKIP $2"; }
check()   { if [ "$1" = "$2" ]; then ok "$3"; else notok "$3" "expected '$2', got '$1'"; fi; }

kthreads() {  # PIDs of napi/$DEV-* kernel threads
	for s in /proc/[0-9]*/stat; do
		read -r line < "$s" 2>/dev/null || continue
		case "$line" in *"(napi/$DEV-"*) echo "${s#/proc/}" | cut -d/ -f1 ;; esac
	done
}

cputime() {  # utime+stime (clock ticks) of a PID, from /proc/PID/stat
	# comm has no spaces for napi threads, so fields split cleanly
	set -- $(cat /proc/$1/stat 2>/dev/null)
	echo $(( ${14:-0} + ${15:-0} ))
}

# one echo request to slirp's gateway; -c 1 because tinyconfig has no
# POSIX timers (busybox ping's interval alarm never fires), and a timeout
# so a lost reply cannot hang the plan
pingit() { timeout 10 ping -c 1 "$PEER" >/dev/null 2>&1; }

# napi-get for $DEV through the tree's YNL CLI: one Python dict a NAPI
napi_get() {
	python3 "$YNL" --spec "$YNL_SPECS/netdev.yaml" --no-schema --dump napi-get \
		--json "{\"ifindex\": $(cat /sys/class/net/$DEV/ifindex)}" 2>&1
}
have_ynl() { [ -n "$YNL" ] && [ -f "$YNL" ] && command -v python3 >/dev/null 2>&1; }
# does this kernel's netdev spec have the napi threaded attribute
spec_threaded() { grep -q "^ *name: napi-threaded" "$YNL_SPECS/netdev.yaml" 2>/dev/null; }
# ynl_threaded MODE NAME: every NAPI of $DEV reports threaded MODE
ynl_threaded() {
	if ! have_ynl; then skip "$2" "no python3 or YNL CLI here"; return; fi
	if ! spec_threaded; then skip "$2" "this kernel's netdev spec has no napi threaded attribute"; return; fi
	out=$(napi_get)
	n=$(printf '%s\n' "$out" | grep -c "'threaded': '$1'")
	all=$(printf '%s\n' "$out" | grep -o "'id': [0-9]*" | wc -l)
	if [ "$all" -ge 1 ] && [ "$n" -eq "$all" ]; then ok "$2"; else notok "$2" "$out"; fi
}

cputime_all() { t=0; for p in $(kthreads); do t=$((t + $(cputime $p))); done; echo $t; }

# In the guest the whole boot log counts; on a remote host only what this
# run adds (the host has its own history).
DMESG0=0
[ -n "$REMOTE" ] && DMESG0=$(dmesg 2>/dev/null | wc -l)

echo "TAP version 13"
# uname -v: the build number (#N) make printed for this kernel ("is ready (#N)")
echo "# napipatch threaded NAPI plan on $(uname -r) $(uname -v)"

# 1. the virtio-net device and its link
if [ -d /sys/class/net/$DEV ]; then ok "$DEV exists (virtio-net probed)"; else
	notok "$DEV exists (virtio-net probed)" "$(ls /sys/class/net)"; fi
ip link set lo up
ip link set $DEV up
i=0; while [ $i -lt 50 ] && [ "$(cat /sys/class/net/$DEV/operstate 2>/dev/null)" != up ]; do sleep 0.1; i=$((i+1)); done
check "$(cat /sys/class/net/$DEV/operstate 2>/dev/null)" up "link up"

# 2. threaded: default, no kthreads yet
T=/sys/class/net/$DEV/threaded
check "$(cat $T 2>&1)" 0 "threaded reads 0 by default"
k=$(kthreads | wc -l)
check "$k" 0 "no napi/$DEV-* kthreads while not threaded"

# 3. threaded=1: kthreads appear
if echo 1 > $T; then ok "write threaded=1"; else notok "write threaded=1" "write failed"; fi
check "$(cat $T 2>&1)" 1 "threaded reads back 1"
k=$(kthreads | wc -l)
if [ "$k" -ge 1 ]; then ok "napi/$DEV-* kthreads present while threaded ($k)"; else
	notok "napi/$DEV-* kthreads present while threaded" "$(ps | grep napi)"; fi
ynl_threaded enabled "netlink napi-get reports threaded enabled"
# some traffic through the threaded NAPI (slirp answers on 10.0.2.2)
[ -n "$ADDR" ] && ip addr add "$ADDR" dev $DEV 2>/dev/null
if pingit; then ok "ping through threaded NAPI"; else
	notok "ping through threaded NAPI" "$(ip -s link show $DEV)"; fi

# 4. threaded=2: threaded busy poll, only where the kernel has it
if echo 2 > $T 2>/dev/null; then
	check "$(cat $T 2>&1)" 2 "threaded reads back 2 (busy poll)"
	ynl_threaded busy-poll "netlink napi-get reports threaded busy-poll"
	# busy polling starts the next time the NAPI is scheduled: one packet
	pingit
	t0=$(cputime_all); sleep 2; t1=$(cputime_all)
	if [ "$t1" -gt $((t0 + 50)) ]; then ok "busy-poll kthread keeps polling with no traffic (+$((t1 - t0)) ticks in 2 s)"
	else notok "busy-poll kthread keeps polling with no traffic" "cpu ticks $t0 -> $t1 over 2 s"; fi
	if echo 1 > $T; then ok "write threaded=1 after 2"; else notok "write threaded=1 after 2" "write failed"; fi
	sleep 0.5; t0=$(cputime_all); sleep 2; t1=$(cputime_all)
	if [ "$t1" -le $((t0 + 20)) ]; then ok "kthread stops polling after threaded=1 (+$((t1 - t0)) ticks)"
	else notok "kthread stops polling after threaded=1" "cpu ticks $t0 -> $t1 over 2 s"; fi
else
	skip "threaded=2 (busy poll)" "kernel has no threaded busy-poll mode (writing 2 rejected)"
fi

# 5. back to 0
if echo 0 > $T; then ok "write threaded=0"; else notok "write threaded=0" "write failed"; fi
check "$(cat $T 2>&1)" 0 "threaded reads back 0"
if pingit; then ok "ping after threaded=0"; else notok "ping after threaded=0"; fi
if have_ynl; then
	out=$(napi_get)
	if printf '%s\n' "$out" | grep -q "'id': [0-9]"; then ok "netlink napi-get (ynl) lists $DEV's NAPIs"
	else notok "netlink napi-get (ynl) lists $DEV's NAPIs" "$out"; fi
else
	skip "netlink napi-get (ynl)" "no python3 or YNL CLI here"
fi

# 6. kernel log: no splats
mount -t debugfs none /sys/kernel/debug 2>/dev/null
DM=/tmp/napipatch-dmesg.$$
if ! dmesg > $DM 2>/dev/null; then
	skip "dmesg has no WARN/BUG/Oops/lockdep/KASAN splats" "dmesg not readable here"
	rm -f $DM; echo "1..$N"; [ $FAILED -eq 0 ]; exit
fi
tail -n +$((DMESG0 + 1)) $DM > $DM.new && mv $DM.new $DM
if grep -qE 'WARNING:|BUG:|Oops|general protection|Kernel panic|possible circular locking|possible recursive locking|inconsistent lock state|lockdep|KASAN|UBSAN|refcount_t:|Call Trace' $DM; then
	notok "dmesg has no WARN/BUG/Oops/lockdep/KASAN splats" "$(grep -nE -A14 'cut here|WARNING:|BUG:|Oops|KASAN|lockdep|circular locking|UBSAN' $DM | head -40 | sed 's/^/  /')"
else
	ok "dmesg has no WARN/BUG/Oops/lockdep/KASAN splats"
fi
rm -f $DM

echo "1..$N"
[ $FAILED -eq 0 ]
