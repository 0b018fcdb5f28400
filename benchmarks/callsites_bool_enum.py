"""Benchmark (run by hand): callsites' bool-turned-enum rule on real callers.

    .venv/bin/python benchmarks/callsites_bool_enum.py [--tree ~/.cache/napipatch/linux-6.12]

The callsites check warns when a caller passes its own integer variable,
not range-checked, to a parameter that was ``bool`` and becomes an enum
(threaded busy poll v4 left mt76's ``u64 val`` going into
``enum netdev_napi_threaded``). A patch turning one bool into an enum is
rare, so a large diff never exercises the rule; this asks instead what it
would say of every bool parameter at once: for each function declared in
include/linux/netdevice.h, include/linux/skbuff.h and include/net/*.h
with a ``bool`` parameter, every call in drivers/net and net/ of the base,
sorted as the rule sorts them (a literal, another expression, not the
caller's own variable, declared bool or not an integer, range-checked, or
flagged), with the flagged calls listed for reading by hand: a flagged
call is right when its value may be other than 0 or 1 (``flags &
MSG_DONTWAIT``), so that an enum would see it unchanged.

It uses the rule's own pieces (``napipatch.kernel.cparse_calls``) on the
files as the base has them, without a patch or a check run.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import time
from collections import Counter
from pathlib import Path

from napipatch.kernel.cparse_calls import literal, local_at, occurrences, prototypes

HEADERS = ("include/linux/netdevice.h", "include/linux/skbuff.h")
CALLERS = ("drivers/net", "net")


def _git(tree: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True,
                          check=True).stdout


def bool_params(tree: Path) -> dict[str, set[int]]:
    """Function name -> indexes of its bool parameters, from the headers."""
    headers = list(HEADERS) + [p for p in _git(tree, "ls-files", "include/net").split()
                               if p.endswith(".h")]
    out: dict[str, set[int]] = {}
    for h in headers:
        for p in prototypes(_git(tree, "show", f"HEAD:{h}")):
            for i, prm in enumerate(p.params):
                if p.kind == "function" and prm.type in ("bool", "_Bool"):
                    out.setdefault(p.name, set()).add(i)
    return out


def _kind(text: str, line: int, arg: str) -> str:
    """How the rule sorts one argument given to a bool parameter."""
    a = " ".join(arg.split())
    if literal(a) is not None:
        return "literal"
    if not re.fullmatch(r"[A-Za-z_]\w*", a) or re.fullmatch(r"[A-Z][A-Z0-9_]*", a):
        return "other expression"
    local = local_at(text, line, a)
    if local is None:
        return "not the caller's variable"
    if not local.integer:
        return "declared bool or not an integer"
    return "range-checked" if local.bounded else "flagged"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    tree = ap.parse_args().tree
    start = time.monotonic()
    funcs = bool_params(tree)
    names = sorted(funcs)
    files: set[str] = set()
    for i in range(0, len(names), 200):
        pats = [x for n in names[i:i + 200] for x in ("-e", n)]
        got = subprocess.run(["git", "-C", str(tree), "grep", "-lw", *pats, "HEAD", "--",
                              *CALLERS], capture_output=True, text=True).stdout
        files |= {ln.split(":", 1)[1] for ln in got.split()}
    kinds: Counter[str] = Counter()
    flagged = []
    for path in sorted(files):
        text = _git(tree, "show", f"HEAD:{path}")
        for o in occurrences(text, set(names)):
            for i in sorted(funcs[o.name]) if o.kind == "call" else []:
                if i < o.nargs:
                    kind = _kind(text, o.line, o.args[i])
                    kinds[kind] += 1
                    if kind == "flagged":
                        flagged.append(f"{path}:{o.line}: {o.name}({', '.join(o.args)})")
    total = sum(kinds.values())
    print(f"{len(funcs)} functions with a bool parameter, {len(files)} caller files, "
          f"{total} bool arguments, {time.monotonic() - start:.0f} s")
    print("| argument | calls |\n|---|---|")
    for kind, n in kinds.most_common():
        print(f"| {kind} | {n} |")
    print("\nflagged:")
    print("\n".join(f"  {ln}" for ln in flagged))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
