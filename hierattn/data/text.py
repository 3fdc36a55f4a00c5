"""Cleaning, sentence splitting and word tokenization with character offsets.

Design (see docs/data.md, "Text processing"): cleaning is *length-preserving*
(HTML tags and control characters become spaces, `<br />` becomes a line
break padded with spaces), so every token's `(start, end)` points into the
user's original text. Sentences are split by one regular expression for
candidate boundaries plus an abbreviation check at each candidate, and words
by a second expression. Token *forms* used for the vocabulary are normalised
per token (NFKC for non-ASCII, optional case folding).

Every script (docs/languages.md): sentences also end at the ends of scripts
other than Latin (`。！？` anywhere, the danda, the Arabic question mark...),
a word keeps its combining marks, and a tokenizer's `units` cut each word
into characters or learned subword pieces (`hierattn.data.units`), each with
its own span of the original text.

We compared library splitters on 1,000 IMDB reviews and the hand-labelled
cases of the tests (BENCHMARKS.md, "Sentence splitters"):
syntok got all cases right but takes ~1.5 ms per review, pysbd ~7 ms, and
nltk's punkt (untrained; the pretrained model needs a download) ~0.6 ms
while splitting after "Mr." and "e.g.". This splitter gets the same cases
right in ~0.08 ms, which is what fits the 20 s budget for 50,000 reviews.
"""

import html
import itertools
import re
import sys
import unicodedata

from hierattn.data.units import WORD_START, Subwords, load_subwords, proportional_spans
from hierattn.defaults import UNITS

# What a token is (`Tokenizer(units=...)`, `hierattn.data.units`).
UNIT_CHOICES = UNITS["choices"]

# HTML tags: <br> variants become a line break (a hard sentence boundary),
# other tags become spaces. Control characters become spaces.
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_TAG = re.compile(r"</?[A-Za-z][^<>]{0,200}>")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b\ufeff]")


def _mark_class():
    """A character class of the combining marks (Unicode categories M*) and the zero-width (non-)joiners.

    They belong to the word they are in: Thai vowel signs, Devanagari matras
    and viramas, Arabic harakat are not letters to `\\w`, and without them a
    Hindi or Thai word would be cut at each sign.
    """
    codes = [c for c in range(0x10000) if unicodedata.category(chr(c)) in ("Mn", "Mc", "Me")]
    codes += list(range(0xE0100, 0xE01F0)) + [0x200C, 0x200D]  # variation selectors; ZWNJ, ZWJ
    ranges, first = [], None
    for previous, code in zip([None, *codes], codes):
        if first is None or code != previous + 1:
            if first is not None:
                ranges.append((first, previous))
            first = code
    ranges.append((first, codes[-1]))
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


_MARK = _mark_class()
_CLUSTER = re.compile(rf"[^{_MARK}][{_MARK}]*|[{_MARK}]+")  # a character and the combining marks on it
# The most letters one subword unit covers: SentencePiece's longest piece (its max_sentencepiece_length, 16).
_PIECE_LETTERS = 16

# Words: initialisms (U.S., e.g.), words with inner apostrophes or hyphens
# (didn't, well-made), numbers with decimals (3.50, 1,000), emoji, and "!"/"?";
# a word's letters may carry combining marks.
_WORD = rf"[^\W_](?:[^\W_]|[{_MARK}])*"
_TOKEN = re.compile(
    r"(?:[^\W\d_]\.){2,}"
    r"|\d+(?:[.,:]\d+)*"
    rf"|{_WORD}(?:['\u2019\-]{_WORD})*"
    r"|[\U0001F000-\U0001FAFF\u2600-\u27BF]"
    r"|[!?]"
)

# The same tokens of lower-cased ASCII text, about twice as fast (`_ascii_tokens`): the characters no token holds
# become spaces, and a chunk between spaces that is all letters or all digits (most are) is one token.
_NOT_IN_TOKENS = str.maketrans({c: " " for c in map(chr, range(128)) if not (c.isalnum() or c in "'-.,:!?")})

# Sentence ends of other scripts, which end a sentence wherever they stand (no space follows them in Chinese or
# Japanese): the ideographic full stop and the full-width `!` `?` `.` (CJK, and the half-width `｡`), the danda and
# double danda (Devanagari and other Indic scripts), the Arabic question mark and full stop (Urdu), the Burmese
# section mark, the Ethiopic full stop and question mark.
SENTENCE_ENDS = "\u3002\uff01\uff1f\uff0e\uff61\u0964\u0965\u061f\u06d4\u104b\u1362\u1367"
_CLOSERS = "\"'\u201d\u2019)\\]\u300d\u300f\uff09\u3011\u3015\u3009\u300b"  # quotes, brackets (CJK ones too)
_ALWAYS_END = frozenset("!?" + SENTENCE_ENDS)

# Candidate sentence ends: terminal punctuation, optional closing quotes or
# brackets, then white space or the end; the ends of other scripts, anywhere;
# or a line break; or "word.Word" with no space (frequent in reviews).
_BOUNDARY = re.compile(
    rf"(?=[.!?\u2026\n{SENTENCE_ENDS}])(?:"  # a cheap first-character check speeds the scan ~3x
    rf"[.!?\u2026]+[{_CLOSERS}]*(?:\s+|$)"
    rf"|[.!?\u2026{SENTENCE_ENDS}]*[{SENTENCE_ENDS}][.!?\u2026{SENTENCE_ENDS}]*[{_CLOSERS}]*\s*"
    r"|\n\s*"
    r"|(?<=[a-z]{2})\.(?=[A-Z][a-z]))"
)
_LAST_CHUNK = re.compile(r"(\S+)$")
_ENTITY = re.compile(r"&(?:#\d+|#x[0-9a-fA-F]+|[A-Za-z]+);")

ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof sr jr st mt ft vs etc co corp inc ltd jan feb mar apr
    jun jul aug sep sept oct nov dec no vol vols pp ed eds approx dept est fig
    gen gov lt col sgt capt cmdr rev hon messrs mme mlle e.g i.e u.s u.k u.n
    a.k.a cf al viz""".split()
)


def _same_length(replacement):
    def replace(match):
        text = match.group(0)
        return replacement + " " * (len(text) - len(replacement))

    return replace


def _ascii_tokens(lowered):
    """`_TOKEN.findall(lowered)` of lower-cased ASCII text.

    No token holds a space or a character made one, and the scan starts
    afresh after each, so the chunks between them give exactly the tokens
    of the whole text.
    """
    tokens = []
    append, extend, findall = tokens.append, tokens.extend, _TOKEN.findall
    for chunk in lowered.translate(_NOT_IN_TOKENS).split():
        if chunk.isalpha() or chunk.isdigit():
            append(chunk)
        else:
            extend(findall(chunk))
    return tokens


def clean(text):
    """Length-preserving cleaning: HTML breaks, tags and control characters.

    Args:
        text: Raw text (e.g. an IMDB review with `<br /><br />`).

    Returns:
        A string of the same length where `<br />` is `"\\n"` plus spaces,
        other tags and control characters are spaces. Offsets into the result
        are offsets into `text`.
    """
    if "<" in text:
        text = _BREAK.sub(_same_length("\n"), text)
        text = _TAG.sub(_same_length(""), text)
    return _CONTROL.sub(" ", text)


def _is_abbreviation(cleaned, end):
    """Whether the chunk of text ending with the '.' at `end - 1` is an abbreviation."""
    match = _LAST_CHUNK.search(cleaned, max(0, end - 40), end)
    if match is None:
        return False
    word = match.group(1).lstrip("\"'(\u201c[").rstrip(".").lower()
    if word in ABBREVIATIONS:
        return True
    # Initials and initialisms: "J.", "U.S.", "e.g." (letters separated by dots).
    return bool(word) and all(len(part) == 1 and part.isalpha() for part in word.split("."))


def sentence_spans(cleaned):
    """Splits cleaned text into sentence spans.

    Splits after `.`, `!`, `?` (and runs of them) followed by white space or the
    end, at line breaks, and at "word.Word" typos; does not split after
    abbreviations ("Mr.", "Dr.", "e.g.", "U.S."), initials, inside decimals
    ("3.50") or after an ellipsis ("...") that has no `!`/`?`.

    Args:
        cleaned: Text from `clean`.

    Returns:
        List of `(start, end)` spans holding at least one non-space character,
        stripped of surrounding white space.
    """
    return list(iter_sentence_spans(cleaned))


def iter_sentence_spans(cleaned):
    """`sentence_spans`, one at a time: a reader that needs only the first sentences stops early."""
    start = 0
    for match in _BOUNDARY.finditer(cleaned):
        found = match.group(0)
        punct = found.rstrip()
        if not punct:  # a line break: always a boundary
            end = match.start()
        elif "\n" in found[len(punct) :]:  # punctuation then a line break
            end = match.start() + len(punct)
        else:
            core = punct.rstrip(_CLOSERS)
            if core == "." and match.end() > match.start() + 1 and _is_abbreviation(cleaned, match.start() + 1):
                continue
            if core != "." and _ALWAYS_END.isdisjoint(core):
                continue  # an ellipsis ("..", "...", "\u2026") does not end a sentence
            if core == "\uff0e" and _between_digits(cleaned, match.start(), match.end()):
                continue  # a full-width decimal point: "３．５"
            end = match.start() + len(punct)
        yield from _span(cleaned, start, end)
        start = match.end()
    yield from _span(cleaned, start, len(cleaned))


def _between_digits(text, start, end):
    return start > 0 and end < len(text) and text[start - 1].isdigit() and text[end].isdigit()


def _span(text, start, end):
    piece = text[start:end]
    stripped = piece.strip()
    if stripped:
        start += len(piece) - len(piece.lstrip())
        yield start, start + len(stripped)


def normalize_token(token, lower=True):
    """The vocabulary form of a token: NFKC (full-width Latin and digits become ASCII) and case folding.

    ASCII tokens are only lower-cased (`str.casefold` is `str.lower` there).
    """
    if token.isascii():
        return token.lower() if lower else token
    token = unicodedata.normalize("NFKC", token).replace("\u2019", "'")
    if " " in token:  # a few letters are a letter and a space in NFKC (U+037A, Arabic ligatures): forms hold none
        token = token.replace(" ", "")
    return token.casefold() if lower else token


class Token:
    """A token as the user wrote it, with its place in the original text.

    Attributes:
        text: The token exactly as in the original text.
        form: The normalised form looked up in the vocabulary.
        start: Character offset of the first character in the original text.
        end: Character offset one past the last character.
        sentence: Index of the sentence.
        index: Index of the word within its sentence.

    Example:

    >>> text = "A <b>GREAT</b> film."
    >>> token = Tokenizer().tokenize(text)[0][1]
    >>> token
    Token('GREAT', 5:10, s0w1)
    >>> text[token.start:token.end], token.form, token.sentence, token.index
    ('GREAT', 'great', 0, 1)
    """

    __slots__ = ("text", "form", "start", "end", "sentence", "index")

    def __init__(self, text, form, start, end, sentence, index):
        self.text, self.form, self.start, self.end = text, form, start, end
        self.sentence, self.index = sentence, index

    def __repr__(self):
        return f"Token({self.text!r}, {self.start}:{self.end}, s{self.sentence}w{self.index})"


class Tokenizer:
    """Splits documents into sentences of tokens.

    Args:
        lower: Case-fold token forms for the vocabulary (the original text
            and offsets are kept either way).
        unescape_html: Map HTML entities such as `&amp;` in token forms.
        units: What a token is (`hierattn.data.units`): `"words"`,
            `"characters"` (each letter of a word, with its marks), `"subwords"` (pieces of
            a word, learned from training texts: `with_units`), or `"auto"`,
            to be chosen from training texts (`TextPreprocessor.adapt`)
            before it tokenizes anything.
        subwords: The `hierattn.data.units.Subwords` model (or its text) of
            `units="subwords"` (without it, learned by `TextPreprocessor.adapt`
            or `with_units` before it tokenizes anything).

    Example:

    >>> tokenizer = Tokenizer()
    >>> tokenizer.sentences("Mr. Smith's film was great! I loved it.")
    [['mr', "smith's", 'film', 'was', 'great', '!'], ['i', 'loved', 'it']]
    >>> text = "A <b>great</b> film.<br />Loved it!"
    >>> sentences = tokenizer.tokenize(text)            # with offsets into the original text
    >>> [[token.text for token in sentence] for sentence in sentences]
    [['A', 'great', 'film'], ['Loved', 'it', '!']]
    >>> sentences[0][1]
    Token('great', 5:10, s0w1)
    """

    def __init__(self, lower=True, unescape_html=True, units="words", subwords=None):
        if units not in UNIT_CHOICES:
            raise ValueError(f"units must be one of {', '.join(UNIT_CHOICES)}, not {units!r}")
        self.lower = lower
        self.unescape_html = unescape_html
        self.units = units
        self.subwords = None if subwords is None or units != "subwords" else load_subwords(subwords)

    def get_config(self):
        config = {"lower": self.lower, "unescape_html": self.unescape_html}
        if self.units != "words":  # a words tokenizer's config as before units existed (older runtimes read it)
            config["units"] = self.units
        if self.subwords is not None:
            config["subwords"] = self.subwords.to_text()
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def with_units(self, units, learn_from=None):
        """This tokenizer with other units; subwords are learned from the texts `learn_from`.

        >>> texts = ["送餐很快，味道不错。", "等了两个小时，饭都凉了。"] * 30
        >>> Tokenizer().with_units("characters").words(texts[0])
        ['送', '餐', '很', '快', '味', '道', '不', '错']
        >>> subwords = Tokenizer().with_units("subwords", learn_from=texts)
        >>> "".join(subwords.words(texts[1])).replace("\u2581", "")
        '等了两个小时饭都凉了'
        """
        settings = {"lower": self.lower, "unescape_html": self.unescape_html}
        if units != "subwords":
            return Tokenizer(**settings, units=units)
        if learn_from is None:
            if self.subwords is None:
                raise ValueError("subword units are learned from texts: pass learn_from=texts")
            return Tokenizer(**settings, units=units, subwords=self.subwords)
        words = Tokenizer(**settings)
        sentences = (" ".join(sentence) for text in learn_from for sentence in words.sentences(text))
        return Tokenizer(**settings, units=units, subwords=Subwords.learn(sentences))

    def _form(self, token):
        return normalize_token(token, self.lower)

    def has_words(self, text):
        """Whether `text` has any word (markup, spaces and symbols have none), whatever the units (even `"auto"`)."""
        words = self if self.units == "words" else Tokenizer(self.lower, self.unescape_html)
        return bool(words.tokenize(text, max_tokens=1))

    def _pieces(self, forms):
        """The units of each word form (characters or subwords; words are not split)."""
        if self.units == "characters":  # a letter with its combining marks is one character (Thai "ร่", "é")
            return [_CLUSTER.findall(form) for form in forms]
        if self.units == "subwords" and self.subwords is not None:
            return self.subwords.split(forms)
        if self.units == "subwords":
            raise ValueError("subword units are learned from training texts first (TextPreprocessor.adapt)")
        raise ValueError("units='auto' are chosen from training texts first (TextPreprocessor.adapt)")

    def _split(self, forms):
        """The units of word forms, in order."""
        return forms if self.units == "words" else [unit for units in self._pieces(forms) for unit in units]

    def _unit_tokens(self, text, tokens, sentence, most=sys.maxsize):
        """Word `Token`s as tokens of this tokenizer's units, each with its span of the original text.

        Only a word's first `most` units are wanted: a longer word is first
        cut to the letters they can come from, with room to spare, so a word
        of a million letters costs no more than a short one.
        """
        if self.units == "words" or not tokens:
            return tokens
        tokens = [self._shortened(token, most) for token in tokens]
        pieces = self._pieces([t.form for t in tokens])

        result = []
        for token, units in zip(tokens, pieces):
            lengths = [len(u) - u.startswith(WORD_START) for u in units]
            spans = self._cluster_spans(token, lengths) or proportional_spans(token.start, token.end, lengths)
            for unit, (a, b) in zip(units, spans):
                result.append(Token(text[a:b], unit, a, b, sentence, len(result)))
        return result

    def _letters(self, most):
        """How many letters (each with its marks) of a word's form its first `most` units come from."""
        return most * (_PIECE_LETTERS if self.units == "subwords" else 1)

    def _shortened(self, token, most):
        """`token` cut to a first part whose form begins the word's form with its first `most` units and more.

        Tried with twice the letters until it does (normalising can join
        letters, `&eacute;` is one letter of the form): only a word far
        longer than its units read is ever cut.
        """
        needed = self._letters(most + 1)
        letters = needed + 2
        while letters < len(token.text):
            kept = _first_letters(token.text, letters)
            form = self._form(kept)
            if token.form.startswith(form) and len(_CLUSTER.findall(form)) > needed:
                return Token(kept, form, token.start, token.start + len(kept), token.sentence, token.index)
            letters *= 2
        return token

    def _cluster_spans(self, token, lengths):
        """Spans of a word's units from the characters they came from, or `None` where that cannot be told.

        Each letter with its combining marks is normalised on its own; when
        those pieces make the word's form, every character of the form comes
        from one such letter, and a unit spans the letters of its
        characters. A unit made only of what one letter became beyond its
        first character (the second "s" of "ß") gets an empty span at that
        letter's end.
        """
        if len(token.text) != token.end - token.start:  # an HTML entity: the form is not of these characters
            return None
        sources = []
        position = token.start
        for cluster in _CLUSTER.findall(token.text):
            form = self._form(cluster)
            sources += [(position, position + len(cluster))] + [(position + len(cluster),) * 2] * (len(form) - 1)
            position += len(cluster)
        if len(sources) != sum(lengths):
            return None
        spans, done = [], 0
        for length in lengths:
            covered = sources[done : done + length]
            done += length
            spans.append((covered[0][0], max(end for _, end in covered)))
        return spans

    def sentences(self, text):
        """Token forms per sentence, without offsets (the fast path).

        Args:
            text: A document.

        Returns:
            A list of sentences, each a list of normalised token strings;
            sentences without any token are dropped.
        """
        cleaned = clean(_as_text(text))
        result = []
        findall = _TOKEN.findall
        for start, end in sentence_spans(cleaned):
            piece = cleaned[start:end]
            if self.unescape_html and "&" in piece:
                piece = html.unescape(piece)
            if self.lower and piece.isascii():
                tokens = _ascii_tokens(piece.lower())
            else:
                tokens = [self._form(t) for t in findall(piece)]
            if tokens:
                result.append(self._split(tokens))
        return result

    def words(self, text, max_tokens=None):
        """Every token form of a document in order, its sentences run together (the fastest path).

        The forms of `sentences(text)`, flattened: nothing but white space
        lies between two sentences, so one scan of the whole text finds the
        same tokens. What the n-gram part reads needs no sentence split.

        Args:
            text: A document.
            max_tokens: Keep at most this many (the first ones).

        Returns:
            A list of normalised token strings.

        >>> Tokenizer().words("Mr. Smith's film was great! I loved it.<br />So there.")
        ['mr', "smith's", 'film', 'was', 'great', '!', 'i', 'loved', 'it', 'so', 'there']
        """
        cleaned = clean(_as_text(text))
        if self.unescape_html and "&" in cleaned:
            cleaned = html.unescape(cleaned)
        if self.lower and cleaned.isascii():
            tokens = _ascii_tokens(cleaned.lower())
        else:
            tokens = [self._form(t) for t in _TOKEN.findall(cleaned)]
        if max_tokens is not None:
            tokens = tokens[:max_tokens]  # each word gives at least one unit: the first units come from these
            if self.units != "words":
                tokens = [_first_letters(form, self._letters(max_tokens + 2)) for form in tokens]
        tokens = self._split(tokens)
        return tokens if max_tokens is None else tokens[:max_tokens]

    def tokenize(self, text, return_spans=False, max_sentences=None, max_words=None, max_tokens=None):
        """Tokens with offsets into the original text, grouped by sentence.

        Gives the same token forms and sentences as `sentences(text)`. The
        limits make the work (and the result) bounded however long the text:
        reading stops at them, and a sentence cut short ends, in its span,
        at its last token kept.

        Args:
            text: A document.
            return_spans: Also return each sentence's `(start, end)` span in
                the original text (punctuation included).
            max_sentences: Read at most this many sentences (with tokens).
            max_words: Keep at most this many tokens of each sentence.
            max_tokens: Keep at most this many tokens in all.

        Returns:
            A list of sentences, each a list of `Token`s; `text[t.start:t.end]`
            is `t.text` for every token. With `return_spans`, a tuple
            `(sentences, spans)`.
        """
        text = _as_text(text)
        cleaned = clean(text)
        result, spans = [], []
        budget = sys.maxsize if max_tokens is None else max_tokens
        for start, end in iter_sentence_spans(cleaned):
            if len(result) == max_sentences or budget <= 0:
                break
            keep = min(budget, sys.maxsize if max_words is None else max_words)
            if keep <= 0:
                break
            if self.unescape_html and "&" in cleaned[start:end]:
                # Entity-bearing sentences: tokenize the unescaped text for the
                # forms, and map each token back to the original characters.
                tokens = self._tokens_with_entities(text, cleaned, start, end, len(result))[: keep + 1]
            else:
                tokens = [
                    Token(text[m.start() : m.end()], self._form(m.group(0)), m.start(), m.end(), len(result), i)
                    for i, m in zip(range(keep + 1), _TOKEN.finditer(cleaned, start, end))
                ]
            tokens = self._unit_tokens(text, tokens, len(result), keep)  # a word gives at least one unit
            if len(tokens) > keep:  # the sentence goes on beyond the limits: its span ends at its last token kept
                tokens = tokens[:keep]
                end = tokens[-1].end
            if tokens:
                result.append(tokens)
                spans.append((start, end))
                budget -= len(tokens)
        return (result, spans) if return_spans else result

    def _tokens_with_entities(self, text, cleaned, start, end, sentence):
        # Unescape the sentence, remembering for each character of the result
        # the span of original characters it came from.
        pieces, begins, ends = [], [], []
        position = start
        for match in _ENTITY.finditer(cleaned, start, end):
            a, b = match.span()
            pieces.append(cleaned[position:a])
            begins.extend(range(position, a))
            ends.extend(range(position + 1, a + 1))
            value = html.unescape(match.group(0))
            pieces.append(value)
            begins.extend([a] * len(value))
            ends.extend([b] * len(value))
            position = b
        pieces.append(cleaned[position:end])
        begins.extend(range(position, end))
        ends.extend(range(position + 1, end + 1))
        tokens = []
        for i, m in enumerate(_TOKEN.finditer("".join(pieces))):
            a, b = begins[m.start()], ends[m.end() - 1]
            tokens.append(Token(text[a:b], self._form(m.group(0)), a, b, sentence, i))
        return tokens


def _first_letters(word, letters):
    """The first `letters` letters of `word`, each with its combining marks (`word` itself when it has no more)."""
    if len(word) <= letters:
        return word
    *_, last = itertools.islice(_CLUSTER.finditer(word), letters)
    return word[: last.end()]


def _as_text(text):
    """Accepts str, bytes (UTF-8, undecodable bytes replaced) or None."""
    if text is None:
        return ""
    if isinstance(text, bytes):
        return text.decode("utf-8", errors="replace")
    if not isinstance(text, str):
        return str(text)
    return text
