"""Statements to candidate memory items: scope filter, signals, fields and confidence.

This module owns the judging half of the offline extractor. For each statement it applies the
tables of `extract_rules.py`: the scope filter (prompt injection, story-level, feature-specific,
procedural, task and status chatter), the signal families that pick a category (directive,
preference, decision, convention, bug fix, lesson, labelled or design-section bullets), the
neighbouring statements that complete an item (a reason or trade-off in the next sentence, the
symptom a few statements before a root cause, the fix after it, the approach after a lesson),
and the confidence from the strength of the signals and who spoke. The result is a list of
`Candidate`s in conversation order; `extract_merge.py` merges and titles them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from app.core.models import Category
from app.engines.offline import extract_rules as r
from app.engines.offline.dialogue import said_as_rule
from app.engines.offline.extract_text import Reading, Speaker, Statement

__all__ = [
    "MAX_CONTENT_CHARS",
    "STOPWORDS",
    "Candidate",
    "Family",
    "capitalize",
    "find_candidates",
    "skip_section",
    "strip_fillers",
    "tokens",
]

MIN_CLASSIFY_CHARS = 12
SUBSTANCE_WORDS = 5
TASK_BRIEF = 2
MAX_CONTENT_CHARS = 320
SYMPTOM_LOOKBACK = 6
FOLLOW_LOOKAHEAD = 2


class Family(StrEnum):
    """What kind of signal made a statement a candidate."""

    DIRECTIVE = "directive"
    PREFERENCE = "preference"
    DECISION = "decision"
    CONVENTION = "convention"
    BUG = "bug"
    LESSON = "lesson"
    SECTION = "section"


_LEAD_CATEGORY: dict[str, Category] = {
    "decision": Category.ARCHITECTURAL_DECISIONS,
    "convention": Category.PROJECT_CONVENTIONS,
    "directive": Category.CODING_PREFERENCES,
    "lesson": Category.IMPLEMENTATION_NOTES,
}

# Base confidence of a user statement per family; the agent's counts less (seed 001: the
# user's directive weighs more than an assistant's remark).
BASE: dict[Family, float] = {
    Family.DIRECTIVE: 0.85,
    Family.PREFERENCE: 0.8,
    Family.DECISION: 0.8,
    Family.CONVENTION: 0.8,
    Family.BUG: 0.75,
    Family.LESSON: 0.75,
    Family.SECTION: 0.7,
}
AGENT_PENALTY: dict[Family, float] = {
    Family.BUG: 0.15,
    Family.LESSON: 0.15,
}
DEFAULT_AGENT_PENALTY = 0.2
PLAIN_ALWAYS_USER = 0.8  # "the UI never imports core": a rule stated as a fact
REASON_BONUS = 0.05
TRADEOFF_BONUS = 0.03
CORRECTION_BONUS = 0.05
BUG_COMPLETE_BONUS = 0.05
APPROACH_BONUS = 0.05
PASTED_PENALTY = 0.2
STORY_PENALTY = 0.2
HEDGE_STRONG_PENALTY = 0.2
HEDGE_WEAK_PENALTY = 0.1
HEDGE_MAX_PENALTY = 0.4
LOCAL_PENALTY = 0.25
GENERIC_PENALTY = 0.25

_QUESTION_END_RE = re.compile(r"\?[\"')\]]*$")
# A question asked without its mark: "Was it always that slow.", "do we still need the shim".
# The verb before its subject is English's question order; a request ("can you …") is not
# in it, being as often a polite rule ("Could you always run the linter first.").
_INVERTED_QUESTION_RE = re.compile(
    r"(?i)^\W*(?:(?:and|so|but|also|or|hm+|ok(?:ay)?|wait)\W+)?(?:is|are|was|were|do|does|did|has|"
    r"have)\s+(?:it|there|this|that|we|they)\b(?!\s+(?:is|are|was|were)\b)"
)


def asked_without_mark(text: str) -> bool:
    """Whether a sentence is a question in its word order though it ends with no mark."""
    return _INVERTED_QUESTION_RE.match(text) is not None


_INTRO_RE = re.compile(
    r"\b(?:a\ few|some|several|the\ following|these|following|a\ couple\ of)\s+(?:\w+\s+)?"
    r"(?:conventions|rules|things|notes|points|preferences|guidelines)\b|:$",
    re.IGNORECASE | re.VERBOSE,
)
_FILLER_RE = re.compile(
    r"""^(?:(?:ok(?:ay)?|so|and|also|oh|btw|by\ the\ way|plus|right(?!\ now)|yes|yeah|yep|good|great
        |well|hey|hmm|alright|actually|wait|sure|understood|agreed|got\ it|noted|then
        |please|fyi|but|finally|first|one\ more\ thing|one\ last\ thing|another\ thing
        |one\ more|(?:it\ )?turns\ out(?:\ that)?|note\ that|keep\ in\ mind(?:\ that)?
        |remember\ that|be\ aware\ that|thanks|thank\ you|cool|nice|perfect|fine|more\ generally
        |in\ general|generally|while\ (?:we'?re|you'?re)\ (?:here|at\ it)|for\ the\ record
        # a change of mind announced before it is said
        |scratch\ that|on\ (?:a\ )?second\ thoughts?|change\ of\ plans?|no\ wait|never\ ?mind)
        \b[\s,:;.!—–-]*
        # "No, …" answers; "No force unwraps" is the rule itself.
        |(?:no|nope)\b\s*[,:;.!—–-]+\s*
        # greetings, only when set off ("hi-res" is no greeting)
        |(?:hi|hello|hey\ there)\s*[,!]\s*)+""",
    re.IGNORECASE | re.VERBOSE,
)
# "The real convention for this project: always pin ..." - the label says what follows.
_LABEL_PREFIX_RE = re.compile(
    r"^(?P<label>[^:]{2,60}):\s+(?P<rest>\S.*)$",
)
_LABEL_WORDS_RE = re.compile(
    r"\b(?:conventions?|rules?|decision|lesson|gotcha|note|tip|important|one\ more|also|constraint"
    r"|policy|reminder|remember|heads[- ]up|pitfall|caveat|fyi)\b",
    re.IGNORECASE | re.VERBOSE,
)
_LABEL_SUBJECT_RE = re.compile(
    r"\bfor\s+(?P<np>(?:all\s+|every\s+|each\s+)?(?:\w+\s+){0,3}\w+)$", re.I
)
_PRONOUN_SUBJECT_RE = re.compile(r"^(?:they|it|these|those)\b", re.I)
_YOU_SHOULD_RE = re.compile(
    r"^(?:i\ want\ you\ to|you\ (?:should|must|need\ to|have\ to)|make\ sure\ (?:you|to))\s+"
    r"(?=always\b|never\b)",
    re.IGNORECASE | re.VERBOSE,
)
_DECISION_LEADS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE | re.VERBOSE), replacement)
    for pattern, replacement in (
        (
            r"^(?:so\s+)?(?:we|i|the\ team)(?:'ve|\ have)?\s+(?:decided|agreed)\s+(?:that|on)\s+"
            r"(?=(?:the|a|an|our|all|every)\b)",
            "",
        ),
        (r"^(?:so\s+)?(?:we|i|the\ team)(?:'ve|\ have)?\s+(?:decided|agreed)\s+on\s+", "Use "),
        (
            r"^(?:so\s+)?(?:we|i|the\ team)(?:'ve|\ have)?\s+"
            r"(?:decided|agreed)\s+(?:that\s+|to\s+)?",
            "",
        ),
        (
            r"^(?:so\s+)?(?:let'?s|we(?:'ll|\ will|\ are\ going\ to|'re\ going\ to))\s+"
            r"(?:go\ with|stick\ with|use)\s+",
            "Use ",
        ),
        (
            r"^(?:so\s+)?(?:we|i|the\ team)(?:'ve|\ have)?\s+(?:chose|picked|selected|went\ with"
            r"|opted\ for|settled\ on|adopted|standardi[sz]ed\ on)\s+"
            # ("we picked it over styled-components": what "it" is was said before)
            r"(?!(?:it|this|that|them|these|those|one)\b)",
            "Use ",
        ),
        (r"^(?:the\ )?decision(?:\ is|\ was)?\s*:?\s*(?:to\s+)?", ""),
    )
)
_TOKEN_RE = re.compile(r"[a-z0-9][a-z0-9_./+-]*", re.IGNORECASE)
STOPWORDS: frozenset[str] = frozenset(
    {
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "so",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "with",
        "by",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "we",
        "you",
        "i",
        "they",
        "he",
        "she",
        "our",
        "your",
        "my",
        "their",
        "me",
        "us",
        "them",
        "do",
        "does",
        "did",
        "not",
        "no",
        "all",
        "any",
        "each",
        "every",
        "some",
        "there",
        "here",
        "when",
        "where",
        "which",
        "who",
        "what",
        "how",
        "than",
        "too",
        "very",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "just",
        "also",
        "only",
        "into",
        "over",
        "under",
        "about",
        "after",
        "before",
        "use",
        "using",
        "always",
        "never",
    }
)
_IMPERATIVE_FOLLOW_RE = re.compile(
    r"^(?:catch|use|raise|call|pass|wrap|return|log|put|keep|prefer|write|validate|store|"
    r"name|pin|lock|skip|run|check)\b",
    re.IGNORECASE,
)
_APPROACH_SPLIT_RE = re.compile(
    r",?\s+so\s+(?=[^,]{0,60}\b(?:has\ to|have\ to|must|should|need\ to|needs\ to)\b)",
    re.IGNORECASE | re.VERBOSE,
)
# "About the intermittent 500 errors: the root cause ..." - the symptom is what follows "about".
_SYMPTOM_LEAD_RE = re.compile(
    r"^(?:(?:about|regarding|as\ for|re:?|on)\s+|(?:summary|update|tl;?dr|status|note):\s*)",
    re.IGNORECASE,
)
# "The duplicate-job failure was because …": the words before the cause end on a verb
# that needs it, so they are no statement of their own.
_OPEN_COPULA_RE = re.compile(r"\b(?:was|were|is|are|has\ been|happened|happens)$", re.IGNORECASE)
# What a decision chose: "we settled on sqlc over an ORM" names sqlc.
_CHOSEN_RE = re.compile(
    r"""\b(?:use|adopt|chose|choose|picked|selected|settled\ on|went\ with|go\ with|opted\ for
        |decided\ on|switch\ to|move\ to|stick\ with|prefer)\s+(?:an?\s+|the\s+)?
        (?!(?:that|this|it|them|these|those|one|both)\b)  # ("we use that one": no name)
        (?P<object>[^\s,.;:]+(?:\s+(?!(?:for|over|instead|in|on|as|to|with|because|since|and|or
        |only|when|if|so|across|at|by|from|of)\b)[^\s,.;:]+){0,3})""",
    re.IGNORECASE | re.VERBOSE,
)
_ASIDE_RE = re.compile(r",?\s*\b(?:by\ the\ way|btw|fyi)\b,?", re.IGNORECASE | re.VERBOSE)
_TRAILING_TASK_RE = re.compile(
    r"""[,;]?\s+(?:so|and)\s+(?:please\s+)?(?:rename|fix|update|change|move|add|remove|delete
        |replace|convert|bump|ship)\b[^.;]*(?=[.;]?$)""",
    re.IGNORECASE | re.VERBOSE,
)
_NUMBER_WORDS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "twice": 2,
}
_LABEL_DEFUSE_RE = re.compile(
    r"(?:^|(?<=\s))(Rationale|Trade-?offs?|Scope|Root cause|Fix|Approach|Lessons(?: learned)?"
    r"|Occurred)(?=:|\s+\d+\s+times)",
)


@dataclass(slots=True)
class Candidate:
    """A memory item under construction, with the evidence needed to merge and title it."""

    category: Category
    speaker: Speaker
    turn: int
    index: int
    content: str
    confidence: float
    family: Family
    topic_tags: list[str] = field(default_factory=list)
    topic_title: str = ""
    lead: str = ""
    title: str = ""
    rationale: str = ""
    trade_offs: str = ""
    scope: str = ""
    root_cause: str = ""
    fix: str = ""
    occurrences: int = 1
    approach: str = ""
    lessons: str = ""
    mentions: int = 1
    speakers: set[Speaker] = field(default_factory=set)
    # A plain statement no rule picked: kept only when the learned judge says so (judge.py).
    plain: bool = False
    # The speaker called it a rule ("make it a rule: …"), whatever its wording suggests.
    named_rule: bool = False
    # A user's statement read as a standing rule for a universal word alone ("every",
    # "nobody", "everywhere"), in a sentence that goes on past its first clause: no ban, no
    # name, no shape of a rule, no place, no wish, no kept choice. Such a word also tells
    # how things are ("We Instantiate and Destroy every bullet right now, which I know is
    # dumb."), so the hold model's exemption for emphatic rules does not cover it.
    universal_only: bool = False


@dataclass(slots=True)
class _Signals:
    strong: bool = False
    plain_always: bool = False
    preference: bool = False
    decision: bool = False
    convention: bool = False
    bug: bool = False
    lesson: bool = False
    lead_family: str = ""
    labeled: bool = False


# ----------------------------------------------------------------------------- text helpers


def capitalize(text: str) -> str:
    """Upper-case the first letter unless the first word is an identifier (`qasync`)."""
    if not text:
        return text
    # (the word, not the comma after it: "please, static typing …")
    first = text.split(" ", 1)[0].rstrip(",;:!?")
    # Identifiers keep their case: `qasync`, `os.path`, `request()`; "don't" is a word.
    if not first.replace("'", "").replace("-", "").isalpha() or any(
        ch.isupper() for ch in first[1:]
    ):
        return text
    return text[0].upper() + text[1:]


def lower_first(text: str) -> str:
    """ "The guidelines say" -> "the guidelines say"; names ("CONTRIBUTING.md") stay, and so
    does a word written capitalised inside the text too ("Priya (she owns …) … Priya wants
    hourly": a person's name)."""
    first, _, rest = text.partition(" ")
    if first[1:].islower() and first.replace("'", "").isalpha():  # ("Don't" is a word)
        if re.search(rf"(?<![.!?:]\s)(?<=\s){re.escape(first)}\b", rest):
            return text
        return text[0].lower() + text[1:]
    return text


def _sentence(text: str) -> str:
    text = text.strip().strip(" ,;:—–-").strip()
    if not text:
        return text
    text = capitalize(text)
    if text[-1] not in ".!?)\"'`":
        text += "."
    return text


def strip_fillers(text: str) -> str:
    """Drop discourse openers ("No, ", "Also note that ") and say-what-follows labels."""
    text = _FILLER_RE.sub("", text).strip()
    label = _LABEL_PREFIX_RE.match(text)
    if label is not None and _LABEL_WORDS_RE.search(label.group("label")):
        text = _FILLER_RE.sub("", label.group("rest")).strip()
        # "rule for all our batch jobs: they have to ...": the label named the subject the
        # pronoun stands for.
        subject = _LABEL_SUBJECT_RE.search(label.group("label"))
        if subject is not None:
            text = _PRONOUN_SUBJECT_RE.sub(subject.group("np"), text, count=1)
    return _YOU_SHOULD_RE.sub("", text)


def _defuse(text: str) -> str:
    # The branch file format reads "Fix: ..." or "Scope: ..." inside a bullet as a field.
    return _LABEL_DEFUSE_RE.sub(lambda m: m.group(1)[0].lower() + m.group(1)[1:], text)


def _clip(text: str, limit: int = MAX_CONTENT_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"


def tokens(text: str) -> set[str]:
    """Lower-cased content words, lightly stemmed, for duplicate detection."""
    found: set[str] = set()
    for raw in _TOKEN_RE.findall(text.lower()):
        word = raw.strip("./+-")
        if len(word) < 2 or word in STOPWORDS:
            continue
        if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        found.add(word)
    return found


def _topics(text: str) -> list[tuple[str, str]]:
    """(tag, title) of every topic the text touches, most specific first."""
    return [(t.tag, t.title) for t in r.topics_in(text, text.lower())]


def _any(rules: tuple[r.Rule, ...], text: str, low: str) -> bool:
    return r.first(rules, text, low) is not None


def _has_substance(text: str, topics: list[tuple[str, str]], *, choice: bool = False) -> bool:
    """Names something technical or says enough to act on ("Don't worry" does not).

    For a `choice` ("We'll use Sloth.", "We go with gh-ost."), a name the keyword tables
    cannot know (capitalised inside the sentence, or hyphenated) is that something.
    """
    if topics or r.TECH_TOKEN.search(text) is not None:
        return True
    if choice and (_NAME_INSIDE.search(text) is not None or _CHOSEN_FOR.search(text)):
        return True
    return len(tokens(text)) >= SUBSTANCE_WORDS


# "We use webpack for the frontend build", "for the frontend build we use webpack": what is
# chosen and what it is for, both named, whatever case the name is written in.
_NOT_A_NAME = r"(?!(?:it|this|that|them|those|these|one|something|anything|what|which)\b)"
_CHOSEN_FOR = re.compile(
    rf"(?i)\b(?:use|go with|pick|chose|choose)\s+{_NOT_A_NAME}[a-z][\w.-]*\s+for\s+"
    rf"(?:the\s+|our\s+|all\s+)?[a-z]{{3,}}"
    rf"|^\W*for\s+(?:the\s+|our\s+|all\s+)?[a-z]{{3,}}(?:\s+[a-z]+){{0,3}},?\s+we\s+"
    rf"(?:use|go with|picked|chose)\s+{_NOT_A_NAME}[a-z][\w.-]*\W*$"
)
_NAME_INSIDE = re.compile(r"(?<=\w)[\s,:]+(?!I\b)[A-Z][a-z]+\b|\b[a-z]+-[a-z]+\b")


# --------------------------------------------------------------------------------- context


@dataclass(slots=True)
class _Context:
    statements: list[Statement]
    consumed: set[int] = field(default_factory=set)
    tainted_turns: set[int] = field(default_factory=set)
    story_turns: set[int] = field(default_factory=set)
    turn_opening: dict[int, str] = field(default_factory=dict)
    speakers: dict[int, Speaker] = field(default_factory=dict)
    done_sections: set[tuple[int, str]] = field(default_factory=set)
    story_sections: dict[str, bool] = field(default_factory=dict)
    section_categories: dict[str, Category | None] = field(default_factory=dict)
    symptom_used: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    def same_turn(self, i: int, j: int) -> bool:
        return 0 <= j < len(self.statements) and self.statements[j].turn == self.statements[i].turn

    def section_category(self, section: str) -> Category | None:
        if not section:
            return None
        if section not in self.section_categories:
            self.section_categories[section] = _section_category(section)
        return self.section_categories[section]

    def story_section(self, section: str) -> bool:
        # Headings repeat across a long thread; the big pattern runs once per distinct one.
        known = self.story_sections.get(section)
        if known is None:
            known = bool(section) and r.STORY_SECTION.search(section) is not None
            self.story_sections[section] = known
        return known


# An order put as a question ("move it while you're there?") suggests more than it asks for
# work, unlike "can you add …?".
_SUGGESTS = re.compile(r"(?i)^(?!\W*(?:can|could|would)\s+you\b).*\?\s*$")


def _prepare(statements: list[Statement]) -> _Context:
    ctx = _Context(statements)
    injected = 0
    requests: dict[int, int] = {}
    for s in statements:
        if s.turn not in ctx.turn_opening:
            ctx.turn_opening[s.turn] = s.text
            ctx.speakers[s.turn] = s.speaker
        if r.INJECTION.search(s.text, s.low):
            injected += 1
            ctx.tainted_turns.add(s.turn)
        if s.speaker is not Speaker.USER:
            continue
        if r.STORY.search(s.text, s.low) or ctx.story_section(s.section):
            ctx.story_turns.add(s.turn)
        if r.TASK_REQUEST.match(s.text) and not _SUGGESTS.match(s.text):
            requests[s.turn] = requests.get(s.turn, 0) + 1
    # A user turn of several requests is a task brief: its other imperatives ("Use the file
    # tools to examine ...") instruct that task, like a story's do.
    ctx.story_turns.update(turn for turn, count in requests.items() if count >= TASK_BRIEF)
    if injected:
        ctx.notes.append(
            f"ignored {len(ctx.tainted_turns)} turn(s) with instruction-like text aimed at the "
            "agent or the memory (possible prompt injection)"
        )
    return ctx


# ----------------------------------------------------------------------------- scope filter


def _out_of_scope(
    ctx: _Context, s: Statement, core: str, low: str, bug: bool, strong: bool
) -> bool:
    """Seed 001 "Memory Scope": feature, story, procedural and status talk is not memory."""
    if ctx.story_section(s.section):
        return True
    if r.STORY.search(core, low) or _any(r.FEATURE, core, low) or _ticket(core, low):
        return True
    if r.UI_ELEMENT.search(core, low) and r.UI_PRESENTATION.search(core, low):
        return True
    if _INTRO_RE.search(core):
        return True
    if r.PROCEDURAL.match(core):
        return True
    if not strong and r.TASK_REQUEST.match(core):
        return True
    # "Fixed by ..." reads like a status line but is the fix of a bug pattern.
    return not bug and r.STATUS.match(core) is not None


_STANDARD_PREFIXES = frozenset(
    {
        "ISO",
        "UTF",
        "SHA",
        "PEP",
        "RFC",
        "ES",
        "MD",
        "HTTP",
        "TLS",
        "SSL",
        "AES",
        "RSA",
        "ECMA",
        "IEEE",
        "X",
        "WCAG",
        "H",
        "P",
    }
)


def _ticket(text: str, low: str) -> bool:
    if not r.TICKET.opens(low):
        return False
    for match in r.TICKET.pattern.finditer(text):
        if match.group(0).split("-", 1)[0] not in _STANDARD_PREFIXES:
            return True
    return False


# ------------------------------------------------------------------------------- signals


def _signals(s: Statement, core: str, low: str) -> _Signals:
    sig = _Signals()
    opened = r.SIGNAL_INDEX.open_rules(s.low)

    def found(rules: tuple[r.Rule, ...], text: str = core) -> bool:
        return r.first_open(rules, text, opened) is not None

    user = s.speaker is Speaker.USER
    descriptive = found(r.DESCRIPTIVE)
    # "X is always recomputed" does not turn into a rule because "always" opens a clause.
    sig.strong = found(r.STRONG) and not (descriptive and r.ALWAYS_NEVER.search(core, low))
    sig.strong = sig.strong or (user and found(r.STRONG_USER))
    # A user stating a rule as a fact ("the UI never imports core") still states a rule; an
    # agent describing what code does ("the count is always recomputed") does not.
    sig.plain_always = (
        not sig.strong
        and s.speaker is Speaker.USER
        and r.ALWAYS_NEVER.search(core, low) is not None
        # ("never done a big tauri app": the speaker's experience, no rule)
        and ("never" not in low or _rule_without_experience(core))
    )
    sig.preference = found(r.PREFERENCE) or (user and found(r.PREFERENCE_USER))
    sig.decision = found(r.DECISION) or (user and found(r.DECISION_USER))
    sig.convention = found(r.CONVENTION_STRONG)
    sig.bug = found(r.BUG)
    sig.lesson = found(r.LESSON, s.text)
    if s.lead:
        sig.lead_family = _lead_family(s.lead)
    # "Decision: ...", "Lesson learned: ..." - the writer labelled the statement.
    family = _label_family(s.text)
    # An agent's "Note:" is a remark about the change at hand, not a lesson.
    if family and (s.speaker is Speaker.USER or not s.low.startswith("note")):
        sig.lead_family = family
        sig.labeled = True
    return sig


_EXPERIENCE = re.compile(rf"(?i)\bnever\s+(?:{r.EXPERIENCED})\b")


def _rule_without_experience(core: str) -> bool:
    """Whether "always" or "never" is left once "never done/used/…" is taken out."""
    rest = _EXPERIENCE.sub(" ", core)
    return r.ALWAYS_NEVER.search(rest, rest.lower()) is not None


def _lead_family(lead: str) -> str:
    lead = lead.lower().rstrip(":").strip()
    return r.LEAD_FAMILIES.get(lead) or r.LEAD_FAMILIES.get(lead.rstrip("s"), "")


def _label_family(text: str) -> str:
    label = _LABEL_PREFIX_RE.match(text) if ":" in text[:62] else None
    return _lead_family(label.group("label")) if label is not None else ""


def _may_signal(ctx: _Context, s: Statement) -> bool:
    """Cheap test run on every sentence: could any signal family match it at all?"""
    return (
        r.SIGNAL_GATE.search(s.low) is not None
        or s.low.split(" ", 1)[0] in r.IMPERATIVE_OPENERS
        or _lead_matters(ctx, s)
        or bool(_label_family(s.text))
    )


def _lead_matters(ctx: _Context, s: Statement) -> bool:
    """A bold-lead bullet counts without signal words under a decision/convention/lesson
    heading, or when the lead itself names the kind of statement (`**Decision:**`)."""
    if not s.lead:
        return False
    if _lead_family(s.lead):
        return True
    return s.bullet and ctx.section_category(s.section) is not None


def _section_category(section: str) -> Category | None:
    for pattern, category in r.SECTION_CATEGORIES:
        if pattern.search(section):
            return category
    return None


def _hedge_penalty(text: str) -> float:
    penalty = HEDGE_STRONG_PENALTY * len(r.HEDGE_STRONG.findall(text))
    penalty += HEDGE_WEAK_PENALTY * len(r.HEDGE_WEAK.findall(text))
    return min(penalty, HEDGE_MAX_PENALTY)


def _penalties(s: Statement, main: str, family: Family, ctx: _Context) -> float:
    penalty = _hedge_penalty(main)
    if r.LOCAL.search(main):
        penalty += LOCAL_PENALTY
    if r.GENERIC.search(main) and not r.TECH_TOKEN.search(main):
        penalty += GENERIC_PENALTY
    if s.speaker is Speaker.AGENT:
        penalty += AGENT_PENALTY.get(family, DEFAULT_AGENT_PENALTY)
    elif s.pasted:
        penalty += PASTED_PENALTY
    if s.turn in ctx.story_turns:
        penalty += STORY_PENALTY
    return penalty


def _split_reason(text: str) -> tuple[str, str]:
    match = r.REASON.search(text, text.lower())
    if match is None or match.start() < 8:
        return text, ""
    return text[: match.start()].rstrip(" ,;"), text[match.end() :].strip()


def _split_tradeoff(text: str) -> tuple[str, str]:
    match = r.TRADEOFF.search(text, text.lower())
    if match is None or match.start() < 8:
        return text, ""
    return text[: match.start()].rstrip(" ,;"), text[match.end() :].strip()


def _main_clause(text: str) -> str:
    return _split_reason(_split_tradeoff(text)[0])[0]


DEFAULT_SCOPE = "project-wide"


def _scope(text: str) -> str:
    match = r.SCOPE.search(text)
    return match.group(0).strip() if match else DEFAULT_SCOPE


def _recurrence(ctx: _Context, start: int, end: int) -> int:
    return recurrence(ctx.statements, start, end)


def recurrence(statements: list[Statement], start: int, end: int) -> int:
    """How often statements[start:end] say the problem happened ("the second time")."""
    occurrences = 1
    for j in range(max(0, start), min(len(statements), end)):
        statement = statements[j]
        if not r.RECURRENCE.opens(statement.low):
            continue
        for match in r.RECURRENCE.pattern.finditer(statement.text):
            word = (match.group("ordinal") or match.group("count") or match.group(0)).lower()
            if word.isdigit():
                occurrences = max(occurrences, min(int(word), 99))
            else:
                occurrences = max(occurrences, _NUMBER_WORDS.get(word, 2))
    return occurrences


# ------------------------------------------------------------------------------ builders


# ", and never ...": a second rule joined to the first; a trailing task ends before it.
_NEXT_RULE_RE = re.compile(r",\s+(?:and|but)\s+(?=(?:never|always|don'?t|do\ not)\b)", re.I | re.X)


def _tidy(content: str) -> str:
    """Drop asides and the one-off task tacked onto a rule ("..., so rename sync_core"),
    keeping any further rule the sentence joins on ("..., and never ...")."""
    content = _ASIDE_RE.sub("", content)
    parts = _NEXT_RULE_RE.split(content, maxsplit=1)
    head = _TRAILING_TASK_RE.sub("", parts[0])
    return head if len(parts) == 1 else f"{head}, and {parts[1]}"


def _new(
    s: Statement, i: int, category: Category, family: Family, content: str, confidence: float
) -> Candidate:
    content = _tidy(content)
    topics = _topics(content)
    # The title names what the rule is about, not what its reason mentions.
    named = _topics(_main_clause(content)) or topics
    return Candidate(
        category=category,
        speaker=s.speaker,
        turn=s.turn,
        index=i,
        content=_defuse(_clip(_sentence(content))),
        confidence=confidence,
        family=family,
        topic_tags=[tag for tag, _ in topics[:4]],
        topic_title=named[0][1] if named else "",
        lead=s.lead if 0 < len(s.lead.split()) <= 6 else "",
        speakers={s.speaker},
    )


def _follow(ctx: _Context, i: int, pattern: re.Pattern[str]) -> tuple[int, str] | None:
    """The next statement in the same turn when it starts as `pattern` says."""
    for j in range(i + 1, i + 1 + FOLLOW_LOOKAHEAD):
        if not ctx.same_turn(i, j) or j in ctx.consumed:
            return None
        text = strip_fillers(ctx.statements[j].text)
        match = pattern.match(text)
        if match is not None:
            return j, text[match.end() :].strip() if match.end() else text
    return None


def _quoted_at(text: str, at: int) -> bool:
    """Whether position `at` of `text` is inside a quotation ("…", “…”) or a code span."""
    before = text[:at]
    return (
        before.count('"') % 2 == 1
        or before.count("`") % 2 == 1
        or (before.count("\u201c") > before.count("\u201d"))
    )


MIN_CAUSE_WORDS = 2


def _build_bug(ctx: _Context, i: int, s: Statement, core: str) -> Candidate | None:
    text = core
    fix = root = symptom = ""
    fix_match = r.FIX.search(text, text.lower())
    if fix_match is not None and _quoted_at(text, fix_match.start()):
        fix_match = None
    if fix_match is not None:
        fix = text[fix_match.end() :].strip()
        text = text[: fix_match.start()].strip()
    root_match = r.ROOT.search(text, text.lower())
    if root_match is not None and _quoted_at(text, root_match.start()):
        # '… with an executor OOM — "ExecutorLostFailure (… caused by one of the running
        # tasks)"': a quoted error message's words, not the speaker's account of a cause.
        if fix_match is None:
            return None
        root_match = None
    if root_match is not None:
        root = text[root_match.end() :].strip()
        before = text[: root_match.start()].strip(" ,;:")
        named = root_match.group("symptom")
        if named:
            symptom = named
        elif r.SYMPTOM.search(before, before.lower()) and len(before.split()) >= 4:
            symptom = core if _OPEN_COPULA_RE.search(before) else before
    elif not fix:
        root = text
    for j in range(i + 1, i + 1 + FOLLOW_LOOKAHEAD):
        if not ctx.same_turn(i, j) or j in ctx.consumed:
            break
        follow = strip_fillers(ctx.statements[j].text)
        found = r.FIX.pattern.match(follow)
        if found is not None and not fix:
            fix = follow[found.end() :].strip()
            ctx.consumed.add(j)
            continue
        found = r.ROOT.pattern.match(follow)
        if found is not None and not root:
            root = follow[found.end() :].strip()
            ctx.consumed.add(j)
            continue
        break
    if not symptom:
        for j in range(i - 1, max(-1, i - 1 - SYMPTOM_LOOKBACK), -1):
            prior = ctx.statements[j]
            if j in ctx.symptom_used or prior.turn in ctx.tainted_turns:
                continue
            if _QUESTION_END_RE.search(prior.text) or r.PROCEDURAL.match(prior.text):
                continue
            if (
                r.SYMPTOM.search(prior.text, prior.low)
                and not _any(r.BUG, prior.text, prior.low)
                # "we send all exceptions to Rollbar, make sure this route reports too": a
                # rule said near the report is not the report
                and not said_as_rule(prior.text)
            ):
                symptom = strip_fillers(prior.text)
                ctx.symptom_used.add(j)
                break
    if not (root or fix):
        return None
    if not fix and len(root.split()) < MIN_CAUSE_WORDS:
        return None  # "… idle time caused by CI.": a word names no cause
    content = _SYMPTOM_LEAD_RE.sub("", symptom) if symptom else core
    confidence = BASE[Family.BUG]
    if root and fix:
        confidence += BUG_COMPLETE_BONUS
    if symptom:
        confidence += BUG_COMPLETE_BONUS
    candidate = _new(s, i, Category.BUG_PATTERNS, Family.BUG, content, confidence)
    candidate.root_cause = _defuse(_clip(root.rstrip(".")))
    candidate.fix = _defuse(_clip(fix.rstrip(".")))
    candidate.occurrences = _recurrence(ctx, i - SYMPTOM_LOOKBACK, i + 5)
    extra = _topics(f"{root} {fix}")
    candidate.topic_tags = list(dict.fromkeys(candidate.topic_tags + [t for t, _ in extra]))[:4]
    if not candidate.topic_title and extra:
        candidate.topic_title = extra[0][1]
    return candidate


def _build_decision(ctx: _Context, i: int, s: Statement, core: str) -> Candidate:
    main, trade = _split_tradeoff(core)
    main, reason = _split_reason(main)
    for pattern, replacement in _DECISION_LEADS:
        changed = pattern.sub(replacement, main, count=1)
        if changed != main:
            main = changed
            break
    follow = _follow(ctx, i, r.REASON_NEXT)
    if follow is not None and not reason:
        ctx.consumed.add(follow[0])
        reason = strip_fillers(ctx.statements[follow[0]].text)
    follow = _follow(ctx, i, r.TRADEOFF_NEXT)
    if follow is not None and not trade:
        ctx.consumed.add(follow[0])
        trade = follow[1]
    confidence = BASE[Family.DECISION] + (REASON_BONUS if reason else 0.0)
    confidence += TRADEOFF_BONUS if trade else 0.0
    if _any(r.STRONG, main, main.lower()):
        confidence += REASON_BONUS
    candidate = _new(s, i, Category.ARCHITECTURAL_DECISIONS, Family.DECISION, main, confidence)
    chosen = _CHOSEN_RE.search(main)
    if chosen is not None and not candidate.lead:
        candidate.lead = chosen.group("object").strip("`'\"")
    candidate.rationale = _defuse(_clip(reason.rstrip(".")))
    candidate.trade_offs = _defuse(_clip(trade.rstrip(".")))
    return candidate


def _build_lesson(ctx: _Context, i: int, s: Statement, core: str) -> Candidate:
    approach = ""
    split = _APPROACH_SPLIT_RE.search(core)
    if split is not None:
        approach = core[split.end() :]
    else:
        j = i + 1
        if ctx.same_turn(i, j) and j not in ctx.consumed:
            follow = strip_fillers(ctx.statements[j].text)
            low = follow.lower()
            if (_any(r.STRONG, follow, low) or _any(r.PREFERENCE, follow, low)) and not (
                r.PROCEDURAL.match(follow) or _QUESTION_END_RE.search(follow)
            ):
                approach = follow
                ctx.consumed.add(j)
    confidence = BASE[Family.LESSON] + (APPROACH_BONUS if approach else 0.0)
    candidate = _new(s, i, Category.IMPLEMENTATION_NOTES, Family.LESSON, core, confidence)
    candidate.approach = _defuse(_clip(_sentence(approach).rstrip("."))) if approach else ""
    return candidate


def _rule_category(core: str, sig: _Signals, section: Category | None) -> Category:
    if section is not None:
        return section
    if _PERSONAL_SCOPE.search(core):
        return Category.CODING_PREFERENCES
    if sig.convention:
        return Category.PROJECT_CONVENTIONS
    return rule_category(core)


_SPEAKS_TO_A_PERSON = re.compile(
    r"(?i)^\W*(?:[^:]{1,30}:\s*)?(?:(?:and|also|so|but|ok(?:ay)?|basically|pls|please|"
    r"actually|from now on|going forward|in (?:this|our) (?:repo|codebase|project))\W+)*"
    r"(?:we|i|you|let'?s|use|using|never|always|don'?t|dont|do|avoid|prefer|"
    r"keep|wrap|write|put|make|add|no|stop|return|call|pass|log|catch|handle|throw|raise|"
    r"only|check|validate|name|test|import|run|pin|move|go)\b"
)


# The speaker files the statement as the team's rule ("One rule for this repo from now on:
# …", "…, that's the standard from now on", "That's the rule for the whole app"): a
# standing convention, whatever its words are about (a personal one is caught first).
_CALLED_A_RULE = re.compile(
    r"(?i)\b(?:the|a|one|our|that'?s|this\s+is)\s+(?:rule|standard)"
    r"(?=\s*(?:[:.,;!—–-]|$|\s+(?:for|here|is|from|going|in|across|of\s+(?:the|this|our))\b))"
)


# A rule the speaker carries beyond this project, which makes it a personal coding preference
# rather than this repository's convention: "in any Spring code", "any Rust I write", "in
# every project", "my other projects / apps", "all my Rust code", "a personal rule", "how I
# like to write Vue in general", "whenever you write code for me".
_PERSONAL_SCOPE = re.compile(
    r"""(?ix)
      \b(?:in|for)\s+any\s+[\w#+.-]+\s+code\b
    | \b(?:any|every|all)\s+(?:[\w#+.-]+\s+){0,2}?i\s+(?:write|review|touch|work\ on)\b
    | \b(?:in|for|across|on)\s+(?:every|all|any|no)\s+(?:of\s+)?(?:my\s+)?(?:projects?|repos?
        |codebases?)\b
    | \bin\s+(?:everything|anything)(?=\s*(?:$|[,;.]))
    | \b(?:in|for)\s+(?:everything|anything|whatever)\s+(?:i|you)\s+(?:write|do|touch|review)\b
    | \bmy\s+(?:rule|preference|habit)\s+in\s+general\b
    | \bin\s+general\s+across\b
    | \b(?:in|for|across|on)\s+(?:every|all|any)\s+(?:of\s+)?my\s+apps?\b
    | \b(?:my|all\ my)\s+(?:other\s+)?(?:projects|apps|repos|codebases)\b
    | \b(?:all|every|any)\s+(?:of\s+)?my\s+(?:[\w#+.-]+\s+)?code\b
    | \b(?:for|in)\s+all\s+my\s+[\w#+.-]+\b
    | \bpersonal\s+(?:rule|preference|taste|style)\b
    | \bi\s+(?:write|like|want)\s+(?:(?:to\s+)?[\w#+.-]+\s+){0,3}?in\s+general\b
    | \bwrites?\s+(?:\w+\s+)?code\s+for\s+me\b
    """
)


# What ties a statement to this repository's things: a path or a source file, the repo, its
# CI, deploys, environments, migrations, services, packages and linters, "we" and "our". A
# code rule naming none of them holds wherever its speaker writes code.
_REPO_ANCHOR = re.compile(
    r"(?i)\w/|\.(?:py|ts|js|go|rs|kt|java|rb|yml|yaml|json|toml|sql|md|tsx|jsx|cs|swift|dart|c|h)\b|"
    r"\b(?:repo|repository|project|codebase|here|ci|pipelines?|deploy\w*|prod\w*|staging|prs?|"
    r"pull requests?|branch\w*|migrations?|releases?|envs?|environments?|services?|teams?|our|"
    r"we|crates?|packages?|modules?|workspaces?|monorepo|checks?|hooks?)\b|lint"
)


def rule_category(core: str) -> Category:
    """Preference, convention or decision for a rule's wording.

    A rule the speaker carries beyond this project ("in any Spring code", "any Rust I
    write") is a personal coding preference. Otherwise a model trained on labeled
    statements decides (see category.py): its words tell a design choice with a reason or
    an alternative from a standing team rule better than the subject-word table and the
    "choice word" gate this replaced (see docs/decisions.md, "Offline engine v2, sixth part").
    """
    if _PERSONAL_SCOPE.search(core):
        return Category.CODING_PREFERENCES
    if _CALLED_A_RULE.search(core):
        return Category.PROJECT_CONVENTIONS
    chosen = _word_model_rule_category(core)
    if chosen is Category.CODING_PREFERENCES and not _SPEAKS_TO_A_PERSON.match(core):
        # "Every migration starts with SET lock_timeout", "DTO fields … are nullable": a
        # statement about the project's things is a convention; a preference tells someone
        # how to write code ("never use print()", "we always wrap errors"). (`is_style_rule`
        # looks again once the item is whole.)
        return Category.PROJECT_CONVENTIONS
    if chosen is not None:
        return chosen
    if r.ARCH_SUBJECT.search(core):
        return Category.ARCHITECTURAL_DECISIONS
    return Category.CODING_PREFERENCES


def is_style_rule(content: str) -> bool:
    """Whether a rule filed as a project convention is coding style, a preference.

    "Pytest tmp_path and monkeypatch, always.", "constructor injection only": the word
    model reads coding style and the rule names nothing of this repository (no path, file,
    CI, deploy, service, package, linter, "we" or "our"), so it holds wherever its speaker
    writes code (LABELING.md; seed 001: "solution-wide coding style"). Asked of the whole
    item, after the sentences of one rule were joined.
    """
    if _REPO_ANCHOR.search(content):
        return False
    return _word_model_rule_category(content) is Category.CODING_PREFERENCES


def _word_model_rule_category(core: str) -> Category | None:
    """The word model's choice among the three rule categories (None without a model)."""
    from app.engines.offline.category import choose

    return choose(
        core,
        (
            Category.CODING_PREFERENCES,
            Category.PROJECT_CONVENTIONS,
            Category.ARCHITECTURAL_DECISIONS,
        ),
    )


def _build_rule(
    ctx: _Context, i: int, s: Statement, core: str, sig: _Signals, family: Family
) -> Candidate:
    section = ctx.section_category(s.section) if s.bullet else None
    category = _rule_category(core, sig, section)
    confidence = BASE[family]
    if family is Family.DIRECTIVE and not sig.strong:
        confidence = PLAIN_ALWAYS_USER
    content = core
    reason = r.REASON.search(core, core.lower()) is not None
    follow = _follow(ctx, i, r.REASON_NEXT)
    if follow is None and re.match(r"^(?:do\ not|don'?t|never|avoid)\b", core, re.I):
        follow = _follow(ctx, i, _IMPERATIVE_FOLLOW_RE)
    if follow is not None:
        ctx.consumed.add(follow[0])
        content = f"{_sentence(core)} {_sentence(strip_fillers(ctx.statements[follow[0]].text))}"
        reason = True
    if reason:
        confidence += REASON_BONUS
    opening = ctx.turn_opening.get(s.turn, "")
    if s.speaker is Speaker.USER and r.REJECT.match(opening):
        confidence += CORRECTION_BONUS
    candidate = _new(s, i, category, family, content, confidence)
    if category is Category.PROJECT_CONVENTIONS:
        candidate.scope = _scope(core)
    return candidate


def _build_named_design(ctx: _Context, i: int, s: Statement, name: str) -> Candidate:
    """`### Architecture: SAM Pattern` plus the bold leads of its bullets: one decision."""
    parts: list[str] = []
    for j in range(i, len(ctx.statements)):
        other = ctx.statements[j]
        if other.turn != s.turn or other.section != s.section:
            break
        ctx.consumed.add(j)
        if other.lead and other.lead not in parts:
            parts.append(other.lead)
    content = f"Architecture follows the {name}"
    if parts:
        content += f" ({', '.join(parts[:6])})"
    candidate = _new(
        s, i, Category.ARCHITECTURAL_DECISIONS, Family.DECISION, content, BASE[Family.DECISION]
    )
    candidate.lead = name
    return candidate


# ------------------------------------------------------------------------------ classify


def _classify(ctx: _Context, i: int) -> Candidate | None:
    s = ctx.statements[i]
    if s.turn in ctx.tainted_turns:
        return None
    if s.section and (s.turn, s.section) not in ctx.done_sections:
        named = r.NAMED_DESIGN.match(s.section)
        if named is not None and not ctx.story_section(s.section):
            ctx.done_sections.add((s.turn, s.section))
            return _finish(
                ctx, s, _build_named_design(ctx, i, s, named.group("name").strip()), s.section
            )
    text = s.text
    if len(text) < MIN_CLASSIFY_CHARS or _QUESTION_END_RE.search(text) or asked_without_mark(text):
        return None
    if not _may_signal(ctx, s):
        return None
    core = strip_fillers(text)
    if len(core) < MIN_CLASSIFY_CHARS:
        return None
    low = core.lower()
    sig = _signals(s, core, low)
    if not (
        sig.strong
        or sig.plain_always
        or sig.preference
        or sig.decision
        or sig.convention
        or sig.bug
        or sig.lesson
        or sig.labeled
        or s.lead
    ):
        return None
    if _out_of_scope(ctx, s, core, low, sig.bug, sig.strong):
        return None
    # A root cause or fix is concrete by nature; its symptom and fix complete it below.
    choice = (sig.decision or sig.preference) and not sig.strong
    if not sig.bug and not _has_substance(core, _topics(core), choice=choice):
        return None
    # Story-level user turns (a pasted story with acceptance criteria) only keep explicit
    # always/never rules; everything else in them is the story itself.
    if s.turn in ctx.story_turns and not sig.strong:
        return None
    candidate = _pick(ctx, i, s, core, sig)
    if candidate is None:
        return None
    return _finish(ctx, s, candidate, core)


def _build_labeled(
    ctx: _Context, i: int, s: Statement, core: str, sig: _Signals
) -> Candidate | None:
    """A statement its writer labelled ("Decision: ...", "Convention: ...")."""
    family = sig.lead_family
    if family == "bug":
        return None  # a "Fix:" or "Root cause:" without the other half says too little
    if family == "decision":
        return _build_decision(ctx, i, s, core)
    if family == "lesson":
        return _build_lesson(ctx, i, s, core)
    kind = Family.CONVENTION if family == "convention" else Family.DIRECTIVE
    candidate = _build_rule(ctx, i, s, core, sig, kind)
    if family == "convention":
        candidate.category = Category.PROJECT_CONVENTIONS
        candidate.scope = _scope(core)
    return candidate


def _symptom_near(ctx: _Context, i: int) -> bool:
    """Whether a symptom was described just before statement `i` (a "turned out" explains it)."""
    for j in range(i - 1, max(-1, i - 1 - SYMPTOM_LOOKBACK // 2), -1):
        prior = ctx.statements[j]
        if r.SYMPTOM.search(prior.text, prior.low) and not _QUESTION_END_RE.search(prior.text):
            return True
    return False


def _pick(ctx: _Context, i: int, s: Statement, core: str, sig: _Signals) -> Candidate | None:
    lead = sig.lead_family
    # "Turns out X" right after a symptom explains it: X is the root cause.
    explains = sig.lesson and r.ROOT.search(s.text, s.low) is not None
    if sig.bug or lead == "bug" or (explains and _symptom_near(ctx, i)):
        built = _build_bug(ctx, i, s, core)
        if built is not None:
            return built
    textual = sig.strong or sig.preference or sig.decision or sig.convention or sig.lesson
    if sig.labeled:
        return _build_labeled(ctx, i, s, core, sig)
    if not textual and not sig.plain_always:
        # Only a bold lead or a heading says what this is: it must at least state something
        # general ("all", "never", "every") to be a solution-wide fact.
        section = ctx.section_category(s.section) if s.bullet else None
        category = section or _LEAD_CATEGORY.get(lead)
        if category is None or not s.lead or not r.GENERAL.search(core):
            return None
        candidate = _build_rule(ctx, i, s, core, sig, Family.SECTION)
        candidate.category = category
        return candidate
    if sig.decision:
        return _build_decision(ctx, i, s, core)
    if sig.lesson:
        return _build_lesson(ctx, i, s, core)
    if sig.strong:
        return _build_rule(ctx, i, s, core, sig, Family.DIRECTIVE)
    if sig.preference:
        return _build_rule(ctx, i, s, core, sig, Family.PREFERENCE)
    if sig.convention:
        # A convention is stated with a verb; a bare noun phrase names a topic.
        if not r.CONVENTION_VERB.search(core):
            return None
        return _build_rule(ctx, i, s, core, sig, Family.CONVENTION)
    return _build_rule(ctx, i, s, core, sig, Family.DIRECTIVE)


def _finish(ctx: _Context, s: Statement, candidate: Candidate, main: str) -> Candidate:
    penalty = _penalties(s, _main_clause(main), candidate.family, ctx)
    # Code identifiers in a design bullet point at one feature's code, not a rule.
    if candidate.family is Family.SECTION and "`" in s.text:
        penalty += 0.1
    candidate.confidence = candidate.confidence - penalty
    return candidate


def skip_section(heading: str) -> bool:
    """Headings whose prose is never memory (story, acceptance criteria, reports of work)."""
    return r.STORY_SECTION.search(heading) is not None


def find_candidates(reading: Reading) -> tuple[list[Candidate], list[str]]:
    """Every candidate item of a conversation, in order, with notes for the log.

    Candidates are not merged yet and their confidence is not yet adjusted for how the user
    answered: `extract_merge.finalize` does both.
    """
    statements = reading.statements
    ctx = _prepare(statements)
    # A user turn that held a story section (acceptance criteria...) is a story request.
    ctx.story_turns.update(
        turn for turn in reading.skipped_turns if ctx.speakers.get(turn) is Speaker.USER
    )
    candidates: list[Candidate] = []
    for i in range(len(statements)):
        if i in ctx.consumed:
            continue
        candidate = _classify(ctx, i)
        if candidate is not None:
            candidates.append(candidate)
    return candidates, ctx.notes
