"""The wheel ships every package: built from this checkout, unpacked, and
each napipatch module imported from it (not from the editable install).

A sub-package missing from the wheel (a new jobs/ folder setuptools was
not told about) imports fine here and breaks only for users of the wheel.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import ROOT

_IMPORT_ALL = """
import importlib, pkgutil, sys
sys.path.insert(0, sys.argv[1])
import napipatch
assert napipatch.__file__.startswith(sys.argv[1]), napipatch.__file__
names = [m.name for m in pkgutil.walk_packages(napipatch.__path__, "napipatch.")
         if m.name != "napipatch.__main__"]
for name in names:
    mod = importlib.import_module(name)
    assert (mod.__file__ or "").startswith(sys.argv[1]), (name, mod.__file__)
print(len(names))
"""


def test_the_wheel_holds_and_imports_every_subpackage(tmp_path):
    # Built from a copy of the sources: setuptools keeps a build/ directory
    # in the tree it builds, whose stale modules would ship too.
    src = tmp_path / "src"
    top = {".git", ".venv", "build", "dist", "tests"}

    def ignore(d, names):
        return [n for n in names if n == "__pycache__" or n.endswith(".egg-info")
                or (Path(d) == ROOT and n in top)]
    shutil.copytree(ROOT, src, ignore=ignore)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "--no-build-isolation", "-v", "-w", str(tmp_path / "dist"), str(src)],
                           check=True, capture_output=True, text=True)
    # what a user sees scroll past at install: no package left out of the
    # packages configuration (a data folder setuptools takes for a package),
    # no deprecated pyproject.toml form (the license table stops building in 2027)
    said = built.stdout + built.stderr
    assert "absent from the `packages` configuration" not in said, said[-3000:]
    assert "is deprecated" not in said, said[-3000:]
    wheel = next((tmp_path / "dist").glob("napipatch-*.whl"))
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    # every package directory of the checkout is in the wheel, under its import name
    local = {p.parent.relative_to(ROOT / "napipatch").as_posix()
             for p in (ROOT / "napipatch").rglob("__init__.py")} \
        | {(Path("checks") / p.parent.relative_to(ROOT / "checks")).as_posix()
           for p in (ROOT / "checks").rglob("*/__init__.py")}
    shipped = {p.parent.relative_to(site / "napipatch").as_posix()
               for p in (site / "napipatch").rglob("__init__.py")}
    assert local | {"checks", "templates", "targets"} == shipped
    assert (site / "napipatch" / "templates").glob("*.j2")
    got = subprocess.run([sys.executable, "-c", _IMPORT_ALL, str(site)], capture_output=True,
                         text=True, cwd=tmp_path)
    assert got.returncode == 0, got.stderr[-2000:]
    assert int(got.stdout) > 150
