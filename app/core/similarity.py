"""Text similarity and stance detection for memory items, stdlib only and fast.

This module owns the deterministic notion of "the same fact" and "opposite facts" that the
offline engine, consolidation and cross-branch conflict detection share. `tokens` turns text
into a set of lightly stemmed content words; `similarity` combines token overlap (Jaccard and
overlap coefficient, seed 003's token-overlap dedup) with a guarded `difflib` ratio so callers
can apply their own threshold (0.8 for near-duplicates, 0.5 for the import smart merge of
seed 000). `stances` reads prescriptive statements ("use X", "never X", "prefer X to Y",
"X instead of Y") as (subject, polarity) pairs, and `contradicts` says whether two items take
opposite stances on the same subject. Results are cached per text, so repeated comparisons of
the same items (every retrieve, every evolve) cost a set operation, not a parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Only attributes are read (title, content, category, id): the cold read path
    # (app/readpath.py) checks candidates for contradictions without loading pydantic.
    from app.core.models import MemoryItem

__all__ = [
    "Stance",
    "contradicts",
    "item_similarity",
    "item_stances",
    "item_text",
    "item_tokens",
    "opposing_subjects",
    "sets_a_value",
    "similarity",
    "stance",
    "stances",
    "subjects_match",
    "token_overlap",
    "tokens",
]


# Function words that carry no topic. Negations ("not", "never", "no", "avoid") are kept on
# purpose so that "use X" and "don't use X" are not scored as the same text, and "then" is
# kept because `.then()` chains are a common subject of coding preferences.
def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOP_WORDS: frozenset[str] = _wordset(
    """
    a about above after again all also am an and any are as at be been before being below
    between both but by can could did do does doing down during each either etc even ever
    every few for from further had has have having he her here hers him his how i if in into
    is it its itself just let like may me might more most much must my myself neither nor of
    off on once only or other our ours out own per same she should so some such than that
    the their theirs them there these they this those through thus to too under until up upon
    us very via was we were what when where whether which while who whom whose why will with
    within without would yet you your yours e g ie eg vs always really strongly generally
    usually
    """
)
# Extra words dropped from stance subjects: the stance markers themselves and filler verbs,
# so that "always use X", "prefer X" and "never use X" all have the subject {X}.
_SUBJECT_STOP: frozenset[str] = STOP_WORDS | _wordset(
    """
    use uses used using always never not no avoid avoiding prefer prefers preferred preferring
    favor favors favour favours favored favoured want wants wanted like likes should must
    please do don dont instead rather over user developer team project code codebase we
    one ones thing things way ways when statement statements library libraries lib libs
    package packages tool tools pattern patterns approach approaches style styles syntax
    """
)

_WORD_RE = re.compile(r"[a-z0-9_]+(?:'[a-z]+)?")
_NEGATED_AUX = re.compile(r"^(?:do|does|did|is|are|was|were|should|must|could|would|ca|wo)n't$")


def _stem(word: str) -> str:
    """A deliberately light stemmer: plural, -ing, -ed, trailing e.

    Only consistency matters (tests, testing, tested -> test; cache, cached, caching -> cach),
    not linguistic correctness; short words are left alone so that "bus" stays "bus".
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    suffix = False
    if word.endswith("ing") and len(word) >= 6:
        word, suffix = word[:-3], True
    elif word.endswith("ed") and len(word) >= 5 and not word.endswith("eed"):
        word, suffix = word[:-2], True
    if word.endswith("e") and len(word) >= 4:
        word = word[:-1]
    # Undouble a final consonant left by -ing/-ed ("mapping" -> "mapp" -> "map").
    if suffix and len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    return word


def _words(text: str) -> list[str]:
    """Lowercase words; "don't"/"doesn't"/... become "not", other clitics are dropped."""
    out: list[str] = []
    for raw in _WORD_RE.findall(text.lower()):
        if "'" in raw:
            if _NEGATED_AUX.match(raw) or raw.endswith("n't"):
                out.append("not")
                continue
            raw = raw.split("'", 1)[0]
        out.append(raw)
    return out


@lru_cache(maxsize=8192)
def tokens(text: str) -> frozenset[str]:
    """Content words of `text`: lowercased, lightly stemmed, stop words removed."""
    return frozenset(_stem(w) for w in _words(text) if w not in STOP_WORDS)


@lru_cache(maxsize=8192)
def _subject_tokens(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in _words(text) if w not in _SUBJECT_STOP)


def token_overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Mean of Jaccard and overlap coefficient of two token sets (0 when either is empty)."""
    if not a or not b:
        return 0.0
    inter = len(a & b)
    if not inter:
        return 0.0
    jaccard = inter / (len(a) + len(b) - inter)
    overlap = inter / min(len(a), len(b))
    return (jaccard + overlap) / 2


_TOKEN_WEIGHT = 0.7
_FUZZY_WEIGHT = 1.0 - _TOKEN_WEIGHT
_NORM_RE = re.compile(r"\W+")


def _norm(text: str) -> str:
    return _NORM_RE.sub(" ", text.lower()).strip()


def similarity(a: str, b: str, *, floor: float = 0.0) -> float:
    """How alike two texts are, 0..1: 70% token overlap, 30% character-level ratio.

    The token part catches rewordings with the same content words; the `difflib` part catches
    typos and small edits. With `floor`, the costly ratio is skipped when even a perfect ratio
    could not lift the score to `floor`: results below `floor` may then be an upper-bound
    estimate, results at or above it are exact, so `similarity(a, b, floor=t) >= t` is a
    correct and cheap duplicate test.
    """
    # difflib is not symmetric; a fixed order makes similarity(a, b) == similarity(b, a).
    na, nb = sorted((_norm(a), _norm(b)))
    if na == nb:
        return 1.0
    if not na or not nb:
        return 0.0
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        # Nothing but stop words on at least one side: fall back to the characters alone.
        return SequenceMatcher(None, na, nb, autojunk=False).ratio()
    tok = token_overlap(ta, tb)
    base = _TOKEN_WEIGHT * tok
    if base + _FUZZY_WEIGHT < floor:
        return base + _FUZZY_WEIGHT
    matcher = SequenceMatcher(None, na, nb, autojunk=False)
    for bound in (matcher.real_quick_ratio, matcher.quick_ratio):
        estimate = base + _FUZZY_WEIGHT * bound()
        if estimate < floor:
            return estimate
    return base + _FUZZY_WEIGHT * matcher.ratio()


def item_text(item: MemoryItem) -> str:
    """Title and content as one text; a title derived from the content is not repeated."""
    return _joined(item.title, item.content)


@lru_cache(maxsize=8192)
def _joined(title: str, content: str) -> str:
    if _norm(title) in _norm(content):
        return content
    return f"{title}. {content}"


def item_tokens(item: MemoryItem) -> frozenset[str]:
    """Tokens of `item_text` (the prefilter key for duplicate search)."""
    return tokens(item_text(item))


def item_similarity(a: MemoryItem, b: MemoryItem, *, floor: float = 0.0) -> float:
    """`similarity` of two items' `item_text` (category is the caller's business)."""
    return similarity(item_text(a), item_text(b), floor=floor)


# ---------------------------------------------------------------------------------------------
# Stances
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stance:
    """One prescriptive claim: `polarity` +1 (favoured) or -1 (disfavoured) about `subject`.

    `explicit` is False for the weak reading of a bare imperative ("Mock the database in
    tests"), which only counts against an explicit opposite with a closely matching subject.
    """

    subject: frozenset[str]
    polarity: int
    explicit: bool = True
    # A setting ("retention for app logs: 14 days"): its dimension and size in base units
    # (seconds, bytes, percent). Settings only meet settings: the same subject with another
    # size of the same dimension is a changed value.
    value: tuple[str, float] | None = None

    @property
    def key(self) -> str:
        """The subject as a stable, readable string (sorted stems)."""
        return " ".join(sorted(self.subject))


_MAX_SUBJECT_TOKENS = 6

_NEG = (
    r"(?:(?:do\s+not|don'?t|does\s+not|doesn'?t|should\s+not|shouldn'?t|must\s+not|mustn'?t|"
    r"never|avoid(?:s|ed|ing)?|no\s+longer|refrain\s+from|steer\s+clear\s+of|get\s+rid\s+of)"
    r"(?:\s+(?:use|using|to\s+use|be\s+using|rely\s+on|relying\s+on))?|"
    r"(?:stop(?:ped)?|can(?:no|')t|cannot|quit)\s+(?:use|using)|"
    r"ban(?:s|ned)?|forbid(?:s|den)?|disallow(?:s|ed)?)"
)
_POS = (
    r"(?:always(?:\s+(?:use|using|prefer))?|"
    r"prefer(?:s|red|ring)?(?:\s+(?:to\s+use|using|to\s+(?=\w)))?|"
    r"favou?r(?:s|ed|ing)?(?:\s+using)?|"
    r"(?:should|must|need\s+to|needs\s+to|have\s+to|has\s+to)\s+(?:use|be\s+using)|"
    r"stick(?:s|ing)?\s+(?:to|with)|switch(?:ed|es|ing)?\s+to|"
    r"adopt(?:s|ed|ing)?|cho(?:ose|oses|se|sen)|go(?:es)?\s+with|opt(?:s|ed)?\s+for|"
    r"recommend(?:s|ed)?|rel(?:y|ies|ied)\s+on|standardi[sz]e(?:d|s)?\s+on|"
    r"want(?:s|ed)?(?:\s+to\s+use)?|"
    r"us(?:e|es|ing))"
)
_MARKER_RE = re.compile(rf"\b(?:(?P<neg>{_NEG})|(?P<pos>{_POS}))\b", re.IGNORECASE)
_NEG_ONLY_RE = re.compile(rf"\b{_NEG}\b", re.IGNORECASE)
_PREF_VERB_RE = re.compile(
    r"\b(?:prefer\w*|favou?r\w*|us(?:e|es|ing)|cho(?:ose|se)\w*|pick\w*|recommend\w*|"
    r"opt\w*|go\s+with|always)\b",
    re.IGNORECASE,
)

# Comparatives, tried in order; each yields favoured text `a` and disfavoured text `b`.
# `tail` marks patterns where `a` comes before the comparative word, so its subject is the
# end of that text ("For state, always use X instead of Y" -> X); `checked` marks the bare
# "X over Y", trusted only after a preference verb or as a short slogan.
_TO_NOT_VERB = (
    r"(?!(?:make|keep|avoid|ensure|get|reduce|improve|prevent|allow|support|handle|be|have|"
    r"do|write|read|run|test|see|stay|help|let|simplify|match|save)\b)"
)


@dataclass(frozen=True, slots=True)
class _Comparative:
    pattern: re.Pattern[str]
    tail: bool = False
    checked: bool = False


_COMPARATIVES: tuple[_Comparative, ...] = (
    # "replace Y with X", "switch/migrate/move from Y to X": the later one wins.
    _Comparative(re.compile(r"\breplac(?:e|es|ed|ing)\s+(?P<b>.+?)\s+with\s+(?P<a>.+)", re.I)),
    _Comparative(
        re.compile(
            r"\b(?:switch|migrat|mov|went|transition)\w*\s+(?:away\s+)?from\s+(?P<b>.+?)"
            r"\s+(?:to|towards)\s+(?P<a>.+)",
            re.I,
        )
    ),
    # "prefer X to Y", "prefer X over Y", "favour X over Y" (not "prefer X to make it fast").
    _Comparative(
        re.compile(
            r"\b(?:prefer\w*|favou?r\w*|cho(?:ose|se)\w*|pick\w*)\s+(?:to\s+use\s+|using\s+)?"
            r"(?P<a>.+?)\s+(?:over|above|versus|vs\.?|to\s+" + _TO_NOT_VERB + r")\s*(?P<b>.+)",
            re.I,
        )
    ),
    # "X instead of Y", "X rather than Y", "X in place of Y".
    _Comparative(
        re.compile(
            r"(?P<a>.+?)\s+(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+(?P<b>.+)", re.I
        ),
        tail=True,
    ),
    # "X is better than Y", "X is preferable to Y".
    _Comparative(
        re.compile(
            r"(?P<a>.+?)\s+(?:is|are)\s+(?:much\s+|far\s+)?(?:better|preferable|preferred|"
            r"superior)\s+(?:than|to|over)\s+(?P<b>.+)",
            re.I,
        ),
        tail=True,
    ),
    # "X over Y".
    _Comparative(re.compile(r"(?P<a>.+?)\s+over\s+(?P<b>.+)", re.I), tail=True, checked=True),
    # "X, not Y" ("use tabs, not spaces").
    _Comparative(re.compile(r"(?P<a>.+?)\s*,\s*(?:and\s+)?not\s+(?P<b>.+)", re.I), tail=True),
)

# Where a subject phrase ends: punctuation or a conjunction that starts a reason or a new
# clause. "for", "in" and "when" are kept: "use print for debugging" is a narrower subject
# than "use print".
_SUBJECT_END_RE = re.compile(
    r"[,;:()\[\]!?]|\s[-–—]\s|\b(?:because|since|so|unless|except|but|which|whereas|while|"
    r"although|though|as|to\s+(?:avoid|prevent|keep|ensure|make|reduce|improve|get|stay|"
    r"allow|support)|otherwise)\b",
    re.IGNORECASE,
)
# Sentences and independent clauses. A period splits only when followed by space or end, so
# `.then()` and `file.py` survive.
_CLAUSE_SPLIT_RE = re.compile(r"(?<=[\w)\]\"'`])[.!?](?=\s|$)|[;\n]|\s[-–—]\s|,\s*but\s|\bbut\s")
_SLOGAN_MAX_WORDS = 4
# Categories whose statements are prescriptive, so a bare imperative reads as "do this".
# Values of `Category` (a StrEnum: its members hash and compare as these strings).
_PRESCRIPTIVE = frozenset({"coding_preferences", "project_conventions", "architectural_decisions"})


def _subject(phrase: str, *, leading: bool = True) -> frozenset[str]:
    """Subject tokens of a phrase: up to the first clause boundary when `leading`."""
    # Call parentheses are code, not an aside: ".then() chains" is one subject.
    phrase = phrase.replace("()", "")
    if leading:
        end = _SUBJECT_END_RE.search(phrase)
        if end is not None:
            phrase = phrase[: end.start()]
    else:
        # The favoured side of "X instead of Y" is the tail of what precedes the comparative.
        parts = re.split(r"[,:(]", phrase)
        phrase = parts[-1]
        markers = list(_MARKER_RE.finditer(phrase))
        if markers:
            phrase = phrase[markers[-1].end() :]
    ordered = [_stem(w) for w in _words(phrase) if w not in _SUBJECT_STOP]
    ordered = ordered[:_MAX_SUBJECT_TOKENS] if leading else ordered[-_MAX_SUBJECT_TOKENS:]
    return frozenset(ordered)


def _comparative(clause: str) -> list[Stance]:
    for comp in _COMPARATIVES:
        match = comp.pattern.search(clause)
        if match is None:
            continue
        a_text, b_text = match.group("a"), match.group("b")
        if comp.checked:
            prefix = clause[: match.start("b")]
            words_a = _words(re.split(r"[,:(]", a_text)[-1])
            words_b = _words(_SUBJECT_END_RE.split(b_text, maxsplit=1)[0])
            slogan = len(words_a) <= _SLOGAN_MAX_WORDS and 0 < len(words_b) <= 6
            if not (_PREF_VERB_RE.search(prefix) or slogan):
                continue
        fav = _subject(a_text, leading=not comp.tail)
        dis = _subject(b_text)
        if not fav or not dis or fav == dis:
            continue
        polarity = 1
        # "Don't use X instead of Y" flips the comparison.
        if comp.tail and _NEG_ONLY_RE.search(re.split(r"[,:(]", a_text)[-1]):
            polarity = -1
        return [Stance(fav, polarity), Stance(dis, -polarity)]
    return []


def _markers(clause: str) -> list[Stance]:
    found: list[Stance] = []
    matches = list(_MARKER_RE.finditer(clause))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(clause)
        subject = _subject(clause[match.end() : end])
        if subject:
            found.append(Stance(subject, -1 if match.group("neg") else 1))
    return found


@lru_cache(maxsize=65536)  # a whole memory (10,000 items) stays cached
def _text_stances(text: str, implicit: bool) -> tuple[Stance, ...]:
    found: list[Stance] = []
    for clause in _CLAUSE_SPLIT_RE.split(text):
        clause = clause.strip(" \t\"'`*")
        if not clause:
            continue
        compared = _comparative(clause)
        if compared:
            found.extend(compared)
            continue
        marked = _markers(clause)
        if marked:
            found.extend(marked)
        elif implicit:
            # Only a clause that opens like an imperative ("Mock the database ..."), not a
            # description ("The function is named ...", "We tried ...").
            first = _words(clause[:40])
            subject = _subject(clause) if first and first[0] not in STOP_WORDS else frozenset()
            if len(subject) >= 2:
                found.append(Stance(subject, 1, explicit=False))
    unique: list[Stance] = []
    for s in found:
        if s not in unique:
            unique.append(s)
    return tuple(unique)


def stances(text: str, *, implicit: bool = False) -> list[Stance]:
    """Every stance taken in `text`, in reading order.

    "Use X" / "always X" / "prefer X" give (X, +1); "don't use X" / "never X" / "avoid X" give
    (X, -1); "X instead of Y", "X over Y", "prefer X to Y", "replace Y with X" and "X, not Y"
    give both (X, +1) and (Y, -1). With `implicit`, a clause with no marker at all is read as
    a weak (+1) imperative ("Mock the database in tests").
    """
    return list(_text_stances(text, implicit))


def stance(text: str) -> tuple[str, int] | None:
    """The first stance of `text` as (subject key, polarity), or None when it takes none."""
    found = _text_stances(text, False)
    if not found:
        return None
    return found[0].key, found[0].polarity


def item_stances(item: MemoryItem) -> tuple[Stance, ...]:
    """Stances of an item's title and content (weak imperatives only in prescriptive sections).

    Title and content are read separately: a title such as "Async pattern" takes no stance,
    while "Composition over inheritance" does.
    """
    return _title_content_stances(item.title, item.content, item.category in _PRESCRIPTIVE)


@lru_cache(maxsize=65536)  # a whole memory (10,000 items) stays cached
def _title_content_stances(title: str, content: str, implicit: bool) -> tuple[Stance, ...]:
    from_title = _text_stances(title, False)
    from_content = (
        _text_stances(content, implicit)
        + _settings(content)
        + _counts(content)
        + _schedules(content)
    )
    if not from_title:
        return from_content
    return tuple(dict.fromkeys((*from_title, *from_content)))


# A quantity with a unit, and the size of each unit in its dimension's base unit.
_QUANTITY_RE = re.compile(
    r"(?<![\w.])(?P<num>\d+(?:\.\d+)?)\s?(?P<unit>%|percent|ms|milliseconds?|s|secs?|"
    r"seconds?|mins?|minutes?|h|hrs?|hours?|d|days?|weeks?|months?|years?|[kmgt]i?b|bytes?)"
    r"(?!\w)(?!\.\w)",
    re.IGNORECASE,
)
_UNITS: dict[str, tuple[str, float]] = {
    "%": ("percent", 1.0),
    "percent": ("percent", 1.0),
    "ms": ("time", 0.001),
    "millisecond": ("time", 0.001),
    "s": ("time", 1.0),
    "sec": ("time", 1.0),
    "second": ("time", 1.0),
    "min": ("time", 60.0),
    "minute": ("time", 60.0),
    "h": ("time", 3600.0),
    "hr": ("time", 3600.0),
    "hour": ("time", 3600.0),
    "d": ("time", 86400.0),
    "day": ("time", 86400.0),
    "week": ("time", 604800.0),
    "month": ("time", 2592000.0),
    "year": ("time", 31536000.0),
    "byte": ("size", 1.0),
}
_SIZE_PREFIX = {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
# Where a setting's clause ends, and the words that say a value is set rather than what
# ("bring the peak lr down to 1e-4" sets the peak lr).
_SETTING_CLAUSE_RE = re.compile(r"[,;:()\[\]]|(?<=[\w)\]\"'`])[.!?](?=\s|$)|\s[-–—]\s|\band\b")
_SETTING_WORDS: frozenset[str] = _wordset(
    """
    set sets setting live lives go goes going went up down raise raised raising lower lowered
    increase increased decrease decreased bump bumped change changed new value values stay
    stays keep kept now default defaults get gets got put moved move make made expire expires
    expiring expiry every each old current currently than least most under over above below
    bring brought stretch stretched
    """
)
_SETTING_SUBJECT_WORDS = 4
_ASIDE_RE = re.compile(r"\([^()]*\)")


def _unit(unit: str) -> tuple[str, float] | None:
    low = unit.lower()
    if low in _UNITS:
        return _UNITS[low]
    if low.endswith("s") and low[:-1] in _UNITS:
        return _UNITS[low[:-1]]
    if low[-1] == "b" and low[0] in _SIZE_PREFIX:
        # (KB and KiB are close enough to tell two settings apart.)
        return "size", _SIZE_PREFIX[low[0]]
    return None


def _clause_of(text: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the clause around `text[start:end]` (a value and what it is about)."""
    begin = max((m.end() for m in _SETTING_CLAUSE_RE.finditer(text, 0, start)), default=0)
    after = _SETTING_CLAUSE_RE.search(text, end)
    return begin, after.start() if after is not None else len(text)


def _setting_words(words: list[str], skip: frozenset[str] = frozenset()) -> list[str]:
    """The stems of the content words that can name what a value is about."""
    return [
        _stem(w)
        for w in words
        if w not in _SUBJECT_STOP
        and w not in _SETTING_WORDS
        and w not in skip
        and not w[0].isdigit()
    ]


@lru_cache(maxsize=65536)
def _settings(text: str) -> tuple[Stance, ...]:
    """Settings in `text`: each quantity with a unit, about the words of its clause.

    "Access tokens live 15 minutes" and "New value: 60 minutes for access tokens" are both
    about {access, token}; the subject is the clause's nearest content words before the
    quantity, or after it when too few come before.
    """
    found: list[Stance] = []
    if not any(c.isdigit() for c in text):
        return ()
    # An aside does not end the clause: "Access tokens (JWT, HS256) live 15 minutes".
    plain = _ASIDE_RE.sub(lambda m: " " * len(m.group()), text)
    for match in _QUANTITY_RE.finditer(text):
        unit = _unit(match.group("unit"))
        if unit is None:
            continue
        dimension, scale = unit
        around = plain if plain[match.start()] != " " else text
        start, end = _clause_of(around, match.start(), match.end())
        before = _setting_words(_words(around[start : match.start()]))[-_SETTING_SUBJECT_WORDS:]
        if len(before) < 2:
            before += _setting_words(_words(around[match.end() : end]))[
                : _SETTING_SUBJECT_WORDS - len(before)
            ]
        if len(before) < 2 and around[:start].rstrip().endswith(":"):
            # "Payment provider HTTP calls: 10s": the label names what is set.
            label = around[: around.rfind(":", 0, start)]
            cut = max((m.end() for m in _SETTING_CLAUSE_RE.finditer(label)), default=0)
            before = _setting_words(_words(label[cut:]))[-_SETTING_SUBJECT_WORDS:] + before
        if len(before) < 2:
            continue
        value = (dimension, round(float(match.group("num")) * scale, 6))
        found.append(Stance(frozenset(before), 1, value=value))
    return tuple(dict.fromkeys(found))


# A number standing alone: not part of a name, a path, a version, a time of day or a date
# (and one in scientific notation, a learning rate's "3e-4").
_COUNT_RE = re.compile(
    r"(?<![\w.$#/:@-])(?P<num>\d+(?:\.\d+)?(?:e-?\d+)?)(?![\w%/:@-]|\.\d)", re.IGNORECASE
)
_YEAR_RE = re.compile(r"(?:19|20)\d\d")
# Words after a number that count nothing of their own ("5 times", "3 more"), or only say
# the unit of a length a bare number leaves implied ("120 characters").
_NOT_COUNTED = _wordset(
    "times time more less fewer other others total characters chars columns cols"
)
COUNT = "count"
# A count written as a word ("one approval", "two approvals"), up to twelve; only before the
# word it counts, and not as a pronoun ("one of them", "the one we use", "no one").
_SPELLED = "one two three four five six seven eight nine ten eleven twelve"
_NUMBER_WORDS = {word: n for n, word in enumerate(_SPELLED.split(), 1)}
_COUNT_WORD_RE = re.compile(
    r"(?<![\w'-])(?P<num>" + "|".join(_NUMBER_WORDS) + r")(?=\s+[a-z])"
    r"(?!\s+(?:of|or|and|more|another|by|to|in|at|way|off|after|thing|day|point)\b)",
    re.IGNORECASE,
)
_NOT_A_COUNT_BEFORE = _wordset("the this that no any each every which some someone a an")


def _count_value(num: str) -> float:
    """The number, with "3.10" and "3.1" kept apart (a version is not a decimal)."""
    if "e" in num.lower():
        return float(num)  # "3e-4", a learning rate
    whole, _, part = num.partition(".")
    return float(whole) + (float(f"0.{part}") + len(part)) / 1000 if part else float(whole)


@lru_cache(maxsize=65536)
def _counts(text: str) -> tuple[Stance, ...]:
    """Settings given as a bare number: "max line length is 100", "3 retries for the invoice
    actor", "python 3.10 as the minimum", or as a word before what it counts ("a pull request
    needs two approvals").

    The clause's content words around the number make the subject, what is counted
    ("retries") among them. Two counts are one setting only when one
    subject holds the whole of the other (`opposing_subjects`): "staging runs 2 replicas"
    and "prod runs 4 replicas" are two. Years and numbers with a unit (`_settings`) are not
    counts.
    """
    spelled = [
        m
        for m in _COUNT_WORD_RE.finditer(text)
        if not (before := _words(text[max(0, m.start() - 12) : m.start()]))
        or before[-1] not in _NOT_A_COUNT_BEFORE
    ]
    if not spelled and not any(c.isdigit() for c in text):
        return ()
    found: list[Stance] = []
    plain = _ASIDE_RE.sub(lambda m: " " * len(m.group()), text)
    with_unit = {m.start() for m in _QUANTITY_RE.finditer(text) if _unit(m.group("unit"))}
    for match in [*_COUNT_RE.finditer(text), *spelled]:
        num = match.group("num")
        if match.start() in with_unit or _YEAR_RE.fullmatch(num):
            continue
        around = plain if plain[match.start()] != " " else text
        start, end = _clause_of(around, match.start(), match.end())
        words = _setting_words(_words(around[start : match.start()]), _NOT_COUNTED)
        words = words[-_SETTING_SUBJECT_WORDS:]
        after = _words(around[match.end() : end])
        words += _setting_words(after, _NOT_COUNTED)[:_SETTING_SUBJECT_WORDS]
        subject = frozenset(words)
        if len(subject) == 1 and _ACRONYM_RE.search(around[start : match.start()]):
            pass  # "The MSRV goes up to 1.74": the acronym says what (`_same_count`)
        elif len(subject) < 2:
            continue
        # What is counted: the word right after the number ("3 retries"), if it names a thing
        counted = _setting_words(after[:1], _NOT_COUNTED)
        word = _NUMBER_WORDS.get(num.lower())
        if word is not None and not counted:
            continue  # ("two of", "one, maybe"): a spelled count names what it counts
        value = float(word) if word is not None else _count_value(num)
        dimension = f"{COUNT}:{counted[0] if counted else ''}"
        found.append(Stance(subject, 1, value=(dimension, value)))
    return tuple(dict.fromkeys(found))


# How often something happens, said in one word, and its period in seconds.
_PERIODS = {
    "hourly": 3_600,
    "daily": 86_400,
    "nightly": 86_400,
    "weekly": 604_800,
    "biweekly": 1_209_600,
    "fortnightly": 1_209_600,
    "monthly": 2_592_000,
    "quarterly": 7_776_000,
    "yearly": 31_536_000,
    "annually": 31_536_000,
}
_PERIOD_RE = re.compile(r"(?<![\w-])(?P<word>" + "|".join(_PERIODS) + r")(?![\w-])", re.IGNORECASE)
# Words after a period word that leave it the clause's value ("refreshed weekly now"); any
# other word makes it an attribute of a thing ("the daily job", "weekly reports").
_AFTER_A_PERIOD = _wordset("now instead anymore again too also then at on in from by for until")
PERIOD = "period"


@lru_cache(maxsize=65536)
def _schedules(text: str) -> tuple[Stance, ...]:
    """How often something is done, as a setting: "The staging database is refreshed weekly."
    and "Staging DB refresh is nightly now." give one subject two periods.

    Only a period word that ends its clause or is followed by "now", "instead", a time ("at
    02:00") and the like; "the daily export job" names a job, not a schedule. The subject is
    the clause's content words before it, matched as other settings are (`_same_setting`).
    """
    if not _PERIOD_RE.search(text):
        return ()
    found: list[Stance] = []
    for match in _PERIOD_RE.finditer(text):
        start, end = _clause_of(text, match.start(), match.end())
        after = _words(text[match.end() : end])
        if after and after[0] not in _AFTER_A_PERIOD:
            continue
        before = _setting_words(_words(text[start : match.start()]))[-_SETTING_SUBJECT_WORDS:]
        if len(before) < 2:
            continue
        value = (PERIOD, float(_PERIODS[match.group("word").lower()]))
        found.append(Stance(frozenset(before), 1, value=value))
    return tuple(dict.fromkeys(found))


def sets_a_value(text: str) -> bool:
    """Whether `text` sets a quantity of something ("Loki retention goes up to 30 days"): a
    later statement of another value for it changes the setting (see `opposing_subjects`)."""
    return bool(_settings(text) or _schedules(text))


def subjects_match(a: Stance, b: Stance) -> bool:
    """Whether two stances are about the same thing.

    Explicit stances match when their subjects are equal, overlap by two thirds (Jaccard), or
    one subject of two or more words lies inside the other with half the words in common.
    A narrower scope is a different subject: "use Redis" and "don't use Redis for sessions"
    do not match. A weak imperative needs 75% overlap.
    """
    if a.subject == b.subject:
        return True
    inter = len(a.subject & b.subject)
    if not inter:
        return False
    jaccard = inter / len(a.subject | b.subject)
    if not (a.explicit and b.explicit):
        return jaccard >= 0.75
    if jaccard >= 2 / 3:
        return True
    smaller = min(len(a.subject), len(b.subject))
    return inter == smaller and smaller >= 2 and jaccard >= 0.5


# An acronym of three to six capitals ("MSRV", "TTL"), which a one-word subject may be.
_ACRONYM_RE = re.compile(r"(?<![\w./-])[A-Z]{3,6}(?![\w./-])")


def _spells(acronym: frozenset[str], words: frozenset[str]) -> bool:
    """Whether a one-word subject is the acronym of the other's words: "msrv" and
    {minimum, support, rust, version} (their first letters, in any order)."""
    if len(acronym) != 1:
        return False
    short = next(iter(acronym))
    return (
        short.isalpha()
        and len(short) == len(words) >= 3
        and sorted(short) == sorted(w[0] for w in words)
    )


def stance_keys(stance: Stance) -> list[str]:
    """The keys an index of stances files `stance` under: its subject's words, and the
    letters an acronym of them would hold ("#mrsv" for {minimum, support, rust, version} and
    for {msrv}), so a statement naming the acronym finds the one spelling it out."""
    keys = list(stance.subject)
    if 3 <= len(stance.subject) <= 6:
        keys.append("#" + "".join(sorted(w[0] for w in stance.subject)))
    elif len(stance.subject) == 1 and 3 <= len(keys[0]) <= 6 and keys[0].isalpha():
        keys.append("#" + "".join(sorted(keys[0])))
    return keys


def _same_count(x: str, y: str, a: frozenset[str], b: frozenset[str]) -> bool:
    """Two counts (dimensions `x`, `y`, subjects `a`, `b`) are of one thing: what each
    counts is the same where both name it ("2 replicas", "4 workers per replica" are not),
    and one subject holds the whole of the other (two words at least). A bare number says
    less than a unit does, so the scope must not differ."""
    counted_x, counted_y = x[len(COUNT) + 1 :], y[len(COUNT) + 1 :]
    if counted_x and counted_y and counted_x != counted_y:
        return False
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    # (a one-word subject is an acronym, `_counts`: the same one, or spelled out)
    return (len(small) >= 2 and small <= large) or small == large or _spells(small, large)


def _same_setting(a: frozenset[str], b: frozenset[str]) -> bool:
    """Two settings' subjects name one thing: two words in common, most of the shorter."""
    shared = len(a & b)
    return shared >= 2 and shared * 3 >= 2 * min(len(a), len(b))


def _swapped(sa: tuple[Stance, ...], sb: tuple[Stance, ...]) -> str | None:
    """The name one side chose and the other turns down, in the same frame: "Use Gunicorn to
    serve the Django app." against "Serve the Django app with uvicorn, not Gunicorn."."""
    for no in sb:
        if no.polarity > 0 or no.value is not None or len(no.subject) != 1:
            continue
        (name,) = no.subject
        for yes in sa:
            if yes.polarity < 0 or yes.value is not None or name not in yes.subject:
                continue
            frame = yes.subject - no.subject
            if len(frame) < 2:
                continue
            for other in sb:
                rest = other.subject - frame
                if (
                    other.polarity > 0
                    and other.value is None
                    and name not in other.subject
                    and len(frame & other.subject) * 3 >= 2 * len(frame)
                    and len(rest) == 1
                ):
                    return yes.key
    return None


def opposing_subjects(a: MemoryItem, b: MemoryItem) -> list[str]:
    """Subject keys on which `a` and `b` take opposite stances (empty when they agree)."""
    found: list[str] = []
    sa, sb = item_stances(a), item_stances(b)
    if not sa or not sb:
        return found
    swap = _swapped(sa, sb) or _swapped(sb, sa)
    if swap is not None:
        found.append(swap)
    for x in sa:
        for y in sb:
            if x.value is not None or y.value is not None:
                # A setting changed: same dimension, another size, about the same thing.
                if (
                    x.value is not None
                    and y.value is not None
                    and x.value[1] != y.value[1]
                    and (
                        _same_count(x.value[0], y.value[0], x.subject, y.subject)
                        if x.value[0].startswith(COUNT) and y.value[0].startswith(COUNT)
                        else x.value[0] == y.value[0] and _same_setting(x.subject, y.subject)
                    )
                    and x.key not in found
                ):
                    found.append(x.key)
                continue
            if x.polarity == y.polarity or not (x.explicit or y.explicit):
                continue
            if subjects_match(x, y):
                key = x.key if x.explicit else y.key
                if key not in found:
                    found.append(key)
    return found


def contradicts(a: MemoryItem, b: MemoryItem) -> bool:
    """True when `a` and `b` take opposite stances on the same subject.

    "use X" vs "don't use X", "X instead of Y" vs "Y instead of X", "async/await over .then()
    chains" vs "prefer .then() chains to async/await". Items that merely share words, agree,
    or talk about different subjects do not contradict. An item never contradicts itself.
    """
    if a.id == b.id and a.content == b.content:
        return False
    return bool(opposing_subjects(a, b))
