"""`NgramPart`: the n-gram part of a `TextClassifier`, made, fitted and weighted against the backbone.

A plain class mixed into `TextClassifier`, as Keras mixes its `Trainer`
into `keras.Model`: the steps of `TextClassifier.fit` that Keras has no verb
for, as named methods that can also be called alone. The part is an
`NgramLogits` layer (`ngram_logits`) combined with the backbone by a
`LogLinearCombination` (`combination`): `softmax(a log p_backbone + b
z_ngrams)`; `hierattn.ngrams` has the method and the NumPy side.
"""

import time

import keras
import numpy as np

from hierattn.data.ids import ngram_ids, token_ids
from hierattn.defaults import NGRAMS
from hierattn.layers import LogLinearCombination, NgramLogits
from hierattn.models.inputs import validation_pair
from hierattn.ngram_recipes import fit_recipes
from hierattn.ngrams import mixing_on_validation, ngram_logits


class NgramPart:
    """The n-gram part's methods of `TextClassifier` (which sets `preprocessor`, `ngrams` and `ngram_report`).

    Example:

    Refit the n-gram part of a trained classifier on more texts, then choose
    its weight against the network again on held-out texts:

    >>> import hierattn
    >>> texts = ["A great film. I loved it.", "Dull and far too long.", "Wonderful acting!", "A boring, slow plot."] * 5
    >>> labels = ["pos", "neg", "pos", "neg"] * 5
    >>> clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, embedding_dim=8)
    >>> _ = clf.fit(texts, labels, epochs=1, verbose=0)
    >>> _ = clf.fit_ngrams(texts + ["Great fun.", "Slow and dull."], labels + ["pos", "neg"])
    >>> clf.ngram_report["recipe"]["weighting"]   # no validation texts: the fallback recipe
    'tfidf'
    >>> a, b = clf.choose_weights((["A wonderful film.", "So boring."], ["pos", "neg"]))
    >>> clf.ngram_report["network_weight"] == a and clf.ngram_report["ngram_weight"] == b
    True
    """

    def _make_ngram_part(self, layer):
        if isinstance(layer, dict):
            layer = keras.saving.deserialize_keras_object(layer)
        self.ngrams = True
        self.ngram_logits = layer
        self.combination = LogLinearCombination(name="combination")
        if not self.ngram_logits.built:
            self.ngram_logits.build((None,) * self.preprocessor.input_rank)
        self.combination.build()

    def fit_ngrams(self, x, y, validation_data=None, verbose=0):
        """Fits the n-gram part to texts (or their ids) and labels, its recipe chosen on validation texts.

        `fit`'s step after training the backbone: every recipe of
        `hierattn.defaults.NGRAMS["recipes"]` is fitted with scikit-learn and
        the one with the smallest validation log-loss is kept
        (`hierattn.ngram_recipes.fit_recipes`); without validation texts,
        `NGRAMS["fallback"]`. The combination's weights stay as they are
        until `choose_weights`. `ngram_report` then holds `recipe`,
        `candidates` (each recipe tried, with its validation scores),
        `train_documents` and `training_seconds`.

        Args:
            x: Texts (the forms `fit` takes), or their ids from `preprocessor`.
            y: Their labels: class names, integers or one-hot rows.
            validation_data: `(texts, labels)`, `(ids, labels)` or a dataset
                of `(texts, labels)` to choose the recipe on, or `None`.
            verbose: Print each recipe tried and the one chosen.

        Returns:
            The classifier.
        """
        layer = self._ngram_part()
        x, labels = self._ids_and_label_ids(x, y, "fit_ngrams")
        validation = None
        if validation_data is not None:
            val_x, val_labels = self._ids_and_label_ids(*validation_pair(validation_data), "validation_data")
            validation = (ngram_ids(val_x), val_labels)
        started = time.perf_counter()

        def make_layer(ngram_max, tf, normalize):
            return NgramLogits(
                layer.vocabulary_size, layer.num_classes, ngram_max, layer.num_buckets, tf=tf, normalize=normalize
            )

        fitted, report = fit_recipes(make_layer, ngram_ids(x), labels, validation, log=print if verbose else None)
        for name in ("ngram_max", "tf", "normalize"):  # the layer keeps its place in the model; its recipe changes
            setattr(layer, name, getattr(fitted, name))
        layer.set_tables(fitted.kept_ids, fitted.idf, fitted.kernel, fitted.bias, fitted.unseen_idf)
        self._drop_traced()  # they hold the old tables
        report["training_seconds"] = round(time.perf_counter() - started, 1)
        self.ngram_report = report
        if verbose:
            recipe = report["recipe"]
            print(
                f"n-gram part: {recipe['weighting']} 1-{recipe['ngram_max']} grams, C={recipe['C']:g}"
                f"{', balanced' if recipe['class_weight'] else ''} "
                f"({'chosen on validation' if validation else 'no validation texts: the fallback'}), "
                f"{layer.num_kept:,} features, fitted on {len(labels):,} documents in {report['training_seconds']} s"
            )
        return self

    def choose_weights(self, validation_data=None, verbose=0):
        """Chooses the weights `(a, b)` of `softmax(a log p_backbone + b z_ngrams)` on validation texts.

        `fit`'s last step: the weights with the smallest validation log-loss
        (`hierattn.ngrams.choose_mixing`), or without validation texts
        `hierattn.defaults.NGRAMS["weights"]`. `ngram_report` then holds
        `network_weight` (`a`), `ngram_weight` (`b`), `network_share`
        (`a / (a + b)`) and, with validation texts, `validation_accuracy`
        (each part alone and combined) and `shares` (each share tried).

        Args:
            validation_data: `(texts, labels)`, `(ids, labels)` or a dataset
                of `(texts, labels)`; `None` for the default weights.
            verbose: Print the weights chosen.

        Returns:
            The weights `(a, b)`.
        """
        layer = self._ngram_part()
        kept = ("recipe", "candidates", "train_documents", "training_seconds")  # of `fit_ngrams`
        report = {key: value for key, value in (self.ngram_report or {}).items() if key in kept}
        x = None
        if validation_data is not None:
            x, labels = self._ids_and_label_ids(*validation_pair(validation_data), "validation_data")
        if x is not None and len(token_ids(x)):
            probabilities = self.predict_ids(token_ids(x), part="network")
            (a, b), measured = mixing_on_validation(probabilities, ngram_logits(layer, ngram_ids(x)), labels)
            report.update(measured)
            chosen = "chosen on the validation texts"
        else:
            (a, b), chosen = NGRAMS["weights"], "the default (no validation texts)"
        self.combination.mixing.assign(np.array([a, b], np.float32))
        report.update(network_weight=float(a), ngram_weight=float(b), network_share=float(a / (a + b)))
        self.ngram_report = report
        if verbose:
            print(f"weights {a:.2f} (network) and {b:.2f} (n-grams), {chosen}")
        return float(a), float(b)

    def _ngram_part(self):
        if self.ngram_logits is None:
            why = "it was made with ngrams=False" if not self.ngrams else "fit or adapt it first"
            raise ValueError(f"this classifier has no n-gram part ({why})")
        return self.ngram_logits
