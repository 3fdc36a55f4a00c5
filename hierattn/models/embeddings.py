"""Word vectors for initialising embeddings: word2vec on your own texts, or a file.

Pretrained vectors from the internet are not fetched. `train_word2vec` learns
vectors from the training texts (and, for IMDB, the unlabelled `unsup`
reviews) with gensim; `load_vectors` reads a word2vec/GloVe text file the user
already has. Never pass test texts to either. `initial_vectors` is what
`TextClassifier.adapt` starts its embedding from.
"""

import codecs
import hashlib
import pathlib
import zipfile

import numpy as np

from hierattn.data.encoding import tokenize_corpus
from hierattn.data.progress import ticking, tqdm
from hierattn.errors import DataError
from hierattn.utils.atomic import atomic_path


def train_word2vec(
    sentences, dim=200, epochs=5, window=5, min_count=2, sg=0, workers=1, seed=0, progress=True, checkpoint=None
):
    """Trains word2vec (gensim) on tokenized sentences, an epoch at a time, resumable from a checkpoint.

    Each epoch is one call of gensim's `train` at the learning rates that
    epoch has in one call of `epochs` epochs, so the vectors are the same as
    gensim's `Word2Vec(sentences, epochs=epochs, ...)` gives, to the bit
    with one worker; with `checkpoint`, the vectors, output weights and
    random state are saved there (NumPy's `.npz`, no pickle) after each
    epoch, and a later call with the same sentences and settings continues
    after the last epoch saved, to the same vectors as an uninterrupted
    training.

    Args:
        sentences: A list of sentences, each a list of token forms (e.g. all
            sentences of `tokenize_corpus(...)`).
        dim: Vector size.
        epochs: Passes over the data.
        window: Context window.
        min_count: Ignore rarer tokens.
        sg: 1 for skip-gram, 0 for CBOW (faster).
        workers: Training threads. One (the default) gives the same vectors
            for the same seed in every process; more threads are faster but
            not bit-for-bit reproducible (gensim's documented behaviour).
        seed: Random seed.
        progress: Show a progress bar in epochs.
        checkpoint: A file to save the training's state to after each
            epoch, and to continue from if it exists; `None`: none.

    Returns:
        Dict from token to a float32 vector.
    """
    # gensim (with SciPy) takes seconds to load; only training word vectors needs it.
    from gensim.models import Word2Vec

    model = Word2Vec(vector_size=dim, window=window, min_count=min_count, sg=sg, workers=workers, seed=seed)
    model.build_vocab(sentences)
    key = _training_key(model, epochs) if checkpoint is not None else None  # what its checkpoint must match
    done = _restore_word2vec(model, checkpoint, key) if checkpoint is not None else 0
    first, last = model.alpha, model.min_alpha
    with ticking(tqdm(total=epochs, initial=done, desc="word2vec", unit="epoch", disable=not progress)) as bar:
        for epoch in range(done, epochs):  # about 40 s an epoch on IMDB
            model.train(
                sentences,
                total_examples=model.corpus_count,
                epochs=1,
                start_alpha=first - (first - last) * epoch / epochs,
                end_alpha=first - (first - last) * (epoch + 1) / epochs,
            )
            if checkpoint is not None:
                _save_word2vec(model, checkpoint, epoch + 1, key)
            bar.update(1)
    return {word: model.wv[word].astype(np.float32) for word in model.wv.index_to_key}


def _save_word2vec(model, path, done, key):
    """word2vec's state after `done` epochs of the training `key` (`_training_key`), written whole to `path` (`.npz`)."""
    _, keys, position, has_gauss, cached = model.random.get_state()
    with atomic_path(path) as partial, open(partial, "wb") as f:
        np.savez(
            f,
            vectors=model.wv.vectors,
            output=model.syn1neg,
            random=np.asarray(keys),
            random_rest=np.array([position, has_gauss, cached], np.float64),
            epochs=np.array([done], np.int64),
            training=np.array(key),
        )


def _training_key(model, epochs):
    """What a checkpoint must share with the training that continues it: settings, corpus size and vocabulary."""
    counts = np.array([model.wv.get_vecattr(word, "count") for word in model.wv.index_to_key], np.int64)
    words = hashlib.sha256("\n".join(model.wv.index_to_key).encode() + counts.tobytes()).hexdigest()
    settings = (model.vector_size, model.window, model.sg, model.min_count, model.seed, model.corpus_count, epochs)
    return f"{settings} {words}"


def _restore_word2vec(model, path, key):
    """The epochs done by the training saved at `path` (0 if none), its state set into `model` (the training `key`)."""
    path = pathlib.Path(path)
    if not path.is_file():
        return 0
    try:
        with np.load(path, allow_pickle=False) as saved:
            if str(saved["training"]) != key:
                raise DataError(
                    f"{path} holds the word2vec of another training (other texts or settings): it cannot be continued"
                )
            done = int(saved["epochs"][0])
            model.wv.vectors[:] = saved["vectors"]
            model.syn1neg[:] = saved["output"]
            position, has_gauss, cached = saved["random_rest"]
            model.random.set_state(("MT19937", saved["random"], int(position), int(has_gauss), float(cached)))
    except DataError:
        raise
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:
        raise DataError(f"{path} is not a word2vec checkpoint hierattn can read ({error})") from None
    return done


FORMAT = "a word2vec or GloVe text file (one word and its numbers per line, as many numbers on every line)"


def check_vectors_file(path):
    """Refuses a file that cannot be a word-vector text file (binary data, or not UTF-8), from its first 64 KiB.

    Raises:
        DataError: In one line, naming the file and saying what it should be.
    """
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except FileNotFoundError:
        raise DataError(f"no such vectors file: {path}") from None
    try:
        if b"\0" in head:
            raise UnicodeDecodeError("utf-8", head, head.index(b"\0"), head.index(b"\0") + 1, "NUL byte")
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        raise DataError(
            f"{path} is not a text file (it holds binary data); word vectors must come from {FORMAT} "
            "(a binary word2vec .bin file converts with gensim's "
            "KeyedVectors.save_word2vec_format(path, binary=False))"
        ) from None


def load_vectors(path, vocabulary=None, progress=True):
    """Reads a word2vec or GloVe text file.

    Handles both the word2vec header line (`count dim`) and header-less GloVe
    files. With a `vocabulary`, only its words are kept (saves memory).

    Args:
        path: Text file (UTF-8), one `word v1 v2 ...` per line.
        vocabulary: Optional `Vocabulary` to filter by.
        progress: Show a progress bar.

    Returns:
        Dict from token to a float32 vector.

    Raises:
        DataError: Missing file, binary data, or not word vectors; in one line.
    """
    check_vectors_file(path)
    vectors, dim = {}, None
    number = 0
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(tqdm(f, desc="reading vectors", unit=" lines", disable=not progress)):
                parts = line.rstrip().split(" ")
                if number == 0 and len(parts) == 2 and all(p.isdigit() for p in parts):
                    continue  # word2vec header
                if len(parts) < 2:
                    continue
                word, values = parts[0], parts[1:]
                if dim is None:
                    dim = len(values)
                elif len(values) != dim:
                    raise DataError(
                        f"{path} is not {FORMAT}: line {number + 1} has {len(values)} numbers where "
                        f"the lines before have {dim}"
                    )
                if vocabulary is None or word in vocabulary:
                    vectors[word] = np.asarray(values, dtype=np.float32)
    except UnicodeDecodeError:
        raise DataError(
            f"{path} is not a UTF-8 text file (undecodable bytes after line {number + 1}); word vectors "
            f"must come from {FORMAT}"
        ) from None
    except ValueError as error:
        if isinstance(error, DataError):
            raise
        raise DataError(f"{path} is not {FORMAT} (line {number + 1}: {error})") from None
    if dim is None:
        raise DataError(f"{path} holds no vectors; word vectors must come from {FORMAT}")
    return vectors


def embedding_matrix(vocabulary, vectors, dim, seed=0):
    """A `(len(vocabulary), dim)` matrix for `Embedding.set_weights`.

    Known words get their vector; unknown words (and OOV) random vectors with
    the same scale as the known ones; padding (id 0) zeros.

    Returns:
        `(matrix, coverage)`: the float32 matrix and the share of vocabulary
        words that had a vector.
    """
    rng = np.random.default_rng(seed)
    known = [vectors[t] for t in vectors]
    if known and len(known[0]) != dim:
        raise DataError(f"the vectors have {len(known[0])} dimensions but the embedding has {dim}.")
    scale = float(np.std(np.stack(known))) if known else 0.05
    matrix = rng.normal(0.0, scale, size=(len(vocabulary), dim)).astype(np.float32)
    matrix[0] = 0.0
    hits = 0
    for i, token in enumerate(vocabulary.tokens[2:], start=2):
        vector = vectors.get(token)
        if vector is not None:
            matrix[i] = vector
            hits += 1
    return matrix, hits / max(1, len(vocabulary) - 2)


def initial_vectors(
    embeddings, preprocessor, dim, texts, unlabeled=None, epochs=5, seed=0, verbose=True, checkpoint=None
):
    """The word vectors a classifier's embedding starts from, as a matrix for its vocabulary.

    Args:
        embeddings: `"word2vec"` (trained on `texts` and `unlabeled`),
            `"none"` (no vectors: the embedding keeps its random
            initialisation) or the path of a word2vec / GloVe text file.
        preprocessor: The adapted `TextPreprocessor`: its tokenizer (for
            word2vec), vocabulary and `min_count` (word2vec's too).
        dim: The embedding's width.
        texts: The training texts.
        unlabeled: More texts for word2vec.
        epochs: word2vec epochs.
        seed: Seed of word2vec and of the vectors of words that have none.
        verbose: Progress bars, and a line saying where the vectors came from.
        checkpoint: word2vec's checkpoint file (`train_word2vec`), or `None`.

    Returns:
        `(matrix, source)`: the float32 `(vocabulary size, dim)` matrix
        (`embedding_matrix`) and `{"source": ..., "coverage": share of the
        vocabulary with a vector}`; `(None, None)` for `"none"`.
    """
    vocabulary = preprocessor.vocabulary
    if embeddings == "none":
        return None, None
    if embeddings == "word2vec":
        corpus = list(texts) + list(unlabeled or [])
        documents = tokenize_corpus(
            corpus, preprocessor.tokenizer, progress=bool(verbose), desc="tokenizing for word2vec"
        )
        if verbose:
            print(f"training word2vec ({dim}d, {epochs} epochs) on {len(corpus):,} texts")
        vectors = train_word2vec(
            [s for d in documents for s in d],
            dim=dim,
            epochs=epochs,
            min_count=preprocessor.min_count,
            seed=seed,
            progress=bool(verbose),
            checkpoint=checkpoint,
        )
        source = "word2vec on the training texts" + (" and unlabelled texts" if unlabeled else "")
    else:
        vectors = load_vectors(embeddings, vocabulary, progress=bool(verbose))
        source = str(embeddings)
    matrix, coverage = embedding_matrix(vocabulary, vectors, dim, seed=seed)
    if verbose:
        print(f"embeddings from {source}: {coverage:.1%} of the vocabulary covered")
    return matrix.astype(np.float32), {"source": source, "coverage": coverage}
