"""A labeled conversation as the app itself would render the same agent session.

The labeled set writes agent sessions as a transcript: every tool call an `Assistant:
[tool: Name {input}]` turn of its own, every tool output a `User: [tool result: …]` turn.
The app never produces that text. Its readers keep a call as a one-line gist, drop a
successful tool's output except the pass summary of a command run, and keep a failed one's
head (app/sources/claude_code.py, codex.py); its renderer puts all of that inside the
assistant's block (app/sources/render.py):

    Assistant: I'll run the tests.
    [tool] Bash: pytest -q
    [tool result] 12 passed in 0.88s
    All green.

`as_rendered` turns the first form into the second with the readers' own helpers, so the
bench can score what the engine reads from a real session (`--as-rendered`). An Aider
session (the user's `/add`, `/run`, `/test` commands with the command's output fenced after
it, the agent's SEARCH/REPLACE blocks) is written out as the `.aider.chat.history.md` Aider
keeps and read back by the app's own Aider reader (`_aider_rendered`) when `AIDER` is set
(`bench/dialogue_quality.py --as-rendered --aider`); not yet by default, see
docs/decisions.md, thirty-first part. Whether a
tool's output was a failure is not in the transcript; output that reads like one (an error,
a failed count, a traceback) is taken for one, as the exit code would usually say.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from app.sources.jsonl import clip, run_summary, tool_line

_MARK = re.compile(r"^(User|Assistant):[ \t]?(.*)$")
_CALL = re.compile(r"^\[tool:\s*(?P<name>[\w.-]+)\s*(?P<input>.*?)\]?\s*$", re.DOTALL)
_RESULT = "[tool result:"
_INTERRUPTED = re.compile(r"^\[Request interrupted by user")
_FAILED = re.compile(
    r"(?i)\b(?:[1-9]\d* failed|fail(?:ed|ure)?|errors?|traceback|panic|exception|fatal|"
    r"exit (?:code|status) [1-9])\b"
)
_NO_FAILURE = re.compile(r"(?i)\b(?:0 failed|errors?:? 0|0 errors|no errors?)\b")
# Tools that run a command (Claude Code's Bash, Codex's shell): the only ones whose output
# can fail without the call itself being refused, and whose pass summary the readers keep.
_COMMANDS = re.compile(r"(?i)^(?:bash|shell|exec_command|local_shell|run|terminal|sh|cmd)\w*$|^$")
_STRING_VALUE = re.compile(r'"[\w-]+":\s*"([^"]*)')
_ERROR_CHARS = 240  # what the renderer keeps of a tool error (app/sources/render.py)


def _turns(text: str) -> list[tuple[str, str]]:
    """(speaker, body) of each `User:` / `Assistant:` turn; text before the first is the
    user's."""
    turns: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        mark = _MARK.match(line)
        if mark is not None:
            turns.append((mark.group(1), [mark.group(2)]))
        elif turns:
            turns[-1][1].append(line)
        else:
            turns.append(("User", [line]))
    return [(speaker, "\n".join(lines).strip("\n")) for speaker, lines in turns]


def _tool_input(raw: str) -> object:
    start, end = raw.find("{"), raw.rfind("}")
    if 0 <= start < end:
        try:
            return json.loads(raw[start : end + 1])
        except ValueError:
            pass
    found = _STRING_VALUE.search(raw)  # a clipped input: its first string value
    return {"input": found.group(1)} if found else raw.strip()


# Aider sessions read as the app reads them (off by default: the make test guards compare
# the transcript form with the Claude Code / Codex rendering).
AIDER = False
_AIDER_COMMAND = re.compile(r"^/(?:add|drop|run|test|ask|code|architect|undo|clear)\b")
_AIDER_RUN = re.compile(
    r"^(?P<command>/(?:run|test)\b[^\n]*)\n```[^\n]*\n(?P<output>.*?)\n```\n?", re.S
)


def _is_aider(turns: list[tuple[str, str]]) -> bool:
    return any(
        (speaker == "User" and _AIDER_COMMAND.match(body.lstrip()))
        or (speaker == "Assistant" and "<<<<<<< SEARCH" in body)
        for speaker, body in turns
    )


def _aider_rendered(turns: list[tuple[str, str]]) -> str:
    """An Aider session as the app renders it: the chat history Aider writes (user lines
    under `#### `, command output under `> `, the reply as it is), read by app/sources/aider.py."""
    from app.sources.aider import read_history
    from app.sources.models import ReadStats
    from app.sources.render import render

    lines = ["# aider chat started at 2026-01-05 09:00:00", ""]
    for speaker, body in turns:
        if speaker == "Assistant":
            lines += [body.rstrip(), ""]
            continue
        run = _AIDER_RUN.match(body.lstrip())
        if run is not None:
            lines += [f"#### {run.group('command')}  ", ""]
            lines += [f"> {line}  " for line in run.group("output").splitlines()]
            lines.append("")
            body = body.lstrip()[run.end() :]
        said = [f"#### {line}  " for line in body.strip().splitlines()]
        if said:
            lines += [*said, ""]
    with tempfile.TemporaryDirectory() as folder:
        history = Path(folder) / ".aider.chat.history.md"
        history.write_text("\n".join(lines) + "\n", encoding="utf-8")
        threads = read_history((history,), ReadStats())
    return "\n\n".join(render(t.content) for t in threads)


def as_rendered(text: str) -> str:
    """The conversation as `app/sources/render.py` writes a session the readers parsed."""
    if AIDER and _is_aider(_turns(text)):
        return _aider_rendered(_turns(text))
    blocks: list[tuple[str, list[str]]] = []

    def in_agent_block(line: str) -> None:
        if blocks and blocks[-1][0] == "Assistant":
            blocks[-1][1].append(line)
        else:
            blocks.append(("Assistant", [f"Assistant: {line}"]))

    def in_open_block(line: str) -> None:
        if blocks:
            blocks[-1][1].append(line)
        else:
            blocks.append(("", [line]))

    calls: list[str] = []  # tools called whose output has not come yet, in order
    turns = _turns(text)
    for n, (speaker, body) in enumerate(turns):
        first = body.lstrip()
        if speaker == "Assistant" and first.startswith("[tool:"):
            for line in body.splitlines():
                call = _CALL.match(line.strip())
                if call is not None:
                    name, raw = call.group("name"), call.group("input")
                    calls.append(name)
                    in_agent_block(f"[tool] {tool_line(name, _tool_input(raw))}")
        elif speaker == "Assistant":
            calls.clear()  # the agent speaks once the outputs it waited for are in
            in_agent_block(body)
        elif first.startswith(_RESULT):
            output = first[len(_RESULT) :].rstrip().removesuffix("]").strip()
            # A run of k outputs answers the last k calls (a call may have none written).
            if n == 0 or not turns[n - 1][1].lstrip().startswith(_RESULT):
                run = 0
                while n + run < len(turns) and turns[n + run][1].lstrip().startswith(_RESULT):
                    run += 1
                del calls[: max(len(calls) - run, 0)]
            tool = calls.pop(0) if calls else ""
            if not _COMMANDS.match(tool):
                # A file tool that ran (Write, Read, Grep …): its output is dropped, as the
                # readers drop a successful call's output.
                continue
            if _FAILED.search(_NO_FAILURE.sub(" ", output)):
                in_open_block(f"[tool error] {clip(output, _ERROR_CHARS)}")
            elif summary := run_summary(output):
                in_open_block(f"[tool result] {summary}")
        elif _INTERRUPTED.match(first):
            in_open_block("[interrupted by user]")
        else:
            blocks.append(("User", [f"User: {body}"]))
    return "\n\n".join("\n".join(lines) for _, lines in blocks)
