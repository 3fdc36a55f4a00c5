"""Installs hierattn: `pip install -e .` (add `[test]` for the test tools).

The metadata (name, version, dependencies, the `hierattn` command) is in
pyproject.toml, which setuptools reads.
"""

from setuptools import setup

setup()
