"""The Claude Code hook commands: session-start, session-end (Stop, PreCompact), process-inbox.

Each is a function returning an exit code, called by `app.integrations.cli_hooks`. The rule
they share: a memory problem must never break the agent. Whatever goes wrong - garbage on
stdin, no cwd, an unreadable memory home, a damaged index - the hook prints nothing, exits
0 and writes the reason to the hook log (`<home>/logs/hooks.log`). session-start answers
within 300 ms from the index (`app.integrations.context`); session-end returns within
200 ms by spooling a record and leaving the work to a detached `process-inbox` run
(`app.integrations.inbox`). Their usual paths import only the standard library.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from app.core.paths import resolve_home
from app.integrations.hookio import (
    arm_deadline,
    disarm_deadline,
    hook_log,
    read_stdin_json,
    source_stamp,
    text_field,
    write_atomic,
    write_cache,
)

EXIT_OK = 0
EVENTS = {"session-end": "SessionEnd", "stop": "Stop", "pre-compact": "PreCompact"}


def _ms(start: float) -> str:
    return f"{(time.perf_counter() - start) * 1000:.0f} ms"


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ValueError | OSError):
        return str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {exc}"


# The hooks that run before every prompt or session answer without argparse: building the
# parsers costs more than the hook's own work.
PROMPT_HOOKS = ("session-start", "user-prompt-submit")


def prompt_hook(argv: Sequence[str]) -> int | None:
    """Run exactly `[--home DIR] hook session-start|user-prompt-submit` as the parser would,
    time limit included; None for any other command line (the parser's job)."""
    home: str | None = None
    rest = list(argv)
    if len(rest) >= 2 and rest[0] == "--home":
        home, rest = rest[1], rest[2:]
    if len(rest) != 2 or rest[0] != "hook" or rest[1] not in PROMPT_HOOKS:
        return None
    arm_deadline(resolve_home(home), f"hook {rest[1]}")
    if rest[1] == "session-start":
        return session_start(home)
    return user_prompt_submit(home)


def session_start(home_arg: str | None) -> int:
    """Print the SessionStart JSON for the session's branch, or nothing."""
    start = time.perf_counter()
    home: Path | None = None
    try:
        home = resolve_home(home_arg)
        data = read_stdin_json()
        from app.integrations.context import session_context
        from app.integrations.gitref import locate

        location = locate(text_field(data, "cwd"))
        context = session_context(home, location)
    except Exception as exc:  # a hook must never fail the session: log why, say nothing
        hook_log(home, "session-start", f"nothing injected: {_reason(exc)} ({_ms(start)})")
        return EXIT_OK
    if context is None:
        hook_log(home, "session-start", f"no memory for {location.branch_id} ({_ms(start)})")
        return EXIT_OK
    # Memory files can be edited by hand; a secret pasted into one must still not travel
    # into the agent's context (and from there to a model provider).
    reply = {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": redacted(home, context.branch_id, context.text),
        }
    }
    _remember_injected(home, text_field(data, "session_id"), context.ids, reset=True)
    disarm_deadline()  # past this point the reply is written whole or not at all
    try:
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    except OSError as exc:  # the agent went away: nothing to tell anyone but the log
        hook_log(home, "session-start", f"could not write the reply: {exc}")
        return EXIT_OK
    hook_log(
        home,
        "session-start",
        f"{context.branch_id}: {context.branch_items} item(s), {context.constraints} "
        f"constraint(s), {len(context.text)} chars via {context.path} ({_ms(start)})",
    )
    return EXIT_OK


# A text redaction left unchanged, per branch, so the next session start with the same
# memory need not load the redaction rules again (their import costs more than the rest of
# the hook's own work). Stamped with the rules' source file: new rules judge anew.
CLEAN_MEMO = "clean-context"


def _memo_path(home: Path, branch_id: str) -> Path | None:
    from app.integrations.context import encode_branch

    stem = encode_branch(branch_id)
    if stem is None or not home.is_dir():
        return None
    return home / "cache" / CLEAN_MEMO / f"{stem}.txt"


def redacted(home: Path, branch_id: str, text: str) -> str:
    """`app.core.redact.redact(text)`, skipped when this exact text was found clean before.

    Only a text that redaction left unchanged is remembered (the whole text, compared
    exactly: no digest that could collide), so the memo can only ever say "nothing to
    redact" about the very text it holds.
    """
    stamp = source_stamp("redact.py")
    memo = _memo_path(home, branch_id) if stamp else None
    expected = f"{stamp}\n{text}"
    if memo is not None:
        try:
            if memo.read_text(encoding="utf-8") == expected:
                return text
        except (OSError, ValueError):
            pass  # no memo yet, or unreadable: redact
    from app.core.redact import redact

    result = redact(text)
    if memo is not None and result == text:
        write_cache(memo, expected)
    return result


_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
SESSION_TTL_S = 24 * 3600


def _session_file(home: Path, session_id: str) -> Path | None:
    if not _SESSION_ID.fullmatch(session_id) or not home.is_dir():
        return None  # a hostile id never becomes a path; a missing home is not created
    return home / "cache" / "sessions" / f"{session_id}.json"


def _injected(home: Path, session_id: str) -> list[str]:
    path = _session_file(home, session_id)
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path else []
    except (OSError, ValueError):
        return []
    return [str(x) for x in data] if isinstance(data, list) else []


def _remember_injected(
    home: Path, session_id: str, ids: tuple[str, ...], *, reset: bool = False
) -> None:
    """Note which items this session has seen, so per-prompt recall does not repeat them."""
    path = _session_file(home, session_id)
    if path is None:
        return
    known = [] if reset else _injected(home, session_id)
    try:
        write_atomic(path, json.dumps([*known, *ids]).encode())
        now = time.time()
        for old in path.parent.iterdir():  # sessions end; their notes go after a day
            if now - old.stat().st_mtime > SESSION_TTL_S:
                old.unlink(missing_ok=True)
    except OSError:
        return


def user_prompt_submit(home_arg: str | None) -> int:
    """Print the few notes relevant to this prompt that the session has not seen, or nothing."""
    start = time.perf_counter()
    home: Path | None = None
    try:
        home = resolve_home(home_arg)
        data = read_stdin_json()
        from app.integrations.context import prompt_context
        from app.integrations.gitref import locate

        session_id = text_field(data, "session_id")
        location = locate(text_field(data, "cwd"))
        found = prompt_context(
            home, location, text_field(data, "prompt"), _injected(home, session_id)
        )
    except Exception as exc:  # a hook must never fail the prompt: log why, say nothing
        hook_log(home, "user-prompt-submit", f"nothing added: {_reason(exc)} ({_ms(start)})")
        return EXIT_OK
    if found is None:
        return EXIT_OK  # nothing relevant: no noise, and no log line per prompt
    text, ids = found
    reply = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}}
    _remember_injected(home, session_id, ids)
    disarm_deadline()
    try:
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    except OSError:
        return EXIT_OK
    hook_log(home, "user-prompt-submit", f"{len(ids)} note(s), {len(text)} chars ({_ms(start)})")
    return EXIT_OK


def session_end(
    home_arg: str | None,
    action: str = "session-end",
    *,
    event: str | None = None,
    engine: str | None = None,
) -> int:
    """Spool the transcript for memorization and start a detached drain if none runs."""
    start = time.perf_counter()
    home: Path | None = None
    name = event or EVENTS.get(action, "SessionEnd")
    try:
        home = resolve_home(home_arg)
        data = read_stdin_json()
        name = event or text_field(data, "hook_event_name") or name
        transcript = text_field(data, "transcript_path")
        if not transcript:
            raise ValueError("the hook input has no transcript_path")
        from app.integrations import inbox

        cwd = text_field(data, "cwd")
        if cwd and not os.path.isabs(transcript):
            transcript = os.path.join(cwd, transcript)
        record = inbox.spool(
            home,
            transcript_path=transcript,
            session_id=text_field(data, "session_id"),
            cwd=cwd,
            event=name,
        )
    except Exception as exc:
        hook_log(home, name, f"not recorded: {_reason(exc)} ({_ms(start)})")
        return EXIT_OK
    try:
        if inbox.drainer_busy(home):
            started = "a drain is already running"
        else:
            pid = inbox.spawn_drainer(home, pass_home=bool(home_arg), engine=engine)
            started = f"drain started (pid {pid})"
    except Exception as exc:  # the record waits for the next drain (app or next hook)
        started = f"no drain started: {_reason(exc)}"
    hook_log(home, name, f"spooled {record.name}; {started} ({_ms(start)})")
    return EXIT_OK


def process_inbox(home_arg: str | None, *, engine: str | None = None) -> int:
    """Drain the inbox (the detached run started by session-end); prints its report."""
    home = resolve_home(home_arg)
    try:
        from app.container import build_api  # this command is an entry point: it composes
        from app.integrations.inbox import drain_inbox

        folders = _inbox_folders(home)
        report = drain_inbox(home, lambda: build_api(home, engine_override=engine))
    except Exception as exc:
        hook_log(home, "process-inbox", f"failed: {_reason(exc)}")
        return EXIT_OK
    if report["memorized"]:
        prepare_session_start(home, folders)
    if report["busy"]:
        hook_log(home, "process-inbox", "another drain holds the lock; leaving it to that one")
    with contextlib.suppress(OSError):  # started detached: stdout may be gone
        sys.stdout.write(json.dumps(report, indent=2, default=str) + "\n")
    return EXIT_OK


def _inbox_folders(home: Path) -> set[str]:
    """The `cwd` of each record waiting in the inbox (the sessions about to be memorized)."""
    from app.integrations.inbox import inbox_dir

    folders: set[str] = set()
    with contextlib.suppress(OSError):
        for path in inbox_dir(home).glob("*.json"):
            try:
                data = json.loads(path.read_bytes())
            except (OSError, ValueError):
                continue
            cwd = data.get("cwd") if isinstance(data, dict) else None
            if isinstance(cwd, str) and cwd:
                folders.add(cwd)
    return folders


def prepare_session_start(home: Path, folders: Iterable[str]) -> None:
    """Build the session-start context of each folder now, in the drain, so its memos hold
    what the next session start there will show: that start (its memory just changed) then
    needs neither the screen's nor the redaction's rules. Failures only cost that start its
    memos."""
    from app.integrations.context import session_context
    from app.integrations.gitref import locate

    for cwd in folders:
        try:
            context = session_context(home, locate(cwd))
            if context is not None:
                redacted(home, context.branch_id, context.text)
        except Exception as exc:
            hook_log(home, "process-inbox", f"session start not prepared for {cwd}: {_reason(exc)}")
