"""`BatchPredictor`: a run's bundle as a function from a pandas DataFrame of texts to one of predictions."""

import functools
import os
import pathlib

import numpy as np

from hierattn.data.tables import ID_COLUMNS, LABEL_COLUMNS, TEXT_COLUMNS, cell_text, find_column, pick_column
from hierattn.decision import check_k
from hierattn.defaults import BATCH, CASCADE, MULTILABEL
from hierattn.errors import ArgumentError, DataError
from hierattn.policy import PredictOptions
from hierattn.runs.directory import BUNDLE_FILE
from hierattn.runs.predict import score_texts
from hierattn.runs.run import Run
from hierattn.runs.table import PredictionTable, prediction_columns, top_k_columns

# Columns carried from the input as they are: where a row came from (`hierattn.batch.files` adds them).
POSITION_COLUMNS = ("file", "row")


class BatchPredictor:
    """A run's bundle as a function from a pandas DataFrame of texts to a DataFrame of predictions.

    It is what an engine maps over a table: Ray Data's `map_batches` (see
    `hierattn.batch.predict_dataset`), Spark's `mapInPandas` (`map_in_pandas`).
    The bundle is loaded once per process, on `hierattn.runtime` (no
    TensorFlow): when the predictor is made (so a bad bundle is refused
    before any work starts), and again in each worker it is sent to (a
    pickled predictor carries only its settings).

    The output has the columns of `hierattn predict --file`: `file` and
    `row` when the input has them, the input's id and label columns
    (found by name, as `predict --file` finds them, and named as the input
    names them), the columns named in `keep`, then `predicted` and one
    `p_<class>` per class (float32), and with `top_k` the ranked classes
    `top_1, p_top_1, ...` (`min(top_k, classes)` pairs, most probable
    first). A multi-label bundle's `predicted` is the text's label set, the
    labels over their thresholds joined by `label_separator` (an empty
    string when none is). A text without words (blank, or only
    markup) keeps its row, with no prediction (`None`) and NaN
    probabilities, as `predict --file` leaves its cells empty.

    Args:
        bundle: The bundle (`model.onnx`), or a run directory holding one
            (a path, or a `hierattn.runs.run.Run`).
        text_column: The column of the texts (default: found by name,
            among `hierattn.defaults.TEXT_COLUMNS`).
        keep: More input columns to carry into the output, as they are.
        threads: Threads onnxruntime computes each call with, per worker.
        batch_size: Documents per call of the graph (the memory its
            intermediate values take grows with it).
        top_k: With a number, the ranked columns.
        label_separator: What joins a multi-label bundle's labels (default:
            for a run directory, its config.json's `data.label_separator`;
            else `hierattn.defaults.MULTILABEL["separator"]`).
        network: `"auto"`: the network reads only the texts the n-gram part
            is not sure of; `"always"`: every text (`hierattn.runtime.Predictor.network`).
        min_confidence: With a probability, a `confidence` column after
            `predicted` (`hierattn.decision.Decision.confidence`), and no
            prediction (`None`) where it is under it: left for a person.

    Raises:
        ArgumentError: `top_k`, `threads` or `batch_size` is not a whole
            number of at least 1, or `min_confidence` not a number in [0, 1].
        DataError: No bundle there, or one onnxruntime cannot load, or a
            multi-label run's bundle exported before bundles held their
            thresholds.

    Example:

    ```python
    import pandas as pd
    from hierattn.batch import BatchPredictor

    predictor = BatchPredictor("runs/han-imdb-20261125-120000")
    predictor(pd.DataFrame({"id": [7], "text": ["A superb film."]}))
    #    id predicted     p_neg     p_pos
    # 0   7       pos  0.031...  0.968...
    ```
    """

    def __init__(
        self,
        bundle,
        text_column=None,
        keep=(),
        threads=BATCH["threads"],
        batch_size=BATCH["graph_batch"],
        top_k=None,
        label_separator=None,
        network=CASCADE["network"],
        min_confidence=None,
    ):
        self.options = PredictOptions(top_k, min_confidence, network)  # checked once, here
        if threads is not None:  # None: the runtime's default; it checks its own limits when it loads the bundle
            check_k(threads, "threads")
        check_k(batch_size, "batch_size")
        self.network, self.min_confidence = network, self.options.min_confidence
        run = bundle if isinstance(bundle, Run) else Run(bundle) if _is_folder(bundle) else None
        self.bundle = bundle_path(run.path if run is not None else bundle)
        self.text_column = text_column
        self.keep = [keep] if isinstance(keep, str) else list(keep or ())
        self.threads = threads
        self.batch_size = batch_size
        self.top_k = top_k
        self._predictor = None
        self.label_names = list(self.predictor.label_names)
        if run is not None:  # another run's bundle, or one exported before bundles said they were multi-label: refused
            run.refuse_foreign_bundle()
            run.refuse_stale_bundle(self.predictor)
        self.multi_label = self.predictor.multi_label
        if label_separator is None and self.multi_label:
            label_separator = run.label_separator if run is not None else MULTILABEL["separator"]
        self.label_separator = label_separator

    @property
    def predictor(self):
        """The `hierattn.runtime.Predictor`: loaded once per process (copies unpickled there share it)."""
        if self._predictor is None:
            self._predictor = _loaded(self.bundle, self.threads, self.network)
        return self._predictor

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_predictor"] = None  # an onnxruntime session does not travel: each worker loads the bundle
        return state

    def __call__(self, frame):
        """The predictions of a DataFrame's texts: a DataFrame with the same rows, in order (see the class)."""
        import pandas as pd

        text_column, carried = self.columns_of(frame.columns)
        texts = [cell_text(value) for value in frame[text_column]]  # labels as the frame has them (not only strings)
        if texts:
            probabilities = score_texts(self.predictor, texts, workers=1, batch_size=self.batch_size)
        else:
            probabilities = np.zeros((0, len(self.label_names)), np.float32)
        table = PredictionTable.of(self.predictor, probabilities, self.options, self.label_separator)
        output = {name: frame[source].to_numpy() for name, source in carried.items()}
        return pd.DataFrame({**output, **table.frame_columns()})

    def map_in_pandas(self, frames):
        """Predictions of an iterator of DataFrames, one DataFrame each: the function Spark's `mapInPandas` takes."""
        for frame in frames:
            yield self(frame)

    def columns_of(self, columns):
        """The text column and the carried ones (`{output name: input column}`) of a table with `columns`.

        Raises:
            DataError: No text column (or not the one named), a `keep`
                column the table lacks, or one named as an output column.
        """
        labels = {str(c): c for c in columns}  # names as text; the frame's own labels (e.g. 0, 1) to index it
        names = list(labels)
        text_column = pick_column(names, self.text_column, TEXT_COLUMNS, "text")
        carried = {name: name for name in POSITION_COLUMNS if name in names}
        for candidates in (ID_COLUMNS, LABEL_COLUMNS):
            found = find_column(names, candidates)
            if found and found != text_column:
                carried[found] = found  # as the table names it (`labels`, `review_id`), as `predict --file` keeps it
        keep = [str(name) for name in self.keep]
        missing = [name for name in keep if name not in labels]
        if missing:
            raise DataError(f"no column {', '.join(map(repr, missing))} to keep; the columns are {names}")
        taken = {*carried, *self.prediction_columns()}
        clash = [name for name in keep if name in taken and carried.get(name) != name]
        if clash:
            raise DataError(f"cannot keep {', '.join(map(repr, clash))}: the output has a column of that name")
        carried.update({name: name for name in keep if name not in carried.values()})
        return labels[text_column], {name: labels[source] for name, source in carried.items()}

    def output_columns(self, columns):
        """The names of the output's columns for an input with `columns`, in order."""
        return [*self.columns_of(columns)[1], *self.prediction_columns()]

    def prediction_columns(self):
        """The columns of the predictions (`hierattn.runs.table.prediction_columns`), after the carried ones."""
        return prediction_columns(self.label_names, self.top_k, self.min_confidence is not None)

    def spark_schema(self, schema):
        """The output's schema for Spark's `mapInPandas`, from the input DataFrame's (`frame.schema`).

        Carried columns keep their types; `predicted` is a string (a
        multi-label bundle's: the labels joined by `label_separator`), the
        probabilities are floats; with `top_k`, `top_<i>` strings and
        `p_top_<i>` floats. (Imports pyspark, which calls it.)
        """
        from pyspark.sql import types

        _, carried = self.columns_of(schema.names)
        fields = [types.StructField(name, schema[str(source)].dataType) for name, source in carried.items()]
        fields.append(types.StructField("predicted", types.StringType()))
        if self.min_confidence is not None:
            fields.append(types.StructField("confidence", types.FloatType()))
        fields += [types.StructField(f"p_{name}", types.FloatType()) for name in self.label_names]
        for name in top_k_columns(0 if self.top_k is None else min(self.top_k, len(self.label_names))):
            fields.append(types.StructField(name, types.FloatType() if name.startswith("p_") else types.StringType()))
        return types.StructType(fields)

    def __repr__(self):
        return f"<BatchPredictor {self.label_names} from {self.bundle}>"


def _is_folder(source):
    return isinstance(source, (str, os.PathLike)) and pathlib.Path(source).is_dir()


@functools.cache
def _loaded(bundle, threads, network):
    """A bundle loaded once per process and settings: Spark unpickles a predictor for every task it runs."""
    from hierattn.runtime import load

    return load(bundle, threads=threads, network=network)


def bundle_path(source):
    """The bundle file of `source`: a `.onnx` file, or a run directory's `model.onnx`.

    Raises:
        ArgumentError: `source` is not a string or path.
        DataError: Neither a file nor a run directory with a bundle.
    """
    if not isinstance(source, (str, os.PathLike)):
        raise ArgumentError(f"bundle must be a path to a .onnx file or a run directory, not {type(source).__name__}")
    path = pathlib.Path(source)
    if path.is_dir():
        if not (path / BUNDLE_FILE).is_file():
            raise DataError(
                f"{path} has no {BUNDLE_FILE}: export the run first (the export command, or "
                "hierattn.runs.export.export_run); batch prediction runs the bundle, without TensorFlow"
            )
        return str(path / BUNDLE_FILE)
    if not path.is_file():
        raise DataError(f"no bundle at {path}")
    return str(path)
