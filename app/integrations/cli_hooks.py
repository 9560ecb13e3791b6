"""The hook commands of the `puffin-memory` command line: `hook ...` and `install-hooks`.

`app.cli` calls `add_parsers(sub)` while building its parser and `run(args)` before its own
dispatch; `run` returns None for commands that are not ours. `hook session-start`,
`hook session-end` (aliases `stop`, `pre-compact`, or `--event NAME`) and
`hook process-inbox` always exit 0 (a memory problem must never break the agent; reasons go
to `<home>/logs/hooks.log`). `install-hooks` prints what it changed as JSON and exits 0, or
prints the usual error object and exits 2 (bad settings file) or 1. Importing this module
costs only argparse, which the command line has loaded anyway.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

HOOK_ACTIONS = (
    "session-start",
    "user-prompt-submit",
    "session-end",
    "stop",
    "pre-compact",
    "process-inbox",
)
EXIT_OK, EXIT_ERROR, EXIT_INPUT = 0, 1, 2


def add_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `hook` and `install-hooks` to the command line's subparsers."""
    p = sub.add_parser(
        "hook",
        help="run a Claude Code hook (reads the hook JSON on stdin)",
        description="Claude Code hooks. session-start prints this branch's memory as "
        "SessionStart context; session-end (also for Stop and PreCompact) queues the "
        "transcript for memorization and returns at once; process-inbox memorizes what "
        "is queued. They always exit 0; reasons go to <home>/logs/hooks.log.",
    )
    p.add_argument("action", choices=HOOK_ACTIONS)
    p.add_argument(
        "--event",
        help="event name to record (default: the hook input's "
        "hook_event_name, else from the action)",
    )
    p = sub.add_parser(
        "install-hooks",
        help="add our hooks to Claude Code's settings.json",
        description="Merge the session-start/session-end/pre-compact hooks into Claude "
        "Code's settings (a backup is kept; nothing else is touched).",
    )
    p.add_argument("--settings", help="settings file (default: ~/.claude/settings.json)")
    p.add_argument("--uninstall", action="store_true", help="remove only our hooks")


def _emit(reply: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(reply, indent=2, ensure_ascii=False) + "\n")


def _check_settings_file(value: str | None) -> None:
    """Refuse a settings path that is a FIFO or device: reading it would block forever."""
    import os
    import stat
    from pathlib import Path

    from app.core.errors import InvalidInput
    from app.integrations.installer import default_settings_path

    path = Path(value).expanduser() if value else default_settings_path()
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return  # missing: created; unreadable: the installer names the problem
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise InvalidInput(f"{path} is not a regular file (a pipe or device); nothing changed.")


def _install(args: argparse.Namespace) -> int:
    from app.core.errors import PuffinError
    from app.core.paths import resolve_home
    from app.integrations.installer import install_hooks

    try:
        _check_settings_file(args.settings)
        reply = install_hooks(
            args.settings,
            uninstall=args.uninstall,
            home=resolve_home(args.home),
        )
    except PuffinError as exc:
        from app.core.api import error_response

        _emit(error_response(exc.code, exc.message, exc.context or None))
        return EXIT_INPUT if exc.code in {"INVALID_INPUT", "NOT_FOUND"} else EXIT_ERROR
    _emit(reply)
    return EXIT_OK


def run(args: argparse.Namespace, *, deadline: bool = False) -> int | None:
    """Run `hook ...` or `install-hooks`; None when `args.command` is another command.

    With `deadline` (the command line's entry points), a hook still running after
    `HOOK_DEADLINE_S` ends the process: exit 0, nothing printed. Callers in a longer-lived
    process (tests) leave it off, since the limit ends the whole process.
    """
    command = getattr(args, "command", None)
    home: str | None = getattr(args, "home", None)
    engine: str | None = getattr(args, "engine", None)
    if command == "install-hooks":
        return _install(args)
    if command != "hook":
        return None
    from app.integrations import hooks
    from app.integrations.hookio import arm_deadline

    action = args.action
    # The detached drain is the one hook allowed to take long.
    if deadline and action != "process-inbox":
        from app.core.paths import resolve_home

        arm_deadline(resolve_home(home), f"hook {action}")
    if action == "session-start":
        return hooks.session_start(home)
    if action == "user-prompt-submit":
        return hooks.user_prompt_submit(home)
    if action == "process-inbox":
        return hooks.process_inbox(home, engine=engine)
    return hooks.session_end(home, action, event=args.event, engine=engine)
