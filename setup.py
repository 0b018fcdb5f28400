"""Package discovery for setuptools: every package under napipatch/, plus
the three top-level folders pyproject.toml's package-dir maps into it."""

from setuptools import find_packages, setup

setup(packages=find_packages(include=["napipatch", "napipatch.*"])
      + ["napipatch.checks", "napipatch.templates", "napipatch.targets"]
      + [f"napipatch.checks.{p}" for p in find_packages(where="checks")])
