"""Pattern tables of the offline extractor: signals, scope filter, hedges and topics.

This module owns the vocabulary of rule-based extraction and nothing else: which phrases
signal a directive, preference, decision, convention, bug fix or lesson (seed 001 section
2.1, seed 003's lesson shape, seed 004's pattern-matcher fallback), which phrases mark
feature-specific, story-level or procedural chatter that seed 001's "Memory Scope" keeps out,
which words hedge a statement, and the topic table that gives items their titles and tags.
Every pattern that runs on many sentences sits behind a gate of anchor words (see `Rule`), so
a 100 KB transcript is judged in milliseconds. `extract_items.py` applies the tables.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from app.core.models import Category

__all__ = [
    "ACK",
    "ALWAYS_NEVER",
    "ARCH_SUBJECT",
    "BUG",
    "CONVENTION_STRONG",
    "CONVENTION_VERB",
    "DECISION",
    "DECISION_USER",
    "DESCRIPTIVE",
    "EXPERIENCED",
    "FEATURE",
    "FIX",
    "GENERAL",
    "GENERIC",
    "HEDGE_STRONG",
    "HEDGE_WEAK",
    "IMPERATIVE_OPENERS",
    "INJECTION",
    "LEAD_FAMILIES",
    "LESSON",
    "LOCAL",
    "NAMED_DESIGN",
    "PREFERENCE",
    "PREFERENCE_USER",
    "PROCEDURAL",
    "REASON",
    "REASON_NEXT",
    "RECURRENCE",
    "REJECT",
    "ROOT",
    "SCOPE",
    "SECTION_CATEGORIES",
    "SIGNAL_GATE",
    "SIGNAL_INDEX",
    "STATUS",
    "STORY",
    "STORY_SECTION",
    "STRONG",
    "STRONG_USER",
    "SYMPTOM",
    "TASK_REQUEST",
    "TECH_TOKEN",
    "TICKET",
    "TOPICS",
    "TOPIC_INDEX",
    "TRADEOFF",
    "TRADEOFF_NEXT",
    "UI_ELEMENT",
    "UI_PRESENTATION",
    "AnchorIndex",
    "Rule",
    "Topic",
    "all_rules",
    "first",
    "first_open",
    "gate_pattern",
    "topics_in",
]

_FLAGS = re.IGNORECASE | re.VERBOSE


def _rx(pattern: str, flags: int = _FLAGS) -> re.Pattern[str]:
    return re.compile(pattern, flags)


_Trie = dict[str, "_Trie"]


def _trie(words: Iterable[str]) -> str:
    """One regex alternation shaped as a prefix tree: `re` then rejects most text in one step
    per character instead of trying every word at every position."""
    root: _Trie = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: _Trie) -> str:
        ends = "" in node
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if ends:
            body = f"(?:{body})?"
        return body

    return emit(root)


def gate_pattern(anchors: Iterable[str]) -> re.Pattern[str]:
    """A pattern that finds any anchor in lower-cased text; anchors starting with a letter or
    digit must start a word, others ("#", "_case") may start anywhere."""
    words = sorted({a for a in anchors if a[:1].isalnum()})
    others = sorted({a for a in anchors if a and not a[:1].isalnum()})
    parts = []
    if words:
        parts.append(r"\b" + _trie(words))
    if others:
        parts.append(_trie(others))
    return re.compile("|".join(parts) if parts else "(?!)")


@dataclass(frozen=True, slots=True, eq=False)
class Rule:
    """A pattern behind a cheap gate.

    Python's `re` tries every branch of an alternation at every position, which costs tens of
    microseconds per sentence. `anchors` are lower-case words or phrases of which every match
    must contain at least one (at the start of a word); they compile into one prefix-tree
    `gate` that rejects a sentence in about a microsecond. Tests check over real transcripts
    that no gate hides a match. A rule without anchors always runs its pattern.
    """

    pattern: re.Pattern[str]
    anchors: tuple[str, ...] = ()
    gate: re.Pattern[str] | None = None

    @classmethod
    def of(cls, pattern: str, *anchors: str, flags: int = _FLAGS) -> Rule:
        """Compile `pattern` (verbose, case-insensitive by default) with its anchors."""
        return cls(_rx(pattern, flags), anchors, gate_pattern(anchors) if anchors else None)

    def opens(self, low: str) -> bool:
        """Whether the lower-cased text may match at all."""
        return self.gate is None or self.gate.search(low) is not None

    def search(self, text: str, low: str) -> re.Match[str] | None:
        """`pattern.search(text)` when the gate lets `low` (`text.lower()`) through."""
        return self.pattern.search(text) if self.opens(low) else None


def first(rules: tuple[Rule, ...], text: str, low: str) -> re.Match[str] | None:
    """The first match of the first rule that matches, or None."""
    for rule in rules:
        found = rule.search(text, low)
        if found is not None:
            return found
    return None


class AnchorIndex:
    """Which of many rules can match a text, found in one scan.

    The anchors of all rules compile into one prefix-tree pattern inside a lookahead, so a
    single `finditer` reports every anchor at every word start (overlapping ones included);
    an anchor found also stands for the shorter anchors it begins with. Rules without anchors
    are always open.
    """

    def __init__(self, rules: Iterable[Rule]) -> None:
        """Index the anchors of `rules`."""
        rules = tuple(rules)
        self.rules: frozenset[Rule] = frozenset(rules)
        self._always: frozenset[Rule] = frozenset(r for r in rules if not r.anchors)
        by_anchor: dict[str, set[Rule]] = {}
        for rule in rules:
            for anchor in rule.anchors:
                by_anchor.setdefault(anchor, set()).add(rule)
        # An anchor found also means every anchor that is a prefix of it was found.
        self._rules: dict[str, frozenset[Rule]] = {
            anchor: frozenset().union(*(by_anchor[a] for a in by_anchor if anchor.startswith(a)))
            for anchor in by_anchor
        }
        words = sorted(a for a in by_anchor if a[:1].isalnum())
        others = sorted(a for a in by_anchor if not a[:1].isalnum())
        parts = ([r"\b" + _trie(words)] if words else []) + ([_trie(others)] if others else [])
        self._scan = re.compile("(?=(" + "|".join(parts or ["(?!)"]) + "))")

    def open_rules(self, low: str) -> frozenset[Rule]:
        """The rules whose gate opens on the lower-cased text."""
        found: set[Rule] = set(self._always)
        for match in self._scan.finditer(low):
            found |= self._rules[match.group(1)]
        return frozenset(found)


def first_open(rules: tuple[Rule, ...], text: str, opened: frozenset[Rule]) -> re.Match[str] | None:
    """Like `first`, for rules already known to be open (from an `AnchorIndex`)."""
    for rule in rules:
        if rule in opened:
            found = rule.pattern.search(text)
            if found is not None:
                return found
    return None


_R = Rule.of


def _phrases(firsts: Iterable[str], seconds: Iterable[str]) -> tuple[str, ...]:
    """Every "first second" phrase: anchors for patterns that need two words together."""
    tail = tuple(seconds)
    return tuple(f"{a} {b}" for a in firsts for b in tail)


# --------------------------------------------------------------------------- signal families

# What "never" takes when it tells the speaker's experience, not a rule: "never done a big
# tauri app", "never used Kotlin", "never seen that".
EXPERIENCED: Final = "been|had|seen|done|tried|used|worked|written|heard|gone"
# "always"/"never" used as a rule: opening a clause, after a modal or a pronoun, "from now on",
# a clause-opening "don't", or "must".
STRONG: Final = (
    _R(
        rf"""(?:^|[,;:(—–]\s*|\b(?:and|but|so|please|then|also|just|to)\s+)(?:always|never)\s+
           (?!(?:{EXPERIENCED}|mind)\b)\w""",
        "always",
        "never",
    ),
    _R(
        r"""\b(?:should|must|shall|will|'ll|need\ to|needs\ to|have\ to|has\ to|ought\ to
           |want\ (?:you|us)\ to|i|we|you|they)\s+(?:always|never)\b""",
        "always",
        "never",
    ),
    _R(
        r"""\b(?:from\ now\ on|going\ forward|from\ here\ on|in\ (?:the\ )?future|at\ all\ times
           |under\ no\ circumstances|no\ exceptions)\b""",
        "from now on",
        "going forward",
        "from here on",
        "in future",
        "in the future",
        "at all times",
        "under no circumstances",
        "no exceptions",
    ),
    _R(
        r"(?:^|[,;:]\s*|\bplease\s+|\band\s+)(?:do\ not|don'?t|avoid|stop\ using)\s+\w",
        "do not",
        "don't",
        "dont",
        "avoid",
        "stop using",
    ),
)
# An agent's "must" usually states a requirement of the task at hand ("the SEARCH section must
# match"); a user's "must" sets a rule ("the must-fix list" names a list).
STRONG_USER: Final = (_R(r"\bmust(?:n'?t)?\b(?!-)", "must"),)
ALWAYS_NEVER: Final = _R(r"\b(?:always|never)\b", "always", "never")
# "is always recomputed", "never used", "always returns": how code behaves, not a rule.
DESCRIPTIVE: Final = (
    _R(
        r"""\b(?:is|are|was|were|be|been|being|it'?s|that'?s|isn'?t|aren'?t|now|still|also)
           \s+(?:always|never)\b""",
        "always",
        "never",
    ),
    _R(
        r"""\b(?:always|never)\s+(?:(?!(?:need|embed|feed|seed|speed|proceed|succeed|exceed)\b)
           \w+ed|been|had|done|tried|written|heard|gone|gets?|got|happens?|works?|returns?
           |includes?|appears?|shows?|runs?|fires?|calls?|triggers?|changes?|stays?|renders?
           |displays?|recomputes?)\b""",
        "always",
        "never",
    ),
    # "never touches", "always uses": a third-person verb describes behaviour.
    _R(r"\b(?:always|never)\s+\w+(?<!ss)(?<!us)(?<!is)s\b", "always", "never"),
)
# Sentence-opening verbs that make an imperative preference ("Use pathlib ...").
IMPERATIVE_OPENERS: Final = frozenset(
    {
        "use",
        "keep",
        "wrap",
        "prefer",
        "name",
        "pin",
        "lock",
        "catch",
        "validate",
        "favor",
        "favour",
        "ensure",
    }
)
PREFERENCE: Final = (
    # (not a name: "prefers-color-scheme", "prefers_reduced_motion")
    _R(r"\bprefer(?:s|red|ably|ence)?\b(?![-_]\w)", "prefer"),
    _R(
        r"""\b(?:use|using|choose|pick|stick\ (?:with|to)|switch\ to|write|keep|wrap)\b
           [^.;]{1,60}?\b(?:instead\ of|rather\ than|over|in\ favou?r\ of)\b""",
        "instead",
        "rather than",
        "over ",
        "in favor",
        "in favour",
    ),
    _R(
        r"""\b(?:i|we)\s+(?:really\s+|strongly\s+|usually\s+)?(?:like|want|favou?r|love|hate)
           \s+(?:to\s+)?(?:use|using|keep|write|see)\b""",
        "i like",
        "we like",
        "i want",
        "we want",
        "i really",
        "we really",
        "i strongly",
        "we strongly",
        "i usually",
        "we usually",
        "i love",
        "we love",
        "i hate",
        "we hate",
        "i favor",
        "we favor",
        "i favour",
        "we favour",
    ),
    _R(
        r"\bwe\s+(?:use|are\ using|rely\ on|standardi[sz]e\ on|stick\ to|follow)\b",
        "we use",
        "we are using",
        "we rely",
        "we standardi",
        "we stick",
        "we follow",
    ),
    _R(
        r"\b(?:i'?d|i\ would|we'?d|we\ would)\s+(?:recommend|suggest|advise)\b"
        r"|\brecommend(?:ed|s)?\b",
        "recommend",
        "suggest",
        "advise",
    ),
    _R(
        r"""\b(?:is|are)\s+(?:the\s+)?(?:right|correct|recommended|preferred|best|idiomatic)
           \s+(?:approach|way|pattern|choice|practice|fix|tool)\b""",
        *_phrases(
            ("is", "are", "is the", "are the"),
            ("right", "correct", "recommended", "preferred", "best", "idiomatic"),
        ),
    ),
    _R(
        r"""\b(?:we|you)\s+should\s+(?:always\s+|never\s+|not\s+)?(?:use|prefer|keep|avoid
           |stick|wrap|pin|run|write|put|name|fall\ back|go\ through|call|catch|raise|log
           |validate)\b""",
        "we should",
        "you should",
    ),
)
# From an agent these are plans or steps ("Use `useEffect` to ...", "We'll keep `float`"), not
# preferences; from the user they are. "We keep getting reviews …" says what happens again
# and again ("keep" before a verb's -ing form), not what the team keeps.
PREFERENCE_USER: Final = (
    _R(r"\binstead\b", "instead"),
    _R(
        r"""\b(?:let'?s|we(?:'ll|\ will|\ should)?|please)\s+(?:use|keep\ using|stick\ (?:with|to)
           |standardi[sz]e\ on|rely\ on|adopt|keep(?!\s+(?!\w*thing\b|string\b)\w+ing\b))\b""",
        *_phrases(
            ("let's", "lets", "we'll", "we will", "we should", "we", "please"),
            ("use", "keep", "stick", "standardi", "rely", "adopt"),
        ),
    ),
    # Anchored at the start, so it needs no gate; the signal gate checks the opening word.
    _R(
        r"^(?:please\s+)?(?:use|keep|wrap|prefer|name|pin|lock|catch|validate|favou?r|ensure"
        r"|make\ sure)\b"
    ),
)
DECISION: Final = (
    _R(
        r"""\b(?:we(?:'ve|\ have)?|i(?:'ve|\ have)?|team)\s+(?:decided|chose|picked|selected
           |opted|settled|agreed|went\ with|standardi[sz]ed)\b""",
        *_phrases(
            ("we", "we've", "we have", "i", "i've", "i have", "team"),
            (
                "decided",
                "chose",
                "picked",
                "selected",
                "opted",
                "settled",
                "agreed",
                "went with",
                "standardi",
            ),
        ),
    ),
    _R(r"\b(?:decided|decision)\s+(?:to|on|is|was|that|:)", "decided", "decision"),
    # "Celery is our choice for background jobs"
    _R(r"\b(?:is|was|are)\s+our\s+(?:choice|pick)\b", "our choice", "our pick"),
    _R(
        # ("Product signed off on 10 MB per file", "we agreed on cursor pagination")
        r"\b(?:chose|chosen|opted\ for|settled\ on|adopted|went\ with|signed\ off\ on"
        r"|agreed\ (?:on|to))\b",
        "chose",
        "opted for",
        "settled on",
        "adopted",
        "went with",
        "signed off on",
        "agreed on",
        "agreed to",
    ),
    # "we decide to take Backblaze B2", "we choose Postgres": the present tense, as many
    # write it.
    _R(
        r"""\bwe\s+(?:decide\s+(?:to|on|for)|choose|pick)\s+\w
         # "We take Radau.", "So we take Rodas5P for the kinetics": a pick, as many write it
         # ("we take care", "a look", "the last 3 days", "12 seconds", "it" … are not).
         | \bwe\s+take\s+(?!(?:care|a|an|turns|the\ risk|over|off|out|it|them|that|this|these
           |those|note|time|longer|ownership|responsibility|notes|forever|ages|days|hours|the
           |\d+)\b)[\w`]""",
        "we decide",
        "we choose",
        "we pick",
        "we take",
    ),
)
# An agent's "let's go with X" proposes; the user's decides.
DECISION_USER: Final = (
    _R(
        r"""\b(?:let'?s|we(?:'ll|\ will|\ are\ going\ to|'re\ going\ to))\s+(?:go\ with|use
           |adopt|switch\ to|move\ to|stick\ with)\b""",
        *_phrases(
            ("let's", "lets", "we'll", "we will", "we are going to", "we're going to"),
            ("go with", "use", "adopt", "switch to", "move to", "stick with"),
        ),
    ),
    _R(r"\bgo(?:ing)?\ with\b", "go with", "going with"),
    # A value the user sets: "set retention for the app logs to 14 days", "retention goes up
    # to 30 days", "new value: 60 minutes for access tokens". A later one changes the earlier
    # (settings of the same thing with another size; app/core/similarity.py).
    _R(
        r"""^(?:(?:set|raise|lower|increase|decrease|bump|reduce|change)\b[^.]{0,60}?\bto
           |[^.]{0,60}?\bgoes\ (?:up|down)\ to|new\ (?:value|limit|default|timeout)\b[^.]{0,20}?)
           \s+\d+(?:\.\d+)?\s?(?:%|ms|s|secs?|seconds?|mins?|minutes?|h|hours?|d|days?|weeks?
           |months?|[kmgt]i?b)\b""",
        # (Anchored on "to <digit>": "set", "change" alone open far too many sentences.)
        *(f"to {digit}" for digit in "0123456789"),
        "new value",
        "new limit",
        "new default",
        "new timeout",
    ),
)
CONVENTION_STRONG: Final = (
    _R(
        r"""\b(?:camelCase|snake_case|PascalCase|kebab-case|UPPER_SNAKE(?:_CASE)?
           |SCREAMING_SNAKE_CASE|dash-case)\b""",
        "camelcase",
        "snake_case",
        "pascalcase",
        "kebab-case",
        "upper_snake",
        "screaming_snake",
        "dash-case",
    ),
    _R(
        r"""\bconventions?\b | \bstyle\ guide\b | \bcode\ style\b | \bline\ length\b
         | \bconventional\ commits\b | \bsemver\b | \bISO[\ -]?8601\b""",
        "convention",
        "style guide",
        "code style",
        "line length",
        "semver",
        "iso",
    ),
    _R(r"\bnaming\ (?:convention|scheme|style|rule)s?\b|\b(?:are|is)\ named\b", "naming", "named"),
    _R(r"\bmirror(?:s|ed|ing)?\b", "mirror"),
    _R(
        r"""\bfollow(?:s)?\ (?:the\ |our\ )?(?:[\w-]+\ )?(?:conventions?|style|format|naming
           |PEP\ ?8|standard)\b""",
        "style",
        "format",
        "naming",
        "pep",
        "standard",
        "convention",
    ),
    _R(
        r"""\b(?:commit\ messages?|branch\ names?|file\ names?|folder\ names?|module\ names?
           |class\ names?|directory\ (?:layout|structure)|project\ (?:layout|structure)
           |folder\ structure|file\ layout)\b""",
        "commit message",
        "branch name",
        "file name",
        "folder name",
        "module name",
        "class name",
        "directory layout",
        "directory structure",
        "project layout",
        "project structure",
        "folder structure",
        "file layout",
    ),
)
ARCH_SUBJECT: Final = _rx(r"""
      \b(?:architecture|architectural|layer(?:s|ing)?|boundar(?:y|ies)|source\ of\ truth
        |single\ source|state\ management|event[-\ ]sourcing|cqrs|monolith|micro-?services?
        |message\ (?:queue|bus)|event\ bus|pub/?sub|outbox|api\ gateway|database|data\ ?store
        |storage\ layer|persistence\ layer|derived\ data|dependency\ injection
        |composition\ root|sam\ pattern|mvc|mvvm|repository\ pattern|hexagonal
        |clean\ architecture|goes\ through|go\ through|transactions?)\b
    | \bimports?\s+(?:\w+\s+){0,2}(?:modules?|directly|from)\b
    | \b(?:ui|gui|frontend|backend|core|services?|engines?|widgets?)\s+(?:never|must|should
        |only|always)\b
""")
BUG: Final = (
    _R(
        r"""\broot[-\ ]?cause\b | \bcaused\ by\b | \bthe\ (?:culprit|cause)\ (?:is|was)\b
         | \b(?:the|our|a)\ (?:fix|solution|workaround|remedy)\ (?:is|was)\b
         | ^fix(?:ed)?\s*:
         | \b(?:fixed|resolved|solved)\ (?:it\ |this\ |that\ |them\ |the\ \w+\ )?by\b""",
        "root",
        "caused by",
        "culprit",
        "cause is",
        "cause was",
        "fix:",
        "fix :",
        "fixed:",
        "fixed by",
        "fixed it",
        "fixed this",
        "fixed that",
        "fixed them",
        "fixed the",
        *_phrases(("the", "our", "a"), ("fix", "solution", "workaround", "remedy")),
        "resolved",
        "solved",
    ),
    _R(
        r"""\b(?:failing|failed|crashing|crashed|hanging|hung|breaking|broke|flaky|flickering
           |leaking|timing\ out|timed\ out)\b[^.]{0,80}\bbecause\b""",
        "failing",
        "failed",
        "crashing",
        "crashed",
        "hanging",
        "hung",
        "breaking",
        "broke",
        "flaky",
        "flickering",
        "leaking",
        "timing out",
        "timed out",
    ),
    _R(
        r"""\b(?:bug|issue|problem|crash|failure|error|regression|leak|race(?:\ condition)?
           |deadlock)s?\ (?:was|were|is|came|comes)\ (?:that|because|due\ to|caused|from)\b""",
        *_phrases(
            ("was", "were", "is", "came", "comes"), ("that", "because", "due", "caused", "from")
        ),
    ),
)
# Where the root cause starts inside a sentence (the symptom may precede it).
ROOT: Final = _R(
    r"""
      \b(?:the\ )?root[-\ ]?cause\ of\ (?P<symptom>[^:]{3,80}):\s*
    | \b(?:the\ )?root[-\ ]?cause\s*(?:is|was|:)?(?:\s+that)?\s*
    | \b(?:was|were|is|are)?\s*caused\ by\s+
    | \bturn(?:s|ed)\ out\s+(?:that\s+|to\ be\s+)?
    | \bthe\ (?:culprit|cause)\ (?:is|was)\s+
    | \bbecause\s+(?:of\s+)?
""",
    "root",
    "caused by",
    "turns out",
    "turned out",
    "culprit",
    "cause is",
    "cause was",
    "because",
)
FIX: Final = _R(
    r"""
      \b(?:the|our|a)\ (?:fix|solution|workaround|remedy)\ (?:is|was)\s*(?:to\s+)?
    | (?:^|\.\s+)fix(?:ed)?\s*:\s*
    | \b(?:we\ |i\ )?(?:fixed|resolved|solved)\ (?:it\ |this\ |that\ |them\ )?by\s+
""",
    "fix",
    "solution",
    "workaround",
    "remedy",
    "resolved",
    "solved",
)
SYMPTOM: Final = _R(
    r"""
    \b(?:crash(?:es|ed|ing)?|hang(?:s|ing)?|hung|freez(?:e|es|ing)|froze|fail(?:s|ed|ing
      |ures?)?|flak(?:y|iness)|flicker(?:s|ing)?|stale|time[sd]?\ ?out|timeouts?
      |deadlock(?:s|ed)?|leak(?:s|ed|ing)?|race\ condition|corrupt(?:s|ed|ion)?|broke|broken
      |errors?|exceptions?|wrong|duplicate[sd]?|missing|lost|regression|not\ working
      |doesn'?t\ work|does\ not\ work|stuck|blank|locked|truncated|waited\ forever)\b
""",
    "crash",
    "hang",
    "hung",
    "freez",
    "froze",
    "fail",
    "flak",
    "flicker",
    "stale",
    "time",
    "deadlock",
    "leak",
    "race condition",
    "corrupt",
    "broke",
    "error",
    "exception",
    "wrong",
    "duplicate",
    "missing",
    "lost",
    "regression",
    "not working",
    "doesn't work",
    "doesnt work",
    "does not work",
    "stuck",
    "blank",
    "locked",
    "truncated",
    "waited forever",
)
RECURRENCE: Final = _R(
    r"""
    \b(?:again|(?P<ordinal>second|third|fourth)\ time|(?P<count>\d{1,3}|two|three|four|five)
      \ times|twice|recurring|recurred|keeps?\ happening|kept\ happening|bit\ us\ before
      |before\ too|same\ (?:bug|issue|problem)|happened\ before)\b
""",
    "again",
    "second",
    "third",
    "fourth",
    "times",
    "twice",
    "recur",
    "keep",
    "kept",
    "bit us",
    "before",
    "same",
    "happened",
)
LESSON: Final = (
    _R(r"\bturn(?:s|ed)?\ out\b", "turn out", "turns out", "turned out"),
    _R(r"\bgotchas?\b|\bpitfalls?\b|\bcaveats?\b", "gotcha", "pitfall", "caveat"),
    _R(r"\bnote\ that\b|^note\s*:", "note that", "note:", "note :"),
    _R(
        r"""\bkeep\ in\ mind\b|\bbe\ aware\b|\bbeware\b|\bwatch\ out\b|\bbe\ careful\b""",
        "keep in mind",
        "be aware",
        "beware",
        "watch out",
        "be careful",
    ),
    _R(r"\blessons?\ (?:learned|learnt)\b|^lesson\s*:", "lesson"),
    _R(
        r"""\bthe\ trick\ is\b|\bworth\ remembering\b|\bremember\ (?:that|to)\b(?!\W*$)
         |^important\s*:|\bheads[-\ ]up\b|\bfor\ future\ reference\b""",
        "the trick",
        "worth remembering",
        "remember that",
        "remember to",
        "important:",
        "important :",
        "heads up",
        "heads-up",
        "for future",
    ),
)

# Bold lead-ins that name the kind of statement (`**Decision:** ...`).
LEAD_FAMILIES: Final[dict[str, str]] = {
    "decision": "decision",
    "architecture": "decision",
    "design decision": "decision",
    "convention": "convention",
    "rule": "directive",
    "constraint": "directive",
    "lesson": "lesson",
    "lesson learned": "lesson",
    "lessons learned": "lesson",
    "learned": "lesson",
    "takeaway": "lesson",
    "gotcha": "lesson",
    "note": "lesson",
    "pitfall": "lesson",
    "policy": "directive",
    "root cause": "bug",
    "fix": "bug",
    "bug": "bug",
}

# Any statement none of these gates open carries no signal: it is skipped before any other
# pattern runs (a sentence-opening imperative verb is checked separately).
SIGNAL_GATE: Final = gate_pattern(
    anchor
    for family in (
        STRONG,
        STRONG_USER,
        PREFERENCE,
        PREFERENCE_USER,
        DECISION,
        DECISION_USER,
        CONVENTION_STRONG,
        BUG,
        LESSON,
    )
    for rule in family
    for anchor in rule.anchors
)

# Which signal rules can match a sentence that passed the gate, in one scan.
SIGNAL_INDEX: Final = AnchorIndex(
    rule
    for family in (
        STRONG,
        STRONG_USER,
        DESCRIPTIVE,
        PREFERENCE,
        PREFERENCE_USER,
        DECISION,
        DECISION_USER,
        CONVENTION_STRONG,
        BUG,
        LESSON,
    )
    for rule in family
)

# ------------------------------------------------------------------------- reasons, trade-offs

REASON: Final = _R(
    r"""
      \s*(?:,\s*|\s)(?:because(?:\ of(?=\s))?|since|so\ that|given\ that|due\ to
        |as\ (?:it|they|this|that)\b|the\ reason\ being|in\ order\ to|otherwise
        |to\ (?:avoid|prevent|keep|make\ sure|ensure))
        \s+
    | \s*,\s*so\s+(?=\w)
    | \s+so\s+(?=(?:a|an|we|you|it|they|the|there|that|nothing|no|every|each)\b)
    | \s*;\s*(?=it\ |this\ |that\ |otherwise\ )
""",
    "because",
    "since",
    "so",
    "given that",
    "due to",
    "as it",
    "as they",
    "as this",
    "as that",
    "the reason being",
    "in order to",
    "otherwise",
    "to avoid",
    "to prevent",
    "to keep",
    "to make sure",
    "to ensure",
    ";",
)
REASON_NEXT: Final = _rx(r"""
    ^(?:(?:that'?s|this\ is|it'?s)\ because|because|the\ (?:reason|rationale)\ is|reason:
      |rationale:|otherwise|that\ way|this\ way
      |(?:it|this|that)(?:'s|\ is|\ keeps|\ makes|\ avoids|\ prevents|\ means|\ saves)\b
        .{0,60}\b(?:easier|simpler|safer|faster|clearer|cleaner|less|fewer|more|better|avoids?
        |prevents?|keeps?|consistent|one\ place)\b
      |[\w\ ]{3,30}\ matters\ because)
""")
TRADEOFF: Final = _R(
    r"""
      \s*[,;.]?\s*\b(?:the\ )?(?:trade-?off|downside|drawback|cost|catch|con)s?
        \ (?:is|was|being)\s+
    | \s*[,;]?\s*\bat\ the\ (?:cost|expense)\ of\s+
    | \s*[,;]?\s*\bin\ exchange\ for\s+
    | \s*[,;]?\s*\bbut\ (?=(?:it|this|that|we)\ (?:means|costs?|adds?|requires?|loses?|lose
        |give\ up)\b)
""",
    "trade",
    "downside",
    "drawback",
    "cost",
    "catch",
    "con",
    "at the",
    "in exchange",
    "but",
)
TRADEOFF_NEXT: Final = _rx(r"""
      ^(?:the\ )?(?:trade-?off|downside|drawback|cost|catch|con|price)s?\b
        (?:\ (?:is|was|are|being))?\s*:?\s*
    | ^(?:but|however),?\s+(?=(?:it|this|that|we)\ (?:means|costs?|adds?|requires?|lose|loses
        |give\ up)\b)
""")

# ------------------------------------------------------------------------------ scope filter

# Prompt injection aimed at the memory or the agent: never an item, and it taints its turn.
INJECTION: Final = _R(
    r"""
      \b(?:ignore|disregard|forget|override)\b.{0,30}\b(?:previous|prior|above|earlier|all
        |everything|your|any)\b.{0,25}\b(?:instructions?|prompts?|rules|messages|context
        |memor(?:y|ies)|know|guidelines)\b
    | \b(?:delete|erase|wipe|clear|remove|drop|purge|reset)\b.{0,20}\bmemor(?:y|ies)\b
    | \byou\ are\ now\b | \b(?:system|developer)\ (?:prompt|note|message|override)\b
    | \badmin\ mode\b | \bjailbreak\b | \bdo\ anything\ now\b
    | \breveal\ (?:your|the)\ (?:system\ )?(?:prompt|instructions)\b
    | \b(?:never|don'?t|do\ not)\ (?:save|store|remember|memori[sz]e)\ anything\b
    | \bforget\ everything\b
""",
    "ignore",
    "disregard",
    "forget",
    "override",
    "memor",
    "you are now",
    "system",
    "developer",
    "admin mode",
    "jailbreak",
    "do anything",
    "reveal",
    "save anything",
    "store anything",
    "remember anything",
    "memorize anything",
    "memorise anything",
)
# Story-level context: user stories, acceptance criteria, tickets, sprints (seed 001). A
# "Definition of Done" heading is one (`STORY_SECTION`); said in a sentence ("it's part of the
# definition of done for a new component") it names the team's rule, not a pasted story.
STORY: Final = _R(
    r"""
      \buser\ stor(?:y|ies)\b | \bacceptance\ criteri(?:a|on)\b
    | \bas\ an?\ [\w\ -]{1,30},\ i\ want\b | \bso\ that\ i\ can\b
    | \bgiven\b.{1,80}\bwhen\b.{1,80}\bthen\b
""",
    "user stor",
    "acceptance criteri",
    "as a",
    "as an",
    "so that i",
    "given",
)
FEATURE: Final = (
    _R(
        r"""\b(?:for|in|on)\ (?:this|the\ current|that)\ (?:story|ticket|feature|sprint|issue
           |epic|card|task|pr|pull\ request|milestone|release|page|screen)\b""",
        "for this",
        "in this",
        "on this",
        "for the current",
        "in the current",
        "on the current",
        "for that",
        "in that",
        "on that",
    ),
    _R(
        r"\b(?:feature|story|ticket)\ only\b|\bfor\ this\ (?:one|case)\b",
        "feature only",
        "story only",
        "ticket only",
        "for this",
    ),
    _R(r"\bsprint\ \d+\b|\bstory\ \d+\b", "sprint", "story"),
    _R(r"\b\d+px\b|\#[0-9a-f]{3,8}\b", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "#"),
    _R(
        r"\b(?:status\ update|blocked\ on|moving\ to|done\ for\ today|wip)\b",
        "status update",
        "blocked on",
        "moving to",
        "done for today",
        "wip",
    ),
    _R(r"\bi\ want\ to\ (?:add|build|create|make|have|see)\b", "i want to"),
)
TICKET: Final = _R(r"\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b", "-", flags=0)
UI_ELEMENT: Final = _R(
    r"""
    \b(?:buttons?|pages?|screens?|modals?|dialogs?|banners?|fields?|forms?|icons?|headers?
      |footers?|navbar|menus?|tooltips?|checkbox(?:es)?|dropdowns?|inputs?|labels?|links?
      |tabs?|sidebar|cards?|popups?|toasts?|spinners?|logos?|placeholders?)\b
""",
    "button",
    "page",
    "screen",
    "modal",
    "dialog",
    "banner",
    "field",
    "form",
    "icon",
    "header",
    "footer",
    "navbar",
    "menu",
    "tooltip",
    "checkbox",
    "dropdown",
    "input",
    "label",
    "link",
    "tab",
    "sidebar",
    "card",
    "popup",
    "toast",
    "spinner",
    "logo",
    "placeholder",
)
UI_PRESENTATION: Final = _R(
    r"""
    \b(?:blue|red|green|yellow|orange|purple|black|white|gr[ae]y|pink|bold|italic|centered
      |centred|center|left|right|top|bottom|below|above|next\ to|hidden|visible|shown|show
      |displayed|display|appear|appears|disabled|enabled|prefilled|highlighted|animated
      |rounded|larger|smaller|font)\b
""",
    "blue",
    "red",
    "green",
    "yellow",
    "orange",
    "purple",
    "black",
    "white",
    "gray",
    "grey",
    "pink",
    "bold",
    "italic",
    "center",
    "centred",
    "left",
    "right",
    "top",
    "bottom",
    "below",
    "above",
    "next to",
    "hidden",
    "visible",
    "shown",
    "show",
    "display",
    "appear",
    "disabled",
    "enabled",
    "prefilled",
    "highlighted",
    "animated",
    "rounded",
    "larger",
    "smaller",
    "font",
)
# Procedural chatter: what someone is about to do or is doing right now (match at start).
PROCEDURAL: Final = _rx(r"""
    ^(?:(?:ok(?:ay)?|so|now|next|first|then|alright|great|sure|perfect|good|got\ it)
        [,.!]?\s+)*
    (?:let\ me | let'?s\ (?:run|check|see|look|open|start|try|read|verify|review|test|debug
        |take|first|dig|find|figure|examine|investigate|update|fix|add|implement|create|write
        |refactor|move)
      | i(?:'ll|\ will|\ am\ going\ to|'m\ going\ to|\ need\ to|\ can|\ want\ to|'m)
        \s+(?:now\s+|also\s+|first\s+|then\s+|just\s+|go\ ahead\ and\s+)?
        (?:run|check|open|look|read|start|try|create|update|add|write|edit|fix|implement
        |examine|verify|review|search|investigate|analy[sz]e|help|proceed|make|go|draft
        |research|pin|route|replace|convert|keep|use|remove|move|commit|push|install|set
        |change|test|build|refactor|clean|do|apply|modify|take|switch|continue|update)\b
      | (?:running|checking|reading|looking|opening|creating|updating|searching|examining
        |investigating|analy[sz]ing|fixing|adding|writing|switching|moving|trying)\b
      | (?:here(?:'s|\ is|\ are)|below\ is|done|finished|completed)\b )
""")
# A request to do something now ("Analyze the project structure", "Can you add ..."): a task,
# not knowledge, unless it also carries an always/never rule (match at start).
TASK_REQUEST: Final = _rx(r"""
    ^(?:(?:can|could|would)\ you\s+|please\s+)?
    (?:analy[sz]e|examine|review|check|look\ at|find|create|add|implement|build|write|update
      |fix|refactor|investigate|summari[sz]e|explain|return|show|list|run|test|make|generate
      |draft|research|explore|compare|identify|focus|provide|describe|help|give|tell|derive
      |split|execute|start|open|read|install|set\ up|setup|deploy|commit|push|merge|delete
      |remove|rename|move|convert|continue|proceed)
    # The verb must take an object ("Fix the typo"), so "Commit messages follow ..." and
    # "Test files mirror ..." (nouns) are not requests.
    (?:\s+(?:the|a|an|this|that|these|those|my|our|your|its|their|all|any|some|it|them|me|us
      |up|out|in|on|to|for|with|and|what|how|why|whether|if)\b|\s+\S+\.\w+|\s*[:,.]|\s*$)
""")
# A convention is stated with a verb ("names are", "files mirror", "messages follow"); a bare
# noun phrase ("Project layout compared to the docs") is a topic, not a rule.
CONVENTION_VERB: Final = _rx(r"""
    \b(?:is|are|follow|follows|use|uses|mirror|mirrors|go|goes|live|lives|belong|belongs|must
      |should|always|never|start|starts|end|ends|begin|begins|match|matches|stay|stays|keep
      |keeps|get|gets|need|needs|have|has|put|name|prefix|suffix)\b
""")
# Status reports (match at start).
STATUS: Final = _rx(r"""
    ^(?:all\ (?:\d+\ |the\ |of\ the\ |five\ |six\ |seven\ |three\ |four\ )?(?:tests?|checks?
        |criteria|changes|acceptance)
      | (?:the\ )?tests?\ (?:pass|passed|are\ (?:green|passing))
      | (?:the\ )?build\ (?:passes|passed|succeeded|is\ green)
      | everything\ (?:looks|is|works)
      | i(?:'ve|\ have)\ (?:now\s+)?(?:created|updated|added|implemented|fixed|changed|removed
        |moved|refactored|replaced|written|converted|made|completed|finished|verified|checked
        |reviewed|identified)
      | (?:this|that|it)\ (?:is|was)\ (?:now\ )?(?:done|complete|fixed|implemented|merged)
      | status(?:\ update)?: | updated: | done:
      | (?:created|updated|added|removed|fixed|implemented|converted|moved|verified)\b
      | no\ changes\ (?:are\ )?needed )
""")
# Headings whose content is story-level or a report of work done.
STORY_SECTION: Final = _rx(r"""
    acceptance\ criteri | user\ stor | definition\ of\ done | test\ plan
  | files?\ (?:created|changed|modified|touched) | changes\ made | ^changes$ | what\ was\ (?:done
    |built|changed) | summary\ of\ changes | implementation\ (?:summary|complete|request)
  | data\ flow | verification | audit | next\ steps | ^status | ^todo | ^tasks?\b | sprint
  | backlog | example\ usage | expected\ output | how\ it'?s\ met | ^phase\ \d | ^step\ \d
  | ^instructions | ^process$ | checklist | anti-patterns | self-check | deliverables
  | refined\ implementation | rice\ fact | ^(?:role|format|aim|tone|context|example)$
  | proposed\ beads | ^epic | rabbit\ holes | no-gos | ^result
""")
SECTION_CATEGORIES: Final[tuple[tuple[re.Pattern[str], Category], ...]] = (
    (
        _rx(r"\b(?:key\ )?(?:design\ )?decisions?\b|\barchitecture\b|\btech(?:nology)?\ stack\b"),
        Category.ARCHITECTURAL_DECISIONS,
    ),
    (
        _rx(r"\bconventions?\b|\bcode\ style\b|\bstyle\ guide\b|\bguidelines\b|\bstandards\b"),
        Category.PROJECT_CONVENTIONS,
    ),
    (
        _rx(r"\blessons?\b|\bgotchas?\b|\bpitfalls?\b|\bcaveats?\b|\blearnings?\b"),
        Category.IMPLEMENTATION_NOTES,
    ),
)
# `### Architecture: SAM Pattern` names the design the bullets below it describe.
NAMED_DESIGN: Final = _rx(
    r"^(?:architecture|architectural\ pattern|design|state\ management|pattern)\s*[:—–-]\s*"
    r"(?P<name>.{2,60})$"
)
# A section bullet must state something general to count as solution-wide.
GENERAL: Final = _rx(
    r"\b(?:all|every|any|never|always|everywhere|across|throughout|whole|entire|global(?:ly)?"
    r"|each)\b"
)

# ------------------------------------------------------------------- hedges and weakeners

HEDGE_STRONG: Final = _rx(r"""
    \b(?:maybe|might|perhaps|possibly|not\ sure|unsure|not\ certain|could\ (?:also\ |maybe\ )?
      (?:consider|try|look)|may\ want|at\ some\ point|someday|eventually|not\ yet
      # "later" defers ("we'll see later"); "3.11 or later", "anything later", "later than"
      # compare.
      |(?<!\bor\ )(?<!\bany\ )(?<!\banything\ )(?<!\bsomething\ )later(?!\ than\b)
      |undecided|tbd|i\ wonder|worth\ considering|overkill|for\ the\ time\ being)\b
""")
HEDGE_WEAK: Final = _rx(r"""
    \b(?:i\ think|i\ guess|i\ believe|i\ feel|probably|likely|kind\ of|sort\ of|ideally
      |would\ be\ nice|it\ seems|seems\ like|we\ could|you\ could|could\ be|for\ now)\b
""")
# Words that tie a statement to one place or moment rather than the whole solution.
# ("no one-off test funcs" turns the one-off down: a rule, not a one-time request)
LOCAL: Final = _rx(r"""
    \b(?:this\ (?:file|function|method|class|test|line|one|time|module|component|endpoint
      |pr|branch|bug)|that\ (?:file|function)|right\ now|temporarily|today|tomorrow
      # ("fix that one", not "we use that one", which points back at what was named)
      |(?<!\buse\ )(?<!\btake\ )(?<!\bwith\ )that\ one
      |this\ week|next\ week|this\ sprint|just\ once|(?<!\bno\ )one-off|for\ the\ demo)\b
""")
# Advice too vague to act on unless something concrete is named with it.
GENERIC: Final = _rx(r"""
    \b(?:proper(?:ly)?|appropriate(?:ly)?|correct(?:ly)?|good\ practices?|best\ practices?
      |clean|readable|maintainable|robust|high[-\ ]quality|as\ needed|where\ (?:appropriate
      |needed|possible)|seamless(?:ly)?|holistic)\b
""")
# Something concrete: code in backticks, identifiers, calls, paths, acronyms, versions.
TECH_TOKEN: Final = re.compile(
    r"`[^`]+`|\b\w+[._]\w+|\w+\(\)|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|\b[A-Z]{2,}\d*\b"
    r"|\w+/\w+|\b\w*\d\w*[a-zA-Z]\w*\b|--\w+"
)
SCOPE: Final = _rx(r"""
      \b(?:in|for|across|throughout|under|on)\s+(?:all|every|each|any|the\ whole|the\ entire)
        \s+(?:[\w./*-]+\s+){0,2}?(?:files?|modules?|code(?:base)?|repo(?:sitory)?|project
        |packages?|tests?|folders?|directories|layers?|classes|functions|services|components
        |crates|connections?|library\ code|new\ modules?)\b
    | \b(?:in|for|under|on)\s+(?:new\s+)?(?:library\ code|new\ modules?|this\ (?:codebase|repo
        |project))\b
    | \b(?:on|in|under)\s+`?[\w.-]+/[\w./-]*`?
    | \beverywhere\b
""")

# ------------------------------------------------------------- how the next turn responds

ACK: Final = _rx(r"""
    ^(?:yes|yep|yeah|great|perfect|good|nice|thanks|thank\ you|agreed|exactly|correct|right
      |sounds\ good|makes\ sense|lgtm|looks\ good|that\ (?:works|fixed\ it|did\ it)
      |good\ (?:call|catch)|ok(?:ay)?|sure|go\ ahead|do\ it)\b
""")
REJECT: Final = _rx(r"""
    ^(?:no\b|nope|nah|wrong|don'?t\b|do\ not\b|stop\b|that'?s\ (?:wrong|not)|not\ quite
      |revert|undo)
""")

# ----------------------------------------------------------------------------------- topics


@dataclass(frozen=True, slots=True)
class Topic:
    """A subject an item can be about: its tag, the title it gives, and how to spot it."""

    tag: str
    title: str
    rule: Rule


def _topic(tag: str, title: str, pattern: str, *anchors: str) -> Topic:
    return Topic(tag, title, _R(pattern, *anchors))


# Most specific first: the first topic found names the item.
TOPICS: Final[tuple[Topic, ...]] = (
    _topic(
        "async",
        "Async pattern",
        r"async/await|\basync\b|\bawait(?:ed)?\b|\.then\(|\bpromises?\b|\bcallbacks?\b",
        "async",
        "await",
        ".then(",
        "promise",
        "callback",
    ),
    _topic("paths", "Path handling", r"pathlib|os\.path", "pathlib", "os.path"),
    _topic(
        "logging",
        "Logging",
        r"\blogging\b|\bloggers?\b|structlog|print\(\)",
        "logging",
        "logger",
        "structlog",
        "print()",
    ),
    _topic(
        "exports",
        "Module exports",
        r"\b(?:named|default)\ exports?\b",
        "named export",
        "default export",
    ),
    _topic(
        "naming",
        "Naming",
        r"""camelCase|snake_case|PascalCase|kebab-case|UPPER_SNAKE
           |naming|\bnames\b|\bnamed\b""",
        "camelcase",
        "snake_case",
        "pascalcase",
        "kebab-case",
        "upper_snake",
        "naming",
        "names",
        "named",
    ),
    _topic(
        "linting",
        "Linting and formatting",
        r"""\bruff\b|\bblack\b|prettier|eslint|flake8
           |pylint|\blint|line\ length|formatt|indentation""",
        "ruff",
        "black",
        "prettier",
        "eslint",
        "flake8",
        "pylint",
        "lint",
        "line length",
        "formatt",
        "indentation",
    ),
    _topic(
        "typing",
        "Type checking",
        r"mypy|pyright|type\ hints?|typescript|\btsc\b|type-?check|--strict",
        "mypy",
        "pyright",
        "type hint",
        "typescript",
        "tsc",
        "type-check",
        "typecheck",
        "type check",
        "--strict",
    ),
    _topic(
        "git",
        "Git workflow",
        r"commit\ messages?|conventional\ commits|branch\ names?|pull\ requests?|\bgit\b",
        "commit message",
        "conventional commits",
        "branch name",
        "pull request",
        "git",
    ),
    _topic(
        "dependencies",
        "Dependencies",
        r"""dependenc|requirements\.txt|package\.json|lockfile|\bpin(?:ned|ning)?\b
           |\b(?:pip|npm|pnpm|yarn|cargo)\ (?:install|add)\b""",
        "dependenc",
        "requirements.txt",
        "package.json",
        "lockfile",
        "pin",
        "pip",
        "npm",
        "pnpm",
        "yarn",
        "cargo",
    ),
    _topic(
        "retries",
        "Retries",
        r"\bretr(?:y|ies)\b|backoff|jitter",
        "retry",
        "retries",
        "backoff",
        "jitter",
    ),
    _topic(
        "errors",
        "Error handling",
        r"""\bexceptions?\b|error\ handling|try/except|\bcatch\b
           |\braise\b|\bfatal\b|\bcrash|\berrors\b|\bpanics?\b|fmt\.errorf|errors\.is""",
        "exception",
        "error handling",
        "try/except",
        "catch",
        "raise",
        "fatal",
        "crash",
        "errors",
        "panic",
        "fmt.errorf",
    ),
    _topic(
        "files",
        "File writes",
        r"""\batomic(?:ally)?\b|fsync|os\.replace
           |temp(?:orary)?\ files?|\.lock\ files?|\block\ files?|filelock|\bversions/""",
        "atomic",
        "fsync",
        "os.replace",
        "temp file",
        "temporary file",
        ".lock",
        "lock file",
        "filelock",
        "versions/",
    ),
    _topic(
        "testing",
        "Testing",
        r"\btests?\b|\btesting\b|pytest|\bjest\b|vitest|\bfixtures?\b|\btdd\b",
        "test",
        "pytest",
        "jest",
        "vitest",
        "fixture",
        "tdd",
    ),
    _topic(
        "http",
        "HTTP calls",
        r"""\bfetch\b|\bhttpx?\b|\brequests\b|api\ client
           |\bendpoints?\b|\bapis?\b""",
        "fetch",
        "http",
        "requests",
        "api",
        "endpoint",
    ),
    _topic(
        "storage",
        "Storage",
        r"""sqlite|fts5|postgres|mysql|database|\bsql\b|\bindex\b
           |redis|elasticsearch|\bstorage\b|\btransactions?\b""",
        "sqlite",
        "fts5",
        "postgres",
        "mysql",
        "database",
        "sql",
        "index",
        "redis",
        "elasticsearch",
        "storage",
        "transaction",
    ),
    _topic(
        "concurrency",
        "Concurrency",
        r"""\block(?:s|ing)?\b|\brace\b|\bthreads?\b
           |concurren|asyncio|to_thread|mutex|deadlock|\btasks?\b|event\ loop""",
        "lock",
        "race",
        "thread",
        "concurren",
        "asyncio",
        "to_thread",
        "mutex",
        "deadlock",
        "task",
        "event loop",
    ),
    _topic(
        "architecture",
        "Layering",
        r"""\blayer(?:s|ing)?\b|boundar(?:y|ies)|\bimports?\b
           |architecture|\bchannels?\b|source\ of\ truth|derived\ data""",
        "layer",
        "boundar",
        "import",
        "architecture",
        "channel",
        "source of truth",
        "derived data",
        "memorychannels",
    ),
    _topic(
        "state",
        "State management",
        r"""\b(?:server|client|app|ui|shared|global)\ state\b
           |state\ (?:management|changes?|updates?)|\bSAM\b|redux|zustand|immutab|\bmutat""",
        "server",
        "client",
        "app",
        "ui",
        "shared",
        "global",
        "state",
        "sam",
        "redux",
        "zustand",
        "immutab",
        "mutat",
    ),
    _topic(
        "config",
        "Configuration",
        r"\bconfig(?:uration)?\b|\bsettings\b|pydantic|dataclass",
        "config",
        "settings",
        "pydantic",
        "dataclass",
    ),
    _topic(
        "ui",
        "UI",
        r"""\bqt\b|pyside|\bwidgets?\b|\bsignals?\b|\bslots?\b|\btray\b|\bgui\b
           |\bui\b|\bwindows?\b""",
        "qt",
        "pyside",
        "widget",
        "signal",
        "slot",
        "tray",
        "gui",
        "ui",
        "window",
    ),
    _topic(
        "css",
        "CSS",
        r"\bcss\b|mobile-first|responsive|media\ quer",
        "css",
        "mobile-first",
        "responsive",
        "media quer",
    ),
    _topic(
        "caching",
        "Caching",
        r"\bcach(?:e|es|ing)\b|service\ worker|\boffline\b",
        "cach",
        "service worker",
        "offline",
    ),
    _topic(
        "dates",
        "Dates and times",
        r"\butc\b|iso[\ -]?8601|timestamps?|time\ ?zones?|\bdates?\b",
        "utc",
        "iso",
        "timestamp",
        "time zone",
        "timezone",
        "date",
    ),
    _topic(
        "security",
        "Security",
        r"\bsecrets?\b|\btokens?\b|passwords?|\bauth\b|redact|credentials?",
        "secret",
        "token",
        "password",
        "auth",
        "redact",
        "credential",
    ),
    _topic(
        "events",
        "Events and messaging",
        r"outbox|\bevents?\b|message\ queue|\bpublish|pub/?sub",
        "outbox",
        "event",
        "message queue",
        "publish",
        "pub/sub",
        "pubsub",
    ),
    _topic(
        "design",
        "Design principles",
        r"composition|inheritance|\bcoupling\b|\bdry\b",
        "composition",
        "inheritance",
        "coupling",
        "dry",
    ),
    _topic(
        "performance",
        "Performance",
        r"""performance|latency|\bslow\b
           |\bblock(?:s|ing)?\ the\ (?:gui|ui|event\ loop|main\ thread|thread)""",
        "performance",
        "latency",
        "slow",
        "block",
    ),
    _topic(
        "data",
        "Data validation",
        r"\bvalidat|\bschemas?\b|\bjson\b|\bserializ|\bserialis",
        "validat",
        "schema",
        "json",
        "serializ",
        "serialis",
    ),
    _topic(
        "modules",
        "Modules",
        r"\bmodules?\b|\bpackages?\b|\bhelpers?\b|\butils?\b",
        "module",
        "package",
        "helper",
        "util",
    ),
)


TOPIC_INDEX: Final = AnchorIndex(topic.rule for topic in TOPICS)


def topics_in(text: str, low: str) -> list[Topic]:
    """The topics a text is about, most specific first."""
    opened = TOPIC_INDEX.open_rules(low)
    return [t for t in TOPICS if t.rule in opened and t.rule.pattern.search(text)]


def all_rules() -> list[tuple[str, Rule]]:
    """Every gated rule with a name, for the test that checks gates against real text."""
    found: list[tuple[str, Rule]] = []
    for name, value in globals().items():
        if isinstance(value, Rule):
            found.append((name, value))
        elif isinstance(value, tuple) and value and isinstance(value[0], Rule):
            found += [(f"{name}[{n}]", rule) for n, rule in enumerate(value)]
        elif isinstance(value, tuple) and value and isinstance(value[0], Topic):
            found += [(f"TOPICS.{topic.tag}", topic.rule) for topic in value]
    return found
