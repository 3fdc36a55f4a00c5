"""Tests for hierattn/__init__.py: what `import hierattn` gives, and that it changes no process-wide setting."""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from conftest import TINY_OPTIONS, eagerly, make_reviews

ROOT = pathlib.Path(__file__).resolve().parents[1]

# Third-party imports first (numpy, requests, scipy add warning filters of their own); then only hierattn's show.
SNAPSHOT = """
import json, logging, os, sys, warnings
import click, numpy, pandas, tqdm.auto, keras, tensorflow, sklearn, gensim
def state():
    return {"env": dict(os.environ), "filters": [str(f) for f in warnings.filters],
            "tf_log": logging.getLogger("tensorflow").level, "stderr": sys.stderr is sys.__stderr__}
before = state()
import hierattn, hierattn.cli, hierattn.runs.directory, hierattn.runs.train, hierattn.explain, hierattn.data
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


EXPORTS = """
import sys
import hierattn
names = ["TextClassifier", "TextPreprocessor", "Explainer", "load_run", "load_classifier", "HANBackbone",
         "MultiHeadAttention"]
assert all(name in dir(hierattn) for name in names), dir(hierattn)
print("keras" in sys.modules)
import hierattn.models  # registers every Keras object of hierattn
import keras
registered = keras.saving.get_custom_objects()
print(sorted(name for name in registered if name.startswith("hierattn>")))
"""

LAZY = """
import sys
import hierattn, hierattn.cli
print(*(name in sys.modules for name in ("numpy", "pandas", "sklearn")))  # what --help would load
print("keras" in sys.modules, "tensorflow" in sys.modules)
print(hierattn.TextClassifier.__name__, "keras" in sys.modules)  # loaded on first use
"""


def _python(code, *args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()


def test_import_hierattn_exports_the_api_lazily_and_its_modules_register_every_keras_object():
    unloaded, registered = _python(EXPORTS)[-2:]
    assert unloaded == "False"  # `import hierattn` and dir(hierattn) load no Keras
    for name in (
        "TextClassifier",
        "TextPreprocessor",
        "ContextAttention",
        "SentenceWise",
        "BahdanauAttention",
        "LuongAttention",
        "MultiHeadAttention",
        "TransformerEncoderBlock",
        "TokenAndPositionEmbedding",
        "PositionalEncoding",
    ):
        assert f"hierattn>{name}" in registered, name


def test_the_command_line_loads_keras_only_when_a_command_needs_it():
    assert _python(LAZY)[-3:] == ["False False False", "False False", "TextClassifier True"]


def test_cli_py_python_m_and_the_installed_command_all_run_hierattn_cli_main():
    import ast
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"hierattn": "hierattn.cli:main"}
    assert "py-modules" not in project and "py_modules" not in (ROOT / "setup.py").read_text()
    for script in (ROOT / "cli.py", ROOT / "hierattn" / "__main__.py"):
        imports = [node for node in ast.parse(script.read_text()).body if isinstance(node, ast.ImportFrom)]
        assert [(node.module, [alias.name for alias in node.names]) for node in imports] == [("hierattn.cli", ["main"])]
    assert not (ROOT / "hierattn_program.py").exists()


# `import hierattn` is enough for keras.saving.load_model, in either order; TensorFlow loaded by hierattn is quiet.

LOAD = """
import json, sys
{imports}
import keras
classifier = keras.saving.load_model(sys.argv[1])  # safe mode on
print(json.dumps([type(classifier).__name__, classifier.predict(["A great film."], verbose=0).tolist()]))
"""


@pytest.fixture(scope="module")
def saved_classifier(tmp_path_factory):
    """A saved classifier and its probabilities; fitted eagerly (`eagerly`): what is tested is loading it."""
    import hierattn

    texts, labels = make_reviews(48)
    clf = hierattn.TextClassifier("rnn", embeddings="none", min_count=1, ngrams=False, **TINY_OPTIONS["rnn"])
    with eagerly():
        clf.fit(texts, labels, epochs=1, verbose=0)
    path = tmp_path_factory.mktemp("saved") / "clf.keras"
    clf.save(path)
    return path, clf.predict(["A great film."], verbose=0).tolist()


@pytest.mark.parametrize(
    "imports",
    [
        "import hierattn",
        "import keras; import hierattn",
        "import hierattn; import tensorflow",
        # a name that loads Keras itself, before the classifier is ever named, registers every class too
        "import hierattn; hierattn.HANBackbone",
        "from hierattn.ngrams import NgramLogits",
    ],
)
def test_import_hierattn_is_enough_for_keras_load_model_in_either_order(saved_classifier, imports):
    path, expected = saved_classifier
    name, probabilities = json.loads(_python(LOAD.format(imports=imports), str(path))[-1])
    assert name == "TextClassifier"
    np.testing.assert_allclose(probabilities, expected, atol=1e-6)


HOOK = """
import sys
import hierattn
print("keras" in sys.modules, [type(f).__name__ for f in sys.meta_path].count("_RegisterWithKeras"))
import keras
print([type(f).__name__ for f in sys.meta_path].count("_RegisterWithKeras"), "hierattn>TextClassifier" in keras.saving.get_custom_objects())
"""


def test_import_hierattn_loads_no_keras_and_its_import_hook_fires_once():
    assert _python(HOOK)[-2:] == ["False 1", "0 True"]


QUIET_START = """
import os, sys
import hierattn
hierattn.TextClassifier  # hierattn.models imports Keras, and so TensorFlow
print(os.environ.get("TF_CPP_MIN_LOG_LEVEL"))
import tensorflow as tf
tf.config.list_physical_devices()  # "failed call to cuInit" on a machine without a GPU, once TensorFlow looks
print(float(tf.reduce_sum(tf.ones(3))))
"""


@pytest.mark.parametrize("level", [None, "0"])
def test_tensorflow_loaded_by_hierattn_writes_nothing_unless_its_log_level_is_set(level):
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    env.update({"PYTHONPATH": str(ROOT), **({"TF_CPP_MIN_LOG_LEVEL": level} if level else {})})
    result = subprocess.run([sys.executable, "-c", QUIET_START], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(level), "3.0"]  # the variable as it was
    if level is None:
        assert result.stderr == ""
    else:  # TensorFlow's own start-up lines (this test fails if a TensorFlow release stops writing them)
        assert "absl::InitializeLog()" in result.stderr or "I0000" in result.stderr or "E0000" in result.stderr
