"""`NgramPart`: the n-gram part of a `TextClassifier`, made, fitted and weighted against the backbone.

A plain class mixed into `TextClassifier`, as Keras mixes its `Trainer`
into `keras.Model`: the steps of `TextClassifier.fit` that Keras has no verb
for, as named methods that can also be called alone. The part is an
`NgramLogits` layer (`ngram_logits`) combined with the backbone by a
`LogLinearCombination` (`combination`): `softmax(a log p_backbone + b
z_ngrams)`; `hierattn.ngrams.mixing` has the method and the NumPy side.
"""

import time

import keras

from hierattn.data.dataset import validation_pair
from hierattn.data.ids import ngram_ids
from hierattn.decision import activation_of
from hierattn.ngrams.combination import LogLinearCombination
from hierattn.ngrams.logits import NgramLogits
from hierattn.ngrams.recipes import fit_recipes
from hierattn.utils.keras_compat import drop_untracked_attribute, untracked_attribute


class NgramPart:
    """The n-gram part's methods of `TextClassifier` (which sets `preprocessor`, `ngrams` and `ngram_report`).

    Example:

    Refit the n-gram part of a trained classifier on more texts, then tune
    its weight against the network (and the rest of the policy) again on held-out texts:

    >>> import hierattn
    >>> texts = ["A great film. I loved it.", "Dull and far too long.", "Wonderful acting!", "A boring, slow plot."] * 5
    >>> labels = ["pos", "neg", "pos", "neg"] * 5
    >>> clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, embedding_dim=8)
    >>> _ = clf.fit(texts, labels, epochs=1, verbose=0)
    >>> _ = clf.fit_ngrams(texts + ["Great fun.", "Slow and dull."], labels + ["pos", "neg"])
    >>> clf.ngram_report["recipe"]["weighting"]   # no validation texts: the recipe chosen before
    'tfidf'
    >>> a, b = clf.tune((["A wonderful film.", "So boring."], ["pos", "neg"])).weights
    >>> abs(clf.ngram_report["network_weight"] - a) < 1e-6 and abs(clf.ngram_report["ngram_weight"] - b) < 1e-6
    True
    """

    def _make_ngram_part(self, layer):
        if isinstance(layer, dict):
            layer = keras.saving.deserialize_keras_object(layer)
        self.ngrams = True
        self.ngram_logits = layer
        self.combination = LogLinearCombination(activation=activation_of(self.multi_label), name="combination")
        if not self.ngram_logits.built:
            self.ngram_logits.build((None,) * self.preprocessor.input_rank)
        self.combination.build()

    def fit_ngrams(self, x, y, validation_data=None, verbose=0):
        """Fits the n-gram part to texts (or their ids) and labels, its recipe chosen on validation texts.

        `fit`'s step after training the backbone: every recipe of
        `hierattn.defaults.NGRAMS["recipes"]` is fitted with scikit-learn and
        the one with the smallest validation log-loss is kept
        (`hierattn.ngrams.recipes.fit_recipes`, which logs each recipe tried
        to the `hierattn.ngrams.recipes` logger at DEBUG level). Without
        validation texts, the recipe chosen before (by an earlier fit, and
        saved with the classifier) is fitted again to these texts, or
        `NGRAMS["fallback"]` when none was chosen. The combination's weights
        stay as they are until `tune`. `ngram_report` then holds
        `recipe`, `candidates` (each recipe fitted, with its validation
        scores), `train_documents` and `training_seconds`.

        Args:
            x: Texts (the forms `fit` takes), or their ids from `preprocessor`.
            y: Their labels: class names, integers or one-hot rows.
            validation_data: `(texts, labels)`, `(ids, labels)` or a dataset
                of `(texts, labels)` to choose the recipe on, or `None`.
            verbose: Show a progress bar while fitting (a step per model
                fitted: for multi-label, per label of each candidate), then
                print one line: the recipe fitted, and why.

        Returns:
            The classifier.
        """
        self._fit_ngrams(x, y, validation_data, progress=bool(verbose))
        if verbose:
            print(self._ngram_line(weights=False))
        return self

    def _fit_ngrams(self, x, y, validation_data, progress):
        """`fit_ngrams` without its line: the recipes fitted and chosen, with a progress bar if `progress`."""
        layer = self._ngram_part()
        x, labels = self._ids_and_label_ids(x, y, "fit_ngrams")
        validation = None
        if validation_data is not None:
            val_x, val_labels = self._ids_and_label_ids(*validation_pair(validation_data), "validation_data")
            validation = (ngram_ids(val_x), val_labels) if len(val_labels) else None
        before = (self.ngram_report or {}).get("recipe")
        started = time.perf_counter()

        def make_layer(ngram_max, tf, normalize):
            return NgramLogits(
                layer.vocabulary_size, layer.num_classes, ngram_max, layer.num_buckets, tf=tf, normalize=normalize
            )

        recipes = None if validation is not None or before is None else [_as_grid(before)]
        fitted, report = fit_recipes(make_layer, ngram_ids(x), labels, validation, recipes, progress=progress)
        for name in ("ngram_max", "tf", "normalize"):  # the layer keeps its place in the model; its recipe changes
            setattr(layer, name, getattr(fitted, name))
        layer.set_tables(fitted.kept_ids, fitted.idf, fitted.kernel, fitted.bias, fitted.unseen_idf)
        self._drop_traced()  # they hold the old tables
        report["training_seconds"] = round(time.perf_counter() - started, 1)
        self.ngram_report = report
        drop_untracked_attribute(self, "_ngram_choices")
        untracked_attribute(self, "_ngram_choices", dict)["recipe"] = _why(validation is not None, before is not None)

    def _fit_report(self):
        """What `fit_ngrams` measured, of `ngram_report` (without the weights' entries)."""
        kept = ("recipe", "candidates", "train_documents", "training_seconds")
        return {key: value for key, value in (self.ngram_report or {}).items() if key in kept}

    def _set_weights_report(self, report, a, b, why):
        report.update(network_weight=float(a), ngram_weight=float(b), network_share=float(a / (a + b)))
        self.ngram_report = report
        untracked_attribute(self, "_ngram_choices", dict)["weights"] = why

    def _ngram_line(self, recipe=True, weights=True):
        """One line on the n-gram part: its recipe and why, its weights and why (`ngram_report`)."""
        report, why = self.ngram_report, untracked_attribute(self, "_ngram_choices", dict)
        parts = []
        if recipe:
            chosen = report["recipe"]
            fitted = f"{self.ngram_logits.num_kept:,} features"
            if "train_documents" in report:
                fitted += f" from {report['train_documents']:,} documents in {report['training_seconds']} s"
            parts.append(
                f"{chosen['weighting']} 1-{chosen['ngram_max']} grams, C={chosen['C']:g}"
                f"{', balanced' if chosen['class_weight'] else ''}, {why.get('recipe', 'as saved')}, {fitted}"
            )
        if weights:
            parts.append(
                f"weights {report['network_weight']:.2f} (network) / {report['ngram_weight']:.2f} (n-grams), "
                f"{why.get('weights', 'as saved')}"
            )
        return "n-gram part: " + "; ".join(parts)

    def _ngram_part(self):
        if self.ngram_logits is None:
            why = "it was made with ngrams=False" if not self.ngrams else "fit or adapt it first"
            raise ValueError(f"this classifier has no n-gram part ({why})")
        return self.ngram_logits


def _as_grid(recipe):
    """A chosen recipe (`ngram_report["recipe"]`) as a grid of one candidate, for `fit_recipes`."""
    return {
        "weighting": recipe["weighting"],
        "ngram_max": recipe["ngram_max"],
        "C": (recipe["C"],),
        "class_weights": (recipe["class_weight"],),
    }


def _why(validated, chosen_before):
    """Why `fit_ngrams` fitted the recipe it did, in words."""
    if validated:
        return "chosen on validation"
    return "chosen before (no validation texts)" if chosen_before else "the fallback (no validation texts)"
