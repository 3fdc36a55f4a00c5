"""The tuned defaults, in one place.

Chosen on IMDB validation data carved from `train/` (BENCHMARKS.md). The
model builders take their argument defaults from `BACKBONES`,
`TextClassifier` and `TrainConfig` theirs from `PREPROCESSING` and
`TRAINING`, and the command line shows them from here. This module imports
nothing heavy, so `hierattn --help` stays fast.
"""

MODELS = ("han", "transformer", "rnn")

RNN_ATTENTIONS = ("bahdanau", "luong-dot", "luong-general", "luong-concat", "context")

# Keyword arguments of HANBackbone / TransformerBackbone / RNNBackbone (hierattn.models).
BACKBONES = {
    "han": {
        "embedding_dim": 200,
        "word_units": 50,
        "sentence_units": 50,
        "attention_units": 100,
        "cell": "gru",
        "dropout": 0.3,
    },
    "transformer": {
        "embedding_dim": 128,
        "num_heads": 4,
        "intermediate_dim": 256,
        "num_layers": 1,
        "dropout": 0.1,
        "pooling": "attention",
        "position": "sinusoidal",
        "normalize_first": True,
    },
    "rnn": {
        "embedding_dim": 200,
        "units": 64,
        "cell": "gru",
        "attention": "bahdanau",
        "window": None,
        "local_mode": "local-p",
        "dropout": 0.3,
    },
}

# The values the builders accept for their settings that name a choice
# (checked with the other settings before any data is read).
CHOICES = {
    "cell": ("gru", "lstm"),
    "attention": RNN_ATTENTIONS,
    "pooling": ("attention", "mean"),
    "position": ("sinusoidal", "learned"),
    "local_mode": ("local-m", "local-p"),
}

# Vocabulary and length limits (`TextPreprocessor`); a length limit of None is
# the `LENGTH_PERCENTILE`th percentile of the training texts.
PREPROCESSING = {
    "max_sentences": None,
    "max_words": None,
    "sequence_length": None,
    "min_count": 2,
    "max_vocab": 60000,
}
LENGTH_PERCENTILE = 95
# The most ids one document may have: each length limit (`ngram_length` too) and max_sentences x max_words (#67).
# A bundle's or `.keras` file's limits above it are refused at load (`hierattn.runtime.checks`,
# `hierattn.models.loading`), so training refuses such a limit when given and keeps a percentile's within it. The
# runtime encodes a chunk of 1,000 texts at once (`Predictor.predict_texts`), each padded to the limits: at 2**17
# ids (512 KiB a document) a chunk's ids stay under 512 MiB, where an edited max_sentences of 1e9 would ask for
# terabytes. Real classifiers stay far below: IMDB's HAN reads 30 x 40 ids, the n-gram part 5,000 (`NGRAMS`).
MAX_DOCUMENT_IDS = 2**17

# The units a classifier reads (`hierattn.data.units`): `"auto"` chooses words where under `unspaced_share` of
# the training texts' letters (in the first `sample` texts) are in scripts written without spaces (Chinese,
# Japanese, Thai...), else the `candidates` with the lowest log-loss of TF-IDF of unit 1-3 grams + logistic
# regression (C `C`) on a stratified `held_out` share of those texts (seeded by `seed`). Subwords: SentencePiece's
# unigram model of at most `subword_vocabulary` pieces, learned from up to `subword_sentences` sentences, covering
# `character_coverage` of the characters (the rarest left out of vocabulary). What was validated: on waimai_10k's
# training texts held out, characters beat subwords (BENCHMARKS.md, "Every language"), and `auto` keeps the units
# every English set was measured with. Not tuned: `unspaced_share` (every set we hold is at 0% or over 99%, so any
# value between gives the same choices), `subword_vocabulary` (no set we hold chooses subwords; 4,000 pieces scored
# better than 8,000 on waimai, both below characters), `C` (the baseline's) and the held-out share.
UNITS = {
    "units": "auto",
    "choices": ("auto", "words", "characters", "subwords"),
    "unspaced_share": 0.2,
    "candidates": ("characters", "subwords"),
    "sample": 20000,
    "held_out": 0.2,
    "seed": 0,
    "C": 10.0,
    "subword_vocabulary": 8000,
    "subword_sentences": 1_000_000,
    "character_coverage": 0.9995,
}

# How a classifier is trained (`TextClassifier.fit` / `compile`, `TrainConfig`);
# epochs None: scaled to the corpus (`EPOCH_BUDGET`).
TRAINING = {
    "epochs": None,
    "batch_size": 64,
    "learning_rate": 1e-3,
    "patience": 2,
    "validation_split": 0.1,
    "seed": 0,
    "embeddings": "word2vec",
    "pretrain_epochs": 5,
    "ngrams": True,  # the n-gram part (`NGRAMS`)
}
CLIPNORM = 1.0

# Validation parts of whole groups (`hierattn.data.dataset.grouped_split`: `train csv --group COLUMN`, and
# `train imdb`, which groups its reviews by `imdb`: "film", the film of each review from the archive's
# train/urls_pos.txt and urls_neg.txt; None: by class only). A grouped part that would hold more than
# `max_validation_share` of the training texts (groups too few or too large) is refused.
GROUPS = {"imdb": "film", "max_validation_share": 0.5}

# The epochs of a training not given `epochs` (`hierattn.models.budget`): the number
# of epochs that makes about `steps` batches, ceil(steps / ceil(training texts
# / batch size)), kept within `min_epochs` and `max_epochs` (batch 64: 40
# epochs for 1,000 texts, 38 for 5,000, 9 for 22,500), so that small corpora
# get more passes; early stopping (`patience`) usually ends training before.
# `seconds` bounds the network's training in time: no epoch is begun that the
# mean epoch so far says would end beyond it (`hierattn.callbacks.TimeBudget`).
EPOCH_BUDGET = {"steps": 3000, "min_epochs": 8, "max_epochs": 40, "seconds": 1200}

# The n-gram reference every `train` run fits beside the model
# (`hierattn.runs.baseline`): TF-IDF of word 1-2 grams + logistic regression, the
# reference baseline of the development datasets (../shared/datasets/devsuite).
# Also one over character 1-3 grams (the reference of languages written without spaces): the better on the
# validation texts is reported.
BASELINE = {
    "features": ("words", "characters"),
    "ngram_range": (1, 2),
    "char_ngram_range": (1, 3),
    "min_df": 2,
    "sublinear_tf": True,
    "C": 10.0,
    "max_iter": 2000,
}

# The n-gram part every model gets (`hierattn.ngrams.recipes`, `hierattn.ngrams.mixing`):
# a linear model over the word n-grams of the whole text (up to `length`
# tokens), hashed into `num_buckets` feature ids, fitted with scikit-learn on
# the n-grams of at least `min_df` training texts. Every recipe is tried at
# every C of its grid (and with balanced class weights when the largest class
# is `balanced_above` times the smallest or more); the best on the validation
# texts is kept (`fallback` without validation texts). The recipes are the
# study's short list (BENCHMARKS.md, "Linear recipes on validation only"):
# sublinear TF-IDF of 1-2 and 1-3 grams, and NB-weighted binarised 1-3 grams
# (Wang & Manning 2012). The part is combined log-linearly with the network,
# the weights chosen on the validation texts (when there are none, `weights`:
# the median share and scale chosen for HAN on IMDB and the four devsuite
# sets, BENCHMARKS.md).
NGRAMS = {
    "length": 5000,
    "ngram_max": 2,  # `NgramLogits`' own default
    "num_buckets": 2**24,
    "min_df": 2,
    "recipes": (
        {"weighting": "tfidf", "ngram_max": 2, "C": (10.0, 30.0)},
        {"weighting": "tfidf", "ngram_max": 3, "C": (10.0, 30.0)},
        {"weighting": "nb", "ngram_max": 3, "C": (1.0,)},
    ),
    "fallback": {"weighting": "tfidf", "ngram_max": 2, "C": (30.0,)},
    "balanced_above": 1.5,
    "nb_alpha": 1.0,  # NB-LR's smoothing of the feature counts (Wang & Manning 2012)
    "max_iter": 2000,
    "weights": (0.35, 0.65),
}

# Multi-label classifiers (`TextClassifier(multi_label=True)`, `train csv
# --multi-label`): a document's labels joined by `separator` in a table's label
# column; a label is predicted when its probability is over its threshold
# (`hierattn.tuning`), chosen on the validation texts from `grid`
# by that label's F1 (ties to the value nearest 0.5). A label with fewer than
# `min_positives` validation documents is too rare to tune: it takes the
# shared threshold, the value of `grid` with the best validation micro-F1 over
# every label. Without validation texts every label takes `threshold`.
MULTILABEL = {
    "separator": "|",
    "threshold": 0.5,
    "grid": tuple(round(0.01 * i, 2) for i in range(1, 100)),
    "min_positives": 3,
    # `predict "text"` on a multi-label run: its labels most probable first, those predicted and this many
    # more (the rest counted in one line), not every label in the model's order.
    "shown_under_threshold": 5,
}

# The cascade (`hierattn.decision.Cascade`, `hierattn.tuning`): with
# `network="auto"` the n-gram part scores every document and the network reads
# only those whose n-gram margin is under a cut, chosen on the validation texts
# as the smallest share of documents read whose accuracy and macro-F1 (micro-F1
# for multi-label), and those of every larger share, stay within `tolerance` of
# the whole combination's. `"always"`: the network reads every document.
CASCADE = {"networks": ("auto", "always"), "network": "auto", "tolerance": 0.0005, "z": 1.645}

# Calibration (`hierattn.calibration.choose_temperature`): a temperature is
# fitted with a normal prior on its log (mean 0, standard deviation `prior`:
# within a factor e of 1 before any evidence), and kept only where, over
# `folds` stratified folds, each document calibrated by the temperature of
# the folds it is not in, the log-loss is lower than at 1 by more than its
# standard error and the expected calibration error lower; else 1. Not fitted on fewer than
# `min_documents` documents or two classes of `min_positives`, nor for a
# label with fewer than `min_positives` positive or negative ones.
CALIBRATION = {"prior": 1.0, "folds": 5, "min_documents": 30, "min_positives": 5}

# The decision rule of a single-label classifier (`hierattn.decision.Decision`,
# `hierattn.tuning`): `"accuracy"` answers the most probable class;
# `"macro_f1"` adds an offset to each class's log-probability first, `-w log
# prior` (its share of the validation texts), `w` the value of `prior_weights`
# with the best validation macro-F1 (ties to the smallest). One weight, not one
# offset per class: per-class offsets searched on validation raised its
# macro-F1 and lowered the test's on the imbalanced devsuite sets (BENCHMARKS.md,
# "A decision rule for macro-F1"). A minimum confidence (`min_confidence`) is a
# probability of the decision being right in [0, 1].
DECISION = {
    "metrics": ("accuracy", "macro_f1"),
    "metric": "accuracy",
    "prior_weights": tuple(round(0.05 * i, 2) for i in range(21)),
}

# Word evidence (`hierattn.explain`): the points of the Gauss-Legendre
# quadrature of the network's integrated gradients along the path from the
# padding embedding, and the largest error of completeness (as a fraction of
# the change of the network's term, plus 1e-4) before a text's points are
# doubled, up to `max_steps`. Measured on validation texts of IMDB and the
# devsuite (BENCHMARKS.md, "How many quadrature points"): 8 points with the
# guard keep every text within it, at less cost than 16 points on four of five.
EVIDENCE = {"steps": 8, "tolerance": 0.01, "max_steps": 128}

# Progress written to a file (a log, a pipe) rather than a terminal
# (`hierattn.data.progress`, `hierattn.callbacks.ProgressLines`): whole lines,
# one at each tenth of the work and at least every `log_seconds`, so that no
# step is silent for a minute in a log and none writes hundreds of updates.
PROGRESS = {"log_seconds": 30}

# `explain --dataset` ranks a class's words only from this many occurrences
# in the documents predicted as that class (`hierattn.explain.corpus`): a
# floor so that a word seen once or twice cannot top a mean. Not tuned: no
# measure of a ranking's quality was set up to tune it against.
CORPUS_MIN_COUNT = 5

# How much of a text an explanation shows, as a multiple of what the model
# reads (`hierattn.explain`): the words just beyond its limits are shown as
# not read; the rest of a longer text is summarised in one line, so
# explaining a text of any length takes bounded time and output.
EXPLAIN_SHOWN = 2

# When an explanation shows the margin's parts (the network's words, the
# n-gram words, the constant terms) with their percentages of the margin
# (`hierattn.explain.summaries.margin_shares`): only when the parts' sizes add
# up to at most this many times the margin, so every share lies between -50%
# and 150%. Beyond it (a near tie, or large parts cancelling each other) a
# percentage of the small difference reads as nonsense ("-1280%"), and the
# parts are shown as signed values only. A reading aid, not tuned.
MARGIN_SHARES_UP_TO = 2.0

# How training is spread over devices (`hierattn.distribute`): TensorFlow's
# MirroredStrategy (the GPUs of one machine) or MultiWorkerMirroredStrategy
# (several machines, from TF_CONFIG).
DISTRIBUTE = ("none", "mirrored", "multi-worker")


# `hierattn serve` (`hierattn.serve`): where it listens (loopback unless told
# otherwise), how requests are gathered into batches (whatever waits when a
# thread is free, up to `max_batch` texts, after waiting `batch_wait_ms` for
# more: 0, since with batches side by side a wait only idles a core), run in
# length-sorted groups of `batch_size` texts, with `predict_threads` batches
# side by side (None: one per core, plus one), how much work may wait before
# requests are answered 503 (`max_queue` texts to predict,
# `max_explain_queue` texts to explain), the largest request
# (`max_body_bytes`, `max_texts` texts of `max_text_chars` characters each)
# and how long requests in flight may finish after SIGTERM. The batching was
# measured under load on IMDB reviews (BENCHMARKS.md, "Serving over HTTP"); the limits
# are those of a sane service, not tuned (so are the seconds a 503 tells a
# client to wait: a full queue drains in about a second, the explanation
# worker loads in 5-10).
SERVE = {
    "host": "127.0.0.1",
    "port": 8000,
    "max_batch": 64,
    "batch_wait_ms": 0.0,
    "batch_size": 8,
    "predict_threads": None,
    "max_queue": 2048,
    "max_explain_queue": 16,
    "max_body_bytes": 2**20,
    "max_texts": 256,
    "max_text_chars": 100_000,
    "top_k": 10,  # n-grams an explanation lists, up to `max_top_k`
    "max_top_k": 1000,
    "shutdown_seconds": 30,
    "backlog": 2048,  # connections the socket holds before they are accepted
    "retry_after": {"busy": 1, "loading": 5, "restarting": 10},  # seconds, in 503 answers' Retry-After
    # The largest value each number may take: beyond it a setting cannot be meant (a typo, a unit mistaken),
    # so it is refused where it enters (`hierattn.serve.limits`), as NaN, infinities and values below range are.
    "most": {
        "max_batch": 100_000,
        "batch_wait_ms": 1000.0,
        "batch_size": 10_000,
        "predict_threads": 1024,
        "max_queue": 10_000_000,
        "max_explain_queue": 100_000,
        "max_body_bytes": 2**30,
        "max_texts": 1_000_000,
        "max_text_chars": 100_000_000,
        "shutdown_seconds": 3600.0,
    },
    # After SIGTERM, once the requests in flight are answered, new ones are answered 503 in passes of
    # `pass_seconds` until a pass brings none, for `after_seconds` at most (`hierattn.serve.guard.Gate.drain`).
    "drain": {"pass_seconds": 0.05, "after_seconds": 1.0},
}

# Batch prediction (`hierattn.batch`, `hierattn predict --engine ray`). Files
# are read in chunks of `chunk_rows` rows, into Ray blocks of about
# `block_bytes`; each worker scores `batch_rows` rows per call, tokenizing in
# its own process, with onnxruntime on `threads` threads (one worker per CPU
# by default) and `graph_batch` documents per run of the graph: the graph's
# intermediate values for 32 IMDB reviews (the runtime's default) raised a
# worker's peak by 142 MB, for 8 by 55 MB, 4% slower than 16 (BENCHMARKS.md
# "Batch prediction on Ray", `--phases settings`). The output
# is written in parts of up to `part_rows` rows. The workers share all of
# the cluster's CPUs but `reserved_cpus` (at most half of them), left for
# the tasks that feed them (reading files, a user's own steps: Ray gives a
# task a whole CPU by default), so those always find a CPU (whole CPUs for
# the workers starved the read task on 2 cores: issue #42). Ray's CPUs are a
# scheduling count: every worker computes on its own core.
BATCH = {
    "chunk_rows": 1000,
    "block_bytes": 2**20,
    "batch_rows": 256,
    "threads": 1,
    "graph_batch": 8,
    "part_rows": 100_000,
    "reserved_cpus": 1,
    "output_format": "parquet",
    "connect_seconds": 5,  # a cluster address where nothing answers within this is refused (`hierattn.batch.cluster`)
}

# The columns of a table tried, in order, when none is named.
TEXT_COLUMNS = ("text", "review", "sentence", "content", "document", "body")
LABEL_COLUMNS = ("label", "labels", "sentiment", "class", "category", "target", "y")
ID_COLUMNS = ("id", "doc_id", "document_id", "review_id", "uid")

# File and folder names that say which part of a dataset a file is, not which
# dataset: a run on `agnews/train.csv` is named after `agnews`, the first
# folder up whose name is not one of these (`hierattn.runs.directory.dataset_name`).
GENERIC_DATA_NAMES = (
    "train", "training", "test", "testing", "dev", "valid", "validation", "val", "eval", "data", "dataset",
    "datasets", "all", "full", "labeled", "labelled", "unlabeled", "unlabelled", "corpus", "texts", "input",
    "raw", "clean", "split", "splits", "sample",
)  # fmt: skip
