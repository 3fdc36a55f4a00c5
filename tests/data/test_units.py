"""Tests for hierattn.data.units: units for any script, chosen from the training texts."""

import numpy as np
import pytest

from hierattn.data.text import Tokenizer
from hierattn.data.units import Subwords, choose_units, proportional_spans, unspaced_share

from conftest import make_chinese_reviews, make_reviews


def test_the_share_of_letters_in_scripts_written_without_spaces():
    assert unspaced_share(["A fine film.", "Ein schöner Film, 1999."]) == 0.0
    assert unspaced_share(["这部电影非常好看", "配達がとても早かった", "อาหารอร่อยมาก"]) == 1.0
    assert unspaced_share(["很好 ok"]) == pytest.approx(0.5)  # two letters of four
    assert unspaced_share(["", "123 !!"]) == 0.0


def test_english_keeps_words_without_any_trial():
    texts, labels = make_reviews(200)
    tokenizer, report = choose_units(texts, labels, Tokenizer(units="auto"))
    assert tokenizer.units == "words" and report["units"] == "words" and "scores" not in report
    assert "0% of the letters" in report["reason"]


def test_chinese_compares_characters_and_subwords_on_texts_held_out():
    texts, labels = make_chinese_reviews(300)
    tokenizer, report = choose_units(texts, labels, Tokenizer(units="auto", lower=False))
    assert report["units"] == tokenizer.units in ("characters", "subwords") and not tokenizer.lower
    assert set(report["scores"]) == {"characters", "subwords"} and report["held_out"] == 60
    best = min(report["scores"], key=lambda units: report["scores"][units]["log_loss"])
    assert best == report["units"] and report["unspaced_share"] == 1.0
    # without labels fit to score (multi-label rows, none): characters, said so
    tokenizer, report = choose_units(texts, None, Tokenizer(units="auto"))
    assert tokenizer.units == "characters" and "scores" not in report


def test_on_real_chinese_reviews_characters_win(waimai_sample):
    texts, labels = waimai_sample
    tokenizer, report = choose_units(texts, labels, Tokenizer(units="auto"))
    assert tokenizer.units == "characters", report  # as on the whole table (BENCHMARKS.md)
    assert report["scores"]["characters"]["accuracy"] > 0.8


def test_subwords_are_learned_the_same_way_each_time_and_join_back_to_the_word():
    texts, _ = make_chinese_reviews(100)
    first, second = (Tokenizer().with_units("subwords", learn_from=texts) for _ in range(2))
    assert first.subwords.model == second.subwords.model
    pieces = first.words("这家店送餐很快！")
    assert "".join(pieces).replace("\u2581", "") == "这家店送餐很快" and len(pieces) < 7
    again = Subwords(first.subwords.to_text())
    assert again.split(["送餐很快"]) == first.subwords.split(["送餐很快"])


def test_proportional_spans_are_exact_when_lengths_fill_the_word_and_in_order_when_not():
    assert proportional_spans(10, 16, [2, 1, 3]) == [(10, 12), (12, 13), (13, 16)]
    spans = proportional_spans(0, 6, [1, 2, 1, 3])  # "straße" folded to "strasse": 7 characters in 6
    assert spans[0][0] == 0 and spans[-1][1] == 6
    assert all(a <= b for a, b in spans) and all(b1 <= a2 for (_, b1), (a2, _) in zip(spans, spans[1:]))


@pytest.mark.keras  # a TextPreprocessor
def test_the_preprocessor_chooses_once_records_why_and_keeps_it(tmp_path):
    from hierattn.models import TextPreprocessor

    texts, labels = make_chinese_reviews(120)
    preprocessor = TextPreprocessor("flat", min_count=1)
    assert preprocessor.tokenizer.units == "auto"
    preprocessor.adapt(texts, labels, progress=False)
    assert preprocessor.tokenizer.units == preprocessor.units_report["units"] != "auto"
    again = TextPreprocessor.from_config(preprocessor.get_config())
    assert again.units_report == preprocessor.units_report
    assert again.tokenizer.get_config() == preprocessor.tokenizer.get_config()
    forced = TextPreprocessor("flat", min_count=1, tokenizer={"units": "subwords"})
    forced.adapt(texts, progress=False)
    assert forced.tokenizer.subwords is not None and forced.units_report is None
    ids = forced(texts[:3])
    assert ids.shape[0] == 3 and np.all(ids.max(axis=1) > 1)  # the pieces are in the vocabulary


def test_units_are_not_compared_without_single_labels_and_say_why():
    texts, labels = make_chinese_reviews(100)
    label_sets = [[label] for label in labels]
    tokenizer, report = choose_units(texts, label_sets, Tokenizer(units="auto"))
    assert tokenizer.units == "characters" and "untried" in report["reason"] and "scores" not in report
    with pytest.raises(Exception, match="no words to learn subword units from"):
        Tokenizer().with_units("subwords", learn_from=["", "...", "<br />"])


def test_the_comparison_reads_a_seeded_sample_not_the_first_rows(monkeypatch):
    from hierattn.defaults import UNITS

    texts, labels = make_chinese_reviews(200)
    order = np.argsort(labels, kind="stable")  # a table sorted by label: its first rows are of one class
    texts, labels = [texts[i] for i in order], [labels[i] for i in order]
    monkeypatch.setitem(UNITS, "sample", 60)
    _, report = choose_units(texts, labels, Tokenizer(units="auto"))
    assert set(report["scores"]) == {"characters", "subwords"} and report["held_out"] == 12
