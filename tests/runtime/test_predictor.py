"""`hierattn.runtime`: an exported bundle, loaded by onnxruntime, gives the Keras classifier's answers."""

import json
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import numpy as np
import onnx
import pytest

import hierattn.runtime.predictor as predictor_module
from hierattn import runtime
from hierattn.calibration import calibrated
from hierattn.errors import ArgumentError, DataError
from hierattn.ngrams.mixing import ngram_logits
from hierattn.runs.directory import BUNDLE_FILE

from conftest import TINY_OPTIONS, eagerly, make_chinese_reviews, make_reviews, rewrite_bundle_metadata

pytestmark = pytest.mark.slow

BACKBONES = {
    "han": {},
    "transformer": {},
    "rnn": {},
    "rnn-lstm": {"cell": "lstm"},
    "han-subwords": {"text_units": "subwords"},  # Chinese reviews, in pieces learned from them (SentencePiece)
}


def _trained(name):
    import hierattn

    architecture = name.split("-")[0]
    texts, labels = (make_chinese_reviews if "text_units" in BACKBONES[name] else make_reviews)(120)
    clf = hierattn.TextClassifier(
        architecture, embeddings="none", min_count=1, **TINY_OPTIONS[architecture], **BACKBONES[name]
    )
    with eagerly():  # a trained classifier to export: how it trained does not matter here
        clf.fit(texts, labels, epochs=1, batch_size=16, verbose=0, validation_split=0.25)
    return clf


def _cut_through_the_middle(clf, texts):
    """Both parts weigh in, and the cascade's cut falls between the texts' margins: the network reads about half."""
    clf.combination.mixing.assign(np.array([0.6, 0.8], np.float32))
    x = clf.preprocessor(texts)
    margins = np.unique(clf.cascade.margins(ngram_logits(clf.ngram_logits, x["ngram_ids"])))
    cut = float(margins[len(margins) // 2 - 1 : len(margins) // 2 + 1].mean())
    # the n-gram part's own scale (not the combination's), and the whole combination's temperatures
    clf.policy = clf.policy.replace(cut=cut, ngram_scale=1.7, temperature=1.4, temperature_always=0.7)
    read = clf.cascade.needs_network(ngram_logits(clf.ngram_logits, x["ngram_ids"]))
    assert 0 < read.sum() < len(texts)


@pytest.fixture(scope="module", params=list(BACKBONES))
def exported(request, tmp_path_factory):
    """A tiny trained classifier of each backbone, its cascade reading about half of `_edge_texts`, and its bundle."""
    clf = _trained(request.param)
    _cut_through_the_middle(clf, _edge_texts(clf))
    path = tmp_path_factory.mktemp(request.param) / "model.onnx"
    assert clf.export(path, verbose=False) == os.fspath(path)
    return clf, path


def _edge_texts(clf):
    words = clf.preprocessor.vocabulary.tokens[2:]
    long = " ".join(f"{' '.join(words[i % len(words) : i % len(words) + 30])}." for i in range(400))
    return [
        "The film was wonderful.",  # short
        long,  # beyond every length limit
        "Qwxzv blorptk zzyzx!",  # no known word
        "",  # no word at all
        "<br /><br />",  # markup only
        "Great. " * 3,
        *make_reviews(40, seed=7)[0],
        "ＧＲＥＡＴ１２３，很好吃！",  # full-width Latin and digits
        *make_chinese_reviews(20, seed=7)[0],
    ]


def test_the_runtime_gives_the_classifiers_answers(exported, monkeypatch):
    clf, path = exported
    predictor = runtime.load(path)
    texts = _edge_texts(clf)
    expected = clf.predict(texts, verbose=0)
    for batch_size in (1, 7, 64):
        np.testing.assert_allclose(predictor.predict(texts, batch_size=batch_size), expected, rtol=0, atol=1e-5)
    assert predictor.metadata["cascade"]["cut"] == clf.cascade.cut and predictor.cascade.ngram_scale == 1.7
    assert predictor.cascade.temperature == 1.4 and runtime.load(path, network="always").cascade.temperature == 0.7
    # the application's path: only the texts the network reads are split into sentences for it; NaN without words
    found = predictor.predict_texts(texts, batch_size=7)
    np.testing.assert_allclose(found, clf.predict_texts(texts), rtol=0, atol=1e-5)
    assert np.isnan(found).any(axis=1).tolist() == [not clf.has_words(text) for text in texts]
    always = predictor.with_network("always")  # the whole combination (at its temperature), every text read
    whole = calibrated(clf.predict_ids(clf.preprocessor(texts), part="whole"), 0.7)
    np.testing.assert_allclose(always.predict(texts), whole, rtol=0, atol=1e-5)
    assert runtime.load(path, network="always").cascade.cut is None and always.policy == predictor.policy.for_network(
        "always"
    )
    assert predictor.network == "auto" and predictor.with_network("auto") is predictor  # this one unchanged
    assert predictor.label_names == list(clf.label_names)
    assert predictor.predict_labels(texts) == clf.predict_labels(texts)
    assert predictor.predict([]).shape == (0, len(clf.label_names))
    # Many texts: a chunk at a time (the network computing one while the next is tokenized), or, with worker
    # processes, all tokenized first: the same answers.
    monkeypatch.setattr(predictor_module, "PIPELINE_TEXTS", 4)
    for network, without_nan in (("auto", clf.predict(texts, verbose=0)), ("always", whole)):
        predictor = predictor.with_network(network)
        expected = predictor.predict_texts(texts, workers=2)
        assert np.isnan(expected).any(axis=1).tolist() == [not clf.has_words(text) for text in texts]
        for batch_size in (1, 64):
            found = predictor.predict_texts(texts, batch_size=batch_size)
            np.testing.assert_allclose(found, expected, rtol=0, atol=1e-6)
        np.testing.assert_allclose(predictor.predict(texts), without_nan, rtol=0, atol=1e-5)


def test_the_bundle_describes_its_tokenizer(exported):
    clf, path = exported
    metadata = runtime.load(path).metadata
    assert metadata["format"] == runtime.FORMAT
    assert metadata["architecture"] == clf.architecture
    assert metadata["vocabulary"]["tokens"] == clf.preprocessor.vocabulary.tokens[2:]
    settings = metadata["preprocessor"]
    assert (settings["mode"], settings["ngram_length"]) == (clf.preprocessor.mode, clf.preprocessor.ngram_length)
    assert settings["tokenizer"] == clf.preprocessor.tokenizer.get_config()
    # Recurrent layers are ONNX's own GRU / LSTM operators, not a loop of small steps (hierattn.export.fused_rnn).
    ops = {node.op_type for node in onnx.load(path).graph.node}
    assert "Loop" not in ops
    assert {"han": {"GRU"}, "transformer": set(), "rnn": {"GRU"}}[clf.architecture] <= ops or "LSTM" in ops


def _bare_install(folder):
    """A folder holding only hierattn, NumPy, onnxruntime and sentencepiece, as `pip install --no-deps /path/to/hierattn
    onnxruntime numpy sentencepiece` leaves."""
    import numpy
    import onnxruntime
    import sentencepiece

    import hierattn

    for module in (hierattn, numpy, onnxruntime, sentencepiece):
        package = pathlib.Path(module.__file__).parent
        (folder / package.name).symlink_to(package)
        libs = package.parent / f"{package.name}.libs"  # a wheel's own shared libraries, where it has them
        if libs.is_dir():
            (folder / libs.name).symlink_to(libs)
    return folder


def test_the_runtime_runs_without_tensorflow(exported, tmp_path):
    """Where only hierattn, NumPy, onnxruntime and sentencepiece are installed: no TensorFlow, Keras, pandas, tqdm..."""
    clf, path = exported
    texts = _edge_texts(clf)[:8]
    bare = _bare_install(tmp_path)
    script = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {os.fspath(bare)!r})
        from hierattn import runtime
        predictor = runtime.load({os.fspath(path)!r})
        print(json.dumps(predictor.predict(json.loads(sys.stdin.read())).tolist()))
        print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("tensorflow", "keras", "pandas"))))
        """
    )
    # -I -S: no site-packages, no user site, no PYTHONPATH: only the folder's packages and the standard library.
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script], input=json.dumps(texts), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    probabilities, loaded = (json.loads(line) for line in done.stdout.splitlines())
    np.testing.assert_allclose(probabilities, clf.predict(texts, verbose=0), atol=1e-5)
    assert loaded == []


def test_load_refuses_what_is_not_a_bundle(exported, tmp_path):
    clf, _ = exported
    with pytest.raises(DataError, match="no bundle at"):
        runtime.load(tmp_path / "missing.onnx")
    (tmp_path / "notes.onnx").write_text("not a model")
    with pytest.raises(DataError, match="not an ONNX model onnxruntime can load"):
        runtime.load(tmp_path / "notes.onnx")
    if clf.architecture == "han":  # Keras's own ONNX export: the graph from ids, without the tokenizer
        clf.export(tmp_path / "ids.onnx", format="onnx", verbose=False)
        with pytest.raises(DataError, match="not a hierattn bundle"):
            runtime.load(tmp_path / "ids.onnx")


def test_a_bundle_with_a_damaged_temperature_is_refused_at_load(han_run_dir, tmp_path):
    for damaged in (0, -1.0, "warm", float("nan")):
        target = tmp_path / "model.onnx"
        rewrite_bundle_metadata(
            han_run_dir / BUNDLE_FILE, target, lambda m, t=damaged: m["cascade"].update(temperature_always=t)
        )
        with pytest.raises(DataError, match="metadata is damaged.*temperature"):
            runtime.load(target)


def test_predict_refuses_what_is_not_a_list_of_texts(exported):
    _, path = exported
    predictor = runtime.load(path)
    with pytest.raises(DataError, match="not a single string"):
        predictor.predict("one text")
    with pytest.raises(DataError, match="texts must be strings: text 2 is 3"):
        predictor.predict(["a text", 3])
    with pytest.raises(DataError, match=r"^texts must be strings: text 2 is None \(NoneType\)$"):
        predictor.predict(["a text", None])
    for texts in ({"a": 1, "b": 2}, {"a", "b"}):  # their keys or members are strings, in no order of rows
        with pytest.raises(DataError, match=r"^texts must be a list \(or tuple, array, Series\) of strings; got"):
            predictor.predict(texts)
    with pytest.raises(DataError, match=r"^texts must be strings: text 1 is 1 \(int\)$"):
        predictor.predict_labels(n for n in range(1, 4))
    with pytest.raises(DataError, match=r"^text 2 is not UTF-8: it has the byte 0xe9 at position 3"):
        predictor.predict_texts(["fine", b"caf\xe9"])
    assert predictor.predict([b"A fine film."]).shape == (1, 2)
    assert predictor.has_words("A film.") and not predictor.has_words("<br />")
    # a batch size, or a number of workers, that is no whole number of at least 1: refused before any text is read,
    # on every path (texts or none, the network reading them or not)
    for batch_size in (0, -1, 2.5, "8", True, None):
        for texts in (["A fine film."], [""], []):
            with pytest.raises(
                ArgumentError, match=rf"^batch_size must be a whole number of at least 1, not {batch_size!r}$"
            ):
                predictor.predict(texts, batch_size=batch_size)
    with pytest.raises(ArgumentError, match=r"^workers must be a whole number of at least 1, not 0$"):
        predictor.predict_texts(["A fine film."], workers=0)
    assert predictor.predict(["A fine film."], batch_size=np.int64(8)).shape == (1, 2)


def test_readme_export_runs_as_written(han_run, tmp_path, monkeypatch, capsys):
    clf = han_run
    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", readme.split("## Export", 1)[1], re.S).group(1)
    monkeypatch.chdir(tmp_path)
    namespace = {"clf": clf}
    exec(compile(code, "README.md", "exec"), namespace)  # as written, with a trained `clf`
    assert (tmp_path / "reviews.onnx").is_file() and isinstance(namespace["predictor"], runtime.Predictor)
    assert str(clf.predict_labels(["A gripping film."])) in capsys.readouterr().out
