"""Installs hierattn: `pip install -e .` (add `[test]` for the test tools)."""

import pathlib
import re

from setuptools import find_packages, setup

HERE = pathlib.Path(__file__).parent
VERSION = re.search(r'__version__ = "([^"]+)"', (HERE / "hierattn" / "__init__.py").read_text()).group(1)

setup(
    name="hierattn",
    version=VERSION,
    description="Keras 3 attention layers and models for document classification with trustworthy explanations",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    packages=find_packages(include=["hierattn", "hierattn.*"]),
    python_requires=">=3.10",
    install_requires=[
        "tensorflow>=2.16",
        "keras>=3.10,<4",
        "numpy>=1.26",
        "scikit-learn>=1.3",
        "pandas>=2.0",
        "click>=8.1",
        "tqdm>=4.66",
        "tensorboard>=2.16",
        "gensim>=4.3",
    ],
    extras_require={
        "test": ["pytest>=8", "pillow", "ruff==0.17.6"],  # pillow: reading Chromium screenshots; ruff: lint and format
    },
    entry_points={"console_scripts": ["hierattn=hierattn.cli:main"]},
    classifiers=[
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Topic :: Text Processing :: Linguistic",
    ],
)
