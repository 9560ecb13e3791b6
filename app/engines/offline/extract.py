"""Rule-based extraction of solution-wide knowledge from one conversation (no network).

This module owns the public entry point of the offline engine's extraction, `extract`: it
validates its input, reads the conversation into statements (`extract_text.py`), judges them
with the pattern tables (`extract_rules.py`, applied by `extract_items.py`), merges and titles
the results (`extract_merge.py`) and returns an
`ExtractionResult` of `MemoryItem`s in seed 001's five categories, each with a confidence the
writer routes on (>= 0.75 committed, 0.5-0.75 review queue, below 0.5 dropped; nothing below
`MIN_CONFIDENCE` is returned at all). It is pure and deterministic: the same text, source and
date always give the same items.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from datetime import date

from app.core.errors import InvalidInput
from app.core.models import Category, ExtractionResult, MemoryItem, clean_token, utc_now
from app.core.words import STOP_WORDS, as_written
from app.engines.offline.dialogue import (
    INTRODUCES_PASTE,
    Dispute,
    Fix,
    OpenPoint,
    Proposal,
    ReportFact,
    Reversal,
    Swap,
    describes_trouble,
    main_clause,
    measures,
    moves_to,
    reports_trouble,
    without_cause_label,
)
from app.engines.offline.extract_items import (
    DEFAULT_SCOPE,
    MAX_CONTENT_CHARS,
    Candidate,
    Family,
    asked_without_mark,
    capitalize,
    find_candidates,
    is_style_rule,
    lower_first,
    recurrence,
    rule_category,
    skip_section,
    tokens,
)
from app.engines.offline.extract_merge import finalize, joined_detail, stems
from app.engines.offline.extract_rules import EXPERIENCED
from app.engines.offline.extract_text import (
    ADDRESSED_TO_AI_RE,
    Speaker,
    Statement,
    Turn,
    read_statements,
    split_turns,
)
from app.engines.offline.folding import Folded
from app.engines.offline.judge import (
    EMPTY_CONTEXT,
    Context,
    Judge,
    features,
    load_judge,
    prepare,
)
from app.engines.offline.manifest_notes import manifest_items

__all__ = ["MAX_ITEMS", "MIN_CONFIDENCE", "extract"]

# Items below this would be dropped by the writer anyway (seed 001 routes < 0.5 nowhere).
MIN_CONFIDENCE = 0.5
# One conversation rarely holds more solution-wide facts than this; a flood means the rules
# are reading something that is not a conversation, so only the strongest are kept.
MAX_ITEMS = 40


def _closed(text: str) -> str:
    """A detail field ending as a sentence does: the file writes the fields one after the
    other ("Root cause: … `Decimal`. Fix: …"), and without the stop they run together."""
    text = text.strip()
    return text if not text or text.endswith((".", "!", "?", "…")) else f"{text}."


# What opens a chat message and says nothing of the item: "Ah, and …", "Quick change: …",
# "Heads up, …", "Ok so …" ("so far", "right now", "well-known" are words of the item).
_CHAT_OPENER = re.compile(
    r"(?i)^(?:(?:(?:ah|oh|ok(?:ay)?|hmm+|alright|anyway|btw|also|and|plus)(?:\s*,\s*|\s+)"
    r"|(?:so|yes|yeah|yep|yup|no|nope|nah|right|correct|wait|hello|hi|hey|wow)\s*,\s*"
    r"|(?:quick|small)\s+(?:change|note|thing|one)\s*[:,—–-]\s*"
    r"|heads[\s-]up\s*[:,—–-]\s*|(?:one\s+)?(?:more|last|other)\s+thing\s*[:,—–-]\s*"
    r"|fyi\s*[:,—–-]\s*))+(?=\S+\s+\S+\s+\S)"
)


def _without_chat_opener(content: str) -> str:
    """The item's content without the words that only open the chat message."""
    cut = _CHAT_OPENER.match(content)
    if cut is None:
        return content
    return capitalize(content[cut.end() :])


def _item(candidate: Candidate, source: str, today: date) -> MemoryItem:
    speaker_tag = "source:user" if Speaker.USER in candidate.speakers else "source:agent"
    return MemoryItem(
        category=candidate.category,
        title=candidate.title,
        content=_without_chat_opener(candidate.content),
        confidence=candidate.confidence,
        sources=[source],
        extracted=today,
        tags=[*candidate.topic_tags, speaker_tag],
        rationale=_closed(candidate.rationale),
        trade_offs=_closed(candidate.trade_offs),
        scope=candidate.scope,
        root_cause=_closed(candidate.root_cause),
        fix=_closed(candidate.fix),
        occurrences=candidate.occurrences,
        approach=_closed(candidate.approach),
        lessons=_closed(candidate.lessons),
    )


# A fix confirmed by a passing run, by the user's words, or only guessed at.
FIX_CONFIRMED = 0.85
FIX_HEDGED = 0.6


def _with_dialogue_units(
    found: list[Candidate], turns: list[Turn], statements: list[Statement]
) -> list[Candidate]:
    """Bug patterns from confirmed fixes (replacing sentence-level bug guesses inside them)."""
    from app.engines.offline.dialogue import (
        find_disputes,
        find_fixes,
        find_open_points,
        find_proposals,
        find_reports,
        find_reversals,
        find_swaps,
        read_dialogue,
    )

    dialogue = read_dialogue(turns)
    reversals = find_reversals(dialogue)
    taken_back = _retracted(reversals, statements, found)
    found = [c for c in found if c.index not in taken_back]
    found = _with_reversals(found, reversals, statements)
    found = _with_standing_rules(found, statements)
    found = _with_advice_after_so(found, statements)
    found = _with_marked(found, statements)
    found = _with_listed_rules(found, statements)
    found = _with_acknowledged(found, turns, statements)
    _moves_replace_earlier(found)
    _faulted_replaced(found)
    found = [c for c in found if c.index not in taken_back or REPLACES in "".join(c.topic_tags)]
    found = _folded_retirements(found)
    found = _with_disputes(found, find_disputes(dialogue))
    points = find_open_points(dialogue)
    found = _with_open_points(found, points, statements)
    found = _with_answers(found, find_proposals(dialogue), statements)
    found = _with_reports(found, find_reports(dialogue), statements)
    found = _with_approved_plans(found, turns, statements)
    found = _with_picked_options(found, turns, statements)
    found = _with_either_or_picks(found, turns, statements)
    found = _with_which_picks(found, turns, statements)
    found = _with_named_acceptances(found, turns, statements)
    found = _with_swaps(found, find_swaps(dialogue), statements)
    found = _with_value_changes(found, statements)
    found = _without_refusals(found, statements)
    found = _pointed_back(_joined_runs(_cleaned(found, statements), statements), statements)
    found = _with_terse_choices(found, statements)
    found = _without_reasons(found, reversals, statements)
    # "Found the mismatch: the tokens say 4px, Figma 6px" and the user declines to choose:
    # the disagreement is the finding, the open point holds it, and nothing was fixed.
    fixes = [
        f
        for f in find_fixes(dialogue)
        if (
            f.fix
            or not any(
                f.start <= p.turn and len(tokens(f.cause) & tokens(p.text)) >= 2 for p in points
            )
        )
        and not any(f.start <= p.turn <= f.end for p in points)
    ]
    if not fixes:
        return found
    # A unit covers its turns, and the agent's closing account right after it ("Fixed: all
    # 12 order tests pass"): a bug read there that names no cause of its own is the same
    # one, already told.
    spans = [(f.start, f.end + 1) for f in fixes]
    kept = [
        c
        for c in found
        if not (
            c.category is Category.BUG_PATTERNS
            and any(a <= c.turn <= b - (c.root_cause != "") for a, b in spans)
        )
    ]
    starts: dict[int, int] = {}  # each fix unit's candidate -> the turn its report began
    for fix in fixes:
        index = next((i for i, s in enumerate(statements) if s.turn >= fix.end), len(statements))
        symptom = fix.symptom or fix.cause
        report = [i for i, s in enumerate(statements) if fix.start <= s.turn <= fix.end]
        kept.append(
            Candidate(
                category=Category.BUG_PATTERNS,
                speaker=Speaker.AGENT,
                turn=fix.end,
                index=index,
                content=_sentence_of(symptom),
                confidence=FIX_HEDGED if fix.hedged else FIX_CONFIRMED,
                family=Family.BUG,
                root_cause=without_cause_label(fix.cause).rstrip("."),
                fix=fix.fix.rstrip("."),
                speakers={Speaker.AGENT},
                occurrences=recurrence(statements, report[0], report[-1] + 1) if report else 1,
            )
        )
        starts[id(kept[-1])] = fix.start
    kept = _without_told_symptoms(kept, fixes, statements)
    kept = _without_told_causes(kept, fixes, statements)
    _with_closing_accounts(kept, statements, starts)
    kept.sort(key=lambda c: c.index)
    return kept


def _without_told_causes(
    found: list[Candidate], fixes: list[Fix], statements: list[Statement]
) -> list[Candidate]:
    """The agent's sentence a fixed bug took as its cause is no rule or decision as well.

    "Both functions create a session and never close it, and if `find_capture` raises, the
    session stays mid-transaction forever": "never" made it a rule, but the bug it explains
    already holds it as the root cause.
    """
    causes = [(f.start, f.end, " ".join(f.cause.lower().split())) for f in fixes if f.cause.strip()]
    if not causes:
        return found

    def told(c: Candidate) -> bool:
        if c.family is Family.BUG or Speaker.USER in c.speakers:
            return False
        if not 0 <= c.index < len(statements):
            return False
        said = " ".join(statements[c.index].text.lower().rstrip(".!? ").split())
        return len(said) >= MIN_TOLD_CAUSE and any(
            a <= c.turn <= b and said in cause for a, b, cause in causes
        )

    return [c for c in found if not told(c)]


MIN_TOLD_CAUSE = 20


# "symptoms: the host sees gaps …": a label that names what follows as trouble.
_TROUBLE_LABEL = re.compile(
    r"(?i)^\W*(?:symptoms?|problem|issue|bug|error|what (?:i|we) see)\s*:\s*"
)


def _without_told_symptoms(
    found: list[Candidate], fixes: list[Fix], statements: list[Statement]
) -> list[Candidate]:
    """A sentence a fixed bug took as its symptom is no rule as well when it reports trouble.

    "The nightly `orders_etl` flow failed again on prefect, always on a different day's
    file": "always" tells when it fails, and the fix that followed shows the sentence
    reported trouble. A rule said in the same sentence as the report ("This project is
    managed with uv — run everything through `uv run`") names no failure and stays.
    """
    told = {" ".join(f.symptom.lower().rstrip(".!? ").split()) for f in fixes if f.symptom}
    told.discard("")
    if not told:
        return found

    def is_symptom(c: Candidate) -> bool:
        if c.family is Family.BUG or not 0 <= c.index < len(statements):
            return False
        said = statements[c.index].text
        flat = " ".join(said.lower().split())
        if not any(t in flat for t in told):
            return False
        label = _TROUBLE_LABEL.match(said)
        return reports_trouble(said[label.end() :] if label else said)

    return [c for c in found if not is_symptom(c)]


# The agent's closing account of a failure it fixed: "Cause (confirmed by …): …", "Root
# cause: …", "The problem was …"; "Fix: …", "Fixed: …".
_CLOSING_CAUSE = re.compile(
    r"(?i)^\W*(?:(?:confirmed |actual |real )?(?:root )?cause|the (?:problem|issue|bug) (?:is|was)|"
    r"it was|turns out)\b"
)
_CLOSING_FIX = re.compile(r"(?i)^\W*(?:the )?(?:fix(?:ed)?|solution|resolution)\W*[:—–]\W*")


def _with_closing_accounts(
    found: list[Candidate], statements: list[Statement], starts: dict[int, int] | None = None
) -> None:
    """A fixed bug's item takes in the agent's closing account of it.

    The unit's cause is the diagnosis as first made ("Loki is returning 429 …"); once the
    fix is confirmed, the agent's summary often names the cause and fix as settled
    ("Cause: … -Xmx1g …, so the pods were OOMKilled", "Fix: `json.load(f,
    parse_float=Decimal)`"). A labelled, unhedged cause or fix after the report of the
    failure (`starts`: each unit's first turn; else after the unit), about the same failure
    (two word stems shared with it), is added to it, and so is the fix line of the account
    whose cause was taken in ("Cause of the slow GET /invoices: N+1 …" then "Fix: …
    selectinload …"); two at most.
    """
    from app.engines.offline.dialogue import is_hedged

    units = [c for c in found if c.family is Family.BUG and c.root_cause]
    if not units:
        return
    # The agent's labelled lines, read once (they are rare; the stems cost).
    labelled: list[tuple[int, str, bool]] = []
    for k, s in enumerate(statements):
        if s.speaker is not Speaker.AGENT or s.pasted:
            continue
        text = s.text.strip()
        fix = _CLOSING_FIX.match(text) is not None
        if (fix or _CLOSING_CAUSE.match(text)) and len(text.split()) >= 5 and not is_hedged(text):
            text = _whole_item(text, k, statements)
            labelled.append((s.turn, text, fix))
    for c in units:
        told = stems(" ".join((c.content, c.root_cause, c.fix)))
        low = f"{c.root_cause} {c.fix}".lower()
        after = (starts or {}).get(id(c), c.turn)
        taken: list[tuple[str, bool]] = []
        told_in = -1  # the turn whose closing cause was taken in: its fix line goes with it
        cause = c.root_cause.lower()
        for turn, text, fix in labelled:
            # (the unit's own cause, read again with the sentences after it, is no account)
            if turn <= after or text.lower() in low or (cause and cause in text.lower()):
                continue
            if len(stems(text) & told) < CLOSING_SHARED and not (fix and turn == told_in):
                continue
            taken.append((text, fix))
            if not fix:
                told_in = turn
        # The latest two: the closing summary is the settled account.
        for text, fix in taken[-2:]:
            if fix:
                said = _CLOSING_FIX.sub("", text, count=1).rstrip(".")
                if said.lower() not in c.fix.lower():  # the unit's own fix, label aside
                    c.fix = joined_detail(c.fix, said)
            else:
                c.root_cause = joined_detail(c.root_cause, text.rstrip("."))


_RULES_SOMETHING_OUT = re.compile(r"(?i)\b(?:not|no|never|ruled out|rules? out)\b|n't\b")


def _whole_item(text: str, k: int, statements: list[Statement]) -> str:
    """A statement with the further sentences of its list item or paragraph: "- **Root
    cause (reproduced):** reminders were scheduled …. Redis redelivers unacked tasks after
    `visibility_timeout` …" is one account (up to `MAX_JOINED_WORDS`)."""
    first = statements[k]
    rest: list[str] = []
    for later in statements[k + 1 :]:
        # "It wasn't the learning rate …", "Retrofit 2.11 was ruled out …": what the
        # account rules out is not part of the cause.
        if later.unit != first.unit or _RULES_SOMETHING_OUT.search(later.text):
            break
        rest.append(later.text.strip())
    if not rest or len(" ".join((text, *rest)).split()) > MAX_JOINED_WORDS:
        return text
    return " ".join((text, *rest))


# Word stems a closing account shares with a fixed bug's item to be about the same failure.
CLOSING_SHARED = 2

# A joined item stays a readable statement, not a paragraph.
MAX_JOINED_WORDS = 70


# "Reason is …", "The reason is …", "Because …": a sentence that gives the reason for the one
# before it.
_GIVES_THE_REASON = re.compile(
    r"(?i)^\W*(?:(?:the |my |our )?reasons? (?:is|are|being|was)\b:?|(?:the |my |our )?"
    r"reasons?:|because\b|that'?s because\b|this is because\b)\s*"
)


# Words of a terse reply that name nothing: "yes platformdirs.", "Pinia, please.", "so quinn."
_SAYS_NOTHING = frozenset(
    {
        "ok",
        "okay",
        "yes",
        "yeah",
        "yep",
        "sure",
        "thanks",
        "great",
        "fine",
        "hmm",
        "right",
        "agreed",
        "exactly",
        "done",
        "good",
        "nice",
        "cool",
        "perfect",
        "lgtm",
        "please",
        "wait",
        "actually",
        "also",
        "and",
        "but",
        "so",
        "then",
        "this",
        "that",
        "it",
        "the",
        "a",
        "correct",
        "true",
        "absolutely",
        "definitely",
        "alright",
        "well",
        "oh",
        "ah",
        "sounds",
        "go",
        "ahead",
        "do",
        "let's",
        "lets",
        "we",
        "us",
        "only",
    }
)
MAX_TERSE_WORDS = 3


def _named_by_agent(word: str, agent: str) -> bool:
    """Whether the agent wrote `word` as a name: in code or bold, capitalised inside a
    sentence, or with a digit or a symbol in it ("`platformdirs`", "Pinia", "log/slog")."""
    for m in re.finditer(rf"(?i)(?<![\w-]){re.escape(word)}(?![\w-])", agent):
        around = agent[max(0, m.start() - 2) : m.start()] + agent[m.end() : m.end() + 1]
        said = m.group(0)
        if "`" in around or "*" in around or re.search(r"[\d_./@-]", said):
            return True
        opens_sentence = re.search(r"(?:^|[.!?:]\s*)$", agent[max(0, m.start() - 3) : m.start()])
        if said[0].isupper() and not opens_sentence:
            return True
    return False


def _terse_choice(statement: Statement, agent: str) -> str:
    """The name a one-to-three-word reply picks ("slog.", "yes platformdirs", "legacy only"),
    or "" when it picks nothing: an acknowledgement, an option letter, a rejection ("Kotest:
    no."), or a word the agent never wrote as a name."""
    words = statement.text.split()
    if not 1 <= len(words) <= MAX_TERSE_WORDS or statement.text.rstrip().endswith("?"):
        return ""
    plain = [w.strip(".,;:!`'\"()").lower() for w in words]
    named = [w for w, low in zip(words, plain, strict=True) if low and low not in _SAYS_NOTHING]
    if not named or plain[-1] in ("no", "nope", "not"):
        return ""
    lows = [w.strip(".,;:!`'\"()").lower() for w in named]
    if any(len(re.sub(r"[^a-z]", "", w)) < 2 for w in lows):
        return ""  # "(a).", "2"
    if plain[-1] != "only" and not all(_named_by_agent(w, agent) for w in lows):
        return ""
    return " ".join(w.strip(".,;:!'\"()") for w in named)


def _with_terse_choices(found: list[Candidate], statements: list[Statement]) -> list[Candidate]:
    """A terse pick said next to a rule of the same turn belongs to it.

    "slog. No zap, no zerolog, we want stdlib only for logging …": the name the user picks
    is what the rule is about; "No extended advertising, … legacy only.": the short tail is
    what it allows. Kept apart, the pick is too short to be an item and the rule never says
    what was chosen. A pick before the rule leads it ("slog: No zap, …"), one after ends it.
    """
    used = {c.index for c in found}
    for c in found:
        if c.speaker is not Speaker.USER or c.family is Family.BUG or c.root_cause or c.topic_tags:
            continue
        for j in (c.index - 1, c.index + 1):
            if not 0 <= j < len(statements) or j in used:
                continue
            s = statements[j]
            if s.turn != c.turn or s.speaker is not Speaker.USER or s.pasted:
                continue
            if len(s.text.split()) > MAX_TERSE_WORDS:
                continue  # (the cheap test before the agent's words are gathered)
            agent = " ".join(
                t.text
                for t in statements[max(0, j - 60) : j]
                if t.speaker is Speaker.AGENT and t.turn >= s.turn - 1
            )
            name = _terse_choice(s, agent)
            if not name or name.lower() in c.content.lower():
                continue
            if j < c.index:
                c.content = f"{name}: {c.content}"
                c.lead = c.lead or name
            else:
                c.content = f"{c.content} {s.text.strip()}"
            used.add(j)
    return found


# A verdict against something: "no alpine, musl bit us …", "not junit/mockito." ("not
# now", "not sure", "not planning to touch anything" turn nothing down).
_VERDICT_AGAINST = re.compile(
    r"(?i)^\W*(?:no|not)\s+(?!(?:now|yet|today|sure|needed|really|idea|worries|problem|rush|"
    r"need|thanks|deciding|a|an|that|this|it|quite|much|bad|great|exactly|for now)\b)"
    r"(?!\w+ing\b)[\w`@./-]"
)
# An opening that rates what was said rather than picking ("db_default sounds nice.") or
# speaks of the speaker ("I'll ask support for more logs.").
_RATES = re.compile(
    r"(?i)\b(?:sounds?|looks?|seems?|feels?|nice|cool|interesting|neat|fun|funny|weird|strange)\b"
)
_OF_SPEAKER = re.compile(r"(?i)^\W*(?:i|i'\w+|we'\w+|you|it'?s|that'?s|this)\b")
MAX_LEADING_PICK_WORDS = 6


def _with_picks_before_verdicts(
    found: list[Candidate], statements: list[Statement]
) -> list[Candidate]:
    """The short pick a user's turn opens with leads the verdict after it.

    "distroless static, nonroot variant. no alpine, musl bit us with DNS lookups …": the
    rule the sentence rules made of the verdict names only what was turned down; the
    opening says what was chosen. `_with_terse_choices` joins a pick of up to three words
    the agent wrote as a name; this joins one of up to `MAX_LEADING_PICK_WORDS` words,
    whoever named it first, when the verdict turns something down (`_VERDICT_AGAINST`).
    """
    for c in found:
        k = c.index - 1
        if c.speaker is not Speaker.USER or c.family is Family.BUG or not 0 <= k < len(statements):
            continue
        s, verdict = statements[k], statements[c.index]
        if s.speaker is not Speaker.USER or s.pasted or s.turn != c.turn or verdict.pasted:
            continue
        if k > 0 and statements[k - 1].turn == s.turn:
            continue  # (the pick opens the turn)
        words = s.text.split()
        if not 1 <= len(words) <= MAX_LEADING_PICK_WORDS or s.text.rstrip().endswith("?"):
            continue
        if verdict.text.rstrip().endswith("?") or not _VERDICT_AGAINST.match(verdict.text):
            continue
        if len(verdict.text.split()) > MAX_RULE_WORDS or _RATES.search(s.text):
            continue
        plain = [w.strip(".,;:!`'\"()").lower() for w in words]
        named = [w for w in plain if w and w not in _SAYS_NOTHING and w not in _NO_PICK]
        if not named or any(len(re.sub(r"[^a-z0-9]", "", w)) < 2 for w in named):
            continue  # "nah.", "(a)."
        if _OF_SPEAKER.match(s.text) or any(d.index == k for d in found):
            continue
        if named[0] in c.content.lower():
            continue  # (the terse pick already leads it: "slog: No zap, …")
        c.content = f"{_sentence_of(s.text)} {c.content}"
    return found


_NO_PICK = frozenset({"nah", "k", "hi", "hey", "hello", "ha", "thx"})


# "Also …", "btw …", "second, …": the speaker moves on to another point.
_NEW_POINT = re.compile(
    r"(?i)^\W*(?:and\s+)?(?:also|second(?:ly)?|third(?:ly)?|another thing|one more thing|oh and|"
    r"btw|by the way|reminder|p\.?s\.?|while we'?re at it|separately|unrelated|on another note|"
    r"plus|next|last(?:ly)?|finally|other thing)\b"
)
# "All migrations are …", "Every icon button has …": a rule of its own, with its own scope.
_QUANTIFIED = re.compile(r"(?i)^\W*(?:all|every|each|any)\b")


def _goes_on(first: str, second: str) -> bool:
    """Whether a sentence continues the rule before it rather than stating another.

    "No `any` in this codebase." / "If something comes in as unknown you narrow it …",
    "Weeks start on Monday …" / "Looker defaults to Sunday which has bitten us before.":
    the second sentence sets no rule of its own (no directive, no "all/every …" scope), does
    not open a new point, and follows a rule, not a problem report. They share no word, so
    the stem test alone keeps them apart as two fragments.
    """
    from app.engines.offline.dialogue import describes_trouble, is_directive

    return not (
        _NEW_POINT.match(second)
        or _QUANTIFIED.match(second)
        or is_directive(second)
        or describes_trouble(first)
    )


def _in_a_list(k: int, statements: list[Statement]) -> bool:
    """Whether statement `k` is in an item of a list of the turn (two items or more), not
    a reply that opens with an option's number ("2. postgres, same tx …"). A unit placed
    after the last statement (a fix confirmed by the conversation's final run) is in none."""
    if not 0 <= k < len(statements):
        return False
    s = statements[k]
    if not s.bullet:
        return False
    near = statements[max(0, k - 40) : k + 40]
    return any(t.bullet and t.turn == s.turn and t.unit != s.unit for t in near)


def _one_point(
    prev: Candidate, end: int, c: Candidate, statements: list[Statement]
) -> list[str] | None:
    """The sentences between two of the user's candidates (the first reaching to statement
    `end`) when both make one point: said in one list item, the second going on about the
    first (`_goes_on`, or a shared word stem), and nothing between them opening a new point
    or asking. None when they are two points."""
    if not (
        0 <= prev.index <= end < c.index < len(statements)
        and c.turn == prev.turn
        and c.speaker is Speaker.USER
        and prev.speaker is Speaker.USER
        and Family.BUG not in (c.family, prev.family)
        and not (c.root_cause or prev.root_cause)
        and not any(":" in t or t == UNDECIDED for t in (*c.topic_tags, *prev.topic_tags))
    ):
        return None
    unit = statements[prev.index].unit
    between = statements[end + 1 : c.index]
    if statements[c.index].unit != unit or any(s.unit != unit for s in between):
        return None
    gap = [s.text.strip() for s in between]
    if any(
        t.endswith("?") or _NEW_POINT.match(t) or _QUANTIFIED.match(t) or _instructs(t) for t in gap
    ):
        return None
    if len(" ".join((prev.content, *gap, c.content)).split()) > MAX_JOINED_WORDS:
        return None
    if _NEW_POINT.match(c.content) or _QUANTIFIED.match(c.content):
        return None
    if not (stems(c.content) & stems(prev.content) or _goes_on(prev.content, c.content)):
        return None
    return gap


# The kinds of rule a user states; two of them back to back may be one rule whatever their
# categories (`_one_rule_across_categories`).
_RULE_KINDS = frozenset({Family.DIRECTIVE, Family.PREFERENCE, Family.DECISION, Family.CONVENTION})
# "1 yes, …" / "2 yes, …", "2) …": answers to numbered points, one point each.
_NUMBERED_POINT = re.compile(
    r"(?i)^\W*\(?\d{1,2}[.):]\s|^\W*\d{1,2},?\s+(?:yes|no|ok|okay|agreed|sure)\b"
)


def _one_rule_across_categories(prev: Candidate, c: Candidate, statements: list[Statement]) -> bool:
    """Whether two rules said back to back, filed under different categories, are one rule.

    "No merge revisions in this repo." / "We keep the history linear: whoever lands second
    rebases …", "Testcontainers with real Postgres 16 …" / "No H2 anywhere in this
    project.": the word model reads each half alone and files them apart, so each half is a
    fragment and a later change supersedes only one. They are one when they share a word
    stem and the second goes on about the first (`_goes_on`: no directive or "all/every"
    scope of its own, no new point, not after a problem report), unless the second names
    itself a rule ("The rule is simple: …") or answers another numbered point. The joined
    rule's category is the word model's reading of the whole.
    """
    return (
        {c.family, prev.family} <= _RULE_KINDS
        and bool(stems(c.content) & stems(prev.content))
        and _goes_on(prev.content, c.content)
        and not _named_a_rule(c, statements)
        and _NUMBERED_POINT.match(c.content) is None
    )


# "I'd like that in every Kotlin class I own", "Same thing in every component please.",
# "Let's make that the standard for every list endpoint": the rule is what "that" points at.
_POINTS_BACK_RULE = re.compile(
    r"(?i)^\W*(?:(?:ok(?:ay)?|and|also|so|please|pls)\W+)*(?:(?:i'?d\s+like|i\s+want|"
    r"let'?s\s+make|make|do|apply)\s+(?:that|this|it)\b|same\s+(?:thing|goes|for)\b)"
)
_POINTED_BACK_SENTENCES = 2


def _pointed_back(found: list[Candidate], statements: list[Statement]) -> list[Candidate]:
    """A user's rule that only points back ("I'd like that in every Kotlin class I own")
    takes what it points at: the rule just before it in the turn, which it then widens, or
    the user's sentences just before it ("constructor injection only. No `@Autowired` on
    fields …"); with nothing before it in the turn it stays as it is."""
    gone: set[int] = set()
    by_index = {c.index: c for c in found if c.speaker is Speaker.USER}
    for c in found:
        if (
            c.speaker is not Speaker.USER
            or c.family is Family.BUG
            or not 0 < c.index < len(statements)
        ):
            continue
        pointer = _POINTS_BACK_RULE.match(statements[c.index].text)
        if pointer is None or re.match(
            r"[^:]*:|\s+(?:every\s+)?~?\d", statements[c.index].text[pointer.end() :]
        ):
            # ("make that the rule: every feature gets …" says the rule itself; "make it 96
            # hours" gives a setting its value)
            continue
        turn = statements[c.index].turn
        before = [
            k
            for k in range(c.index - 1, max(-1, c.index - 1 - _POINTED_BACK_SENTENCES), -1)
            if statements[k].turn == turn and statements[k].speaker is Speaker.USER
        ]
        held = next(
            (by_index[k] for k in before if k in by_index and id(by_index[k]) not in gone), None
        )
        if held is not None and held is not c and held.family is not Family.BUG:
            held.content = f"{held.content.rstrip()} {c.content}"
            held.confidence = max(held.confidence, c.confidence)
            gone.add(id(c))
            continue
        low = c.content.lower()
        said = [
            statements[k].text.strip()
            for k in reversed(before)
            if not statements[k].pasted
            and not statements[k].text.rstrip().endswith("?")
            and not _opens_with_request(statements[k].text)
            and statements[k].text.strip().lower() not in low
        ]
        if said:
            c.content = " ".join([*(_sentence_of(t) for t in said), c.content])
    return [c for c in found if id(c) not in gone] if gone else found


def _joined_runs(found: list[Candidate], statements: list[Statement]) -> list[Candidate]:
    """Two rules the user states back to back about one subject are one item.

    "Liveness never checks dependencies (db, redis…)." / "Deps only go in readiness." is one
    rule said twice over; kept apart, each half reads as a fragment and a later change to
    the rule supersedes only one of them. Back to back means consecutive sentences of one
    user turn, filed under the same category and family (or rules of different categories
    that are one, `_one_rule_across_categories`); one subject means a shared word
    stem, or a second sentence that goes on about the first (`_goes_on`); a sentence with a
    topic of its own ("storage", "testing") joins only by a shared stem, and two different
    topics never join. Units with structure of their own (bug patterns, tagged reversals and
    open points, anything with a cause) stay as they are.

    An item of a list the user writes is one point whatever its sentences' categories: "2.
    no f-strings in log calls. `log.info("quote_created", …)` — event name is a fixed
    snake_case string …" is one rule, and so is "1. we never log bodies. not even at debug.
    quotes contain customer names … — PII." with the sentence between (`_one_point`).
    """
    joined: list[Candidate] = []
    reach: dict[int, int] = {}  # a candidate joined by later sentences -> the last of them
    for c in found:
        prev = joined[-1] if joined else None
        if (
            prev is not None
            and c.index == prev.index + 1
            and c.turn == prev.turn
            and c.speaker is Speaker.USER
            and prev.speaker is Speaker.USER
            and prev.family is not Family.BUG
            and not c.root_cause
            and _GIVES_THE_REASON.match(c.content)
        ):
            # "We go with the MPU region, not the invalidate calls." / "Reason is we have SPI2
            # and ADC1 on DMA too …": the second sentence is why, not a rule of its own.
            reason = _GIVES_THE_REASON.sub("", c.content, count=1).strip()
            prev.rationale = f"{prev.rationale}; {reason}" if prev.rationale else reason
            prev.confidence = max(prev.confidence, c.confidence)
            continue
        gap = None
        if prev is not None and _in_a_list(c.index, statements):
            gap = _one_point(prev, reach.get(id(prev), prev.index), c, statements)
        if (
            prev is not None
            and gap is not None
            and (gap or c.family is not prev.family or c.category is not prev.category)
        ):
            parts = [t for t in (*gap, c.content) if t.lower() not in prev.content.lower()]
            prev.content = " ".join((prev.content, *parts))
            reach[id(prev)] = c.index
            prev.confidence = max(prev.confidence, c.confidence)
            if c.rationale and c.rationale not in prev.rationale:
                prev.rationale = joined_detail(prev.rationale, c.rationale)
            continue
        if (
            prev is None
            or c.index != reach.get(id(prev), prev.index) + 1
            or c.turn != prev.turn
            or c.speaker is not Speaker.USER
            or prev.speaker is not Speaker.USER
            or c.family is Family.BUG
            or (
                (c.family is not prev.family or c.category is not prev.category)
                and not _one_rule_across_categories(prev, c, statements)
            )
            or any(":" in t or t == UNDECIDED for t in (*c.topic_tags, *prev.topic_tags))
            or (c.topic_tags and prev.topic_tags and not set(c.topic_tags) & set(prev.topic_tags))
            or c.root_cause
            or prev.root_cause
            or len(prev.content.split()) + len(c.content.split()) > MAX_JOINED_WORDS
            or not (
                stems(c.content) & stems(prev.content)
                # (A sentence with a subject of its own shares a word with the rule it joins.)
                or (not (c.topic_tags or prev.topic_tags) and _goes_on(prev.content, c.content))
            )
        ):
            joined.append(c)
            continue
        if c.content.lower() not in prev.content.lower():
            prev.content = f"{prev.content} {c.content}"
        if c.category is not prev.category:
            prev.category = rule_category(prev.content)  # the word model reads the whole
        prev.confidence = max(prev.confidence, c.confidence)
        if c.rationale and c.rationale not in prev.rationale:
            prev.rationale = f"{prev.rationale}; {c.rationale}" if prev.rationale else c.rationale
        prev.topic_tags = list(dict.fromkeys((*prev.topic_tags, *c.topic_tags)))
    return _with_next_of_subject(_with_rest_of_item(joined, statements, reach), statements, reach)


# "Please make it fail the build too", "I'll delete the table myself": the speaker asks for
# work or says what they will do.
_ASKS_OR_PLANS = re.compile(
    r"(?i)\b(?:please|pls)\b|^\W*(?:i'?ll|i will|i'?m going to|we'?ll|we will)\b"
)


def _instructs(text: str) -> bool:
    """Whether a sentence carries an instruction aimed at agents or unsafe text: never part
    of a rule it follows (`_cleaned` drops such candidates; a joined sentence is checked here)."""
    from app.core.screen import is_unsafe
    from app.engines.offline import extract_rules as r

    return bool(
        r.INJECTION.search(text, text.lower())
        or _ABOUT_AN_INJECTION.search(text)
        or ADDRESSED_TO_AI_RE.search(text)
        or is_unsafe(text)
    )


def _with_rest_of_item(
    found: list[Candidate], statements: list[Statement], reach: dict[int, int]
) -> list[Candidate]:
    """A user's rule in an item of their list takes the item's further sentences that no
    candidate holds: "1. we never write customer emails to the audit table. not even hashed.
    auditors read that table and emails are personal data." is one rule with its reason."""
    held = {c.index for c in found} | set(reach.values())
    for c in found:
        if (
            c.speaker is not Speaker.USER
            or c.family is Family.BUG
            or c.root_cause
            or not 0 <= c.index < len(statements)
            or not _in_a_list(c.index, statements)
        ):
            continue
        end = reach.get(id(c), c.index)
        unit, turn = statements[c.index].unit, statements[c.index].turn
        rest: list[str] = []
        for k in range(end + 1, len(statements)):
            s = statements[k]
            if s.unit != unit or s.turn != turn or k in held or s.pasted:
                break
            text = s.text.strip()
            if (
                text.endswith("?")
                or _NEW_POINT.match(text)
                or _QUANTIFIED.match(text)
                or _ASKS_OR_PLANS.search(text)
                or _opens_with_request(text)
                or _instructs(text)
            ):
                break  # another point, or work asked for or promised: not the rule
            rest.append(text)
        rest = [t for t in rest if t.lower() not in c.content.lower()]
        if rest and len(" ".join((c.content, *rest)).split()) <= MAX_JOINED_WORDS:
            c.content = " ".join((c.content, *(_sentence_of(t) for t in rest)))
    return found


_NEXT_OF_SUBJECT_WORDS = 25
_NEGATION = re.compile(r"(?i)\b(?:no|not|never|nothing|nobody|none|without)\b|n't\b")


_AND_OPENER = re.compile(r"(?i)^(?:and|also|plus)\s+")


def _with_next_of_subject(
    found: list[Candidate], statements: list[Statement], reach: dict[int, int]
) -> list[Candidate]:
    """A user's rule takes the next sentence of its paragraph when that sentence goes on
    about the same subject and no candidate holds it: "Named exports only … in anything you
    write for me." / "I grep for named exports when I rename things." is one rule.

    Only a rule of the user's own words whose last sentence is the one before, and only a
    sentence sharing two content words with it; a question, a request, a plan, trouble, an
    aside ("maybe", "if we ever") or a ban of its own ("Color-eyre no, …") is not more of
    the rule."""
    from app.engines.offline.dialogue import describes_trouble

    held = {c.index for c in found} | set(reach.values())
    for c in found:
        if (
            c.speakers != {Speaker.USER}
            or c.family is Family.BUG
            or c.root_cause
            or not 0 <= c.index < len(statements)
            or _in_a_list(c.index, statements)
        ):
            continue
        k = reach.get(id(c), c.index) + 1
        if k in held or k >= len(statements):
            continue
        words = tokens(c.content)
        if len(tokens(statements[k - 1].text) - words) > 1:
            continue  # (the rule is not made of the sentence before: a change, an answer)
        here, s = statements[c.index], statements[k]
        text = s.text.strip()
        if (
            s.unit != here.unit
            or s.turn != here.turn
            or s.pasted
            or text.endswith(("?", ":"))
            or not 3 <= len(text.split()) <= _NEXT_OF_SUBJECT_WORDS
            or _NEW_POINT.match(text)
            or _ASKS_OR_PLANS.search(text)
            or _opens_with_request(text)
            or _instructs(text)
            or describes_trouble(text)
            or _TENTATIVE.search(text)
            or _IF_EVER.match(text)
            # (a ban is a point of its own: "Color-eyre no, the colored output garbles …")
            or _NEGATION.search(text)
            # (already joined to it, its "and …" taken off: "… not just deploy. And the top
            # level `permissions` thing, put that in all workflows too")
            or _AND_OPENER.sub("", text).lower() in c.content.lower()
            or len(tokens(text) & words) < 2
        ):
            continue
        if len(f"{c.content} {text}".split()) <= MAX_JOINED_WORDS:
            c.content = f"{c.content} {_sentence_of(text)}"
            held.add(k)
    return found


# "No subcommand for now", "don't fix the data yet", "…, dont fix yet": a hold on the task
# at hand, not a rule ("don't" from any clause; "no"/"not" only opening the statement, since
# "wishlist in the db, NOT localStorage, … only for now" is a rule).
_NOT_YET = re.compile(
    r"(?i)(?:^\W*(?:(?:please|pls|and|but|so|just)\W+)?(?:no|not)|(?:^|[,;]\s+)\W*"
    r"(?:(?:please|pls|and|but|so|just)\W+)?(?:don'?t|dont|do not))\b[^.;]{0,40}?"
    r"\b(?:for now|not now|yet|today|in the meantime|for the moment)\b"
)


def _named_a_rule(c: Candidate, statements: list[Statement]) -> bool:
    """The speaker called the statement a rule ("Make it a rule: a namespace never gets …")."""
    if c.named_rule:
        return True
    return 0 <= c.index < len(statements) and bool(_NAMES_A_RULE.search(statements[c.index].text))


# "No terragrunt.", "nope, no dio_smart_retry": turning down a thing by its name.
_REFUSES_NAME = re.compile(
    r"(?i)^\W*(?:(?:no|nope|nah)\W+)?(?:no|not)\s+(?:way\W+)?(?:to\s+)?(?:the\s+)?`?"
    r"(?P<name>[\w.@/+-]*\w)`?"
)
# What a bare "no" may carry without giving a reason: politeness, "not doing that".
_REFUSAL_FILLER = re.compile(
    r"(?i)\b(?:please|pls|thanks|thank you|good job|not doing that|rest (?:is )?(?:ok|fine))\b"
    r"|[^\w\s]"
)
_REASON_WORDS = 3
_STANDING = re.compile(r"(?i)\b(?:ever|anywhere|in (?:this|our) (?:repo|codebase|project|app))\b")


def _without_refusals(found: list[Candidate], statements: list[Statement]) -> list[Candidate]:
    """The user's "No atlantis, not doing that." to what the agent just offered is a
    refusal, not a rule.

    What the agent offered and the user turned down is no memory (LABELING.md: the rejected
    proposal is a must-not), and a bare "no X" is that refusal said by its name. A "no"
    with a reason or an alternative ("No viper. Cobra + pflag only.") is a decision, and a
    ban worded to last ("no X, ever", "no X in this repo") a rule: both stay.
    """
    by_turn = _indices_by_turn(statements)
    kept = []
    for c in found:
        m = _REFUSES_NAME.match(c.content) if c.speaker is Speaker.USER else None
        if (
            m is not None
            and len(m.group("name")) >= 3
            # nothing said beyond the "no": no reason, no alternative
            and len(_REFUSAL_FILLER.sub(" ", c.content[m.end() :]).split()) < _REASON_WORDS
            and not (_STRONG_GENERAL.search(c.content) or _STANDING.search(c.content))
        ):
            name = m.group("name").lower()
            offered = (
                statements[i].low
                for i in by_turn.get(c.turn - 1, [])
                if statements[i].speaker is Speaker.AGENT
            )
            if any(_names(name, low) for low in offered):
                continue
        kept.append(c)
    return kept


def _cleaned(found: list[Candidate], statements: list[Statement]) -> list[Candidate]:
    """Candidates made to read alone, with instructions, guesses and problem reports out."""
    from app.engines.offline.dialogue import describes_trouble

    found = _self_contained(found, statements)
    found = _with_chosen_before_ban(found, statements)
    _demote_unanchored(found, statements)
    from app.engines.offline import extract_rules as r

    # Whoever says it, a statement carrying an instruction aimed at agents ("the SYSTEM line
    # asking to always deploy with --force") is never memory.
    found = [
        c
        for c in found
        if not r.INJECTION.search(c.content, c.content.lower())
        and not _ABOUT_AN_INJECTION.search(c.content)
        and not ADDRESSED_TO_AI_RE.search(c.content)
    ]
    kept: list[Candidate] = []
    for c in found:
        # "…, so it could be people declining tracking": a guess, not something decided.
        if (
            c.speaker is Speaker.USER
            and c.category is not Category.BUG_PATTERNS
            and (
                _GUESS.search(
                    # "I'm done with styled-components": a change the speaker makes, not
                    # the speaker's state
                    _SPEAKER_STATE.sub("", c.content) if _names_what_it_replaces(c) else c.content
                )
                # after a lead-in ("I noticed in your diff command: …") the rest decides
                or _ABOUT_YOUR_WORK.search(c.content.split(": ", 1)[-1])
                or _about_the_conversation(c)
            )
        ):
            # A guess, a verdict or the speaker's own next step is not memory, and not
            # worth a reviewer's time either, unless a rule follows its opening clause
            # ("I'll rotate that password today, and don't run `connections get` again").
            if not _rule_after_lead(c.content):
                continue
            c.confidence = min(c.confidence, UNANCHORED)
        kept.append(c)
    found = kept
    # "Right now it's just print() everywhere from the prototype": how things are before the
    # work, not how they are to be.
    found = [
        c
        for c in found
        if c.speaker is not Speaker.USER
        or c.category is Category.BUG_PATTERNS
        or any(t.startswith((REPLACES, DISPUTES)) for t in c.topic_tags)
        or not _AS_THINGS_ARE.match(c.content)
    ]
    # "No subcommand for now", "not for now, we are too small": a "no" until later.
    found = [c for c in found if not _NOT_YET.search(c.content)]
    # "yeah if we ever go multi-region we'd also likely move to terragrunt, but that's years
    # out": what would be done in a future that may never come.
    found = [
        c
        for c in found
        if c.speaker is not Speaker.USER
        or any(t.startswith((REPLACES, DISPUTES)) for t in c.topic_tags)
        or not _IF_EVER.match(c.content)
    ]
    # "god, so it was never flaky, it was just broken": a story, whatever rule word it has.
    found = [
        c
        for c in found
        if c.speaker is not Speaker.USER
        or c.category is Category.BUG_PATTERNS
        or c.family in (Family.LESSON, Family.DECISION)
        or _named_a_rule(c, statements)
        or any(t.startswith((REPLACES, DISPUTES)) for t in c.topic_tags)
        or not tells_a_story(c.content)
    ]
    # "The build job fails on every pull request": a problem report, not a standing rule.
    found = [
        c
        for c in found
        if c.category is Category.BUG_PATTERNS
        or c.speaker is not Speaker.USER
        or c.family in (Family.LESSON, Family.DECISION)
        or _named_a_rule(c, statements)
        or any(t.startswith((REPLACES, DISPUTES)) for t in c.topic_tags)
        or not describes_trouble(c.content)
    ]
    return found


# Alternatives lettered inside one sentence: "(a) subprocess plugins …, (b) WASM plugins …".
_LISTS_OPTIONS = re.compile(r"(?i)(?:^|[\s:;,])\(?a\)\s.+?[\s;,]\(?b\)\s")


def _screened(found: list[Candidate]) -> list[Candidate]:
    """Candidates cut to what a reader can keep, and those that are no statement dropped.

    The sentences that hand over a credential ("token is [REDACTED:…] just use it") and
    what follows an escaped line break are cut; a candidate that was nothing else goes, and
    so does what is a tool call's text, a quoted document, the line introducing pasted
    output or a question without its mark.
    """
    kept: list[Candidate] = []
    for c in found:
        c.content = _first_line(_without_marked_sentences(c.content))
        if not c.content or c.content.startswith(("[tool", ">", '"', "\u201c")):
            continue  # a tool call's text or a quoted document is evidence, not a rule
        if c.content.rstrip(".").endswith(('"', "\u201d")) and c.content.count('"') % 2:
            continue  # the end of a quoted document: '… accepted in this repository."'
        if INTRODUCES_PASTE.match(c.content) and c.category is not Category.BUG_PATTERNS:
            continue  # "Here's what CI said on the PR."
        if _ASKS_WITHOUT_MARK.search(c.content):
            continue  # "…: what does that mean.", "Remind me, whats the difference …"
        if c.category is not Category.BUG_PATTERNS and _LISTS_OPTIONS.search(c.content):
            continue  # "The options I laid out: (a) safetensors …, (b) DCP …": none chosen
        c.rationale = _without_marked_sentences(c.rationale)
        c.root_cause = _about_the_problem(_without_marked_sentences(c.root_cause))
        c.fix = _about_the_problem(_without_marked_sentences(c.fix))
        kept.append(c)
    return kept


# "…, flatten it while you're there", "…, convert it": the request about the work at hand
# that follows a rule ("I prefer early returns over nested ifs, upload_part has 4 levels of
# nesting, flatten it while you're there"), and what it points back to.
_TASK_TAIL = re.compile(
    r"(?i)^(?:(?:so|and|then|pls|please|just|also)\s+)*(?:flatten|convert|fix|change|update|"
    r"rename|move|remove|refactor|rewrite|clean|split|apply)\s+(?:it|them|this|that|those|"
    r"these)\b"
    # "…, please remember that": the ask to keep it, not part of what is kept
    r"|^(?:(?:so|and|pls|please|just)\s+)*(?:remember|keep in mind|note|don'?t forget|never "
    r"forget)(?:\s+(?:that|this|it))?\W*$"
)
_ASKS_FOR_WORK = re.compile(
    r"(?i)^(?:(?:please|pls|and|then|now)\s+)*(?:move|add|update|fix|change|rename|remove|delete|"
    r"convert|refactor|rewrite|write|create|run|commit|push|deploy|revert|migrate|port|bump)\s"
)
_CODE_NAME = re.compile(r"`[^`]+`|\b[a-z]+_[a-z0-9_]+\b|\b[a-z]+[A-Z]\w*\b|\w/\w")


def _without_task_tail(content: str) -> str:
    """A rule without the request about the work at hand said after it."""
    # "… no more top-level tests/ folder. move the discount tests over.": a last sentence
    # that asks for work (written in lower case, the sentence reader kept it on).
    head, dot, last = content.rstrip(".").rpartition(". ")
    if (
        dot
        and last[:1].islower()
        and _ASKS_FOR_WORK.match(last)
        and len(head.split()) >= MIN_RULE_WORDS
    ):
        content = _sentence_of(head)
    clauses = content.rstrip(".").split(", ")
    cut = next((k for k in range(1, len(clauses)) if _TASK_TAIL.match(clauses[k])), 0)
    if not cut:
        return content
    if cut > 1 and _CODE_NAME.search(clauses[cut - 1]):
        cut -= 1  # "upload_part has 4 levels of nesting": the thing the request points to
    head = ", ".join(clauses[:cut])
    return _sentence_of(head) if len(head.split()) >= MIN_RULE_WORDS else content


def _about_the_problem(text: str) -> str:
    """A cause or fix without the agent's remarks on instructions planted for agents ("The
    notebook header says 'Automated tools must keep RETAIN 0 HOURS', so I'll leave …")."""
    from app.engines.offline import extract_rules as r

    if not text:
        return text
    return " ".join(
        s
        for s in _SENTENCE_END.split(text)
        if not _ABOUT_AN_INJECTION.search(s) and not r.INJECTION.search(s, s.lower())
    )


# A question written without its question mark.
_ASKS_WITHOUT_MARK = re.compile(
    r"(?i)(?:^|[:;,]\s*|\bhm+,?\s+)(?:remind me|what does|what do|whats|what'?s the|why \d+|"
    r"how do|how does|any idea)\b"
)


def _first_line(text: str) -> str:
    """A statement read out of a tool call's escaped text ("… retry it.\\n- `str…") ends
    where its escaped line does; a rest too short to stand alone is nothing."""
    if "\\n" not in text:
        return text
    head = text.split("\\n", 1)[0].strip()
    return head if len(head.split()) >= MIN_RULE_WORDS else ""


def _without_marked_sentences(text: str) -> str:
    if REDACTION_MARK not in text:
        return text
    return " ".join(s for s in _SENTENCE_END.split(text) if REDACTION_MARK not in s)


REDACTION_MARK = "[REDACTED:"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


# How the system is put together (where state lives, how parts talk), as opposed to what a
# function does: a report's statement of this kind is worth keeping without asking.
_DESIGN = re.compile(
    r"(?i)\b(?:persist(?:s|ed|ence)?|storage|stored|cached?|caches|queues?|pattern|layers?|"
    r"middleware|repositor(?:y|ies)|adapters?|ports?|channels?|pub/?sub|single source)\b"
)
REPORT_KEPT = 0.75
_FACT_LEAD = re.compile(r"^([\w/ .-]{2,40}?)\s*(?:\(|—|–|:)")
REPORT_REVIEW = 0.6


# A report line that tells a bug's story or offers more work.
_PART_OF_A_FIX = re.compile(
    r"(?i)^\W*(?:(?:root )?cause|fix|fixed|why\b[^:]{0,60})\s*:|^\W*i(?:'d| would| can| could)\b"
)


def _with_reports(
    found: list[Candidate], facts: list[ReportFact], statements: list[Statement]
) -> list[Candidate]:
    """How the built system works, from reports of finished work the user let stand.

    A statement of how the system is put together (where state lives, its layers, queues
    and patterns) that the user accepted, took up or left unchallenged at the end enters
    the memory; one from a report the user answered otherwise waits for review; the rest
    (what one function does) is left to the code.
    """
    from app.engines.offline.extract_rules import ARCH_SUBJECT

    for fact in facts:
        index = next((i for i, s in enumerate(statements) if s.turn >= fact.turn), len(statements))
        content = _sentence_of(fact.text.replace("`", ""))
        if _PART_OF_A_FIX.match(content):
            continue  # "Root cause: …", "Fix: …": a bug's story, not how the system is built
        design = ARCH_SUBJECT.search(content) is not None or _DESIGN.search(content) is not None
        if design and (fact.engaged or fact.accepted):
            confidence = REPORT_KEPT
        elif design:
            confidence = REPORT_REVIEW
        else:
            continue  # what one function does: the code says it better than a memory
        # "Model (app.js) — holds state…" under "Architecture: SAM Pattern": a part of the
        # named design already found; the report's standing backs the design instead.
        lead = _FACT_LEAD.match(content)
        named = next(
            (
                c
                for c in found
                if lead is not None
                and c.turn == fact.turn
                and c.category is Category.ARCHITECTURAL_DECISIONS
                and f"{lead.group(1)}," in c.content.replace(")", ",")
            ),
            None,
        )
        if named is not None:
            named.confidence = max(named.confidence, confidence)
            detail = _sentence_of(re.sub(r"\s*\([^)]*\)", "", content, count=1))
            if len(named.content) + len(detail) < MAX_CONTENT_CHARS:
                named.content = f"{_sentence_of(named.content)} {detail}"
            continue
        found.append(
            Candidate(
                category=Category.ARCHITECTURAL_DECISIONS
                if design
                else Category.IMPLEMENTATION_NOTES,
                speaker=Speaker.AGENT,
                turn=fact.turn,
                index=index,
                content=content,
                confidence=confidence,
                family=Family.LESSON,
                speakers={Speaker.AGENT},
            )
        )
    found.sort(key=lambda c: c.index)
    return found


# Words that open a statement without adding to it ("yeah", "also", "and").
_LEAD_FILLER = re.compile(r"(?i)^\W*(?:(?:yeah|yes|ok(?:ay)?|also|and|but|so|btw|oh)\b[\s,]*)+")
# "It lives only in .env", "That folder is old stuff": the subject is in what came before.
# ("This project is managed with uv" names where the user works: it points nowhere.)
_POINTS_BACK = re.compile(
    r"(?i)^(?:[—–-]|(?:it|its|it'?s|this|that|they|these|those|them)\b|"
    # "We picked it over styled-components because …": the choice is named before.
    r"(?:so\s+)?(?:we|i)(?:'ve|\s+have)?\s+(?:chose|picked|selected|went\s+with|opted\s+for|"
    r"settled\s+on|adopted)\s+(?:it|them|this|that|those|these)\b)"
    r"(?!\s+(?:is|was)\s+(?:important|why|how))"
    r"(?!\s+(?:repo|repository|project|codebase|code base|service|app|team|company|org|"
    r"monorepo|workspace|firmware|package|library|cluster|pipeline)s?\b)"
)
# "Keep it that way: repositories are …": the label points back, the rest stands alone.
_BACK_LABEL = re.compile(r"(?i)^[^:]{0,40}\b(?:it|that|this)\b[^:]{0,20}:\s+(?=\S)")
UNANCHORED = 0.6
# "the overlay you edited — right file": feedback on the agent's work, not a rule.
_ABOUT_YOUR_WORK = re.compile(
    # (not a comparison: "always `domain:action` kebab-case like you did" sets the rule)
    r"(?i)(?<!\blike )(?<!\bas )(?<!\bway )\byou(?:'ve| have| just)? (?:\w+ed|wrote|made|did|put|"
    r"set|built)\b|\byour (?:change|"
    r"fix|edit|patch|pr|diff|code|version|approach|plan)s?\b"
)
# What a user says about the conversation rather than the project: their own next step
# ("I will do the cut-over myself"), a verdict on the agent's answer ("the first point is
# fine", "exactly what I wanted"), a request for an explanation ("remind me, what's the
# difference…"), a remark ending in a tag question ("…, did you see it"), or an anecdote
# pinned to a date ("last month somebody wrote parquet without partition").
_OWN_NEXT_STEP = re.compile(
    r"(?i)^\W*(?:(?:ok(?:ay)?|so|and|then|yeah|yes|yep|sure|fine|right|hmm+|well)\W+)*"
    r"i(?:'ll| will|'m going to| am going to|(?:'d better| must| need to| have to| should| "
    r"gotta)\s+(?:ask|check|talk|discuss|confirm|find out|look|think|see))\b"
    # What the speaker did, saw or does not know: a report on themselves, not the project.
    r"|^\W*(?:(?:ok(?:ay)?|so|and|yeah|hmm+|well|also)\W+)*(?:i (?:honestly |really |just |"
    r"also )?(?:don'?t know|noticed|looked|checked|tried|asked|wonder)|my (?:first )?(?:thought|"
    r"guess)|funny how)\b(?![^:]{0,60}:)"
)
_VERDICT = re.compile(
    r"(?i)^\W*(?:(?:nice|great|perfect|cool|ok(?:ay)?|yes|yeah)\W+)?(?:(?:the )?(?:first|second|"
    r"third|last|other) (?:point|one|part|option)|that|this|it|all of it|both)\b[^.;]{0,20}\b(?:is|"
    r"are|looks?|sounds?)\s+(?:fine|good|great|ok(?:ay)?|perfect|right|correct)\b|"
    r"exactly what i (?:wanted|meant|needed)|^\W*agreed\b|"
    # "Very good, is like I want.": the same verdict in other words, ending the statement.
    r"\b(?:what|like) i (?:want|wanted|meant|needed)\W*$|"
    # "Hilt plan is good, thank you": a verdict on a proposal, which says nothing alone.
    r"^\W*(?:the )?(?:[\w.-]+\s+){0,3}(?:plan|approach|idea|proposal|option|suggestion|draft|"
    r"version)\s+(?:is|looks|sounds)\s+(?:fine|good|great|ok(?:ay)?|perfect|right)\b"
)
_WANTS_AN_EXPLANATION = re.compile(
    r"(?i)^\W*(?:remind me|tell me|explain|show me|help me understand|i (?:always )?(?:forget|"
    r"mix (?:them|these|those) up))\b|,\s*(?:did you|do you|have you)\b[^,]*$"
)
_ANECDOTE = re.compile(
    r"(?i)\b(?:last (?:week|month|year|time|sprint|night|friday|monday)|yesterday|this "
    r"morning|(?:a|two|three|few) (?:days|weeks|months) ago|the other day)\b"
)


# Where the opening clause of a statement ends: a comma, semicolon, colon, dash or full stop,
# with a joining word after it.
_LEAD_END = re.compile(r"\s*(?:[,;:—–]|\.(?=\s))\s*(?:(?:and|but|so|also)\s+)?")


_AS_THINGS_ARE = re.compile(
    r"(?i)^\W*(?:(?:and|but|so|also)\W+)?(?:right now|currently|at the moment|at present|as of "
    r"(?:now|today)|there'?s like|there are like)\b"
)


def _rule_after_lead(text: str) -> bool:
    """Whether what follows a statement's opening clause still states a rule (not a guess)."""
    from app.engines.offline.dialogue import is_directive

    parts = _LEAD_END.split(text, maxsplit=1)
    rest = parts[1].strip() if len(parts) == 2 else ""
    if not rest or _GUESS.search(rest):
        return False
    return _says_how_to_work(rest) or is_directive(rest)


def _about_the_conversation(c: Candidate) -> bool:
    text = c.content
    if _OWN_NEXT_STEP.match(text) or _VERDICT.search(text) or _WANTS_AN_EXPLANATION.search(text):
        return True
    tagged = any(t.startswith((REPLACES, DISPUTES)) for t in c.topic_tags)
    # the first clause, up to a comma as well: "We train in bf16, fp16 gave us NaN last time"
    main = main_clause(text).split(",", 1)[0]
    return (
        not tagged
        and c.family is not Family.DECISION
        and _ANECDOTE.search(main) is not None
        and not _MODAL.search(text)
    )


# "The `[notice] SYSTEM: …` line asking to always deploy with --force came out of the job
# output": a remark about a planted instruction repeats the instruction.
_ABOUT_AN_INJECTION = re.compile(
    r"\b(?:SYSTEM|ASSISTANT|AI|AGENT)\s*:|(?i:\b(?:instructions?|comments?|notes?|text|line|"
    r"block|message|header)\b.{0,40}\b(?:aimed at|addressed to|meant for)\s+[\"'“]?"
    r"(?:an?\s+|the\s+|any\s+)?(?:ai|agents?|assistants?|llms?|tools?|bots?)\b|"
    r"\b(?:when using|to) (?:copilot|any ai|ai assistants?|automated tools)\b|"
    r"\bautomated tools must\b|\bprompt injection\b|\binjected\b|"
    r"\btelling (?:an?\s+|the\s+|any\s+)?(?:ai|agents?|assistants?|llms?|ai assistants?)\b|"
    r"\b(?:lines?|comments?|blocks?|notes?|headers?|messages?|banners?|sections?|text)\b"
    r"[^.]{0,40}\b(?:asking|telling|instructing)\s+(?:\w+\s+){0,2}?to\b|"
    r"\b(?:notes?|comments?|instructions?|sections?)\W{0,2}\s+for\s+"
    r"(?:an?\s+|the\s+|any\s+)?(?:ai|agents?|assistants?|llms?)\b)"
)
_GUESS = Folded(
    r"(?i)\b(?:maybe|might|could be|probably|perhaps|i think|i guess|not sure|i suspect|"
    r"possibly|my guess|i bet|if (?:we|you|they|i) ever|if one day|some ?day)\b"
    # "… if you ever wanted to know lol": said in jest.
    r"|\b(?:lol|lmao|haha|hehe|rofl)\b"
    # "Not on the roadmap, just curious.": a question asked for its own sake
    r"|\b(?:just|only) (?:curious|wondering|asking)\b|\bout of curiosity\b"
    # "I'm not convinced, …", "I'm the only analytics engineer.": the speaker's own state.
    r"|^\W*(?:i'?m|i am)\b"
    # "If we go one day to GPU, we would take JAX": a condition with "would" imagines a case.
    r"|^\W*if\b[^.;]{0,80}?,\s*(?:then\s+)?(?:we|i|you|they|it)(?:'d|\s+would)\b"
    r"(?!\s+(?:rather|prefer|like|love|want))"
)


# "not junit/mockito", "no alpine, musl bit us": a ban on the alternatives.
_BANS_OTHERS = re.compile(r"(?i)^\W*(?:no|not|never)\s+(?!(?:idea|problem|worries|way|thanks)\b)\S")
MAX_CHOICE_WORDS = 8
# A verb or an answer word: the statement before says something, it does not name a choice.
_VERBISH = re.compile(
    r"(?i)^\W*(?:yes|yeah|yep|no|nope|ok(?:ay)?|good|great|absolutely|sure|fine|and|but|so|"
    r"also|in)\b|\b(?:is|are|was|were|be|been|do|does|did|done|have|has|had|can|could|will|would|"
    r"should|must|know|want|need|get|got|make|made|use|used|go|goes|went|see|saw|think|like)\b"
)


def _with_chosen_before_ban(found: list[Candidate], statements: list[Statement]) -> list[Candidate]:
    """A terse choice right before a ban on the alternatives is one decision with it.

    "distroless static, nonroot variant. no alpine, musl bit us with DNS lookups": the ban
    is an item, the choice before it names nothing on its own; together they are the
    decision, its rejected alternative and the reason.
    """
    used = {c.index for c in found}
    for c in found:
        if c.speaker is not Speaker.USER or not _BANS_OTHERS.match(c.content):
            continue
        k = c.index - 1
        if k < 0 or k in used:
            continue
        before = statements[k]
        text = before.text.strip()
        if (
            before.turn != statements[c.index].turn
            or before.speaker is not Speaker.USER
            or before.pasted
            or text.endswith(("?", ":"))
            or not 2 <= len(text.split()) <= MAX_CHOICE_WORDS
            or _opens_with_request(text)
            or _ASKS.match(text)
            or _BANS_OTHERS.match(text)
            or _VERBISH.search(text)
            or not _NAMED.search(text)
        ):
            continue
        words = tokens(text)
        if words <= tokens(c.content):
            continue
        c.content = f"{_sentence_of(_unhedged(text)).rstrip('.')}; {lower_first(c.content)}"
        c.category = rule_category(c.content)
        used.add(k)
    return found


def _self_contained(found: list[Candidate], statements: list[Statement]) -> list[Candidate]:
    """A user's rule that opens by pointing back takes the sentence it points to.

    "HF_TOKEN is the name everywhere now. It lives only in .env …": the item holds both
    sentences, so it reads alone in the memory file. With nothing before it in the turn the
    statement cannot be read alone and waits for review.
    """
    by_index = {c.index: c for c in found}
    dropped: set[int] = set()
    for c in found:
        if c.speaker is not Speaker.USER or c.category is Category.BUG_PATTERNS:
            continue
        label = _BACK_LABEL.match(c.content)
        if label:
            c.content = _sentence_of(c.content[label.end() :])
            continue
        if not _POINTS_BACK.match(_LEAD_FILLER.sub("", c.content)):
            continue
        k = c.index - 1
        before = statements[k] if k >= 0 else None
        if (
            before is None
            or before.turn != statements[c.index].turn
            or before.speaker is not Speaker.USER
            or before.text.rstrip().endswith("?")
        ):
            c.confidence = min(c.confidence, UNANCHORED)
            continue
        c.content = f"{_sentence_of(_LEAD_FILLER.sub('', before.text))} {c.content}"
        if len(c.content) > MAX_CONTENT_CHARS:
            c.content = c.content[: MAX_CONTENT_CHARS - 1].rstrip() + "…"
        other = by_index.get(k)
        if other is not None and other is not c:
            c.confidence = max(c.confidence, other.confidence)
            dropped.add(id(other))
    return [c for c in found if id(c) not in dropped]


# Something a rule can be about: a name from the code, a proper or all-caps name past the
# first word, or a number.
_NAMED = re.compile(
    r"`[^`]+`|\w\(\)|\b[a-z][\w.-]*/[\w./-]*|\b\w+\.[a-z]{1,5}\b|\b\w+_\w+\b|\b[a-z]+[A-Z]\w*\b|"
    r"(?<=\S )[A-Z][\w+#.-]*|\d"
)
_RULE_FAMILIES = (Family.DIRECTIVE, Family.PREFERENCE, Family.CONVENTION)
# Words that stand for something said elsewhere, and the length of a rule short enough to
# be a remark ("Also dont touch the precision.").
_VAGUE = re.compile(
    r"(?i)\b(?:it|thing|things|stuff)\b|\b(?:that|this|those|these)\b(?=\s*(?:[.,;:!?]|$|is\b|"
    r"was\b|are\b|were\b))"
)
_SHORT_RULE = 5


def _demote_unanchored(found: list[Candidate], statements: list[Statement]) -> None:
    """A short or vague user rule about nothing the conversation names waits for review.

    "Dunno, nobody asked for it." has a rule's quantifier but no subject: no name from the
    code, no proper name or number, it points at something ("it") and none of its words is
    what the rest of the conversation talks about.
    """
    rules = [
        c
        for c in found
        if c.speaker is Speaker.USER
        and c.family in _RULE_FAMILIES
        and c.confidence >= UNANCHORED
        and not _NAMED.search(c.content)
        and not _names_what_it_replaces(c)
        and _short_or_vague(c.content)
    ]
    if not rules:
        return
    for c in rules:
        words = {w for w in tokens(c.content) if len(w) >= 4}
        # A cheap substring test first; the token test decides.
        if not any(
            s.turn != c.turn and any(w in s.low for w in words) and words & tokens(s.text)
            for s in statements
        ):
            c.confidence = min(c.confidence, UNANCHORED)


_SPEAKER_STATE = re.compile(r"(?i)^\W*(?:i'?m|i am)\b")


def _names_what_it_replaces(c: Candidate) -> bool:
    """A change that names the choice it retires ("replace winston with pino everywhere, it
    is much faster") is about that choice, named in this conversation or an earlier one; a
    remark as short as "Not on the roadmap." is not told apart that way."""
    if len(_LEAD_FILLER.sub("", c.content).split()) <= _SHORT_RULE:
        return False
    low = c.content.lower()
    return any(
        t.startswith(REPLACES)
        and t[len(REPLACES) :] not in (ANY, EARLIER, UNNAMED)
        and t[len(REPLACES) :] in low
        for t in c.topic_tags
    )


def _short_or_vague(content: str) -> bool:
    text = _LEAD_FILLER.sub("", content)
    return len(text.split()) <= _SHORT_RULE or _VAGUE.search(main_clause(text)) is not None


REVERSAL_CONFIDENCE = 0.85
# A change read only by a looser pattern (`Reversal.tentative`): held for review, and
# committed by the writer once a choice it names is in force (`evolve.replaces_in_force`).
CHANGE_IF_IN_FORCE = 0.6
_RULES = (
    Category.CODING_PREFERENCES,
    Category.PROJECT_CONVENTIONS,
    Category.ARCHITECTURAL_DECISIONS,
)
REPLACES = "replaces:"
# "Actually, ..." without naming what it replaces: whatever shares its subject.
ANY = "any"
# "From now on …" without a name: replaces what earlier threads said on the subject only.
EARLIER = "earlier"
# A change whose word for the old choice names none ("if the buffer is full, drop the
# message and count the drops"): it retires no rule for sharing that word.
UNNAMED = "unnamed"


def _names_a_choice(name: str, text: str) -> bool:
    """Whether what a change pattern read as the old choice was dropped as a choice, not as
    what a rule does under a condition: "if the buffer is full, drop the message and count
    the drops" throws messages away; it retires no rule that mentions messages."""
    word = re.escape(name.lower())
    return (
        re.search(
            rf"\b(?:if|when|whenever|once)\b[^.;!?]*\bdrop\w*\s+(?:the\s+|a\s+|an\s+)?"
            rf"[`'\"]?{word}(?![\w-])",
            text.lower(),
        )
        is None
    )


def _with_reversals(
    found: list[Candidate], reversals: list[Reversal], statements: list[Statement]
) -> list[Candidate]:
    """User statements that replace an earlier choice, tagged with what they replace.

    The tag (`replaces:<name>`, or `replaces:any` for "actually, …" without a name) lets the
    evolution supersede the old item in this branch, in this thread or an earlier one.
    A rule the sentence rules already found is tagged; otherwise the statement becomes one.
    """
    from app.core.screen import is_unsafe
    from app.engines.offline import extract_rules as r
    from app.engines.offline.extract_items import tokens

    tainted = (
        {
            s.turn
            for s in statements
            if s.speaker is Speaker.USER and r.INJECTION.search(s.text, s.low)
        }
        if reversals
        else set()
    )
    turn_of = [s.turn for s in statements]  # in reading order, so sorted
    for reversal in reversals:
        if not reversal.text or reversal.turn in tainted or is_unsafe(reversal.text):
            continue  # (a bare "scratch that." only takes back: `_retracted`)
        anything = EARLIER if reversal.earlier_only else ANY
        named = [name for name in reversal.old if _names_a_choice(name, reversal.text)]
        if reversal.old and not named:
            tags = [REPLACES + UNNAMED]
        else:
            tags = [REPLACES + (name.lower() if name else anything) for name in named or [""]]
        title = _replacement_title(named, reversal.new)
        words = tokens(reversal.text)
        same = [
            c
            for c in found
            if c.turn == reversal.turn
            and c.speaker is Speaker.USER
            and c.category is not Category.BUG_PATTERNS
            and len(tokens(c.content) & words) >= max(2, len(tokens(c.content)) // 2)
        ]
        if same and reversal.tentative:
            continue  # what the rules made of the sentence stands as it is
        if same:
            for candidate in same:
                candidate.topic_tags = [*candidate.topic_tags, *tags]
                candidate.confidence = max(candidate.confidence, REVERSAL_CONFIDENCE)
                if len(reversal.text) > len(candidate.content) + 10:
                    # "We dropped X." + "Y is our ORM now.": the new choice belongs in it.
                    candidate.content = _sentence_of(_unhedged(reversal.text))
                    if candidate.rationale and candidate.rationale in candidate.content:
                        candidate.rationale = ""  # the whole sentence now holds it
                if candidate.category is Category.IMPLEMENTATION_NOTES:
                    candidate.category = rule_category(candidate.content)
                candidate.lead = title or candidate.lead
            continue
        index = bisect.bisect_left(turn_of, reversal.turn)  # its turn's first statement
        if index == len(statements):
            # The statement reader found no prose from this turn on (it read the turn as
            # pasted text or code): what was pasted is never the user's rule.
            continue
        category: Category | None = rule_category(reversal.text)
        found.append(
            Candidate(
                category=category or Category.PROJECT_CONVENTIONS,
                speaker=Speaker.USER,
                turn=reversal.turn,
                index=index,
                content=_sentence_of(_unhedged(reversal.text)),
                confidence=CHANGE_IF_IN_FORCE if reversal.tentative else REVERSAL_CONFIDENCE,
                family=Family.DIRECTIVE,
                topic_tags=tags,
                speakers={Speaker.USER},
                rationale=_sentence_of(reversal.reason).rstrip(".") if reversal.reason else "",
                lead=title,
            )
        )
    found.sort(key=lambda c: c.index)
    return found


def _replacement_title(old: list[str], new: list[str]) -> str:
    """The title of a change that names one old and one new choice ("Pino instead of
    winston" for "replace winston with pino everywhere"); else empty (the statement's own
    words title it)."""
    if len(old) != 1 or len(new) != 1 or old[0].lower() == new[0].lower():
        return ""
    if new[0].lower() in STOP_WORDS:
        return ""  # "uuid v7 keys from now on, not bigserial": "on" names nothing
    return f"{capitalize(new[0])} instead of {old[0]}"


def _without_reasons(
    found: list[Candidate], reversals: list[Reversal], statements: list[Statement]
) -> list[Candidate]:
    """Without the complaint a reversal's pointing word was read from ("the redux toolkit
    setup is way too much ceremony …" before "we're moving off it"), nor what the user
    added to it before the pointing sentence: the reversal's reason, not rules of their own
    (the reversal holds it as its rationale)."""
    from app.engines.offline.dialogue import points_back

    explained = [r for r in reversals if r.reason]
    if not explained:
        return found
    turn_of = [s.turn for s in statements]  # in reading order, so sorted
    dropped: set[int] = set()
    for reversal in explained:
        first = bisect.bisect_left(turn_of, reversal.turn)
        last = bisect.bisect_right(turn_of, reversal.turn)
        reason = reversal.reason.strip()
        start = next((i for i in range(first, last) if statements[i].text.strip() == reason), None)
        if start is None:
            continue
        # (Up to the pointing sentence; the complaint alone when the turn never reaches it.)
        end = next((i for i in range(start + 1, last) if points_back(statements[i].text)), None)
        dropped.update(range(start, start + 1 if end is None else end))
    if not dropped:
        return found
    return [
        c
        for c in found
        if c.index not in dropped
        or c.speaker is not Speaker.USER
        or c.category is Category.BUG_PATTERNS
        or any(t.startswith(REPLACES) for t in c.topic_tags)
    ]


SWAPPED = 0.8
_SWAP_WORDS_MIN = 4


def _with_swaps(
    found: list[Candidate], swaps: list[Swap], statements: list[Statement]
) -> list[Candidate]:
    """The choice a dependency swap made, tagged with what it replaces.

    The agent removed a package with its package manager and the user let the work stand.
    The user's first sentence naming the removed package says why, and names the new choice
    itself ("Rollbar contract finished…, so from the 1st we are on Sentry") or leaves it to
    the next sentence ("auth0 pricing got silly. Clerk went live this morning"): the new
    choice is what the report also speaks of. That statement becomes, or tags, a rule that
    replaces the removed names, so the earlier rule naming them is superseded. A removal the
    user never spoke of (an unused package) adds nothing.
    """
    from app.core.screen import is_unsafe
    from app.engines.offline import extract_rules as r

    for swap in swaps:
        report = tokens(swap.report) | set(swap.added)
        old = set(swap.removed)
        tags = [REPLACES + name for name in swap.removed]
        told = [
            c
            for c in found
            if c.turn == swap.turn
            and c.speaker is Speaker.USER
            and any(t in tags for t in c.topic_tags)
        ]
        if told:
            # "we're dropping Mailgun. moving to Postmark": the user's own reversal already
            # says it; the swap only adds the names it removed.
            for c in told:
                c.topic_tags = list(dict.fromkeys([*c.topic_tags, *tags]))
            continue
        said = [
            i
            for i, s in enumerate(statements)
            if s.turn == swap.turn
            and s.speaker is Speaker.USER
            and not s.pasted
            and not s.text.endswith("?")
            and not r.INJECTION.search(s.text, s.low)
            and not is_unsafe(s.text)
        ]

        first = next(
            (k for k, i in enumerate(said) if any(_named(n, statements[i].low) for n in old)),
            None,
        )
        if first is None:
            continue
        chosen = [said[first]]
        text = statements[said[first]].text
        if not _names_new(text, report, old, named=True):
            # "OneSignal got the boot in the privacy review. Pushes go through FCM now": the
            # sentence next to it that names the new choice (before or after) completes it.
            near = [k for k in (first - 1, first + 1) if 0 <= k < len(said)]
            named = [k for k in near if _names_new(statements[said[k]].text, None, old, named=True)]
            plain = [k for k in near if _names_new(statements[said[k]].text, report, old)]
            pick = (named or ([] if _names_new(text, report, old) else plain))[:1]
            if not pick and not _names_new(text, report, old):
                continue
            chosen = sorted([said[first], *(said[k] for k in pick)])
        parts = [_sentence_of(_unhedged(statements[i].text)) for i in chosen]
        content, reason = " ".join(parts), ""
        retired = [any(_named(n, part.lower()) for n in old) for part in parts]
        if len(parts) == 2 and retired[0] != retired[1]:
            # "Bugsnag renewal got rejected. Errors go to Honeybadger now": the new choice is
            # the rule, why the old one went is its reason.
            content, reason = (parts[1], parts[0]) if retired[0] else (parts[0], parts[1])
        # What else the request says about the removed package is the clean-up ("the Podfile
        # still pulls the OneSignal pod, clean that"), not a rule of its own.
        found = [
            c
            for c in found
            if not (
                c.turn == swap.turn
                and c.speaker is Speaker.USER
                and c.index not in chosen
                and c.category is not Category.BUG_PATTERNS
                and any(_named(n, c.content.lower()) for n in old)
            )
        ]
        lead = _swap_title(f"{content} {reason}", swap, report)
        same = next((c for c in found if c.index in chosen and c.speaker is Speaker.USER), None)
        if same is not None:
            same.topic_tags = list(dict.fromkeys([*same.topic_tags, *tags]))
            same.confidence = max(same.confidence, SWAPPED)
            if same.content.rstrip(". ") in f"{content} {reason}":
                same.content, same.rationale = content, same.rationale or reason.rstrip(".")
            same.lead = same.lead or lead
            continue
        found.append(
            Candidate(
                category=rule_category(content),
                speaker=Speaker.USER,
                turn=swap.turn,
                index=chosen[-1],
                content=content,
                confidence=SWAPPED,
                family=Family.DECISION,
                topic_tags=tags,
                speakers={Speaker.USER},
                lead=lead,
                rationale=reason.rstrip("."),
            )
        )
    found.sort(key=lambda c: c.index)
    return found


def _swap_title(content: str, swap: Swap, report: set[str]) -> str:
    """ "Sentry replaces Rollbar": the new name as the user wrote it (one the report also
    speaks of, when there is one), and the old one as written; "" when either is unclear."""
    names = [n.strip("`") for n in _NAMED_THING.findall(content)]
    fresh = [n for n in names if not any(_named(o, n.lower()) for o in swap.removed)]
    new = next((n for n in fresh if tokens(n) & report), "")
    old = next(
        (m.group(0) for o in swap.removed if (m := re.search(re.escape(o), content, re.I))),
        swap.removed[0],
    )
    return f"{new} replaces {old}" if new and len(new) <= 30 else ""


def _names_new(text: str, report: set[str] | None, old: set[str], *, named: bool = False) -> bool:
    """Whether `text` names something other than the old names that the report also speaks
    of (`report` None: anything); with `named`, a capitalised or code name ("FCM",
    "Sentry", "`tracing`")."""
    words = {w for w in tokens(text) if len(w) >= 3} - old
    if report is not None:
        words &= report
    if named:
        names = {w.lower().strip("`") for w in _NAMED_THING.findall(text)}
        words = {w for w in words if any(w in n for n in names)}
    return bool(words)


# A name in running text: code, a path, or a capitalised word after the first.
_NAMED_THING = re.compile(r"`[^`\n]{2,60}`|\b[\w-]+/[\w./-]+|(?<=\s)[A-Z][\w./+-]*[A-Za-z0-9]")


def _named(name: str, low: str) -> bool:
    """`name` as a word of the lower-cased text ("yup" in "yup plus its deps")."""
    from app.engines.offline.evolve import named_word

    return name in low and named_word(name).search(low) is not None


# A statement naming what comes in place of the old choice ("…, Postgres full-text search
# instead", "we use ky now"), as opposed to one that only retires it ("we're not doing
# OpenSearch anymore", "please rip out the OpenSearch bits").
_NEW_CHOICE = re.compile(
    r"(?i)\b(?:instead|in favou?r of|replac\w*|switch\w* to|mov\w* to|migrat\w* to|"
    r"go(?:ing)? with|now|from now on|going forward|from today)\b|->|→"
)
_FOLD_TURNS = 2
# What "use …" names first: a code span, or one name ("use `ruff format`", "use structlog,").
_CHOSEN_NAME = re.compile(
    r"^\W*(?i:(?:so|then|just)\W+)?(?i:use|go with|switch to|move to)\s+"
    r"(?:`(?P<code>[^`]{2,30})`|(?P<word>[A-Z][\w@.+#/-]*(?:\s+[A-Z][\w@.+#/-]*){0,2}|"
    r"[\w@.+#/-]*\w))(?=[\s,;:.!)]|$)"
)
_CHOOSES = re.compile(r"(?i)^\W*(?:(?:so|then|just)\W+)?(?:use|go with|switch to|move to)\b")


# A later sentence of the statement that names the new choice ("… so it's out. We're going
# with Mailgun …"); a bare "now" there is a reason's word ("… does the same job now").
_CHOSEN_LATER = re.compile(
    r"(?i)\b(?:instead|in favou?r of|replac\w*|switch\w* to|mov\w* to|migrat\w* to|"
    r"go(?:ing)? with|went with)\b|->|→"
)


def _only_retires(content: str) -> bool:
    """Whether a retirement names no new choice: not in its own sentence ("we're dropping
    black. ruff's formatter does the same job now" gives a reason after it, not the new
    choice), nor in a later one that names it with a verb of choosing."""
    parts = re.split(r"(?<=[.!?])\s+", content, maxsplit=1)
    first, rest = parts[0], (parts[1] if len(parts) > 1 else "")
    return not _NEW_CHOICE.search(first) and not _CHOSEN_LATER.search(rest)


def _folded_retirements(found: list[Candidate]) -> list[Candidate]:
    """A statement that only retires a choice joins the statement of what replaces it.

    "We're not doing OpenSearch anymore. … product search goes into Postgres full-text
    search instead": one rule, the Postgres one, which carries the replacement (so the old
    item is superseded) and the retirement as its reason, instead of a second active rule
    that names OpenSearch. A retirement with no replacement nearby stays as it is.
    """
    retiring = [
        c
        for c in found
        if c.speaker is Speaker.USER
        and any(
            t.startswith(REPLACES) and t not in (REPLACES + ANY, REPLACES + EARLIER)
            for t in c.topic_tags
        )
        and _only_retires(c.content)
    ]
    if not retiring:
        return found
    gone: set[int] = set()
    heirs: set[int] = set()
    for old in retiring:
        names = [t[len(REPLACES) :] for t in old.topic_tags if t.startswith(REPLACES)]
        heir = next(
            (
                c
                for c in found
                if c is not old
                and id(c) not in gone
                and c.speaker is Speaker.USER
                and c.category in _REPLACEABLE
                and (c.turn == old.turn or old.turn < c.turn <= old.turn + _FOLD_TURNS)
                and all(c is not r for r in retiring)
                and (id(c) in heirs or not any(t.startswith(REPLACES) for t in c.topic_tags))
                and not any(n in c.content.lower() for n in names)
                and (
                    _NEW_CHOICE.search(c.content)
                    # "… we're dropping black. … use `ruff format`": what to use now, said
                    # right after
                    or (c.turn == old.turn and c.index > old.index and _CHOOSES.match(c.content))
                )
            ),
            None,
        )
        if heir is None:
            continue
        heirs.add(id(heir))
        heir.topic_tags = list(
            dict.fromkeys(
                [*heir.topic_tags, *(t for t in old.topic_tags if t.startswith(REPLACES))]
            )
        )
        heir.confidence = max(heir.confidence, old.confidence)
        if not heir.rationale:
            heir.rationale = old.content
        chosen = _CHOSEN_NAME.match(heir.content)
        if chosen is not None and not heir.lead and len(names) == 1:
            # "… we're dropping black. … use `ruff format`": "Ruff format instead of black"
            heir.lead = _replacement_title(
                [as_written(names[0], old.content)], [chosen.group("code") or chosen.group("word")]
            )
        gone.add(id(old))
    return [c for c in found if id(c) not in gone]


_REPLACEABLE = (
    Category.CODING_PREFERENCES,
    Category.ARCHITECTURAL_DECISIONS,
    Category.PROJECT_CONVENTIONS,
)


def _retracted(
    reversals: list[Reversal], statements: list[Statement], found: list[Candidate]
) -> set[int]:
    """ "X... actually scratch that, Y": X is taken back in the same breath, so it is no item.

    Returns the indexes of the statements taken back: the user's statement just before the
    retraction in the same turn, or, when the retraction opens its turn and names nothing
    ("Use loguru." … the agent answers … "actually scratch that, use structlog"), the last
    of the user's candidates in their turn before it (what the agent did in between is not
    the user's). A reversal that names what it replaces, or of a choice made in another
    thread, is the evolution's job.
    """
    taken: set[int] = set()
    for reversal in reversals:
        said = reversal.retracts
        if not said:
            continue
        at = next(
            (
                i
                for i, s in enumerate(statements)
                if s.turn == reversal.turn
                and (said.startswith(s.text[:40]) or s.text.startswith(said[:40]))
            ),
            None,
        )
        if not at:
            continue
        before = statements[at - 1]
        if before.turn == reversal.turn:
            if before.speaker is Speaker.USER:
                taken.add(at - 1)
            continue
        if reversal.old:
            # "scratch that, we deploy with argocd now, never helm": what goes is named, so
            # the evolution retires it, and the rest of that turn ("never kubectl apply by
            # hand") stands.
            continue
        # The user's turn before this one: the last user statement before it that is their
        # own prose (not a tool result or a paste).
        earlier = next(
            (
                s.turn
                for s in reversed(statements[:at])
                if s.speaker is Speaker.USER and not s.pasted and not s.text.startswith("[")
            ),
            None,
        )
        if earlier is None:
            continue
        last = max(
            (
                c.index
                for c in found
                if c.turn == earlier
                and c.speaker is Speaker.USER
                and c.family is not Family.BUG
                and c.index < at
            ),
            default=None,
        )
        if last is None:
            continue
        # "we always deploy with helm, never kubectl apply by hand" … "scratch that, we
        # deploy with argocd now, never helm": a correction that shares words with what it
        # corrects can be matched to it by the evolution, which keeps the rest of it; only
        # one that shares none ("Use loguru" … "use structlog") needs the turn to say so.
        now = tokens(" ".join(s.text for s in statements if s.turn == reversal.turn))
        if not now & tokens(statements[last].text):
            taken.add(last)
    return taken


# "every" quantifies ("every migration"), except as a frequency ("every 10 s", "every day",
# "every few hours", "every couple of days": how often a problem shows, not a rule).
_EVERY = (
    r"every(?!\s+(?:(?:few|couple(?:\s+of)?|single)\s+)?(?:\d+\s*)?(?:other\s+)?(?:s|secs?|"
    r"seconds?|ms|minutes?|mins?|hours?|h|days?|weeks?|months?|years?|nights?|mornings?|times?|"
    r"sprints?|releases?)\b)"
)
# Closed-class words that make a statement general (a standing rule), not a one-off task.
_SCOPES = (
    "(?:repo|project|codebase|team|service|pipeline|firmware|app|package|library|cluster|"
    "monorepo|org|company|workspace)"
)
# "in anything you write for me", "in any of my code", "anywhere new": no place left out
# ("can't see it anywhere" is a complaint).
_ANYWHERE = (
    r"in anything|anywhere new|in any (?:of (?:my|our|the) )?(?:code|projects?|repos?|files?|"
    r"components?|services?|apps?)"
    # "fixed-width types in everything I write": the speaker's own standing habit
    r"|in (?:everything|whatever) (?:i|we) (?:write|touch|build)"
)
# "everything inside the solver is SI", "nothing writes there, ever", "everything imports
# that": all of a place's things ("everything is broken", "nothing happened" report).
_EVERYTHING = (
    r"(?:everything|nothing)(?![^.;]*\b(?:looks?|seems?|fine|ok|okay|good|green|broken|fail\w*|"
    r"wrong|weird|works?|happened|changed)\b)\s+(?:inside|(?:blocking|async|sync)\s+in|writes|"
    r"reads|imports|calls|touches|goes|uses|gets|lives)\b"
)
# "never" as a rule, not the speaker's experience ("never done a big tauri app").
_NEVER = rf"never(?!\s+(?:{EXPERIENCED})\b)"
_GENERAL = Folded(
    rf"(?i)\b(?:{_EVERY}|all|always|{_NEVER}|whenever|everywhere|nobody|{_EVERYTHING}|"
    rf"no longer|from now on|going forward|in this {_SCOPES}|for (?:this|our) {_SCOPES}|"
    rf"{_ANYWHERE}|rule|convention|policy|standard|that'?s the decision)\b"
    r"|^\W*(?:and\s+|so\s+)?from now\s*:"
    # "any new email vendor has to process data in the EU": any one of a kind, with a modal
    r"|\bany\s+(?:new\s+)?(?!(?:of|more|one|other|time|help|way)\b)[a-z][\w/-]*"
    r"(?:\s+[a-z][\w/-]*){0,2}\s+(?:has|have|needs?)\s+to\b"
)
# "all" is general only with a modal ("all index migrations should use …"); the others are
# general on their own.
_STRONG_GENERAL = re.compile(
    # "all schedules are in Europe/Berlin local time": a universal statement about the
    # project's things (not a report: "all tests are green").
    r"(?i)^\W*(?:and\s+|also\s+)?(?:(?:in|for|across)\s+(?:our|the|this)\s+[\w/.-]+(?:\s+[\w/.-]+)?,\s*)?"
    r"all\s+(?:our\s+|the\s+|of\s+our\s+)?[a-z][\w-]*s\s+(?:are|go|"
    r"live|use|run|get|have|must|should)\s+(?!(?:green|passing|done|fixed|failing|broken|gone|"
    r"fine|good|there|updated|merged)\b)|"
    rf"\b(?:{_EVERY}|always|{_NEVER}|whenever|everywhere|nobody|{_EVERYTHING}|no longer|"
    rf"from now on|going forward|in this {_SCOPES}|for (?:this|our) {_SCOPES}|{_ANYWHERE}|"
    r"rule|convention|policy|standard|that'?s the decision)\b"
    r"|^\W*(?:and\s+|so\s+)?from now\s*:"
    # "for all public functions", "in all workflows", "on all our workers": a scope over a
    # kind of thing ("match all the changes" names one task's things)
    r"|\b(?:for|in|on|across)\s+all\s+(?:(?:our|new|the)\s+)?(?:[a-z][\w-]*\s+){0,2}?"
    r"(?!(?:the|these|those|tests?|changes|files|issues|errors|places)\b)[a-z][\w-]*[^s\W]s\b"
)
# "no viper", "no hardcoded text in composables", "we dont use floats in this firmware": a
# ban on a thing, not an answer ("no, only english"), an idiom ("no idea") or what was seen
# ("No crash, no errors, the pod is healthy", "no NaNs since").
_PROHIBITION = re.compile(
    r"(?i)^\W*(?:(?:hmm+|ok(?:ay)?|and|also|but|so|then|please|pls|no(?=,))\W+)*(?:(?:no|zero)\s+(?!(?:one|idea|"
    r"problem|problems|worries|need|way|thanks|thank|rush|longer|more|matter|clue|big deal|"
    r"offense|pressure|changes?|luck|errors?|crash(?:es)?|traceback|exceptions?|warnings?|"
    r"difference|output|response|reply|data|nans?|restarts?|oom\w*|issues?)\b)`?[a-z][\w-]*|"
    r"we\s+(?:do\s+not|don'?t|dont|never)\s+"
    r"(?:use|want|allow|ship|write|add|run|commit|call|touch|import|store|log)\b)"
)
# "cache stuff in Awake, we don't do GetComponent per frame here", "…, we do not use the
# 3:1 exception": a clause saying what the team never does is a rule, even after a request.
_CLAUSE_BAN = re.compile(
    r"(?i)[,;:—–]\s+(?:and\s+|but\s+)?we\s+(?:do\s+not|don'?t|dont|never)\s+(?:use|do|write|run|"
    r"commit|call|mock|allow|ship|add|touch|import|store|log|hardcode|put|deploy|merge)\b"
    # "…, hard cap, no pattern gets to go over that": none of a kind may
    r"|[,;:—–]\s+(?:and\s+)?no\s+(?:\w+\s+)?[a-z][\w-]*\s+(?:gets?\s+to|may|can|should|must|"
    r"is\s+allowed\s+to)\b"
)
_PROHIBITION_LEAD = re.compile(
    r"(?i)^\W*(?:(?:hmm+|ok(?:ay)?|and|also|but|so|then|please|pls|no(?=,))\W+)+"
)
_MODAL = re.compile(r"(?i)\b(?:must|should|shall|need to|needs to|has to|have to|are to|is to)\b")
_IF_EVER = re.compile(
    r"(?i)^\W*(?:(?:yeah|yes|ok(?:ay)?|so|and|but|also)\W+)*(?:if|when|once) (?:we|you|i|they) "
    r"(?:ever|someday|one day)\b"
)
_TENTATIVE = re.compile(
    r"(?i)\b(?:if we ever|maybe|might|probably|i think|not sure|perhaps|"
    r"would|could|should we|wonder|later|eventually)\b"
)
_ASKS = re.compile(
    r"(?i)^\W*(?:can|could|would|will) you\b|^\W*(?:please|pls) (?!\w+ (?:in|for) "
    r"(?:this|our))"
)
# A rule for one story, feature or PR is not a standing rule.
_SCOPED = re.compile(
    r"(?i)\bfor (?:story|ticket|issue) [\w-]+|\b(?:this|the) (?:feature|pr|"
    r"ticket|story|page|task) only\b|\bonly for (?:this|the) (?:feature|pr|"
    r"ticket|story|task)\b|\bfor this (?:feature|pr|ticket|story|task|page)\b"
)
# A sentence opening with a verb is a request, unless the verb is one rules open with.
_RULE_OPENERS = frozenset(
    {
        "use",
        "never",
        "always",
        "don't",
        "dont",
        "do",
        "avoid",
        "prefer",
        "no",
        "keep",
        "pin",
        "every",
        "all",
        "nothing",
        "only",
    }
)
STANDING_RULE = 0.8
# Where a kind of thing goes, given as a path: "scenes are in res://scenes/<feature>/",
# "everything from runs goes to /scratch/$USER/…", "put rules in monitoring/rules/".
_PATH = r"[`'\"]?(?:[a-z]+://)?[\w.$~@<>{}-]*/[\w.$~@<>{}/-]*"
# "tag with the git sha, not latest.", "put the config in yaml, not toml.": an order that
# names the alternative it rules out, at its end (not a time or a place of this task: "do it
# now, not later", "fix it in the parser, not in the view").
_NOT_THE_OTHER = re.compile(
    r"(?i)^\W*(?:(?:and|also|please|pls)\s+)*"
    # (not chatter: "Random one, not work related", "Good to know, not deciding that now")
    r"(?!(?:random|quick|good|great|yes|yeah|ok|okay|look|it'?s|that'?s|i)\b)"
    r"[a-z]+\s+[^.;:!?]{3,80}?,\s*(?:and\s+)?not\s+"
    r"(?!(?:now|later|yet|today|tomorrow|here|there|in|at|on|for|to|from|by|with|about|sure|"
    r"really|just|only|that|this|it|them|us|me|you|a|an|the|too|so|very|much|all|every|yours?|"
    r"mine|empty|work|\w+ing|\w+ed)\b)"
    r"[\w`'\"./+-]+(?:\s+[\w`'\"./+-]+){0,2}\s*[.!]?\s*$"
)
_PLACED = re.compile(
    # (Words are \S+ between \s+: classes that share no character, so no backtracking blow-up.)
    rf"(?i)^(?!\W*(?:it|this|that)\b)\W*(?:\S+\s+){{1,8}}?(?:go|goes|live|lives|belong|"
    rf"belongs|gets?)\s+(?:\S+\s+){{0,3}}?(?:in|under|into|to)\s+{_PATH}"
    rf"|^\W*(?:(?:and|also|please|pls)\s+)*(?:put|store|keep)\s+(?:\S+\s+){{0,4}}?"
    rf"(?:in|under|into)\s+{_PATH}"
)
# Where the project's things go, how they are named, and which one of several is used: the
# shape of a standing rule even without "always" ("schemas go in src/schemas/", "tests are
# colocated", "logging goes through defmt, not println", "no jest or vitest", "defmt only").
_STANDING_SHAPE = re.compile(
    r"(?i)^(?!\W*(?:i|we|you|my|our|it|this|that|there)\b)(?!.*\[REDACTED)[^,;:]{2,60}?\b(?:"
    r"(?:go(?:es)?|live|lives|belong|belongs|sit|sits)\s+(?:in|under|into|next to)\s+\S"
    r"|(?:are|is)\s+(?:colocated|prefixed|suffixed|named|kept in)\b"
    r"|(?:goes|go)\s+(?:through|thru|via)\s+\S"
    # "Errors go to stderr" ("now I go to watch the match" is no rule)
    r"|(?<!\bi\s)(?<!\bwe\s)(?<!\byou\s)(?:goes|go)\s+to\s+\S"
    # "Host unit tests run with `make test-host`"
    r"|(?:run|are\s+run)\s+(?:with|through|via)\s+\S"
    r"|(?:use|uses|is|are)\s+\S[^,]*,\s*(?:not|no)\s+\S"
    r"|(?:is|are)\s+[\w`.@/-]+\s+only\W*$)"
)
# The team moving something to a new tool: "we're moving the ETL scripts to polars in
# general", "we're migrating background jobs off sidekiq onto solid queue".
_MIGRATES = re.compile(
    r"(?i)^\W*(?:(?:so|and|ok(?:ay)?|also|btw)\W+)*we(?:'re\s+|\s+are\s+|\s+)(?:moving|migrating|"
    r"switching|move|migrate|switch)\b[^.?!;]{0,60}?\b(?:to|onto)\s+\S"
)
# The speaker calling the statement a rule: "make it a rule: …", "let's make that our
# approach: …", "the rule would be: …", "…, that's the rule here".
_NAMES_A_RULE = re.compile(
    r"(?i)\b(?:make|making)\s+(?:it|this|that)\s+(?:a|the|our|the\s+team'?s?)\s+(?:rule|approach|"
    r"convention|standard|policy)\b|\b(?:the|our)\s+rule\s+(?:is|would\s+be|will\s+be)\b|"
    r"\bthat'?s\s+the\s+rule\b|\bsame\s+rule\s+as\s+(?:before|always|last\s+time)\s*:"
)
# Keeping a choice that was questioned or could change: "we stay on pandas", "commander
# stays", "nodeIntegration stays off" (what a reading "stays flat" or "stays ~1e-10" does is
# a measurement, and a report of trouble is left out by the caller).
_KEEPS_CHOICE = Folded(
    r"(?i)(?:^|[,;:—–]\s*)(?:(?:no|nope|nah|and|so|but|yeah|yes|ok(?:ay)?)\W+)*"
    r"(?:we\s+(?:stay|are\s+staying|'re\s+staying)\s+(?:on|with)\s+\S|staying\s+(?:on|with)\s+"
    r"\S|(?!(?:it|this|that|there|which|what|everything|nothing|something)\b)[\w`.@/+-]+"
    r"(?:\s+[\w`.@/+-]+){0,2}\s+stays\b(?!\s+(?:flat|there|around|about|~|at\s+~|open|empty|"
    r"below|above|stuck|high|low|zero|0)\b))"
)
# Where a kind of thing is taken from: "Secrets come from Vault …", "error strings come from
# i18n". Not where trouble comes from ("the 500 comes from the nginx ingress").
_COMES_FROM = re.compile(
    r"(?i)^(?!\W*(?:i|we|you|it|this|that|there|where|what)\b)(?P<subject>[^,;:?]{2,60}?)\s+"
    r"(?:comes|come)\s+from\s+\S"
)
_TROUBLE_SUBJECT = re.compile(
    r"(?i)\b(?:(?:errors?|warnings?)(?!\s+(?:strings?|messages?|codes?|texts?|pages?|types?|"
    r"handling|envelopes?|bod(?:y|ies))\b)|exceptions?|crash\w*|fail\w*|bugs?|issues?|problems?|"
    r"leaks?|latency|timeouts?|spikes?|noise|lag|\d{3})\b"
)


def _comes_from(text: str) -> bool:
    m = _COMES_FROM.match(text)
    return m is not None and _TROUBLE_SUBJECT.search(m.group("subject")) is None


MIN_RULE_WORDS, MAX_RULE_WORDS = 5, 60


# "fyi CI is jenkins for all our repos", "… btw": the user hands over a fact to keep.
_FOR_YOUR_INFORMATION = re.compile(
    r"(?i)^\W*(?:fyi|btw|for the record|heads up|note|keep in mind|just so you know|for context)"
    r"\b[\s,:-]*(?=\S)|[,\s]+(?:btw|fyi)\W*$"
)
# "…, so it's the obvious choice. decided.": a one-word verdict ratifies what it follows.
_RATIFIED = re.compile(
    r"(?i)^\W*(?:ok(?:ay)?[,\s]+)?(?:decided|that'?s (?:decided|final|settled)|final(?: "
    r"decision)?|settled)\W*$"
)
# "…add a theme switch, please notice that the current theme is the dark one": the clause
# after the mark is what to keep, the request before it is not.
_NOTE_THAT = re.compile(
    r"(?i)[,;]\s*(?:(?:please|pls)\s+(?:note|notice)|keep in mind|be aware)\s+that\s+(?=\S)"
)
MARKED = 0.8
_MARKED_FAMILY = {
    Category.ARCHITECTURAL_DECISIONS: Family.DECISION,
    Category.IMPLEMENTATION_NOTES: Family.LESSON,
}
# "Where did that SYSTEM line even come from.": a question typed without its mark.
_ASKED_WITHOUT_MARK = re.compile(
    r"(?i)^\W*(?:where|what|why|how|who|when|which)\s+(?:did|does|do|is|are|was|were|can|"
    r"could|should|would|will|has|have)\b|^\W*(?:do|does|did|is|are|can|could|should|would)"
    r"\s+(?:we|you|i|it|they|this|that)\b"
)
RATIFIED = 0.85


def _says_how_to_work(text: str) -> bool:
    """A rule's words: a quantifier, a modal, a ban, "prefer"/"instead", "always"/"never"."""
    from app.engines.offline import extract_rules as r

    low = text.lower()
    return bool(
        _GENERAL.search(text)
        or _MODAL.search(text)
        or _PROHIBITION.match(text)
        or any(r.first(rules, text, low) for rules in (r.STRONG, r.PREFERENCE, r.PREFERENCE_USER))
    )


# "our conventions for this repo:", "two rules while you're in that code:", "The rules:":
# the user announcing that the list after it is their rules.
_ANNOUNCES_RULES = re.compile(
    r"(?i)\b(?:conventions?|rules?|guidelines?|standards?|principles|policies|how we (?:do|work|"
    r"write|name|log|test))\b[^.?!]{0,60}:\s*$"
)
LISTED = 0.8
_FOR_THIS_TASK = re.compile(
    r"(?i)\b(?:this|the)\s+(?:task|ticket|pr|change|session|time|refactor|migration|spike)\b|"
    r"\bfor now\b|\btoday\b"
)


def _with_listed_rules(found: list[Candidate], statements: list[Statement]) -> list[Candidate]:
    """The items of a list the user announces as their rules ("our conventions for this repo:
    1. all API errors are returned as problem+json 2. …"): each is a rule, whatever its
    wording; what a rule already made a candidate stays as it was."""
    from app.core.screen import is_unsafe
    from app.engines.offline import extract_rules as r
    from app.engines.offline.extract_text import looks_like_code

    used = {c.index for c in found}
    added: list[Candidate] = []
    for i, s in enumerate(statements):
        if s.speaker is not Speaker.USER or s.pasted or not _ANNOUNCES_RULES.search(s.text):
            continue
        if _FOR_THIS_TASK.search(s.text):
            continue  # "rules for this task:": the work at hand, not the project's
        for k in range(i + 1, len(statements)):
            item = statements[k]
            if item.turn != s.turn or not item.bullet:
                break
            text = item.text.strip()
            if (
                k in used
                or item.pasted
                or text.endswith("?")
                or len(text.split()) < MIN_RULE_WORDS - 1
                or looks_like_code(text)
                or r.INJECTION.search(text, text.lower())
                or is_unsafe(text)
            ):
                continue
            content = _sentence_of(_unhedged(text))
            used.add(k)
            added.append(_users_rule(k, item, content, confidence=LISTED))
    if not added:
        return found
    return sorted([*found, *added], key=lambda c: c.index)


def _with_marked(found: list[Candidate], statements: list[Statement]) -> list[Candidate]:
    """User statements marked as information to keep, or ratified as a decision.

    "fyi CI is jenkins for all our repos" and "min target stays iOS 15 btw" hand over a fact;
    "X will go through RabbitMQ. … decided." makes the first statement of the turn a
    decision. Questions, requests, hedged or pasted text and turns carrying instructions
    for the agent are left out, as for standing rules.
    """
    from app.core.screen import is_unsafe
    from app.engines.offline import extract_rules as r

    used = {c.index for c in found}
    added: list[Candidate] = []
    for i, s in enumerate(statements):
        if s.speaker is not Speaker.USER or s.pasted:
            continue
        target, category, confidence = -1, None, MARKED
        if _RATIFIED.match(s.text):
            first = next(
                (
                    k
                    for k in range(i - 1, -1, -1)
                    if statements[k].turn == s.turn and (k == 0 or statements[k - 1].turn != s.turn)
                ),
                -1,
            )
            target, category, confidence = first, Category.ARCHITECTURAL_DECISIONS, RATIFIED
        elif _FOR_YOUR_INFORMATION.search(s.text) or _NOTE_THAT.search(s.text):
            target = i
        if target < 0 or target in used:
            continue
        t = statements[target]
        noted = _NOTE_THAT.search(t.text)
        text = t.text[noted.end() :] if noted else t.text
        text = _FOR_YOUR_INFORMATION.sub("", text).strip()
        if (
            t.speaker is not Speaker.USER
            or t.pasted
            or text.endswith("?")
            or _ASKED_WITHOUT_MARK.match(text)
            or len(text.split()) < MIN_RULE_WORDS
            or _TENTATIVE.search(text)
            or _ASKS.match(text)
            or _opens_with_request(text)
            or r.INJECTION.search(text, text.lower())
            or is_unsafe(text)
        ):
            continue
        content = _sentence_of(_unhedged(text))
        if category is None and noted and not _says_how_to_work(content):
            # "…the current theme is the dark one": a fact about the project, not a rule.
            category = Category.IMPLEMENTATION_NOTES
        used.add(target)
        added.append(
            Candidate(
                category=category or rule_category(content),
                speaker=Speaker.USER,
                turn=t.turn,
                index=target,
                content=content,
                confidence=confidence,
                family=_MARKED_FAMILY.get(category, Family.DIRECTIVE)
                if category
                else Family.DIRECTIVE,
                speakers={Speaker.USER},
            )
        )
    if not added:
        return found
    return sorted([*found, *added], key=lambda c: c.index)


_REPEATED_SHARE = 0.6


def _repeats(words: AbstractSet[str], said: Sequence[AbstractSet[str]]) -> bool:
    """Whether most (60 %) of a statement's words are already in one of `said`."""
    return any(len(words & known) >= _REPEATED_SHARE * len(words) for known in said)


class _Said:
    """Word sets already said, indexed for `_repeats` questions.

    A statement of n words repeats a set when they share at least 60 % of the n, so any
    n - ceil(0.6 n) + 1 of its words include a shared one: a question reads the sets that
    hold the statement's least used words alone, and a long conversation does not compare
    every statement with every item.
    """

    def __init__(self, sets: Iterable[AbstractSet[str]] = ()) -> None:
        self.sets: list[AbstractSet[str]] = []
        self.holding: dict[str, list[int]] = {}
        for words in sets:
            self.append(words)

    def append(self, words: AbstractSet[str]) -> None:
        for word in words:
            self.holding.setdefault(word, []).append(len(self.sets))
        self.sets.append(words)

    def repeats(self, words: AbstractSet[str]) -> bool:
        if not words:
            return bool(self.sets)
        need = len(words) - max(1, math.ceil(_REPEATED_SHARE * len(words) - 1e-6)) + 1
        empty: list[int] = []
        probes = sorted(words, key=lambda w: len(self.holding.get(w, empty)))[:need]
        near = {k for word in probes for k in self.holding.get(word, empty)}
        return _repeats(words, [self.sets[k] for k in sorted(near)])


_RULE_AFTER_REQUEST = re.compile(r"\s+[—–]\s+|\s*;\s+|(?<=\w):\s+")


# "I checked the servicemonitors, nobody touched them", "No OOMKilled in the last 3 days":
# what the speaker did or saw, not a rule. ("We had a pentest …, so every form …" can be one:
# "had", "got", "did" stay out of the list.)
# A story, told in the past: "Last quarter we used the alias …", "I had once a bug where …",
# "it was never flaky, it was just broken", "nobody knew why for a week".
_TOLD_STORY = re.compile(
    r"(?i)^\W*(?:(?:and|but|so|also)\W+)?(?:last (?:quarter|week|month|year|sprint|time)|yesterday|"
    r"(?:a (?:few|couple of) |\w+ )?(?:days|weeks|months|years) ago|back in \d{4})\b"
    r"(?![^.]*\b(?:decided|agreed|settled|from now on|going forward|rule|convention)\b)"
    r"|^\W*(?:i|we) (?:had once|once)\b"
    r"|\b(?:was|were|had|did)\s+(?:n[o']?t\s+)?(?:never|always)\b"
    r"|\b(?:never|nobody|no one)\s+(?:\w+\s+)?(?:was|were|had|did|knew|noticed|saw|got|went|came|"
    r"thought|realized|realised|found|checked|tested|touched)\b"
)
_QUOTED = re.compile(r'"[^"]{0,200}"|“[^”]{0,200}”')
# Every match of `_TOLD_STORY` holds one of these: the regex runs only where one occurs.
_STORY_WORDS = (
    "last ",
    "yesterday",
    " ago",
    "back in",
    "once",
    "never",
    "always",
    "nobody",
    "no one",
)


def tells_a_story(text: str) -> bool:
    """Whether a statement tells what happened ("it was never flaky, it was just broken"),
    outside what someone is quoted saying ("… says "I never got the mail"")."""
    low = text.lower()
    if not any(w in low for w in _STORY_WORDS):
        return False
    return _TOLD_STORY.search(_QUOTED.sub(" ", text)) is not None


_TELLS_WHAT_HAPPENED = re.compile(
    r"(?i)^\W*(?:(?:and|but|so|also|ok(?:ay)?)\W+)?(?:i|we)\s+(?:went|checked|saw|looked|"
    r"tried|ran|found|noticed|measured|tested)\b"
    r"|\bin the (?:last|past) (?:\d+|few|couple of|two|three) (?:hours|days|weeks|months|runs)\b"
    rf"|{_TOLD_STORY.pattern[4:]}"
)


# "Some drivers never update the app.", "Our clients are mostly integrations …": a rule holds
# for all of its kind; a statement about some or most of them describes how things are.
_PARTIAL = re.compile(r"(?i)\b(?:some|most|mostly|half|many|several|sometimes|usually|often)\b")


def _describes_some(text: str) -> bool:
    """Whether the first clause of a statement speaks of part of its kind, not all of it."""
    from app.engines.offline.dialogue import main_clause

    return _PARTIAL.search(re.split(r"[,(]", main_clause(text), maxsplit=1)[0]) is not None


# "Production log level goes to INFO, DEBUG was too noisy", "… REST for the mobile API,
# GraphQL added too much complexity": a rule, then what the old choice did wrong, by its name.
_OLD_FAULTED = re.compile(
    r"(?i)^[^,;]{8,}[,;]\s*(?:(?:and|since|because)\s+)?(?:(?:the|our)\s+)?(?:old\s+)?"
    r"(?=(?-i:[`'\"]?[A-Z0-9]))(?!I\b)[`'\"]?(?P<old>[\w.+#@/-]*\w)[`'\"]?\s+(?:(?:was|were)\s+"
    r"(?:(?:way|far)\s+)?(?:too|giving|causing|getting)|caused|added\s+too|kept\s+\w+ing|broke)\b"
)


def _faulted_replaced(found: list[Candidate]) -> None:
    """A user's rule followed by what an old choice did wrong replaces that choice ("…, DEBUG
    was too noisy" retires an earlier "Log level in production is DEBUG")."""
    for c in found:
        if (
            c.speaker is not Speaker.USER
            or c.category is Category.BUG_PATTERNS
            or any(t.startswith(REPLACES) for t in c.topic_tags)
        ):
            continue
        m = _OLD_FAULTED.match(c.content)
        if m is not None and m.group("old").lower() not in c.content[: m.start("old")].lower():
            c.topic_tags = [*c.topic_tags, REPLACES + m.group("old").lower()]


def _moves_replace_earlier(found: list[Candidate]) -> None:
    """ "We're moving transactional mail to Postmark": a move replaces what an earlier thread
    chose for the same thing (the evolution matches it by the words they share), unless it
    already names what it replaces."""
    for c in found:
        if (
            c.speaker is Speaker.USER
            and c.category is not Category.BUG_PATTERNS
            and not any(t.startswith(REPLACES) for t in c.topic_tags)
            and _MIGRATES.search(c.content)
        ):
            c.topic_tags = [*c.topic_tags, REPLACES + EARLIER]


# "We already run RabbitMQ for the ledger events, so use Celery with RabbitMQ as the broker":
# the choice after ", so", with what leads to it as its reason.
_ADVICE_AFTER_SO = re.compile(
    r"(?i)^(?P<why>\S.{12,}?),\s+so\s+(?:please\s+|pls\s+)?(?P<rule>(?:use|keep|prefer|pin|"
    r"stick (?:with|to)|stay (?:on|with)|go with)\s.{8,})$"
)


def _with_advice_after_so(found: list[Candidate], statements: list[Statement]) -> list[Candidate]:
    """A user's choice told as the consequence of a fact ("…, so use Celery …")."""
    from app.core.screen import is_unsafe

    used = {c.index for c in found}
    for i, s in enumerate(statements):
        if i in used or s.speaker is not Speaker.USER or s.pasted or s.text.endswith("?"):
            continue
        if ", so " not in s.text.lower():
            continue
        m = _ADVICE_AFTER_SO.match(s.text)
        if m is None or _TENTATIVE.search(s.text) or is_unsafe(s.text):
            continue
        found.append(
            _users_rule(i, s, _sentence_of(m.group("rule")), rationale=_sentence_of(m.group("why")))
        )
    found.sort(key=lambda c: c.index)
    return found


def _users_rule(
    i: int,
    s: Statement,
    content: str,
    *,
    confidence: float = STANDING_RULE,
    family: Family = Family.DIRECTIVE,
    rationale: str = "",
    named: bool = False,
) -> Candidate:
    """A rule the user stated in statement `i`, its category read from its words."""
    return Candidate(
        category=rule_category(content),
        speaker=Speaker.USER,
        turn=s.turn,
        index=i,
        content=content,
        confidence=confidence,
        family=family,
        speakers={Speaker.USER},
        rationale=rationale,
        named_rule=named,
    )


# A short preface before a colon ("Before you write any:", "One more thing:").
_PREFACE = re.compile(r"^[^:`]{1,40}:\s+(?=\S)")
_PREFACE_WORDS = 6
_NAMING_PREFACE_WORDS = 8  # ("A few things I have already decided:")
# ... one that says the rest is a decision or a rule ("A few things I've already decided:",
# "Ground rules:", "Constraints:").
_PREFACE_NAMES_RULES = re.compile(
    r"(?i)\b(?:(?:already|we'?ve|i'?ve|we\s+have|i\s+have)\s+decided|decisions?|(?:ground\s+)?"
    r"rules?|conventions?|constraints?|non-negotiables?)\b"
)
# ... one that speaks of the agent's work to come: "Before you write any:", "When you add
# the endpoint:", "While you're in there:".
_PREFACE_OF_WORK = re.compile(
    r"(?i)^\W*(?:(?:and|also|oh|btw|so)\W+)*(?:before|when|whenever|while|once|as|if)\s+you\b"
    # ... or names what the rest is about: "As for location:", "Regarding naming:"
    r"|^\W*(?:(?:and|also|oh|btw|so)\W+)*(?:as\s+for|regarding|re)\s+(?:the\s+)?[\w-]+"
    r"(?:\s+[\w-]+)?\s*:"
)


def _standing_reading(
    text: str,
) -> tuple[str, int, bool, bool, bool, bool] | None:
    """How `text` reads as a general statement (`_with_standing_rules`): the text, its word
    count, whether a clause of it bans something, whether it names a rule, whether it is
    shaped as a standing rule or as where things go; None when it reads as none of them."""
    words = len(text.split())
    clause_ban = _CLAUSE_BAN.search(text) is not None
    banned = clause_ban or _PROHIBITION.match(text) is not None
    placed = shaped = False
    # "Make it a rule: …", "So the rule would be: …", "…, that's the rule here": the
    # speaker says it is a rule, whatever its wording otherwise suggests.
    named = _NAMES_A_RULE.search(text) is not None
    if banned and words < MIN_RULE_WORDS:
        pass  # "no viper." is a rule; its reason follows
    elif named and MIN_RULE_WORDS <= words <= MAX_RULE_WORDS:
        pass  # "let's make that our approach: components use container queries, …"
    elif 3 <= words <= MAX_RULE_WORDS and _comes_from(text):
        shaped = True  # "Secrets come from Vault via spring-cloud-vault …"
    elif 3 <= words <= MAX_RULE_WORDS and _MIGRATES.search(text):
        shaped = True  # "we're moving background jobs off sidekiq onto solid queue"
    elif 3 <= words <= MAX_RULE_WORDS and _STANDING_SHAPE.search(text):
        # "Validation schemas go in src/schemas/", "Logging goes through defmt, not …",
        # "Snapshots are Mondays only."
        shaped = True
    elif 3 <= words <= MAX_RULE_WORDS and _PLACED.search(text):
        placed = True  # "put rules in monitoring/rules/, one file per service"
    elif 3 <= words <= MAX_RULE_WORDS and _NOT_THE_OTHER.match(text):
        placed = True  # "tag with the git sha, not latest": one way, the other named out
    elif words <= MAX_RULE_WORDS and _KEEPS_CHOICE.search(text):
        # "No, we stay on pandas.", "no way, we left elastic for a reason, loki stays."
        from app.engines.offline.dialogue import describes_trouble

        if describes_trouble(text):
            return None
    else:
        # "…, but it is for sure not our rule": a rule disowned names none.
        probe = _NOT_A_RULE.sub(" ", text)
        if not MIN_RULE_WORDS <= words <= MAX_RULE_WORDS or not _GENERAL.search(probe):
            if not banned:
                return None
        elif not _STRONG_GENERAL.search(probe) and not _MODAL.search(text) and not banned:
            return None  # "all" alone ("update the file to match all the changes") is a task
    return text, words, clause_ban, named, shaped, placed


_NOT_A_RULE = re.compile(
    r"(?i)\b(?:not|never)\s+(?:our|a|the|any|my)\s+(?:\w+\s+)?(?:rule|convention|policy|standard)s?\b"
)


# Where a sentence goes on past its first clause.
_GOES_ON = re.compile(r",\s|;\s|\s(?:and|which|but)\s")
# The speaker says what they want: "I don't want something publishing on every merge",
# "I'd like the cursor encoding in one small class, not repeated in every controller".
_WISH = re.compile(
    r"(?i)\b(?:i|we)(?:\s+(?:do|really|just))?(?:\s+(?:not|n't)|n't)?\s+want\b"
    r"|\b(?:i|we)(?:'d| would) like\b"
)


def _with_standing_rules(found: list[Candidate], statements: list[Statement]) -> list[Candidate]:
    """User sentences that state a general rule the sentence rules did not pick up.

    General means quantified ("every service", "all our images", "never", "from now on") or
    named as a rule/convention/decision; tentative ("maybe", "if we ever"), asked ("can you
    ...?") and pasted text are not rules. The wording picks the category.
    """
    from app.core.screen import is_unsafe
    from app.engines.offline import extract_rules as r
    from app.engines.offline.extract_items import tokens

    used = {c.index for c in found}
    said: _Said | None = None
    # Turns carrying instructions aimed at the agent or the memory are nobody's rules.
    tainted = {
        s.turn
        for s in statements
        if s.speaker is Speaker.USER and r.INJECTION.search(s.text, s.low)
    }
    for i, s in enumerate(statements):
        if i in used or s.speaker is not Speaker.USER or s.pasted or s.text.endswith("?"):
            continue
        if asked_without_mark(s.text):
            continue
        if s.text.startswith(("/", "<", "[")):
            continue  # a slash command or markup the agent's tool put in the user's turn
        # The cheap tests first: most sentences are not general statements at all.
        reading = _standing_reading(s.text)
        if reading is None:
            # "Before you write any: tests are plain pytest functions, no unittest …": what
            # a short preface leads into may be the rule.
            preface = _PREFACE.match(s.text)
            if preface is None or len(preface.group(0).split()) > _NAMING_PREFACE_WORDS:
                continue
            rest = s.text[preface.end() :]
            if _PREFACE_OF_WORK.match(preface.group(0)):
                if len(preface.group(0).split()) <= _PREFACE_WORDS:
                    reading = _standing_reading(rest)
            elif (
                _PREFACE_NAMES_RULES.search(preface.group(0))
                and MIN_RULE_WORDS <= len(rest.split()) <= MAX_RULE_WORDS
                # (prose, not a listing: 'Foreign-key constraints: "transfers_…_fkey" …')
                and rest[:1].isalpha()
            ):
                # "A few things I've already decided: the minimum supported Rust version is
                # 1.70.": the preface says what the rest is
                ban = _CLAUSE_BAN.search(rest) is not None
                reading = (rest, len(rest.split()), ban, True, False, False)
            if reading is None:
                continue
        text, words, clause_ban, named, shaped, placed = reading
        if (_TENTATIVE.search(text) or _ASKS.match(text)) and not named:
            continue
        if _SCOPED.search(text):
            continue
        if _TELLS_WHAT_HAPPENED.search(text) or _describes_some(text) or measures(text):
            continue
        if not (named or clause_ban or shaped or placed) and describes_trouble(text):
            continue  # "Every merge request has 5 MB of outputs inside, … unreadable."
        if placed and _opens_with_request(_CONNECTIVE.sub("", text)):
            # "also add a regression test for it, tests go in tests/ next to the module":
            # the request is a task; where things go is said after the comma.
            head, _, rest = text.partition(", ")
            if rest and _PLACED.search(rest) and not _PLACED.search(head):
                text = rest
        elif _opens_with_request(text):
            # "export it as a named export pls — I don't use default exports, in any of my
            # code, ever": the request is a task, the rule after the dash is not.
            tail = _RULE_AFTER_REQUEST.split(text, maxsplit=1)
            rest = tail[1].strip() if len(tail) == 2 else ""
            # ("run make schema-check before you tell me it's done, that's the rule for any
            # schema change": a request its speaker calls the rule is the rule.)
            if not (named and not rest) and not clause_ban:
                if (
                    len(rest.split()) < 4
                    # ("let's make that our approach: components use …": named, the rest is
                    # the rule whatever its words)
                    or not (named or _STRONG_GENERAL.search(rest) or _PROHIBITION.match(rest))
                    or (_opens_with_request(rest) and not named)
                ):
                    continue
                text = rest
        if text.rstrip().endswith(":"):
            continue
        if s.turn in tainted or is_unsafe(text):
            continue
        if said is None:
            said = _Said(
                frozenset(tokens(" ".join((c.content, c.root_cause, c.fix, c.rationale))))
                for c in found
            )
        words_of = tokens(text)
        if words_of and said.repeats(words_of) and not named:
            continue  # already part of an item (a fix, a rationale)
        content = _sentence_of(_PROHIBITION_LEAD.sub("", _unhedged(text)))
        after = statements[i + 1] if i + 1 < len(statements) else None
        if (
            words < MIN_RULE_WORDS
            and not shaped
            and after is not None
            and after.turn == s.turn
            and not after.text.endswith("?")
            and not _opens_with_request(after.text)
        ):
            content = f"{content} {_sentence_of(after.text)}"  # "No viper. Too much magic."
        rule = _users_rule(i, s, content, named=named)
        # (Said in one clause, "Every service logs JSON to stdout." is a rule as it stands.)
        rule.universal_only = (
            _GOES_ON.search(text) is not None
            and not (named or clause_ban or shaped or placed or _PROHIBITION.match(text))
            and not (_KEEPS_CHOICE.search(text) or _WISH.search(text))
        )
        found.append(rule)
    found.sort(key=lambda c: c.index)
    return found


_VALUE = (
    r"~?\d[\w.,:%/-]*(?:\s?(?:ms|s|sec|secs|seconds?|min|mins|minutes?|h|hrs?|hours?|days?|d|"
    r"weeks?|months?|years?|mb|gb|kb|tb|hz|khz|mhz|%|retries|attempts|steps|replicas|workers|"
    r"items|rows|requests|rps|qps|px|pt|chars|characters|lines|epochs|x))?"
)
# A setting given a new value: "raise the server tick from 20 to 30 Hz", "widen the lookback
# to 180 days", "bring the peak lr down to 1e-4"; "the MSRV goes up to 1.74" (said first);
# "make audit_events keep 400 days". The value holds a digit, which is what tells a setting
# from "reduce the noise to a minimum". ("set"/"bump" are left out: "bump version to 0.4.0
# and tag it" is a task.)
_SUBJECT = r"[\w./-]+(?:\s+[\w./-]+){0,3}?"
_CHANGES_A_VALUE = Folded(
    r"(?i)\b(?:rais|lower|widen|narrow|increas|decreas|reduc|cut|extend|shorten|chang|tighten|"
    rf"loosen|stretch|shrink|bring)\w*\s+(?:(?:the|our|its|their|all|every)\s+)?{_SUBJECT}\s+"
    rf"(?:from\s+\S+(?:\s\w+)?\s+)?(?:(?:up|down|back)\s+)?to\s+{_VALUE}\b"
    rf"|^\W*(?:(?:so|and|ok(?:ay)?|then)\W+)*(?:the\s+|our\s+)?{_SUBJECT}\s+(?:goes|go|is going|"
    rf"are going|moves?)\s+(?:up|down|back)\s+(?:from\s+\S+\s+)?to\s+{_VALUE}\b"
    rf"|\bmake\s+[\w./-]+(?:\s+[\w./-]+){{0,2}}?\s+keep\s+{_VALUE}\b"
)
# "make it every 30 minutes instead": the value is new, the sentence before says of what.
_MAKES_IT = re.compile(
    rf"(?i)^\W*(?:(?:so|and|ok(?:ay)?|then)\W+)*make\s+(?:it|that|them)\s+"
    rf"(?:every\s+)?{_VALUE}\b"
)
VALUE_CHANGED = 0.8


def _with_value_changes(found: list[Candidate], statements: list[Statement]) -> list[Candidate]:
    """A user sentence giving a setting a new value ("raise the tick from 20 to 30 Hz").

    A later thread changing a value an earlier one set is how settings evolve (retention,
    tick rates, the MSRV, a learning rate); no rule word says so. Questions, guesses ("maybe
    raise it to 5s"), accounts of what was done ("we tried raising it to 5s") and pasted
    text are not changes; "make it 96 hours" takes the sentence before it, which says of
    what. The weak-item hold lets these through (`_held_for_review`): holding the new value
    would leave the old one standing.
    """
    from app.core.screen import is_unsafe

    used = {c.index for c in found}
    at = {c.index: c for c in found}
    for i, s in enumerate(statements):
        if i in used or s.speaker is not Speaker.USER or s.pasted or s.text.endswith("?"):
            continue
        before = statements[i - 1] if i else None
        held = at.get(i - 1)
        if (
            held is not None
            and held.speaker is Speaker.USER
            and held.turn == s.turn
            and held.family is not Family.BUG
            and _MAKES_IT.search(s.text)
            and not _TENTATIVE.search(s.text)
            and not _instructs(s.text)
        ):
            # "… so the alarm is only a safety net. make it every 30 minutes instead.": the
            # sentence before is already an item; the new value completes it.
            held.content = f"{held.content} {_sentence_of(_unhedged(s.text))}"
            continue
        of_before = (
            _MAKES_IT.search(s.text) is not None
            and before is not None
            and before.turn == s.turn
            and not before.text.endswith("?")
            and i - 1 not in used
        )
        if not (of_before or _CHANGES_A_VALUE.search(s.text)) or is_unsafe(s.text):
            continue
        if _TENTATIVE.search(s.text) or _TELLS_WHAT_HAPPENED.search(s.text):
            continue  # "maybe raise it to 5s", "we tried raising it to 5s"
        content = _sentence_of(_unhedged(s.text))
        if of_before and before is not None:
            content = f"{_sentence_of(before.text)} {content}"
        found.append(_users_rule(i, s, content, confidence=VALUE_CHANGED, family=Family.DECISION))
    found.sort(key=lambda c: c.index)
    return found


# The agent saying it will keep what the user just told it: the user gave a fact or a rule
# to retain, not a task ("Done." and "Sure, fixing it" acknowledge work, and do not count).
_KEEPS = re.compile(
    r"(?i)^\W*(?:noted|got it|understood|will remember|i'?ll remember|i will remember"
    r"|(?:i'?ll|i will) keep (?:that|it|this) in mind|(?:ok(?:ay)?|sure|right)[,.!]?\s+"
    r"(?:noted|got it|i'?ll remember|understood))\b"
)
ACKNOWLEDGED = 0.8
# Words of an acknowledgement that name nothing of what it keeps: "Got it, I'll keep that in
# mind for the next changes" answers the whole message, as a bare "Got it." does.
_ACK_WORDS = frozenset(
    {"keep", "mind", "remember", "note", "next", "future", "change", "going", "forward", "ll"}
)


_GREETS = re.compile(r"(?i)^\W*(?:hi|hello|hey|good (?:morning|afternoon|evening))\b")


def _indices_by_turn(statements: list[Statement]) -> dict[int, list[int]]:
    """Each turn's statement indices, in order."""
    by_turn: dict[int, list[int]] = {}
    for i, s in enumerate(statements):
        by_turn.setdefault(s.turn, []).append(i)
    return by_turn


def _with_acknowledged(
    found: list[Candidate], turns: list[Turn], statements: list[Statement]
) -> list[Candidate]:
    """What the user said in a turn the agent answered with "Noted" / "Got it" / "I'll
    remember": a fact or rule handed over to be kept, even without a rule word in it
    ("branch names: feature/<ticket>-<slug>"). Questions, requests for work, pasted text
    and anything already part of an item are left out.
    """
    from app.core.screen import is_unsafe
    from app.engines.offline import extract_rules as r
    from app.engines.offline.dialogue import PROBLEM_GONE_RE, describes_trouble
    from app.engines.offline.extract_items import tokens

    by_turn = _indices_by_turn(statements)
    kept_turns: set[int] = set()
    # An acknowledgement that names what it keeps ("Noted, kotest and mockk from now on")
    # keeps, of a message of several sentences, those sharing a word with it; a bare "Got
    # it." keeps the whole message.
    echoes: dict[int, set[str]] = {}
    for n, reply in enumerate(turns):
        if n == 0 or reply.speaker is not Speaker.AGENT:
            continue
        said_back = [statements[i].text for i in by_turn.get(reply.index, [])]
        first = said_back[0] if said_back else ""
        if not first or not _KEEPS.match(first):
            continue
        echo = stems(" ".join(said_back)) if tokens(_KEEPS.sub("", first)) - _ACK_WORDS else None
        # The acknowledgement answers every message the user sent since the agent last
        # spoke (people send a rule in two or three short messages).
        back = n - 1
        while back >= 0 and turns[back].speaker is Speaker.USER:
            kept_turns.add(turns[back].index)
            if echo is not None and len(by_turn.get(turns[back].index, [])) > 1:
                echoes.setdefault(turns[back].index, set()).update(echo)
            back -= 1
    if not kept_turns:
        return found
    used = {c.index for c in found}
    said = _Said(
        frozenset(tokens(" ".join((c.content, c.root_cause, c.fix, c.rationale)))) for c in found
    )
    for turn_index in sorted(kept_turns):
        for i in by_turn.get(turn_index, []):
            s = statements[i]
            if i in used or s.pasted or s.text.rstrip().endswith(("?", ":")):
                continue
            words = len(s.text.split())
            if not MIN_RULE_WORDS <= words <= MAX_RULE_WORDS or _opens_with_request(s.text):
                continue
            if (
                _TENTATIVE.search(s.text)
                or _ASKS.match(s.text)
                or asked_without_mark(s.text)
                or is_unsafe(s.text)
            ):
                continue
            if PROBLEM_GONE_RE.search(s.text):  # "tested, no more crashes": a fix confirmed
                continue
            if "[REDACTED" in s.text or describes_trouble(s.text) or _GREETS.match(s.text):
                continue
            if r.INJECTION.search(s.text, s.low) or _ABOUT_AN_INJECTION.search(s.text):
                continue
            if _ABOUT_THIS_SESSION.search(s.text) or _LABELED_VERDICT.match(s.text):
                continue
            if _TELLS_WHAT_HAPPENED.search(s.text):
                continue  # a story ("Last quarter we used …"): acknowledged, still no rule
            label = re.match(r"^[^:]{1,40}:\s+(?=\S)", s.text)
            rest = s.text[label.end() :] if label else ""
            if rest and _opens_with_request(rest) and not _YES_OR_NO.match(rest):
                continue  # "Ledger-api CI: please add golangci-lint …"
            words_of = tokens(s.text)
            if not words_of or said.repeats(words_of):
                continue
            echo = echoes.get(turn_index)
            if echo is not None and not stems(s.text) & echo:
                continue  # the acknowledgement kept something else of the message
            content = _sentence_of(_unhedged(s.text))
            found.append(_users_rule(i, s, content, confidence=ACKNOWLEDGED))
            said.append(frozenset(words_of))
    found.sort(key=lambda c: c.index)
    return found


_YES_OR_NO = re.compile(r"(?i)^\W*(?:yes|yeah|yep|no|nope|ok(?:ay)?|sure|fine)\b")
# "I have to run now, let's pick this up next week", "I'll run it myself tonight": about this
# session or one task, not how things are done.
_ABOUT_THIS_SESSION = re.compile(
    r"(?i)\b(?:this session|next week|pick this up|i have to (?:run|go)|tonight|one-off|"
    r"i'?ll (?:run|file|do|delete|check|ask|look))\b"
)
# "Session settings: accepted as proposed.", "Passkeys: I have no view on that yet.": a verdict
# on one of the agent's points; the point itself is the item, if any.
_LABELED_VERDICT = re.compile(
    r"(?i)^[^:]{1,40}:\s*(?:ok(?:ay)?|yes|no|accepted|agreed|fine|later|not (?:in this round|now|"
    r"yet)|i have no view)\b(?![^.]*\b(?:but|only|except|unless)\b)[^.]{0,30}\.?$"
)


# The agent's plan ends by asking for a go-ahead ("OK with those numbers?", "Sound good?").
_ASKS_APPROVAL = re.compile(
    r"(?i)\b(?:ok(?:ay)? with|sounds? good|shall i|should i (?:go ahead|proceed|start)|want me "
    r"to (?:go ahead|proceed|start|implement)|does (?:that|this) (?:work|look right)|good to go|"
    r"(?:ok|okay|fine|happy) (?:to|with)|agree)\b[^?]{0,80}\?\s*$"
)
_GO_AHEAD = re.compile(
    r"(?i)^\W*(?:yes|yep|yeah|sure|ok(?:ay)?|sounds good|go ahead|do it|go|looks good|lgtm|"
    r"agreed|perfect|great|good|fine)\b"
)
# What a reply turns down by name: "not yup", "instead of redux", "rather than a cron job".
_SETS_ASIDE = re.compile(
    r"(?i)\b(?:not|no|instead of|rather than|never|without)\s+(?:the\s+|a\s+|an\s+)?"
    r"([\w@.+#-]*\w)"
)
_NOT_ASIDE = frozenset(
    re.findall(
        r"\w+",
        "sure need way problem worries idea one more longer just yet now really too so that "
        "this it them those these all any much many",
    )
)
PLAN_APPROVED = 0.75
_PLAN_CATEGORY = Category.IMPLEMENTATION_NOTES


# "Suggestion for `app/db.py`:", "Proposal:", "Proposed layout:": a turn that opens by
# naming its list a plan puts it up for the user's word as a question would.
_PLAN_LABEL = re.compile(
    r"(?i)^\W*(?:(?:my|a|the|one)\s+)?(?:suggestion|proposal|plan|design|proposed\s+(?:design|"
    r"plan|approach|layout|structure))\b[^?!:]{0,60}:\s*$"
)


# A go-ahead that takes only part of what was put to it.
_QUALIFIED = re.compile(r"(?i)\b(?:but|except|don'?t|do not|instead|rather)\b")


def _labelled_plan(turn: Turn, own: list[int], statements: list[Statement]) -> bool:
    """Whether a turn opens with a plan label and goes on with a list of two or more points
    (a bare "Proposal:" line makes no statement of its own)."""
    first = next((line.strip() for line in turn.lines if line.strip()), "")
    if _PLAN_LABEL.match(first) is None:
        return False
    points = [i for i in own if statements[i].bullet]
    return len(points) >= 2 and len(points) >= len(own) - 1


def _with_approved_plans(
    found: list[Candidate], turns: list[Turn], statements: list[Statement]
) -> list[Candidate]:
    """The points of a plan the agent listed and the user approved ("Design: - … OK?" "yes, go").

    Each list item of an agent turn that ends by asking for a go-ahead, or that opens by
    naming the list a plan ("Suggestion for `app/db.py`: - …"), answered by the user with
    one ("fine, …"), is what was decided; questions and code are not, and an item already
    said by another candidate is not repeated.
    """
    from app.engines.offline.extract_items import tokens

    by_turn = _indices_by_turn(statements)
    said = _Said(frozenset(tokens(" ".join((c.content, c.root_cause, c.fix)))) for c in found)
    used = {c.index for c in found}
    for n, turn in enumerate(turns):
        if turn.speaker is not Speaker.AGENT:
            continue
        own = by_turn.get(turn.index, [])
        if not own:
            continue
        asked = _ASKS_APPROVAL.search(statements[own[-1]].text) is not None
        if not asked and not _labelled_plan(turn, own, statements):
            continue
        reply = next((t for t in turns[n + 1 :] if t.speaker is Speaker.USER), None)
        answer = by_turn.get(reply.index, []) if reply is not None else []
        if not answer or not _GO_AHEAD.match(statements[answer[0]].text):
            continue
        if not asked and any(_QUALIFIED.search(statements[k].text) for k in answer):
            # "yes platformdirs. but don't move user files": a plan nobody asked about, taken
            # up in part, leaves its points to the user's own words.
            continue
        # "yes but use zod, not yup": a point naming what the approval sets aside is not
        # what was decided.
        aside = {
            m.group(1).lower()
            for k in answer
            for m in _SETS_ASIDE.finditer(statements[k].text)
            if m.group(1).lower() not in _NOT_ASIDE
        }
        for i in own:
            s = statements[i]
            if not s.bullet or i in used or s.text.rstrip().endswith("?"):
                continue
            if aside and aside & set(re.findall(r"[\w@./+#-]+", s.text.lower())):
                continue
            if _opens_with_request(s.text.replace("`", "").replace("**", "")):
                continue  # "Create SignupForm.tsx …", "Add a test …": a step of the work
            if not 4 <= len(s.text.split()) <= MAX_RULE_WORDS:
                continue
            words = tokens(s.text)
            if not words or said.repeats(words):
                continue
            content = _sentence_of(s.text.replace("`", "").replace("**", ""))
            found.append(
                Candidate(
                    category=_PLAN_CATEGORY,
                    speaker=Speaker.AGENT,
                    turn=s.turn,
                    index=i,
                    content=content,
                    confidence=PLAN_APPROVED,
                    family=Family.DECISION,
                    speakers={Speaker.AGENT, Speaker.USER},
                )
            )
            said.append(frozenset(words))
    found.sort(key=lambda c: c.index)
    return found


# "- **sqlfmt**: only a formatter, very fast": one option of several the agent laid out.
# A list item ("- …", "2. …", "(b) …"), an option named in bold, or a plain one named
# before its description ("pg_repack: rebuilds the table online", "Envoy Gateway.").
_OPTION_LINE = re.compile(r"^\s*(?P<mark>[-*+]|\d+[.)]|\(?[a-e]\))\s+(?P<body>\S.*)$")
_BOLD_NAME = re.compile(r"^\*\*(?P<name>[^*]{2,60})\*\*\s*[:—–-]?\s*(?P<about>.*)$")
_PLAIN_NAME = re.compile(r"^(?P<name>[^:(—–,;.]{2,60}?)(?:\s*[:(—–,;]|\s+-\s|\.?$)")
# A name that states something ("The cursor is base64url", "AppDatabase now has …") makes
# the list a report or a spec, not alternatives.
_STATES = re.compile(r"(?i)\b(?:is|are|was|has|have|now|uses|gets|returns|equals|exports|runs)\b")
# Words around a list that offer a choice ("Two ways to fix it:", "Which do you prefer?").
_OFFERS_CHOICE = re.compile(
    r"(?i)\b(?:options?|choices?|alternatives?|approaches|either|prefer|which|vs\.?|versus|"
    r"candidates|pick|choose|recommend|two|three|four|both|several|ways?|ones)\b|\?"
)
_OPTION_KEY = re.compile(r"[\w.+#@-]*\w")
# Words too common to tell one option from another.
_NOT_KEYS = frozenset(
    re.findall(
        r"\w+",
        "the and with for one own our your use using keep stay move add just only plus via "
        "its their this that new",
    )
)
PICKED = 0.8
MAX_OPTION_WORDS = 8
MAX_PICK_CHARS = 1500


@dataclass(frozen=True)
class _Option:
    name: str  # "" when the item names nothing short enough to be picked by name
    text: str  # the whole item, the decision's wording when picked
    numbered: bool
    bold: bool
    keys: frozenset[str] = frozenset()  # words of the name no other option of its list has
    subject: str = ""  # what the question before the list was about ("Rig prefix")


def _option_item(line: str) -> _Option | None:
    m = _OPTION_LINE.match(line)
    if m is None:
        return None
    body = m.group("body").strip()
    numbered = m.group("mark")[0].isdigit()
    bold = _BOLD_NAME.match(body)
    if bold:
        name, about = bold.group("name").strip(), bold.group("about").strip()
        if name.endswith((".", ":")):
            name = ""  # a sentence in bold is a finding or a step
        if about[:1] in ",;":
            about = about[1:].strip()  # "**`ObjectPool<T>`**, built into Unity …"
        text = f"{name} {about}" if about[:1] in ("(", "[", "") else f"{name}: {about}"
    else:
        plain = None if body.endswith("?") else _PLAIN_NAME.match(body)
        name, text = (plain.group("name") if plain else ""), body
    name = name.replace("`", "").strip()
    if len(name.split()) > MAX_OPTION_WORDS or _STATES.search(name):
        name = ""
    text = text.replace("`", "").replace("**", "").strip()
    return _Option(name, text, numbered, bold is not None)


_LIST_MARK = re.compile(r"\s*(?:[-*+]|\d+[.)]|\(?[a-e]\))\s")
_MARK_FIRST = frozenset("-*+0123456789(abcde")


def _option_lists(lines: list[str]) -> list[list[_Option]]:
    """Runs of list items an agent turn offers as alternatives. A run counts when every
    item is named in bold, or when the line before or after it speaks of a choice; a plan
    or a report does not. At least two items of a run must be named."""
    # (A list item opens with a mark's first character: most lines need no regex.)
    marked = [
        line.lstrip()[:1] in _MARK_FIRST and _LIST_MARK.match(line) is not None for line in lines
    ]
    if sum(marked) < 2:
        return []
    runs: list[list[_Option]] = []
    current: list[_Option] = []
    before = ""
    for line, mark in zip([*lines, "."], [*marked, False], strict=True):
        item = _option_item(line) if mark else None
        if item is not None:
            current.append(item)
            continue
        if not line.strip() or line.startswith((" ", "\t")):
            continue  # an item's continuation
        # The run first (cheap), then whether a line around it speaks of a choice.
        if sum(bool(o.name) for o in current) >= 2 and (
            all(o.bold for o in current)
            or _OFFERS_CHOICE.search(before)
            or _OFFERS_CHOICE.search(line)
        ):
            subject = _subject(before)
            runs.append(_keyed([replace(o, subject=subject) for o in current]))
        if not current:
            before = line
        current = []
    return runs


def _keyed(items: list[_Option]) -> list[_Option]:
    words = [
        {
            w
            for word in _OPTION_KEY.findall(o.name.lower())
            for w in _with_last_part(word)
            if len(w) >= 3 and w not in _NOT_KEYS
        }
        for o in items
    ]
    out = []
    for k, item in enumerate(items):
        others = set().union(*(w for j, w in enumerate(words) if j != k))
        keys = frozenset(words[k] - others)
        out.append(_Option(item.name, item.text, item.numbered, item.bold, keys, item.subject))
    return out


def _with_last_part(word: str) -> tuple[str, ...]:
    """A qualified name and its last part: "codes.InvalidArgument" is answered by
    "InvalidArgument" as often as in full, and "SSE-KMS" by "KMS" (a last part of three
    letters or more after a dash; the option's keys keep only what no other option has)."""
    last = word.rsplit(".", 1)[-1]
    named = (word, last) if "." in word.strip(".") and last[:1].isalpha() else (word,)
    if "-" in word.strip("-"):
        part = word.rsplit("-", 1)[-1]
        if len(part) >= 3 and part[:1].isalpha() and part not in named:
            named = (*named, part)
    return named


# "Rig prefix: Which rig do these beads belong to?": a short subject before a question (Claude
# Code's question dialog writes its chip so).
_ASKED_SUBJECT = re.compile(
    r"^\W*(?P<head>[A-Za-z][\w+/.-]*(?:\s+[\w+/.-]+){0,3})\W*:\s+(?P<asked>[^\n]*\?)"
)


def _subject(line: str) -> str:
    """The subject a question line opens with, when the question speaks of it."""
    m = _ASKED_SUBJECT.match(line)
    if m is None:
        return ""
    asked = {w[:4] for w in re.findall(r"[a-z]{3,}", m.group("asked").lower())}
    head = m.group("head")
    return head if any(w[:4] in asked for w in re.findall(r"[a-z]{3,}", head.lower())) else ""


def _about_subject(option: _Option, content: str) -> str:
    """A picked option's wording under the subject it was asked about: "Rig prefix: No rig —
    don't use a rig prefix" (the option alone, "No rig", says nothing)."""
    if not option.subject or content.lower().startswith(option.subject.lower()):
        return content
    name = option.name
    if name and content.startswith(f"{name}: "):
        content = f"{name} — {lower_first(content[len(name) + 2 :])}"
    return f"{option.subject}: {content}"


# Words that make a named option the choice ("Oban, agreed", "ECB it is", "we take Room").
_TAKES = re.compile(
    r"(?i)\b(?:it is|yes|yep|yeah|agreed|go with|going with|take|then|do it|do that|let'?s|use|is "
    r"enough|what i need|we'?ll use|we use|works for us|so it'?s)\b"
)
_BOTH = re.compile(r"\b(?:both|all of them|all three|either)\b")
_LEAD = re.compile(r"^\W*(?:(?:ok(?:ay)?|so|yes|yeah|then|hmm|well|the|we go with|go with)\b\W*)*")
_WEIGHS = re.compile(
    r"\bbut\b|\b(?:no|not|never|without|out|overkill|(?:can|don|won|isn|doesn|aren)'?t)\b"
)
_NUMBER_PICK = re.compile(r"\b(?:option|number|#)\s*(\d)\b")
_BARE_NUMBER = re.compile(r"^\W*(?:(?:no|yes|ok|okay|so)\W+)?(\d)\W*$")


def _keys_named(text: str, option: _Option) -> int:
    return sum(key in text and _names(key, text) for key in option.keys)


def _names(word: str, text: str) -> bool:
    """Whether `text` holds `word` as a whole word (a name's dashes are part of it)."""
    from app.engines.offline.evolve import named_word

    return named_word(word).search(text) is not None


def _named_options(text: str, options: list[_Option]) -> list[int]:
    return [k for k, option in enumerate(options) if _keys_named(text, option)]


# "no, wkhtmltopdf.": the answer word before a pick (here turning down the agent's lean).
_ANSWER_WORD = re.compile(r"^\W*(?:(?:no|nope|nah|yes|yeah|yep|ok(?:ay)?|hmm+)\s*,\s*)+")


def _bare(text: str) -> str:
    return " ".join(re.findall(r"[\w+#@./-]+", text.lower()))


def _picked(reply: str, options: list[_Option]) -> int | None:
    """Which option the opening of a reply chooses, if exactly one.

    A sentence picks an option by its number ("option 2", "2."), by its name alone or
    opening it ("drift. we must query by date", "SOPS with age."), or by naming it with a
    word that takes it ("Use jimp.", "MLflow it is"). A sentence that weighs an option
    ("atlas looks heavy", "normally Exq, but …"), turns it down ("AG Grid no") or asks
    picks nothing, and "do both" picks no single one.
    """
    # An answer that is an option's name and nothing else ("Credo + Dialyxir + mix_audit", a
    # choice made in the agent's question dialog) picks it, even where its words are not
    # its own (the other options hold them too).
    whole = _bare(reply)
    exact = [k for k, o in enumerate(options) if o.name and _bare(o.name) == whole]
    if len(exact) == 1:
        return exact[0]
    sentences = re.split(r"(?<=[.!?])\s+", reply.strip())[:6]
    numbered = all(o.numbered for o in options)
    chosen: set[int] = set()
    for n, sentence in enumerate(sentences):
        low = sentence.lower().replace("`", "")
        number = _NUMBER_PICK.search(low) or (_BARE_NUMBER.match(low) if numbered else None)
        if number and 1 <= int(number.group(1)) <= len(options):
            chosen.add(int(number.group(1)) - 1)
            continue
        if n == 0 and _BOTH.search(low):
            return None
        if low.rstrip().endswith("?") or re.search(r"\bbut\b", low):
            continue
        clause = re.split(r"[,;:—–]|\.(?:\s|$)", _ANSWER_WORD.sub("", low), maxsplit=1)[0]
        first = _named_options(clause, options)
        if len(first) == 1 and not _WEIGHS.search(clause):
            words = _LEAD.sub("", clause).split()
            size = len(options[first[0]].name.split())
            opens = bool(words) and _keys_named(words[0], options[first[0]]) > 0
            if (
                len(words) <= 2
                or (opens and size <= 4 and len(words) <= size + 1)
                or _TAKES.search(clause)
            ):
                chosen.update(first)
                continue
        named = _named_options(low, options)
        if len(named) == 1 and _TAKES.search(low) and not _WEIGHS.search(low):
            chosen.update(named)
    return chosen.pop() if len(chosen) == 1 else None


# "errorlint yes", "tflint yes", "redis_rate is fine", "s3 + dynamo yes": a verdict on one
# thing the agent proposed, named; "checkov no", "The eyre no" turn one down.
_NAMED_VERDICT = re.compile(
    r"(?i)^\W*(?:(?:ok(?:ay)?|so|and|but|yes|yeah)\W+)?"
    r"(?P<name>[`\w.+/#@-]+(?:\s+[+&]?\s*[`\w.+/#@-]+){0,2})"
    r"\s*,?\s+(?P<verdict>yes|ok(?:ay)?|is fine|is good|sounds good|it is|no|nope)\b"
)
_PARTS = re.compile(r"\s+and\s+|;\s+|,\s+(?=`)")
# Clauses of a reply; "S3 + dynamodb, yes." stays one: the verdict after the comma is its.
_CLAUSE_BREAK = re.compile(r"(?<=[.!?;])\s+|(?<=,)\s+(?!(?:yes|ok(?:ay)?|no|nope)\b)", re.I)
_VERDICT_WORD = re.compile(r"(?i)\b(?:yes|ok|okay|fine|good|it is|no|nope)\b")
_VERDICT_NOT_NAMES = frozenset(
    re.findall(
        r"\w+",
        "it this that these those all both everything rest the sounds looks ok okay yes no fine "
        "good great perfect hmm well right",
    )
)


# What the agent found or did ("The endpoint now returns 202", "typically shows up as …")
# or a choice left open ("Either filter them out … or …") is not what the user accepted.
# "Then I'd also suggest", "I could also add": the proposing words, not the proposal.
_PROPOSING = re.compile(
    r"(?i)^(?:then\s+|so\s+)?(?:i'?d|i would|i could|we could)\s+(?:also\s+)?"
    r"(?:suggest|recommend|propose|use|go with|add)?\s*"
)
_NOT_A_PROPOSAL = re.compile(r"(?i)\b(?:now|currently|typically|usually|either)\b")


def _answered_agent_turns(
    turns: list[Turn], statements: list[Statement]
) -> Iterator[tuple[Turn, Turn, list[int]]]:
    """Each agent turn the user answered right after, with the answer's statement indices."""
    by_turn = _indices_by_turn(statements)
    for n, turn in enumerate(turns[:-1]):
        reply = turns[n + 1]
        if turn.speaker is Speaker.AGENT and reply.speaker is Speaker.USER:
            answer = by_turn.get(reply.index, [])
            if answer:
                yield turn, reply, answer


def _with_named_acceptances(
    found: list[Candidate], turns: list[Turn], statements: list[Statement]
) -> list[Candidate]:
    """What the agent proposed and the user accepted by naming it ("errorlint yes").

    The agent's line or sentence that names the accepted thing becomes a decision, unless it
    also names something the same reply turned down ("tflint yes. Checkov no").
    """
    for turn, reply, answer in _answered_agent_turns(turns, statements):
        if not any(_VERDICT_WORD.search(line) for line in reply.lines):
            continue
        clauses = [
            c.strip()
            for line in reply.lines
            for c in _CLAUSE_BREAK.split(line.strip())
            if c.strip()
        ]
        yes: list[set[str]] = []
        no: list[set[str]] = []
        for clause in clauses:
            m = _NAMED_VERDICT.match(clause)
            if m is None:
                continue
            words = {
                w
                for w in re.findall(r"[\w.+#@-]*\w", m.group("name").lower().replace("`", ""))
                if len(w) >= 3 and w not in _VERDICT_NOT_NAMES and w not in _NOT_KEYS
            }
            if not words or all(w.isdigit() for w in words):
                continue
            (no if m.group("verdict").lower() in ("no", "nope") else yes).append(words)
        if no:
            # "atlantis no.": the agent's sentence proposing it is not memory, not even for
            # review.
            found = [
                c
                for c in found
                if c.speaker is not Speaker.AGENT
                or c.turn != turn.index
                or not any(
                    all(_names(w, c.content.lower().replace("`", "")) for w in nw) for nw in no
                )
            ]
        if not yes:
            continue
        pieces = [
            p.strip()
            for line in turn.lines
            if line.strip() and not line.lstrip().startswith("[tool")
            for p in (
                [line.strip()]
                if _OPTION_LINE.match(line)
                else re.split(r"(?<=[.!?])\s+", line.strip())
            )
        ]
        for words in yes:
            low_pieces = [p.lower().replace("`", "") for p in pieces]
            hits = [
                k
                for k, p in enumerate(low_pieces)
                if all(w in p for w in words) and all(_names(w, p) for w in words)
            ]
            if not hits:
                continue
            k = hits[0]
            piece = pieces[k]
            if any(any(w in low_pieces[k] and _names(w, low_pieces[k]) for w in nw) for nw in no):
                # "two additions: `tflint` (catches …) and `checkov` (…)": the accepted part.
                parts = [
                    p
                    for p in _PARTS.split(piece.split(": ", 1)[-1])
                    if all(_names(w, p.lower().replace("`", "")) for w in words)
                    and not any(any(_names(w, p.lower().replace("`", "")) for w in nw) for nw in no)
                ]
                if len(parts) != 1:
                    continue
                piece = parts[0]
            if any(
                c.turn == reply.index and all(w in c.content.lower() for w in words) for c in found
            ):
                continue
            text = _OPTION_LINE.sub(r"\g<body>", piece).replace("**", "").replace("`", "")
            if len(text.split()) < 4 or text.rstrip().endswith("?") or _NOT_A_PROPOSAL.search(text):
                continue
            content = _sentence_of(_PROPOSING.sub("", text))
            found.append(
                Candidate(
                    category=rule_category(content),
                    speaker=Speaker.USER,
                    turn=reply.index,
                    index=answer[0],
                    content=content,
                    confidence=ACCEPTED,
                    family=Family.DECISION,
                    speakers={Speaker.AGENT, Speaker.USER},
                )
            )
    found.sort(key=lambda c: c.index)
    return found


def _as_named(content: str, name: str) -> str:
    """The content with its opening name spelled as the list spelled it ("golang-migrate")."""
    return name + content[len(name) :] if content.lower().startswith(name.lower()) else content


# A reply's own item that names the pick and no more than this many words ("Let's go with
# Oban.") gives way to the agent's description of the option.
_TERSE_PICK_WORDS = 4


_TURNS_DOWN = re.compile(r"(?i)^\W*(?:not|no)\b(?!\s+(?:need|problem|worries|rush)\b)")


def _with_picked_options(
    found: list[Candidate], turns: list[Turn], statements: list[Statement]
) -> list[Candidate]:
    """The option a user picked from several the agent laid out as a list.

    "- **SQLFluff**: … - **sqlfmt**: only a formatter, very fast …" answered by "sqlfmt,
    the speed matters", or "2. pg_repack: rebuilds the table online …" answered by
    "pg_repack. VACUUM FULL is a non-starter": the pick is a decision, described by the
    agent's own words for it. An item of the reply that already names the pick is enough.
    """
    for turn, reply, answer in _answered_agent_turns(turns, statements):
        # The raw lines ("2." is no statement), the opening only: a pick comes first.
        text = " ".join(line.strip() for line in reply.lines[:12])[:MAX_PICK_CHARS]
        for options in reversed(_option_lists(turn.lines)):
            k = _picked(text, options)
            if k is None:
                continue
            option = options[k]
            naming = [
                c
                for c in found
                if option.keys
                and c.turn == reply.index
                and 2 * _keys_named(c.content.lower(), option) >= len(option.keys)
            ]
            if any(len(c.content.split()) > _TERSE_PICK_WORDS for c in naming):
                break
            # "Let's go with Oban." says no more than the pick: the agent's words for it do.
            found = [c for c in found if not any(c is n for n in naming)]
            content = _about_subject(option, _as_named(_sentence_of(option.text), option.name))
            # "not SWR, we have a ton of edit forms …": another option of the list turned down
            # in the reply is why this one was picked, not a decision of its own.
            passed = [
                c
                for c in found
                if c.turn == reply.index
                and c.speaker is Speaker.USER
                and c.family is not Family.BUG
                and _TURNS_DOWN.match(c.content)
                and any(
                    j != k and _keys_named(c.content.lower()[:60], other)
                    for j, other in enumerate(options)
                )
            ]
            if passed:
                found = [c for c in found if not any(c is p for p in passed)]
                reasons = "; ".join(lower_first(p.content.rstrip(".")) for p in passed)
                content = f"{content.rstrip('.')}; {reasons}."
            found.append(
                Candidate(
                    category=Category.ARCHITECTURAL_DECISIONS,
                    speaker=Speaker.USER,
                    turn=reply.index,
                    index=answer[0],
                    content=content,
                    lead=f"{option.subject}: {option.name}" if option.subject else option.name,
                    confidence=PICKED,
                    family=Family.DECISION,
                    speakers={Speaker.AGENT, Speaker.USER},
                )
            )
            break
    found.sort(key=lambda c: c.index)
    return found


# "… should requests be rejected (fail closed) or let through (fail open)?": the two
# sides of a closing either-or question, a few words each.
_EITHER_OR = re.compile(
    r"(?i)(?P<left>(?:[^\s,;:]+\s+){0,2}[^\s,;:]+)\s+or\s+(?P<right>[^?,;:]{1,80})\?\W*$"
)
_PICK_WORDS = 6
_TITLE_SIDE_WORDS = 3
# "date-fns then", "fail open please": the words after a pick that only say it is one.
_PICK_TAIL = re.compile(r"(?i)(?:\s+(?:then|please|pls|it is|for sure|of course|definitely))+$")
_YES_FIRST = re.compile(r"^\W*(?:yes|yeah|yep|yup|correct|right)\b")


def _either_or(question: str) -> list[_Option]:
    m = _EITHER_OR.search(question)
    if m is None:
        return []
    sides = [m.group("left"), " ".join(m.group("right").split()[:_PICK_WORDS])]
    return _keyed([_Option(side.replace("`", ""), side, False, False) for side in sides])


def _with_either_or_picks(
    found: list[Candidate], turns: list[Turn], statements: list[Statement]
) -> list[Candidate]:
    """The side a user picked when "X or Y?" was asked.

    "Should it live in the main process or in a separate utility process?" answered by "A
    utility process (utilityProcess.fork)." or "fail open, log at warn.": the answer, in
    the user's own words, is a decision. The question is the agent's, or the user's own
    in the turn before the agent weighed both ("dayjs or date-fns?" … "date-fns then").
    Only an answer that opens by naming exactly one side, without weighing it, counts.
    """
    by_turn = _indices_by_turn(statements)
    for turn, reply, answer in _answered_agent_turns(turns, statements):
        asked = [
            statements[i].text
            for n in (turn.index - 1, turn.index)
            for i in by_turn.get(n, [])
            if statements[i].text.endswith("?") and " or " in statements[i].text
        ]
        question, options = next(
            ((q, o) for q in reversed(asked) if len(o := _either_or(q)) == 2), ("", [])
        )
        if len(options) != 2 or not all(o.keys for o in options):
            continue
        first = statements[answer[0]]
        if _YES_FIRST.match(first.low):
            continue  # "Is it set globally or per task?" "Yes, globally": a yes-no question
        low = _ANSWER_WORD.sub("", first.low.replace("`", ""))
        clause = _first_clause(low)
        named = _named_options(clause, options)
        if (
            len(named) != 1
            or _WEIGHS.search(clause)
            or low.rstrip().endswith("?")
            or (len(clause.split()) > _PICK_WORDS and not _TAKES.search(clause))
        ):
            continue
        option = options[named[0]]
        if any(
            c.turn == reply.index
            and c.speaker is Speaker.USER
            and _keys_named(c.content.lower(), option)
            for c in found
        ):
            continue  # the user's own words already made an item of the pick
        pick = _pick_decision(answer, reply, statements, ". ")
        subject = _asked_subject(question)
        if subject and not tokens(subject) & tokens(pick.content):
            # "Requests with `limit` above 100 — should they be clamped to 100 or rejected
            # with 400?" "Rejected with 400 …": the item says of what
            pick.content = f"{subject}: {lower_first(pick.content)}"
        # "InvalidArgument. our gateway maps it to 400 …": the title says what was picked
        # over what ("InvalidArgument, not codes.FailedPrecondition")
        said = _first_clause(_ANSWER_WORD.sub("", first.text.replace("`", ""))).strip(" .!")
        said = _PICK_TAIL.sub("", said)
        other = options[1 - named[0]].name
        if 0 < len(said.split()) <= _TITLE_SIDE_WORDS and 0 < len(other.split()) <= 2:
            pick.lead = f"{capitalize(said)}, not {other}"
        found.append(pick)
    found.sort(key=lambda c: c.index)
    return found


# What an either-or question asks about: the topic put before it ("Requests with `limit`
# above 100 — should they be clamped …?") or the subject of "should/do … be" ("Should the
# retries be per task or global?"); a pronoun names nothing.
_FRONTED_TOPIC = re.compile(
    r"^(?P<np>[^?—–:;]{6,70}?)\s*[—–:]\s*(?:should|do|does|are|is|will|would|can)\s+"
    r"(?:they|it|these|those|we|i|you)\b"
)
_ASKED_OF = re.compile(
    r"(?i)^\W*(?:should|shall|do|does|are|is|will|would)\s+(?P<np>(?:(?:the|our|all|any|a|an)\s+)?"
    r"[a-z][^?,]{3,50}?)\s+(?:be|get|go|use|live|run|stay|return|fail|come)\b"
)
_PRONOUNS = frozenset(("it", "they", "this", "that", "these", "those", "we", "you", "i"))


def _asked_subject(question: str) -> str:
    """The subject of an either-or question, as written, or ""."""
    m = _FRONTED_TOPIC.match(question) or _ASKED_OF.match(question)
    if m is None:
        return ""
    np = m.group("np").strip(" ,")
    low = np.lower()
    first = low.split()[0] if low else ""
    if first in _PRONOUNS or len(np.split()) < 2 or " or " in f" {low} ":
        return ""
    if first in ("so", "and", "also", "one", "quick"):
        return ""
    return capitalize(np)


def _pick_decision(
    answer: list[int], reply: Turn, statements: list[Statement], join: str
) -> Candidate:
    """The user's decision in a reply that picks an option: its first sentence, with the
    next one (`join`ed) when the pick is short ("fail open. a redis hiccup must not …")."""
    content = statements[answer[0]].text
    if len(content.split()) < _PICK_WORDS and len(answer) > 1:
        content = f"{content.rstrip('.')}{join}{statements[answer[1]].text}"
    return Candidate(
        category=rule_category(content) or Category.ARCHITECTURAL_DECISIONS,
        speaker=Speaker.USER,
        turn=reply.index,
        index=answer[0],
        content=_sentence_of(content),
        confidence=PICKED,
        family=Family.DECISION,
        speakers={Speaker.AGENT, Speaker.USER},
    )


def _first_clause(text: str) -> str:
    """Up to the first comma, semicolon, colon, dash or full stop."""
    return re.split(r"[,;:—–]|\.(?:\s|$)", text, maxsplit=1)[0]


# The agent asking the user to pick among what it just described: "Which one?", "Which do
# you prefer?", "Which would you like?" (the choices are in the sentences before).
_WHICH_ONE = re.compile(
    r"(?i)^\W*which(?:\s+(?:one|way|approach|option|variant|of (?:the|these|them|those)"
    r"(?:\s+\w+)?))?(?:\s+(?:do|would|should)\s+(?:you|we)(?:\s+\w+){0,2}?)?"
    r"(?:\s+(?:want|prefer|like|pick|choose|take|go with|use)(?:\s+to\s+go)?)?\W*$"
)
_WHICH_PICK_WORDS = 4


def _with_which_picks(
    found: list[Candidate], turns: list[Turn], statements: list[Statement]
) -> list[Candidate]:
    """The choice a user names when asked "Which one?" after the agent described options.

    "… a sliding-window log is the most precise; a fixed window (INCR + EXPIRE) is one round
    trip … Which one?" answered by "fixed window. we don't need precision …": the reply opens
    with words the agent wrote, so it names one of the options, and that is a decision, with
    what the user says next as its reason. An answer that only acknowledges, weighs or asks
    back names nothing (`_with_either_or_picks` does the same for "X or Y?").
    """
    by_turn = _indices_by_turn(statements)
    for turn, reply, answer in _answered_agent_turns(turns, statements):
        asked = [statements[i] for i in by_turn.get(turn.index, [])]
        if not asked or not _WHICH_ONE.match(asked[-1].text):
            continue
        first = statements[answer[0]]
        low = _ANSWER_WORD.sub("", first.low.replace("`", ""))
        clause = _first_clause(low).strip(" .!")
        words = clause.split()
        if (
            not 1 <= len(words) <= _WHICH_PICK_WORDS
            or all(w.strip(".,!") in _SAYS_NOTHING for w in words)
            or _WEIGHS.search(clause)
            or low.rstrip().endswith("?")
        ):
            continue
        described = " ".join(s.low for s in asked[:-1]).replace("`", "")
        if not re.search(rf"(?<![\w-]){re.escape(clause)}(?![\w-])", described):
            continue
        if any(
            c.turn == reply.index and c.speaker is Speaker.USER and clause in c.content.lower()
            for c in found
        ):
            continue  # the user's own words already made an item of the pick
        pick = _pick_decision(answer, reply, statements, ": ")
        # (the title names the pick: "Fixed window", not the reason after it)
        said = _ANSWER_WORD.sub("", first.text.replace("`", ""))
        pick.lead = capitalize(_first_clause(said).strip(" .!"))
        found.append(pick)
    found.sort(key=lambda c: c.index)
    return found


# "also add …", "and then run …": a connective before a request.
_CONNECTIVE = re.compile(r"(?i)^\W*(?:(?:also|and|then|plus)\W+)+")


def _opens_with_request(text: str) -> bool:
    """ "Create a README …", "Fix: parse …", "Before you add …": asks for work."""
    first = re.match(r"\W*([A-Za-z']+)", _unhedged(text))
    if first is None:
        return False
    word = first.group(1).lower()
    if word in _RULE_OPENERS:
        return False
    from app.engines.offline.dialogue import is_request

    return is_request(word) or word in {"before", "after", "fix", "once", "when", "create"}


DISPUTES = "disputes:"


def _with_disputes(found: list[Candidate], disputes: list[Dispute]) -> list[Candidate]:
    """Rules of a user turn that the agent said disagree with an earlier one: tagged
    `disputes:<word>` so the evolution holds both open instead of keeping two rules."""
    for dispute in disputes:
        for candidate in found:
            if candidate.turn == dispute.turn and candidate.speaker is Speaker.USER:
                candidate.topic_tags = [
                    *candidate.topic_tags,
                    *(DISPUTES + n for n in dispute.names),
                ]
    return found


# Tag of an item stating a disagreement the user left undecided (the evolution files it as
# an open contradiction, never as a rule).
UNDECIDED = "undecided"
OPEN_POINT = 0.8


def _a_side_of(c: Candidate, turn: int, sides: set[str]) -> bool:
    """Whether a candidate only restates a side of an open point, or the refusal to choose."""
    from app.engines.offline.dialogue import leaves_undecided, names_two_sides

    if c.category is Category.BUG_PATTERNS:
        return False
    words = tokens(c.content)
    shared = len(words & sides)
    if shared >= 0.8 * max(1, len(words)):
        # The sides themselves, from whichever turn gave them.
        return True
    return c.turn == turn and (
        shared >= min(2, 0.5 * max(1, len(words)))
        or leaves_undecided(c.content)
        or names_two_sides(c.content)
    )


def _without_preface(text: str) -> str:
    """Without a short lead-in before a colon ("One thing I noticed: the README says …")
    when what follows it says the rest."""
    preface = _PREFACE.match(text)
    if preface is None or len(preface.group(0).split()) > _PREFACE_WORDS:
        return text
    rest = text[preface.end() :]
    return rest if len(rest.split()) >= MIN_RULE_WORDS else text


def _with_open_points(
    found: list[Candidate], points: list[OpenPoint], statements: list[Statement]
) -> list[Candidate]:
    """A disagreement the user left open is one item tagged `undecided`, naming its subject
    with `disputes:` tags; the sides it gives are not rules of their own."""
    from app.engines.offline.dialogue import gives_anothers_side

    for point in points:
        sides = tokens(point.text)
        # A side someone else holds, told in an earlier turn ("Priya … wants the events
        # table partitioned by hour …" before "I wrote daily, Priya wants hourly, I don't
        # know which is right"), is part of the point, not a decision of its own.
        names = set(point.names)
        told = [
            c
            for c in found
            if c.turn < point.turn
            and c.category is not Category.BUG_PATTERNS
            and Speaker.USER in c.speakers
            and gives_anothers_side(c.content)
            and names & tokens(c.content)
        ]
        found = [c for c in found if not _a_side_of(c, point.turn, sides) and c not in told]
        index = next((i for i, s in enumerate(statements) if s.turn >= point.turn), 0)
        text = _sentence_of(_without_preface(point.text.replace("`", "")))
        low = point.text.lower()[len(point.text) - len(_without_preface(point.text)) :]
        if told:
            text = f"{_sentence_of(told[0].content.replace('`', ''))} {text}"
        found.append(
            Candidate(
                category=Category.PROJECT_CONVENTIONS,
                speaker=Speaker.USER,
                turn=point.turn,
                index=index,
                content=f"Undecided: {lower_first(text)}",
                confidence=OPEN_POINT,
                family=Family.DECISION,
                # (the names of what the point says, not of a lead-in it was said after)
                topic_tags=[UNDECIDED, *(DISPUTES + n for n in point.names if n in low)],
                speakers={Speaker.USER},
            )
        )
    found.sort(key=lambda c: c.index)
    return found


ACCEPTED = 0.8
ACCEPTED_BARE = 0.65
_OFFER = re.compile(
    r"(?i)^.*?\b(?:should i|shall i|do you want me to|want me to|would you like me to|i propose|"
    r"i suggest|i'?d suggest|i'?d recommend|i recommend|we could|i could also|how about)\s+"
    r"(?:that\s+)?"
    r"(?:we\s+)?(?:also\s+)?"
)
_ANSWER_OPENER = re.compile(
    r"(?i)^\W*(?:yes|yep|yeah|sure|ok(?:ay)?|sounds good|go ahead|do it|do both|do that|"
    r"please do|please|lgtm|agreed|no need|no thanks|no thank you|not needed|no|nope|nah|"
    r"good idea|great idea|makes sense|perfect|great)\b"
    r"[\s,.!:;-]*"
)
# A refusal said as a sentence of its own ("no need.", "nope."): what follows is a new point
# unless it is about what was offered.
_REFUSED_ALONE = re.compile(r"(?i)^\W*(?:no|nope|nah)(?:\s+(?:need|thanks|thank you))?\s*[.!]+\s")
# "Not in this PR", "later", "leave it": putting off is not deciding.
_DEFERS = re.compile(
    r"(?i)^\W*(?:(?:hm+|well|uh+|honestly)\W+)*(?:not (?:now|yet|in this|today|for now)|later|"
    r"leave it|skip|maybe|i'?ll (?:do|think|check|ask)|let'?s (?:think|see|wait)|not sure|"
    # "hm dunno, lemme think about that one": not decided yet
    r"dunno|(?:i\s+)?(?:don'?t|do not) know|let me think|lemme think|need to think)\b"
    r"(?!\s+(?:if|whether|why|how|what|where|when|who)\b)"
)


def _answer_rest(reply: str) -> str:
    """The reply without its yes/no openers ("sounds good, go ahead" leaves nothing)."""
    rest = reply
    for _ in range(4):
        shorter = _ANSWER_OPENER.sub("", rest, count=1)
        if shorter == rest:
            break
        rest = shorter
    return rest.strip()


_ASIDE = re.compile(
    r"(?i)^\W*(?:lol|haha|heh|btw|anyway|unrelated|thanks|thank you|ty|one more thing|another "
    r"thing|separately|on another note|different (?:topic|question))\b|\?\W*$"
)
_TAKEN_BACK = re.compile(r"(?i).*\b(?:scratch that|no wait|never ?mind)\b\W*")


def _answer_substance(rest: str) -> str:
    """An answer up to the first aside ("… lol this devkit has been on my desk …"), and
    after the last "scratch that" when it takes something back."""
    pieces = re.split(r"(?<=[.!?])\s+", rest)
    kept: list[str] = []
    for piece in pieces:
        if kept and _ASIDE.match(piece):
            break
        kept.append(piece)
    text = " ".join(kept)
    taken = _TAKEN_BACK.match(text)
    if taken and len(text[taken.end() :].split()) >= 2:
        text = text[taken.end() :]
    return text.strip()


# "No, leave the retries alone": a refusal worded as an order, with nothing decided in it.
_LEAVE_IT = re.compile(
    r"(?i)^\W*(?:just\s+)?(?:leave|keep)\s+(?:\w+\s+){0,3}?(?:alone|as\s+(?:it\s+is|is))\W*$"
)


# An answer about finishing the task at hand, not about how things are done.
_ABOUT_THIS_TASK = re.compile(
    r"(?i)\b(?:(?:this|same|separate|next|a new|another|the security) PR|ship it|merg(?:e|ing)"
    r"(?: this| it)?|squash|go ahead|ignore(?: it)?|leave it|not today|for now)\b"
)


def _with_answers(
    found: list[Candidate], proposals: list[Proposal], statements: list[Statement]
) -> list[Candidate]:
    """What the user decided by answering the agent's proposals.

    Accepted: the proposal becomes the user's decision (worded as a statement; held for
    review when the user only said "yes"). Rejected with a reason ("no, keep the hand
    parser: clap adds 300 KB"): the reason is the decision. A bare "no" decides nothing.
    """

    refused = [(p.turn, words) for p in proposals if not p.accepted if (words := tokens(p.text))]
    if refused:
        # The agent's own sentence proposing what the user turned down or put off is not
        # memory, not even for review ("I'd suggest a SHA-256 signature" / "later, not now").
        found = [
            c
            for c in found
            if c.speaker is not Speaker.AGENT
            or not any(
                c.turn == turn and _repeats(words, [tokens(c.content)]) for turn, words in refused
            )
        ]
    for proposal in proposals:
        reply_turn = next(
            (s.turn for s in statements if s.turn > proposal.turn and s.speaker is Speaker.USER),
            None,
        )
        if reply_turn is None:
            continue
        index = next(i for i, s in enumerate(statements) if s.turn == reply_turn)
        rest = _answer_substance(_answer_rest(proposal.reply))
        if _DEFERS.match(rest):
            rest = ""
        if _ABOUT_THIS_TASK.search(proposal.reply):
            continue  # "ship it", "same PR", "in a next PR": how to finish this task
        if any(c.turn == reply_turn and c.speaker is Speaker.USER for c in found):
            continue  # the user's own words already made an item
        if proposal.accepted:
            offer = _OFFER.sub("", proposal.text).rstrip("?").strip()
            if len(offer.split()) < 3:
                continue
            content = offer if not rest else f"{offer.rstrip('.')}; {rest}"
            confidence = ACCEPTED if len(rest.split()) >= 4 else ACCEPTED_BARE
        else:
            if len(rest.split()) < 4 or _LEAVE_IT.match(rest):
                continue
            if _REFUSED_ALONE.match(proposal.reply) and not tokens(rest) & tokens(proposal.text):
                continue  # "no need. Ci takes 14 min on every PR": a new point, no reason
            content, confidence = rest, ACCEPTED
        content = _sentence_of(content)
        found.append(
            Candidate(
                category=rule_category(content),
                speaker=Speaker.USER,
                turn=reply_turn,
                index=index,
                content=content,
                confidence=confidence,
                family=Family.DECISION,
                speakers={Speaker.USER},
            )
        )
    found.sort(key=lambda c: c.index)
    return found


_OPENS_SPAN = {"`": "`", "[": "]"}


def _unhedged(text: str) -> str:
    """Without the chat openers ("actually,", "heads up:") that carry no content."""
    rest = _OPENER.sub("", text).strip()
    lead = text[: len(text) - len(rest)]
    if lead and lead[-1] in _OPENS_SPAN and _OPENS_SPAN[lead[-1]] in rest:
        # "`a.c` replaces …", "[SerializeField] private …": the code span it opens with
        # stays whole
        return lead[-1] + rest
    return rest or text


_OPENER = re.compile(
    # ("actually no, moment is deprecated": the "no" goes too)
    r"(?i)^\W*(?:actually,?\s+no[,:;.]\s*"
    r"|(?:actually|heads up|ok(?:ay)?|so|btw|fyi|update|note|(?:one more|another|"
    r"last|final) thing|for (?:the )?future(?: reference)?)\b[,:]?\s*"
    r"|(?:hey|hi|hello|well|oh|um+|uh+|hm+|whoa|(?:whoa|oh|hm+)\s+wait)\s*[,!.]\s*)*"
    r"(?:(?:scratch that|no,? wait|wait,? no|never ?mind)\b[,:;.]?\s*)?"
)


def _sentence_of(text: str) -> str:
    text = capitalize(" ".join(text.split()))
    return text if text.endswith((".", "!", "?")) else text + "."


# "We need to move transactional email out of the request path", "Hallo, we must finally do
# Content-Security-Policy", "Need naming rules for rabbitmq": what the conversation is for.
_STATES_A_NEED = re.compile(
    r"(?i)^\W*(?:(?:hi|hello|hallo|hey|ok(?:ay)?|so)\W+)*(?:we\s+|i\s+)?(?:really\s+)?"
    r"(?:need(?:s)?|must\s+finally|have\s+to\s+finally|want\s+to\s+finally)\b(?!\s+to\s+keep\b)"
)


# "One rule:", "Rule for this codebase, and I mean all of it:", "The rule would be:": the
# speaker names one rule and states it.
_ONE_RULE_LABEL = re.compile(
    r"(?i)^\W*(?:(?:one|the|our|a|another|my|new|hard|golden|house)\s+)?(?:\w+\s+){0,2}rule\b"
    r"[^:.]{0,60}:\s*\S"
)
# What makes a sentence part of a rule: a bound on what is done ("never", "only", "no").
_BOUNDS = re.compile(r"(?i)\b(?:never|only|always|must|no|every|all)\b")
# "only" that counts or says when ("only four", "only then") bounds nothing.
_ONLY = r"\bonly\b(?!\s+(?:\d|one|two|three|four|five|then|when|if|because|a few|some)\b)"
# A sentence that opens or ends with its bound: "Never tags.", "The only exception is …",
# "Tailwind only.", "Not only this one."
_COMPLEMENT = re.compile(
    rf"(?i)^\W*(?:(?:and|but|so)\s+)?(?:never|always|the\s+only|not\s+only|{_ONLY})"
    rf"|(?:\b(?:never|always)|{_ONLY})\W*$"
)
MAX_COMPLEMENT_WORDS = 30
_LABELLED_POINT = re.compile(r"^[^:]{1,40}:\s")


def _with_rule_continued(found: list[Candidate], statements: list[Statement]) -> list[Candidate]:
    """A user's rule takes in the next sentence of the same message when that completes it.

    - A rule the user named ("One rule: Kconfig changes only go in prj.conf or the board
      overlays. Never commit a saved .config from menuconfig …", "Rule for this codebase:
      timestamps are UTC everywhere … Tz conversion only happens at the edges …"): the
      label announces one rule, so the next sentence bounding the same thing ("never",
      "only", "no") is its other half; its own item, if any, is the same rule and leaves.
    - Any rule followed by a sentence no item took that opens or ends with its bound
      ("Everything goes through the gitops repo … The only thing you use kubectl for is
      reading.", "… always full SHA + version comment. Never tags.", "No DB calls at top
      level of a dag file, ever. Only inside tasks."): an elliptical complement, which says
      nothing alone.

    A question, a request, a labelled point ("Oh and while you're in there: …"), pasted
    text and "only" that counts ("there are only four", "only then") are no part of it.
    """
    has_item = {c.index for c in found}
    absorbed: set[int] = set()
    done: set[int] = set()
    for c in found:
        i = c.index
        if (
            c.family is Family.BUG
            or c.speaker is not Speaker.USER
            or i in done
            or i in absorbed
            or not 0 <= i < len(statements) - 1
        ):
            continue
        s, after = statements[i], statements[i + 1]
        if (
            s.speaker is not Speaker.USER
            or after.turn != s.turn
            or after.speaker is not Speaker.USER
            or after.pasted
            or after.text.rstrip().endswith("?")
            or _opens_with_request(after.text)
            or _LABELLED_POINT.match(after.text)
            or after.text[:30].lower() in c.content.lower()
        ):
            continue
        if _ONE_RULE_LABEL.match(s.text):
            if not _BOUNDS.search(after.text):
                continue
        elif (
            i + 1 in has_item
            or len(after.text.split()) > MAX_COMPLEMENT_WORDS
            or not _COMPLEMENT.search(after.text)
        ):
            continue
        c.content = f"{c.content.rstrip()} {_sentence_of(after.text)}"
        done.add(i)
        absorbed.add(i + 1)
    return [c for c in found if c.index not in absorbed or c.index in done]


def _without_opening_task(found: list[Candidate], statements: list[Statement]) -> list[Candidate]:
    """The conversation's first user sentence, when it states a need, is the task it opens
    with, not a rule: "We need to move transactional email sending out of the request
    path", "Need naming rules for rabbitmq before the third team starts publishing"."""
    first = next((i for i, s in enumerate(statements) if s.speaker is Speaker.USER), -1)
    if first < 0 or not _STATES_A_NEED.match(statements[first].text):
        return found
    return [
        c
        for c in found
        if c.index != first
        or c.family is Family.BUG
        or c.named_rule
        or any(t.startswith(REPLACES) for t in c.topic_tags)
    ]


def read_candidates(
    text: str, *, plain: bool = False, judge: Judge | None = None
) -> tuple[list[Candidate], Context, list[str]]:
    """Every candidate of a conversation, built and titled, before the judge has its say.

    With `plain`, statements no rule picked follow the rules' candidates (`plain` True),
    cleaned the same way and dropped when they repeat a rule's candidate, and the context
    the judge's features need is read (without, it is empty). The trainer of the judge
    (bench/train_judge.py) reads the same list. With a `judge`, a plain statement whose
    score as first read is well below the judge's `add` is left out before the costly
    clean-up (`PRESCORE_MARGIN`); the judge still decides on the cleaned ones.
    """
    turns = split_turns(text)
    reading = read_statements(turns, skip_section)
    found, notes = find_candidates(reading)
    found = _with_dialogue_units(found, turns, reading.statements)
    found = _with_rule_continued(found, reading.statements)
    found = _with_picks_before_verdicts(found, reading.statements)
    found = _without_opening_task(found, reading.statements)
    candidates = finalize(_screened(found), reading.statements)
    _agent_accounts_whole(candidates, reading.statements)
    if not plain:
        return candidates, EMPTY_CONTEXT, notes  # no judge: nothing reads the context
    tool_turns = {
        t.index for t in turns if any(line.lstrip().startswith("[tool") for line in t.lines)
    }
    context = prepare(reading.statements, tool_turns)
    plains = _screened(_plain_candidates(found, reading.statements, context, judge))
    plains = _without_opening_task(plains, reading.statements)
    extra = finalize(plains, reading.statements)
    said = _Said(
        tokens(" ".join((c.content, c.root_cause, c.fix, c.rationale))) for c in candidates
    )
    for c in extra:
        words = tokens(c.content)
        if words and not said.repeats(words):
            candidates.append(c)
    candidates.sort(key=lambda c: c.index)
    return candidates, context, notes


# "Root cause: …", "Root cause on Android: …": the agent's account names what it gives.
_NAMES_THE_CAUSE = re.compile(r"(?i)^\W*(?:confirmed |actual |real )?root cause\b")
AGENT_ACCOUNT_BONUS = 0.1


def _agent_accounts_whole(found: list[Candidate], statements: list[Statement]) -> None:
    """The agent's account that names the root cause is a finding, not a passing remark.

    The rules build a bug the agent tells at the bug base less the agent's penalty, which
    keeps its passing remarks ("the retry decorator probably swallowed the timeout") in
    review. One that opens by naming the root cause ("Root cause: buildLegs rounded the
    seller leg … Fix: fees are rounded once …", "Root cause: gRPC Services had no
    `appProtocol` …") and that no confirmed fix took in has most of that penalty waived
    (docs/decisions.md, thirty-fifth and forty-second parts), with or without the fix in
    the same statement. Raised after the dialogue units are read, so a confirmed fix still
    outranks it.
    """
    for c in found:
        if (
            c.family is Family.BUG
            and c.root_cause
            and c.confidence < SURE
            and (c.speakers or {c.speaker}) == {Speaker.AGENT}
            and 0 <= c.index < len(statements)
            and statements[c.index].speaker is Speaker.AGENT
            and _NAMES_THE_CAUSE.match(statements[c.index].text)
        ):
            c.confidence = round(c.confidence + AGENT_ACCOUNT_BONUS, 2)


# What the agent is about to do, not what is: "I'll also add … in a follow-up", "Next I'm
# going to …", "The PR will contain: …", "Summary of what I'll work with: …".
_AGENT_NEXT_STEP = re.compile(
    r"(?i)^\W*(?:(?:next|then|now|also|and|so)\W+)*(?:i'?ll|i will|i'?m going to|i am going to|"
    r"let me|we'?ll|we will)\b|^[^.:]{0,40}\b(?:will contain|what i'?ll|what i will)\b"
)
# Plain statements worth showing the judge: prose of a sensible length that is not a
# question, a label, a slash command or a tool call.
_PLAIN_WORDS = (4, 60)
PLAIN_KEPT = 0.75


# How far below `add` a plain statement may score as first read and still be cleaned up and
# judged again: the clean-up rewords a few, and the margin keeps those (bench/memorize.py).
PRESCORE_MARGIN = 0.15


def _plain_candidates(
    found: list[Candidate],
    statements: list[Statement],
    context: Context,
    judge: Judge | None = None,
) -> list[Candidate]:
    """The user's and the agent's own sentences that no rule made a candidate.

    Pasted text, tool output, turns carrying instructions aimed at agents, and anything the
    screen finds unsafe never qualify; the rest goes through the same clean-up as the
    rules' candidates and waits for the judge. With a `judge` that reads statements alone,
    one scoring well below its `add` as first read is not built at all.
    """
    from app.core.screen import is_unsafe
    from app.engines.offline import extract_rules as r
    from app.engines.offline.extract_rules import ARCH_SUBJECT

    used = {c.index for c in found}
    eligible: list[tuple[int, Statement, str]] = []
    for i, s in enumerate(statements):
        if i in used or s.pasted or s.speaker not in (Speaker.USER, Speaker.AGENT):
            continue
        text = s.text.strip()
        if text.startswith(("[", "/", "<")) or text.endswith(("?", ":")):
            continue
        if not _PLAIN_WORDS[0] <= len(text.split()) <= _PLAIN_WORDS[1]:
            continue
        if s.speaker is Speaker.AGENT and _AGENT_NEXT_STEP.match(text):
            continue  # "I'll also add … in a follow-up", "PR will contain: …": not done yet
        user = s.speaker is Speaker.USER
        eligible.append((i, s, _sentence_of(_unhedged(text) if user else text.replace("`", ""))))
    if judge is not None and not judge.rules:
        eligible = _prescored(eligible, context, judge)
    # Read after the judge's first pass: only the turns still in question are searched.
    turns = {s.turn for _i, s, _content in eligible}
    tainted = {s.turn for s in statements if s.turn in turns and r.INJECTION.search(s.text, s.low)}
    plain: list[Candidate] = []
    for i, s, content in eligible:
        if s.turn in tainted or is_unsafe(s.text.strip()):
            continue
        user = s.speaker is Speaker.USER
        if user:
            category = rule_category(content)
        elif ARCH_SUBJECT.search(content) or _DESIGN.search(content):
            category = Category.ARCHITECTURAL_DECISIONS
        else:
            category = Category.IMPLEMENTATION_NOTES
        family = Family.DIRECTIVE if user else Family.LESSON
        plain.append(_plain(i, s, content, category, family))
    return _cleaned(plain, statements)


def _plain(i: int, s: Statement, content: str, category: Category, family: Family) -> Candidate:
    """A candidate made of statement `i` as it stands, before clean-up and the judge."""
    return Candidate(
        category=category,
        speaker=s.speaker,
        turn=s.turn,
        index=i,
        content=content,
        confidence=PLAIN_KEPT,
        family=family,
        speakers={s.speaker},
        plain=True,
    )


def _prescored(
    eligible: list[tuple[int, Statement, str]], context: Context, judge: Judge
) -> list[tuple[int, Statement, str]]:
    """The plain statements worth building: those a statement-only judge scores near `add`
    as first read, and their neighbours in the same turn (the clean-up joins a sentence to
    the one before or after it, and the joined statement is what the judge decides on)."""
    passed = [
        judge.score(
            features(
                # category and family are not read by a statement-only judge
                _plain(i, s, content, Category.IMPLEMENTATION_NOTES, Family.LESSON),
                context,
                extra=True,
                rules=False,
            )
        )
        >= judge.add - PRESCORE_MARGIN
        for i, s, content in eligible
    ]
    kept: list[tuple[int, Statement, str]] = []
    for n, (i, s, content) in enumerate(eligible):
        near = [
            passed[m]
            for m in (n - 1, n + 1)
            if 0 <= m < len(eligible)
            and eligible[m][1].turn == s.turn
            and abs(eligible[m][0] - i) == 1
        ]
        if passed[n] or any(near):
            kept.append((i, s, content))
    return kept


# The rules' confidence from which an item is committed with the default settings
# (`commit_threshold`); below it an item waits in the review queue.
SURE = 0.75


# What the agent prescribes (a rule, a choice, a preference) is advice until the user takes
# part: alone, it needs more of the judge than what the agent found or built (a bug's cause,
# a note on the code, a design it laid out under a heading), which `agent_veto` measures.
_ADVICE = frozenset({Family.DIRECTIVE, Family.DECISION, Family.PREFERENCE, Family.CONVENTION})
AGENT_ADVICE_VETO = 0.4


def _judged(candidates: list[Candidate], context: Context, judge: Judge) -> list[Candidate]:
    """The judge's word on every candidate: plain ones stay only above `add`, the rules'
    leave below `veto`, and the rules' candidates only the agent said leave below
    `agent_veto` (`agent_veto_unsure` when the rules gave them less than `SURE`; at least
    `AGENT_ADVICE_VETO` for the agent's advice).

    Replacements and disputes are never vetoed: they carry what a later turn changed."""
    kept: list[Candidate] = []
    for c in candidates:
        if not c.plain and judge.veto <= 0.0:
            bar = judge.agent_veto_unsure if c.confidence < SURE else judge.agent_veto
            if c.family in _ADVICE:
                bar = max(bar, AGENT_ADVICE_VETO)
            if bar > 0.0 and _agent_only(c):
                score = judge.score(features(c, context, extra=False, rules=judge.rules))
                if score < bar:
                    continue
            kept.append(c)  # the user took part: a model that only adds keeps it
            continue
        score = judge.score(features(c, context, extra=c.plain, rules=judge.rules))
        if c.plain:
            if score >= judge.add:
                kept.append(c)
        elif score >= judge.veto:
            kept.append(c)
    return kept


# Word stems two accounts of one failure share at least (symptom, cause and fix together).
BUG_SHARED = 3


def _bug_accounts_joined(found: list[Candidate]) -> list[Candidate]:
    """Two bug patterns of one conversation that tell of the same failure are one item.

    An investigation is often told twice: the fix unit where the cause was found, and the
    agent's closing summary ("root cause: `json.load` parsed `annual_rate` as float … fix:
    `json.load(f, parse_float=Decimal)`"), each with part of the story. The stronger account
    keeps its symptom; the causes and fixes the other adds are appended to it.
    """
    kept: list[Candidate] = []
    told: list[set[str]] = []
    for c in found:
        if c.category is Category.BUG_PATTERNS:
            words = stems(" ".join((c.content, c.root_cause, c.fix)))
            n = next(
                (
                    n
                    for n, k in enumerate(kept)
                    if k.category is Category.BUG_PATTERNS and len(words & told[n]) >= BUG_SHARED
                ),
                None,
            )
            if n is not None:
                keep, other = (kept[n], c) if kept[n].confidence >= c.confidence else (c, kept[n])
                for name in ("root_cause", "fix"):
                    mine, theirs = getattr(keep, name), getattr(other, name)
                    if theirs and theirs.lower() not in mine.lower():
                        setattr(keep, name, joined_detail(mine, theirs))
                keep.speakers |= other.speakers
                kept[n] = keep
                told[n] |= words
                continue
            told.append(words)
        else:
            told.append(set())
        kept.append(c)
    return kept


# How many items one conversation commits at most, and the share of its best item's score
# under which an item is left out; the judge ranks them (docs/decisions.md, seventeenth
# part: on dev, items ranked ninth or lower were right 19 times in 100, and items scored
# under a quarter of their conversation's best none in 17).
STRONGEST_KEPT = 8
WEAKEST_SHARE = 0.25
HELD = 0.7
# A candidate left out: under every review threshold, so `extract` drops it.
LEFT_OUT = 0.0


def _held_for_review(
    candidates: list[Candidate], context: Context, judge: Judge
) -> tuple[int, int]:
    """The items a conversation commits are the judge's best; the rest wait or leave.

    A long session yields many statements a rule can read as a rule; the ones a reviewer
    keeps are mostly among those the judge scores highest. Past the `STRONGEST_KEPT` best,
    an item is held (confidence `HELD`, under the default commit threshold): it waits in the
    review queue. One scored below `WEAKEST_SHARE` of the best one's score (unless the user
    called it a rule), and a user rule the hold model doubts (`_doubted`) beside what the
    conversation commits, is left out (`LEFT_OUT`): in the queue, those were right 4 times
    in 74 on dev and once in 68 on batches 3–14, and held a must-not statement 5 and 7 times
    (docs/decisions.md, fifty-second part). A doubted rule that is all the conversation
    says still waits for review. Not one that changes what an earlier one said (a
    replacement, a dispute, a value for a setting, a setting's value changed): leaving that
    out would leave the old rule standing. Returns how many were held and how many left out.
    """
    strong = [c for c in candidates if c.confidence >= SURE]
    if not strong:
        return 0, 0
    score = {
        id(c): judge.score(features(c, context, extra=c.plain, rules=judge.rules)) for c in strong
    }
    ranked = sorted(strong, key=lambda c: (-score[id(c)], c.index))
    floor = WEAKEST_SHARE * score[id(ranked[0])]
    held = left_out = 0
    doubted: list[Candidate] = []
    for n, c in enumerate(ranked):
        changes = _changes_something(c)
        # (a rule its speaker called one, "same rule as before: CI tests exactly the MSRV
        # toolchain", is no weak item next to the conversation's best)
        named = c.named_rule and Speaker.USER in (c.speakers or {c.speaker})
        weak = score[id(c)] < floor and not changes and not named
        if weak:
            c.confidence = LEFT_OUT
            left_out += 1
        elif not changes and _doubted(c, context, judge):
            doubted.append(c)
        elif n >= STRONGEST_KEPT:
            c.confidence = min(c.confidence, HELD)
            held += 1
    # Beside what the conversation commits, a doubted rule is mostly the reason or context of
    # another; alone ("Search runs on Elasticsearch."), it waits for review, where a later
    # thread that changes it can record it as superseded.
    alone = len(doubted) + held + left_out == len(strong)  # nothing else is committed
    for c in doubted:
        if alone:
            c.confidence = min(c.confidence, HELD)
            held += 1
        else:
            c.confidence = LEFT_OUT
            left_out += 1
    if any(c.confidence >= SURE for c in strong):
        # (a held item the judge scores under the review floor is left out too)
        left_out += _left_out_of_review(candidates, context, judge)
    held = sum(1 for c in strong if MIN_CONFIDENCE <= c.confidence < SURE)
    return held, left_out


# The judge's score under which a candidate the rules were unsure of does not reach the
# review queue (docs/decisions.md, fifty-third part).
REVIEW_FLOOR = 0.3


def _changes_something(c: Candidate) -> bool:
    """Whether a candidate changes what an earlier statement said: a replacement, a dispute,
    a value for a setting, a setting's value changed. Such a candidate always reaches the
    branch or the queue: left out, it would leave the old rule standing."""
    from app.core.similarity import sets_a_value

    return bool(
        any(t.startswith((REPLACES, DISPUTES)) for t in c.topic_tags)
        or sets_a_value(c.content)
        or _CHANGES_A_VALUE.search(c.content)
        or _MAKES_IT.search(c.content.rsplit(". ", 1)[-1]) is not None
    )


def _left_out_of_review(candidates: list[Candidate], context: Context, judge: Judge) -> int:
    """Candidates bound for the review queue that a reviewer would not keep are left out
    (`LEFT_OUT`); returns how many. Called only beside items the conversation commits.

    The rules' unsure candidates wait for a person, who reads each one; a queue of chatter
    teaches the user to stop reading it. Two kinds go (docs/decisions.md, fifty-third part):
    - those that name nothing and lean on what was said before ("Keep it like that
      everywhere.", "Make the change so you can run it."), which an item must not do: right
      once in 19 on dev and none of 13 on batches 3–14;
    - those the judge gives less than `REVIEW_FLOOR` chance of being kept ("No behaviour
      changes.", "Good call on the curl thing."), unless the user said them firmly
      (`_said_firmly`, as the hold model's doubts spare them): right none of 6 times on dev
      and none of 4 on batches 3–14.
    A change of what was said before (`_changes_something`) is never left out, nor a bug's
    account.
    """
    left_out = 0
    for c in candidates:
        if (
            not MIN_CONFIDENCE <= c.confidence < SURE
            or _changes_something(c)
            # (another account of a committed bug may still add its cause or fix to it)
            or c.category is Category.BUG_PATTERNS
        ):
            continue
        vague = not _NAMES_SOMETHING.search(c.content) and _LEANS_ON_CONTEXT.search(c.content)
        # (a user's rule said firmly is never the judge's to drop: see `_doubted`)
        firm = Speaker.USER in (c.speakers or {c.speaker}) and not c.plain and _said_firmly(c)
        if vague or (
            not firm
            and judge.score(features(c, context, extra=c.plain, rules=judge.rules)) < REVIEW_FLOOR
        ):
            c.confidence = LEFT_OUT
            left_out += 1
    return left_out


# What names a thing: a word capitalised inside a sentence ("the Tailwind config"), a token
# with a digit, code in backticks, an identifier or a path ("max_overflow", "src/lib"), a
# camel-cased name, an acronym.
_NAMES_SOMETHING = re.compile(
    r"(?<=\w\s)[A-Z][a-zA-Z0-9]+|\S*\d\S*|`[^`]+`|\b\w+[_./:-]\w+|\b[A-Z]{2,}\b|\b[a-z]+[A-Z]\w*"
)
# Words that point back at what was said before: "keep it like that", "no new dep for this".
_LEANS_ON_CONTEXT = re.compile(r"(?i)\b(?:it|that|this|them|those|these)\b")


# A verdict on something named: "No viper. Too much magic …", "We stay with FreeRTOS.",
# "Key must be API key, not IP." A reviewer keeps these as decisions, and the hold model,
# which sees many a bare "no …" that is nothing, scores them low.
_VERDICT_NAMED = re.compile(
    r"(?i)^\W*(?:(?:no|nope|nah)\W+)*(?:no|not)\s+\S|^\W*(?:(?:no|ok(?:ay)?|so)\W+)*we\s+"
    r"(?:stay|stick|keep|remain)\s+(?:with|on|at)\b|,\s+not\s+\w|\b(?:stays|remains)\b"
)


# A rule said for every case: "always", "never", "every …", "all … are", "ever".
_EMPHATIC = re.compile(
    r"(?i)\b(?:always|never|every(?:one|thing|where)?|ever|anywhere|no exceptions?|"
    r"not up for debate|non-negotiable)\b|^\W*all\s+\w"
)


def _said_firmly(c: Candidate) -> bool:
    """A rule said for every case (`_EMPHATIC`), or one its speaker called a rule ("let's
    make that our approach: …")."""
    # (A rule that reads as general only for a universal word is not emphatic: "We
    # Instantiate and Destroy every bullet right now", "Nobody ever looks at app logs older
    # than a week" tell how things are.)
    emphatic = _EMPHATIC.search(c.content) is not None and not c.universal_only
    return emphatic or c.named_rule


def _doubted(c: Candidate, context: Context, judge: Judge) -> bool:
    """Whether the hold model doubts a rule candidate the user said.

    On dev, out of fold, the user's rule candidates it scores under 0.3 hold a required
    item 16 times in 100 (those scored 0.30 to 0.35, 37 in 100), and it scores 4 of the 193
    items dev's sequences keep active or record as superseded that low (docs/decisions.md,
    twentieth part). Statements the rules passed over are the judge's `add`; a verdict on
    something named (`_VERDICT_NAMED`) and a rule said for every case (`_EMPHATIC`) are
    never held: a user who said "we never commit .env files" expects it remembered. (A
    standing rule that is general only for a universal word in a sentence that goes on,
    `universal_only`, is not emphatic: the model decides; docs/decisions.md, fiftieth part.)
    """
    if judge.hold <= 0.0 or c.plain or Speaker.USER not in (c.speakers or {c.speaker}):
        return False
    if _said_firmly(c) or _VERDICT_NAMED.search(c.content):
        return False
    from app.engines.offline import extract_rules as r

    low = c.content.lower()
    if r.first(r.DECISION, c.content, low) is not None:
        return False  # "We decided on webpack for the frontend build."
    return judge.hold_score(features(c, context, extra=False, rules=True)) < judge.hold


def _agent_only(c: Candidate) -> bool:
    """A rule candidate the user did not say, and that replaces or disputes nothing.

    A bug pattern from a confirmed fix is not one: the user reported its symptom."""
    if Speaker.USER in (c.speakers or {c.speaker}) or c.root_cause:
        return False
    return not any(t.startswith((REPLACES, DISPUTES)) for t in c.topic_tags)


LONG_TOKEN_CHARS = 300
_LONG_TOKEN = re.compile(rf"\S{{{LONG_TOKEN_CHARS + 1},}}")


def _cut_short(found: re.Match[str]) -> str:
    return found.group(0)[:LONG_TOKEN_CHARS] + "…"


def _without_long_tokens(text: str) -> str:
    """`text` with every token over `LONG_TOKEN_CHARS` cut short (it is unchanged, and read
    in a fraction of a millisecond, when no line is that long)."""
    if not any(
        len(line) > LONG_TOKEN_CHARS and max(map(len, line.split()), default=0) > LONG_TOKEN_CHARS
        for line in text.split("\n")
    ):
        return text
    return _LONG_TOKEN.sub(_cut_short, text)


def extract(conversation: str, *, source: str, today: date | None = None) -> ExtractionResult:
    """Find coding preferences, decisions, conventions, bug patterns and notes in a conversation.

    `conversation` is plain text with speaker turns (`User:` / `Assistant:` and similar; text
    without speaker marks counts as the user's). `source` names the thread the items came
    from (it becomes each item's `sources`); `today` is the extraction date (UTC today when
    omitted). Returns `ExtractionResult(no_content_to_extract=True)` when nothing qualifies.

    Raises:
        InvalidInput: `conversation` is not text, or `source` is empty.
    """
    if not isinstance(conversation, str):
        raise InvalidInput(
            f"conversation must be text, not {type(conversation).__name__}",
            context={"field": "conversation"},
        )
    if not clean_token(source if isinstance(source, str) else ""):
        raise InvalidInput(
            "source must name the conversation's thread", context={"field": "source"}
        )
    day = today or utc_now().date()
    text = conversation.replace("\x00", " ").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        return ExtractionResult(no_content_to_extract=True, engine="offline")
    # A token longer than any name or path (a blob pasted without a fence, a minified line)
    # says nothing an item could keep, and patterns that try its every split would cost the
    # square of its length: it is cut short first (bench/hostile_extraction.py).
    text = _without_long_tokens(text)

    judge = load_judge()
    candidates, context, notes = read_candidates(text, plain=judge is not None, judge=judge)
    if judge is not None:
        candidates = _judged(candidates, context, judge)
        held, left_out = _held_for_review(candidates, context, judge)
        if held:
            notes.append(f"held {held} weaker item{'s' * (held != 1)} for review")
        if left_out:
            notes.append(f"left out {left_out} statement{'s' * (left_out != 1)} too weak to review")
    kept = _bug_accounts_joined([c for c in candidates if c.confidence >= MIN_CONFIDENCE])
    if len(kept) > MAX_ITEMS:
        notes.append(f"kept the {MAX_ITEMS} strongest of {len(kept)} items")
        kept = sorted(kept, key=lambda c: (-c.confidence, c.index))[:MAX_ITEMS]
    kept.sort(key=lambda c: c.index)
    for c in kept:
        if (
            c.speaker is Speaker.USER
            and c.category is not Category.BUG_PATTERNS
            # ("argparse was the wrong call for hostctl. port it to typer.": a change's last
            # request says what comes instead)
            and not (_names_what_it_replaces(c) and moves_to(c.content.rpartition(". ")[2]))
        ):
            # (after the judge: the request it follows is part of what it weighed)
            c.content = _without_task_tail(c.content)
        if (
            c.category is Category.PROJECT_CONVENTIONS
            and Speaker.USER in c.speakers
            # (a scope the speaker gave, "for every .sql file", is part of the rule)
            and is_style_rule(c.content if c.scope == DEFAULT_SCOPE else f"{c.content} {c.scope}")
        ):
            c.category = Category.CODING_PREFERENCES
    items = [_item(c, source, day) for c in kept]
    items += manifest_items(text, source=source, today=day)
    return ExtractionResult(
        items=items, no_content_to_extract=not items, engine="offline", notes=notes
    )
