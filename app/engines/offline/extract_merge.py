"""Finishing candidate items: the user's answers, duplicates, confidence caps and titles.

This module owns what happens to the offline extractor's candidates after classification
(`extract_items.py`): an agent's statement gains when the user's next words accept it and
loses when they reject it; consecutive statements on one subject become one item; near
duplicates within the conversation merge, each extra mention reinforcing the item; confidence
is capped by who said it; and every item gets a title that is distinct within its category.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from app.core.models import Category
from app.engines.offline import extract_rules as r
from app.engines.offline.extract_items import (
    MAX_CONTENT_CHARS,
    STOPWORDS,
    Candidate,
    capitalize,
    lower_first,
    strip_fillers,
    tokens,
)
from app.engines.offline.extract_text import Speaker, Statement

__all__ = ["finalize", "joined_detail"]

ACK_BONUS = 0.1
REJECT_PENALTY = 0.2
MENTION_BONUS = 0.05
MENTION_MAX_BONUS = 0.1
AGENT_CAP = 0.8
USER_CAP = 0.95
# Token overlap that makes two statements of one category the same fact.
JACCARD_SAME = 0.55
CONTAINED_SAME = 0.8


def _apply_responses(statements: list[Statement], candidates: list[Candidate]) -> None:
    """Agent items gain when the user's next words accept them and lose when they reject."""
    openings: dict[int, tuple[Speaker, str]] = {}
    said: dict[int, list[str]] = {}  # the agent's own sentences, per turn
    for statement in statements:
        openings.setdefault(statement.turn, (statement.speaker, statement.text))
        if statement.speaker is Speaker.AGENT and not statement.pasted:
            said.setdefault(statement.turn, []).append(statement.text)
    verdict: dict[int, float] = {}
    pending: list[int] = []
    for turn in sorted(openings):
        speaker, text = openings[turn]
        if speaker is Speaker.AGENT:
            pending.append(turn)
            continue
        opening = _opening(text)
        delta = ACK_BONUS if r.ACK.match(opening) else 0.0
        if r.REJECT.match(opening):
            # "no need. merged, thx" after "… I could also add `--json` output if that's
            # useful": the user turns down the offer the agent closed with, not its report.
            offered = bool(pending) and _declines_offer(said.get(pending[-1], []), text)
            delta = 0.0 if offered else -REJECT_PENALTY
        for agent_turn in pending:
            verdict[agent_turn] = delta
        pending = []
    for candidate in candidates:
        if candidate.speaker is Speaker.AGENT:
            candidate.confidence += verdict.get(candidate.turn, 0.0)


# An agent's turn that ends by offering more work: "I could also add … if that's useful",
# "Should I also migrate the old rows?", "Let me know if you want …".
_OFFERS_MORE = re.compile(
    r"(?i)^\W*(?:i|we)\s+(?:could|can)\s+also\b|^\W*let\s+me\s+know\s+if\b"
    r"|\b(?:also|too|as\s+well)\b[^.?!]*\?\s*$"
    r"|\bif\s+(?:that'?s|that\s+is|it'?s|it\s+is|this\s+is)\s+(?:useful|helpful|wanted)\b"
)


def _declines_offer(agent: list[str], reply: str) -> bool:
    """Whether a rejecting reply turns down what the agent's turn closed by offering.

    The turn ends with an offer of more work ("I could also add … if that's useful"), or
    with a question whose offer the reply names and the rest of the turn does not: "I could
    introduce Terragrunt … Want me to do that?" answered "no terragrunt. five tiny backend
    blocks is fine".
    """
    if not agent:
        return False
    if _OFFERS_MORE.search(agent[-1]):
        return True
    if not agent[-1].rstrip().endswith("?") or len(agent) < 3:
        return False
    first = re.split(r"(?<=[.!?])\s", reply.strip(), maxsplit=1)[0]
    named = {w for w in tokens(first) if len(w) >= 4} - _REPLY_WORDS
    offer = tokens(" ".join(agent[-2:]))
    rest = tokens(" ".join(agent[:-2]))
    return bool(named) and named <= offer and not named & rest


# Words of a refusal that name nothing offered.
_REPLY_WORDS = frozenset({"need", "thanks", "thank", "please", "that", "this", "dont", "don't"})


def _opening(text: str) -> str:
    """The opening words as typed (acknowledgements are fillers to `strip_fillers`)."""
    return text.strip().lstrip("([\"'")


# A bug's cause or fix told in several places stays a paragraph a person reads: past this
# length another account's words are left out.
MAX_DETAIL_CHARS = 800


def joined_detail(mine: str, theirs: str) -> str:
    """`theirs` appended to `mine` ("a; b"), unless that makes it longer than
    `MAX_DETAIL_CHARS` (then `mine` as it is)."""
    if not mine:
        return theirs
    if not theirs or len(mine) + len(theirs) + 2 > MAX_DETAIL_CHARS:
        return mine
    return f"{mine}; {theirs}"


def _merge_into(keep: Candidate, other: Candidate) -> None:
    if (
        keep.category is Category.BUG_PATTERNS
        and other.root_cause
        and other.confidence > keep.confidence
    ):
        # The same failure told as a confirmed fix (cause and fix) and, before it, as a
        # guess: the confirmed account is the item ("The export test failed." gives way to
        # the unit's "The test suite on feature/invoice-export fails in CI" with its cause).
        keep.content = other.content
        for name in ("root_cause", "fix"):
            theirs, mine = getattr(other, name), getattr(keep, name)
            if mine and theirs and mine.lower() not in theirs.lower():
                setattr(keep, name, joined_detail(theirs, mine))
            elif theirs:
                setattr(keep, name, theirs)
    if other.speaker is Speaker.USER and keep.speaker is Speaker.AGENT:
        keep.content, keep.speaker = other.content, other.speaker
    keep.confidence = max(keep.confidence, other.confidence)
    keep.plain = keep.plain and other.plain
    keep.mentions += other.mentions
    keep.speakers |= other.speakers
    keep.topic_tags = list(dict.fromkeys(keep.topic_tags + other.topic_tags))[:5]
    keep.topic_title = keep.topic_title or other.topic_title
    keep.lead = keep.lead or other.lead
    for name in ("rationale", "trade_offs", "root_cause", "fix", "approach", "lessons"):
        if not getattr(keep, name) and getattr(other, name):
            setattr(keep, name, getattr(other, name))
    keep.occurrences = max(keep.occurrences, other.occurrences)


def _merge_adjacent(candidates: list[Candidate]) -> list[Candidate]:
    """Consecutive statements of one turn on the same subject are one item."""
    merged: list[Candidate] = []
    for candidate in candidates:
        last = merged[-1] if merged else None
        if (
            last is not None
            and last.turn == candidate.turn
            and candidate.index - last.index == 1
            and last.category == candidate.category
            and last.topic_title
            and last.topic_title == candidate.topic_title
            and last.category is not Category.BUG_PATTERNS
            and len(last.content) + len(candidate.content) < MAX_CONTENT_CHARS
        ):
            last.content = f"{last.content} {candidate.content}"
            last.confidence = max(last.confidence, candidate.confidence)
            last.speakers |= candidate.speakers
            last.topic_tags = list(dict.fromkeys(last.topic_tags + candidate.topic_tags))[:5]
            last.index = candidate.index
            continue
        merged.append(candidate)
    return merged


def _similar(a: set[str], b: set[str]) -> bool:
    if not a or not b:
        return False
    shared = len(a & b)
    return shared / len(a | b) >= JACCARD_SAME or (
        min(len(a), len(b)) >= 2 and shared / min(len(a), len(b)) >= CONTAINED_SAME
    )


def _merge_duplicates(candidates: list[Candidate]) -> list[Candidate]:
    """Same category and mostly the same words: one item, reinforced by each mention.

    A candidate merges into the earliest kept item `_similar` to it. Finding that item
    compares it only with the kept items that share a word it must share (`_Kept`), so a
    conversation of thousands of candidates on common words costs about the same per
    candidate as a short one.
    """
    kept: list[Candidate] = []
    words_of = [tokens(f"{c.content} {c.root_cause} {c.fix}") for c in candidates]
    rarity = Counter(word for words in words_of for word in words)
    pools: dict[Category, _Kept] = {}
    at: list[int] = []  # kept position -> its place in its category's pool
    # The same statement found twice (once alone, once as a fix's symptom) is one item even
    # when only one of them carries a cause and a fix.
    said: dict[tuple[Category, frozenset[str]], int] = {}
    for candidate, words in zip(candidates, words_of, strict=True):
        statement = (candidate.category, frozenset(tokens(candidate.content)))
        pool = pools.setdefault(candidate.category, _Kept(rarity))
        target = said.get(statement) if statement[1] else None
        if target is None:
            found = pool.find(words)
            target = None if found is None else pool.owner[found]
        if target is None:
            at.append(pool.add(words, len(kept)))
            said.setdefault(statement, len(kept))
            kept.append(candidate)
        else:
            _merge_into(kept[target], candidate)
            pool.grow(at[target], words)
    for candidate in kept:
        bonus = min(MENTION_MAX_BONUS, MENTION_BONUS * (candidate.mentions - 1))
        candidate.confidence += bonus
    return kept


# Two `_similar` word sets share at least this share of the smaller one's words: shared
# words s of sets a and b with s / |a | b| >= J make s >= J (|a| + |b| - s), so
# s >= 2J / (1 + J) * min(|a|, |b|); a containment needs s >= CONTAINED_SAME * min.
_SHARE_SAME = min(2 * JACCARD_SAME / (1 + JACCARD_SAME), CONTAINED_SAME)


class _Kept:
    """The word sets of one category's kept items, indexed for `_similar` look-ups.

    Two similar sets share at least `_SHARE_SAME` of the smaller one's words, so any
    `len - ceil(_SHARE_SAME * len) + 1` words of the smaller set include a shared one.
    Each set is filed under all its words and, as the smaller side, under that many of its
    rarest words (its probes); a look-up reads the sets that have one of the new set's
    words as a probe and the sets that hold one of its own rarest words, then compares
    with those alone.
    """

    def __init__(self, rarity: Counter[str]) -> None:
        self.rarity = rarity
        self.sets: list[set[str]] = []
        self.owner: list[int] = []  # pool position -> position among all kept items
        self.probes: list[set[str]] = []
        self.holding: dict[str, list[int]] = {}
        self.probed: dict[str, list[int]] = {}

    def _rarest(self, words: set[str], count: int) -> list[str]:
        return sorted(words, key=lambda w: (self.rarity[w], w))[:count]

    @staticmethod
    def _needed(size: int) -> int:
        # (the margin keeps a float product just over a whole number from rounding up)
        return size - max(1, math.ceil(_SHARE_SAME * size - 1e-6)) + 1

    def find(self, words: set[str]) -> int | None:
        """The earliest kept set `_similar` to `words`, if any."""
        if not words:
            return None
        near: set[int] = set()
        for word in words:
            near.update(self.probed.get(word, ()))
        for word in self._rarest(words, self._needed(len(words))):
            near.update(self.holding.get(word, ()))
        return next((k for k in sorted(near) if _similar(words, self.sets[k])), None)

    def add(self, words: set[str], owner: int) -> int:
        """File a new kept set; returns its place in the pool."""
        k = len(self.sets)
        self.sets.append(set())
        self.owner.append(owner)
        self.probes.append(set())
        self.grow(k, words)
        return k

    def grow(self, k: int, words: set[str]) -> None:
        """Set `k` takes in `words` (a merged duplicate's): file the new ones and give it
        the probes its new size needs."""
        known = self.sets[k]
        for word in words - known:
            self.holding.setdefault(word, []).append(k)
        known |= words
        probes = self.probes[k]
        missing = self._needed(len(known)) - len(probes)
        if missing > 0:
            for word in self._rarest(known - probes, missing):
                probes.add(word)
                self.probed.setdefault(word, []).append(k)


TITLE_WORDS = 6
TITLE_CHARS = 60
# "For this repo: dependencies go…", "Going forward: pin…": the label is not the subject.
_LABEL = re.compile(r"^[^:]{1,30}:\s+(?=\S)")
# A longer lead-in that announces the rule after its colon: "a general thing I want from you
# whenever you write code for me, unity or not: no LINQ …", "two rules for this codebase
# while you're in there: …".
_TOLD_LABEL = re.compile(
    r"(?i)^(?:(?:and|also|oh|so|ok(?:ay)?|plus|while (?:we'?re|you'?re) at it)\W+)*"
    r"(?:(?:let'?s make|here'?s|here are|there'?s|i have|we have)\s+)?"
    r"(?:a couple of|a|an|one|two|three|four|another|my|our|some|the)\s+"
    r"(?=[^:.!?]{0,100}\b(?:things?|rules?|conventions?|requests?|preferences?|quirks?)\b)"
    r"[^:.!?]{2,120}:\s+(?P<rest>\S.*)$"
)
_OPENERS = re.compile(
    # (A contraction goes with its pronoun: "We'd like to move …" is not "D like to move".)
    # "I think someone left …", "We'd like to move …": the subject comes after.
    r"(?i)^(?:(?:we|i)(?:'d like to| would like to| think| guess| suspect)\b(?: that)?|"
    # "I talked with Lena and we're moving …": who was asked is not the subject
    r"(?:we|i) (?:talked|spoke|synced|chatted|checked|met) (?:with|to) (?:\S+ ){1,3}?and|"
    r"let'?s do (?:that|it|this|both)|let'?s|"
    # "My idea is to use the Vault database secrets engine …": the idea is what follows
    r"(?:my|our|the) (?:idea|plan|proposal|suggestion|goal) (?:is|was|would be) (?:to|that)|"
    r"what (?:i|we)(?:'d| would) like is|"
    r"we(?:'re|'ve|'d|'ll| are)?|i(?:'ve|'m|'ll|'d)?|you(?:'re|'ve|'d|'ll)?|please|pls|also|and|"
    r"so|then|ok|basically|rule|they|it'?s|it|scratch that|actually|from now(?: on)?|going forward|"
    r"speaking of which|heads up|fyi|btw|by the way|quick (?:note|change|question|thing)|ah|oh|"
    r"(?:one )?(?:more|small|last|other) thing|"
    # "In this repo the zod schemas go …", "In our code we use LL drivers …": where it holds
    r"(?:in|for|across) (?:this|our|the|all (?:of )?(?:our|the)) (?:repo|repository|codebase|"
    r"project|code|app|service)s?,?|(?:just )?so you know(?: for the future)?,?|for the future,?|"
    r"do it now|(?:right\s+)?now|(?:no|nope|yes|yeah|right|hello|hi|hey|good point),)(?:\b|(?<=,))"
    r"[\s,;]*"
)
_NO_WORD_LEAD = re.compile(r"^[^\w`'\"/.(<~#@$-]+")
_DO_NOT = re.compile(r"(?i)^(?:do|does)\s+not\s+(?=[a-z])|^(?:do|does)n'?t\s+(?=[a-z])")
_LIKES = re.compile(r"(?i)^(?:really\s+)?(?:like|love)\s+(?=\S+\s+\S)")
_HAVE = re.compile(
    r"(?i)^(?:have|get|see|keep\s+getting|are\s+getting|'re\s+getting)\s+(?!rid\b)"
    r"(?:(?:since|from)\s+\w+\s+)?(?:received\s+)?(?:(?:a|an|the|some|this)\s+)?(?=\S)"
)
_TROUBLE_LEAD = re.compile(
    r"(?i)^(?:weird\s+|strange\s+|big\s+)?(?:problem|issue|bug)s?\s+(?:(?:in|with|on)\s+"
    r"\S+\s+)?(?:that|where)\s+(?=\S+\s+\S)"
)
_NOT_DOING = re.compile(
    r"(?i)^not\s+(?:do|use|go\s+with|add|keep|bother\s+with)\s+(?:the\s+|a\s+|an\s+|any\s+)?"
)
# A title keeps a leading negation: "No pt-online-schema-change", not the opposite.
_NEGATIONS = frozenset({"no", "not", "never"})
# "No way, …", "no problem, …": an exclamation, not a thing turned down.
_NO_PHRASES = frozenset({"way", "problem", "worries", "need", "thanks", "idea", "doubt", "rush"})
_NEGATED_START = re.compile(r"(?i)^(no|never)\s+(?=[.`\w])")
# A title ends where a reason or a relative clause starts, and after three words where
# the next clause starts.
_SUBORDINATE = frozenset({"which", "because", "since", "so"})
_CLAUSE_WORDS = frozenset({"and", "but", "otherwise", "while"})
_RELATIVE = frozenset({"that", "which", "who"})
# "… that has", "… that posts", "… which accumulates": the relative clause's verb.
_VERB_LIKE = re.compile(
    r"(?i)^(?:is|are|was|were|has|have|had|can|will|would|should|must|does|do|did|gets?|"
    r"[a-z]{2,}(?:es|ed|s))$"
)
_TITLE_CLAUSE_AT = 3
# "Every action (addTodo, deleteTodo, toggleTodo, …) calls renderState()": a bracketed list
# of examples is not the subject.
_LISTED_ASIDE = re.compile(r"\s*\([^()]*,[^()]*,[^()]*\)")


# Words a cut title does not end on either: a preposition waiting for its object ("Image in
# the app goes through", "Put the schema in schemas/avro/ like") or a word that only tones
# the sentence ("No sounds please", "Nightly flow failed again").
_DANGLING = frozenset(
    {
        "about", "across", "after", "against", "along", "around", "before", "behind",
        "between", "inside", "into", "like", "next", "onto", "outside", "over", "per",
        "through",
        "toward", "towards", "under", "until", "via", "within", "without",
        "again", "already", "also", "just", "please", "pls", "same",
    }
)  # fmt: skip


# Words written with a full stop that ends no sentence.
_ABBREVIATED = frozenset({"e.g", "i.e", "etc", "vs", "cf", "approx", "incl", "esp"})


# A verb that waits for what it says: "Every oban worker we write has", "Fetch in the app
# should go".
_WAITING_VERB = frozenset(
    {
        *("has", "have", "had", "must", "should", "shall", "will", "would", "can", "could"),
        *("is", "are", "was", "were", "be", "go", "goes", "get", "gets", "need", "needs"),
    }
)
_COMPLETION_WORDS = 3


def _predicate_completed(picked: list[str], raws: list[str], last: int) -> list[str]:
    """A title cut right after a verb that waits for its complement takes the rest of the
    clause when it ends within three more words ("Every oban worker we write has to be
    idempotent"); otherwise the title stays as it was cut."""
    if not picked or picked[-1].lower() not in _WAITING_VERB or last < 0:
        return picked
    more: list[str] = []
    rest = raws[last + 1 :]
    for n, raw in enumerate(rest[:_COMPLETION_WORDS]):
        word = raw.strip("`.,;:()\"'")
        if not word:
            return picked
        more.append(word)
        if raw.endswith((",", ";", ":", ".", "!", "?")) or n == len(rest) - 1:
            return picked if word.lower() in STOPWORDS else [*picked, *more]
    return picked


# "Not maintaining runner infra for 4", "Raising the server tick from 20": a title does not
# end on a number its preposition leaves waiting for what it counts or where it goes to.
_NUMBER = re.compile(r"(?i)^(?:~?\d[\d.,]*|one|two|three|four|five|six|seven|eight|nine|ten)$")
_VALUE_PREPOSITIONS = frozenset({"for", "from", "of", "to", "by", "at", "on", "in", "with"})
_RANGE_WORDS = 3


def _number_completed(picked: list[str], raws: list[str], last: int) -> list[str]:
    """A title cut on "<preposition> <number>" takes the word the number counts ("for 4
    repos"), or the rest of "from 20 to 30 Hz", while the title stays short enough."""
    if len(picked) < 2 or last < 0 or picked[-2].lower() not in _VALUE_PREPOSITIONS:
        return picked
    if not _NUMBER.match(picked[-1]):
        return picked
    rest = [raw.strip("`.,;:()\"'") for raw in raws[last + 1 : last + 1 + _RANGE_WORDS]]
    ends = [raw.endswith((",", ";", ":", ".", "!", "?")) for raw in raws[last + 1 :]]
    more: list[str] = []
    if picked[-2].lower() == "from" and rest[:1] == ["to"] and len(rest) >= 2:
        more = rest[:2]
        if not ends[1] and len(rest) == _RANGE_WORDS and rest[2].lower() not in STOPWORDS:
            more.append(rest[2])  # ("… to 30 Hz")
    elif rest and rest[0] and rest[0].lower() not in STOPWORDS and rest[0].isalpha():
        more = rest[:1]
    title = [*picked, *more]
    if not more or len(" ".join(title)) > TITLE_CHARS:
        return picked
    return title


def _phrase_title(content: str) -> str:
    """The first words of the statement that name its subject (at most six)."""
    text = _LABEL.sub("", strip_fillers(content), count=1)
    told = _TOLD_LABEL.match(text)
    if told is not None and len(told.group("rest").split()) >= 2:
        # "a general thing I want from you whenever you write code for me: no LINQ in …"
        text = told.group("rest")
    bare = _LISTED_ASIDE.sub("", text)
    if len(bare.split()) >= 2:
        text = bare
    text = _NO_WORD_LEAD.sub("", text, count=1)  # ("🙌 ok from now on every buffer …")
    pronoun = False
    for _ in range(3):
        opener = _OPENERS.match(text)
        if opener is not None and opener.end():
            pronoun = pronoun or opener.group(0).strip(" ,;").lower() in ("i", "we")
        text = text[opener.end() :] if opener is not None else text
    # "we do not show permission prompts …": what is not done, "Don't show permission …"
    text = _DO_NOT.sub("Don't ", text, count=1)
    if pronoun:
        # "I like branded types for money": what is liked names the item
        text = _LIKES.sub("", text, count=1)
        # "We have errors in billing-gw …", "I have since yesterday the problem in Mossbound
        # that the player is jittering": what is had, or the trouble itself
        had = _HAVE.sub("", text, count=1)
        text = _TROUBLE_LEAD.sub("", had, count=1) if len(had.split()) >= 2 else text
    # "Let's not do the lifecycle rule after all": what it turns down, "No lifecycle rule".
    text = _NOT_DOING.sub("No ", text, count=1)
    # "No .env files committed": the filler stripper reads "No ." as an answer.
    negated = _NEGATED_START.match(content)
    if negated is not None and not text.lower().startswith(negated.group(1).lower()):
        text = f"{negated.group(1)} {text}"
    picked: list[str] = []
    raws = text.split()
    places: list[int] = []  # where in `raws` each picked word is
    for at, raw in enumerate(raws):
        word = raw.strip("`.,;:()\"'")
        if word.count("(") > word.count(")"):
            # "seed_everything(42)", "`require('fs')`" keep the brackets they close
            whole = raw.strip("`\"'").rstrip(".,;:").strip("`\"'")
            if whole.count("(") == whole.count(")") and whole.startswith(word[:1]):
                word = whole
        if not word:
            continue
        low = word.lower()
        if not picked and low in STOPWORDS and low not in _NEGATIONS:
            continue
        if picked and len(" ".join(picked)) + len(word) + 1 > TITLE_CHARS:
            break
        if picked and low in _SUBORDINATE:
            break
        if len(picked) >= _TITLE_CLAUSE_AT and low in _CLAUSE_WORDS:
            break
        picked.append(word)
        places.append(at)
        if len(picked) == TITLE_WORDS:
            break
        if len(picked) >= _TITLE_CLAUSE_AT and raw.endswith((",", ";", ":")):
            break
        if len(picked) >= 2 and raw.endswith((".", "!", "?")) and low not in _ABBREVIATED:
            break  # "We stay with FreeRTOS. The product has …": the sentence ends the title
        if (
            len(picked) == 2
            and picked[0].lower() in _NEGATIONS
            and low not in _NO_PHRASES
            and low not in STOPWORDS
            and low not in _DANGLING
            and low not in _NEGATIONS
            and raw.endswith((",", ";", "."))
        ):
            break  # "No celery, it's too heavy …": what is turned down names it
    # "Never edit a migration that has", "Switching to colocated tests from now": a cut
    # title does not end inside a relative clause or a "from now on".
    k = len(picked) - 2
    if k >= _TITLE_CLAUSE_AT and picked[k].lower() in _RELATIVE and _VERB_LIKE.match(picked[-1]):
        del picked[k:]
    if [w.lower() for w in picked[-2:]] == ["from", "now"] and len(picked) > _TITLE_CLAUSE_AT:
        del picked[-2:]
    # "Zod inside the form action +", "Project is managed with uv —": a title does not end
    # on an operator or a dash, nor on a word with nothing after its "=".
    while picked and (
        picked[-1].lower() in STOPWORDS
        or picked[-1].lower() in _DANGLING
        or not any(ch.isalnum() for ch in picked[-1])
    ):
        picked.pop()
    if picked and len(places) >= len(picked):
        picked = _predicate_completed(picked, raws, places[len(picked) - 1])
        if len(places) >= len(picked):
            picked = _number_completed(picked, raws, places[len(picked) - 1])
    if picked and picked[-1].endswith("=") and len(picked[-1]) > 1:
        picked[-1] = picked[-1].rstrip("=")
    title = " ".join(picked) or "Note"
    return capitalize(title)


_SUFFIX = re.compile(r"(?:ings|ing|ers|er|es|ed|s|e)$")


def stems(text: str) -> set[str]:
    """The words of `text` with common endings cut ("deploys" and "deployed": "deploy")."""
    words = (part for w in tokens(text) for part in re.split(r"[/._-]+", w) if part)
    return {_SUFFIX.sub("", w) if len(w) > 3 else w for w in words}


def _speaks_of(topic: str, candidate: Candidate) -> bool:
    """Whether the statement speaks of what the topic's name leads with: "HTTP calls"
    names "… never fetch directly, always the http client …", not "… stores call …", nor
    "… a server at http://mlflow.plant.local:5000" (an address says nothing of its scheme)."""
    head = stems(topic.split()[0]) if topic.split() else set()
    return bool(head) and head <= stems(_URL.sub(" ", candidate.content))


_URL = re.compile(r"\b[a-z][\w+.-]*://\S+", re.IGNORECASE)


_ANSWER_OPENING = re.compile(
    r"(?i)^\W*(?:(?:yes|yeah|yep|ok(?:ay)?|so|and|also|but|hmm+|no)\b\W*)+"
)


def _opening_clause(content: str) -> str:
    """The statement's words up to its first comma, semicolon or colon (six at most)."""
    text = _ANSWER_OPENING.sub("", content.replace("`", "").replace("*", ""))
    clause = re.split(
        r"[,;:(]|\s[—–-]\s|\.(?:\s|$)|\s(?:so|because|since|which|when|if)\s", text, maxsplit=1
    )[0]
    words = clause.split()[:TITLE_WORDS]
    while words and words[-1].lower() in STOPWORDS:
        words.pop()
    return " ".join(words)


# Markdown emphasis, not the star of a glob ("queries/*.sql", "app/*/models.py").
_EMPHASIS = re.compile(r"\*\*|(?<![\w/.*])\*(?=[\w`])|(?<=[\w`.!?])\*(?![\w/.*])")


_KIND_LABELS = frozenset(
    {
        *("root cause", "cause", "fix", "the fix", "symptom", "problem", "issue", "summary"),
        *("note", "notes", "update", "result", "results", "status", "why", "what changed"),
        *("next steps", "tl;dr", "tldr", "context", "background", "details", "changes"),
    }
)


def _assign_titles(candidates: list[Candidate]) -> None:
    """Lead or chosen thing, else topic, else the first words; distinct within a category.

    The strongest item gets first pick, so a repeated topic ("Testing") names the item that
    matters most and the others fall back to their own words.
    """
    used: set[tuple[Category, str]] = set()
    ordered = sorted(candidates, key=lambda c: (-c.confidence, c.index))
    for candidate in ordered:
        phrase = _phrase_title(candidate.content)
        title = ""
        # A topic's name is a title only when the statement speaks of it ("Error handling"
        # for "always wrap errors…", not "HTTP calls" for "SET lock_timeout = '5s'").
        topic = candidate.topic_title if _speaks_of(candidate.topic_title, candidate) else ""
        # A single word ("Testing", "gh-ost") labels more than it summarises: the
        # statement's own words come first when they make a title of two words or more,
        # unless the statement opens with the name: then the name leads the title, and a
        # one-word name takes the statement's first words ("Trivy: scans images filesystems").
        # ("**Root cause:** …": a bold label says what kind of statement follows, not what of)
        lead = "" if candidate.lead.lower().strip(" :") in _KIND_LABELS else candidate.lead
        named_first = bool(lead) and candidate.content.lower().startswith(lead.lower())
        if named_first and len(lead.split()) < 2 and len(phrase.split()) >= 2:
            lead = f"{lead}: {lower_first(phrase)}"
        options = [lead, topic, phrase]
        if len(phrase.split()) >= 2 and not named_first:
            options.sort(key=lambda o: len(o.split()) < 2)
        for option in options:
            option = _EMPHASIS.sub("", option).replace("`", "").strip(" :.-")
            if option and (candidate.category, option.lower()) not in used:
                title = option
                break
        if not title:
            title = f"{candidate.topic_title or phrase} ({phrase})"
        if len(title.split()) < 2:
            # "gh-ost", "Yarn": a name alone labels; the statement's opening clause says what
            # about it ("Use gh-ost", "Use yarn for all of this").
            opening = _opening_clause(candidate.content)
            if len(opening.split()) >= 2 and (candidate.category, opening.lower()) not in used:
                title = opening
        used.add((candidate.category, title.lower()))
        # Leads and chosen names are kept as written ("sqlc"); generated titles start upper.
        candidate.title = title if title == lead else capitalize(title)


def finalize(candidates: list[Candidate], statements: list[Statement]) -> list[Candidate]:
    """Apply the user's answers, merge duplicates, cap confidence and title every item."""
    _apply_responses(statements, candidates)
    merged = _merge_duplicates(_merge_adjacent(candidates))
    for candidate in merged:
        cap = USER_CAP if Speaker.USER in candidate.speakers else AGENT_CAP
        candidate.confidence = round(max(0.0, min(cap, candidate.confidence)), 2)
    _assign_titles(merged)
    return merged
