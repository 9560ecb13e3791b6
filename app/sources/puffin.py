"""Puffin conversation histories: `<project>/.puffin/history.json`.

Puffin keeps conversations in topic branches (specifications, architecture, ui, backend,
...); those are the branches here, and the project is the folder holding `.puffin`. A thread
is a root prompt (`parentId` null, or a parent that no longer exists) with all its
descendants, in time order; each prompt gives a user message and, once answered, an
assistant message (`response` can be null while pending). Timestamps are epoch milliseconds
or ISO strings. Projects come from the settings and from Puffin's own recent-projects list
(`~/.puffin/recent-projects.json`: a list of `{path, name, lastOpened}`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.sources.jsonl import (
    BAD_RECORDS,
    RECORD_ERRORS,
    clip,
    parse_time,
    read_bounded,
)
from app.sources.models import (
    ASSISTANT,
    TEXT,
    USER,
    Message,
    ParsedThread,
    ReadStats,
    ThreadContent,
)

SOURCE = "puffin"
HISTORY = Path(".puffin") / "history.json"
_EPOCH = datetime.min.replace(tzinfo=UTC)
# A history is parsed whole; past this size it is reported instead of taking the memory.
MAX_HISTORY_BYTES = 256 * 1024 * 1024
_RECENT_LIMIT = 4 * 1024 * 1024


def history_path(folder: Path) -> Path | None:
    """The history file for a project folder or its `.puffin` folder, if there is one."""
    for candidate in (folder / HISTORY, folder / "history.json"):
        if candidate.is_file() and (candidate.parent.name == ".puffin"):
            return candidate
    return None


def recent_projects(user_home: Path, stats: ReadStats) -> list[Path]:
    """Project folders from Puffin's recent-projects list (missing list: none)."""
    path = user_home / ".puffin" / "recent-projects.json"
    try:
        path.stat()
    except (OSError, ValueError):
        return []
    raw = read_bounded(path, stats, _RECENT_LIMIT)
    if raw is None:
        return []
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        stats.error(f"{path}: not valid JSON; Puffin's recent projects were not read")
        return []
    if isinstance(data, dict):
        data = data.get("projects", data.get("recentProjects", []))
    folders: list[Path] = []
    for entry in data if isinstance(data, list) else []:
        value = entry.get("path") if isinstance(entry, dict) else entry
        if isinstance(value, str) and value:
            folders.append(Path(value).expanduser())
    return folders


def _files(response: dict[str, Any]) -> list[str]:
    changed = response.get("filesModified")
    if not isinstance(changed, list):
        return []
    names: list[str] = []
    for entry in changed:
        if isinstance(entry, dict) and entry.get("action") != "read":
            value = entry.get("path")
            if isinstance(value, str) and value:
                name = value.replace("\\", "/").rsplit("/", 1)[-1]
                if name not in names:
                    names.append(name)
    if not names:
        return []
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return [clip(f"files changed: {shown}", 160)]


def _prompt_messages(prompt: dict[str, Any]) -> tuple[list[Message], list[datetime]]:
    messages: list[Message] = []
    times: list[datetime] = []
    asked = parse_time(prompt.get("timestamp"))
    if asked is not None:
        times.append(asked)
    content = prompt.get("content")
    if isinstance(content, str) and content.strip():
        messages.append(Message(USER, content.strip(), asked, TEXT))
    response = prompt.get("response")
    if isinstance(response, dict):
        answered = parse_time(response.get("timestamp")) or asked
        if answered is not None:
            times.append(answered)
        text = response.get("content")
        tools = _files(response)
        if (isinstance(text, str) and text.strip()) or tools:
            body = text.strip() if isinstance(text, str) else ""
            messages.append(Message(ASSISTANT, body, answered, TEXT, tools))
    return messages, times


def _branch_threads(
    project: str, branch: str, prompts: list[dict[str, Any]], stats: ReadStats
) -> list[ParsedThread]:
    by_id = {p["id"]: p for p in prompts if isinstance(p.get("id"), str)}
    children: dict[str, list[dict[str, Any]]] = {}
    roots: list[dict[str, Any]] = []
    for prompt in prompts:
        parent = prompt.get("parentId")
        if isinstance(parent, str) and parent in by_id and parent != prompt.get("id"):
            children.setdefault(parent, []).append(prompt)
        else:
            roots.append(prompt)
    threads: list[ParsedThread] = []
    for index, root in enumerate(roots):
        members: list[dict[str, Any]] = []
        stack = [root]
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            members.append(node)
            node_id = node.get("id")
            if isinstance(node_id, str):
                stack.extend(children.get(node_id, []))
        members.sort(key=lambda p: parse_time(p.get("timestamp")) or _EPOCH)
        messages: list[Message] = []
        times: list[datetime] = []
        for prompt in members:
            try:
                found, when = _prompt_messages(prompt)
            except RECORD_ERRORS:
                stats.skip(BAD_RECORDS)
                continue
            messages.extend(found)
            times.extend(when)
        if not messages:
            continue
        root_id = root.get("id") if isinstance(root.get("id"), str) else f"{branch}-{index}"
        title = root.get("title") if isinstance(root.get("title"), str) else ""
        first_user = next((m.text for m in messages if m.role == USER), "")
        threads.append(
            ParsedThread(
                id=str(root_id),
                source=SOURCE,
                project=project,
                branch=branch,
                content=ThreadContent(messages, []),
                ref=f"pf-{str(root_id)[:10]}",
                title=clip(title or first_user, 80),
                started=min(times) if times else None,
                ended=max(times) if times else None,
            )
        )
    return threads


def read_history(paths: tuple[Path, ...], stats: ReadStats) -> list[ParsedThread]:
    """Read a `history.json` into threads (one per root prompt, per Puffin branch)."""
    path = paths[0]
    # `<project>/.puffin/history.json`; a history passed from elsewhere names its folder.
    folder = path.parent.parent if path.parent.name == ".puffin" else path.parent
    project = folder.name or "(unknown project)"
    raw = read_bounded(path, stats, MAX_HISTORY_BYTES)
    if raw is None:
        return []
    try:
        data = json.loads(raw)
    except ValueError as exc:
        stats.error(f"{path}: not valid JSON ({exc}); its threads were not read")
        return []
    except RecursionError:
        stats.error(f"{path}: nested too deeply to be a Puffin history; not read")
        return []
    branches = data.get("branches") if isinstance(data, dict) else None
    if not isinstance(branches, dict):
        stats.error(f"{path}: no `branches` object; not a Puffin history")
        return []
    threads: list[ParsedThread] = []
    for key, branch in branches.items():
        name = str(key)
        stats.declare_branch(f"{project}/{name}")
        prompts = branch.get("prompts") if isinstance(branch, dict) else None
        if not isinstance(prompts, list):
            continue
        valid = [p for p in prompts if isinstance(p, dict)]
        if len(valid) != len(prompts):
            stats.skip("malformed Puffin prompts", len(prompts) - len(valid))
        try:
            threads.extend(_branch_threads(project, name, valid, stats))
        except RECORD_ERRORS:
            stats.skip(BAD_RECORDS)
    return threads
