"""Explaining predictions: each word's evidence for the decision, where the network read, and whether it is faithful.

    from hierattn.explain import Explainer, to_html
    explanation = classifier.explain("The plot was thin. The acting was superb.")
    explanation              # in a notebook: the picture (evidence, the margin's parts, attention)
    print(explanation)       # the same as text; explanation.to_html(), .to_json(), .top(5)

One module per concern, each importing only those listed before it:

* :mod:`hierattn.explain.summaries`: the numbers every view reads (the
  prediction in words, the top evidence, the margin's parts and shares).
* :mod:`hierattn.explain.picture`: the one picture every view shows, and `to_html`.
* :mod:`hierattn.explain.report`: text, CSV rows and JSON renderings.
* :mod:`hierattn.explain.explanation`: `Explanation`, `WordWeight`,
  `NgramContribution`: what an explanation holds; `Explanations`, several.
* :mod:`hierattn.explain.attributions`: per-token scores beside the
  backbone's own attention (`Backbone.token_attention`):
  `gradient_times_input`, `integrated_gradients`.
* :mod:`hierattn.explain.explainer`: `Explainer`, which gives every word of
  the original text its evidence (its share of the decision's margin) and
  its attention.
* :mod:`hierattn.explain.erasure`: erasing words by rank and scoring what is
  left (the ERASER measures, their bins).
* :mod:`hierattn.explain.faithfulness`: `check_faithfulness`, whether the
  explanations are faithful to the classifier (ERASER comprehensiveness and
  sufficiency, with a verdict).
* :mod:`hierattn.explain.corpus`: `explain_corpus`, each predicted class's
  words with the most evidence and the most attention (relative to uniform)
  over a whole dataset, and `open_corpus`.

A multi-label classifier's labels are explained one at a time, each
against its threshold: `classifier.explain(text)` gives one `Explanation`
per label explained (each predicted label, or those of `label=`), and
every view names the label it explains.

With a run directory, each is one call of the application above this
library (`hierattn.runs.explain`: `explain_texts`, `explain_file`,
`explain_dataset`), which is what `hierattn explain` calls.

Importing this package loads neither TensorFlow nor Keras (the `hierattn`
program imports it before it has checked its input, and refuses bad input
before they load); the few functions that need them import them when called.
"""

from hierattn.explain.attributions import gradient_times_input
from hierattn.explain.corpus import CorpusSummary, CorpusWords, documents_path, explain_corpus
from hierattn.explain.corpus_source import CorpusSource, open_corpus
from hierattn.explain.explainer import Explainer
from hierattn.explain.explanation import Explanation, Explanations, NgramContribution, WordWeight
from hierattn.explain.faithfulness import FaithfulnessReport, check_faithfulness
from hierattn.explain.report import CSV_COLUMNS, to_html, to_json, to_rows, to_text

__all__ = [
    "CSV_COLUMNS",
    "CorpusSource",
    "CorpusSummary",
    "CorpusWords",
    "Explainer",
    "Explanation",
    "Explanations",
    "FaithfulnessReport",
    "NgramContribution",
    "WordWeight",
    "check_faithfulness",
    "documents_path",
    "explain_corpus",
    "gradient_times_input",
    "open_corpus",
    "to_html",
    "to_json",
    "to_rows",
    "to_text",
]
