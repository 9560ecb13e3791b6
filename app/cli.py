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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from app.integrations.cli_hooks import add_parsers as add_hook_parsers
from app.integrations.cli_hooks import run as run_hooks

EXIT_OK, EXIT_ERROR, EXIT_INPUT = 0, 1, 2
CATEGORIES = (
    "coding_preferences",
    "architectural_decisions",
    "project_conventions",
    "bug_patterns",
    "implementation_notes",
)


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


# -- request builders: argparse namespace -> (channel, payload) ------------------------------
Builder = Callable[[argparse.Namespace], tuple[str, dict[str, Any]]]


def _memorize(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    return "memory:memorize", {
        "conversationText": _read_input(a.file),
        "branchId": a.branch,
        "source": a.source,
    }


def _retrieve(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    payload: dict[str, Any] = {"query": a.query, "maxResults": a.max_results, "mode": a.mode}
    if a.branch:
        payload["branch"] = a.branch
    if a.project:
        payload["project"] = a.project
    if a.include_archive:
        payload["includeArchive"] = True
    return "memory:retrieve", payload


def _archive(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    if a.archive_cmd == "list":
        return "memory:archive-list", {"branch": a.branch}
    if a.archive_cmd == "restore":
        return "memory:archive-restore", {"branch": a.branch, "id": a.id}
    raise UsageError("archive needs one of: list, restore")


def _branch(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    if a.branch_cmd == "list":
        return "memory:list-branches", {}
    if a.branch_cmd == "show":
        return "memory:get-branch-memory", {"branch": a.branch}
    if a.branch_cmd == "versions":
        return "memory:list-versions", {"branch": a.branch}
    if a.branch_cmd == "restore":
        return "memory:restore-version", {"branch": a.branch, "version": a.version}
    raise UsageError("branch needs one of: list, show, versions, restore")


def _clear(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    if not a.yes:
        raise UsageError(
            f"Refusing to clear {a.branch!r} without --yes (it can be undone with "
            "`branch versions` and `branch restore`)."
        )
    return "memory:clear-branch-memory", {"branch": a.branch}


def _review(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    if a.review_cmd == "list":
        return "memory:review-list", {}
    if a.review_cmd == "approve":
        payload: dict[str, Any] = {"id": a.id}
        if a.title:
            payload["title"] = a.title
        if a.content:
            payload["content"] = a.content
        return "memory:review-approve", payload
    if a.review_cmd == "reject":
        return "memory:review-reject", {"id": a.id}
    raise UsageError("review needs one of: list, approve ID, reject ID")


def _scan(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    payload: dict[str, Any] = {"dryRun": a.dry_run}
    if a.source:
        payload["source"] = a.source
    if a.path:
        payload["path"] = str(Path(a.path).expanduser().resolve())
    if a.since:
        payload["since"] = a.since
    return "memory:scan", payload


def _list(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    payload: dict[str, Any] = {}
    if a.type:
        payload["type"] = a.type
    if a.branch:
        payload["branch"] = a.branch
    if a.limit:
        payload["limit"] = a.limit
    if a.tags:
        payload["tags"] = _csv(a.tags)
    return "memory:list-items", payload


def _forget(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    payload: dict[str, Any] = {}
    if a.id:
        payload["id"] = a.id
    if a.tags:
        payload["tags"] = _csv(a.tags)
    if a.pattern:
        payload["pattern"] = a.pattern
    if a.older_than is not None:
        payload["olderThan"] = a.older_than
    if a.all:
        payload["all"] = True
        payload["confirm"] = a.confirm
    return "memory:forget", payload


def _remember(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    text = " ".join(a.text).strip() if a.text else _read_input(None).strip()
    payload: dict[str, Any] = {"branch": a.branch, "text": text, "category": a.category}
    if a.tags:
        payload["tags"] = _csv(a.tags)
    return "memory:remember", payload


def _recall(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    # keyword: the FTS index alone; semantic and hybrid add the engine's deep tiers.
    payload: dict[str, Any] = {
        "query": a.query,
        "maxResults": a.limit,
        "mode": "fast" if a.mode == "keyword" else "deep",
    }
    if a.tags:
        payload["tags"] = _csv(a.tags)
    if a.include_archive:
        payload["includeArchive"] = True
    return "memory:retrieve", payload


def _import(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    payload: dict[str, Any] = {"content": _read_input(a.file)}
    if a.branch:
        payload["branch"] = a.branch
    return "memory:import", payload


SIMPLE: dict[str, Builder] = {
    "recall": _recall,
    "context": lambda a: ("memory:context", {"topic": " ".join(a.topic)} if a.topic else {}),
    "health": lambda a: ("memory:health", {"index": a.index}),
    "repair": lambda a: ("memory:repair", {}),
    "export": lambda a: ("memory:export", {"format": a.format}),
    "import": _import,
    "memorize": _memorize,
    "retrieve": _retrieve,
    "branch": _branch,
    "archive": _archive,
    "stats": lambda a: ("memory:get-stats", {}),
    "status": lambda a: ("memory:get-status", {}),
    "clear": _clear,
    "maintain": lambda a: ("memory:run-maintenance", {"type": a.type}),
    "review": _review,
    "sources": lambda a: ("memory:sources", {}),
    "scan": _scan,
    "improve": lambda a: ("memory:improve", {"branch": a.branch}),
    "provenance": lambda a: ("memory:provenance", {"id": a.id}),
    "usage": lambda a: ("memory:usage", {}),
    "list": _list,
    "get": lambda a: ("memory:get-item", {"id": a.id}),
    "forget": _forget,
    "remember": _remember,
    "activity": lambda a: ("memory:activity", {"limit": a.limit}),
}


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

    p = sub.add_parser("memorize", help="extract memories from a conversation")
    p.add_argument("--branch", required=True)
    p.add_argument("--file", help="conversation file (default: stdin)")
    p.add_argument("--source", default="cli", help="source reference stored with items")

    p = sub.add_parser("retrieve", help="search memories")
    p.add_argument("query")
    p.add_argument("--max-results", type=int, default=5)
    p.add_argument("--branch")
    p.add_argument("--project")
    p.add_argument("--mode", choices=["fast", "deep"], default="fast")
    p.add_argument(
        "--include-archive", action="store_true", help="also search items archived by maintenance"
    )

    p = sub.add_parser("archive", help="items maintenance took out of a branch: list, restore")
    asub = p.add_subparsers(dest="archive_cmd", metavar="ACTION")
    asub.add_parser("list").add_argument("branch")
    r = asub.add_parser("restore")
    r.add_argument("branch")
    r.add_argument("id")

    p = sub.add_parser("branch", help="list, show, versions, restore")
    bsub = p.add_subparsers(dest="branch_cmd", metavar="ACTION")
    bsub.add_parser("list")
    for name in ("show", "versions"):
        bsub.add_parser(name).add_argument("branch")
    r = bsub.add_parser("restore")
    r.add_argument("branch")
    r.add_argument("version")

    sub.add_parser("stats", help="counts, last memorized, next maintenance")
    sub.add_parser("status", help="ready / processing / error, engine, notes")
    p = sub.add_parser("clear", help="remove a branch memory (kept as a version)")
    p.add_argument("branch")
    p.add_argument("--yes", action="store_true")
    p = sub.add_parser("maintain", help="run maintenance")
    p.add_argument("--type", choices=["weekly", "monthly", "full"], default="full")

    p = sub.add_parser("review", help="medium-confidence items waiting for approval")
    rsub = p.add_subparsers(dest="review_cmd", metavar="ACTION")
    rsub.add_parser("list")
    r = rsub.add_parser("approve")
    r.add_argument("id")
    r.add_argument("--title")
    r.add_argument("--content")
    rsub.add_parser("reject").add_argument("id")

    sub.add_parser("sources", help="configured sources and what they hold")
    p = sub.add_parser("scan", help="memorize complete, unprocessed agent threads")
    p.add_argument("--source", choices=["claude-code", "puffin", "codex", "aider"])
    p.add_argument("--path")
    p.add_argument("--since", help="only threads active since this date (YYYY-MM-DD)")
    p.add_argument("--dry-run", action="store_true")

    sub.add_parser(
        "provenance",
        help="where an item came from: agent, conversation, date, excerpt, transcript path",
    ).add_argument("id")
    p = sub.add_parser(
        "improve",
        help="re-read a branch's threads that only the offline "
        "engine has read, with Claude or the local model",
    )
    p.add_argument("branch", help="the branch id, e.g. myproject/main")
    sub.add_parser("usage", help="LLM tokens and estimated cost, today and this month")
    p = sub.add_parser("auth", help="Anthropic API key: set (from stdin/prompt), status, clear")
    p.add_argument("auth_cmd", choices=["set", "status", "clear"])

    p = sub.add_parser("list", help="list items")
    p.add_argument("--type", choices=CATEGORIES)
    p.add_argument("--branch")
    p.add_argument("--tags")
    p.add_argument("--limit", type=int)
    sub.add_parser("get", help="one item by id").add_argument("id")
    p = sub.add_parser("forget", help="remove items (undoable through versions)")
    p.add_argument("id", nargs="?")
    p.add_argument("--tags")
    p.add_argument("--pattern")
    p.add_argument("--older-than", type=int, metavar="DAYS")
    p.add_argument("--all", action="store_true")
    p.add_argument("--confirm", action="store_true")
    p = sub.add_parser("remember", help="add a pinned user memory")
    p.add_argument("--branch", required=True)
    p.add_argument("--category", choices=CATEGORIES, default="implementation_notes")
    p.add_argument("--tags")
    p.add_argument("text", nargs="*")
    p = sub.add_parser("activity", help="recent activity")
    p.add_argument("--limit", type=int, default=20)

    p = sub.add_parser("recall", help="search with tags and modes (seed 002)")
    p.add_argument("query")
    p.add_argument("--tags")
    p.add_argument("--mode", choices=["keyword", "semantic", "hybrid"], default="hybrid")
    p.add_argument("--limit", type=int, default=5)
    p.add_argument(
        "--include-archive", action="store_true", help="also search items archived by maintenance"
    )
    sub.add_parser("context", help="a markdown digest of memory").add_argument("topic", nargs="*")
    sub.add_parser("health", help="check files (and the index)").add_argument(
        "--index", action="store_true"
    )
    sub.add_parser("repair", help="rebuild the index, fix what can be fixed")
    p = sub.add_parser("export", help="write every branch memory to one file")
    p.add_argument("out", help="output file ('-' for stdout)")
    p.add_argument("--format", choices=["json", "md"], default="json")
    p = sub.add_parser("import", help="merge an export (user items always kept)")
    p.add_argument("file")
    p.add_argument("--branch", help="target branch when importing a single memory file")

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


# Channels that only read: with no memory home yet they answer from an empty one and
# must not create `~/.puffin/memory` as a side effect.
_READ_ONLY = frozenset(
    {
        "memory:retrieve",
        "memory:list-items",
        "memory:get-item",
        "memory:get-branch-memory",
        "memory:list-branches",
        "memory:context",
        "memory:get-stats",
        "memory:get-status",
        "memory:list-versions",
        "memory:get-version",
        "memory:archive-list",
        "memory:review-list",
        "memory:list-conflicts",
        "memory:activity",
        "memory:usage",
        "memory:export",
        "memory:health",
        "memory:provenance",
    }
)


async def _invoke(args: argparse.Namespace, channel: str, payload: dict[str, Any]) -> int:
    from app.container import build_api
    from app.core.paths import resolve_home

    home = resolve_home(args.home)
    if channel in _READ_ONLY and not home.exists():
        import tempfile

        with tempfile.TemporaryDirectory(prefix="puffin-memory-empty-") as empty:
            api = build_api(empty, engine_override=args.engine)
            reply = await api.invoke(channel, payload)
            api.index.close()
        return _finish(args, channel, _restate_home(reply, empty, home))
    if channel not in _READ_ONLY:  # reads never write, not even a log line
        from app.logsetup import configure

        configure(home, "cli")
    api = build_api(home, engine_override=args.engine)
    if channel in ("memory:scan", "memory:improve") and not payload.get("dryRun"):
        api.progress = _progress_to_stderr
    reply = await api.invoke(channel, payload)
    if channel == "memory:scan" and _scan_failed(reply):
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
    if channel == "memory:export" and not reply.get("error"):
        return _write_export(args.out, reply)
    if channel == "memory:context" and not reply.get("error"):
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
        builder = SIMPLE.get(args.command)
        if builder is None:
            parser.print_help(sys.stderr)
            return EXIT_INPUT
        channel, payload = builder(args)
        remote = _ask_running_app(args, channel, payload)
        if remote is not None:
            return _emit(remote)
        import asyncio  # deferred: most of the CLI's import cost, and hooks never need it

        return asyncio.run(_invoke(args, channel, payload))
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
