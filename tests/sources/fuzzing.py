"""Hostile transcript shapes for the reader fuzz suite (`test_fuzz_readers`) and its long run.

Owns the hypothesis strategies that build transcript files from JSON records of random
shapes (keys and `type` values taken from the real formats, so records reach deep into each
reader), raw bytes, invalid UTF-8 and truncated files, and `exercise`, which writes one such
file where a reader expects it and runs the unguarded reader on it plus everything a scan
does next (text made valid UTF-8, render, hash). The long run is `bench/fuzz_readers.py`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from app.sources import aider, claude_code, codex, plaintext, puffin
from app.sources.ledger import Ledger
from app.sources.models import ParsedThread, ReadStats, content_hash
from app.sources.render import render
from app.sources.scan import valid_threads

KEYS = (
    "type",
    "message",
    "content",
    "role",
    "payload",
    "timestamp",
    "cwd",
    "gitBranch",
    "sessionId",
    "uuid",
    "parentUuid",
    "isSidechain",
    "data",
    "agentId",
    "text",
    "tool_use_id",
    "is_error",
    "id",
    "name",
    "input",
    "toolUseResult",
    "isMeta",
    "isCompactSummary",
    "git",
    "branch",
    "repository_url",
    "branches",
    "prompts",
    "parentId",
    "response",
    "filesModified",
    "path",
    "action",
    "title",
    "model",
    "isApiErrorMessage",
    "parentToolUseID",
    "prompt",
    "description",
    "arguments",
    "output",
    "success",
    "metadata",
    "exit_code",
    "record_type",
    "threads",
    "version",
    "threadId",
    "branchId",
    "messages",
    "hash",
    "memorizedAt",
    "source",
)
TYPES = (
    "user",
    "assistant",
    "system",
    "progress",
    "summary",
    "agent_progress",
    "text",
    "tool_use",
    "tool_result",
    "server_tool_use",
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
    "message",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "local_shell_call",
    "reasoning",
    "user_message",
    "input_text",
    "output_text",
    "file-history-snapshot",
)
_TEXTS = st.sampled_from(
    (
        "",
        " ",
        "hi",
        "<command-name>/x</command-name>",
        "<system-reminder>r</system-reminder>",
        "[Request interrupted by user]",
        "<bash-input>ls</bash-input>",
        "Exit code: 1\nboom",
        '{"metadata":{"exit_code":2}}',
        "2026-02-10T21:11:56Z",
        "1700000000000",
        "Task",
        "Agent",
        "ref: refs/heads/main",
        "\ud800",
        "\x00",
        "é" * 3,
    )
) | st.text(max_size=20)

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | _TEXTS
    | st.sampled_from(TYPES)
)


def _objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keys = st.sampled_from(KEYS) | st.text(max_size=8)
    inner = ("message", "content", "payload", "data", "timestamp", "cwd")
    typed = st.fixed_dictionaries(
        {"type": st.sampled_from(TYPES) | children}, optional=dict.fromkeys(inner, children)
    )
    return st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=6) | typed


JSON_VALUES: st.SearchStrategy[Any] = st.recursive(_SCALARS, _objects, max_leaves=25)
RECORDS: st.SearchStrategy[Any] = (
    st.dictionaries(st.sampled_from(KEYS), JSON_VALUES, max_size=8)
    | st.fixed_dictionaries(
        {"type": st.sampled_from(TYPES) | JSON_VALUES},
        optional={k: JSON_VALUES for k in KEYS if k != "type"},
    )
    | JSON_VALUES
)


def _dumps(value: Any) -> bytes:
    # Compact, as the agents write it: the readers look at the first bytes of a line.
    return json.dumps(value, separators=(",", ":"), allow_nan=True).encode("utf-8", "surrogatepass")


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    """One line: a JSON record, sometimes damaged (cut, invalid UTF-8, raw bytes)."""
    kind = draw(st.sampled_from(("json", "json", "json", "cut", "utf8", "bytes", "deep")))
    if kind == "bytes":
        return draw(st.binary(max_size=60)).replace(b"\n", b" ")
    if kind == "deep":
        depth = draw(st.integers(min_value=50, max_value=5_000))
        return b'{"type":"user","message":' + b"[" * depth + b"]" * depth + b"}"
    line = _dumps(draw(RECORDS))
    if kind == "cut":
        line = line[: draw(st.integers(min_value=0, max_value=len(line)))]
    elif kind == "utf8":
        at = draw(st.integers(min_value=0, max_value=len(line)))
        line = line[:at] + draw(st.sampled_from((b"\xff", b"\xc3", b"\xed\xa0\x80"))) + line[at:]
    return line


@st.composite
def jsonl_files(draw: st.DrawFn) -> bytes:
    """A JSON-lines transcript, possibly truncated mid-line."""
    data = b"\n".join(draw(st.lists(lines(), max_size=12)))
    if draw(st.booleans()):
        data = data[: draw(st.integers(min_value=0, max_value=len(data)))]
    return data


@st.composite
def json_documents(draw: st.DrawFn) -> bytes:
    """A whole-file JSON document (Puffin history, ledger), possibly damaged."""
    prompts = st.lists(RECORDS, max_size=6)
    value = draw(
        st.fixed_dictionaries(
            {
                "branches": st.dictionaries(
                    st.text(max_size=6),
                    st.fixed_dictionaries({"prompts": prompts}) | JSON_VALUES,
                    max_size=3,
                )
            }
        )
        | st.fixed_dictionaries(
            {"threads": st.dictionaries(st.text(max_size=6), RECORDS, max_size=4)}
        )
        | JSON_VALUES
    )
    data = _dumps(value)
    kind = draw(st.sampled_from(("whole", "whole", "cut", "utf8")))
    if kind == "cut":
        data = data[: draw(st.integers(min_value=0, max_value=len(data)))]
    elif kind == "utf8":
        data = b"\xff" + data
    return data


@st.composite
def text_files(draw: st.DrawFn) -> bytes:
    """An Aider history or a plain-text conversation, with invalid UTF-8 now and then."""
    pieces = st.sampled_from(
        (
            "# aider chat started at 2026-01-01 10:00:00\n",
            "# aider chat started at nonsense\n",
            "#### do it  \n",
            "####\n",
            "> error: boom\n",
            "> \n",
            "User: hi\n",
            "Assistant: ok\n",
            "## Human\n",
            "<think>x\n",
            "```py\n<<<<<<< SEARCH\n",
            "=======\n",
            ">>>>>>> REPLACE\n",
            "text\n",
            "\r\n",
            "\n",
        )
    )
    data = "".join(draw(st.lists(pieces | st.text(max_size=15), max_size=25))).encode(
        "utf-8", "surrogatepass"
    )
    if draw(st.booleans()):
        data += draw(st.binary(max_size=8))
    return data


# -- running a reader on one file ---------------------------------------------------------

Reader = Callable[[tuple[Path, ...], ReadStats], list[ParsedThread]]
# name -> (where the file goes under a folder, unguarded reader, file strategy)
READERS: dict[str, tuple[str, Reader, st.SearchStrategy[bytes]]] = {
    "claude-code": (
        "proj/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
        claude_code.read_session,
        jsonl_files(),
    ),
    "codex": ("sessions/rollout-2026-02-23T13-19-38-x.jsonl", codex.read_rollout, jsonl_files()),
    "puffin": ("project/.puffin/history.json", puffin.read_history, json_documents()),
    "aider": ("project/.aider.chat.history.md", aider.read_history, text_files()),
    "file": ("notes/notes.md", plaintext.read_text, text_files()),
}


def place(root: Path, name: str, data: bytes) -> Path:
    """Write `data` where reader `name` expects its file under `root`."""
    path = root / READERS[name][0]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def exercise(root: Path, name: str, data: bytes, extra: bytes | None = None) -> ReadStats:
    """Run reader `name` (unguarded) on `data`, then what a scan does with its threads.

    For Claude Code, `extra` becomes a subagent transcript of the session. Raises whatever
    escapes; returns the reader's statistics.
    """
    path = place(root, name, data)
    paths: tuple[Path, ...] = (path,)
    if extra is not None and name == "claude-code":
        sub = path.parent / path.stem / "subagents" / "agent-a1.jsonl"
        sub.parent.mkdir(parents=True, exist_ok=True)
        sub.write_bytes(extra)
        paths = (path, sub)
    stats = ReadStats()
    for thread in valid_threads(READERS[name][1](paths, stats)):
        # Strict UTF-8 once the scan has cleaned the threads: a lone surrogate left here would
        # fail the thread's memorize request later.
        render(thread.content).encode("utf-8")
        content_hash(thread.content.messages)
        for field in (thread.id, thread.branch, thread.project, thread.title, thread.ref):
            assert isinstance(field, str)
            field.encode("utf-8")
    return stats


def exercise_ledger(root: Path, data: bytes) -> Ledger:
    """Open a ledger file holding `data` and save it again."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "ledger.json").write_bytes(data)
    ledger = Ledger.open(root)
    ledger.save()
    return ledger
