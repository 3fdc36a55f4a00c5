"""`BatchPredictor`: a run's bundle as a function from a pandas DataFrame of texts to one of predictions."""

import functools
import os
import pathlib

import numpy as np

from hierattn.data.tables import ID_COLUMNS, LABEL_COLUMNS, TEXT_COLUMNS, cell_text, find_column, pick_column
from hierattn.defaults import BATCH, MULTILABEL
from hierattn.errors import ArgumentError, DataError
from hierattn.runs.data_record import recorded_data
from hierattn.runs.directory import BUNDLE_FILE
from hierattn.runs.export import check_bundle_kind
from hierattn.runs.predict import predicted_labels, score_texts, top_k_columns
from hierattn.runtime.predictor import check_k
from hierattn.runtime.predictor import top_k as most_probable

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
    `p_<class>` per class (float32), and with `top_k` the ranked classes
    `top_1, p_top_1, ...` (`min(top_k, classes)` pairs, most probable
    first). A multi-label bundle's `predicted` is the text's label set, the
    labels over their thresholds joined by `label_separator` (an empty
    string when none is). A text without words (blank, or only
    markup) keeps its row, with no prediction (`None`) and NaN
    probabilities, as `predict --file` leaves its cells empty.

    Args:
        bundle: The bundle (`model.onnx`), or a run directory holding one.
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

    Raises:
        ArgumentError: `top_k` is not a whole number of at least 1.
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
    ):
        if top_k is not None:
            check_k(top_k, "top_k")
        self.bundle = bundle_path(bundle)
        self.text_column = text_column
        self.keep = [keep] if isinstance(keep, str) else list(keep or ())
        self.threads = threads
        self.batch_size = batch_size
        self.top_k = top_k
        self._predictor = None
        self.label_names = list(self.predictor.label_names)
        if os.path.isdir(bundle):  # a run's own bundle, exported before bundles said they were multi-label: refused
            check_bundle_kind(self.predictor, bundle)
        self.multi_label = self.predictor.multi_label
        if label_separator is None and self.multi_label:
            label_separator = _run_separator(bundle)
        self.label_separator = label_separator
        self._ranks = 0 if top_k is None else min(top_k, len(self.label_names))

    @property
    def predictor(self):
        """The `hierattn.runtime.Predictor`: loaded once per process (copies unpickled there share it)."""
        if self._predictor is None:
            self._predictor = _loaded(self.bundle, self.threads)
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
        output = {name: frame[source].to_numpy() for name, source in carried.items()}
        predicted = predicted_labels(self.predictor, probabilities)
        if self.multi_label:
            predicted = [None if labels is None else self.label_separator.join(labels) for labels in predicted]
        output["predicted"] = np.array(predicted, dtype=object).reshape(len(predicted))
        for index, name in enumerate(self.label_names):
            output[f"p_{name}"] = probabilities[:, index].astype(np.float32)
        if self._ranks:
            missing = np.isnan(probabilities[:, 0]) if len(probabilities) else np.zeros(0, bool)
            ranked = most_probable(np.nan_to_num(probabilities), self.label_names, self._ranks)
            for rank in range(self._ranks):
                names = [None if gone else row[rank][0] for row, gone in zip(ranked, missing)]
                output[f"top_{rank + 1}"] = np.array(names, dtype=object).reshape(len(names))
                output[f"p_top_{rank + 1}"] = np.array(
                    [np.nan if gone else row[rank][1] for row, gone in zip(ranked, missing)], np.float32
                )
        return pd.DataFrame(output)

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
        for role, candidates in (("id", ID_COLUMNS), ("label", LABEL_COLUMNS)):
            found = find_column(names, candidates)
            if found and found != text_column:
                carried[role] = found
        keep = [str(name) for name in self.keep]
        missing = [name for name in keep if name not in labels]
        if missing:
            raise DataError(f"no column {', '.join(map(repr, missing))} to keep; the columns are {names}")
        taken = {*carried, "predicted", *(f"p_{n}" for n in self.label_names), *top_k_columns(self._ranks)}
        clash = [name for name in keep if name in taken and carried.get(name) != name]
        if clash:
            raise DataError(f"cannot keep {', '.join(map(repr, clash))}: the output has a column of that name")
        carried.update({name: name for name in keep if name not in carried.values()})
        return labels[text_column], {name: labels[source] for name, source in carried.items()}

    def output_columns(self, columns):
        """The names of the output's columns for an input with `columns`, in order."""
        return [
            *self.columns_of(columns)[1],
            "predicted",
            *(f"p_{name}" for name in self.label_names),
            *top_k_columns(self._ranks),
        ]

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
        fields += [types.StructField(f"p_{name}", types.FloatType()) for name in self.label_names]
        for rank in range(1, self._ranks + 1):
            fields.append(types.StructField(f"top_{rank}", types.StringType()))
            fields.append(types.StructField(f"p_top_{rank}", types.FloatType()))
        return types.StructType(fields)

    def __repr__(self):
        return f"<BatchPredictor {self.label_names} from {self.bundle}>"


def _run_separator(source):
    """What joins a run's labels in a table, for a run directory `source` (config.json's record); else the default."""
    path = pathlib.Path(source) if isinstance(source, (str, os.PathLike)) else None
    recorded = recorded_data(path) if path is not None and path.is_dir() else {}
    return recorded.get("label_separator") or MULTILABEL["separator"]


@functools.cache
def _loaded(bundle, threads):
    """A bundle loaded once per process and settings: Spark unpickles a predictor for every task it runs."""
    from hierattn.runtime import load

    return load(bundle, threads=threads)


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
