"""Claude Code transcripts: `~/.claude/projects/<encoded cwd>/<sessionId>.jsonl`.

Owns reading one session (plus its subagent transcripts) into threads and finding sessions
in a projects folder. Branch and working directory are taken from every message line, so a
session that switches branch (or repository) becomes one thread per segment: the first
segment keeps the session id, later ones are `<sessionId>#2`, `#3`, ... Assistant responses
split over several lines are merged by `message.id`. Subagent conversations - sidechain
lines inside the session (older versions), `agent_progress` records, and
`<sessionId>/subagents/agent-*.jsonl` or `agent-*.jsonl` files beside the session - become
side conversations of the thread that started them, never threads of their own. Compaction
summaries, `isMeta` text, command wrappers and interruptions are marked as such. Unknown
record types and malformed lines are counted, never fatal.

Speed: most bytes of a transcript are tool output and hook progress, which are never
rendered, so those lines are recognised from their first bytes and skipped unparsed (a
failed tool call, a subagent's report and inline sidechain lines are still parsed). Lines
above `BIG_LINE` have inline base64 blanked before parsing; subagent progress records that
large are skipped and counted.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from app.sources.gitinfo import last_component, project_name, repo_root
from app.sources.jsonl import (
    BAD_RECORDS,
    BIG_LINE,
    RECORD_ERRORS,
    UNKNOWN_TYPES,
    clip,
    iter_lines,
    loads,
    may_hold_summary,
    parse_time,
    read_head,
    run_summary,
    strip_base64,
    tool_line,
)
from app.sources.manifests import manifest_line
from app.sources.models import (
    ASSISTANT,
    COMMAND,
    COMMAND_OUTPUT,
    INTERRUPT,
    MANIFEST,
    META,
    NO_BRANCH,
    SUMMARY,
    SYSTEM,
    TEXT,
    TOOL_ERROR,
    TOOL_OUTCOME,
    USER,
    Message,
    ParsedThread,
    ReadStats,
    SideConversation,
    ThreadContent,
)

SOURCE = "claude-code"

KNOWN_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "progress",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "custom-title",
        "ai-title",
        "worktree-state",
        "pr-link",
        "attachment",
    }
)
_REMINDER_RE = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_TAG_RE = re.compile(r"<(command-name|command-message|command-args)>(.*?)</\1>", re.DOTALL)
_OUTPUT_TAGS = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-stdout>",
    "<bash-stderr>",
)
_BASH_INPUT_RE = re.compile(r"<bash-input>(.*?)</bash-input>", re.DOTALL)
_SESSION_ID_RE = re.compile(rb'"sessionId":\s?"([^"]{1,200})"')
_TOOL_USE_ID_RE = re.compile(rb'"tool_use_id":"([^"]{1,200})"')
_UUID_RE = re.compile(r"^[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$")
_NOISE_PREFIXES = (b'{"type":"file-history-snapshot"', b'{"type":"queue-operation"')
# A Read result of a dependency manifest: parsed for its checked dependency line.
_MANIFEST_READ_RE = re.compile(
    rb'"filePath":"[^"]*(?:package\.json|pyproject\.toml|Cargo\.toml|go\.mod)"'
)

# A Bash run's result record, and the user's answers to the agent's questions.
_COMMAND_RESULT = b'"toolUseResult":{"stdout"'
_ANSWERS = b'"toolUseResult":{"questions"'

LARGE_PROGRESS = "large subagent progress records (skipped unparsed)"
ORPHAN_SUBAGENTS = "subagent transcripts without their session"


def _block_text(content: object) -> str:
    """Text of a string or of the text blocks of a list (tool_result content, etc.)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(parts)
    return ""


def _command_outcome(record: dict[str, Any]) -> str:
    """The pass summary of a successful Bash run (its `toolUseResult` holds `stdout`)."""
    result = record.get("toolUseResult")
    if not isinstance(result, dict):
        return ""
    stdout = result.get("stdout")
    if result.get("interrupted") or not isinstance(stdout, str) or not stdout:
        return ""
    return run_summary(stdout)


_MAX_QUESTION = 300
_MAX_OPTION = 200
_MAX_ANSWER = 2000
_MAX_HEADER = 40


def _answered_questions(record: dict[str, Any], ts: datetime | None) -> list[Message]:
    """The agent's questions (AskUserQuestion) and what the user chose or typed: the
    question with its options as the agent's words, the answer as the user's.

    The tool result's `toolUseResult` holds both, `{"questions": [{"question", "header",
    "options": [{"label", "description"}]}], "answers": {question: answer}}`; the answer is
    what the user picked in Claude Code's dialog, or wrote in its "Other" field.
    """
    result = record.get("toolUseResult")
    if not isinstance(result, dict):
        return []
    questions, answers = result.get("questions"), result.get("answers")
    if not isinstance(questions, list) or not isinstance(answers, dict):
        return []
    out: list[Message] = []
    for entry in questions:
        if not isinstance(entry, dict):
            continue
        question = entry.get("question")
        if not isinstance(question, str):
            continue
        answer = answers.get(question)
        if not isinstance(answer, str) or not answer.strip():
            continue
        # The dialog's chip ("Rig prefix", "Tools", at most 12 characters) names what the
        # question is about; it leads the question as its subject.
        header = entry.get("header")
        asked = clip(question, _MAX_QUESTION)
        if isinstance(header, str) and 0 < len(header.strip()) <= _MAX_HEADER:
            asked = f"{header.strip()}: {asked}"
        lines = [asked]
        for option in entry.get("options") or []:
            if not isinstance(option, dict) or not isinstance(option.get("label"), str):
                continue
            label = clip(option["label"], _MAX_OPTION)
            about = option.get("description")
            lines.append(
                f"- **{label}**: {clip(about, _MAX_OPTION)}"
                if isinstance(about, str) and about.strip()
                else f"- **{label}**"
            )
        out.append(Message(ASSISTANT, "\n".join(lines), ts, TEXT))
        out.append(Message(USER, answer.strip()[:_MAX_ANSWER], ts, TEXT))
    return out


def user_text_message(text: str, ts: datetime | None) -> Message | None:
    """Classify text found in a user line: the user's words, a command, or injected text."""
    if "<system-reminder>" in text:
        text = _REMINDER_RE.sub("", text)
    text = text.strip()
    if not text:
        return None
    if text.startswith("[Request interrupted by user"):
        return Message(SYSTEM, text.strip("[]"), ts, INTERRUPT)
    if "<command-name>" in text or "<command-message>" in text:
        tags = {name: value.strip() for name, value in _TAG_RE.findall(text)}
        name = tags.get("command-name") or "/" + tags.get("command-message", "")
        args = tags.get("command-args", "")
        if args:
            return Message(USER, f"{name} {args}", ts, TEXT)
        return Message(SYSTEM, name, ts, COMMAND)
    if text.startswith(_OUTPUT_TAGS):
        inner = re.sub(r"</?[a-z-]+>", " ", text)
        return Message(SYSTEM, clip(inner, 400), ts, COMMAND_OUTPUT)
    if text.startswith("<bash-input>"):
        match = _BASH_INPUT_RE.search(text)
        return Message(SYSTEM, "! " + (match.group(1).strip() if match else ""), ts, COMMAND)
    if text.startswith("<local-command-caveat>"):
        # Boilerplate Claude Code puts before local command output; it says nothing.
        return None
    return Message(USER, text, ts, TEXT)


def _manifest_message(record: dict[str, Any], ts: datetime | None) -> Message | None:
    """The dependency line of a manifest this tool result read, as a `manifest` message."""
    result = record.get("toolUseResult")
    read = result.get("file") if isinstance(result, dict) else None
    if not isinstance(read, dict):
        return None
    path, content = read.get("filePath"), read.get("content")
    if not isinstance(path, str) or not isinstance(content, str):
        return None
    cwd = record.get("cwd")
    line = manifest_line(path, content, cwd if isinstance(cwd, str) else "")
    return None if line is None else Message(SYSTEM, line, ts, MANIFEST)


class _Conversation:
    """Messages of one segment or side conversation, with assistant lines merged by id."""

    __slots__ = ("by_id", "messages")

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.by_id: dict[str, Message] = {}

    def add_record(self, record: dict[str, Any]) -> None:
        """Add the messages of one `user`/`assistant` record."""
        message = record.get("message")
        if not isinstance(message, dict):
            return
        ts = parse_time(record.get("timestamp"))
        if record.get("type") == "assistant":
            self._add_assistant(record, message, ts)
        else:
            self._add_user(record, message, ts)

    def _add_user(
        self, record: dict[str, Any], message: dict[str, Any], ts: datetime | None
    ) -> None:
        content = message.get("content")
        manifest = _manifest_message(record, ts)
        if manifest is not None:
            self.messages.append(manifest)
        if record.get("isCompactSummary"):
            text = _block_text(content).strip()
            if text:
                self.messages.append(Message(SYSTEM, text, ts, SUMMARY))
            return
        if record.get("isMeta"):
            text = _block_text(content).strip()
            if text and not text.startswith("<local-command-caveat>"):
                self.messages.append(Message(SYSTEM, text, ts, META))
            return
        if isinstance(content, str):
            found = user_text_message(content, ts)
            if found is not None:
                self.messages.append(found)
            return
        if not isinstance(content, list):
            return
        texts: list[str] = []
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                value = block.get("text")
                if isinstance(value, str):
                    texts.append(value)
            elif kind == "tool_result" and block.get("is_error"):
                error = _block_text(block.get("content"))
                if "<tool_use_error>" in error:
                    error = error.replace("<tool_use_error>", "").replace("</tool_use_error>", "")
                self.messages.append(Message(SYSTEM, clip(error, 300), ts, TOOL_ERROR))
        outcome = _command_outcome(record)
        if outcome:
            self.messages.append(Message(SYSTEM, outcome, ts, TOOL_OUTCOME))
        self.messages.extend(_answered_questions(record, ts))
        if texts:
            found = user_text_message("\n".join(texts), ts)
            if found is not None:
                self.messages.append(found)

    def _add_assistant(
        self, record: dict[str, Any], message: dict[str, Any], ts: datetime | None
    ) -> None:
        content = message.get("content")
        texts: list[str] = []
        tools: list[str] = []
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                kind = block.get("type")
                if kind == "text":
                    text = block.get("text")
                    if isinstance(text, str) and text.strip():
                        texts.append(text.strip())
                elif kind in ("tool_use", "server_tool_use"):
                    tools.append(tool_line(str(block.get("name") or "tool"), block.get("input")))
        text = "\n\n".join(texts)
        if record.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
            if text:
                self.messages.append(Message(SYSTEM, text, ts, META))
            return
        msg_id = message.get("id")
        existing = self.by_id.get(msg_id) if isinstance(msg_id, str) else None
        if existing is not None:
            if text:
                existing.text = f"{existing.text}\n\n{text}" if existing.text else text
            existing.tools.extend(tools)
            return
        if not text and not tools:
            return
        found = Message(ASSISTANT, text, ts, TEXT, tools)
        self.messages.append(found)
        if isinstance(msg_id, str):
            self.by_id[msg_id] = found


class _Segment:
    __slots__ = ("branch", "conversation", "ended", "project", "started")

    def __init__(self, project: str, branch: str) -> None:
        self.project = project
        self.branch = branch
        self.conversation = _Conversation()
        self.started: datetime | None = None
        self.ended: datetime | None = None

    def touch(self, ts: datetime | None) -> None:
        if ts is None:
            return
        if self.started is None or ts < self.started:
            self.started = ts
        if self.ended is None or ts > self.ended:
            self.ended = ts


class _Side:
    __slots__ = ("conversation", "id", "segment", "started", "title")

    def __init__(self, side_id: str, title: str, segment: int) -> None:
        self.id = side_id
        self.title = title
        self.segment = segment
        self.conversation = _Conversation()
        self.started: datetime | None = None


class _Session:
    """State while reading one session file and its subagent files."""

    def __init__(self, path: Path, stats: ReadStats) -> None:
        self.path = path
        self.stats = stats
        self.session_id: str | None = None
        self.segments: list[_Segment] = []
        self.sides: dict[str, _Side] = {}
        self.side_of_uuid: dict[str, str] = {}
        self.task_titles: dict[str, str] = {}
        # Task tool results (the subagent's report) and which side each Task started.
        self.task_results: dict[str, str] = {}
        self.task_prompts: dict[str, str] = {}
        self.side_tool: dict[str, str] = {}
        self.known_roots: list[str] = []
        self.project_cache: dict[str, str] = {}

    # -- segments -------------------------------------------------------------------------

    def _project(self, cwd: str) -> str:
        cached = self.project_cache.get(cwd)
        if cached is not None:
            return cached
        if repo_root(cwd) is not None:
            name = project_name(cwd)
        else:
            # The folder is not on this machine: a subfolder of a working directory seen
            # earlier (the agent ran `cd src`) stays in that directory's project.
            parent = next(
                (r for r in self.known_roots if cwd.startswith((r + "/", r + "\\"))), None
            )
            if parent is not None:
                name = self.project_cache[parent]
            else:
                name = last_component(cwd) or "(unknown project)"
                self.known_roots.append(cwd)
        self.project_cache[cwd] = name
        return name

    def _segment_for(self, record: dict[str, Any]) -> _Segment:
        current = self.segments[-1] if self.segments else None
        cwd = record.get("cwd")
        branch = record.get("gitBranch")
        project = self._project(cwd) if isinstance(cwd, str) and cwd else None
        if project is None:
            project = current.project if current else last_component(self.path.parent.name)
        if not isinstance(branch, str):
            branch_name = current.branch if current else NO_BRANCH
        else:
            branch_name = branch or NO_BRANCH
        if current is None or (current.project, current.branch) != (project, branch_name):
            current = _Segment(project, branch_name)
            self.segments.append(current)
        return current

    # -- records --------------------------------------------------------------------------

    def add_line(self, line: bytes) -> None:
        """Read one line; a record of an unexpected shape is counted and skipped."""
        try:
            self._add_line(line)
        except RECORD_ERRORS:
            self.stats.skip(BAD_RECORDS)

    def _add_line(self, line: bytes) -> None:
        """Read one line. Lines whose content is never rendered are dropped unparsed.

        Parsing is most of the cost of a scan, and most bytes of a transcript are tool
        output and hook progress, so those are recognised from the first bytes of the line
        (Claude Code writes compact JSON with these keys first) and skipped.
        """
        if line.startswith(_NOISE_PREFIXES):
            return
        head = line[:2048]
        if b'"type":"progress"' in head:
            if b'"data":{"message":' not in head and b'"agent_progress"' not in head:
                return
            if len(line) > BIG_LINE:
                self.stats.skip(LARGE_PROGRESS)
                return
        elif (
            b'"type":"tool_result"' in head
            # Inline sidechain lines are parsed: their uuids chain a side conversation.
            and b'"isSidechain":true' not in head
            and self._plain_tool_output(line, head)
        ):
            return
        if len(line) > BIG_LINE:
            line = strip_base64(line)
        record = loads(line, self.stats)
        if record is None:
            return
        kind = record.get("type")
        if kind in ("user", "assistant"):
            self._message_record(record)
        elif kind == "progress":
            self._progress_record(record)
        elif not isinstance(kind, str) or kind not in KNOWN_TYPES:
            self.stats.skip(UNKNOWN_TYPES)

    def _plain_tool_output(self, line: bytes, head: bytes) -> bool:
        """A successful tool result that is not a subagent's report, a manifest read or a
        command run that may end with a pass summary."""
        if b'"is_error":true' in line or b'"type":"text"' in line:
            return False
        if _COMMAND_RESULT in line and may_hold_summary(line):
            return False
        if _ANSWERS in line:
            return False
        if b'"filePath":"' in line and _MANIFEST_READ_RE.search(line):
            return False
        if self.task_titles:
            match = _TOOL_USE_ID_RE.search(head)
            if match is None or match.group(1).decode("utf-8", "replace") in self.task_titles:
                return False
        return True

    def _message_record(self, record: dict[str, Any]) -> None:
        if self.session_id is None:
            sid = record.get("sessionId")
            if isinstance(sid, str) and sid:
                self.session_id = sid
        if record.get("isSidechain"):
            self._sidechain_record(record)
            return
        segment = self._segment_for(record)
        segment.touch(parse_time(record.get("timestamp")))
        if record.get("type") == "assistant":
            self._remember_task_titles(record)
        elif self.task_titles:
            self._remember_task_results(record)
        segment.conversation.add_record(record)

    def _remember_task_results(self, record: dict[str, Any]) -> None:
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            tool_id = block.get("tool_use_id")
            if not isinstance(tool_id, str) or tool_id not in self.task_titles:
                continue
            if not block.get("is_error"):
                self.task_results[tool_id] = _block_text(block.get("content"))[:8000]
            result = record.get("toolUseResult")
            agent = result.get("agentId") if isinstance(result, dict) else None
            if isinstance(agent, str) and agent:
                self.side_tool.setdefault(agent, tool_id)

    def _remember_task_titles(self, record: dict[str, Any]) -> None:
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return
        for block in content:
            if (
                isinstance(block, dict)
                and block.get("type") == "tool_use"
                and block.get("name") in ("Task", "Agent")
                and isinstance(block.get("input"), dict)
            ):
                title = block["input"].get("description") or block["input"].get("prompt") or ""
                if isinstance(title, str) and isinstance(block.get("id"), str):
                    self.task_titles[block["id"]] = clip(title, 100)
                    prompt = block["input"].get("prompt")
                    if isinstance(prompt, str) and prompt.strip():
                        self.task_prompts[prompt.strip()] = clip(title, 100)

    def _side(self, side_id: str, title: str) -> _Side:
        side = self.sides.get(side_id)
        if side is None:
            side = _Side(side_id, title, max(len(self.segments) - 1, 0))
            self.sides[side_id] = side
        elif title and not side.title:
            side.title = title
        return side

    def _sidechain_record(self, record: dict[str, Any]) -> None:
        uuid = record.get("uuid")
        parent = record.get("parentUuid")
        side_id = self.side_of_uuid.get(parent) if isinstance(parent, str) else None
        if side_id is None:
            side_id = str(uuid or f"side-{len(self.sides) + 1}")
        if isinstance(uuid, str):
            self.side_of_uuid[uuid] = side_id
        side = self._side(side_id, "")
        self._add_to_side(side, record)

    def _progress_record(self, record: dict[str, Any]) -> None:
        data = record.get("data")
        if not isinstance(data, dict) or data.get("type") != "agent_progress":
            return
        inner = data.get("message")
        if not isinstance(inner, dict) or inner.get("type") not in ("user", "assistant"):
            return
        agent = data.get("agentId")
        side_id = str(agent) if agent else str(record.get("parentToolUseID") or "agent")
        tool_id = record.get("parentToolUseID")
        title = self.task_titles.get(tool_id, "") if isinstance(tool_id, str) else ""
        if not title and isinstance(data.get("prompt"), str):
            title = clip(data["prompt"], 100)
        side = self._side(side_id, title)
        if isinstance(tool_id, str):
            self.side_tool.setdefault(side_id, tool_id)
        self._add_to_side(side, inner)

    def _add_to_side(self, side: _Side, record: dict[str, Any]) -> None:
        ts = parse_time(record.get("timestamp"))
        if ts is not None and (side.started is None or ts < side.started):
            side.started = ts
        side.conversation.add_record(record)
        if not side.title:
            first = next((m for m in side.conversation.messages if m.role == USER), None)
            if first is not None:
                # Inline sidechains (older versions) name no Task: match the prompt instead.
                side.title = self.task_prompts.get(first.text.strip()) or clip(first.text, 100)

    def add_subagent_file(self, path: Path) -> None:
        """A subagent transcript: one side conversation, replacing its progress copy."""
        side_id = path.stem[len("agent-") :] if path.stem.startswith("agent-") else path.stem
        side = _Side(side_id, self.sides[side_id].title if side_id in self.sides else "", 0)
        for line in iter_lines(path, self.stats):
            try:
                self._add_side_line(side, line)
            except RECORD_ERRORS:
                self.stats.skip(BAD_RECORDS)
        if not side.conversation.messages:
            return
        side.segment = self._segment_at(side.started)
        self.sides[side_id] = side

    def _add_side_line(self, side: _Side, line: bytes) -> None:
        """One line of a subagent transcript, added to its side conversation."""
        head = line[:2048]
        if line.startswith(_NOISE_PREFIXES) or b'"type":"progress"' in head:
            return
        if b'"type":"tool_result"' in head and self._plain_tool_output(line, head):
            return
        if len(line) > BIG_LINE:
            line = strip_base64(line)
        record = loads(line, self.stats)
        if record is None:
            return
        kind = record.get("type")
        if kind in ("user", "assistant"):
            self._add_to_side(side, record)
        elif not isinstance(kind, str) or kind not in KNOWN_TYPES:
            self.stats.skip(UNKNOWN_TYPES)

    def _segment_at(self, ts: datetime | None) -> int:
        index = 0
        if ts is None:
            return index
        for i, segment in enumerate(self.segments):
            if segment.started is not None and segment.started <= ts:
                index = i
        return index

    # -- result ---------------------------------------------------------------------------

    def threads(self) -> list[ParsedThread]:
        # The file name is the session id; content is the fallback for renamed copies.
        stem = self.path.stem
        sid = stem if _UUID_RE.match(stem) or not self.session_id else self.session_id
        live = [(i, s) for i, s in enumerate(self.segments) if s.conversation.messages]
        numbering = {index: n for n, (index, _) in enumerate(live)}
        sides_by_segment: dict[int, list[SideConversation]] = {}
        for side in self.sides.values():
            if not side.conversation.messages:
                continue
            tool_id = self.side_tool.get(side.id, "")
            report = self.task_results.get(tool_id, "")
            title = side.title or self.task_titles.get(tool_id, "")
            target = side.segment
            while target not in numbering and target > 0:
                target -= 1
            if target not in numbering and live:
                target = live[0][0]
            sides_by_segment.setdefault(target, []).append(
                SideConversation(side.id, title, side.conversation.messages, side.started, report)
            )
        result = []
        for index, segment in live:
            n = numbering[index]
            messages = segment.conversation.messages
            first_user = next((m.text for m in messages if m.role == USER), "")
            sides = sorted(
                sides_by_segment.get(index, []),
                key=lambda s: (s.started is None, s.started.timestamp() if s.started else 0.0),
            )
            ended = segment.ended
            for conv in sides:
                last = next((m.timestamp for m in reversed(conv.messages) if m.timestamp), None)
                if last is not None and (ended is None or last > ended):
                    ended = last
            result.append(
                ParsedThread(
                    id=sid if n == 0 else f"{sid}#{n + 1}",
                    source=SOURCE,
                    project=segment.project,
                    branch=segment.branch,
                    content=ThreadContent(messages, sides),
                    ref=f"cc-{sid[:8]}" if n == 0 else f"cc-{sid[:8]}-{n + 1}",
                    title=clip(first_user, 80),
                    started=segment.started,
                    ended=ended,
                )
            )
        return result


def read_session(paths: tuple[Path, ...], stats: ReadStats) -> list[ParsedThread]:
    """Read a session file (paths[0]) and its subagent files (the rest) into threads."""
    main = paths[0]
    session = _Session(main, stats)
    for line in iter_lines(main, stats):
        session.add_line(line)
    for sub in paths[1:]:
        session.add_subagent_file(sub)
    return session.threads()


def _session_id_of(path: Path) -> str | None:
    """The parent session id written in a subagent file's first lines."""
    head = read_head(path, 65536)
    if head is None:
        return None
    match = _SESSION_ID_RE.search(head)
    return match.group(1).decode("utf-8", "replace") if match else None


def parent_session(agent: Path) -> Path | None:
    """The session file a subagent transcript belongs to, if it is there."""
    if agent.parent.name == "subagents":
        candidate = agent.parent.parent.parent / f"{agent.parent.parent.name}.jsonl"
    else:
        sid = _session_id_of(agent)
        if sid is None:
            return None
        candidate = agent.parent / f"{sid}.jsonl"
    return candidate if candidate.is_file() else None


def beside_subagents(session: Path) -> list[Path]:
    """Subagent files of one session: `<id>/subagents/agent-*` and older `agent-*` beside it."""
    if session.name.startswith("agent-"):
        return []
    found: list[Path] = []
    folder = session.parent / session.stem / "subagents"
    if folder.is_dir():
        found += sorted(folder.glob("agent-*.jsonl"))
    for agent in sorted(session.parent.glob("agent-*.jsonl")):
        if _session_id_of(agent) == session.stem:
            found.append(agent)
    return found


def find_sessions(folder: Path, stats: ReadStats) -> list[tuple[Path, ...]]:
    """Session files under a projects folder (or one project folder), with their subagents.

    Returns one tuple per session: the session file first, then its subagent transcripts.
    """
    project_dirs = [folder]
    try:
        project_dirs += sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError as exc:
        stats.error(f"{folder}: cannot be listed ({exc.strerror or exc})")
        return []
    found: list[tuple[Path, ...]] = []
    for project_dir in project_dirs:
        try:
            files = sorted(p for p in project_dir.glob("*.jsonl") if p.is_file())
        except OSError:
            continue
        sessions = [p for p in files if not p.name.startswith("agent-")]
        by_id: dict[str, list[Path]] = {p.stem: [] for p in sessions}
        for session in sessions:
            sub_dir = project_dir / session.stem / "subagents"
            if sub_dir.is_dir():
                by_id[session.stem].extend(sorted(sub_dir.glob("agent-*.jsonl")))
        for agent in (p for p in files if p.name.startswith("agent-")):
            parent = _session_id_of(agent)
            if parent is not None and parent in by_id:
                by_id[parent].append(agent)
            else:
                stats.skip(ORPHAN_SUBAGENTS)
        found.extend((session, *by_id[session.stem]) for session in sessions)
    return found
