"""Tests for hierattn.explain.corpus: each class's words by evidence and by attention across a dataset."""

import csv

import pytest

from hierattn.errors import ArgumentError
from hierattn.explain.corpus import (
    DOCUMENT_COLUMNS,
    WORD_COLUMNS,
    CorpusWords,
    documents_path,
    explain_corpus,
)
from hierattn.explain.explainer import Explainer
from hierattn.explain.explanation import Explanation, WordWeight

from conftest import make_reviews


def explanation(label, weighted_words):
    """An explanation of (word, attention weight, evidence[, read]) tuples."""
    words = [
        WordWeight(
            text=w,
            form=w.lower(),
            sentence=0,
            index=i,
            start=0,
            end=0,
            weight=p,
            word_weight=p,
            sentence_weight=1.0,
            oov=False,
            used=read[0] if read else True,
            evidence=e,
        )
        for i, (w, p, e, *read) in enumerate(weighted_words)
    ]
    return Explanation("", label, {label: 1.0}, words, [], 0, [])


def test_corpus_words_rank_by_summed_evidence_and_attention_relative_to_uniform():
    words = CorpusWords(top_k=2, min_count=2)
    words.add(explanation("pos", [("Great", 0.5, 1.0), ("film", 0.3, 0.1), ("the", 0.2, 0.0)]))
    words.add(explanation("pos", [("great", 0.4, 2.0), ("the", 0.35, -0.1), ("film", 0.25, 0.3)]))
    # "the" in a 5-word text at 0.25 is 1.25x uniform; "film" once unread
    top = words.add(
        explanation("pos", [("film", 0.5, 0.2), ("film", 0.0, 0.5, False), ("the", 0.25, 0.0), ("a", 0.25, 0.0)])
    )
    assert [w.form for w in top] == ["film", "film"]  # the document's top 2 by evidence
    words.add(explanation("neg", [("dull", 0.9, 3.0), ("film", 0.1, 0.2)]))
    rows = {(r["predicted"], r["word"]): r for r in words.rows()}
    great, film, the = rows[("pos", "great")], rows[("pos", "film")], rows[("pos", "the")]
    assert great["occurrences"] == 2 and great["documents"] == 2 and great["evidence"] == pytest.approx(3.0)
    assert great["mean_evidence"] == pytest.approx(1.5) and great["evidence_rank"] == 1
    assert great["mean_attention"] == pytest.approx((0.5 * 3 + 0.4 * 3) / 2)  # 3 words read in each
    assert film["occurrences"] == 4 and film["documents"] == 3 and film["evidence"] == pytest.approx(1.1)
    assert film["mean_attention"] == pytest.approx((0.3 * 3 + 0.25 * 3 + 0.5 * 3) / 3)  # the unread one left out
    assert the["mean_attention"] == pytest.approx((0.2 * 3 + 0.35 * 3 + 0.25 * 3) / 3)
    assert [r["word"] for r in words.rows(labels=["pos"])] == ["great", "film", "the"]  # "a": once; not ranked
    assert words.top("pos", 3, by="attention") == ["great", "film", "the"]
    assert words.top("neg", 1) == [] and dict(words.class_documents) == {"pos": 3, "neg": 1}  # "dull": once
    with pytest.raises(ArgumentError, match="^top_k must be at least 1$"):
        CorpusWords(top_k=0)
    with pytest.raises(ArgumentError, match="^min_count must be at least 1$"):
        CorpusWords(min_count=0)


def test_frequent_words_get_no_attention_credit_for_frequency():
    words = CorpusWords(min_count=1)
    for _ in range(50):  # "the" in every document, at exactly uniform attention
        words.add(explanation("pos", [("the", 0.5, 0.0), ("movie", 0.5, 0.0)]))
    words.add(explanation("pos", [("superb", 0.9, 1.0), ("the", 0.1, 0.0)]))
    assert words.top("pos", 1, by="attention") == ["superb"] and words.top("pos", 1) == ["superb"]


def test_explain_corpus_writes_both_tables(han_run, tmp_path):
    texts, labels = make_reviews(45, seed=3)
    texts[4] = "   "  # skipped and counted, not an error
    output = tmp_path / "words.csv"
    summary = explain_corpus(
        Explainer(han_run),
        iter(texts),
        output,
        labels=labels,
        ids=[f"d{i}" for i in range(45)],
        top_k=3,
        batch_size=8,
        progress=False,
        min_count=2,
    )
    assert summary.documents == 44 and summary.skipped_empty == 1
    assert sum(summary.class_documents.values()) == 44
    assert summary.labelled == 44 and 0.0 <= summary.accuracy <= 1.0
    assert summary.outputs == [str(output), str(tmp_path / "words.documents.csv")]
    with open(output, newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == WORD_COLUMNS
    assert {r["predicted"] for r in rows} == set(summary.class_documents)
    assert all(int(r["documents"]) <= int(r["occurrences"]) and int(r["occurrences"]) >= 2 for r in rows)
    for label in summary.class_documents:
        ranks = [int(r["evidence_rank"]) for r in rows if r["predicted"] == label]
        assert ranks == list(range(1, len(ranks) + 1))
    with open(documents_path(output), newline="") as f:
        documents = list(csv.DictReader(f))
    assert list(documents[0]) == DOCUMENT_COLUMNS
    per_document = {}
    for row in documents:
        per_document.setdefault(row["document"], []).append(row)
    assert len(per_document) == 44 and "4" not in per_document  # numbered by position in the input
    for number, doc_rows in per_document.items():
        text = texts[int(number)]
        assert [int(r["rank"]) for r in doc_rows] == list(range(1, len(doc_rows) + 1)) and len(doc_rows) == 3
        assert all(text[int(r["start"]) : int(r["end"])] == r["text"] for r in doc_rows)
        evidence = [float(r["evidence"]) for r in doc_rows]
        assert evidence == sorted(evidence, reverse=True)
        assert doc_rows[0]["id"] == f"d{number}" and doc_rows[0]["label"] == labels[int(number)]
    assert not list(tmp_path.glob("*.partial"))


def test_explain_corpus_never_overwrites_and_cleans_up_on_failure(han_run, tmp_path):
    output = tmp_path / "words.csv"
    documents_path(output).write_text("earlier results")
    with pytest.raises(ArgumentError, match=r"words.documents.csv already exists; choose another output \(nothing"):
        explain_corpus(Explainer(han_run), ["great film"], output, progress=False)
    assert documents_path(output).read_text() == "earlier results" and not output.exists()

    def failing():
        yield "great film"
        raise RuntimeError("reader broke")

    other = tmp_path / "other.csv"
    with pytest.raises(RuntimeError):
        explain_corpus(Explainer(han_run), failing(), other, batch_size=1, progress=False)
    assert not other.exists() and not list(tmp_path.glob("*.partial"))
