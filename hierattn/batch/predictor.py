"""`BatchPredictor`: a run's bundle as a function from a pandas DataFrame of texts to one of predictions."""

import ctypes
import ctypes.util
import functools
import os
import pathlib

import numpy as np

from hierattn.data.tables import ID_COLUMNS, LABEL_COLUMNS, TEXT_COLUMNS, cell_text, find_column, pick_column
from hierattn.defaults import BATCH
from hierattn.errors import ArgumentError, DataError
from hierattn.runs.directory import BUNDLE_FILE
from hierattn.runs.predict import score_texts

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
    `row` when the input has them, the input's `id` and `label` columns
    (found by name, as `predict --file` finds them, and named `id` and
    `label`), the columns named in `keep`, then `predicted` and one
    `p_<class>` per class (float32). A text without words (blank, or only
    markup) keeps its row, with no prediction (`None`) and NaN
    probabilities, as `predict --file` leaves its cells empty.

    Args:
        bundle: The bundle (`model.onnx`), or a run directory holding one.
        text_column: The column of the texts (default: found by name,
            among `hierattn.defaults.TEXT_COLUMNS`).
        keep: More input columns to carry into the output, as they are.
        threads: Threads onnxruntime computes each call with, per worker.
        batch_size: Documents per call of the graph (its intermediate
            values grow with it: 2.6 MB per IMDB review).

    Raises:
        DataError: No bundle there, or one onnxruntime cannot load.

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

    def __init__(self, bundle, text_column=None, keep=(), threads=BATCH["threads"], batch_size=BATCH["graph_batch"]):
        self.bundle = bundle_path(bundle)
        self.text_column = text_column
        self.keep = [keep] if isinstance(keep, str) else list(keep or ())
        self.threads = threads
        self.batch_size = batch_size
        self._predictor = None
        self.label_names = list(self.predictor.label_names)

    @property
    def predictor(self):
        """The `hierattn.runtime.Predictor`, loaded on first use in each process."""
        if self._predictor is None:
            from hierattn.runtime import load

            self._predictor = load(self.bundle, threads=self.threads, memory_arena=BATCH["memory_arena"])
        return self._predictor

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_predictor"] = None  # an onnxruntime session does not travel: each worker loads the bundle
        return state

    def __call__(self, frame):
        """The predictions of a DataFrame's texts: a DataFrame with the same rows, in order (see the class)."""
        import pandas as pd

        text_column, carried = self.columns_of(frame.columns)
        texts = [cell_text(value) for value in frame[text_column]]
        probabilities = (
            score_texts(self.predictor, texts, workers=1, batch_size=self.batch_size)
            if texts
            else np.zeros((0, len(self.label_names)))
        )
        output = {name: frame[source].to_numpy() for name, source in carried.items()}
        scored = ~np.isnan(probabilities[:, 0]) if len(texts) else np.zeros(0, bool)
        best = np.where(scored, np.nan_to_num(probabilities).argmax(axis=1), -1) if len(texts) else []
        output["predicted"] = np.array([self.label_names[i] if i >= 0 else None for i in best], dtype=object)
        for index, name in enumerate(self.label_names):
            output[f"p_{name}"] = probabilities[:, index].astype(np.float32)
        _release_memory()
        return pd.DataFrame(output)

    def map_in_pandas(self, frames):
        """Predictions of an iterator of DataFrames, one DataFrame each: the function Spark's `mapInPandas` takes."""
        for frame in frames:
            yield self(frame)

    def columns_of(self, columns):
        """The text column and the carried ones (`{output name: input name}`) of a table with `columns`.

        Raises:
            DataError: No text column (or not the one named), or a `keep`
                column the table lacks.
        """
        columns = [str(c) for c in columns]
        text_column = pick_column(columns, self.text_column, TEXT_COLUMNS, "text")
        carried = {name: name for name in POSITION_COLUMNS if name in columns}
        for role, names in (("id", ID_COLUMNS), ("label", LABEL_COLUMNS)):
            found = find_column(columns, names)
            if found and found != text_column:
                carried[role] = found
        missing = [name for name in self.keep if name not in columns]
        if missing:
            raise DataError(f"no column {', '.join(map(repr, missing))} to keep; the columns are {columns}")
        carried.update({name: name for name in self.keep if name not in carried.values()})
        return text_column, carried

    def output_columns(self, columns):
        """The names of the output's columns for an input with `columns`, in order."""
        return [*self.columns_of(columns)[1], "predicted", *(f"p_{name}" for name in self.label_names)]

    def spark_schema(self, schema):
        """The output's schema for Spark's `mapInPandas`, from the input DataFrame's (`frame.schema`).

        Carried columns keep their types; `predicted` is a string, the
        probabilities are floats. (Imports pyspark, which calls it.)
        """
        from pyspark.sql import types

        _, carried = self.columns_of(schema.names)
        fields = [types.StructField(name, schema[source].dataType) for name, source in carried.items()]
        fields.append(types.StructField("predicted", types.StringType()))
        fields += [types.StructField(f"p_{name}", types.FloatType()) for name in self.label_names]
        return types.StructType(fields)

    def __repr__(self):
        return f"<BatchPredictor {self.label_names} from {self.bundle}>"


@functools.cache
def _malloc_trim():
    """glibc's `malloc_trim`, or None (another C library)."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None).malloc_trim
    except (AttributeError, OSError):
        return None


def _release_memory():
    """Hands the memory a batch freed back to the system.

    glibc keeps what a worker thread freed in that thread's arena: without
    this a Ray worker scoring IMDB grew from 190 MB (bundle loaded) to
    485 MB of its own memory over 25 batches; with it, it stays near 230 MB
    (docs/batch.md "Speed and memory").
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


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
                f"{path} has no {BUNDLE_FILE}: export the run first (hierattn export --run {path}); "
                "batch prediction runs the bundle, without TensorFlow"
            )
        return str(path / BUNDLE_FILE)
    if not path.is_file():
        raise DataError(f"no bundle at {path}")
    return str(path)
