"""Every public class of hierattn has an `Example:` in its docstring, and the example runs.

A class is public when it is defined in a module of `hierattn` under a name
without a leading underscore. Its example is the docstring's `Example:`
section: `>>>` lines, run with `doctest` (their outputs checked), or a fenced
```python block, run with `exec`. Both run in a copy of the module's
namespace (as `doctest.testmod` does) with `np`, `keras` and `hierattn`
added, in a temporary folder.
"""

import doctest
import importlib
import inspect
import io
import pkgutil
import re
import tempfile

import keras
import numpy as np
import pytest

import hierattn

# Examples that cannot run on their own, with the reason. Their code must still compile.
NOT_STANDALONE = {
    "hierattn.batch.predictor.BatchPredictor": "loads a trained run's bundle, which `python cli.py train` writes",
    "hierattn.models.text_classifier.TextClassifier": "trains on `texts` and `labels`, a user's data",
    "hierattn.runs.run.Run": "loads a trained run directory, which `python cli.py train` makes in minutes",
    "hierattn.runtime.predictor.Predictor": "loads a trained run's bundle, which `python cli.py train` writes",
    "hierattn.serve.service.Service": "loads a trained run, which `python cli.py train` makes in minutes",
}

SKIPPED_MODULES = {"hierattn.__main__"}  # importing it is harmless, but it is the program, not the library

# A Google-style section header ("Args:", "Reference:", ...) ends the example.
SECTION = re.compile(
    r"^\s*(Args|Arguments|Attributes|Call arguments|Returns|Yields|Raises|Reference|References|Note|Notes|See also)"
    r":\s*$"
)
FENCED = re.compile(r"^\s*```python\s*\n(.*?)^\s*```", re.MULTILINE | re.DOTALL)


def public_classes():
    classes = {}
    for info in pkgutil.walk_packages(hierattn.__path__, "hierattn."):
        if info.name in SKIPPED_MODULES:
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if inspect.isclass(value) and value.__module__ == module.__name__ and not name.startswith("_"):
                classes[f"{module.__name__}.{name}"] = value
    return dict(sorted(classes.items()))


CLASSES = public_classes()


def example_section(cls):
    """The text of the class docstring's `Example:` section (its own, not a base class's), or None."""
    lines = (cls.__dict__.get("__doc__") or "").splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() in ("Example:", "Examples:")]
    if not starts:
        return None
    section = []
    for line in lines[starts[0] + 1 :]:
        if SECTION.match(line):
            break
        section.append(line)
    return inspect.cleandoc("\n".join(section))


def namespace(cls):
    module = inspect.getmodule(cls)
    return {**vars(module), "np": np, "keras": keras, "hierattn": hierattn, "__name__": module.__name__}


@pytest.fixture
def quick(monkeypatch, tmp_path):
    """Examples write under `tmp_path`, and Keras functions run eagerly: the tiny models of the
    examples train in a second instead of tracing graphs for several."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    if keras.backend.backend() != "tensorflow":
        yield
        return
    import tensorflow as tf

    eager = tf.config.functions_run_eagerly()
    tf.config.run_functions_eagerly(True)
    yield
    tf.config.run_functions_eagerly(eager)


def test_the_classes_are_found():
    # The search itself: the layers, the data classes and a class of a private module are among them.
    assert "hierattn.layers.context_attention.ContextAttention" in CLASSES
    assert "hierattn.data.text.Tokenizer" in CLASSES
    assert "hierattn.layers._query_value_attention.QueryValueAttention" in CLASSES
    assert not [name for name in CLASSES if name.rsplit(".", 1)[1].startswith("_")]
    assert set(NOT_STANDALONE) <= set(CLASSES), "NOT_STANDALONE names a class that is gone"


def test_example_sections_are_read_as_written():
    class Documented:
        """Summary.

        Example:

        >>> 1 + 1
        2

        Reference:
            A paper.
        """

    class Fenced:
        """Summary.

        Example:

        ```python
        x = 1
        ```
        """

    assert example_section(Documented) == ">>> 1 + 1\n2"
    assert FENCED.findall(example_section(Fenced)) == ["x = 1\n"]
    assert example_section(type("Bare", (Documented,), {"__doc__": "No example."})) is None


@pytest.mark.filterwarnings("ignore:Even though the `tf.config.experimental_run_functions_eagerly`:UserWarning")
@pytest.mark.parametrize("name", list(CLASSES))
def test_public_class_has_a_runnable_example(name, quick):
    cls = CLASSES[name]
    section = example_section(cls)
    assert section, f"{name} has no `Example:` section in its docstring"
    blocks = FENCED.findall(section)
    assert blocks or ">>>" in section, f"the example of {name} has neither >>> lines nor a ```python block"
    if name in NOT_STANDALONE:
        for block in blocks:
            compile(block, name, "exec")
        doctest.DocTestParser().get_examples(section)  # raises on malformed >>> lines
        return
    globs = namespace(cls)
    for block in blocks:
        exec(compile(block, name, "exec"), globs)
    if ">>>" in section:
        test = doctest.DocTestParser().get_doctest(section, globs, name, inspect.getsourcefile(cls), 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        report = io.StringIO()
        runner.run(test, out=report.write)
        assert runner.tries and runner.failures == 0, report.getvalue() or f"no example of {name} ran"
