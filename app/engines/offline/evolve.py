"""Deterministic evolution and consolidation of a branch memory (the offline engine's path).

This module owns what seed 001 section 2.2 asks of the evolution prompt, done by rules:
new items that repeat a known fact reinforce it (confidence up, sources, tags and
occurrences merged, earliest date kept); items that contradict a known fact either replace it
(the old item moves whole into a "superseded" Contradiction) or, when the old one is pinned or
more confident, wait in an "open" Contradiction for a person; everything else is added to its
section, and the summary is rewritten from the strongest items. It also owns the weekly
consolidation of seed 001 section 6 with seed 000's per-section cap: near-duplicates inside a
section are merged and the weakest items beyond the cap are pruned (the caller keeps the old
file as a version, so pruned items stay recoverable). Nothing here touches files; the same
inputs always give the same output.
"""

from __future__ import annotations

import hashlib
import heapq
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

from app.core.config import Config
from app.core.conflicts import describe_statement
from app.core.errors import InvalidInput
from app.core.models import (
    BranchMemory,
    Category,
    Contradiction,
    EvolutionResult,
    MemoryItem,
    make_item_id,
    normalize_timestamp,
    utc_now,
)
from app.core.peritem import PerItem
from app.core.similarity import (
    contradicts,
    item_similarity,
    item_stances,
    item_tokens,
    stance_keys,
    token_overlap,
    tokens,
)
from app.core.words import STOP_WORDS, as_written
from app.engines.offline.manifest_notes import MANIFEST_TAG

__all__ = [
    "NON_THREAD_SOURCES",
    "consolidate",
    "evolve",
    "named_word",
    "reinforce",
    "replaces_in_force",
    "summarize",
]

PATH = "offline"
# Each repetition closes a quarter of the gap to certainty; 0.99 is left for pinned facts.
REINFORCE_STEP = 0.25
# Tag an extracted item carries when the user said it replaces an earlier choice.
REPLACES = "replaces:"
# Verbs of any rule, as `item_tokens` writes them ("goes" -> "goe").
_RULE_VERBS = frozenset(
    {"use", "goe", "go", "need", "run", "get", "make", "keep", "put", "do", "have", "take"}
    | {"come", "live", "work"}
)
# What a correction sets aside: ", not sqlite", "(not the redis one)", "— not yarn".
_SET_ASIDE = re.compile(
    r"(?i)(?:^|[,;(—–]\s*|\s-\s)not\s+(?:the\s+|a\s+|an\s+|our\s+)?([\w./+#-]*\w)"
)
# Words after "not" that name no value: "not in the handlers", "not just for tests".
_NOT_A_VALUE = STOP_WORDS | frozenset(
    {"just", "only", "really", "yet", "anymore", "always", "all", "any", "every", "even", "now"}
)
# What a change said was replaced without naming a thing (`replaces:unnamed`): no rule goes
# for sharing a word with it.
UNNAMED = "unnamed"
# Tag of an item the conversation said disagrees with an earlier rule, naming that rule.
DISPUTES = "disputes:"
# Tag of an item stating a disagreement the user left undecided: always an open entry.
UNDECIDED = "undecided"
# A change of course said for the future ("from now on", "going forward").
_FROM_NOW_ON = re.compile(r"(?i)\b(?:from now on|from here on|going forward)\b")
# A shared word this long names the subject, not the grammar ("uploads", "retries").
_CONTENT_WORD = 5
_REPLACEABLE = (
    Category.CODING_PREFERENCES,
    Category.ARCHITECTURAL_DECISIONS,
    Category.PROJECT_CONVENTIONS,
)
MAX_REINFORCED = 0.99
# Sources that are not agent threads: they never raise the header's thread count.
NON_THREAD_SOURCES = frozenset({"cli", "user"})
# Same token-weight split as app.core.similarity.similarity: with token overlap t, the score
# is at most 0.7 * t + 0.3, so pairs below the threshold are skipped before difflib runs.
_TOKEN_WEIGHT = 0.7

# How many rules and decisions the summary names, and how long each may run.
_SUMMARY_PER_CATEGORY = 3
_SUMMARY_TEXT_MAX = 110
_EXTRA_FIELDS = ("rationale", "trade_offs", "scope", "root_cause", "fix", "approach", "lessons")


# ---------------------------------------------------------------------------------------------
# Item-level helpers
# ---------------------------------------------------------------------------------------------


def _merged(first: Iterable[str], second: Iterable[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))


def reinforce(old: MemoryItem, new: MemoryItem) -> MemoryItem:
    """`old` strengthened by a repetition `new`; a pinned item comes back unchanged.

    Confidence rises from the higher of the two by a quarter of the remaining gap (capped at
    0.99, never lowered) when the repetition comes from a source not yet counted; sources
    and tags are merged, bug-pattern occurrences add up, the
    earliest extraction date stays, and empty detail fields (rationale, fix, ...) are filled
    from the repetition. Id, title and content stay those of `old`.
    """
    if old.pinned:
        return old
    base = max(old.confidence, new.confidence)
    boosted = min(MAX_REINFORCED, base + (1.0 - base) * REINFORCE_STEP)
    # The same thread read again is not a second witness: no boost, no extra occurrence
    # (re-scanning must not change the file, nor save a version).
    fresh = not new.sources or not set(new.sources) <= set(old.sources)
    if not fresh:
        boosted = base
    update: dict[str, object] = {
        "confidence": round(max(old.confidence, boosted), 2),
        "sources": _merged(old.sources, new.sources),
        "tags": _merged(old.tags, new.tags),
        "extracted": min(old.extracted, new.extracted),
        # A person repeating a fact (source `user`) pins it, as the parser would.
        "pinned": old.pinned or new.pinned,
    }
    if old.category is Category.BUG_PATTERNS and fresh:
        update["occurrences"] = old.occurrences + new.occurrences
    for name in _EXTRA_FIELDS:
        if not getattr(old, name) and getattr(new, name):
            update[name] = getattr(new, name)
    return old.model_copy(update=update)


def _could_match(a: frozenset[str], b: frozenset[str], threshold: float) -> bool:
    return _TOKEN_WEIGHT * token_overlap(a, b) + (1.0 - _TOKEN_WEIGHT) >= threshold


def _short(item: MemoryItem) -> str:
    """First sentence of an item, shortened for the summary."""
    text = item.content or item.title
    for stop in (". ", "; "):
        if stop in text:
            text = text.split(stop, 1)[0]
    text = text.rstrip(" .;:")
    if len(text) > _SUMMARY_TEXT_MAX:
        head = text[: _SUMMARY_TEXT_MAX - 1]
        # At the last clause break that keeps most of it ("… off Celery and onto Dramatiq,
        # the prefork pool eats 1.2 GB …" ends after "Dramatiq"), else at a word.
        cut = max(head.rfind(", "), head.rfind(" — "), head.rfind(" - "), head.rfind(": "))
        if cut >= _SUMMARY_TEXT_MAX // 2:
            return head[:cut].rstrip(" ,;:—-")
        word = head.rfind(" ")
        text = (head[:word] if word >= _SUMMARY_TEXT_MAX // 2 else head).rstrip(" ,;:") + "…"
    return text


def _strength(item: MemoryItem) -> tuple[float, int, float, str]:
    # Sort key, strongest first: confidence, repetitions, recency, then id for determinism.
    return (-item.confidence, -item.occurrences, -item.extracted.toordinal(), item.id)


_SUMMARY_COUNTS = {
    Category.ARCHITECTURAL_DECISIONS: ("decision", "decisions"),
    Category.PROJECT_CONVENTIONS: ("convention", "conventions"),
    Category.CODING_PREFERENCES: ("coding preference", "coding preferences"),
    Category.BUG_PATTERNS: ("bug pattern", "bug patterns"),
    Category.IMPLEMENTATION_NOTES: ("implementation note", "implementation notes"),
}
_RULE_CATEGORIES = (
    Category.ARCHITECTURAL_DECISIONS,
    Category.PROJECT_CONVENTIONS,
    Category.CODING_PREFERENCES,
)
_SUMMARY_PRACTICE = 2


def _clauses(parts: list[str]) -> str:
    """Statements as one sentence's clauses: "Never edit …; never disable …" (a name that
    opens one keeps its capitals: "ESLint", "API")."""
    out = parts[:1]
    for part in parts[1:]:
        first = part.split(" ", 1)[0].replace("'", "")
        out.append(part[0].lower() + part[1:] if first.isalpha() and first[1:].islower() else part)
    return "; ".join(out)


def _ended(sentence: str) -> str:
    """A full stop, unless the sentence ends on a cut ("…") already."""
    return sentence if sentence.endswith("…") else f"{sentence}."


def _listed(parts: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def summarize(memory: BranchMemory) -> str:
    """The branch in two or three sentences, from its strongest items (deterministic).

    What the memory holds (per category, from how many threads, open contradictions), the
    strongest rules and decisions whatever their section, then what to watch for: the
    strongest bug patterns, or the strongest implementation notes when no bug is known.
    """
    count = memory.item_count()
    open_count = sum(1 for c in memory.contradictions if c.status == "open")
    waiting = (
        f" {open_count} open contradiction{'s' if open_count != 1 else ''} "
        f"{'await' if open_count != 1 else 'awaits'} a decision."
        if open_count
        else ""
    )
    if count == 0:
        return "This branch's memory holds no items yet." + waiting
    held = [
        f"{len(memory.items[c])} {_SUMMARY_COUNTS[c][len(memory.items[c]) != 1]}"
        for c in _SUMMARY_COUNTS
        if memory.items[c]
    ]
    threads = memory.thread_count
    origin = f" from {threads} thread{'s' if threads != 1 else ''}" if threads else ""
    sentences = [f"This branch's memory holds {_listed(held)}{origin}.{waiting}"]
    # The same as sorted(...)[:n], without sorting whole sections.
    rules = heapq.nsmallest(
        _SUMMARY_PER_CATEGORY,
        (i for c in _RULE_CATEGORIES for i in memory.items[c]),
        key=_strength,
    )
    if rules:
        sentences.append(_ended(f"Key points: {_clauses([_short(i) for i in rules])}"))
    bugs = heapq.nsmallest(_SUMMARY_PRACTICE, memory.items[Category.BUG_PATTERNS], key=_strength)
    if bugs:
        told = []
        for item in bugs:
            text = _short(item)
            if item.occurrences > 1:
                text += f" (seen {item.occurrences} times)"
            told.append(text)
        sentences.append(_ended(f"Watch for: {_clauses(told)}"))
    else:
        notes = heapq.nsmallest(
            _SUMMARY_PRACTICE, memory.items[Category.IMPLEMENTATION_NOTES], key=_strength
        )
        if notes:
            notes_said = _clauses([_short(i) for i in notes])
            sentences.append(_ended(f"Implementation notes: {notes_said}"))
    return " ".join(sentences)


# ---------------------------------------------------------------------------------------------
# Evolution
# ---------------------------------------------------------------------------------------------


_EMPTY: frozenset[str] = frozenset()


@dataclass
class _Lookups:
    """Lookups over a branch's section items, kept from one evolve to the next.

    - `by_subject`: stance subject word -> ids of items whose stances use it (contradiction
      prefilter), kept exactly in step with the sections;
    - `by_token`: (category, content token) -> ids of items whose `item_tokens` hold it
      (duplicate prefilter; only ever grows, so it may name items that left);

    Sets are frozen and replaced on change, so a copy of the dicts is a private copy.
    """

    by_subject: dict[str, frozenset[str]] = field(default_factory=dict)
    by_token: dict[tuple[Category, str], frozenset[str]] = field(default_factory=dict)

    def copy(self) -> _Lookups:
        return _Lookups(dict(self.by_subject), dict(self.by_token))


# Lookups of recently evolved branches, by the identity of their section items (in order, per
# section). A long-lived process evolves the memory it wrote last (the store hands back the
# same item objects), so building the lookups costs the new items, not the whole branch. The
# entry holds the items themselves: their ids cannot be reused by other objects meanwhile.
_LOOKUPS: dict[tuple[int, ...], tuple[tuple[MemoryItem, ...], _Lookups]] = {}
_LOOKUPS_KEPT = 8
# `item.text.lower()` per item object (the `replaces:`/`disputes:` search).
_LOWERED: PerItem[str] = PerItem(lambda item: item.text.lower(), 65_536)


def _identity(
    sections: dict[Category, list[MemoryItem]],
) -> tuple[tuple[int, ...], tuple[MemoryItem, ...]]:
    items = tuple(item for c in Category for item in sections[c])
    sizes = tuple(len(sections[c]) for c in Category)
    return (*sizes, *map(id, items)), items


def _keep_lookups(
    sections: dict[Category, list[MemoryItem]], lookups: _Lookups, *, fresh: bool = True
) -> None:
    """Remember `lookups` for these sections. Lookups updated along an evolve (`fresh`
    False) are kept only when every id is unique: then `by_subject` is exactly what building
    it anew would give (removing one of two items under an id takes the id off its words)."""
    key, items = _identity(sections)
    if not fresh and len({item.id for item in items}) != len(items):
        return
    _LOOKUPS.pop(key, None)
    while len(_LOOKUPS) >= _LOOKUPS_KEPT:
        _LOOKUPS.pop(next(iter(_LOOKUPS)))
    _LOOKUPS[key] = (items, lookups)


def _built(sections: dict[Category, list[MemoryItem]]) -> _Lookups:
    """The lookups of a whole branch at once: what `_Work._index` of every item in file
    order gives, gathered in plain sets and frozen once (adding to a frozen set one id at a
    time copies it, which made a cold branch of 2,000 items quadratic in a shared word)."""
    by_subject: dict[str, set[str]] = {}
    by_token: dict[tuple[Category, str], set[str]] = {}
    for items in sections.values():
        for item in items:
            for s in item_stances(item):
                for word in stance_keys(s):
                    by_subject.setdefault(word, set()).add(item.id)
            for token in item_tokens(item):
                by_token.setdefault((item.category, token), set()).add(item.id)
    return _Lookups(
        {word: frozenset(ids) for word, ids in by_subject.items()},
        {key: frozenset(ids) for key, ids in by_token.items()},
    )


@dataclass
class _Work:
    """The branch being evolved: sections plus lookups kept in step with them."""

    sections: dict[Category, list[MemoryItem]]
    contradictions: list[Contradiction]
    threshold: float
    look: _Lookups = field(default_factory=_Lookups)
    ids: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        key, _items = _identity(self.sections)
        known = _LOOKUPS.pop(key, None)
        if known is not None:
            _LOOKUPS[key] = known  # the most recently used stays longest
            self.look = known[1].copy()
        else:
            self.look = _built(self.sections)
            _keep_lookups(self.sections, self.look.copy())
        self.ids = {item.id for items in self.sections.values() for item in items}
        for entry in self.contradictions:
            self.ids.update(i.id for i in entry.items)

    @property
    def by_subject(self) -> dict[str, frozenset[str]]:
        return self.look.by_subject

    def _index(self, item: MemoryItem) -> None:
        self.ids.add(item.id)
        by_subject, by_token = self.look.by_subject, self.look.by_token
        for s in item_stances(item):
            for word in stance_keys(s):
                held = by_subject.get(word, _EMPTY)
                if item.id not in held:
                    by_subject[word] = held | {item.id}
        for token in item_tokens(item):
            held = by_token.get((item.category, token), _EMPTY)
            if item.id not in held:
                by_token[(item.category, token)] = held | {item.id}

    def _unindex(self, item: MemoryItem) -> None:
        by_subject = self.look.by_subject
        for s in item_stances(item):
            for word in stance_keys(s):
                held = by_subject.get(word, _EMPTY)
                if item.id in held:
                    by_subject[word] = held - {item.id}

    @staticmethod
    def _lowered(item: MemoryItem) -> str:
        return _LOWERED(item)

    def mentions(self, name: str) -> bool:
        """Whether an item of the branch names `name` as a word."""
        low = name.lower()
        word = named_word(low)
        return any(
            low in text and word.search(text) is not None
            for items in self.sections.values()
            for text in map(self._lowered, items)
        )

    def locate(self, item_id: str) -> tuple[Category, int] | None:
        for category, items in self.sections.items():
            for index, item in enumerate(items):
                if item.id == item_id:
                    return category, index
        return None

    def contradicted_by(self, new: MemoryItem) -> list[MemoryItem]:
        """Section items that `new` contradicts, in file order."""
        candidates: set[str] = set()
        for s in item_stances(new):
            for word in stance_keys(s):
                candidates |= self.by_subject.get(word, set())
        if not candidates:
            return []
        return [
            item
            for c in Category
            for item in self.sections[c]
            if item.id in candidates and contradicts(new, item)
        ]

    def replaced_by(self, new: MemoryItem) -> list[MemoryItem]:
        """Rules `new` explicitly replaces (its `replaces:` tags), in file order.

        `replaces:<name>` matches decisions, conventions, preferences and implementation
        notes that mention the name as a word; `replaces:any` ("actually, …") rules sharing
        at least two subject words with it (or one word of five letters or more with an item
        of the same category from another thread), whichever of the three rule sections
        they are in (the category of a rule is a judgement; "CI is jenkins" filed as a
        convention is still replaced by "CI is buildkite from now on" filed as a decision).
        Bug patterns record what happened and are never replaced; a note goes only when it
        names what a statement says was replaced, or when it was read from a manifest
        (`manifest:<path>`) that a later read of the same file replaces.
        """
        files = [t for t in new.tags if t.startswith(MANIFEST_TAG)]
        if files:
            # A newer read of the same manifest: what it says now replaces what it said.
            return [
                item
                for item in self.sections[new.category]
                if item.id != new.id and any(t in item.tags for t in files)
            ]
        names = [t[len(REPLACES) :] for t in new.tags if t.startswith(REPLACES)]
        if not names:
            return []
        # (A change whose old choice has no name of its own retires nothing by name.)
        named = [n for n in names if n != UNNAMED]
        found = self._replaced(new, named) if named else []
        if not found and _FROM_NOW_ON.search(new.content) and "any" not in names:
            # "From now on packages/ui is styled with CSS Modules … instead of the JS theme
            # object": what it names was never a rule here, but the change of course still
            # replaces what an earlier thread set on the subject.
            found = self._replaced(new, ["earlier"], strict=True)
        return found

    def _replaced(
        self, new: MemoryItem, names: list[str], *, strict: bool = False
    ) -> list[MemoryItem]:
        """Rules the names match; `strict`: three shared subject words, never one long one."""
        new_tokens = item_tokens(new)
        found: list[MemoryItem] = []
        # A note on how the built system works ("Set up: ESLint flat config …, Prettier …")
        # goes when a later statement names what it describes as replaced ("Biome …,
        # replacing ESLint and Prettier"); "actually, …" without a name leaves notes alone.
        named = [n for n in names if n not in ("any", "earlier")]
        categories = (*_REPLACEABLE, Category.IMPLEMENTATION_NOTES) if named else _REPLACEABLE
        # "any" and "earlier" need a content word in common: only items sharing one (the
        # token lookup) are compared, not every rule of the branch.
        sharing: set[str] = set()
        if len(named) < len(names):
            by_token = self.look.by_token
            for token in new_tokens:
                for category in Category:
                    sharing.update(by_token.get((category, token), _EMPTY))
        for category in categories:
            checks = named if category is Category.IMPLEMENTATION_NOTES else names
            loose = all(n in ("any", "earlier") for n in checks)
            for item in self.sections[category]:
                if item.id == new.id or (loose and item.id not in sharing):
                    continue
                text = ""
                for name in checks:
                    if name == "earlier" and set(item.sources) & set(new.sources):
                        # "From now on …" restates what its own thread said on the subject.
                        hit = False
                    elif name in ("any", "earlier"):
                        if item.id not in sharing:
                            continue  # no word in common: neither test below can pass
                        # (the verbs every rule is said with, "use", "goes", "need", are
                        # no subject: "actually, logging in the CLI goes to stderr" shares
                        # only "logging" with "Logging goes through pino")
                        shared = (item_tokens(item) & new_tokens) - _RULE_VERBS
                        # "The uploads are going to R2 now." replaces "For the user uploads …
                        # we decide to take Backblaze B2." of an earlier thread: one shared
                        # content word is enough between two choices of one kind.
                        hit = len(shared) >= (3 if strict else 2) or (
                            not strict
                            and item.category is new.category
                            and not set(item.sources) & set(new.sources)
                            and any(len(t) >= _CONTENT_WORD for t in shared)
                        )
                    else:
                        # The word search only where the name occurs at all.
                        text = text or self._lowered(item)
                        # (or as the head of an identifier: ROLLBAR_ACCESS_TOKEN is Rollbar's)
                        hit = name in text and (
                            named_word(name).search(text) is not None
                            or re.search(rf"(?<![\w-]){re.escape(name)}_\w", text) is not None
                        )
                    if hit:
                        found.append(item)
                        break
        if len(found) > 1 and not named and "any" in names:
            # "No thank you, that target does not even exist in our Makefile anymore" names
            # nothing: it takes back the rule closest to it (ties all go), not every rule
            # that shares one long word with it.
            overlap = [len((item_tokens(i) & new_tokens) - _RULE_VERBS) for i in found]
            found = [i for i, n in zip(found, overlap, strict=True) if n == max(overlap)]
        if found and not named:
            # "actually, the api integration tests run against a real postgres in docker,
            # not sqlite": the correction names what it sets aside; rules that share its
            # subject ("api", "tests") but never said that stay.
            aside = _SET_ASIDE.search(new.content)
            if aside is not None and aside.group(1).lower() not in _NOT_A_VALUE:
                word = named_word(aside.group(1).lower())
                found = [i for i in found if word.search(self._lowered(i))]
        return found

    def disputed_by(self, new: MemoryItem) -> list[MemoryItem]:
        """Rules `new` was said to disagree with (`disputes:` tags name them)."""
        names = [t[len(DISPUTES) :] for t in new.tags if t.startswith(DISPUTES)]
        if not names:
            return []
        found: list[MemoryItem] = []
        for category in _REPLACEABLE:
            for item in self.sections[category]:
                text = self._lowered(item)
                # A word starting with a name holds the name: only those texts are split.
                if not any(n in text for n in names):
                    continue
                words = re.findall(r"[\w.+#-]+", text)
                # "tab" names "tabs", "minute" names "minutes": a word start is enough.
                if item.id != new.id and any(w.startswith(n) for n in names for w in words):
                    found.append(item)
        return found

    def duplicate_of(self, new: MemoryItem) -> tuple[int, MemoryItem] | None:
        """The most similar item of the same section at or above the threshold."""
        best: tuple[float, int, MemoryItem] | None = None
        new_tokens = item_tokens(new)
        # Above the fuzzy part's weight a match needs a shared token: only items sharing one
        # are scored (the token lookup names every such item; the scan keeps file order).
        shared: set[str] | None = None
        if self.threshold > 1.0 - _TOKEN_WEIGHT:
            by_token = self.look.by_token
            shared = {new.id}
            for token in new_tokens:
                shared.update(by_token.get((new.category, token), _EMPTY))
        for index, old in enumerate(self.sections[new.category]):
            # (An item filed under another category than its section's is always scored.)
            if shared is not None and old.id not in shared and old.category is new.category:
                continue
            if old.id != new.id and not _could_match(new_tokens, item_tokens(old), self.threshold):
                continue
            score = 1.0 if old.id == new.id else item_similarity(new, old, floor=self.threshold)
            if score >= self.threshold and (best is None or score > best[0]):
                best = (score, index, old)
        return None if best is None else (best[1], best[2])

    def unique_id(self, item: MemoryItem) -> MemoryItem:
        """`item`, renamed when its id is already taken in this file."""
        if item.id not in self.ids:
            return item
        n = 1
        while True:
            digest = hashlib.sha1(f"{item.id}|{n}".encode()).hexdigest()[:8]
            candidate = f"{item.category.id_prefix}-{digest}"
            if candidate not in self.ids:
                return item.model_copy(update={"id": candidate})
            n += 1

    def replace(self, category: Category, index: int, item: MemoryItem) -> None:
        self._unindex(self.sections[category][index])
        self.sections[category][index] = item
        self._index(item)

    def remove(self, item: MemoryItem) -> tuple[Category, int]:
        where = self.locate(item.id)
        if where is None:  # pragma: no cover - callers only remove items they just found
            raise InvalidInput(f"Item {item.id} is not in the branch memory")
        category, index = where
        del self.sections[category][index]
        self._unindex(item)
        return where

    def insert(self, item: MemoryItem, index: int | None = None) -> None:
        items = self.sections[item.category]
        items.insert(len(items) if index is None else index, item)
        self._index(item)

    def add_contradiction(self, entry: Contradiction) -> None:
        taken = {c.id for c in self.contradictions}
        if entry.id in taken:
            n = 2
            while f"{entry.id}-{n}" in taken:
                n += 1
            entry = entry.model_copy(update={"id": f"{entry.id}-{n}"})
        self.contradictions.append(entry)
        self.ids.update(i.id for i in entry.items)

    def matching_open(self, new: MemoryItem, refs: list[str]) -> int | None:
        """Index of an open contradiction already holding this statement against `refs`."""
        new_tokens = item_tokens(new)
        for index, entry in enumerate(self.contradictions):
            if entry.status != "open" or not set(refs) <= set(entry.refs):
                continue
            for held in entry.items:
                if held.category is not new.category:
                    continue
                if held.id == new.id or (
                    _could_match(new_tokens, item_tokens(held), self.threshold)
                    and item_similarity(new, held, floor=self.threshold) >= self.threshold
                ):
                    return index
        return None


@lru_cache(maxsize=1024)
def named_word(name: str) -> re.Pattern[str]:
    """`name` as a whole word (not inside a longer word or hyphenated name)."""
    return re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")


# The tag of a record made for a choice only a change named (`_named_replaced`).
RETIRED = "retired"
# Words a `replaces:` tag can hold that name nothing ("scratch what I said").
_NO_NAME = frozenset(
    ("any", "earlier", UNNAMED, "what", "that", "this", "it", "them", "those", "these", "one")
)


_THE = r"(?:(?:the|our|all|any)\s+)?"
_PLACE_REACH = 80
# What the new statement puts in the old one's place, after dropping it ("scratch toml, make
# it yaml", "no more pickle, use msgpack", "drop poetry, move it to uv").
_IN_ITS_PLACE = re.compile(
    r"\b(?:use|using|make it|(?:move|port) (?:it |them )?to|moved to|moving to|switch(?:ing)? to|"
    r"go with|it is|it'?s|now|from (?:here|now) on|instead)\b"
)


def _retires(name: str, low: str) -> bool:
    """Whether a statement says in so many words that `name` gives way to something else:
    "switch from X to Y", "move off X onto Y", "replace X with Y", "Y replaces X", or X
    scratched, dropped or removed with what takes its place said after it."""
    n = re.escape(name)
    edge = r"(?![\w-])"
    if re.search(
        rf"\b(?:switch|mov|migrat|port|chang)\w*\s+(?:\w+\s+){{0,3}}?(?:from|off)\s+{_THE}"
        rf"[`'\"]?{n}[`'\"]?{edge}[^.;]{{0,30}}?\b(?:to|onto)\b"
        rf"|(?<![\w-])replac\w*\s+{_THE}[`'\"]?{n}[`'\"]?{edge}"
        rf"|(?<![\w-]){n}[`'\"]?\s*(?:→|->)",
        low,
    ):
        return True
    dropped = re.search(
        rf"(?<!\bno\s)\b(?:scratch|drop(?:ped)?|ditch(?:ed)?|no more|remov(?:e|ed)|ripped out|"
        rf"got rid of|get rid of|(?:done|finished) with|stop(?:ped)? using|mov(?:e|ed|ing) off)\s+"
        rf"{_THE}[`'\"]?{n}[`'\"]?{edge}"
        # "argparse was the wrong call", "preact gets ripped out", "pgbackrest is out"
        rf"|(?<![\w-]){n}[`'\"]?\s+(?:was|is)\s+(?:the\s+)?wrong\s+(?:call|choice|pick)\b"
        rf"|(?<![\w-]){n}[`'\"]?\s+(?:gets|is|goes)\s+(?:ripped\s+)?out\b",
        low,
    )
    return (
        dropped is not None
        and _IN_ITS_PLACE.search(low, dropped.end(), dropped.end() + _PLACE_REACH) is not None
    )


def _named_replaced(new: MemoryItem, work: _Work) -> list[MemoryItem]:
    """The choices `new` says it replaces by name that no item of the branch holds: each as
    a record of the old choice ("pickle"), for the superseded list."""
    names = [
        t[len(REPLACES) :]
        for t in new.tags
        if t.startswith(REPLACES) and len(t) - len(REPLACES) >= 2
    ]
    low = new.content.lower()
    title = new.title.lower()
    names = [
        n
        for n in names
        if n.lower() not in _NO_NAME
        and (
            _retires(n.lower(), low)
            # the title the change was given says so ("Typer instead of argparse")
            or title.endswith(f" instead of {n.lower()}")
            # a package the agent removed ("@auth0/nextjs-auth0" → "auth0"), named outside
            # the statement: an identifier, not a word of it
            or (re.search(r"[\d_./@]", n) and not named_word(n.lower()).search(low))
        )
    ]
    out: list[MemoryItem] = []
    for name in names:
        if work.mentions(name):
            continue  # an item still names it: not something only this change knows of
        # (as the change wrote it: the tag holds it in lower case)
        name = as_written(name, f"{new.title}\n{new.content}\n{new.rationale}")
        content = f'{name}: the earlier choice, replaced by "{new.title}".'
        out.append(
            MemoryItem(
                id=make_item_id(new.category, name, content),
                category=new.category,
                title=name,
                content=content,
                confidence=new.confidence,
                sources=list(new.sources),
                extracted=new.extracted,
                tags=[RETIRED],
            )
        )
    return out


def _placed(work: _Work, new: MemoryItem, slot: int | None) -> tuple[MemoryItem, bool]:
    """`new` put in its section (at `slot`), or, when it repeats an item still in place,
    that item reinforced instead of a second bullet for the same fact. Returns the item
    that stands and whether it was a reinforced twin."""
    twin = work.duplicate_of(new)
    if twin is not None:
        index, kept = twin
        winner = reinforce(kept, new)
        work.replace(new.category, index, winner)
        return winner, True
    new = work.unique_id(new)
    work.insert(new, slot)
    return new, False


# A record quotes at most this many of the statements it concerns; the rest are named by
# count (a superseded record holds them whole below it, an open one lists their ids).
QUOTED = 3


def _quoted(olds: list[MemoryItem]) -> str:
    said = "; ".join(describe_statement(o) for o in olds[:QUOTED])
    rest = len(olds) - QUOTED
    return f"{said}; and {rest} more" if rest > 0 else said


def _superseded_entry(new: MemoryItem, olds: list[MemoryItem], moment: datetime) -> Contradiction:
    replaced = _quoted(olds)
    more = f" and {len(olds) - 1} more" if len(olds) > 1 else ""
    if all(RETIRED in o.tags for o in olds):
        # (a choice only the change named: no earlier statement to quote)
        names = ", ".join(o.title for o in olds)
        description = (
            f"The newer statement {describe_statement(new)} retired {names}, which no earlier "
            f"item of this branch recorded."
        )
    else:
        description = (
            f"The newer statement {describe_statement(new)} replaced {replaced}. "
            f"The replaced item is kept here whole."
        )
    return Contradiction(
        title=f"Superseded: {olds[0].title}{more}",
        description=description,
        status="superseded",
        detected=moment.date(),
        refs=[new.id],
        items=olds,
    )


def _open_entry(new: MemoryItem, olds: list[MemoryItem], moment: datetime) -> Contradiction:
    reasons = []
    for old in olds:
        if old.pinned:
            reasons.append(f"{old.id} is pinned (written by you)")
        elif new.pinned:
            reasons.append(f"{old.id} and the new statement are both pinned")
        else:
            reasons.append(
                f"{old.id} has higher confidence ({old.confidence:.2f} > {new.confidence:.2f})"
            )
    existing = _quoted(olds)
    return _held_open(
        new,
        [o.id for o in olds],
        f"The new statement {describe_statement(new)} contradicts {existing}. "
        f"The existing item was kept because {', '.join(reasons)}.",
        moment,
    )


def _undecided_entry(new: MemoryItem, refs: list[str], moment: datetime) -> Contradiction:
    about = f" It concerns {', '.join(refs)}." if refs else ""
    return _held_open(
        new,
        refs,
        "Two sources disagree and the conversation left it undecided: "
        f"{describe_statement(new)}.{about}",
        moment,
    )


def _held_open(new: MemoryItem, refs: list[str], why: str, moment: datetime) -> Contradiction:
    """An open entry holding `new`, next to the section items `refs` names."""
    return Contradiction(
        title=f"Open: {new.title}",
        description=f"{why} Decide which one holds.",
        status="open",
        detected=moment.date(),
        refs=refs,
        items=[new],
    )


def _wins(new: MemoryItem, old: MemoryItem) -> bool:
    # Pinned items are never replaced; a pinned (user-written) new item beats any unpinned one.
    if old.pinned:
        return False
    return new.pinned or new.confidence >= old.confidence


def _known_sources(memory: BranchMemory | None) -> set[str]:
    if memory is None:
        return set()
    known = {s for item in memory.all_items() for s in item.sources}
    known |= {s for entry in memory.contradictions for i in entry.items for s in i.sources}
    return known


def _turns_down_too(old: MemoryItem, new: MemoryItem) -> bool:
    """Whether `old` itself turns down every name `new` retires ("no redux in this app" and
    "we dropped redux last year" agree: the later one does not replace the earlier). A rule
    on how to use the name ("never import mixpanel directly") is not turning it down."""
    names = [t[len(REPLACES) :] for t in new.tags if t.startswith(REPLACES)]
    names = [n for n in names if n not in ("any", "earlier", UNNAMED)]
    if not names:
        return False
    text = old.content.lower()
    return all(
        re.search(
            r"\b(?:no|not|never|without|instead of|rather than|don'?t use|do not use|"
            r"removed|dropped|ripped out|got rid of)\s+(?:the\s+|any\s+|more\s+)?"
            rf"{re.escape(n)}(?![\w-])",
            text,
        )
        is not None
        for n in names
    )


def evolve(
    current: BranchMemory | None,
    items: list[MemoryItem],
    *,
    branch_id: str,
    config: Config,
    now: datetime | None = None,
) -> EvolutionResult:
    """Integrate `items` into `current` (or a new memory), deterministically.

    Each new item, in order, is checked against the branch as it stands (earlier new items
    included, so a batch never adds the same fact twice):

    1. If it contradicts section items: when it wins against all of them (not pinned, its
       confidence at least theirs, or it is itself pinned) it takes the first one's place and
       they move whole into a "superseded" Contradiction referring to it; otherwise it is not
       committed but held in an "open" Contradiction referring to them (a repeat of an already
       open statement only adds its sources).
    2. Else if a same-category item is at least `config.duplicate_threshold` similar, that item
       is reinforced (`reinforce`); pinned items stay as they are.
    3. Else it is added at the end of its section (renamed if its id is taken).

    Every item of `current` survives: in its section, as the reinforced item with the same
    id, or inside a Contradiction. The header gets `last_updated = last_extraction = now`, and
    `thread_count` grows by one when any new item cites a thread source (anything but `cli`
    and `user`) not yet cited in the file: one evolve is one conversation.
    """
    if not branch_id.strip():
        raise InvalidInput("A branch id is required to evolve a branch memory")
    if current is not None and current.branch_id != branch_id:
        raise InvalidInput(
            f"Branch memory of {current.branch_id!r} cannot be evolved as {branch_id!r}"
        )
    moment = normalize_timestamp(now) if now is not None else utc_now()
    # Items are never mutated in place (every change is a `model_copy(update=...)`), so the
    # result may share unchanged items with `current` instead of paying for a deep copy.
    base = (
        current if current is not None else BranchMemory(branch_id=branch_id, last_updated=moment)
    )
    work = _Work(
        sections={c: list(base.items[c]) for c in Category},
        contradictions=list(base.contradictions),
        threshold=config.duplicate_threshold,
    )
    stats = {"added": 0, "reinforced": 0, "superseded": 0, "conflicts": 0}
    notes: list[str] = []

    for incoming in items:
        new = incoming
        if UNDECIDED in new.tags:
            # "No idea who's right, I'll ask Sam": the disagreement waits for a person, next
            # to the rules it names; it is never a rule itself.
            refs = [o.id for o in work.disputed_by(new)]
            if work.matching_open(new, refs) is not None:
                continue
            new = work.unique_id(new)
            work.add_contradiction(_undecided_entry(new, refs, moment))
            stats["conflicts"] += 1
            notes.append(f"{new.id}: a disagreement left undecided")
            continue
        replaced = [
            o for o in work.replaced_by(new) if not o.pinned and not _turns_down_too(o, new)
        ]
        disputed = [] if replaced else work.disputed_by(new)
        if disputed:
            # Two sources disagree and nobody decided: both stay visible, for a person.
            new = work.unique_id(new)
            work.add_contradiction(_open_entry(new, disputed, moment))
            stats["conflicts"] += 1
            notes.append(f"{new.id} disagrees with {', '.join(o.id for o in disputed)}: left open")
            continue
        opposed = work.contradicted_by(new)
        if not replaced and not opposed:
            gone = _named_replaced(new, work)
            if gone:
                # "No more pickle, use msgpack": the old choice was never an item here, but
                # the change still says what it retires; an agent reading the branch should
                # not bring pickle back. It is recorded as superseded, as the new item's.
                winner, twin = _placed(work, new, None)
                stats["reinforced" if twin else "added"] += 1
                work.add_contradiction(_superseded_entry(winner, gone, moment))
                stats["superseded"] += len(gone)
                notes.append(f"{winner.id} retired {', '.join(o.title for o in gone)}")
                continue
        if replaced:
            # The user said this replaces them ("we dropped X", "switch from X to Y"): it
            # wins whatever the confidences, except over what a person pinned.
            opposed = [*replaced, *(o for o in opposed if o not in replaced)]
            new = new.model_copy(
                update={"confidence": max(new.confidence, *(o.confidence for o in replaced))}
            )
        if opposed:
            if all(_wins(new, old) for old in opposed):
                new = work.unique_id(new)
                slot: int | None = None
                for old in opposed:
                    category, index = work.remove(old)
                    if slot is None and category is new.category:
                        slot = index
                winner, twin = _placed(work, new, slot)
                if twin:
                    stats["reinforced"] += 1
                work.add_contradiction(_superseded_entry(winner, opposed, moment))
                stats["superseded"] += len(opposed)
                notes.append(f"{winner.id} superseded {', '.join(o.id for o in opposed)}")
                continue
            refs = [o.id for o in opposed]
            held_at = work.matching_open(new, refs)
            if held_at is not None:
                entry = work.contradictions[held_at]
                held = [reinforce(i, new) if i.category is new.category else i for i in entry.items]
                work.contradictions[held_at] = entry.model_copy(update={"items": held})
                notes.append(f"repeat of open contradiction {entry.id}")
                continue
            new = work.unique_id(new)
            work.add_contradiction(_open_entry(new, opposed, moment))
            stats["conflicts"] += 1
            notes.append(f"{new.id} contradicts {', '.join(refs)}: left open")
            continue

        found = work.duplicate_of(new)
        if found is not None:
            index, old = found
            work.replace(new.category, index, reinforce(old, new))
            stats["reinforced"] += 1
            notes.append(
                f"{new.id} reinforced {old.id}" + (" (pinned, unchanged)" if old.pinned else "")
            )
            continue

        new = work.unique_id(new)
        work.insert(new)
        stats["added"] += 1

    known = _known_sources(current)
    cited = {s for item in items for s in item.sources if s not in NON_THREAD_SOURCES}
    thread_count = base.thread_count + (1 if cited - known else 0)

    _keep_lookups(work.sections, work.look, fresh=False)
    memory = base.model_copy(
        update={
            "items": work.sections,
            "contradictions": work.contradictions,
            "extra_sections": list(base.extra_sections),
            "last_updated": moment,
            "last_extraction": moment,
            "thread_count": thread_count,
        }
    )
    memory = memory.model_copy(update={"summary": summarize(memory)})
    return EvolutionResult(memory=memory, path=PATH, notes=notes, stats=stats)


def replaces_in_force(
    memory: BranchMemory | None,
    held: Sequence[MemoryItem],
    *,
    config: Config,
    committing: Sequence[MemoryItem] = (),
) -> list[MemoryItem]:
    """The held candidates that name a choice in force in `memory` and say what replaces it.

    "Switch the message broker from RabbitMQ to NATS" alone may be a task for one session as
    much as a change of a standing choice, so the engine holds it for review. When the branch
    holds a rule naming RabbitMQ, it is the change: the caller commits it, and the evolution
    supersedes the old rule with both dates. Only a `replaces:` tag with a name counts
    ("actually, …" without one never does); the test is the evolution's own (`replaced_by`).
    `committing`: the items the same conversation commits, which are in force by the time
    the change is read ("For the broker we use RabbitMQ." … "let's move the broker to NATS,
    RabbitMQ keeps dropping messages").
    """
    changes = [
        item
        for item in held
        if any(
            t.startswith(REPLACES) and t[len(REPLACES) :] not in ("any", "earlier", UNNAMED)
            for t in item.tags
        )
    ]
    if not changes or (memory is None and not committing):
        return []
    sections = {c: list(memory.items[c]) if memory is not None else [] for c in Category}
    for item in committing:
        sections[item.category].append(item)
    work = _Work(sections=sections, contradictions=[], threshold=config.duplicate_threshold)
    return [
        item
        for item in changes
        if any(
            not o.pinned and not _turns_down_too(o, item) and _same_choice(o, item)
            for o in work.replaced_by(item)
        )
    ]


# A name written like one: a capital inside or first, a digit or a symbol ("RabbitMQ", "S3",
# "date-fns"); "tabs" or "redis" written in lower case may be an everyday word.
_WRITTEN_AS_NAME = re.compile(r"[A-Z\d_.@/+#-]")


def _same_choice(old: MemoryItem, change: MemoryItem) -> bool:
    """Whether a held change is about the choice `old` states, not only its word.

    "Switch the login page from tabs to a stepper" names "tabs" as "Use tabs for indentation
    in Go files" does, but is not about that rule. The old choice's name written as a name,
    or a word of the subject shared besides the names ("message broker", "logging"), tells.
    """
    names = {t[len(REPLACES) :] for t in change.tags if t.startswith(REPLACES)}
    for name in names:
        said = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", change.content, re.IGNORECASE)
        if said is not None and _WRITTEN_AS_NAME.search(said.group(0)):
            return True
    own = frozenset().union(*(tokens(n) for n in names))
    return bool((item_tokens(old) & item_tokens(change)) - _RULE_VERBS - own)


def settle_review(
    memory: BranchMemory,
    items: list[MemoryItem],
    pending: Sequence[MemoryItem],
    *,
    config: Config,
    now: datetime | None = None,
) -> tuple[BranchMemory, list[str]]:
    """Review candidates that newly committed `items` replace, recorded as superseded.

    A candidate waiting in the review queue ("Logs go out over RTT", held because the judge
    was unsure of it) that a later thread replaces ("let's get RTT out of there, logs go
    out on USART2") is stale: offering it would ask a person to approve a choice already
    reversed. It goes into a "superseded" Contradiction referring to the item that replaced
    it, so the history keeps both, with the date of the change. The tests are those for the
    file's own items (`replaced_by`, `contradicted_by`). Returns the memory and the ids of
    the settled candidates, which the caller takes out of the queue.
    """
    if not pending or not items:
        return memory, []
    live = {i.id for i in memory.all_items()}
    taken = live | {i.id for c in memory.contradictions for i in c.items}
    waiting = [p for p in pending if p.id not in taken]
    if not waiting:
        return memory, []
    work = _Work(
        sections={c: [p for p in waiting if p.category is c] for c in Category},
        contradictions=[],
        threshold=config.duplicate_threshold,
    )
    moment = normalize_timestamp(now) if now is not None else utc_now()
    settled: list[str] = []
    entries: list[Contradiction] = []
    for new in items:
        # (An item that became a duplicate or an open contradiction replaced nothing.)
        if new.id not in live or UNDECIDED in new.tags:
            continue
        stale = {
            o.id: o
            for o in (*work.replaced_by(new), *work.contradicted_by(new))
            if o.id not in settled and not _turns_down_too(o, new)
        }
        if stale:
            entries.append(_superseded_entry(new, list(stale.values()), moment))
            settled += stale
    if not entries:
        return memory, []
    # The record of a retired name (`_named_replaced`) gives way to the candidate that held
    # it: the history keeps the real statement, once.
    settling = {ref for entry in entries for ref in entry.refs}
    kept = [
        c
        for c in memory.contradictions
        if not (
            c.status == "superseded"
            and set(c.refs) <= settling
            and c.items
            and all(RETIRED in i.tags for i in c.items)
        )
    ]
    update = {"contradictions": [*kept, *entries]}
    return memory.model_copy(update=update), settled


# ---------------------------------------------------------------------------------------------
# Consolidation
# ---------------------------------------------------------------------------------------------


def _merge_section(
    items: list[MemoryItem], threshold: float
) -> tuple[list[MemoryItem], list[tuple[str, str]]]:
    """Near-duplicates of one section merged; returns survivors and (merged-away, kept) ids."""
    kept: list[MemoryItem | None] = []
    merges: list[tuple[str, str]] = []
    for item in items:
        tok = item_tokens(item)
        best: tuple[float, int] | None = None
        for index, other in enumerate(kept):
            if other is None or (other.pinned and item.pinned):
                continue
            if not _could_match(tok, item_tokens(other), threshold):
                continue
            # Opposite statements can look alike ("use X" / "never use X"): never merge them.
            if contradicts(item, other):
                continue
            score = item_similarity(item, other, floor=threshold)
            if score >= threshold and (best is None or score > best[0]):
                best = (score, index)
        if best is None:
            kept.append(item)
            continue
        index = best[1]
        other = kept[index]
        assert other is not None
        if item.pinned:
            # The pinned item survives as it is, in its own place; the earlier one goes.
            kept[index] = None
            kept.append(item)
            merges.append((other.id, item.id))
        else:
            kept[index] = reinforce(other, item)
            merges.append((item.id, other.id))
    return [i for i in kept if i is not None], merges


def _prune_section(items: list[MemoryItem], cap: int) -> tuple[list[MemoryItem], list[str]]:
    """The section cut to `cap` items, weakest unpinned first (lowest confidence, oldest)."""
    excess = len(items) - cap
    if excess <= 0:
        return items, []
    order = sorted(
        (i for i in range(len(items)) if not items[i].pinned),
        key=lambda i: (items[i].confidence, items[i].extracted, -i),
    )
    dropped = set(order[:excess])
    return (
        [item for i, item in enumerate(items) if i not in dropped],
        [items[i].id for i in sorted(dropped)],
    )


def consolidate(
    memory: BranchMemory, *, config: Config, now: datetime | None = None
) -> EvolutionResult:
    """Weekly maintenance of one branch: merge near-duplicates, cap sections, new summary.

    Inside each section, an item at least `config.duplicate_threshold` similar to an earlier
    one (and not contradicting it) is merged into it with `reinforce`; the earlier item keeps
    its id and place, except that a pinned item always survives unchanged (two pinned items
    are never merged). Then each section is cut to `config.section_cap`, dropping unpinned
    items with the lowest confidence, oldest first. `stats` holds "merged" and "pruned";
    `notes` lists the ids of every item that left the sections, pruned ones first, then the
    merged-away ones: exactly the ids a caller passes to `check_evolution(...,
    allowed_removals=notes)` after saving the old file as a version. Contradictions and other
    sections are kept.
    """
    moment = normalize_timestamp(now) if now is not None else utc_now()
    sections: dict[Category, list[MemoryItem]] = {}
    merged_ids: list[str] = []
    pruned_ids: list[str] = []
    for category in Category:
        items, merges = _merge_section(list(memory.items[category]), config.duplicate_threshold)
        merged_ids.extend(gone for gone, _kept in merges)
        items, pruned = _prune_section(items, config.section_cap)
        pruned_ids.extend(pruned)
        sections[category] = items
    result = memory.model_copy(
        update={
            "items": sections,
            "contradictions": list(memory.contradictions),
            "extra_sections": list(memory.extra_sections),
            "last_updated": moment,
        }
    )
    result = result.model_copy(update={"summary": summarize(result)})
    return EvolutionResult(
        memory=result,
        path=PATH,
        notes=[*pruned_ids, *merged_ids],
        stats={"merged": len(merged_ids), "pruned": len(pruned_ids)},
    )
