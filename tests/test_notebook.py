"""A notebook user's first hour: hierattn in a real Jupyter kernel shows no warnings and nothing on standard error.

A notebook shows whatever reaches standard error (Python's `sys.stderr` and
file descriptor 2) in red: TensorFlow's C++ start-up lines, tqdm's
"IProgress not found" warning, progress bars written there. The cells run
in a python3 kernel of this interpreter (nbclient), as a user types them.
"""

import json
import os
import pathlib
import sys

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parents[1]

CELLS = [
    f"import sys\nsys.path.insert(0, {str(ROOT)!r})",
    """import random
random.seed(0)
good, bad = ["great", "wonderful", "superb", "moving"], ["awful", "boring", "dull", "painful"]
labels = [random.choice(["pos", "neg"]) for _ in range(160)]
texts = [f"The film was {random.choice(good if y == 'pos' else bad)}. The acting was {random.choice(good if y == 'pos' else bad)}!" for y in labels]
import hierattn""",
    """clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, embedding_dim=8, word_units=8,
                              sentence_units=8, attention_units=8)
history = clf.fit(texts, labels, validation_split=0.2, epochs=1)""",
    """probabilities = clf.predict(texts[:5])
history = clf.fit(texts[:80], labels[:80], epochs=1)
clf.evaluate(texts[:20], [clf.label_names.index(y) for y in labels[:20]], return_dict=True)""",
]


@pytest.mark.slow
def test_fitting_in_a_notebook_writes_nothing_on_standard_error(tmp_path, monkeypatch):
    # A kernel of this interpreter, whatever kernels the machine has, started as a user's is: no TF_ variables.
    spec = tmp_path / "kernels" / "hierattn-test"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "hierattn", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    env = {key: value for key, value in os.environ.items() if not key.startswith("TF_")}

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell) for cell in CELLS])
    client = NotebookClient(
        notebook, timeout=240, kernel_name="hierattn-test", resources={"metadata": {"path": tmp_path}}
    )
    client.execute(env=env)

    outputs = [(i, output) for i, cell in enumerate(notebook.cells) for output in cell.outputs]
    red = [(i, output) for i, output in outputs if output.output_type == "error" or output.get("name") == "stderr"]
    assert red == []
    fit = "".join(output.text for i, output in outputs if i == 2 and output.output_type == "stream")
    ngram_lines = [line for line in fit.splitlines() if "gram" in line and "|" not in line]  # not the bar's redraws
    assert len(ngram_lines) == 1 and ngram_lines[0].startswith("n-gram part: "), fit
    refit = "".join(output.text for i, output in outputs if i == 3 and output.output_type == "stream")
    assert "kept (no validation texts)" in refit
    (result,) = [output for i, output in outputs if i == 3 and output.output_type == "execute_result"]
    assert "'accuracy'" in result["data"]["text/plain"]  # integer labels are class ids
