"""The evolution guard: what any engine's rewrite of a branch memory must satisfy.

An engine (Claude or the offline merger) returns a new `BranchMemory`; before the writer saves
it, `check_evolution` compares it with the file it replaces and the items it was asked to add.
The rules are the promise the app makes about a person's memory: the result renders to a file
that validates; every earlier item is still there (in its section under the same id, possibly
reinforced, or moved whole into "Contradictions and Conflicts", or merged into a similar item
of its section that now carries its sources); earlier contradictions are kept; items written
by the user are unchanged; no source appears that neither the old file nor the new items
carry; and the header still names the same branch. An empty list means the
rewrite may be written; otherwise each string says what is wrong, in words an LLM retry prompt
and a person can both act on.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from app.core.format import render, validate
from app.core.models import USER_SOURCE, BranchMemory, MemoryItem
from app.core.similarity import item_similarity

# Problems listed per kind before the rest are summarised, to keep retry prompts short.
_MAX_LISTED = 8
# How alike a vanished item and a survivor must be for the survivor to count as the merge of
# both (consolidation merges near-duplicates at `Config.duplicate_threshold`, 0.8 by default;
# this lower bar only confirms that the survivor is the same statement, not a stranger).
MERGE_SIMILARITY = 0.5


def _earlier_items(old: BranchMemory) -> list[MemoryItem]:
    items = list(old.all_items())
    for conflict in old.contradictions:
        items.extend(conflict.items)
    return items


def _merged_into(item: MemoryItem, survivors: list[MemoryItem]) -> MemoryItem | None:
    """The survivor that absorbed `item` in a merge: same section, alike, carrying its sources.

    A pinned survivor (written by the user) never takes sources, so it only has to be alike.
    """
    if item.pinned:
        return None
    for other in survivors:
        if other.category is not item.category:
            continue
        if not (other.pinned or set(item.sources) <= set(other.sources)):
            continue
        if item_similarity(item, other, floor=MERGE_SIMILARITY) >= MERGE_SIMILARITY:
            return other
    return None


def _listed(problems: list[str], what: str) -> list[str]:
    if len(problems) <= _MAX_LISTED:
        return problems
    extra = len(problems) - _MAX_LISTED
    return [*problems[:_MAX_LISTED], f"... and {extra} more {what}"]


# A rewrite may add the new items and merge; it may not grow the file much beyond them.
GROWTH_PER_ITEM = 4_000
GROWTH_SLACK = 16_000
# A kept item's text may be reworded in a merge, not replaced by another statement.
REWORD_FLOOR = 0.5


_NEGATION = re.compile(
    r"(?i)\b(?:never|not|no|don't|doesn't|isn't|aren't|won't|shouldn't|mustn't|can't|cannot|"
    r"without|avoid|stop|instead of|rather than)\b"
)
_WORD = re.compile(r"[a-z0-9][\w.+#/-]*")
_FILLER = frozenset({"a", "an", "the", "to", "be", "use", "using", "any", "ever", "more", "do"})


def _negated(text: str) -> frozenset[str]:
    """Content words inside a negation's reach (the three after "never", "not", ...).

    A faithful rewording keeps what is negated; "never bare exceptions" turned into "never
    raise AppError" moves the negation to other words, which is a different rule even when
    most words are shared.
    """
    found: set[str] = set()
    for match in _NEGATION.finditer(text):
        words = [
            w
            for w in _WORD.findall(text[match.end() : match.end() + 60].lower())
            if w not in _FILLER
        ]
        found.update(w.rstrip("s") for w in words[:3])
    return frozenset(found)


def _integrity(
    old: BranchMemory | None,
    new: BranchMemory,
    new_items: list[MemoryItem],
    rendered: str,
    previous: str | None,
) -> list[str]:
    """What a rewrite must not do besides losing items: steer, flip, weaken, bloat.

    - no text the injection screen flags (remote code, disabled checks, exfiltration,
      orders to the agent) that was not already there, in items, summary or any section;
    - no section the old file did not have (an "## Instructions" block is not memory);
    - an earlier item kept under its id keeps its meaning: never the opposite stance,
      never a different statement, and its confidence does not drop;
    - the file grows by at most about the new items' size.
    """
    from app.core.screen import screen_text
    from app.core.similarity import contradicts, similarity

    problems: list[str] = []
    before = previous if previous is not None else render(old) if old is not None else ""
    # Only what is new or changed needs screening: items kept as they were passed before.
    # An item that is one of the old file's own objects is kept by definition; the others
    # are compared field by field with the old items under their id.
    earlier = (
        [*old.all_items(), *(x for c in old.contradictions for x in c.items)]
        if old is not None
        else []
    )
    same_objects = {id(i) for i in earlier}
    fresh = [
        i
        for i in [*new.all_items(), *(x for c in new.contradictions for x in c.items)]
        if id(i) not in same_objects
    ]
    wanted = {i.id for i in fresh}
    kept = {
        (i.id, i.content, i.title, i.fix, i.root_cause, i.rationale)
        for i in earlier
        if i.id in wanted
    }
    texts = [
        (
            f"item {i.id}",
            " ".join(
                (
                    i.title,
                    i.content,
                    i.rationale,
                    i.fix,
                    i.root_cause,
                    i.approach,
                    i.lessons,
                    i.scope,
                    i.trade_offs,
                )
            ),
        )
        for i in fresh
        if (i.id, i.content, i.title, i.fix, i.root_cause, i.rationale) not in kept
    ]
    texts.append(("the summary", new.summary))
    texts += [
        (f"section {sec.heading!r}", f"{sec.heading} {sec.body}") for sec in new.extra_sections
    ]
    for where, text in texts:
        reasons = screen_text(text)
        if reasons and not all(r in screen_text(before) for r in reasons):
            problems.append(f"{where} {' and '.join(reasons)}")
    if old is not None:
        had = {sec.heading.strip().casefold() for sec in old.extra_sections}
        problems += [
            f"adds a section {sec.heading!r} the file did not have"
            for sec in new.extra_sections
            if sec.heading.strip().casefold() not in had
        ]
        given = {i.id: i for i in new_items}
        # One lookup table instead of a scan of the new file per earlier item (the first item
        # under an id wins, as `BranchMemory.find` has it).
        by_id: dict[str, MemoryItem] = {}
        for i in new.all_items():
            by_id.setdefault(i.id, i)
        for item in old.all_items():
            now = by_id.get(item.id)
            if now is None or now is item or item.pinned:
                # (The very same object: same confidence, same content.)
                continue
            if now.confidence < item.confidence - 0.01:
                problems.append(
                    f"item {item.id} ({item.title!r}) lost confidence "
                    f"({item.confidence:.2f} to {now.confidence:.2f})"
                )
            if now.content == item.content:
                continue
            merged_from = [g for g in given.values() if now.content == g.content]
            if contradicts(item, now) or _negated(item.content) != _negated(now.content):
                problems.append(f"item {item.id} ({item.title!r}) now says the opposite")
            elif not merged_from and similarity(item.content, now.content) < REWORD_FLOOR:
                problems.append(
                    f"item {item.id} ({item.title!r}) was replaced by another statement"
                )
    added = sum(len(i.title) + len(i.content) + 200 for i in new_items)
    limit = len(before) + min(added, GROWTH_PER_ITEM * max(1, len(new_items))) + GROWTH_SLACK
    if len(rendered) > limit:
        problems.append(
            f"the file would grow to {len(rendered):,} characters "
            f"(at most {limit:,} for {len(new_items)} new item(s))"
        )
    return problems


def check_evolution(
    old: BranchMemory | None,
    new: BranchMemory,
    new_items: list[MemoryItem],
    *,
    branch_id: str | None = None,
    allowed_removals: Collection[str] = (),
    rendered: str | None = None,
    previous: str | None = None,
) -> list[str]:
    """Problems that forbid writing `new` in place of `old` (empty list: safe to write).

    `branch_id` is checked against the header when there is no old file. `allowed_removals`
    names item ids a caller removes on purpose (a section cap that prunes to `versions/`).
    `rendered` is `render(new)` when the caller already has it (it is about to write it),
    `previous` the old file's text when it has that.
    """
    problems: list[str] = []

    expected_branch = old.branch_id if old is not None else branch_id
    if expected_branch is not None and new.branch_id != expected_branch:
        problems.append(
            f"the header names branch {new.branch_id!r} but this file is branch {expected_branch!r}"
        )

    problems.extend(
        f"format: {p}" for p in validate(rendered if rendered is not None else render(new))
    )

    in_sections: dict[str, MemoryItem] = {}
    duplicates: list[str] = []
    for item in new.all_items():
        if item.id in in_sections:
            duplicates.append(f"item id {item.id} appears more than once")
        in_sections[item.id] = item
    problems.extend(_listed(duplicates, "duplicate ids"))
    in_conflicts = {item.id for c in new.contradictions for item in c.items}

    # Only a person writes user items (a bullet without metadata parses as one): an engine
    # may carry them over or pass on the new items it was given, never make one up.
    given_items = [*new_items, *(_earlier_items(old) if old is not None else [])]
    # An item that is one of the given objects is given; only the others are looked up.
    given_objects = {id(i) for i in given_items}
    user_items = [
        item
        for item in new.all_items()
        if (item.pinned or USER_SOURCE in item.sources) and id(item) not in given_objects
    ]
    given: set[object] = set()
    if user_items:
        given = {i.id for i in given_items} | {(i.title, i.content) for i in given_items}
    claimed = [
        f"item {item.id} ({item.title!r}) claims to be written by the user but is new; "
        "every bullet needs its (id, confidence, source, extracted) metadata"
        for item in user_items
        if item.id not in given and (item.title, item.content) not in given
    ]
    problems.extend(_listed(claimed, "made-up user items"))

    if old is not None:
        missing: list[str] = []
        changed_pinned: list[str] = []
        # A merge keeps one of the earlier items: only those can have absorbed another.
        earlier_ids = {i.id for i in old.all_items()}
        survivors = [i for i in new.all_items() if i.id in earlier_ids]
        for item in _earlier_items(old):
            if item.id in allowed_removals:
                continue
            if item.id in in_sections or item.id in in_conflicts:
                continue
            if _merged_into(item, survivors) is None:
                missing.append(
                    f"earlier item {item.id} ({item.title!r}) is missing: keep it under the "
                    "same id, or move it whole into Contradictions and Conflicts"
                )
        for item in old.all_items():
            if not item.pinned:
                continue
            now = in_sections.get(item.id)
            if now is None:
                if item.id not in allowed_removals and item.id in in_conflicts:
                    changed_pinned.append(
                        f"pinned item {item.id} ({item.title!r}) was written by the user and "
                        "must stay in its section"
                    )
                continue
            if now.model_dump() != item.model_dump():
                fields = sorted(
                    k for k, v in item.model_dump().items() if now.model_dump().get(k) != v
                )
                changed_pinned.append(
                    f"pinned item {item.id} ({item.title!r}) was changed ({', '.join(fields)}); "
                    "items written by the user must be kept exactly"
                )
        new_conflict_ids = {c.id for c in new.contradictions}
        lost_conflicts = [
            f"earlier contradiction {c.id} ({c.title!r}) is missing"
            for c in old.contradictions
            if c.id not in new_conflict_ids
        ]
        problems.extend(_listed(missing, "missing items"))
        problems.extend(_listed(changed_pinned, "changed pinned items"))
        problems.extend(_listed(lost_conflicts, "missing contradictions"))

    problems.extend(
        _integrity(old, new, new_items, rendered if rendered is not None else render(new), previous)
    )

    known_sources: set[str] = {s for item in new_items for s in item.sources}
    all_new = [*new.all_items(), *(i for c in new.contradictions for i in c.items)]
    # Sources of given objects are known; the old file's are gathered only when needed.
    cited = {s for item in all_new if id(item) not in given_objects for s in item.sources}
    if cited - known_sources and old is not None:
        known_sources.update(s for item in _earlier_items(old) for s in item.sources)
    invented = sorted(cited - known_sources)
    problems.extend(
        _listed(
            [f"source {s!r} appears in neither the old file nor the new items" for s in invented],
            "unknown sources",
        )
    )
    return problems
