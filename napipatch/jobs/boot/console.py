"""The console protocol between a guest (or an SSH host) and napipatch.

The serial console (or the SSH session's output) is the only channel: the
plan runs between ``BEGIN`` and ``END rc=N``; under vng each kernel selftest
runs between ``SELFTEST_BEGIN NAME`` and ``SELFTEST_END``, a failed one once
more between ``SELFTEST_RETRY NAME`` and ``SELFTEST_END`` (NIPA's retry),
``NETSTATE <json>`` lines are the netdev snapshots taken before the first
selftest and after each run (the leak check), and the guest says ``DONE``
before powering off. Every backend writes and reads these
same lines, so they live here, not in one backend.
"""

BEGIN = "NAPIPATCH-PLAN-BEGIN"
END = "NAPIPATCH-PLAN-END"
SELFTEST_BEGIN = "NAPIPATCH-SELFTEST-BEGIN"
SELFTEST_END = "NAPIPATCH-SELFTEST-END"
SELFTEST_RETRY = "NAPIPATCH-SELFTEST-RETRY"
NETSTATE = "NAPIPATCH-NETSTATE"
DONE = "NAPIPATCH-GUEST-DONE"
