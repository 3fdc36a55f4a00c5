"""Hostile inputs for the property tests (Hypothesis): the two profiles, and strategies every surface shares.

Two profiles (`tests/conftest.py` loads one):

- `short`, in `make test`: derandomised (the same cases on every machine, from each test's own
  source), no example database, no deadline. Each property asks for `budget(n)` examples, a few dozen
  or hundred, so the properties together add under a minute to the suite.
- `fuzz`, under `benchmarks/fuzz.py` (`HIERATTN_FUZZ_EXAMPLES=N`): every property runs `N` examples
  and a case over `FUZZ_DEADLINE_MS` (10 s) is a failure, a hang.

Every failure Hypothesis found is kept under its property as an `@example`, so the short profile
tries it on every run.
"""

import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# The long profile's examples per property (benchmarks/fuzz.py sets it); unset: the short profile.
FUZZ_EXAMPLES = int(os.environ.get("HIERATTN_FUZZ_EXAMPLES", "0") or 0)
FUZZ_DEADLINE_MS = 10_000  # a case over 10 s is a hang (#67)

_COMMON = {
    "database": None,  # no `.hypothesis/` folder: what a run finds is kept as an @example, in the code
    "print_blob": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
}
settings.register_profile("short", derandomize=True, deadline=None, max_examples=50, **_COMMON)
settings.register_profile(
    "fuzz", derandomize=True, deadline=FUZZ_DEADLINE_MS, max_examples=max(FUZZ_EXAMPLES, 1), **_COMMON
)
PROFILE = "fuzz" if FUZZ_EXAMPLES else "short"


def budget(short):
    """A property's settings: `short` examples in `make test`, `HIERATTN_FUZZ_EXAMPLES` under benchmarks/fuzz.py."""
    return settings(max_examples=FUZZ_EXAMPLES or short)


# Pieces of text nobody writes by hand: controls, NUL, byte-order marks, direction marks and overrides,
# combining marks without a base, zero-width joiners in emoji sequences, a regional-indicator flag, a lone
# surrogate (Python strings hold them; UTF-8 cannot), HTML entities and tags, every kind of line break.
HOSTILE_PIECES = (
    "\x00", "\x07", "\x1b[31m", "\ufeff", "\u200b", "\u200e", "\u200f", "\u202e", "\u2066", "\u0301\u0301",
    "\u0e4d\u0e48", "\U0001f469\u200d\U0001f469\u200d\U0001f467", "\U0001f1ef\U0001f1f5", "\U0001f44d\U0001f3fd",
    "\ud800", "\udfff", "&amp;", "&#0;", "&#x110000;", "<br />", "<script>", "\r\n", "\u2028", "\u2029", "\x85",
    "\t", " ", "...", "—", "שלום", "مرحبا", "你好世界", "こんにちは", "สวัสดี", "Ǆ", "ß", "İ", "ﬃ", "\uffff",
)  # fmt: skip
# Every code point Hypothesis draws, surrogates and unassigned ones included.
ANY_CHARACTER = st.characters(codec=None, categories=None, exclude_categories=())


# Four strings of a million characters: many words, one word, sentence ends only, combining marks only.
HUGE_TEXTS = ("word " * 200_000, "x" * 1_000_000, "。" * 350_000, "\u0301" * 500_000)


def hostile_texts(max_size=200, huge=True):
    """Strings of any code points mixed with `HOSTILE_PIECES` and words; with `huge`, now and then one of `HUGE_TEXTS`."""
    piece = st.one_of(
        st.text(ANY_CHARACTER, max_size=20),
        st.sampled_from(HOSTILE_PIECES),
        st.sampled_from(("good", "bad", "film", "great", "awful", "plot", "the", "a", ".", "!", "?")),
    )
    pieces = st.lists(piece, max_size=max_size).map("".join)
    if not huge:
        return pieces
    return st.one_of(
        pieces, pieces, pieces, pieces, pieces, pieces, pieces, pieces, pieces, st.sampled_from(HUGE_TEXTS)
    )
