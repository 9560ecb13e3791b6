"""Conversation text to clean statements: the reading half of the offline extractor.

This module owns everything between the raw conversation (plain text from the CLI or a thread
rendered by `app/sources`) and a flat list of `Statement`s the rules can judge: splitting the
text into speaker turns (`User:` / `Human:` / `## User`, `Assistant:` / `Claude:` / `AI:` ...;
text without any speaker mark is the user's), dropping what is not prose (fenced code,
`> ` quoted lines, `[tool: ...]` lines, XML-ish command and reasoning blocks, stack traces,
log and compiler output, tables), remembering the heading each sentence sits under, and
splitting prose into sentences. It knows nothing about categories or confidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Reading", "Speaker", "Statement", "Turn", "read_statements", "split_turns"]


class Speaker(StrEnum):
    """Who said a statement; the user's word weighs more than the agent's."""

    USER = "user"
    AGENT = "agent"
    OTHER = "other"


_USER_NAMES = frozenset({"user", "human", "developer"})
_AGENT_NAMES = frozenset(
    {
        "assistant",
        "claude",
        "ai",
        "agent",
        "bot",
        "gpt",
        "chatgpt",
        "copilot",
        "codex",
        "gemini",
        "aider",
    }
)
# System turns (injected instructions, reminders) are nobody's statement.
_OTHER_NAMES = frozenset({"system"})
_ALL_NAMES = "|".join(sorted(_USER_NAMES | _AGENT_NAMES | _OTHER_NAMES, key=len, reverse=True))

# `User: text`, `**User:** text`, `## User`, `### Assistant:`. The colon is required unless
# the name is a heading of its own, so "User stories are ..." is never a speaker mark.
_SPEAKER_RE = re.compile(
    rf"^[ \t]{{0,3}}(?P<hash>#{{1,6}}[ \t]*)?(?:\*\*|__)?(?P<name>{_ALL_NAMES})(?:\*\*|__)?"
    rf"[ \t]*(?P<colon>:)?(?:\*\*|__)?[ \t]*(?P<rest>.*)$",
    re.IGNORECASE,
)

_FENCE_RE = re.compile(r"^[ \t]{0,3}(```|~~~)")
_HEADING_RE = re.compile(r"^#{1,6}[ \t]+(?P<text>.+?)[ \t#]*$")
# A line that is only bold text ("**Acceptance Criteria:**") works as a heading.
_BOLD_LINE_RE = re.compile(r"^(?:\*\*|__)(?P<text>[^*_]{2,80}?)(?:\*\*|__)[ \t]*:?$")
# "Acceptance criteria:" labels what follows; a longer line ending in ":" is a sentence.
_LABEL_LINE_RE = re.compile(r"^(?P<text>[A-Z]\w*(?: \w+){0,3}):$")
_TAG_OPEN_RE = re.compile(r"^<(?P<tag>[a-zA-Z][\w-]*)(?:[ \t][^>]*)?>")
# Tags whose whole block is machine text (agent reasoning, slash-command expansions, hook
# output); any other tag at the start of a line drops only that line.
_BLOCK_TAG_RE = re.compile(
    r"^(?:think|thinking|reasoning|system-reminder|command-[\w-]+|local-command-[\w-]+|"
    r"user-prompt-submit-hook|function_calls|function_results|tool_[\w-]+|task-notification|"
    r"bash-[\w-]+|ide_[\w-]+|env|attachment)$",
    re.IGNORECASE,
)
_TOOL_LINE_RE = re.compile(
    r"^\[(?:tool|tool[ _-]?(?:use|call|result|output)|function[ _-]?call|request "
    r"interrupted|image|pasted text|redacted|command|output|manifest)\b",
    re.IGNORECASE,
)
# Lines that are machine output rather than someone talking, split by how the line starts
# so that a prose line pays for one cheap test: stack frames, exception summaries, logs,
# compiler and linter lines; then shell prompts, agent UI glyphs, tables and rules.
_NOISE_ALPHA_RE = re.compile(
    r"""(?:
        Traceback\ \(most\ recent\ call\ last\)
      | File\ "[^"]*",\ line\ \d+
      | at\ (?:[^\s(]+\ ){0,6}\(?[^\s()]+:\d+(?::\d+)?\)?$
      | at\ async\ .*
      | Caused\ by:\ [\w$]+(?:\.[\w$]+)+
      | (?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Warning|Interrupt|Exit)(?::.*)?$
      | (?:DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL|TRACE)\b[:\] ]
      | npm\ (?:ERR|WARN)!?
      | error\ (?:TS|CS|E)\d+
      | (?:ERROR|WARNING)\ in[ ]
      | webpack\ compiled
      | Compiled\ (?:with|successfully)
      | Line\ \d+:\d+:
      | make(?:\[\d+\])?:\ \*\*\*
      | collect2:\ (?:fatal\ )?error:
    )""",
    re.VERBOSE,
)
_NOISE_OTHER_RE = re.compile(
    r"""(?:
        \[?\d{1,2}:\d{2}:\d{2}
      | \d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}
      | \[(?:debug|info|warn|warning|error)\]
      | \d+:\d+\ +(?:error|warning)[ ]
      | [$❯➜%][ ]
      | >>>[ ]
      | [⏺⎿●✓✗✔✘│├└┌┐┘┬┴┼─]
      | \|
      | (?:-{3,}|\*{3,}|_{3,}|={3,})[ \t]*$
      | [-=]+(?:\+[-=]+)+\+?[ \t]*$
      | \d+→
      | \.\.\.\ \d+\ (?:more|common\ frames\ omitted)
      | ::(?:warning|error|notice|debug|group|endgroup|add-mask)\b
    )""",
    re.VERBOSE,
)

# "here's the CI output", "here is my .env", "below is the log": "here's" with what is pasted
# ("here's what I want:" and "here are the rules:" bring the user's own words).
HERE_IS_MATERIAL = (
    r"(?:here'?s|here is|here are|below is)\b[^.:?!\n]{0,40}?\b(?:logs?|output|traces?|"
    r"traceback|errors?|stack ?trace|readme|docs?|documentation|config|file|diff|dump|e-?mail|"
    r"response|results?|snippet|schema|stderr|stdout|report|ticket|message|page|changelog|"
    r"spec|json|yaml|csv|query|workflow|manifest|template|env)\b"
)
# A user line that announces what follows as pasted material ("CI is red, pasting the log
# from the build job:", "here's the output:"): the lines after it are the paste, until a
# blank line or a line of lower-case chat ("the flash budget is fixed, dont grow it.").
_ANNOUNCING = (
    r"(?i)(?:^|[,;.]\s*|\s)(?:(?:and|so)\s+)?(?:" + HERE_IS_MATERIAL + r"|"
    r"past(?:e|ed|ing|in)|(?:the|this|my|our)\s+(?:full\s+|whole\s+)?(?:log|output|trace|"
    r"stack ?trace|error output)s?\b"
)
_ANNOUNCES_PASTE_RE = re.compile(
    _ANNOUNCING + r"|(?:from|in)\s+(?:the|our|their|this|that|a|an)\s+"
    r"(?:[\w-]+\s+){0,3}(?:readme|docs?|documentation|wiki|guide|manual|logs?|output|ticket|"
    r"e-?mail|spec|changelog)\b)[^.:?!]{0,60}:$"
)
# The same announcement with the paste after the colon on the same line ("…, pasting the
# log: Run make …"); the match ends where the paste starts.
PASTED_AFTER_RE = re.compile(_ANNOUNCING + r")[^.:?!]{0,60}:\s+(?=\S)")
# The same announcement as a line of its own with no colon ("pasting the email from ops",
# "here is the config we ship"): short, opening on the announcement, no sentence end.
_ANNOUNCES_PASTE_LINE_RE = re.compile(
    r"(?i)^(?:(?:ok|so|and|also)\W+)?(?:(?:" + HERE_IS_MATERIAL + r"|"
    r"past(?:e|ed|ing|in)\b|(?:got|getting|seeing)\s+this\b|(?:copied|taken|quoted)\s+from\b)"
    r"(?:\s+[^\s.!?]+){0,10}|(?:the|our|their|this|that|my)\s+(?:[\w./-]+\s+){0,4}"
    r"(?:is|are)\s+below|"
    r"(?:the|our|their|this|that|my)\s+(?:[\w./-]+\s+){0,3}"
    r"(?:has|says|prints|printed|shows|contains|reads|gives|spits out)\s+"
    r"(?:this|these|the following)(?:\s+[\w-]+){0,2})$"
)


# Words every `PASTED_AFTER_RE` match holds: tested first, the pattern is slow to fail.
_PASTE_WORDS = ("here", "below", "past", "log", "output", "trace")


def _pasted_after(line: str) -> re.Match[str] | None:
    """Where a paste announced on this line starts after its colon ("…, pasting the log: …")."""
    if ":" not in line:
        return None
    low = line.lower()
    if not any(word in low for word in _PASTE_WORDS):
        return None
    return PASTED_AFTER_RE.search(line)


def announces_paste(stripped: str) -> bool:
    """Whether a user's line announces that the lines after it are pasted material."""
    return bool(
        _ANNOUNCES_PASTE_LINE_RE.match(stripped)
        or _pasted_after(stripped)
        or (stripped.endswith(":") and _ANNOUNCES_PASTE_RE.search(stripped))
    )


# A line written for whatever AI reads it ("NOTE TO AUTOMATED ASSISTANTS: …", "AI agents
# must …", "[deploy] Assistants reading this: …", "If you are an AI …") is planted text, in
# whatever the user pasted it from: nobody's words.
ADDRESSED_TO_AI_RE = re.compile(
    r"(?i)\b(?:note|message|instructions?|attention|notice|important)\W{0,3}(?:to|for)\s+"
    r"(?:all\s+|any\s+)?(?:ai|automated|llm)\b|"
    r"\b(?:ai|llm|automated)\s+(?:coding\s+)?(?:agents?|assistants?|tools?|models?|bots?)\s+"
    r"(?:reading this|must|should|shall|are required to|need to)\b|"
    r"\b(?:assistants?|agents?|llms?|bots?|models?)\s+reading\s+this\b|"
    r"\bif you(?:'re| are) an? (?:ai|llm|language model|assistant|agent|bot)\b"
)


# What may stand right before a word: "ai" after one of these opens a word ("(AI agents …").
_BEFORE_A_WORD = frozenset(" \t(\"'“[*_:-/")


def addressed_to_ai(line: str) -> bool:
    """`ADDRESSED_TO_AI_RE` on a line, after a test for the words every match holds (most
    lines hold none, and the pattern is slow to fail)."""
    low = line.lower()
    at = low.find("ai")
    while at >= 0:
        if at == 0 or low[at - 1] in _BEFORE_A_WORD:
            break  # "ai" opening a word
        at = low.find("ai", at + 1)
    else:
        if not ("automated" in low or "llm" in low or "reading this" in low or "if you" in low):
            return False
    return ADDRESSED_TO_AI_RE.search(line) is not None


_CHAT_AGAIN_RE = re.compile(r"^[a-z][a-z']*[,;.!?]?(?:\s+\S+){3,}")
_BULLET_RE = re.compile(r"^(?:[-*+•]|\d{1,3}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")


def paste_goes_on(raw: str, stripped: str) -> bool:
    """Whether a line after an announced paste is still the paste: not blank, not a fence
    or a bullet, and not a line of lower-case chat."""
    return bool(
        stripped
        and _BULLET_RE.match(stripped) is None
        and _FENCE_RE.match(raw) is None
        and not (_CHAT_AGAIN_RE.match(stripped) and not stripped.split(maxsplit=1)[0].endswith(":"))
    )


# `- **Title** — text` / `**Title**: text`: the bold lead names the statement.
_LEAD_RE = re.compile(
    r"^(?:\*\*|__)(?P<lead>[^*_\n]{2,70}?)(?:\*\*|__)[ \t]*(?:[:—–-]+[ \t]*|(?=[A-Z(`]))"
    r"(?P<rest>.*)$"
)
_LEAD_COLON_INSIDE_RE = re.compile(r"^(?P<lead>.+?):$")

# Chat is often lower-case ("...same result. and dates are UTC"): a lower-case word after
# a full stop starts a sentence too, unless an abbreviation ends the piece (merged below).
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])[\"')\]]*[ \t]+(?=[A-Za-z0-9\"'`(\[*_])")
_STOP_INSIDE_RE = re.compile(r"[.!?][\"')\]]*[ \t]")
_ABBREV_END_RE = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|esp|resp|Mr|Ms|Dr|Fig|Sec)\.|\b[A-Z]\.)$"
)
# "No. 5" abbreviates "number"; "No. We stay with FreeRTOS." is an answer and a sentence.
_NUMBER_ABBREV_RE = re.compile(r"\bNo\.$")
_MD_LINK_RE = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_DUNDER_RE = re.compile(r"(?<!\w)__[A-Za-z0-9]\w{0,40}?__(?!\w)")
_EMPHASIS_RE = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC_RE = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_STRIKE_RE = re.compile(r"~~(.+?)~~")
_CODE_START_RE = re.compile(
    r"^(?:def |class |import |from [\w.]+ import |const |let |var |function |return |if ?\(|"
    r"for ?\(|while ?\(|#include|SELECT |INSERT |UPDATE |CREATE |export |async def |@\w+|"
    r"[{}\])]|</?[a-zA-Z]+[ >])"
)
# Deletion table for str.translate: the length lost is the number of code symbols.
# First characters of `_CODE_START_RE`'s alternatives: other sentences skip the pattern.
_CODE_FIRST = frozenset("dcifvlrweaSIUC@#{}])<")
_CODE_CHARS = str.maketrans("", "", "{}();=<>$\\|[]")

# Short sentences ("No.", "Yes.") are kept: they open turns that accept or reject.
MIN_SENTENCE_CHARS = 2
MAX_SENTENCE_CHARS = 420
MAX_RAW_SENTENCE_CHARS = 2 * MAX_SENTENCE_CHARS
# Lines longer than this are never matched against the line patterns (see `_TurnReader`).
MAX_PATTERN_LINE = 400
MAX_MARKERS = 24
# A user turn this long with this many headings is a pasted document or prompt template
# (slash-command expansion, story template), not the user talking.
PASTED_MIN_CHARS = 1500
PASTED_MIN_HEADINGS = 3


@dataclass(slots=True)
class Turn:
    """One speaker turn: who spoke and the raw lines, in order."""

    speaker: Speaker
    index: int
    lines: list[str]


@dataclass(slots=True)
class Statement:
    """One sentence of prose with where it came from.

    `section` is the nearest heading above it in the same turn, `lead` the bold lead-in of
    its list item (`- **Immutable updates** — ...`), `pasted` marks a user turn that reads as
    a pasted document, `first_in_turn` the turn's opening sentence (acknowledgements and
    corrections live there).
    """

    speaker: Speaker
    turn: int
    text: str
    low: str = ""
    section: str = ""
    lead: str = ""
    pasted: bool = False
    first_in_turn: bool = False
    bullet: bool = False
    # The paragraph or list item of the conversation the sentence belongs to (its count).
    unit: int = -1


def _speaker_of(name: str) -> Speaker:
    lowered = name.lower()
    if lowered in _USER_NAMES:
        return Speaker.USER
    if lowered in _AGENT_NAMES:
        return Speaker.AGENT
    return Speaker.OTHER


def _speaker_mark(line: str, in_fence: bool) -> tuple[Speaker, str] | None:
    # Cheap rejection first: a mark has a colon near the start or is a heading.
    if ":" not in line[:40] and "#" not in line[:8]:
        return None
    match = _SPEAKER_RE.match(line)
    if match is None:
        return None
    name = match.group("name")
    # Lower-case names are code (`user: User = ...`), not speakers.
    if not name[0].isupper():
        return None
    rest = match.group("rest")
    if match.group("hash"):
        if rest and not match.group("colon"):
            return None
    elif not match.group("colon"):
        return None
    # Inside a fence only a plain `Name: ` at column 0 closes it (a truncated code block).
    if in_fence and (match.group("hash") or line[:1].isspace()):
        return None
    return _speaker_of(name), rest


# Commands typed to the agent's tool rather than said to it (aider's and Claude Code's): a
# user turn's opening line that is one holds none of the user's words. "/code …", "/ask …"
# carry a message; aider's file and run commands take arguments; any command stands alone.
# ("/status returns 500 since the deploy" is a route, not a command: only aider's commands
# take words after them.)
_TOOL_COMMAND_RE = re.compile(
    r"^/(?:(?:code|ask|architect|context)\s+(?P<message>\S.*)"
    r"|(?:add|drop|read-only|run|test|lint|git|commit|model|models|web|load|save|ls|paste|"
    r"chat-mode|editor|help)\s+\S.*"
    r"|(?:add|drop|read-only|run|test|lint|git|commit|undo|diff|clear|reset|model|models|"
    r"tokens|map|map-refresh|web|paste|voice|settings|editor|copy|copy-context|report|exit|"
    r"quit|chat-mode|load|save|ls|help|compact|init|review|config|cost|memory|mcp|resume|"
    r"agents|hooks|status|doctor|login|logout|permissions|vim|bug|pr-comments|"
    r"terminal-setup|add-dir|export|release-notes)\s*)$"
)


# The app's own rendering of an agent session (app/sources/render.py) lists what happened
# between the agent's words inside its block: `[tool] Name: gist` for a call, `[tool error] …`
# for a failed one, `[tool result] …` for a run's checked outcome, `[interrupted by user]`.
# The dialogue reader wants them as turns of their own, as a transcript shows them: a call is
# the agent's turn, its output a turn of its own (written as the user's, where tool output
# arrives in the API), and the agent's next words a new turn.
_RENDERED_EVENT_RE = re.compile(
    r"^\[(?P<kind>tool|tool error|tool result|interrupted by user)\](?: (?P<rest>.*))?$"
)


# Lines of the app's rendering that neither speaker said: injected meta text (skill prompts,
# reminders), the compaction summary (the model's retelling of what came before), a slash
# command and its output. Dropped: whatever they say is nobody's rule.
_NOBODYS_LINE_RE = re.compile(r"^\[(?:meta|context summary|command|command output)\] ")


def _rendered_event(line: str) -> tuple[Speaker, str] | None:
    """(speaker, line as a transcript writes it) for an event line of the app's rendering."""
    match = _RENDERED_EVENT_RE.match(line) if line[:2] in ("[t", "[i") else None
    if match is None:
        return None
    kind, rest = match.group("kind"), (match.group("rest") or "").strip()
    if kind == "tool":
        return (Speaker.AGENT, f"[tool: {rest}]") if rest else None
    if kind == "interrupted by user":
        return Speaker.USER, "[Request interrupted by user]"
    return Speaker.USER, f"[tool result: {rest}]"


def _takes_event(turn: Turn, speaker: Speaker) -> bool:
    """Whether an event line joins this turn: only when the turn is still empty (the event
    came on its speaker's own line). Each call is a turn of its own, as in a transcript."""
    return turn.speaker is speaker and not turn.lines


def split_turns(text: str) -> list[Turn]:
    """Speaker turns of a conversation; text without any speaker mark is one user turn."""
    turns: list[Turn] = []
    current: Turn | None = None
    in_fence = False
    # The speaker of the block being read, and whether an event of the app's rendering came
    # last (the speaker's next words then open a turn of their own).
    block = Speaker.USER
    after_event = False
    for line in text.splitlines():
        mark = _speaker_mark(line, in_fence)
        if mark is not None:
            speaker, rest = mark
            in_fence = False
            if speaker is Speaker.USER and rest[:1] == "/":
                command = _TOOL_COMMAND_RE.match(rest)
                if command is not None:
                    # "/code make the bubble move": the message; "/drop x", "/run pytest":
                    # nothing the user said (what follows a "/run" is its output)
                    rest = command.group("message") or ""
            current = Turn(speaker, len(turns), [])
            turns.append(current)
            block, after_event = speaker, False
            if not rest.strip():
                continue
            if _rendered_event(rest) is None:
                current.lines.append(rest)
                continue
            line = rest
        if (
            not in_fence
            and current is not None
            and line[:1] == "["
            and _NOBODYS_LINE_RE.match(line)
        ):
            after_event = True
            continue
        event = None if in_fence or current is None else _rendered_event(line)
        if event is not None and current is not None:
            speaker, written = event
            if not _takes_event(current, speaker):
                current = Turn(speaker, len(turns), [])
                turns.append(current)
            current.lines.append(written)
            after_event = True
            continue
        if after_event:
            if not line.strip():
                continue
            current = Turn(block, len(turns), [])
            turns.append(current)
            after_event = False
        if _FENCE_RE.match(line):
            in_fence = not in_fence
        if current is None:
            # Text before the first mark (or a conversation without marks) is the user's.
            current = Turn(Speaker.USER, 0, [])
            turns.append(current)
        current.lines.append(line)
    return turns


def _clean_inline(text: str) -> str:
    # Most sentences carry no markup; the substitutions only run when they could apply.
    if "](" in text:
        text = _MD_LINK_RE.sub(r"\1", text)
    if "*" in text or "__" in text:
        # `__init__`, `__tests__`: a name, not bold markup; kept while the markers go.
        dunders = _DUNDER_RE.findall(text) if "__" in text else []
        if dunders:
            text = _DUNDER_RE.sub("\x00", text)
        # Pairing many markers costs quadratic time and means nothing: just drop them.
        if text.count("*") <= MAX_MARKERS:
            text = _EMPHASIS_RE.sub(r"\2", text)
            text = _ITALIC_RE.sub(r"\1", text)
        text = text.replace("**", "").replace("__", " ")
        for name in dunders:
            text = text.replace("\x00", name, 1)
    if "~~" in text:
        text = _STRIKE_RE.sub(r"\1", text)
    return " ".join(text.split())


def looks_like_code(sentence: str) -> bool:
    """Source code or data rather than prose (symbol-dense, or opens like a statement)."""
    if sentence[:1] in _CODE_FIRST and _CODE_START_RE.match(sentence):
        return True
    symbols = len(sentence) - len(sentence.translate(_CODE_CHARS))
    if symbols > 6 and symbols / len(sentence) > 0.06:
        return True
    return sentence.endswith((";", "{", "}", "=>", "->"))


# "Thank you. 1) You're right … 2) No undo migrations; …": points numbered inside a paragraph
# start their sentences with the number, which says nothing.
_INLINE_NUMBER_RE = re.compile(r"^\(?\d{1,2}\)\s+(?=\S)")
_INLINE_NUMBER_FIRST = frozenset("(0123456789")


def split_sentences(paragraph: str) -> list[str]:
    """Sentences of one paragraph (abbreviations such as \"e.g.\" do not end one)."""
    pieces = _SENTENCE_SPLIT_RE.split(paragraph)
    # Each sentence as its pieces, joined once at the end (joining as it goes made a paragraph
    # of a thousand "e.g." quadratic), with the last characters read by the tests below.
    merged: list[list[str]] = []
    tail = ""
    for piece in pieces:
        # "e.g. Foo" and "vs. Bar" do not end a sentence (only the tail can hold one).
        if merged and (
            _ABBREV_END_RE.search(tail)
            or (piece[:1].isdigit() and _NUMBER_ABBREV_RE.search(tail[-4:]))
            or _operator_mark(merged[-1][0], tail, piece)
        ):
            merged[-1].append(piece)
            tail = f"{tail} {piece}"[-_TAIL:]
        else:
            merged.append([piece])
            tail = piece[-_TAIL:]
    return [" ".join(parts) for parts in merged]


_TAIL = 12  # the longest ending the tests above read ("approx." and a space before it)


# "propagate with ? and let AppError carry it", "count === 1 ? one : other": a question mark
# standing alone as a word is Rust's operator or a conditional. When the words after it go
# on in lower case and the sentence does not open as a question, it ends nothing ("is it ok ?
# i think so" still asks). A mark closing a word ("String? fixed it") is left alone: people
# type their questions that way too ("were you at FlutterCon? a colleague …").
_OPENS_A_QUESTION_RE = re.compile(
    r"(?i)^\W*(?:(?:so|and|but|or|also|ok(?:ay)?|hmm|hey|q)\W+)*(?:what|why|how|which|who|"
    r"whose|when|where|is|are|am|was|were|do|does|did|can|could|should|shall|would|will|"
    r"have|has|had|may|might|must|any|anyone|anything|isn'?t|aren'?t|doesn'?t|don'?t|"
    r"didn'?t|can'?t|couldn'?t|shouldn'?t|wouldn'?t|won'?t)\b"
)


def _operator_mark(start: str, tail: str, after: str) -> bool:
    """Whether a sentence opening with `start` and ending with `tail` ends on a question mark
    that is an operator, and `after` goes on."""
    return (
        after[:1].islower()
        and tail.endswith("?")
        and tail[-2:-1].isspace()
        and _OPENS_A_QUESTION_RE.match(start) is None
    )


@dataclass(slots=True)
class _Unit:
    """A paragraph or list item before sentence splitting."""

    text: str
    section: str
    lead: str
    bullet: bool


class _TurnReader:
    """Walks the lines of one turn, dropping non-prose and grouping prose into units."""

    def __init__(self, *, user: bool = False) -> None:
        self.user = user
        self.units: list[_Unit] = []
        self.headings = 0
        self._section = ""
        self._buffer: list[str] = []
        self._lead = ""
        self._bullet = False

    def _flush(self) -> None:
        if self._buffer:
            text = " ".join(self._buffer)
            self.units.append(_Unit(text, self._section, self._lead, self._bullet))
        self._buffer = []
        self._lead = ""
        self._bullet = False

    def _heading(self, text: str) -> None:
        self._flush()
        self.headings += 1
        self._section = _clean_inline(text).rstrip(":").strip()

    def _start_unit(self, line: str, bullet: bool) -> None:
        self._flush()
        self._bullet = bullet
        lead = _LEAD_RE.match(line)
        if lead is not None:
            name = lead.group("lead").strip()
            inside = _LEAD_COLON_INSIDE_RE.match(name)
            self._lead = (inside.group("lead") if inside else name).strip()
            line = lead.group("rest")
        self._buffer.append(line)

    def _prose(self, stripped: str) -> None:
        bullet = _BULLET_RE.match(stripped)
        if bullet is not None:
            self._start_unit(stripped[bullet.end() :], bullet=True)
        elif not self._buffer:
            self._start_unit(stripped, bullet=False)
        else:
            self._buffer.append(stripped)

    def read(self, lines: list[str]) -> None:
        """Group the prose lines of a turn into units, dropping everything else."""
        skip_until = ""  # the end of a block that is no prose: "</think>", "-->"
        in_fence = in_traceback = in_tool = in_paste = False
        depth = 0
        for raw in lines:
            if in_paste:
                if paste_goes_on(raw, raw.strip()):
                    continue
                in_paste = False
            if in_fence:
                if _FENCE_RE.match(raw):
                    in_fence = False
                continue
            if skip_until:
                if skip_until in raw:
                    skip_until = ""
                continue
            stripped = raw.strip()
            if in_tool:
                # Bracketed lines inside the output ("[INFO] …") do not end it; the bracket
                # that closes "[tool result: …" does.
                depth += stripped.count("[") - stripped.count("]")
                in_tool = depth > 0
                continue
            if not stripped:
                in_traceback = False
                self._flush()
                continue
            if self.user and addressed_to_ai(stripped):
                self._flush()
                continue
            if in_traceback:
                if raw[:1] in " \t" or (
                    len(stripped) <= MAX_PATTERN_LINE and _NOISE_ALPHA_RE.match(stripped)
                ):
                    continue
                in_traceback = False
            head = stripped[0]
            if len(stripped) > MAX_PATTERN_LINE:
                # Stack frames, headings and tags are short; matching line patterns against a
                # huge line could backtrack for seconds, so it can only be prose.
                self._prose(stripped)
            # Dispatch on the first character: a prose line pays for one or two tests.
            elif head.isalpha():
                if _NOISE_ALPHA_RE.match(stripped):
                    self._flush()
                    in_traceback = stripped.startswith("Traceback")
                elif stripped[-1] == ":" and (label := _LABEL_LINE_RE.match(stripped)):
                    self._heading(label.group("text"))
                elif self._data(raw, stripped):
                    self._flush()
                elif self.user and _ANNOUNCES_PASTE_LINE_RE.match(stripped):
                    # "pasting the email from ops": the lines after it are the paste
                    self._flush()
                    in_paste = True
                elif (
                    self.user
                    and ":" in stripped
                    and (
                        (announced := _pasted_after(stripped))
                        or (
                            stripped[-1] == ":"
                            and (announced := _ANNOUNCES_PASTE_RE.search(stripped))
                        )
                    )
                ):
                    # "ci is red, pasting the log from the build job: Run make …": the user's
                    # words end where the paste starts.
                    said = stripped[: announced.start()].rstrip(" ,;")
                    if said:
                        self._prose(said)
                    self._flush()
                    in_paste = True
                else:
                    self._prose(stripped)
            elif head in "`~" and _FENCE_RE.match(raw):
                self._flush()
                in_fence = True
            elif head == "[" and _TOOL_LINE_RE.match(stripped):
                self._flush()
                depth = stripped.count("[") - stripped.count("]")
                in_tool = depth > 0
            elif head == "<" and stripped.startswith("<!--"):
                # An HTML comment: hidden markup, and where planted instructions hide.
                self._flush()
                if "-->" not in stripped[4:]:
                    skip_until = "-->"
            elif head == "<" and (tag := _TAG_OPEN_RE.match(stripped)):
                self._flush()
                name = tag.group("tag")
                if _BLOCK_TAG_RE.match(name) and f"</{name}>" not in stripped[tag.end() :]:
                    skip_until = f"</{name}>"
            elif head == ">" or _NOISE_OTHER_RE.match(stripped):
                self._flush()
            elif head == "#" and (heading := _HEADING_RE.match(stripped)):
                self._heading(heading.group("text"))
            elif head in "*_" and (bold := _BOLD_LINE_RE.match(stripped)):
                self._heading(bold.group("text"))
            elif self._data(raw, stripped):
                self._flush()
            else:
                self._prose(stripped)
        self._flush()

    def _data(self, raw: str, stripped: str) -> bool:
        """A table row printed by a tool ("id | bigint | not null"), or a block indented as
        code after a break: data somebody pasted, not what anybody said."""
        if "|" in stripped and (stripped.count(" | ") >= 2 or "  |" in stripped):
            return True
        return (
            raw[:1] in " \t"
            and not self._buffer
            and (raw.startswith("    ") or raw[0] == "\t")
            and _BULLET_RE.match(stripped) is None
        )


@dataclass(slots=True)
class Reading:
    """The statements of a conversation, and the turns where a section was skipped."""

    statements: list[Statement]
    skipped_turns: set[int]


def read_statements(
    turns: list[Turn], skip_section: Callable[[str], bool] | None = None
) -> Reading:
    """Every prose sentence of every turn, in conversation order.

    `skip_section(heading)` drops the prose under headings the caller never judges (story
    and report sections), saving the sentence work; turns where that happened are reported.
    """
    statements: list[Statement] = []
    skipped: set[int] = set()
    verdicts: dict[str, bool] = {}
    units = 0
    for turn in turns:
        if turn.speaker is Speaker.OTHER or not turn.lines:
            continue
        reader = _TurnReader(user=turn.speaker is Speaker.USER)
        reader.read(turn.lines)
        size = sum(len(line) for line in turn.lines)
        pasted = (
            turn.speaker is Speaker.USER
            and size >= PASTED_MIN_CHARS
            and reader.headings >= PASTED_MIN_HEADINGS
        )
        first = True
        speaker, index = turn.speaker, turn.index
        for unit in reader.units:
            units += 1
            if skip_section is not None and unit.section:
                verdict = verdicts.get(unit.section)
                if verdict is None:
                    verdict = verdicts[unit.section] = skip_section(unit.section)
                if verdict:
                    skipped.add(turn.index)
                    continue
            lead = _clean_inline(unit.lead) if unit.lead else ""
            text = unit.text
            # Most units are one sentence; the splitter only runs when a stop is inside.
            pieces = split_sentences(text) if _STOP_INSIDE_RE.search(text) else (text,)
            for piece in pieces:
                if len(piece) > MAX_RAW_SENTENCE_CHARS:
                    continue  # markup cannot shrink it to a sentence; skip the cleaning work
                if piece[:1] in _INLINE_NUMBER_FIRST:
                    piece = _INLINE_NUMBER_RE.sub("", piece, count=1)
                sentence = _clean_inline(piece)
                if not MIN_SENTENCE_CHARS <= len(sentence) <= MAX_SENTENCE_CHARS:
                    continue
                if looks_like_code(sentence):
                    continue
                statements.append(
                    Statement(
                        speaker,
                        index,
                        sentence,
                        sentence.lower(),
                        unit.section,
                        lead,
                        pasted,
                        first,
                        unit.bullet,
                        units,
                    )
                )
                first = False
    return Reading(statements, skipped)
