"""`hierattn.runs.table`: one prediction table, given as CSV cells, DataFrame columns and JSON answers."""

import numpy as np
import pandas as pd

from hierattn.decision import Decision
from hierattn.runs.table import PredictionTable, prediction_columns, top_k_columns

NAN = [np.nan, np.nan, np.nan]


def test_columns_are_the_prediction_the_probabilities_and_the_ranks():
    assert prediction_columns(["a", "b"]) == ["predicted", "p_a", "p_b"]
    assert prediction_columns([1, 2], top_k=5) == ["predicted", "p_1", "p_2", *top_k_columns(2)]


def test_the_three_shapes_say_the_same():
    table = PredictionTable(Decision(["neg", "pos", "mixed"]), np.array([[0.2, 0.5, 0.3], NAN]), top_k=2)
    frame = pd.DataFrame(table.frame_columns())
    assert list(frame.columns) == table.columns
    cells, answers = table.csv_cells(), table.answers()
    assert cells[0] == ["pos", "0.200000", "0.500000", "0.300000", "pos", "0.500000", "mixed", "0.300000"]
    assert frame.loc[0, "predicted"] == answers[0]["label"] == "pos"
    assert frame.loc[0, "top_2"] == answers[0]["top_k"][1][0] == "mixed"
    assert np.float32(frame.loc[0, "p_top_2"]) == np.float32(answers[0]["top_k"][1][1])
    assert cells[1] == [""] * len(table.columns)  # a text without words: empty cells, None and NaN
    assert pd.isna(frame.loc[1, "predicted"]) and pd.isna(frame.loc[1, "top_1"]) and np.isnan(frame.loc[1, "p_top_1"])
    assert table.predicted()[1] is None and table.frame_columns()["top_1"][1] is None
    assert table.scored == 1 and len(table) == 2


def test_label_sets_are_joined_by_the_separator():
    decision = Decision(["sport", "money"], multi_label=True, thresholds=[0.5, 0.3])
    table = PredictionTable(decision, np.array([[0.9, 0.4], [0.1, 0.1]]), separator=";")
    assert table.predicted() == ["sport;money", ""]
    assert [row[0] for row in table.csv_cells()] == ["sport;money", ""]
    answer = table.answers()[0]
    assert answer["labels"] == ["sport", "money"] and answer["thresholds"] == {"sport": 0.5, "money": 0.3}


def test_the_api_shape_ranks_as_objects_and_leaves_thresholds_to_the_model():
    decision = Decision(["sport", "money"], multi_label=True, thresholds=[0.5, 0.3])
    (answer,) = PredictionTable(decision, np.array([[0.9, 0.4]], np.float32), top_k=1).answers(api=True)
    assert answer == {
        "labels": ["sport", "money"],
        "probabilities": {"sport": float(np.float32(0.9)), "money": float(np.float32(0.4))},
        "top_k": [{"label": "sport", "probability": float(np.float32(0.9))}],
    }


def test_class_names_are_written_as_text():
    table = PredictionTable(Decision([1, 5]), np.array([[0.3, 0.7]]))
    assert table.columns == ["predicted", "p_1", "p_5"] and table.answers()[0]["label"] == "5"


def test_no_rows_give_an_empty_table():
    table = PredictionTable(Decision(["a", "b"]), np.zeros((0, 2), np.float32), top_k=1)
    assert table.csv_cells() == [] and table.answers() == [] and len(pd.DataFrame(table.frame_columns())) == 0


def test_a_minimum_confidence_leaves_unsure_rows_without_an_answer_in_every_shape():
    probabilities = np.array([[0.3, 0.7], [0.05, 0.95], [np.nan, np.nan]])
    table = PredictionTable(Decision(["neg", "pos"]), probabilities, top_k=1, min_confidence=0.9)
    assert table.columns == ["predicted", "confidence", "p_neg", "p_pos", "top_1", "p_top_1"]
    cells, frame, answers = table.csv_cells(), pd.DataFrame(table.frame_columns()), table.answers(api=True)
    assert cells[0][:2] == ["", "0.700000"] and cells[1][:2] == ["pos", "0.950000"]
    assert cells[2] == [""] * 6  # no words: nothing, not "unsure"
    assert pd.isna(frame.loc[0, "predicted"]) and frame.loc[1, "predicted"] == "pos"
    assert frame["confidence"].dtype == np.float32 and np.isnan(frame.loc[2, "confidence"])
    assert answers[0]["label"] is None and answers[0]["answered"] is False and answers[1]["answered"] is True
    assert answers[0]["confidence"] == float(np.float32(0.7)) and "answered" not in answers[2]
    assert table.left == 1 and table.scored == 2
    label_sets = Decision(["sport", "money"], multi_label=True, thresholds=[0.5, 0.3])
    unsure = PredictionTable(label_sets, np.array([[0.9, 0.35], [0.9, 0.05]]), min_confidence=0.6, separator=";")
    assert unsure.predicted() == [None, "sport"] and unsure.left == 1  # money at 0.35: on, but not sure
