"""Running the YNL generator for generated files, and comparing its output.

The generator is only ever run from the trusted copy of the base commit
(``TreeView.scripts``) in a scratch directory holding the post-patch spec,
in one interpreter for all of a family's files (``ynlbatch``).
"""

from __future__ import annotations

import difflib
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from napipatch import procs
from napipatch.kernel.ynlspec import GENERATORS, Generated


def generator(scripts: Path) -> Path | None:
    for g in GENERATORS:
        if (scripts / g).is_file():
            return scripts / g
    return None


@dataclass
class Regen:
    file: Generated
    text: str | None       # what the generator makes (None when it failed)
    error: str = ""


def regenerate(scripts: Path, files: list[Generated], inputs: dict[str, str],
               timeout: float = 120) -> list[Regen]:
    """Run the trusted generator for ``files`` in a scratch tree.

    ``inputs`` maps tree paths (the specs, the schemas) to their
    post-patch text; they are written under a temporary kernel root
    (with an empty MAINTAINERS, which is how the generator finds the
    root), and the outputs go to the same relative paths, so ``#include
    "x-gen.h"`` lines come out as in the tree.
    """
    gen = generator(scripts)
    if gen is None:
        return [Regen(f, None, "no YNL generator in the base tree") for f in files]
    out: list[Regen] = []
    with tempfile.TemporaryDirectory(prefix="napipatch-ynl-") as td:
        root = Path(td) / "linux"
        root.mkdir()
        (root / "MAINTAINERS").write_text("")
        for rel, text in inputs.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        outdir = Path(td) / "out"
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", LC_ALL="C.UTF-8")
        jobs = []
        for f in files:
            dest = outdir / f.path
            dest.parent.mkdir(parents=True, exist_ok=True)
            jobs.append(["--mode", f.mode, f"--{f.kind}", "--spec", str(root / f.spec),
                         *f.args, "-o", str(dest)])
        # One interpreter for the family's files (see ynlbatch.py).
        batch = Path(__file__).with_name("ynlbatch.py")
        try:
            cp = procs.run([sys.executable, str(batch), str(gen)], timeout=timeout, cwd=root,
                           input=json.dumps(jobs), env=env)
            res = json.loads(cp.stdout) if cp.returncode == 0 else None
        except procs.ProcessTimeout:
            return [Regen(f, None, f"{gen.name} timed out") for f in files]
        except ValueError:
            res = None
        if not isinstance(res, list) or len(res) != len(files):
            msg = "\n".join((cp.stderr.strip() or f"exit status {cp.returncode}")
                            .splitlines()[-15:])
            return [Regen(f, None, msg) for f in files]
        for f, r in zip(files, res):
            dest = outdir / f.path
            if r.get("rc") != 0 or not dest.exists():
                msg = r.get("err", "").strip() or f"exit status {r.get('rc')}"
                out.append(Regen(f, None, "\n".join(msg.splitlines()[-15:])))
                continue
            out.append(Regen(f, dest.read_text()))
    return out


def diff(a: str, b: str, a_name: str, b_name: str, limit: int = 120) -> tuple[str, int | None]:
    """Unified diff (at most ``limit`` lines) and the first differing line of ``a``."""
    al, bl = a.splitlines(keepends=True), b.splitlines(keepends=True)
    first = None
    for i, (x, y) in enumerate(zip(al, bl)):
        if x != y:
            first = i + 1
            break
    if first is None and len(al) != len(bl):
        first = min(len(al), len(bl)) + 1
    lines = list(difflib.unified_diff(al, bl, a_name, b_name, n=2))
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more diff lines)\n"]
    return "".join(ln if ln.endswith("\n") else ln + "\n" for ln in lines), first
