"""`puffin-memory connect codex|cursor|claude`: register the MCP server with an agent.

Owns writing (and removing) our one entry in each client's MCP configuration:

- Codex: `~/.codex/config.toml`, table `[mcp_servers.puffin-memory]`;
- Cursor: `<project>/.cursor/mcp.json` with `--project`, else `~/.cursor/mcp.json`;
- Claude Code: `<project>/.mcp.json` (the current folder without `--project`).

Every change merges with what is there, keeps a backup of the original next to it
(`<name>.puffin-backup`, written once), is idempotent, and `--uninstall` removes only our
entry. Python reads TOML but has no writer, so the Codex file is edited as text: our table
is appended or replaced between its header and the next table, and everything else is kept
byte for byte; the result is checked with `tomllib` before it is written.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tomllib
from pathlib import Path
from typing import Any

from app.core.atomic import atomic_write_text
from app.core.errors import InvalidInput, StorageError

SERVER = "puffin-memory"
CLIENTS = ("codex", "cursor", "claude")
BACKUP_SUFFIX = ".puffin-backup"


def server_command() -> tuple[str, list[str]]:
    """The command that starts our MCP server, as an absolute path clients can run."""
    # The console script beside the running interpreter (a venv, pipx, uv tool) first: it is
    # the install this command belongs to; then PATH; then the interpreter itself.
    beside = Path(sys.executable).with_name(
        "puffin-memory.exe" if sys.platform == "win32" else "puffin-memory"
    )
    found = str(beside) if beside.is_file() else shutil.which("puffin-memory")
    if found:
        return str(Path(found).absolute()), ["mcp"]
    return sys.executable, ["-m", "app", "mcp"]


def target(client: str, *, project: Path | None, home: Path) -> Path:
    """The configuration file `client` reads its MCP servers from."""
    if client == "codex":
        return home / ".codex" / "config.toml"
    if client == "cursor":
        return (project / ".cursor" / "mcp.json") if project else home / ".cursor" / "mcp.json"
    if client == "claude":
        return (project or Path.cwd()) / ".mcp.json"
    raise InvalidInput(f"Unknown client {client!r}: use one of {', '.join(CLIENTS)}.")


def connect(
    client: str, *, uninstall: bool = False, project: Path | None = None, home: Path | None = None
) -> dict[str, Any]:
    """Add (or remove) our server in `client`'s configuration; says what changed."""
    path = target(client, project=project, home=home or Path.home())
    command, args = server_command()
    try:
        before = path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError) as exc:
        raise StorageError(f"Cannot read {path}: {exc}") from exc
    if client == "codex":
        after = _codex(before or "", command, args, uninstall)
    else:
        after = _json(before, path, command, args, uninstall)
    changed = after != (before or "") and not (before is None and uninstall)
    backup = None
    if changed:
        try:
            if before is not None:
                backup = path.with_name(path.name + BACKUP_SUFFIX)
                if not backup.exists():
                    atomic_write_text(backup, before)
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, after)
        except OSError as exc:
            raise StorageError(f"Cannot write {path}: {exc.strerror or exc}") from exc
    return {
        "client": client,
        "path": str(path),
        "changed": changed,
        "installed": not uninstall,
        "command": [command, *args],
        "backup": str(backup) if backup else None,
    }


# -- JSON clients (Cursor, Claude Code) -------------------------------------------------------
def _json(before: str | None, path: Path, command: str, args: list[str], uninstall: bool) -> str:
    try:
        data = json.loads(before) if before and before.strip() else {}
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path} is not valid JSON ({exc}); fix it first.") from exc
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} must hold a JSON object.")
    servers = data.get("mcpServers")
    if servers is None:
        servers = {}
    if not isinstance(servers, dict):
        raise InvalidInput(f"'mcpServers' in {path} must be an object.")
    if uninstall:
        if SERVER not in servers:
            return before or ""
        servers.pop(SERVER)
    else:
        entry = {"command": command, "args": args}
        if servers.get(SERVER) == entry:
            return before or ""
        servers[SERVER] = entry
    data["mcpServers"] = servers
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# -- Codex (TOML) -----------------------------------------------------------------------------
_HEADER = re.compile(
    r'^[ \t]*\[[ \t]*mcp_servers[ \t]*\.[ \t]*(?:"puffin-memory"|puffin-memory)[ \t]*\][ \t]*$',
    re.MULTILINE,
)
_ANY_TABLE = re.compile(r"^[ \t]*\[", re.MULTILINE)


def _codex(before: str, command: str, args: list[str], uninstall: bool) -> str:
    try:
        tomllib.loads(before)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(
            f"~/.codex/config.toml is not valid TOML ({exc}); fix it first."
        ) from exc
    match = _HEADER.search(before)
    if match is None:
        if uninstall:
            return before
        start = end = len(before)
        prefix = (
            ""
            if not before or before.endswith("\n\n")
            else ("\n" if before.endswith("\n") else "\n\n")
        )
    else:
        start = match.start()
        following = _ANY_TABLE.search(before, match.end())
        end = following.start() if following else len(before)
        prefix = ""
    block = (
        ""
        if uninstall
        else (
            f"{prefix}[mcp_servers.{SERVER}]\n"
            f"command = {json.dumps(command)}\n"
            f"args = {json.dumps(args)}\n" + ("\n" if end < len(before) else "")
        )
    )
    after = before[:start] + block + before[end:]
    parsed = tomllib.loads(after)  # never write a file Codex cannot read
    if not uninstall:
        entry = parsed.get("mcp_servers", {}).get(SERVER, {})
        if entry.get("command") != command or entry.get("args") != args:
            raise StorageError(
                "Could not add puffin-memory to ~/.codex/config.toml safely; nothing was changed."
            )
    return after
