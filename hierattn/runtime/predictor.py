"""`Predictor`: an exported bundle run by onnxruntime and NumPy, without TensorFlow or Keras."""

import concurrent.futures
import copy
import os

import numpy as np

from hierattn.data.batching import sort_batches_by_length, trim_padding
from hierattn.data.encoding import TextEncoder
from hierattn.data.ids import take_documents
from hierattn.data.progress import tqdm
from hierattn.data.text import Tokenizer
from hierattn.data.vocabulary import Vocabulary
from hierattn.decision import check_k, check_network
from hierattn.defaults import CASCADE
from hierattn.errors import DataError, first_line
from hierattn.ngrams import twin
from hierattn.policy import DecisionPolicy
from hierattn.runtime.bundle import DIGEST_KEY, file_digest, read_metadata
from hierattn.runtime.checks import as_texts, check_digest, check_graph, check_metadata, check_ngram_part
from hierattn.runtime.threads import Inline, check_threads, cores

# Texts per chunk of `Predictor.predict_texts`: one is tokenized while the network computes the one before.
PIPELINE_TEXTS = 1000


def load(path, threads=None, network=CASCADE["network"]):
    """Loads an exported bundle (`TextClassifier.export`, `hierattn export`) into a `Predictor`.

    Args:
        path: The bundle's `.onnx` file.
        threads: Threads onnxruntime computes with, a whole number from 1 to
            256 (or 4 per core, where that is more). Default: one per core;
            with `network="auto"`, one per core but one, which tokenizes
            and scores the next texts meanwhile (`Predictor.predict_texts`).
        network: `"auto"`: the network reads only the documents the n-gram
            part is not sure of, as the classifier decided on its validation
            texts; `"always"`: every document (`Predictor.network`).

    Returns:
        A `Predictor`.

    Raises:
        ArgumentError: `threads` or `network` is not one of their values.
        DataError: No such file, not a hierattn bundle onnxruntime can load,
            or one whose metadata is damaged or does not agree with its graph
            (`hierattn.runtime.checks`), or whose graph is not the one it was
            exported with (its `graph_sha256`, `hierattn.runtime.bundle`):
            checked here, not at the first prediction.
    """
    check_network(network)
    threads = check_threads(threads)
    import onnxruntime  # here, so that `import hierattn.runtime` costs nothing until a bundle is loaded

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise DataError(f"no bundle at {path}")
    digest, recorded = file_digest(path)
    if isinstance(recorded, str) and digest is not None:  # a changed graph refused before onnxruntime reads it
        check_digest({DIGEST_KEY: recorded}, digest, path)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads or max(1, cores() - (network == "auto"))
    options.log_severity_level = 3  # errors only: onnxruntime's warnings are about its own graph rewrites
    try:
        session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime raises its own classes, not exported by name
        first = first_line(error)
        raise DataError(f"{path} is not an ONNX model onnxruntime can load ({first})") from None
    try:  # onnxruntime gives its strings as Python's: a byte that is not UTF-8 raises when they are read
        metadata_map = session.get_modelmeta().custom_metadata_map
        [node.name for node in (*session.get_inputs(), *session.get_outputs())]
    except UnicodeDecodeError as error:
        raise DataError(
            f"{path}: its metadata or graph names are not UTF-8 text "
            f"(the byte 0x{error.object[error.start]:02x} at position {error.start} of one)"
        ) from None
    return _checked(session, metadata_map, path, network, digest)


def _checked(session, metadata_map, path, network, digest):
    """The `Predictor` of a loaded session whose metadata (`metadata_map`) and file digest (`file_digest`) pass every
    check of `load`: what `load` does once onnxruntime has read the file (the property tests call it with edited
    metadata on one session, sparing the 0.3 s onnxruntime takes to read the same graph again)."""
    metadata = read_metadata(metadata_map, path)
    check_digest(metadata, digest, path)
    check_metadata(metadata, path)
    try:
        predictor = Predictor(session, metadata, path, network)
        [predictor.policy.for_network(setting) for setting in CASCADE["networks"]]  # a damaged one refuses it now
    except (KeyError, TypeError, ValueError) as error:
        raise DataError(f"{path}: its hierattn metadata is damaged ({type(error).__name__}: {error})") from None
    names = {node.name for node in session.get_inputs()}
    outputs = {o.name for o in session.get_outputs()}
    tables = set(metadata.get("ngram_part", {}).get("tables", []))
    if (
        set(predictor._inputs.values()) != names or {metadata["output"], predictor._ngram_output} | tables != outputs
    ):  # every output named: one left unsaid is a part (the n-gram part's) whose metadata was taken out
        raise DataError(f"{path}: its hierattn metadata names inputs or outputs other than its graph's")
    check_graph(session, metadata, path)
    if "ngram_part" in metadata:
        check_ngram_part(predictor._read_tables(), metadata, session, path)
    return predictor


class Predictor:
    """A trained classifier as exported: raw texts in, class probabilities out, without TensorFlow.

    Gives the `TextClassifier`'s answers (`predict`, `predict_labels`,
    `predict_top_k`) from the bundle alone: hierattn's tokenizer and the bundle's vocabulary and
    length limits make the ids, onnxruntime runs the graph. Texts are
    batched by length with their padding trimmed, as the classifier does;
    many texts go a chunk at a time, the network computing one while the
    next is tokenized (`predict_texts`).

    Made by `load(path)`.

    Attributes:
        label_names: The class names, in the order of `predict`'s columns.
        multi_label: Whether the bundle is a multi-label classifier's (its
            columns independent label probabilities; False for bundles
            exported before multi-label classifiers).
        thresholds: A multi-label bundle's thresholds, one per label in
            `label_names` order (None for a single-label one).
        offsets: A single-label bundle's offsets of the decision rule for
            macro-F1, one per class (None: the most probable class).
        policy: How its part outputs become probabilities and answers
            (`hierattn.policy.DecisionPolicy`, from the bundle's metadata).
        decision: The same (`policy`).
        network: `"auto"`: the network reads only the documents the n-gram
            part is not sure of (`cascade`); `"always"`: every document.
            `with_network` gives a predictor of the other setting, sharing
            this one's session. Bundles exported before the cascade read every document.
        cascade: How each document is decided (`hierattn.decision.Cascade`),
            None for a bundle without an n-gram part or exported before.
        architecture: The backbone's name (`"han"`, ...), as the bundle records it.
        metadata: The bundle's metadata (`hierattn.runtime.bundle`).
        path: The bundle's file.

    Example:

    ```python
    from hierattn import runtime

    predictor = runtime.load("runs/han-imdb-20261125-120000/model.onnx")
    predictor.predict(["A superb film."])          # (1, classes), in predictor.label_names order
    predictor.predict_labels(["A superb film."])   # ["pos"] (multi-label: [["sport", "money"]])
    predictor.predict_top_k(["A superb film."], 1) # [[("pos", 0.97)]]
    ```
    """

    def __init__(self, session, metadata, path, network=CASCADE["network"]):
        self.path = path
        self.metadata = metadata
        policy = dict(metadata)
        if "ngram_part" not in metadata:  # a bundle without an n-gram part, or exported before the cascade
            policy.pop("cascade", None)
        self.policy = DecisionPolicy.from_dict(policy, check_network(network))  # refuses bad numbers
        self.label_names = list(self.policy.label_names)
        self.multi_label = self.policy.multi_label
        self.thresholds = None if self.policy.thresholds is None else list(self.policy.thresholds)
        self.offsets = None if self.policy.offsets is None else list(self.policy.offsets)
        self.architecture = metadata.get("architecture")
        settings = metadata["preprocessor"]
        vocabulary = metadata["vocabulary"]
        self.tokenizer = Tokenizer.from_config(settings["tokenizer"])
        self.encoder = TextEncoder(
            Vocabulary(vocabulary["tokens"], vocabulary.get("min_count", 1), vocabulary.get("max_size")),
            self.tokenizer,
            max_sentences=settings["max_sentences"] or 1,
            max_words=settings["max_words"] or 1,
            sequence_length=settings["sequence_length"] or 1,
        )
        self._mode = settings["mode"]
        self._ngram_length = settings.get("ngram_length") if "ngram_ids" in metadata["inputs"] else None
        self._inputs = dict(metadata["inputs"])
        self._output = metadata["output"]
        self._session = session
        self._ngram_output = metadata.get("ngram_output", self._output)
        self._tables = None  # the n-gram part's, read from the graph when first needed
        self._input_nodes = {node.name: node for node in session.get_inputs()}

    @property
    def network(self):
        """`"auto"` or `"always"`: the network reads the documents the n-gram part is not sure of, or every one."""
        return self.policy.network

    @property
    def cascade(self):
        return self.policy.cascade

    def with_network(self, network):
        """This predictor with the other `network` setting: a new one sharing its session (this one is unchanged)."""
        if check_network(network) == self.network:
            return self
        other = copy.copy(self)
        other.policy = self.policy.for_network(network)
        return other

    def _ngram_logits(self, ngram_ids):
        """The n-gram part's logits `(n, classes)` of its ids, in NumPy from the bundle's tables (`hierattn.ngrams.twin`).

        The graph's `ngram_output` gives them too (within float rounding), by a slower binary search of gathers.
        """
        return twin.logits(self._read_tables(), ngram_ids)

    def _read_tables(self):
        """The n-gram part's tables (`hierattn.ngrams.twin.NgramTables`), read from the graph at their first use."""
        if self._tables is None:
            part = self.metadata["ngram_part"]
            feed = {name: np.ones((1,) * len(node.shape), np.int32) for name, node in self._input_nodes.items()}
            found = self._session.run(part["tables"], feed)  # constants of the graph: any input gives them
            self._tables = twin.NgramTables(part, *found)
        return self._tables

    @property
    def decision(self):
        """How the probabilities become labels: the predictor's `policy`."""
        return self.policy

    def preprocess(self, texts, progress=False, workers=None):
        """The ids of raw texts the graph reads: `{"token_ids": ..., "ngram_ids": ...}` (the latter with an n-gram part).

        Many texts are tokenized in `workers` processes (default: one per
        core); `workers=1` keeps the work in this process (as inside an
        engine's worker, which must not fork).
        """
        texts = as_texts(texts)
        if self._ngram_length is None:
            return {"token_ids": self.encoder.encode(texts, mode=self._mode, workers=workers, progress=progress)}
        ids, whole = self.encoder.encode(
            texts, mode=(self._mode, "whole"), whole_length=self._ngram_length, workers=workers, progress=progress
        )
        return {"token_ids": ids, "ngram_ids": whole}

    def predict(self, texts, batch_size=32, progress=False):
        """Class probabilities of raw texts, `(len(texts), classes)` float32, columns in `label_names` order.

        With a cascade (`cascade`), only the texts the network reads are
        split into sentences for it; the others are tokenized once, fast,
        for the n-gram part (`predict_texts`).

        Args:
            texts: A list (or array, Series, tuple) of strings.
            batch_size: Documents per batch.
            progress: Show a progress bar.
        """
        return self.predict_texts(texts, batch_size, progress, wordless=False)

    def predict_texts(self, texts, batch_size=32, progress=False, workers=None, wordless=True):
        """Class probabilities of raw texts, NaN rows for texts without words (`hierattn.runtime.TextPredictor`).

        With a cascade the n-gram part's ids are made for every text
        (`Tokenizer.words`: no sentence split) and the network's only for
        the texts it reads. Many texts go a chunk at a time: this thread
        tokenizes and scores a chunk while onnxruntime (which leaves
        Python free) computes the network's share of the chunk before.

        Args:
            texts: A list (or array, Series, tuple) of strings.
            batch_size: Documents per batch: a whole number of at least 1
                (else `ArgumentError`, as for `workers`).
            progress: Show a progress bar.
            workers: Processes that tokenize: with more than one, every
                text is tokenized first, spread over them; by default, in
                this thread, overlapping the network.
            wordless: NaN rows for the texts without words; with False, what
                the model says of them (of padding), as `predict` gives.
        """
        texts = as_texts(texts)
        check_k(batch_size, "batch_size")  # before any text is read, whatever the texts
        if workers is not None:
            check_k(workers, "workers")
        if not texts:
            return np.zeros((0, len(self.label_names)), np.float32)
        spread = workers is not None and workers > 1  # every text tokenized first, in processes: one chunk
        size = len(texts) if spread else PIPELINE_TEXTS
        chunks = [texts[i : i + size] for i in range(0, len(texts), size)]
        overlap = len(chunks) > 1
        network = (
            concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="hierattn-network") if overlap else Inline()
        )
        results, pending = [], None  # the chunk the network computes while the next is tokenized: one at a time
        with tqdm(total=len(texts), desc="predicting", unit="doc", disable=not progress or spread) as bar, network:
            for chunk in [*chunks, None]:
                started = chunk and (chunk, self._start_chunk(chunk, batch_size, wordless, network, workers, progress))
                if pending is not None:
                    results.append(pending[1]())
                    bar.update(len(pending[0]))
                pending = started
        return np.concatenate(results)

    def _start_chunk(self, texts, batch_size, wordless, network, workers=None, progress=False):
        """Tokenizes `texts` and decides those the n-gram part is sure of, here; submits the others to `network`.

        With `workers` (more than one), the texts are tokenized in that many
        processes, with progress bars if `progress`.

        Returns:
            A function that gives the texts' probabilities (`predict_texts`),
            waiting for the network's share.
        """
        spread = workers is not None and workers > 1
        workers, progress = (workers, progress) if spread else (1, False)
        policy = self.policy
        if policy.reads_all:
            x = self.preprocess(texts, progress=progress, workers=workers)
            ids = x["token_ids"]
        else:
            whole = self.encoder.encode(
                texts, mode="whole", whole_length=self._ngram_length, workers=workers, progress=progress
            )
            x, ids = {"ngram_ids": whole}, whole
        result = np.full((len(texts), len(self.label_names)), np.nan, np.float32)
        index = np.flatnonzero(ids.reshape(len(ids), -1).any(axis=1)) if wordless else np.arange(len(ids))
        if policy.reads_all:
            read, x = index, take_documents(x, index)
        else:
            result[index], read = policy.split(self._ngram_logits(x["ngram_ids"][index]))
            read = index[read]
            tokens = self.encoder.encode([texts[i] for i in read], mode=self._mode, workers=workers)
            x = {"token_ids": tokens, "ngram_ids": x["ngram_ids"][read]}
        future = network.submit(self._run, self._session, x, self._output, batch_size, progress) if len(read) else None

        def finish():
            if future is not None:
                found = future.result()
                result[read] = policy.calibrate(found)
            return result

        return finish

    def predict_labels(self, texts, batch_size=32, min_confidence=None):
        """The predicted class names of raw texts (the most probable class of each, after any offsets).

        A multi-label bundle gives each text a list of label names: those
        whose probability is over their threshold (`thresholds`), in
        `label_names` order (possibly none), as `TextClassifier.predict_labels`.
        With `min_confidence`, a text whose decision is less sure than that gets None.
        """
        return self.policy.labels(self.predict(texts, batch_size), min_confidence)

    def over_thresholds(self, probabilities):
        """Multi-hot rows (int8) of the labels over their thresholds, for a multi-label bundle's probabilities."""
        return self.policy.over_thresholds(probabilities)

    def predict_top_k(self, texts, k, batch_size=32):
        """The `k` most probable classes of each text with their probabilities, most probable first.

        As `TextClassifier.predict_top_k`; for a multi-label bundle, the
        labels ranked by their own probabilities.

        Returns:
            One list per text of `(class name, probability)` pairs, `min(k,
            classes)` long (ties in `label_names` order).
        """
        check_k(k)
        return self.policy.top_k(self.predict(texts, batch_size), k)

    def predict_ids(self, x, batch_size=32, progress=False):
        """Class probabilities of ids as `preprocess` gives them, in input order.

        Documents are sorted by length so that each batch carries little
        padding; every axis keeps at least one position (onnxruntime refuses
        empty axes, and padding changes nothing).
        """
        check_k(batch_size, "batch_size")
        policy = self.policy
        if policy.reads_all or not len(x["token_ids"]):  # every document's (whole combination's, calibrated)
            return policy.calibrate(self._run(self._session, x, self._output, batch_size, progress))
        logits = self._ngram_logits(x["ngram_ids"])
        return policy.probabilities(
            logits, lambda index: self._run(self._session, take_documents(x, index), self._output, batch_size, progress)
        )

    def _run(self, session, x, output, batch_size, progress=False):
        """One output of `session` for the ids `x` (a dict by input), in batches of similar lengths, in input order."""
        ids = next(iter(x.values()))
        result = None
        with tqdm(total=len(ids), desc="predicting", unit="doc", disable=not progress) as bar:
            for index in sort_batches_by_length(ids, batch_size) if len(ids) else []:
                feed = {self._inputs[key]: trim_padding(value[index]).astype(np.int32) for key, value in x.items()}
                found = session.run([output], feed)[0]
                if result is None:
                    result = np.zeros((len(ids), found.shape[1]), np.float32)
                result[index] = found
                bar.update(len(index))
        return np.zeros((0, len(self.label_names)), np.float32) if result is None else result

    def has_words(self, text):
        """Whether the tokenizer keeps any word of `text` (markup, spaces and nothing are wordless)."""
        return self.tokenizer.has_words(text)

    def __repr__(self):
        return f"<Predictor {self.metadata.get('architecture', '?')} {self.label_names} from {self.path}>"
