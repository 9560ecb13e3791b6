"""The `puffin-memory` command line: every command is one `memory:*` request.

Each command prints the API response as JSON on stdout and exits 0 on success, 2 on
INVALID_INPUT or NOT_FOUND, 1 on any other error (and a scan in which every transcript or
thread failed). Stdout is always JSON, so a command line argparse refuses (unknown command,
missing argument, bad value) is answered with the same INVALID_INPUT error object, exit 2,
with the usage line on stderr. Tracebacks never reach the terminal. Progress and hints go
to stderr. This module never imports Qt, and imports the heavy parts of the app only once a
command needs them, so that hooks and quick look-ups start fast.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.core import operations as ops
from app.core.operations import GROUPS, OPERATIONS, Arg, Command, Operation, command_table
from app.integrations.cli_hooks import add_parsers as add_hook_parsers
from app.integrations.cli_hooks import run as run_hooks

EXIT_OK, EXIT_ERROR, EXIT_INPUT = 0, 1, 2


class UsageError(Exception):
    """A command line that cannot be turned into a request (exit 2)."""


class _ArgumentError(Exception):
    """argparse refused the command line; carries the usage text of the (sub)command."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of printing and exiting on a bad command line.

    Subparsers are built with the parser's own class, so every subcommand raises the same way.
    """

    def error(self, message: str) -> typing.NoReturn:
        raise _ArgumentError(message, self.format_usage())


class _NoTracebacks(logging.Formatter):
    """One line per log record on stderr; tracebacks are for a log file, not the terminal."""

    def formatException(self, ei: Any) -> str:  # noqa: N802 - logging's own name
        return ""

    def formatStack(self, stack_info: str) -> str:  # noqa: N802 - logging's own name
        return ""

    def format(self, record: logging.LogRecord) -> str:
        record.exc_text = ""
        return super().format(record).rstrip()


def _quiet_tracebacks() -> None:
    """Log records that reach no configured handler print one line, without a traceback."""
    handler = logging.StreamHandler()
    handler.setLevel(logging.WARNING)
    handler.setFormatter(_NoTracebacks("%(levelname)s %(name)s: %(message)s"))
    logging.lastResort = handler


def _emit(response: dict[str, Any]) -> int:
    sys.stdout.write(json.dumps(response, indent=2, ensure_ascii=False, default=str) + "\n")
    if not response.get("error"):
        return EXIT_OK
    return EXIT_INPUT if response.get("code") in {"INVALID_INPUT", "NOT_FOUND"} else EXIT_ERROR


def _error(code: str, message: str) -> dict[str, Any]:
    from app.core.api import error_response

    return error_response(code, message)


def _read_input(path: str | None) -> str:
    """Conversation text from a file or stdin, decoded leniently (invalid UTF-8 replaced)."""
    if path is None or path == "-":
        if sys.stdin.isatty():
            raise UsageError("Give --file FILE or pipe the conversation on stdin.")
        data = sys.stdin.buffer.read()
    else:
        data = _read_regular(Path(path).expanduser(), path)
    return data.decode("utf-8", errors="replace")


def _read_regular(file: Path, shown: str) -> bytes:
    """The bytes of a regular file; anything else is a UsageError naming the problem.

    Opened non-blocking and checked with fstat first: reading a named pipe would wait for a
    writer forever. Pipes are welcome on stdin instead (no --file, or --file -).
    """
    import os
    import stat

    try:
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError as exc:
        raise UsageError(f"No such file: {shown}") from exc
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"Cannot read {shown}: {reason}") from exc
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise UsageError(f"{shown} is a folder, not a file.")
        if not stat.S_ISREG(mode):
            raise UsageError(
                f"{shown} is not a regular file (a pipe or device); pipe it on stdin instead."
            )
        try:
            return handle.read()
        except OSError as exc:
            raise UsageError(f"Cannot read {shown}: {exc.strerror or exc}") from exc


def _csv(value: str | None) -> list[str]:
    return [t.strip() for t in (value or "").split(",") if t.strip()]


# -- operations on the command line: made from the operation table ------------------------


def _dest(arg: Arg) -> str:
    """The argparse name of an argument (the request key in snake case)."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in arg.key)


def _add_argument(parser: argparse.ArgumentParser, arg: Arg) -> None:
    options: dict[str, Any] = {"help": arg.help or None}
    if arg.choices:
        options["choices"] = list(arg.choices)
    if arg.default is not None:
        options["default"] = arg.default
    if not arg.flag:
        if arg.kind == "words":
            options["nargs"] = "*"
        elif arg.optional:
            options["nargs"] = "?"
        if arg.kind == "file":
            options["metavar"] = "FILE"
        parser.add_argument(_dest(arg), **options)
        return
    options["dest"] = _dest(arg)
    if arg.kind in ("flag", "local"):
        options["action"] = "store_true"
    elif arg.kind in ("int", "count"):
        options["type"] = int
    if arg.required:
        options["required"] = True
    if arg.kind == "file":
        options["help"] = arg.help or "file to read (default: stdin)"
    parser.add_argument(arg.flag, **options)


def _add_operations(sub: Any) -> None:
    """One subcommand per command of the operation table (two-word ones under a group)."""
    groups: dict[str, Any] = {}
    for path, (_op, command) in command_table().items():
        if len(path) == 1:
            parser = sub.add_parser(path[0], help=command.help)
        else:
            group = groups.get(path[0])
            if group is None:
                actions = [p[1] for p in command_table() if len(p) == 2 and p[0] == path[0]]
                holder = sub.add_parser(path[0], help=GROUPS.get(path[0], ", ".join(actions)))
                group = groups[path[0]] = holder.add_subparsers(
                    dest=f"{path[0]}_cmd", metavar="ACTION"
                )
            parser = group.add_parser(path[1], help=command.help)
        for arg in command.args:
            _add_argument(parser, arg)


def _command_of(args: argparse.Namespace) -> tuple[Operation, Command] | None:
    """The operation and command a parsed command line names (None: not an operation)."""
    table = command_table()
    found = table.get((args.command,))
    if found is not None:
        return found
    action = getattr(args, f"{args.command}_cmd", None)
    if action is None:
        actions = [p[1] for p in table if len(p) == 2 and p[0] == args.command]
        if actions:
            raise UsageError(f"{args.command} needs one of: {', '.join(actions)}")
        return None
    return table.get((args.command, action))


def _payload(command: Command, args: argparse.Namespace) -> dict[str, Any]:
    """The request a command line makes (files and stdin read, lists split, paths made
    absolute; options not given are left to the request's defaults)."""
    payload: dict[str, Any] = dict(command.fixed)
    for arg in command.args:
        value = getattr(args, _dest(arg))
        if arg.kind == "local":
            continue
        if arg.kind == "file":
            payload[arg.key] = _read_input(value)
        elif arg.kind == "words":
            text = " ".join(value or []).strip()
            if not text and arg.stdin:
                text = _read_input(None).strip()
            if text:
                payload[arg.key] = text
        elif arg.kind == "csv":
            if value:
                payload[arg.key] = _csv(value)
        elif arg.kind == "path":
            if value:
                payload[arg.key] = str(Path(value).expanduser().resolve())
        elif arg.kind == "flag":
            payload[arg.key] = bool(value)
        elif arg.kind == "count":
            if value:
                payload[arg.key] = value
        elif value is not None:
            payload[arg.key] = dict(arg.values).get(value, value)
    if command.confirm is not None:
        flag, message = command.confirm
        if not getattr(args, flag):
            raise UsageError(message.format(**payload))
    return payload


def build_parser() -> argparse.ArgumentParser:
    """The whole command line."""
    parser = _Parser(
        prog="puffin-memory",
        description="Local-first memory for coding agents. With no command, opens the app.",
    )
    parser.add_argument(
        "--home", help="memory folder (default: $PUFFIN_MEMORY_HOME or ~/.puffin/memory)"
    )
    parser.add_argument(
        "--engine",
        choices=["auto", "offline", "anthropic", "local"],
        help="engine for this command (default: config 'engine')",
    )
    parser.add_argument(
        "--version", action="store_true", dest="show_version", help="print the version and exit"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    _add_operations(sub)
    p = sub.add_parser("auth", help="Anthropic API key: set (from stdin/prompt), status, clear")
    p.add_argument("auth_cmd", choices=["set", "status", "clear"])
    add_hook_parsers(sub)
    p = sub.add_parser("logs", help="the operational log: its last lines, or --path")
    p.add_argument("--path", action="store_true", help="print only the log file's path")
    p.add_argument("--lines", type=int, default=50)
    sub.add_parser("gui", help="open the desktop app")
    sub.add_parser(
        "mcp", help="serve the memory to MCP clients on stdio (Claude Code, Codex, Cursor)"
    )
    p = sub.add_parser(
        "connect",
        help="register the MCP server with Codex, Cursor or Claude Code (merged, with a backup)",
    )
    p.add_argument("client", choices=("codex", "cursor", "claude"))
    p.add_argument("--uninstall", action="store_true", help="remove only our entry")
    p.add_argument(
        "--project",
        metavar="DIR",
        help="project folder (Cursor: .cursor/mcp.json there; Claude: .mcp.json)",
    )
    return parser


# Operations that only read: with no memory home yet they answer from an empty one and
# must not create `~/.puffin/memory` as a side effect.
_READ_ONLY = frozenset(op.name for op in OPERATIONS if not op.writes)


def _invoke(args: argparse.Namespace, channel: str, payload: dict[str, Any]) -> int:
    from app.container import build_api
    from app.core.paths import resolve_home

    home = resolve_home(args.home)
    if channel in _READ_ONLY and not home.exists():
        import tempfile

        with tempfile.TemporaryDirectory(prefix="puffin-memory-empty-") as empty:
            api = build_api(empty, engine_override=args.engine)
            reply = api.invoke(channel, payload)
            api.index.close()
        return _finish(args, channel, _restate_home(reply, empty, home))
    if channel not in _READ_ONLY:  # reads never write, not even a log line
        from app.logsetup import configure

        configure(home, "cli")
    api = build_api(home, engine_override=args.engine)
    if channel in (ops.SCAN.name, ops.IMPROVE.name) and not payload.get("dryRun"):
        api.progress = _progress_to_stderr
    reply = api.invoke(channel, payload)
    if channel == ops.SCAN.name and _scan_failed(reply):
        _emit(reply)
        return EXIT_ERROR
    return _finish(args, channel, reply)


def _restate_home(reply: dict[str, Any], used: str, home: Path) -> dict[str, Any]:
    """An answer from the stand-in empty home, naming the home that was asked about."""
    text = json.dumps(reply).replace(json.dumps(used)[1:-1], json.dumps(str(home))[1:-1])
    answer: dict[str, Any] = json.loads(text)
    if not answer.get("error"):
        answer.setdefault("note", f"No memory at {home} yet; nothing was created.")
    return answer


def _finish(args: argparse.Namespace, channel: str, reply: dict[str, Any]) -> int:
    """Print a reply the way its command shows it."""
    found = _command_of(args) if args.command else None
    output = found[1].output if found is not None else "json"
    if output == "export" and not reply.get("error"):
        return _write_export(args.out, reply)
    if output == "markdown" and not reply.get("error"):
        sys.stdout.write(reply["markdown"])
        return EXIT_OK
    return _emit(reply)


def _scan_failed(reply: dict[str, Any]) -> bool:
    """A scan in which nothing succeeded: every thread failed, or no transcript could be read.

    Also when Claude failed for every thread and the offline engine stood in for all of
    them. Exits non-zero so that scripts and schedulers notice; a scan that simply found
    nothing new (no errors) still succeeds.
    """
    if reply.get("error"):
        return False
    if "memorized" in reply:  # a real scan
        if reply.get("failed") and not reply.get("memorized"):
            return True
        # Claude was configured and failed for every thread: the offline engine saved them,
        # but a scheduler must notice that the API is not working.
        if reply.get("memorized") and reply.get("fallbacks") == reply.get("memorized"):
            return True
        return not reply.get("threads") and bool(reply.get("discoveryErrors"))
    return not reply.get("threads") and bool(reply.get("errors"))  # a dry run


def _write_export(out: str, reply: dict[str, Any]) -> int:
    content = reply.pop("content")
    if out == "-":
        sys.stdout.write(content)
        return EXIT_OK
    from app.core.atomic import atomic_write_text
    from app.core.errors import StorageError

    try:
        atomic_write_text(Path(out).expanduser(), content)
    except StorageError as exc:
        return _emit(_error("STORAGE_ERROR", exc.message))
    except OSError as exc:  # e.g. the folder to write in does not exist
        return _emit(_error("STORAGE_ERROR", f"Could not write {out}: {exc.strerror or exc}"))
    return _emit({**reply, "path": str(Path(out).expanduser().resolve())})


def _ask_running_app(
    args: argparse.Namespace, channel: str, payload: dict[str, Any]
) -> dict[str, Any] | None:
    """A quick read answered by the running app for this home, if there is one."""
    if args.engine is not None:
        return None  # an explicit engine means "this process decides"
    from app.core.paths import resolve_home
    from app.remote import invoke

    return invoke(resolve_home(args.home), channel, payload)


def _progress_to_stderr(done: int, total: int, label: str) -> None:
    sys.stderr.write(f"[{done}/{total}] {label}\n")
    sys.stderr.flush()


def _auth(args: argparse.Namespace) -> int:
    from app.core import keys
    from app.core.errors import PuffinError

    try:
        if args.auth_cmd == "set":
            return _emit(keys.auth_set_from_stdin(sys.stdin))
        if args.auth_cmd == "clear":
            return _emit(keys.auth_clear())
        return _emit(keys.auth_status())
    except PuffinError as exc:
        return _emit(_error(exc.code, exc.message))


def _logs(args: argparse.Namespace) -> int:
    """Print the operational log's path, or its last lines (plain text, for a bug report)."""
    from app.core.paths import resolve_home
    from app.logsetup import log_file, tail

    home = resolve_home(args.home)
    if args.path:
        sys.stdout.write(f"{log_file(home)}\n")
        return EXIT_OK
    text = tail(home, args.lines)
    if not text:
        sys.stderr.write(
            f"No log yet at {log_file(home)}: the app, the MCP server and "
            "writing commands (scan, memorize, maintain) add to it.\n"
        )
        return EXIT_OK
    sys.stdout.write(text + "\n")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `puffin-memory` and `python -m app`."""
    _quiet_tracebacks()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except _ArgumentError as exc:
        sys.stderr.write(f"{exc.usage}puffin-memory: error: {exc}\n")
        return _emit(_error("INVALID_INPUT", str(exc)))
    except SystemExit as exc:  # --help and --version-like actions print and exit
        return EXIT_INPUT if exc.code else EXIT_OK
    if args.show_version:
        from app import __version__

        sys.stdout.write(f"puffin-memory {__version__}\n")
        return EXIT_OK
    hook_code = run_hooks(args, deadline=True)
    if hook_code is not None:
        return hook_code
    from app.core.errors import PuffinError

    if args.command in (None, "gui"):
        from app.gui import run_app

        return run_app(Path(args.home).expanduser() if args.home else None, sys.argv)
    if args.command == "connect":
        from app.integrations.connect import connect

        try:
            return _emit(
                connect(
                    args.client,
                    uninstall=args.uninstall,
                    project=Path(args.project).expanduser() if args.project else None,
                )
            )
        except PuffinError as exc:
            return _emit(_error(exc.code, exc.message))
    if args.command == "mcp":
        from app.integrations.mcp_tools import run as run_mcp

        return run_mcp(Path(args.home).expanduser() if args.home else None)
    if args.command == "logs":
        return _logs(args)
    try:
        if args.command == "auth":
            return _auth(args)
        found = _command_of(args)
        if found is None:
            parser.print_help(sys.stderr)
            return EXIT_INPUT
        channel, payload = found[0].name, _payload(found[1], args)
        remote = _ask_running_app(args, channel, payload)
        if remote is not None:
            return _emit(remote)
        return _invoke(args, channel, payload)
    except UsageError as exc:
        return _emit(_error("INVALID_INPUT", str(exc)))
    except PuffinError as exc:  # raised before a request (e.g. a home that is a file)
        return _emit(_error(exc.code, exc.message))
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted.\n")
        return 130
    except Exception as exc:  # last line of defence: a clear message, never a traceback
        import logging

        logging.getLogger(__name__).debug("command crashed", exc_info=True)
        return _emit(_error("INTERNAL_ERROR", f"{type(exc).__name__}: {exc}"))
