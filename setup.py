"""Package discovery for setuptools: every package under napipatch/, plus
the three top-level folders pyproject.toml's package-dir maps into it.

A target's folder (targets/idpf) holds data, not code, but its name is a
valid module name, so setuptools sees an importable package and warns
that it is left out ("absent from the packages configuration"): listing
such folders as (namespace) packages is how setuptools wants package data
in sub-folders declared. targets/virtio-net is no module name; its files
ship through package-data's "*/*" alone."""

from pathlib import Path

from setuptools import find_packages, setup

_TARGET_DIRS = sorted(f"napipatch.targets.{d.name}" for d in Path("targets").iterdir()
                      if d.is_dir() and d.name.isidentifier())

setup(packages=find_packages(include=["napipatch", "napipatch.*"])
      + ["napipatch.checks", "napipatch.templates", "napipatch.targets"]
      + [f"napipatch.checks.{p}" for p in find_packages(where="checks")]
      + _TARGET_DIRS)
