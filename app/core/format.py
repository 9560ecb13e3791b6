"""The branch memory file format of seed 001 section 1.1: render, parse, validate.

`render` writes a `BranchMemory` as deterministic Markdown; `parse` reads it back (and reads
files edited by hand or rewritten by an LLM) with markdown-it-py block tokens, so structure
comes from the Markdown parser and only the text of one bullet is split with patterns;
`validate` lists what is wrong with a file. Item bullets read
`- **Title**: content Rationale: .. Trade-off: .. Scope: .. Root cause: .. Fix: .. Approach: ..
Lessons: .. Occurred N times (id: .., confidence: 0.92, source: a, b, extracted: YYYY-MM-DD,
tags: x, y, pinned: true)`, each label only when its field is set. `parse(render(m)) == m`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode
from pydantic import ValidationError

from app.core.models import (
    CONTRADICTIONS_HEADING,
    SUMMARY_HEADING,
    USER_SOURCE,
    BranchMemory,
    Category,
    Contradiction,
    ExtraSection,
    MemoryItem,
    clean_token,
    derive_title,
    make_item_id,
    normalize_timestamp,
    one_line,
    utc_now,
)


@dataclass(frozen=True)
class Problem:
    """One reason a branch file is not valid; `line` is 1-based when known."""

    line: int | None
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


# Category-specific fields, in rendering order, with the label that introduces each.
FIELD_LABELS: tuple[tuple[str, str], ...] = (
    ("rationale", "Rationale"),
    ("trade_offs", "Trade-off"),
    ("scope", "Scope"),
    ("root_cause", "Root cause"),
    ("fix", "Fix"),
    ("approach", "Approach"),
    ("lessons", "Lessons"),
)
_LABEL_FIELDS = {
    "rationale": "rationale",
    "tradeoff": "trade_offs",
    "tradeoffs": "trade_offs",
    "scope": "scope",
    "rootcause": "root_cause",
    "fix": "fix",
    "approach": "approach",
    "lessons": "lessons",
    "lessonslearned": "lessons",
}
# A label starts a field only when capitalised and followed by ": " ("the quick fix: x" stays).
_LABEL_RE = re.compile(
    r"(?:^|(?<=\s))(R(?i:ationale)|T(?i:rade-?offs?)|S(?i:cope)|R(?i:oot cause)|F(?i:ix)"
    r"|A(?i:pproach)|L(?i:essons(?: learned)?)):(?:\s+|$)"
)
_OCCURRED_RE = re.compile(r"(?:^|\s+)O(?i:ccurred) ([0-9]{1,9}) (?i:times?)\.?$")
_META_RE = re.compile(r"[*_]?\(([^()]*)\)[*_]?\s*[.;]?$")
# Keys split the metadata only when followed by ": " - tags such as `project:spotter` hold ':'.
_KEY_RE = re.compile(
    r"(?:^|[,;])\s*(id|confidence|sources?|extracted|date|tags?|pinned|status|detected|refs?)"
    r"\s*:\s+",
    re.IGNORECASE,
)
_KEY_ALIASES = {"sources": "source", "tag": "tags", "date": "extracted", "ref": "refs"}
_CONFLICT_KEYS = frozenset({"status", "detected", "refs"})
_TITLE_RE = re.compile(r"^(\*\*|__)(?P<title>.+?)\1(?P<rest>.*)$")
_SEPARATOR_RE = re.compile(r"^\s*(?::|[-–—](?=\s|$))")
_CATEGORY_PREFIX_RE = re.compile(r"^\[([^\]]+)\]\s*")
_HEADER_RE = re.compile(r"^Branch Memory\s*:\s*(.*)$", re.IGNORECASE)
_FIELD_RE = re.compile(
    r"^[\s>*_+-]*(last[ _-]?updated|last[ _-]?extraction|thread[ _-]?count)[\s*_]*:[\s*_]*"
    r"(.*?)[\s*_]*$",
    re.IGNORECASE,
)
_CONFIDENCE_RE = re.compile(r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(%?)$")
_LISTS = ("bullet_list", "ordered_list")
_HTML_CLOSERS = (("<!--", "-->"), ("<![CDATA[", "]]>"), ("<?", "?>"), ("<!", ">"))
# Only block structure is needed: bullet text is kept exactly as written.
_MD = MarkdownIt("commonmark").disable("inline")
# An item bullet as `render` writes it: `- **Title**: ...` on one line, no tab. Such a line
# can only be a list item holding one paragraph (it cannot open a heading, fence, HTML block,
# quote, thematic break or nested list), so a run of them needs no Markdown parser: see
# `_skeleton`. The first title character is not `*`, `_`, `-` or a space, so the line is never
# a thematic break.
_ITEM_LINE_RE = re.compile(r"- \*\*[^\s*_-][^\t]*")
_ATX_LINE_RE = re.compile(r"#{1,6}(?:[ \t]|$)")
# The stand-in for a run: one list item, parsed in the same place as the run's first line.
_STAND_IN = "- x"
# Problems of category bullets already checked, by everything that decides them (`validate`
# of a growing file re-checks the same bullets on every write). Bounded; cleared when full.
_ITEM_PROBLEMS: dict[tuple[object, ...], tuple[str, ...]] = {}
# The same, by the bullet's line as written (with its section and `###` tags): a line seen
# before is not even split into title, body and metadata.
_LINE_PROBLEMS: dict[tuple[object, ...], tuple[str, ...]] = {}
_ITEM_PROBLEMS_MAX = 65_536


def _norm(name: str) -> str:
    return re.sub(r"[^a-z]", "", name.lower().replace("&", "and"))


_SECTIONS: dict[str, Category | str] = {_norm(c.heading): c for c in Category}
_SECTIONS.update({_norm(c.value): c for c in Category})
_SECTIONS.update({_norm(SUMMARY_HEADING): "summary"})
_SECTIONS.update(
    dict.fromkeys(
        ("contradictionsandconflicts", "conflictsandcontradictions", "contradictions", "conflicts"),
        "conflicts",
    )
)
_PREFIX_CATEGORY = {c.id_prefix: c for c in Category}


# ----------------------------------------------------------------------------------- render


def _timestamp(value: datetime) -> str:
    return normalize_timestamp(value).isoformat().replace("+00:00", "Z")


# Rendered bullets by everything they show: a file is rendered whole on every write, but
# only the new and changed items need the work. Bounded; cleared when full.
_BULLETS: dict[tuple[object, ...], str] = {}
_BULLETS_MAX = 65_536


def _item_bullet(item: MemoryItem) -> str:
    key = (
        item.id,
        item.title,
        item.content,
        item.confidence,
        tuple(item.sources),
        item.extracted,
        tuple(item.tags),
        item.pinned,
        item.occurrences,
        item.rationale,
        item.trade_offs,
        item.scope,
        item.root_cause,
        item.fix,
        item.approach,
        item.lessons,
    )
    bullet = _BULLETS.get(key)
    if bullet is None:
        if len(_BULLETS) >= _BULLETS_MAX:
            _BULLETS.clear()
        bullet = _BULLETS[key] = _new_bullet(item)
    return bullet


def _new_bullet(item: MemoryItem) -> str:
    parts = [item.content]
    parts += [
        f"{label}: {getattr(item, name)}" for name, label in FIELD_LABELS if getattr(item, name)
    ]
    if item.occurrences > 1:
        parts.append(f"Occurred {item.occurrences} times")
    meta = [f"id: {item.id}", f"confidence: {item.confidence:.2f}"]
    if item.sources:
        meta.append("source: " + ", ".join(item.sources))
    meta.append(f"extracted: {item.extracted.isoformat()}")
    if item.tags:
        meta.append("tags: " + ", ".join(item.tags))
    if item.pinned:
        meta.append("pinned: true")
    body = " ".join(p for p in parts if p)
    return f"**{item.title}**: " + (f"{body} " if body else "") + f"({', '.join(meta)})"


def _contradiction_lines(entry: Contradiction) -> list[str]:
    meta = [f"id: {entry.id}", f"status: {entry.status}", f"detected: {entry.detected}"]
    if entry.refs:
        meta.append("refs: " + ", ".join(entry.refs))
    title = entry.title or derive_title(entry.description)
    body = f"{entry.description} " if entry.description else ""
    lines = [f"- **{title}**: {body}({', '.join(meta)})"]
    lines += [f"  - [{i.category.heading}] {_item_bullet(i)}" for i in entry.items]
    return lines


def _seal(body: str) -> str:
    """Close a code fence or HTML block left open at the end of free text: left open, it
    would swallow every section rendered after it."""
    for _attempt in range(8):
        probe = SyntaxTreeNode(_MD.parse(f"{body}\n\n## end\n")).children
        last = probe[-1] if probe else None
        if last is None or last.type == "heading":
            return body
        first = last.content.lstrip()
        tag = re.match(r"<(script|pre|style|textarea)", first, re.IGNORECASE)
        closer = (
            last.markup
            if last.type == "fence"
            else f"</{tag.group(1)}>"
            if tag
            else next((end for start, end in _HTML_CLOSERS if first.startswith(start)), "")
        )
        if not closer:
            return body
        body = f"{body}\n{closer}"
    return body


def _stamp_lines(last_updated: datetime, last_extraction: datetime | None) -> list[str]:
    extraction = "never" if last_extraction is None else _timestamp(last_extraction)
    return [f"**Last Updated:** {_timestamp(last_updated)}", f"**Last Extraction:** {extraction}"]


def restamp(text: str, last_updated: datetime, last_extraction: datetime | None) -> str:
    """`render(m)` given as `text`, as it would read with these two header timestamps.

    The same as rendering a copy of `m` with the timestamps changed, without rendering
    again: they are always the third and fourth lines (the branch id is one line).
    """
    head = text.split("\n", 4)
    return "\n".join([*head[:2], *_stamp_lines(last_updated, last_extraction), *head[4:]])


def render(memory: BranchMemory) -> str:
    """The branch file for `memory`: always every section, in seed 001 order, then extras."""
    out = [
        f"# Branch Memory: {one_line(memory.branch_id)}",
        "",
        *_stamp_lines(memory.last_updated, memory.last_extraction),
        f"**Thread Count:** {memory.thread_count}",
        "",
        f"## {SUMMARY_HEADING}",
        "",
    ]
    if memory.summary:
        out += [_seal(memory.summary), ""]
    for category in Category:
        out += [f"## {category.heading}", ""]
        if memory.items[category]:
            out += [f"- {_item_bullet(i)}" for i in memory.items[category]] + [""]
    out += [f"## {CONTRADICTIONS_HEADING}", ""]
    for entry in memory.contradictions:
        out += _contradiction_lines(entry)
    if memory.contradictions:
        out.append("")
    if memory.contradiction_notes:
        out += [_seal(memory.contradiction_notes), ""]
    for extra in memory.extra_sections:
        out += [f"## {extra.heading}", ""] + ([_seal(extra.body), ""] if extra.body else [])
    return "\n".join(out).rstrip("\n") + "\n"


# ------------------------------------------------------------------------------------ parse


@dataclass
class _Draft:
    """One bullet or paragraph split into title, body and raw metadata (None: no metadata)."""

    line: int
    title: str | None
    body: str
    meta: dict[str, str] | None
    tags: list[str] = field(default_factory=list)
    # For `validate`: the problems of this bullet when known already (no need to rebuild
    # it), and the key to remember them under once found.
    checked: tuple[str, ...] | None = None
    line_key: tuple[object, ...] | None = None


@dataclass
class _Section:
    kind: Category | str  # a Category, "preamble", "summary", "conflicts" or "extra"
    heading: str
    start: int  # first line after the heading
    nodes: list[SyntaxTreeNode] = field(default_factory=list)
    end: int = 0


def _split_meta(inner: str) -> dict[str, str] | None:
    matches = list(_KEY_RE.finditer(inner.strip()))
    if not matches or matches[0].start() != 0:
        return None
    inner = inner.strip()
    meta: dict[str, str] = {}
    for match, value in _segments(inner, matches):
        key = match.group(1).lower()
        meta.setdefault(_KEY_ALIASES.get(key, key), value.strip().strip(",;").strip())
    return meta


def _segments(text: str, matches: list[re.Match[str]]) -> list[tuple[re.Match[str], str]]:
    """Each match with the text that follows it up to the next match."""
    ends = [m.start() for m in matches[1:]] + [len(text)]
    return [(m, text[m.end() : end]) for m, end in zip(matches, ends, strict=False)]


def _draft(text: str, line: int) -> _Draft:
    title, body, meta = _draft_parts(text)
    return _Draft(line, title, body, None if meta is None else dict(meta))


@lru_cache(maxsize=16_384)
def _draft_parts(text: str) -> tuple[str | None, str, tuple[tuple[str, str], ...] | None]:
    """Title, body and metadata of one bullet's text (cached: files are re-read whole)."""
    text = one_line(text)
    meta = None
    found = _META_RE.search(text)
    if found and (meta := _split_meta(found.group(1))) is not None:
        text = text[: found.start()].rstrip()
    pairs = None if meta is None else tuple(meta.items())
    titled = _TITLE_RE.match(text)
    if not titled:
        return None, text, pairs
    title, rest = titled.group("title").strip(), titled.group("rest")
    separator = _SEPARATOR_RE.match(rest)
    if separator:
        rest = rest[separator.end() :]
    elif title.endswith(":"):  # `**Title:** text`
        title = title[:-1].rstrip()
    return title, rest.strip(), pairs


def _remember(
    cache: dict[tuple[object, ...], tuple[str, ...]],
    key: tuple[object, ...],
    value: tuple[str, ...],
) -> None:
    if len(cache) >= _ITEM_PROBLEMS_MAX:
        cache.clear()
    cache[key] = value


def _skeleton(lines: list[str]) -> tuple[list[str], dict[int, list[str]]]:
    """`lines` with each run of rendered item bullets folded into one stand-in list item.

    A run is a maximal sequence of `_ITEM_LINE_RE` lines followed by a blank line (or the
    end) whose next non-blank line is an unindented ATX heading (or the end), which is how
    `render` lays out a section. Its first line becomes `_STAND_IN` and the others blank
    lines, so line numbers and everything around the run parse exactly as before; the
    parser reads the run's bullets itself. Returns the new lines and, per stand-in line,
    the run it replaces.
    """
    out = list(lines)
    runs: dict[int, list[str]] = {}
    count = len(lines)
    n = 0
    while n < count:
        if not _ITEM_LINE_RE.fullmatch(lines[n]):
            n += 1
            continue
        start = n
        while n < count and _ITEM_LINE_RE.fullmatch(lines[n]):
            n += 1
        after = n
        # Blank as Markdown has it: spaces and tabs only.
        while after < count and not lines[after].strip(" \t"):
            after += 1
        ends = n == count or (
            not lines[n].strip(" \t")
            and (after == count or _ATX_LINE_RE.match(lines[after]) is not None)
        )
        if ends:
            runs[start] = lines[start:n]
            out[start] = _STAND_IN
            out[start + 1 : n] = [""] * (n - start - 1)
    return out, runs


def _split_fields(body: str) -> tuple[str, dict[str, str], int]:
    occurrences = 1
    found = _OCCURRED_RE.search(body)
    if found:
        occurrences = max(1, int(found.group(1)))
        body = body[: found.start()]
    labels = list(_LABEL_RE.finditer(body))
    content = body[: labels[0].start()] if labels else body
    fields: dict[str, str] = {}
    for match, text in _segments(body, labels):
        name, value = _LABEL_FIELDS[_norm(match.group(1))], text.strip()
        fields[name] = f"{fields[name]} {value}".strip() if name in fields else value
    return content.strip(), fields, occurrences


def _tokens(value: str | None) -> list[str]:
    return [t for t in re.split(r"[,;\s]+", value or "") if t]


def _parse_timestamp(value: str) -> datetime | None:
    try:
        return normalize_timestamp(datetime.fromisoformat(value.strip()))
    except (ValueError, OverflowError):  # overflow: year 1 or 9999 shifted out of range
        return None


def _title(title: str | None, content: str) -> str:
    # A title is rendered inside `**`: asterisks of its own would change where it ends.
    return (title or "").strip("* ") or derive_title(content.replace("*", ""))


class _Parser:
    """One pass over a file: builds the model and notes every problem on the way."""

    HEADER_KEYS = ("lastupdated", "lastextraction", "threadcount")

    def __init__(
        self, text: str, branch_id: str | None, *, fold: bool = True, check_only: bool = False
    ) -> None:
        text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
        self.lines = text.split("\n")
        # Runs of rendered bullets are read line by line (see `_skeleton`); `unread` keeps
        # those the parse did not meet as a category list, which makes the caller parse the
        # whole text with Markdown instead.
        self.runs: dict[int, list[str]] = {}
        if fold:
            folded, self.runs = _skeleton(self.lines)
            if self.runs:
                text = "\n".join(folded)
        self.unread = set(self.runs)
        # Only the problems are wanted (`validate`): bullets checked before are not rebuilt.
        self.check_only = check_only
        self.root = SyntaxTreeNode(_MD.parse(text))
        self.problems: list[Problem] = []
        self.branch_id = branch_id
        self.has_header = False
        self.header: dict[str, str] = {}
        self.header_lines: dict[str, int] = {}
        self.default_date = utc_now().date()

    # -- sections
    def _sections(self) -> list[_Section]:
        sections = [_Section("preamble", "", 0)]
        for node in self.root.children:
            if node.type == "heading":
                level, name = int(node.tag[1:]), one_line(self._inline(node))
                in_preamble = len(sections) == 1 and not self.has_header
                header = _HEADER_RE.match(name) if level == 1 and in_preamble else None
                kind = _SECTIONS.get(_norm(name))
                if header:
                    self.has_header = True
                    self.branch_id = one_line(header.group(1)) or self.branch_id
                    sections[-1].nodes.append(node)
                    continue
                if kind is not None or level <= 2:
                    sections[-1].end = self._span(node)[0]
                    sections.append(_Section(kind or "extra", name, self._span(node)[1]))
                    continue
            sections[-1].nodes.append(node)
        sections[-1].end = len(self.lines)
        return sections

    @staticmethod
    def _span(node: SyntaxTreeNode) -> tuple[int, int]:
        return node.map or (0, 0)

    @staticmethod
    def _inline(node: SyntaxTreeNode) -> str:
        return node.children[0].content if node.children else ""

    def _raw(self, start: int, end: int, skip: set[int] | None = None) -> str:
        return "\n".join(
            line for n, line in enumerate(self.lines[start:end], start) if n not in (skip or ())
        ).strip("\n")

    def _block_text(self, node: SyntaxTreeNode) -> str:
        if node.type in ("paragraph", "heading"):
            return self._inline(node)
        return self._raw(*self._span(node))

    # -- header
    def _read_preamble(self, section: _Section) -> str:
        skip: set[int] = set()
        for node in section.nodes:
            start, end = self._span(node)
            if node.type == "heading" and node.tag == "h1":  # the header, read already
                skip.update(range(start, end))
            elif node.type in ("paragraph", *_LISTS):
                for n in range(start, end):
                    found = _FIELD_RE.match(self.lines[n])
                    if found:
                        key = _norm(found.group(1))
                        self.header.setdefault(key, found.group(2).strip())
                        self.header_lines.setdefault(key, n + 1)
                        skip.add(n)
        return self._raw(section.start, section.end, skip).strip()

    def _header_value(self, key: str) -> datetime | int | None:
        """A header timestamp, or the thread count; None when absent, `never` or bad."""
        raw = self.header.get(key)
        if raw is None or (key == "lastextraction" and raw.lower() in ("never", "none")):
            return None
        if key == "threadcount":
            value: datetime | int | None = int(raw) if re.fullmatch(r"[0-9]{1,12}", raw) else None
        else:
            value = _parse_timestamp(raw)
        if value is None:
            what = "a whole number" if key == "threadcount" else "valid ISO 8601"
            self.problems.append(Problem(self.header_lines[key], f"{raw!r} is not {what}"))
        return value

    # -- items
    def _collect_list(
        self, node: SyntaxTreeNode, out: list[_Draft], tags: list[str], parent: _Draft | None
    ) -> None:
        for entry in node.children:
            draft = _draft(self._entry_text(entry), self._span(entry)[0] + 1)
            folded = self._field_text(draft) if parent else None
            current = parent
            if parent is not None and folded is not None:
                parent.body = f"{parent.body} {folded}".strip()
            elif draft.title or draft.body or draft.meta is not None:
                current, draft.tags = draft, list(tags)
                out.append(draft)
            for child in entry.children:
                if child.type in _LISTS:
                    self._collect_list(child, out, tags, current)

    def _entry_text(self, entry: SyntaxTreeNode) -> str:
        """All text of a list item except its nested lists, on one line."""
        blocks = [c for c in entry.children if c.type not in _LISTS]
        return one_line(" ".join(self._block_text(b) for b in blocks))

    @staticmethod
    def _field_text(draft: _Draft) -> str | None:
        """A sub-bullet such as `Rationale: ...` or `**Fix:** ...` belongs to its parent."""
        if draft.meta is not None:
            return None
        text = f"{draft.title}: {draft.body}" if draft.title else draft.body
        return text if _LABEL_RE.match(text) or _OCCURRED_RE.match(text) else None

    def _category_drafts(self, section: _Section) -> list[_Draft]:
        drafts: list[_Draft] = []
        tags: list[str] = []
        covered: set[int] = set()
        for node in section.nodes:
            covered.update(range(*self._span(node)))
            if node.type == "heading":  # a `###` group inside a category becomes a tag
                tags = [t for t in [clean_token(one_line(self._inline(node))).lower()] if t]
            elif node.type in _LISTS:
                run = self._run_at(node)
                if run is None:
                    self._collect_list(node, drafts, tags, None)
                    continue
                start = self._span(node)[0]
                covered.update(range(start, start + len(run)))
                group = tuple(tags)
                for n, line in enumerate(run, start):
                    key = None
                    if self.check_only:
                        key = (line, group, section.kind, self.default_date)
                        known = _LINE_PROBLEMS.get(key)
                        if known is not None:
                            # Only its problems matter here, and a sound bullet has none.
                            if known:
                                drafts.append(_Draft(n + 1, None, "", None, checked=known))
                            continue
                    draft = _draft(line[2:], n + 1)
                    if draft.title or draft.body or draft.meta is not None:
                        draft.tags = list(tags)
                        draft.line_key = key
                        drafts.append(draft)
            elif node.type != "hr":
                drafts.append(_draft(self._block_text(node), self._span(node)[0] + 1))
                drafts[-1].tags = list(tags)
        # Link reference definitions leave no token; they are text all the same.
        loose = [
            n
            for n in range(section.start, section.end)
            if n not in covered and self.lines[n].strip()
        ]
        drafts += [_draft(self.lines[n], n + 1) for n in loose]
        return drafts

    def _run_at(self, node: SyntaxTreeNode) -> list[str] | None:
        """The folded run this list stands in for, if it is exactly the stand-in item."""
        start = self._span(node)[0]
        if node.type != "bullet_list" or start not in self.runs or len(node.children) != 1:
            return None
        entry = node.children[0]
        blocks = entry.children
        if (
            self._span(entry)[0] != start
            or len(blocks) != 1
            or blocks[0].type != "paragraph"
            or tuple(self._span(blocks[0])) != (start, start + 1)
            or self._inline(blocks[0]) != _STAND_IN[2:]
        ):
            return None
        self.unread.discard(start)
        return self.runs[start]

    def _check_item(self, draft: _Draft, category: Category) -> None:
        """The problems `_item` would note for this bullet, from the caches when seen before."""
        messages = draft.checked
        if messages is None:
            meta = None if draft.meta is None else tuple(draft.meta.items())
            key = (category, draft.title, draft.body, meta, tuple(draft.tags), self.default_date)
            messages = _ITEM_PROBLEMS.get(key)
            if messages is None:
                before = len(self.problems)
                self._item(draft, category)
                messages = tuple(p.message for p in self.problems[before:])
                del self.problems[before:]
                _remember(_ITEM_PROBLEMS, key, messages)
            if draft.line_key is not None:
                _remember(_LINE_PROBLEMS, draft.line_key, messages)
        # Every problem `_item` notes is on the bullet's own line.
        if messages:
            self.problems.extend(Problem(draft.line, message) for message in messages)

    def _item(self, draft: _Draft, category: Category) -> MemoryItem:
        content, fields, occurrences = _split_fields(draft.body)
        meta = draft.meta
        values: dict[str, object] = {
            "category": category,
            "title": _title(draft.title, content),
            "content": content,
            "occurrences": occurrences,
            "tags": draft.tags,
            **fields,
        }
        if meta is None:  # a bullet written by hand: the user's own statement
            values.update(sources=[USER_SOURCE], confidence=1.0, extracted=self.default_date)
        else:
            values.update(
                id=meta.get("id", ""),
                sources=_tokens(meta.get("source")),
                tags=draft.tags + _tokens(meta.get("tags")),
                extracted=self._date(meta.get("extracted"), draft.line, "extracted"),
                pinned=meta.get("pinned", "").lower() in ("true", "yes", "1"),
            )
            if "confidence" in meta:
                values["confidence"] = self._confidence(meta["confidence"], draft.line)
        try:
            return MemoryItem.model_validate(values)
        except ValidationError as error:  # never lose the text over one odd value
            self.problems.append(Problem(draft.line, f"item kept with defaults: {error}"))
            return MemoryItem(category=category, title=str(values["title"]), content=content)

    def _confidence(self, raw: str, line: int) -> float:
        found = _CONFIDENCE_RE.match(raw.strip())
        if not found:
            self.problems.append(Problem(line, f"confidence {raw!r} is not a number"))
            return 0.8
        value = float(found.group(1)) / (100 if found.group(2) else 1)
        if not 0.0 <= value <= 1.0:
            self.problems.append(Problem(line, f"confidence {raw} is outside 0.0-1.0"))
        return min(max(value, 0.0), 1.0)

    def _date(self, raw: str | None, line: int, key: str) -> date:
        stamp = None if raw is None else _parse_timestamp(raw)
        parsed = stamp.date() if stamp else None
        if raw is not None and parsed is None:
            self.problems.append(Problem(line, f"{key} date {raw!r} is not a valid date"))
        return parsed or self.default_date

    # -- contradictions
    def _conflicts(self, section: _Section) -> tuple[list[Contradiction], str]:
        entries: list[Contradiction] = []
        used: set[int] = set()
        for node in section.nodes:
            for entry in node.children if node.type in _LISTS else []:
                draft = _draft(self._entry_text(entry), self._span(entry)[0] + 1)
                meta = draft.meta or {}
                if not (_CONFLICT_KEYS & meta.keys() or meta.get("id", "").startswith("conflict-")):
                    continue  # not a structured entry: stays in the notes as written
                used.update(range(*self._span(entry)))
                entries.append(self._contradiction(draft, meta, entry))
        return entries, self._raw(section.start, section.end, used).strip()

    def _contradiction(
        self, draft: _Draft, meta: dict[str, str], entry: SyntaxTreeNode
    ) -> Contradiction:
        items: list[MemoryItem] = []
        description = [draft.body]
        for sub in self._descendants(entry):
            text = self._entry_text(sub)
            prefix = _CATEGORY_PREFIX_RE.match(text)
            named = _SECTIONS.get(_norm(prefix.group(1))) if prefix else None
            category = named if isinstance(named, Category) else None
            sub_draft = _draft(
                text[prefix.end() :] if category and prefix else text, self._span(sub)[0] + 1
            )
            if category is None and sub_draft.meta is not None:
                ident = sub_draft.meta.get("id", "")
                category = _PREFIX_CATEGORY.get(ident.split("-")[0], Category.CODING_PREFERENCES)
            if category is None:
                description.append(text)
            else:
                items.append(self._item(sub_draft, category))
        status = meta.get("status", "open").lower()
        if status not in ("open", "superseded", "resolved"):
            self.problems.append(Problem(draft.line, f"unknown contradiction status {status!r}"))
            status = "open"
        values = {
            "id": meta.get("id", ""),
            "title": _title(draft.title, draft.body),
            "description": " ".join(d for d in description if d),
            "status": status,
            "detected": self._date(meta.get("detected"), draft.line, "detected"),
            "refs": _tokens(meta.get("refs")),
            "items": items,
        }
        return Contradiction.model_validate(values)

    def _descendants(self, entry: SyntaxTreeNode) -> Iterator[SyntaxTreeNode]:
        for sub in (s for c in entry.children if c.type in _LISTS for s in c.children):
            yield sub
            yield from self._descendants(sub)

    # -- whole file
    def run(self) -> tuple[BranchMemory, list[Problem], set[str]]:
        sections = self._sections()
        summary = [self._read_preamble(sections[0])]
        updated, extraction, count = (self._header_value(k) for k in self.HEADER_KEYS)
        updated = updated if isinstance(updated, datetime) else utc_now()
        self.default_date = updated.date()
        items: dict[Category, list[MemoryItem]] = {c: [] for c in Category}
        contradictions: list[Contradiction] = []
        notes: list[str] = []
        extras: list[ExtraSection] = []
        for section in sections[1:]:
            if isinstance(section.kind, Category):
                drafts = self._category_drafts(section)
                if self.check_only:
                    for draft in drafts:
                        self._check_item(draft, section.kind)
                else:
                    items[section.kind] += [self._item(d, section.kind) for d in drafts]
            elif section.kind == "summary":
                summary.append(self._raw(section.start, section.end))
            elif section.kind == "conflicts":
                found, note = self._conflicts(section)
                contradictions += found
                notes.append(note)
            else:
                body = self._raw(section.start, section.end)
                extras.append(ExtraSection(heading=section.heading, body=body))
        if not self.check_only:
            _unique_ids(items)
        memory = BranchMemory(
            branch_id=self.branch_id or "unknown",
            last_updated=updated,
            last_extraction=extraction if isinstance(extraction, datetime) else None,
            thread_count=count if isinstance(count, int) else 0,
            summary="\n\n".join(s.strip() for s in summary if s.strip()),
            items=items,
            contradictions=contradictions,
            contradiction_notes="\n\n".join(n for n in notes if n),
            extra_sections=extras,
        )
        kinds = {str(s.kind) for s in sections[1:]}
        return memory, self.problems, kinds


def _unique_ids(items: dict[Category, list[MemoryItem]]) -> None:
    """A second item under an id already taken gets an id of its own.

    A bullet copied in an editor to write a variant keeps the original's id; two items
    under one id would make every later rewrite of the file look like it changed one of
    them. The copy's id derives from its text and place, so every parse of the same file
    gives the same id, and the next write records it.
    """
    seen: set[str] = set()
    for section in items.values():
        for k, item in enumerate(section):
            fresh, n = item.id, 1
            while fresh in seen:
                n += 1
                fresh = make_item_id(item.category, item.title, f"{item.content}\n{item.id}#{n}")
            if fresh != item.id:
                section[k] = item.model_copy(update={"id": fresh})
            seen.add(fresh)


def _parsed(
    text: str, branch_id: str | None, *, check_only: bool = False
) -> tuple[_Parser, tuple[BranchMemory, list[Problem], set[str]]]:
    """Parse with rendered bullet runs read directly; the full Markdown parse when a run
    turned out not to be a category list (then the fold would not be exact)."""
    parser = _Parser(text, branch_id, check_only=check_only)
    result = parser.run()
    if parser.unread:
        parser = _Parser(text, branch_id, fold=False, check_only=check_only)
        result = parser.run()
    return parser, result


def parse(text: str, branch_id: str | None = None) -> BranchMemory:
    """Read a branch file, hand-edited or not; never raises. The header's id wins over
    `branch_id`, which is used (or "unknown") when the file has no header."""
    return _parsed(text, branch_id)[1][0]


def validate(text: str) -> list[Problem]:
    """Problems per seed 001 "Validation"; an empty list means the file is valid."""
    parser, (_memory, problems, kinds) = _parsed(text, None, check_only=True)
    rules = [
        (parser.has_header, "missing the '# Branch Memory: <branch>' header"),
        ("summary" in kinds, f"missing the '## {SUMMARY_HEADING}' section"),
        (kinds & {str(c) for c in Category}, "no category section (e.g. '## Coding Preferences')"),
    ]
    return [Problem(None, message) for ok, message in rules if not ok] + problems


def header_last_updated(text: str) -> str | None:
    """The `**Last Updated:**` value as written, read cheaply from the lines before any section."""
    for line in text.splitlines():
        if re.match(r"^ {0,3}#{2,6}(\s|$)", line):
            return None
        found = _FIELD_RE.match(line)
        if found and _norm(found.group(1)) == "lastupdated":
            return found.group(2).strip() or None
    return None


__all__ = [
    "FIELD_LABELS",
    "Problem",
    "header_last_updated",
    "parse",
    "render",
    "restamp",
    "validate",
]
