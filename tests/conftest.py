"""Test configuration: quiet TensorFlow, fixed seeds, shared fixtures, the fast tier.

This module imports neither TensorFlow nor Keras: what needs them imports them when it runs, so the fast tier
(`--fast`, below) runs without them.
"""

import contextlib
import errno
import fcntl
import functools
import importlib.abc
import importlib.machinery
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
import types

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

# The hostile-input properties' Hypothesis profiles (tests/hostile.py): `short` in `make test`, `fuzz` under
# benchmarks/fuzz.py.
from hypothesis import settings  # noqa: E402

from hostile import PROFILE  # noqa: E402

settings.load_profile(PROFILE)

# The serving tests need the serve extra (FastAPI, uvicorn), which `make test` installs with the test extras.
try:
    import fastapi  # noqa: F401
except ImportError:
    collect_ignore_glob = ["serve/*"]


# The longest test files (--durations on 2 cores, BENCHMARKS.md "The test suite's time"), started first in this
# order: `make test`'s two processes (`-n 2 --dist loadfile --no-loadscope-reorder`) each take the next file as they
# finish one, so with these first they end together instead of one running a long file alone at the end. Every other
# file keeps its place after them.
LONGEST_FIRST = (
    "runs/test_train.py",
    "models/test_text_classifier.py",
    "cli/test_cli_faults_run.py",
    "test_distribute.py",
    "cli/test_cli.py",
    "test_examples.py",
    "test_init.py",
    "runtime/test_predictor.py",
    "explain/test_attributions.py",
    "batch/test_on_ray.py",
    "test_quickstart.py",  # only where the real IMDB archive is (../shared)
)
assert all(os.path.isfile(os.path.join(os.path.dirname(__file__), name)) for name in LONGEST_FIRST), "a file is gone"


# The fast tier, `make test-fast` (`pytest --fast`): the tests of these files that need no Keras (NumPy's decision
# code, data, run folders, checks, limits, refusals), in about a minute. A test needs Keras when it is marked `keras`,
# or uses a fixture of `KERAS_FIXTURES` (trained runs, eager functions, trainings stopped early); with --fast no other
# file is collected and those tests are deselected. There, an import of TensorFlow or Keras fails the test or file that
# makes it, with its traceback (`_NoKeras`): a test that comes to need Keras is marked, or leaves the list, instead of
# slowing the tier down unseen. `make test` runs every test, these included.
FAST = (
    "batch/test_cluster.py",
    "batch/test_files.py",
    "cli/test_cli_faults_data.py",
    "cli/test_cli_options.py",
    "cli/test_commands.py",
    "cli/test_dependencies.py",
    "cli/test_predict_command.py",
    "cli/test_process.py",
    "cli/test_render.py",
    "cli/test_serve_command.py",
    "data/test_archive.py",
    "data/test_batching.py",
    "data/test_dataset.py",
    "data/test_decoding.py",
    "data/test_encoding.py",
    "data/test_ids.py",
    "data/test_imdb.py",
    "data/test_progress.py",
    "data/test_tables.py",
    "data/test_tables_properties.py",
    "data/test_text.py",
    "data/test_text_properties.py",
    "data/test_units.py",
    "data/test_vocabulary.py",
    "explain/test_corpus.py",
    "explain/test_corpus_source.py",
    "explain/test_erasure.py",
    "explain/test_explanation.py",
    "explain/test_faithfulness.py",
    "explain/test_picture.py",
    "explain/test_picture_scripts.py",
    "explain/test_report.py",
    "explain/test_summaries.py",
    "models/test_arguments.py",
    "models/test_embeddings.py",
    "ngrams/test_onevsrest.py",
    "runs/test_baseline.py",
    "runs/test_config.py",
    "runs/test_data_record.py",
    "runs/test_directory.py",
    "runs/test_evaluation_page.py",
    "runs/test_run_context.py",
    "runs/test_explain.py",
    "runs/test_table.py",
    "runtime/test_bundle.py",
    "runtime/test_checks.py",
    "serve/test_batcher.py",
    "serve/test_limits.py",
    "test_calibration.py",
    "test_cut.py",
    "test_decision.py",
    "test_doc_examples.py",
    "test_errors.py",
    "test_imports.py",
    "test_kinds.py",
    "test_main.py",
    "test_metrics.py",
    "test_package.py",
    "test_policy.py",
    "test_policy_properties.py",
    "test_tuning.py",
    "utils/test_atomic.py",
    "utils/test_jsonfile.py",
    "utils/test_shell.py",
)
KERAS_FIXTURES = {
    "han_run", "han_run_dir", "rnn_run", "rnn_run_dir", "multilabel_run", "multilabel_run_dir", "cli_run", "workdir",
    "eager", "no_bundle", "stop_before_fit", "stop_after_first_epoch",
}  # fmt: skip


def _file(path):
    """The name of a test file as `LONGEST_FIRST` and `FAST` write it: relative to tests/, with /."""
    return os.path.relpath(str(path), os.path.dirname(os.path.abspath(__file__))).replace(os.sep, "/")


def pytest_addoption(parser):
    parser.addoption(
        "--fast", action="store_true", help="the fast tier: only FAST's files (tests/conftest.py), without TensorFlow"
    )


def pytest_configure(config):
    config.addinivalue_line("markers", "fast: in the fast tier (`make test-fast`; set by tests/conftest.py)")
    config.addinivalue_line("markers", "keras: needs Keras (TensorFlow), so not in the fast tier (tests/conftest.py)")
    if config.getoption("fast"):
        gone = [name for name in FAST if not os.path.isfile(os.path.join(os.path.dirname(__file__), name))]
        if gone:
            raise pytest.UsageError(f"FAST (tests/conftest.py) names files that are gone: {', '.join(gone)}")
        sys.meta_path.insert(0, _NoKeras())


def pytest_ignore_collect(collection_path, config):
    """With --fast, every test file that is not in FAST."""
    if config.getoption("fast") and collection_path.name.startswith("test_") and collection_path.suffix == ".py":
        return True if _file(collection_path) not in FAST else None  # None: pytest's own rules still apply
    return None


class _NoKeras(importlib.abc.MetaPathFinder):
    """The fast tier's guard: TensorFlow and Keras can be found (`importlib.util.find_spec`), but not imported.

    Importing either fails the test (or, at collection, the file) that does it, with the import's traceback.
    """

    def find_spec(self, name, path=None, target=None):
        if name not in ("tensorflow", "keras"):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None:
            spec.loader = _Refused()
        return spec


class _Refused(importlib.abc.Loader):
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        pytest.fail(
            f"the fast tier imports no {module.__name__} (traceback above): mark the test that needs it `keras`, "
            "take its file out of FAST (tests/conftest.py), or take the import out of the code it tests"
        )


def pytest_collection_modifyitems(config, items):
    for item in items:
        if KERAS_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.keras)
        elif _file(item.path) in FAST and not item.get_closest_marker("keras"):
            item.add_marker(pytest.mark.fast)
    if config.getoption("fast"):
        config.hook.pytest_deselected(items=[item for item in items if not item.get_closest_marker("fast")])
        items[:] = [item for item in items if item.get_closest_marker("fast")]
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(_file(item.path), len(rank)))  # stable: files and tests keep their order


@pytest.fixture(autouse=True)
def _seed(request):
    """Seeded generators (Keras's, and float32); in the fast tier, which imports no Keras, Python's and NumPy's."""
    if request.config.getoption("fast"):
        random.seed(1234)  # what keras.utils.set_random_seed does for these two
        np.random.seed(1234)
        yield
        return
    import keras

    keras.utils.set_random_seed(1234)
    keras.config.set_dtype_policy("float32")
    yield
    keras.config.set_dtype_policy("float32")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


IMDB_ARCHIVE = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "datasets", "aclImdb_v1.tar.gz")


@pytest.fixture(scope="session")
def imdb_splits():
    """The real IMDB train/test splits from ../shared (skipped when absent)."""
    if not os.path.exists(IMDB_ARCHIVE):
        pytest.skip(f"real IMDB archive not found at {os.path.normpath(IMDB_ARCHIVE)}")
    from hierattn.data import load_imdb

    return load_imdb(IMDB_ARCHIVE, splits=("train", "test"), download=False, progress=False)


@pytest.fixture(scope="session")
def imdb_sample(imdb_splits):
    """300 real training reviews, both classes (a fixed, seeded sample)."""
    indices = np.random.default_rng(0).choice(len(imdb_splits["train"]), size=300, replace=False)
    return imdb_splits["train"].subset(np.sort(indices))


POSITIVE = ["great", "wonderful", "loved", "superb", "brilliant", "moving"]
NEGATIVE = ["awful", "boring", "hated", "terrible", "dull", "painful"]


def rewrite_bundle_metadata(source, target, change):
    """A copy of the bundle at `source` at `target`, its hierattn metadata passed through `change`."""
    import onnx

    from hierattn.runtime.bundle import METADATA_KEY

    model = onnx.load(source)
    props = {p.key: p.value for p in model.metadata_props}
    metadata = json.loads(props[METADATA_KEY])
    change(metadata)
    onnx.helper.set_model_props(model, {**props, METADATA_KEY: json.dumps(metadata)})
    onnx.save(model, target)


def make_reviews(n, seed=0):
    """A tiny generated sentiment corpus: (texts, labels) with labels pos/neg."""
    return _generated_reviews(
        n,
        seed,
        (POSITIVE, NEGATIVE),
        lambda choose: [f"The film was {choose()}.", f"I found the acting {choose()}!"],
        "Mr. Smith directed it in the U.S. in 1999.",
        " ",
    )


# Real Chinese phrases of food-delivery reviews, for a corpus written without spaces.
POSITIVE_ZH = ["送餐很快", "味道不错", "很好吃", "服务热情", "分量很足", "下次还点"]
NEGATIVE_ZH = ["等了两个小时", "饭都凉了", "太难吃了", "送错了", "分量太少", "再也不点"]


def make_chinese_reviews(n, seed=0):
    """A tiny generated corpus of Chinese reviews (no spaces; 。！ between sentences): (texts, labels) pos/neg."""
    return _generated_reviews(
        n,
        seed,
        (POSITIVE_ZH, NEGATIVE_ZH),
        lambda choose: [f"这家店{choose()}。", f"{choose()}，{choose()}！"],
        "我们点了两份米饭和一个汤。",
        "",
    )


def _generated_reviews(n, seed, phrases, sentences, neutral, joiner):
    """`n` seeded reviews: `sentences(choose)` of one class's phrases, half with a `neutral` sentence, shuffled."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for _ in range(n):
        positive = bool(rng.integers(0, 2))
        words = phrases[0] if positive else phrases[1]
        chosen = sentences(lambda words=words: rng.choice(words))
        if rng.random() < 0.5:
            chosen.append(neutral)
        texts.append(joiner.join(rng.permutation(chosen)))
        labels.append("pos" if positive else "neg")
    return texts, labels


# Food-delivery reviews as people write them, in the languages of the legacy encodings (GBK is GB18030's subset).
LEGACY_REVIEWS = {
    "gb18030": [
        "送餐很快，味道不错。",
        "等了两个小时，饭都凉了。",
        "菜量很足，下次还会再点。",
        "米饭太硬了，汤也洒了一半。",
        "包装很用心，外卖小哥态度也好。",
        "太咸了，根本吃不下去。",
        "价格实惠，分量也够两个人吃。",
        "送错了地址，打电话也没人接。",
        "鱼香肉丝很好吃，就是有点辣。",
        "第一次点这家，感觉还可以。",
        "配送超时一个小时，再也不点了。",
        "口味一般，没有图片上好看。",
    ],
    "big5": [
        "這家餐廳的服務很好。",
        "外送速度很快，餐點還是熱的。",
        "份量太少了，價格又貴。",
        "牛肉麵的湯頭非常濃郁。",
        "等了一個多小時才送到。",
        "店員態度親切，下次還會再來。",
        "炸雞太油了，吃完覺得很膩。",
        "飲料送來時已經灑了一半。",
        "便當的菜色很豐富，推薦大家。",
        "味道普通，沒有特別驚艷。",
        "包裝很用心，完全沒有漏湯。",
        "訂錯了餐點，客服也不處理。",
    ],
    "shift_jis": [
        "配達がとても早かったです。",
        "料理がまだ温かくて美味しかった。",
        "注文した商品が一つ足りませんでした。",
        "量が多くて、お腹いっぱいになりました。",
        "二時間も待たされて、冷めていました。",
        "店員さんの対応がとても丁寧でした。",
        "値段の割に味は普通でした。",
        "スープがこぼれていて残念でした。",
        "また同じお店で注文したいと思います。",
        "ご飯が硬くて、少し食べにくかった。",
        "包装がしっかりしていて安心しました。",
        "辛すぎて最後まで食べられませんでした。",
    ],
    "euc_kr": [
        "배달이 빨라서 좋았어요.",
        "음식이 아직 따뜻하고 맛있었어요.",
        "주문한 메뉴 하나가 빠져 있었습니다.",
        "양이 많아서 배부르게 먹었어요.",
        "두 시간이나 기다려서 음식이 식었어요.",
        "사장님이 친절하셔서 기분이 좋았습니다.",
        "가격에 비해 맛은 평범했어요.",
        "국물이 쏟아져서 아쉬웠어요.",
        "다음에도 이 가게에서 주문할게요.",
        "밥이 너무 딱딱해서 먹기 힘들었어요.",
        "포장이 꼼꼼해서 안심이 됐어요.",
        "너무 매워서 다 먹지 못했습니다.",
    ],
}
LEGACY_ENCODINGS = [  # (written in, read in, its name): each is read as its superset, which decodes these reviews the same
    ("gb18030", "gb18030", "GB18030"),
    ("gbk", "gb18030", "GB18030"),
    ("big5", "cp950", "Big5"),
    ("shift_jis", "cp932", "Shift-JIS"),
    ("euc_kr", "cp949", "EUC-KR"),
]


WAIMAI = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "datasets", "multilingual", "waimai_10k")


@pytest.fixture(scope="session")
def waimai_sample():
    """600 real Chinese reviews of waimai_10k's train.csv, both classes: (texts, labels) (skipped when absent)."""
    path = os.path.join(WAIMAI, "train.csv")
    if not os.path.exists(path):
        pytest.skip(f"the Chinese development set was not found at {os.path.normpath(path)}")
    import pandas as pd

    table = pd.read_csv(path).sample(600, random_state=0)
    return list(table["text"]), list(table["label"])


def interrupt_once(path):
    """Interrupts the main thread, as Ctrl-C does, the moment `path` is moved into place; returns a watch to `join()`
    after the interrupt (or at the test's end), which puts things back.

    The moment is `hierattn.utils.atomic._publish`, through which hierattn writes every file: the interrupt is pending
    before the code that wrote `path` goes on, and Python raises it there as KeyboardInterrupt, so the work cannot end
    before it (as it could before a thread that polls for `path` sees it). A process started as a background job
    (`command &`) ignores SIGINT, and `_thread.interrupt_main` then does nothing: Python's own handler is put back
    first, as in a terminal. Called from the main thread.
    """
    import _thread

    from hierattn.utils import atomic

    if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL):
        signal.signal(signal.SIGINT, signal.default_int_handler)
    publish, target = atomic._publish, os.path.abspath(path)

    def publish_then_interrupt(temporary, written, overwrite):
        publish(temporary, written, overwrite)
        if os.path.abspath(written) == target:
            atomic._publish = publish  # once
            _thread.interrupt_main()

    atomic._publish = publish_then_interrupt
    return types.SimpleNamespace(join=lambda: setattr(atomic, "_publish", publish))


@contextlib.contextmanager
def eagerly():
    """Keras functions run eagerly inside: a tiny fit takes a second or two instead of tracing graphs for ten.

    For tests that need a trained classifier, or test what fit does with its arguments, not how a graph trains: the
    session runs, the CLI's and tests/runs/test_train.py's of training itself (saving, reloading, seeds, strategies)
    train in graphs, as users' do. A run of few batches is faster eagerly; one of many HAN or RNN batches is not.
    """
    import warnings

    import tensorflow as tf

    before = tf.config.functions_run_eagerly()
    tf.config.run_functions_eagerly(True)
    try:
        with warnings.catch_warnings():  # tf.data's functions stay traced, as they should: TensorFlow warns it
            warnings.filterwarnings("ignore", "Even though the `tf.config.experimental_run_functions_eagerly`")
            yield
    finally:
        tf.config.run_functions_eagerly(before)


@pytest.fixture
def eager():
    """The test runs with Keras functions eager (`eagerly`)."""
    with eagerly():
        yield


def write_corpus(folder, train=160, test=40):
    """train.csv and test.csv of the generated corpus in `folder` (returned)."""
    import pandas as pd

    for name, n, seed in (("train", train, 0), ("test", test, 1)):
        texts, labels = make_reviews(n, seed)
        pd.DataFrame({"text": texts, "label": labels}).to_csv(folder / f"{name}.csv", index=False)
    return folder


def shared(tmp_path_factory, name, make):
    """`<root>/name`, made by `make(folder)` once per test session for all of its processes; returns the folder.

    The root is the folder the processes of a session share: with
    pytest-xdist, the parent of each worker's base temporary folder (its
    documented pattern), else the base folder itself. The first process that
    needs `name` makes it under a file lock; any other waits for the lock and
    reuses it. A failed attempt leaves no `name.done`, so the next one starts
    afresh.
    """
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                make(folder)
                done.touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return folder


@pytest.fixture(scope="session")
def tiny_csv(tmp_path_factory):
    """Train and test CSV files of the generated corpus (one pair for the session, as the shared runs record them)."""
    folder = shared(tmp_path_factory, "tiny", write_corpus)
    return folder / "train.csv", folder / "test.csv"


def tiny_args(epochs=1):
    """`train csv`'s options for a tiny HAN of the generated corpus (seconds to train): `epochs`, batches of 16,
    8-dimensional embeddings learned from scratch."""
    return ["--epochs", str(epochs), "--batch-size", "16", "--embedding-dim", "8", "--embeddings", "none"]


TINY_OPTIONS = {
    "han": {"embedding_dim": 8, "word_units": 8, "sentence_units": 8, "attention_units": 8},
    "transformer": {"embedding_dim": 8, "num_heads": 2, "intermediate_dim": 16, "num_layers": 1},
    "rnn": {"embedding_dim": 8, "units": 8},
}


def make_run(tiny_csv, path, model, epochs=1, bundle=True, **kwargs):
    """Trains a tiny run of `model` on the generated corpus and loads its `TextClassifier`.

    With `bundle=False` the run has no model.onnx (exporting takes seconds): for tests of anything but the bundle.
    """
    from hierattn.data import load_table
    from hierattn.runs.config import TrainConfig
    from hierattn.runs.run import load_run
    from hierattn.runs.train import train

    train_data, _ = load_table(tiny_csv[0])
    backbone = {**TINY_OPTIONS[model], **kwargs.pop("backbone", {})}
    settings = {"model": model, "epochs": epochs, "batch_size": 16, "embeddings": "none", "min_count": 1}
    config = TrainConfig.from_dict({**settings, **backbone, **kwargs})
    train(train_data, None, config, path, log=lambda m: None, verbose=0, bundle=bundle)
    return load_run(path).classifier


@functools.cache
def _keras_callbacks():
    """The Keras callbacks of the tests, defined at their first use (`__getattr__`)."""
    import keras

    class StopAfterFirstEpoch(keras.callbacks.Callback):
        """Interrupts training as Ctrl-C would, once the first epoch is saved."""

        def on_epoch_end(self, epoch, logs=None):
            raise KeyboardInterrupt

    class StopBeforeFit(keras.callbacks.Callback):
        """Interrupts training as Ctrl-C would when fit begins: before the first epoch, once the run recorded its
        settings."""

        def on_train_begin(self, logs=None):
            raise KeyboardInterrupt

    return {"StopAfterFirstEpoch": StopAfterFirstEpoch, "StopBeforeFit": StopBeforeFit}


def __getattr__(name):
    """`StopAfterFirstEpoch` and `StopBeforeFit` (`from conftest import ...`), which import Keras, made on first use
    (PEP 562, as `hierattn`'s own public names): importing this module imports no Keras."""
    if name in ("StopAfterFirstEpoch", "StopBeforeFit"):
        return _keras_callbacks()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _train_with(monkeypatch, **options):
    """`hierattn.runs.train.train` with `options`, for the runs trained through `hierattn.runs.sources` (and so the CLI)
    in this process."""
    import functools
    import importlib

    training = importlib.import_module("hierattn.runs.train")
    monkeypatch.setattr(training, "train", functools.partial(training.train, **options))


@pytest.fixture
def no_bundle(monkeypatch):
    """Runs trained through `hierattn.runs.sources` (and so the CLI) in this process skip the bundle (`bundle=False`).

    Exporting takes seconds; only the tests of export, runtime, serve and batch need a run's model.onnx.
    """
    _train_with(monkeypatch, bundle=False)


@pytest.fixture
def stop_before_fit(monkeypatch):
    """Runs trained through `hierattn.runs.sources` (and so the CLI) in this process stop when fit begins (`StopBeforeFit`).

    For the tests of options: by then the tables were read, the classifier adapted (vocabulary, word2vec) and the run's
    settings and data recorded (config.json, run.json); `train csv` exits as after a Ctrl-C (130).
    """
    _train_with(monkeypatch, callbacks=[_keras_callbacks()["StopBeforeFit"]()])


@pytest.fixture
def stop_after_first_epoch(monkeypatch):
    """Runs trained through `hierattn.runs.sources` (and so the CLI) in this process stop once their first epoch is
    saved (`StopAfterFirstEpoch`), before the n-gram part, the evaluation, the baseline and the model files."""
    _train_with(monkeypatch, callbacks=[_keras_callbacks()["StopAfterFirstEpoch"]()])


# Trained runs, made once per session -------------------------------------------------------------------------------
#
# Training even a tiny run takes seconds, so the runs that many test modules need are trained once per test session,
# by whichever process needs one first (`shared`), and shared by all. A test that changes a run's files works on a
# copy (`shutil.copytree`); one that changes a classifier's state (e.g. assigns a weight) puts it back before it ends.


def _session_run(tiny_csv, tmp_path_factory, model, bundle):
    folder = shared(
        tmp_path_factory, f"{model}-run", lambda folder: make_run(tiny_csv, folder / "run", model, bundle=bundle)
    )
    return folder / "run"


def _classifier(path):
    from hierattn.runs.run import load_run

    return load_run(path).classifier


@pytest.fixture(scope="session")
def han_run_dir(tiny_csv, tmp_path_factory):
    """The folder of a tiny HAN run (`make_run`'s settings) with its bundle, trained once per session."""
    return _session_run(tiny_csv, tmp_path_factory, "han", bundle=True)


@pytest.fixture(scope="session")
def han_run(han_run_dir):
    """The `TextClassifier` of `han_run_dir`, loaded once per session."""
    return _classifier(han_run_dir)


@pytest.fixture(scope="session")
def rnn_run_dir(tiny_csv, tmp_path_factory):
    """The folder of a tiny RNN run (`make_run`'s settings) without a bundle, trained once per session."""
    return _session_run(tiny_csv, tmp_path_factory, "rnn", bundle=False)


@pytest.fixture(scope="session")
def rnn_run(rnn_run_dir):
    """The `TextClassifier` of `rnn_run_dir`, loaded once per session."""
    return _classifier(rnn_run_dir)


TOPICS = {
    "sport": ["goal", "match", "team", "referee"],
    "money": ["bank", "price", "market", "shares"],
    "food": ["bread", "cheese", "wine", "dinner"],
}


def make_topics(n, seed=0):
    """A tiny generated multi-label corpus: (texts, label lists), each text on 0 to 3 of sport, money and food."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for _ in range(n):
        chosen = [topic for topic in TOPICS if rng.random() < 0.4]
        words = [str(word) for topic in chosen for word in rng.choice(TOPICS[topic], 2)]
        filler = ["The news today was short.", "Nothing else happened in town."]
        sentences = [f"They talked about {word} at length." for word in words] + [str(rng.choice(filler))]
        texts.append(" ".join(rng.permutation(sentences)))
        labels.append(chosen)
    return texts, labels


@pytest.fixture(scope="session")
def multilabel_csv(tmp_path_factory):
    """Train and test CSV files of the generated multi-label corpus: `text`, `labels` joined by `|` (empty: none)."""
    import pandas as pd

    def write(folder):
        for name, n, seed in (("train", 200, 0), ("test", 40, 1)):
            texts, labels = make_topics(n, seed)
            frame = pd.DataFrame({"text": texts, "labels": ["|".join(chosen) for chosen in labels]})
            frame.to_csv(folder / f"{name}.csv", index=False)

    folder = shared(tmp_path_factory, "multilabel", write)
    return folder / "train.csv", folder / "test.csv"


@pytest.fixture(scope="session")
def multilabel_run_dir(multilabel_csv, tmp_path_factory):
    """The folder of a tiny multi-label HAN run on `multilabel_csv` (with its test file and bundle), trained once per
    session."""
    from hierattn.runs.sources import train_table

    settings = {"model": "han", "epochs": 2, "batch_size": 16, "embeddings": "none", "min_count": 1}
    settings.update(TINY_OPTIONS["han"], multi_label=True)

    def make(folder):
        train_table(
            multilabel_csv[0],
            settings,
            test=multilabel_csv[1],
            output=folder / "run",
            log=lambda m: None,
            verbose=0,
            on_table=lambda *args: None,
        )

    return shared(tmp_path_factory, "multilabel-run", make) / "run"


@pytest.fixture(scope="session")
def multilabel_run(multilabel_run_dir):
    """The multi-label `TextClassifier` of `multilabel_run_dir`, loaded once per session."""
    return _classifier(multilabel_run_dir)


@pytest.fixture(scope="session")
def cli_run(tiny_csv, tmp_path_factory):
    """One HAN run trained through the CLI, once per session: `train csv TRAIN --test TEST` with tiny settings.

    It runs in a fresh folder with no --output, so the run goes to the default
    runs/<model>-<dataset>-<time>. Returns the folder, the run directory and
    what the command gave: its `exit_code`, `output`, `stdout` and `stderr`
    (as click's `Result` has them; recorded, as another process may have
    trained the run).
    """

    def make(folder):
        from click.testing import CliRunner

        from hierattn.cli import cli

        tiny = tiny_args()
        with contextlib.chdir(folder):
            result = CliRunner().invoke(cli, ["train", "csv", str(tiny_csv[0]), "--test", str(tiny_csv[1]), *tiny])
        assert result.exit_code == 0, result.output
        fields = {name: getattr(result, name) for name in ("exit_code", "output", "stdout", "stderr")}
        (folder / "result.json").write_text(json.dumps(fields))

    folder = shared(tmp_path_factory, "cli-run", make)
    (run_dir,) = (folder / "runs").iterdir()
    return folder, run_dir, types.SimpleNamespace(**json.loads((folder / "result.json").read_text()))


def mini_imdb(path, member_prefix="aclImdb"):
    """A tiny aclImdb_v1.tar.gz: 30 reviews per class in train/ and test/."""
    with tarfile.open(path, "w:gz") as tar:
        for split in ("train", "test"):
            for label in ("pos", "neg"):
                for i in range(30):
                    data = f"A {'great' if label == 'pos' else 'awful'} film number {i}. ".encode() * 40
                    info = tarfile.TarInfo(f"{member_prefix}/{split}/{label}/{i}_{8 if label == 'pos' else 2}.txt")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def small_disk(tmp_path, monkeypatch):
    """A folder on a full disk, holding one file, `filler`.

    Where this process may mount file systems, a real one: a 1 MiB tmpfs
    filled up, so every write fails with ENOSPC as on a full disk. Elsewhere
    the failure is injected where hierattn moves a finished file into place
    (`hierattn.utils.atomic`), after its bytes were written.
    """
    folder = tmp_path / "disk"
    folder.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)]
    if shutil.which("mount") and os.geteuid() == 0 and subprocess.run(mount, capture_output=True).returncode == 0:
        try:
            with open(folder / "filler", "wb", buffering=0) as f:
                while True:
                    f.write(b"\0" * 65536)
        except OSError as error:
            assert error.errno == errno.ENOSPC
        yield folder
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)
        return
    (folder / "filler").write_bytes(b"")

    def full(temporary, path, overwrite):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("hierattn.utils.atomic._publish", full)
    yield folder


# Bad input against the command line: the contract of tests/cli/test_cli_faults_*.py ---------------------------------
#
# Every case checks the same contract: exit code 1 or 2, exactly one line that starts with `Error:`, no traceback
# anywhere in the output, no earlier file changed and no partial file left behind.

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository: cli.py, hierattn/
PARTIAL_SUFFIXES = (".partial", ".tmp", ".part", ".partial.keras")


def invoke_cli(*args, input=None):
    """`hierattn ARGS` through click's CliRunner, in this process; its click `Result`."""
    from click.testing import CliRunner

    from hierattn.cli import cli

    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def snapshot(*folders):
    """Every file under `folders` with a hash of its bytes."""
    import hashlib
    import pathlib

    files = {}
    for folder in folders:
        for path in pathlib.Path(folder).rglob("*"):
            if path.is_file():
                files[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


def assert_refused(output, exit_code, before=None, after=None):
    """The contract of every bad input: one Error line, no traceback, nothing changed or left behind."""
    assert exit_code in (1, 2), output
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, output
    if before is not None:
        assert after == before, "files changed"
    if after is not None:
        assert not [f for f in after if f.endswith(PARTIAL_SUFFIXES)], after
    return errors[0]


def refused(*args, input=None, folders=()):
    """`invoke_cli(*args)` refused as `assert_refused` says, nothing under `folders` changed; its Error line."""
    before = snapshot(*folders)
    result = invoke_cli(*args, input=input)
    return assert_refused(result.output, result.exit_code, before, snapshot(*folders))


def run_program(*args, input=None, env=None, timeout=240):
    """`python cli.py ARGS` in a fresh process, as a user runs it."""
    full_env = {**os.environ, "PYTHONPATH": PROJECT, **(env or {})}
    return subprocess.run(
        [sys.executable, os.path.join(PROJECT, "cli.py"), *map(str, args)],
        input=input,
        capture_output=True,
        env=full_env,
        timeout=timeout,
        cwd=PROJECT,
    )


def write_file(path, content):
    """`content` (text or bytes) written to `path`, returned."""
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def compressed(path, suffix):
    """`path` compressed beside it as `path` + `suffix` (`.gz`, `.bz2`, `.xz` or `.zip`), returned."""
    import bz2
    import gzip
    import lzma
    import zipfile

    target = path.with_name(path.name + suffix)
    if suffix == ".zip":
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(path, path.name)
    else:
        target.write_bytes({".gz": gzip, ".bz2": bz2, ".xz": lzma}[suffix].compress(path.read_bytes()))
    return target


@pytest.fixture
def workdir(tmp_path, cli_run):
    """A folder with a copy of `cli_run`'s run (`run/`) and an earlier output file that must survive (`earlier.csv`)."""
    shutil.copytree(cli_run[1], tmp_path / "run")
    (tmp_path / "earlier.csv").write_text("my earlier results\n")
    return tmp_path


# A hand-made explanation, for the renderings' tests ---------------------------------------------------------------

SAMPLE_TEXT = 'Great <film> & "cast". Bad zzyzx end!'
SAMPLE_EVIDENCE = {"Great": 0.9, "film": 0.3, "cast": 0.1, "Bad": -0.6, "zzyzx": 0.0, "end": -0.05}


def sample_explanation(evidence=True, network_weight=0.4):
    """Six words in two sentences (one word cut, one out of the vocabulary).

    With `evidence`, each word has evidence (half the network's, half the
    n-gram part's; none from the network at `network_weight` 0) and the
    explanation a decision whose terms add up to its margin; without, neither.
    """
    from hierattn.explain import Explanation, NgramContribution, WordWeight

    def word(text, sentence, index, weight, oov=False, used=True):
        start = SAMPLE_TEXT.index(text)
        ngram = SAMPLE_EVIDENCE[text] / 2 if evidence else 0.0
        network = 0.0 if not evidence or not used or network_weight == 0 else SAMPLE_EVIDENCE[text] - ngram
        return WordWeight(
            text, text.lower(), sentence, index, start, start + len(text), weight, weight, 1.0, oov, used,
            network + ngram, network, ngram,
        )  # fmt: skip

    words = [
        word("Great", 0, 0, 0.5),
        word("film", 0, 1, 0.2),
        word("cast", 0, 2, 0.1),
        word("Bad", 1, 0, 0.15),
        word("zzyzx", 1, 1, 0.05, oov=True),
        word("end", 1, 2, 0.0, used=False),
    ]
    cut = SAMPLE_TEXT.index(".") + 1
    sentences = [
        {"index": 0, "start": 0, "end": cut, "text": SAMPLE_TEXT[:cut], "weight": 0.8, "used": True},
        {"index": 1, "start": cut + 1, "end": len(SAMPLE_TEXT), "text": SAMPLE_TEXT[cut + 1 :], "weight": 0.2,
         "used": True},
    ]  # fmt: skip
    e = Explanation(SAMPLE_TEXT, "pos", {"neg": 0.1, "pos": 0.9}, words, sentences, 1, ["1 of 6 words were cut"])
    if not evidence:
        return e
    e.network_probabilities = {"neg": 0.3, "pos": 0.7}
    e.ngrams = [NgramContribution("Great", 0, 0, 5, 0.45), NgramContribution("Bad", 1, 23, 26, -0.3, False)]
    network = sum(w.network_evidence for w in words)
    e.decision = {
        "versus": "neg",
        "network": network + 0.1 + 0.02,
        "ngram_bias": 0.05,
        "ngrams": sum(w.ngram_evidence for w in words),
        "network_weight": network_weight,
        "ngram_weight": 1.6,
        "network_baseline": 0.1,
        "integration_error": 0.02,
        "not_shown": 0.0,
    }
    e.decision["margin"] = e.decision["network"] + e.decision["ngram_bias"] + e.decision["ngrams"]
    return e


# Real servers for the serving tests (tests/serve/): `hierattn serve` started as a process on a free 127.0.0.1 port.
# Here, not in a conftest of tests/serve: test modules import this one by its name, `conftest`.


class Server:
    """A `hierattn serve` process on a free loopback port: its `url`, a `client`, its log lines, and `stop`.

    Args:
        run_dir: The run to serve.
        *options: More `hierattn serve` options (e.g. `--no-explain`).
    """

    def __init__(self, run_dir, *options, timeout=60):
        command = [sys.executable, "-m", "hierattn", "serve", "--run", str(run_dir), "--port", "0", *options]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
        self.lines = []
        self._first = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        import httpx

        self.client = None
        try:
            self.url = self._wait_for_url(timeout)
            self.client = httpx.Client(base_url=self.url, timeout=60)
            self.wait_until(lambda: self.client.get("/readyz").status_code == 200, timeout)
        except BaseException:
            self.stop()
            raise

    def _read(self):
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))
            if " on http://" in line:
                self._first.set()
        self._first.set()

    def _wait_for_url(self, timeout):
        self._first.wait(timeout)
        found = [re.search(r"on (http://\S+/)", line) for line in self.lines]
        urls = [match.group(1) for match in found if match]
        if not urls:
            raise AssertionError("the server did not start:\n" + "\n".join(self.lines))
        return urls[0]

    def wait_until(self, condition, timeout=120):
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if condition():
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"timed out after {timeout} s; the server's log:\n" + "\n".join(self.lines))

    def queues(self):
        """`/v1/model`'s queue counts."""
        return self.client.get("/v1/model").json()["queues"]

    def wait_for_explanations(self, timeout=180):
        self.wait_until(lambda: self.client.get("/readyz").json()["explain"] == "ready", timeout)

    def log(self):
        return "\n".join(self.lines)

    def stop(self, sig=signal.SIGTERM, timeout=60):
        """Sends `sig`, waits for the process and its last log line, and returns the exit code."""
        if self.client is not None:
            self.client.close()
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout)
            raise
        self._reader.join(timeout)  # every line the process wrote is in `lines`
        return code


@pytest.fixture(scope="module")
def start_server():
    """Starts `Server`s for a test module (`start_server(run_dir, *options)`) and stops them when it ends."""
    started = []

    def start(run_dir, *options, timeout=60):
        started.append(Server(run_dir, *options, timeout=timeout))
        return started[-1]

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def server(han_run_dir, start_server):
    """The tiny HAN run served on a free 127.0.0.1 port, its explainer loaded (the serve tests').

    A module that needs other options, or to see the server before its explainer loads, defines its own `server`.
    (Not in a tests/serve/conftest.py: the test modules' `from conftest import ...` would find that one.)
    """
    server = start_server(han_run_dir)
    server.wait_for_explanations()
    return server


@pytest.fixture
def fresh_shell(monkeypatch):
    """A PATH for `fresh_shell(*folders)`, no virtual environment activated; the cached answer about `python` forgotten."""
    from hierattn.utils import shell

    def use(*folders, venv=None):
        monkeypatch.setenv("PATH", os.pathsep.join(map(str, folders)))
        if venv:
            monkeypatch.setenv("VIRTUAL_ENV", str(venv))
        else:
            monkeypatch.delenv("VIRTUAL_ENV", raising=False)
        shell._bare_python_is_this_one.cache_clear()

    yield use
    shell._bare_python_is_this_one.cache_clear()
