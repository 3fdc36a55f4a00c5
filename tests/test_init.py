"""Tests for hierattn/__init__.py: importing the library changes no process-wide setting."""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

# Third-party imports first (numpy adds warning filters of its own); then only hierattn's changes show.
SNAPSHOT = """
import json, logging, os, sys, warnings
import click, numpy, pandas, tqdm.auto
def state():
    return {"env": dict(os.environ), "filters": [str(f) for f in warnings.filters],
            "tf_log": logging.getLogger("tensorflow").level, "stderr": sys.stderr is sys.__stderr__}
before = state()
import hierattn, hierattn.cli, hierattn.runs, hierattn.training, hierattn.explain, hierattn.data
after = state()
print(json.dumps([before == after, sorted(set(after["env"].items()) ^ set(before["env"].items()))]))
"""


def test_importing_hierattn_changes_no_process_wide_setting():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TF_", "HIERATTN"))}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run([sys.executable, "-c", SNAPSHOT], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    unchanged, changed_variables = json.loads(result.stdout.strip().splitlines()[-1])
    assert changed_variables == [] and unchanged
