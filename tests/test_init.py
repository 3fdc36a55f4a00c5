"""Tests for hierattn/__init__.py: the CPU memory allocator it selects for TensorFlow."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ("import os, hierattn, tensorflow as tf; (tf.ones((256, 256)) * 2).numpy(); "
          "print(os.environ['TF_CPU_ALLOCATOR_USE_BFC'])")


def run_python(allocator_setting):
    env = {k: v for k, v in os.environ.items() if k != "TF_CPU_ALLOCATOR_USE_BFC"}
    env.update(TF_CPP_MIN_LOG_LEVEL="0", TF_CPP_VMODULE="bfc_allocator=1", PYTHONPATH=str(ROOT))
    if allocator_setting is not None:
        env["TF_CPU_ALLOCATOR_USE_BFC"] = allocator_setting
    result = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1], "Creating new BFCAllocator" in result.stderr


@pytest.mark.parametrize("setting, expected_value, expected_bfc", [
    (None, "true", True),  # hierattn's default: TensorFlow pools CPU tensor memory
    ("false", "false", False),  # a user's own setting is kept
])
def test_importing_hierattn_selects_the_bfc_allocator_unless_set(setting, expected_value, expected_bfc):
    value, uses_bfc = run_python(setting)
    assert value == expected_value
    assert uses_bfc == expected_bfc
