"""The units a classifier reads, for any script: words, characters or subwords learned from the training texts.

Words (`hierattn.data.text`) are the right units where words are written
apart: English, Spanish, Russian, Arabic, Hindi. Chinese, Japanese, Thai,
Lao, Khmer and Burmese are written without spaces, and a "word" there is a
whole clause: almost every one is unique, and a vocabulary of them is
useless. Two units work in every script (docs/languages.md):

- `"characters"`: every character of a word is one unit (the n-gram part
  then reads character n-grams, which suit Chinese and Japanese, where one
  character often carries a meaning);
- `"subwords"`: units learned from the training texts by SentencePiece
  (Kudo and Richardson 2018, a unigram language model over pieces) within
  each word, so that frequent sequences of letters become one unit and rare
  ones break into pieces (alphabetic scripts written without spaces, such
  as Thai, read better in such pieces than letter by letter).

`choose_units` decides for `units="auto"` (`hierattn.defaults.UNITS`): words
where few letters of the training texts are in scripts written without
spaces, so English and every spaced script keep the units they are measured
with; otherwise the candidates are compared on texts held out from the
training texts by the validation log-loss of a TF-IDF + logistic regression
over their 1-3 grams (a few seconds), and the best is kept. The choice and
its scores are recorded (`TextPreprocessor.units_report`).

SentencePiece (a compiled library, 5.6 MB installed, nothing else
needed) was measured against Hugging Face `tokenizers` (BENCHMARKS.md,
"Units for every language"); its model is a few hundred KB, kept inside the
tokenizer's config, so the `.keras` file and the ONNX bundle carry it, and
the runtime reproduces every unit exactly.
"""

import base64
import functools
import io
import itertools
import logging
import math
import re
import time

import numpy as np

from hierattn.defaults import UNITS
from hierattn.errors import DataError
from hierattn.utils.shell import pip_install

logger = logging.getLogger(__name__)

# Scripts written without spaces between words: Han (with its extensions and compatibility ideographs),
# Hiragana, Katakana (and the half-width forms), Thai, Lao, Khmer, Burmese, Tibetan.
UNSPACED = (
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
    "\u0e00-\u0eff\u1780-\u17ff\u19e0-\u19ff\u1000-\u109f\u0f00-\u0fff\U00020000-\U0003134f"
)
_UNSPACED = re.compile(f"[{UNSPACED}]")
_LETTER = re.compile(r"[^\W\d_]")
WORD_START = "\u2581"  # SentencePiece's mark of a piece that begins a word


def unspaced_share(texts, limit=UNITS["sample"]):
    """The share of letters of `texts` (the first `limit` of them) in scripts written without spaces."""
    unspaced = letters = 0
    for text in texts[:limit]:
        text = text if isinstance(text, str) else str(text)
        found = "".join(_LETTER.findall(text))
        letters += len(found)
        unspaced += len(_UNSPACED.findall(found))
    return unspaced / letters if letters else 0.0


class Subwords:
    """A SentencePiece unigram model: splits a word's form into pieces, the first marked with `WORD_START`.

    Args:
        model: The serialized model (bytes), or its base64 text as kept in a
            tokenizer's config.

    Example:

    >>> words = ["送餐很快", "味道不错", "送餐太慢", "味道一般"] * 50
    >>> subwords = Subwords.learn([" ".join(words)] * 20, vocabulary_size=40)
    >>> pieces = subwords.split(["送餐很快"])[0]
    >>> "".join(pieces).lstrip(WORD_START)
    '送餐很快'
    """

    def __init__(self, model):
        self.model = base64.b64decode(model) if isinstance(model, str) else bytes(model)
        self._processor = None

    @property
    def processor(self):
        if self._processor is None:
            try:
                import sentencepiece
            except ModuleNotFoundError as error:  # a runtime-only install without it
                raise ModuleNotFoundError(
                    f"this model reads subword units, which need SentencePiece: {pip_install('sentencepiece')}",
                    name=error.name,
                ) from None
            self._processor = sentencepiece.SentencePieceProcessor(model_proto=self.model)
        return self._processor

    @classmethod
    def learn(cls, sentences, vocabulary_size=UNITS["subword_vocabulary"]):
        """Learns pieces from normalised sentences (word forms joined by spaces), at most `vocabulary_size`."""
        import sentencepiece

        sentences = iter(sentences)
        first = next(sentences, None)
        if first is None:
            raise DataError("no words to learn subword units from: the training texts have none")
        model = io.BytesIO()
        sentencepiece.set_random_generator_seed(UNITS["seed"])  # which sentences past `subword_sentences` are read
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=itertools.chain([first], sentences),
            model_writer=model,
            vocab_size=vocabulary_size,
            hard_vocab_limit=False,  # a small corpus gets the pieces it has
            model_type="unigram",
            character_coverage=UNITS["character_coverage"],
            normalization_rule_name="identity",  # the tokenizer normalises (NFKC, case folding) before
            add_dummy_prefix=True,
            input_sentence_size=UNITS["subword_sentences"],
            shuffle_input_sentence=True,
            num_threads=1,  # the same pieces on every machine
            minloglevel=2,
        )
        return cls(model.getvalue())

    def split(self, forms):
        """The pieces of each word form, the first marked with `WORD_START`.

        SentencePiece gives a word whose first letters make no piece with
        the mark a piece of the mark alone, which covers no character: the
        mark goes onto the next piece instead, so that every unit covers
        characters and every word's first unit says where the word begins.
        """
        if not forms:
            return []
        split = []
        for pieces in self.processor.encode(list(forms), out_type=str):
            if len(pieces) > 1 and pieces[0] == WORD_START:
                pieces = [WORD_START + pieces[1], *pieces[2:]]
            split.append(pieces)
        return split

    def __len__(self):
        return self.processor.get_piece_size()

    def to_text(self):
        return base64.b64encode(self.model).decode("ascii")


def load_subwords(model):
    """`model` if it is a `Subwords`, else the `Subwords` of its text, loaded once per process.

    A tokenizer made again from its config (each batch a worker encodes, the
    runtime's metadata check before its own tokenizer) finds it loaded.
    """
    return model if isinstance(model, Subwords) else _loaded(model)


@functools.lru_cache(maxsize=8)
def _loaded(text):
    return Subwords(text)


def _unit_ngrams(units, n=3):
    return [" ".join(units[i : i + k]) for k in range(1, n + 1) for i in range(len(units) - k + 1)]


def held_out_score(train_units, train_labels, held_units, held_labels):
    """Held-out log-loss and accuracy of TF-IDF (sublinear, min_df 2) of unit 1-3 grams + logistic regression."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss

    vectorizer = TfidfVectorizer(analyzer=_unit_ngrams, min_df=2, sublinear_tf=True)
    x = vectorizer.fit_transform(train_units)
    model = LogisticRegression(C=UNITS["C"], max_iter=2000).fit(x, train_labels)
    held = vectorizer.transform(held_units)
    return {
        "log_loss": round(float(log_loss(held_labels, model.predict_proba(held), labels=model.classes_)), 5),
        "accuracy": round(float(model.score(held, held_labels)), 5),
    }


def choose_units(texts, labels, tokenizer, progress=False):
    """The units of `tokenizer` (`units="auto"`) for `texts`: a tokenizer with them, and why.

    Words when under `UNITS["unspaced_share"]` of the letters are in scripts
    written without spaces. Otherwise each of `UNITS["candidates"]` is
    scored on a stratified `UNITS["held_out"]` of the texts (at most
    `UNITS["sample"]` texts in all), after learning from the rest, by the
    log-loss of `held_out_score`; the lowest wins. Without labels fit for
    that (multi-label rows, a class with under two texts), characters.

    Args:
        texts: Training texts.
        labels: Their labels (class names or ids), or `None`.
        tokenizer: A `Tokenizer` with `units="auto"` (its other settings are kept).
        progress: Log each candidate's score (INFO).

    Returns:
        `(tokenizer, report)`: a `Tokenizer` with the units chosen (and its
        subword model when subwords are), and a JSON-ready dict: `units`,
        `unspaced_share`, `reason`, and the candidates' `scores`.
    """
    share = unspaced_share(texts)
    report = {"units": "words", "unspaced_share": round(share, 4)}
    if share < UNITS["unspaced_share"]:
        report["reason"] = (
            f"{share:.0%} of the letters are in scripts written without spaces "
            f"(under {UNITS['unspaced_share']:.0%}): words"
        )
        return tokenizer.with_units("words"), report
    candidates = UNITS["candidates"]
    rows = _held_out_rows(labels, len(texts))
    if rows is None:
        reason = f"{share:.0%} of the letters are in scripts written without spaces; characters, untried"
        reason += " (no single labels, or too few texts of a class, to compare units on)"
        report.update(units="characters", reason=reason)
        return tokenizer.with_units("characters"), report
    fit, held = rows
    labels = np.asarray(labels)
    scores, made = {}, {}
    for units in candidates:
        started = time.perf_counter()
        made[units] = tokenizer.with_units(units, learn_from=[texts[i] for i in fit] if units == "subwords" else None)
        forms = [made[units].words(texts[i]) for i in np.concatenate([fit, held])]
        scores[units] = held_out_score(forms[: len(fit)], labels[fit], forms[len(fit) :], labels[held])
        scores[units]["seconds"] = round(time.perf_counter() - started, 1)
        (logger.info if progress else logger.debug)("units %s: %s", units, scores[units])
    best = min(candidates, key=lambda u: scores[u]["log_loss"])
    report.update(
        units=best,
        scores=scores,
        held_out=len(held),
        reason=(
            f"{share:.0%} of the letters are in scripts written without spaces; {best} had the lowest log-loss of "
            f"{', '.join(candidates)} on {len(held):,} training texts held out"
        ),
    )
    if best == "subwords":  # learned again from every training text
        return tokenizer.with_units("subwords", learn_from=texts), report
    return made[best], report


def _held_out_rows(labels, count):
    """`(fit rows, held-out rows)` of a seeded sample of at most `UNITS["sample"]` of `count` texts, stratified.

    `None` where labels cannot tell units apart: none, label sets (multi-label), under 20 texts, one class, or a
    class with a single text in the sample.
    """
    if labels is None or count < 20 or any(isinstance(label, (list, tuple, set, np.ndarray)) for label in labels):
        return None
    labels = np.asarray(labels)
    rows = np.arange(count)
    if count > UNITS["sample"]:  # a seeded sample, not the first rows (a table may be sorted by label)
        rows = np.sort(np.random.default_rng(UNITS["seed"]).choice(count, UNITS["sample"], replace=False))
    classes, counts = np.unique(labels[rows], return_counts=True)
    if len(classes) < 2 or counts.min() < 2:
        return None
    from sklearn.model_selection import train_test_split

    held_share = max(UNITS["held_out"], len(classes) / len(rows))
    fit, held = train_test_split(
        rows, test_size=min(0.5, held_share), random_state=UNITS["seed"], stratify=labels[rows]
    )
    return np.sort(fit), np.sort(held)


def proportional_spans(start, end, lengths):
    """Spans of consecutive pieces of `lengths` characters within `[start, end)`, exact when the lengths fill it.

    Where normalisation changed the length of a word (a ligature opened, a
    German sharp s folded to "ss"), each piece's span is its share of the
    word, so spans stay in order and inside the word.
    """
    total = sum(lengths)
    width = end - start
    spans, done = [], 0
    for length in lengths:
        a = start + (done if total == width else math.floor(done * width / max(total, 1)))
        done += length
        b = start + (done if total == width else math.floor(done * width / max(total, 1)))
        spans.append((a, max(b, a)))
    return spans
