"""The hook installer: our entries in Claude Code's `settings.json`, added and taken out.

Owns `install_hooks`, used by `puffin-memory install-hooks` and by the app's Settings
button. It merges SessionStart, UserPromptSubmit, SessionEnd and PreCompact command hooks into
`~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR/settings.json`, or a given file) in
Claude Code's format - `{"hooks": {"<Event>": [{"matcher": "...", "hooks": [{"type":
"command", "command": "...", "timeout": N}]}]}}` - and touches nothing else: key order,
other hooks and other settings stay as they were. It is idempotent, keeps a backup
(`settings.json.bak-<timestamp>`) before every change, and `uninstall` removes only our
entries, so installing then uninstalling gives back the original document. Ours are
recognised by the command: `puffin-memory ... hook <action>` or `-m app ... hook <action>`.
A settings file that is not valid JSON is a clear InvalidInput and stays untouched.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from app.core.errors import InvalidInput, StorageError
from app.integrations.hookio import write_atomic

# (event, our action, matcher or None for "every occurrence", timeout in seconds). The
# timeouts are Claude Code's safety net; session-start answers in well under a second.
HOOKS: tuple[tuple[str, str, str | None, int], ...] = (
    ("SessionStart", "session-start", "startup|resume|clear|compact", 10),
    ("UserPromptSubmit", "user-prompt-submit", None, 5),
    ("SessionEnd", "session-end", None, 10),
    ("PreCompact", "pre-compact", None, 10),
)
_OURS = re.compile(
    r"(?:puffin-memory(?:-cli)?(?:\.exe)?['\"]?|-m\s+app)\s+(?:\S+\s+)*?"
    r"hook\s+(?:session-start|user-prompt-submit|session-end|stop|pre-compact|process-inbox)\b"
)
_INDENT = re.compile(r"^\{\s*?\n([ \t]+)\S", re.MULTILINE)


def default_settings_path() -> Path:
    """Claude Code's user settings: `$CLAUDE_CONFIG_DIR/settings.json` or `~/.claude/`."""
    folder = os.environ.get("CLAUDE_CONFIG_DIR")
    base = Path(folder).expanduser() if folder else Path.home() / ".claude"
    return base / "settings.json"


def builtin_home() -> Path:
    """The memory home used when nothing says otherwise (`~/.puffin/memory`)."""
    return Path.home() / ".puffin" / "memory"


def is_ours(entry: object) -> bool:
    """Whether a hook entry runs one of our hook commands."""
    if not isinstance(entry, dict):
        return False
    command = entry.get("command")
    return isinstance(command, str) and _OURS.search(command) is not None


def _quote(arg: str) -> str:
    if os.name == "nt":
        return f'"{arg}"' if any(c in arg for c in " \t&()^|<>") else arg
    return shlex.quote(arg)


def _importable_anywhere(python: str) -> bool:
    """Whether `python -m app` works outside this checkout (the package is installed)."""
    try:
        probe = subprocess.run(
            [python, "-c", "import app.integrations"],
            cwd=tempfile.gettempdir(),
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0


def base_command(home: Path | None = None) -> str:
    """The command line that runs `puffin-memory`, as Claude Code will start it.

    The frozen binary (its console twin on Windows), else the `puffin-memory` script next
    to this interpreter, else `<python> -m app` - with PYTHONPATH pointing at this checkout
    when the package is not installed. `--home` is added only for a non-default home.
    """
    exe = Path(sys.executable)
    suffix = ".exe" if os.name == "nt" else ""
    if getattr(sys, "frozen", False):
        console = exe.with_name(f"puffin-memory-cli{suffix}")
        parts = [_quote(str(console if console.is_file() else exe))]
    elif (script := exe.with_name(f"puffin-memory{suffix}")).is_file():
        parts = [_quote(str(script))]
    else:
        parts = [_quote(str(exe)), "-m", "app"]
        if os.name != "nt" and not _importable_anywhere(str(exe)):
            root = Path(__file__).resolve().parents[2]
            parts.insert(0, "PYTHONPATH=" + _quote(str(root)))
    if home is not None:
        resolved = home.expanduser().resolve()
        if resolved != builtin_home().resolve():
            parts += ["--home", _quote(str(resolved))]
    return " ".join(parts)


# -- the settings document ---------------------------------------------------------------
def _load(path: Path) -> tuple[dict[str, Any], bytes | None]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, None
    except IsADirectoryError as exc:
        raise InvalidInput(f"{path} is a folder, not a settings file.") from exc
    except OSError as exc:
        raise StorageError(f"Cannot read {path}: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8-sig")
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError alike
        raise InvalidInput(
            f"{path} is not valid JSON ({exc}); fix or move it, nothing was changed.",
            context={"settings": str(path)},
        ) from exc
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} must hold a JSON object; nothing was changed.")
    return data, raw


def _dump(data: dict[str, Any], original: bytes | None) -> bytes:
    indent: int | str = 2
    newline = True
    if original:
        text = original.decode("utf-8-sig", errors="replace")
        match = _INDENT.search(text)
        if match:
            found = match.group(1)
            indent = found if "\t" in found else len(found)
        newline = text.endswith("\n")
    out = json.dumps(data, indent=indent, ensure_ascii=False)
    return (out + ("\n" if newline else "")).encode("utf-8")


def _hooks_table(data: dict[str, Any], path: Path) -> dict[str, Any] | None:
    hooks = data.get("hooks")
    if hooks is None:
        return None
    if not isinstance(hooks, dict):
        raise InvalidInput(f'{path}: "hooks" must be an object; nothing was changed.')
    return hooks


def _groups(hooks: dict[str, Any], event: str, path: Path) -> list[Any] | None:
    groups = hooks.get(event)
    if groups is None:
        return None
    if not isinstance(groups, list):
        raise InvalidInput(f'{path}: "hooks.{event}" must be a list; nothing was changed.')
    return groups


def _strip_ours(groups: list[Any]) -> bool:
    """Remove our entries (and groups left empty by that) in place; True if any removed."""
    removed = False
    for group in list(groups):
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            continue
        kept = [h for h in group["hooks"] if not is_ours(h)]
        if len(kept) == len(group["hooks"]):
            continue
        removed = True
        if kept:
            group["hooks"] = kept
        else:
            groups.remove(group)
    return removed


def _desired(action: str, matcher: str | None, timeout: int, command: str) -> dict[str, Any]:
    group: dict[str, Any] = {}
    if matcher is not None:
        group["matcher"] = matcher
    group["hooks"] = [
        {"type": "command", "command": f"{command} hook {action}", "timeout": timeout}
    ]
    return group


def _install(data: dict[str, Any], path: Path, command: str) -> tuple[list[str], list[str]]:
    hooks = _hooks_table(data, path)
    if hooks is None:
        hooks = data["hooks"] = {}
    added: list[str] = []
    updated: list[str] = []
    for event, action, matcher, timeout in HOOKS:
        want = _desired(action, matcher, timeout, command)
        groups = _groups(hooks, event, path)
        if groups is None:
            hooks[event] = [want]
            added.append(event)
            continue
        ours = [
            g
            for g in groups
            if isinstance(g, dict)
            and isinstance(g.get("hooks"), list)
            and any(is_ours(h) for h in g["hooks"])
        ]
        if ours == [want]:
            continue
        had = _strip_ours(groups)
        groups.append(want)
        (updated if had else added).append(event)
    return added, updated


def _uninstall(data: dict[str, Any], path: Path) -> list[str]:
    hooks = _hooks_table(data, path)
    if hooks is None:
        return []
    removed: list[str] = []
    for event in list(hooks):
        groups = _groups(hooks, event, path)
        if groups is None or not _strip_ours(groups):
            continue
        removed.append(event)
        if not groups:
            del hooks[event]
    if removed and not hooks:
        del data["hooks"]
    return removed


def _backup(path: Path, raw: bytes) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = path.with_name(f"{path.name}.bak-{stamp}")
    counter = 1
    while target.exists():
        target = path.with_name(f"{path.name}.bak-{stamp}-{counter}")
        counter += 1
    write_atomic(target, raw)
    return target


def install_hooks(
    settings_path: Path | str | None = None,
    *,
    uninstall: bool = False,
    home: Path | str | None = None,
) -> dict[str, Any]:
    """Add (or with `uninstall`, remove) our hooks in a Claude Code settings file.

    Returns what changed: `settings`, `action`, `changed`, `added`, `updated`, `removed`
    (event names), `backup` (path or None) and `command`. Raises InvalidInput when the
    file is not a JSON object (it is left untouched) and StorageError when it cannot be
    written.
    """
    given = Path(settings_path).expanduser() if settings_path else default_settings_path()
    # Write through a symlink (dotfile managers link settings.json into a repository).
    path = given.resolve() if given.is_symlink() else given
    data, raw = _load(path)
    command = base_command(Path(home) if home is not None else None)
    before = json.dumps(data, sort_keys=False)
    added: list[str] = []
    updated: list[str] = []
    removed: list[str] = []
    if uninstall:
        removed = _uninstall(data, path)
    else:
        added, updated = _install(data, path, command)
    changed = json.dumps(data, sort_keys=False) != before
    backup: Path | None = None
    if changed:
        mode = None
        if raw is not None:
            backup = _backup(path, raw)
            try:
                mode = path.stat().st_mode & 0o777
            except OSError:
                mode = None
        try:
            write_atomic(path, _dump(data, raw), mode=mode)
        except OSError as exc:
            raise StorageError(f"Cannot write {path}: {exc.strerror or exc}") from exc
    return {
        "settings": str(given),
        "action": "uninstall" if uninstall else "install",
        "changed": changed,
        "added": added,
        "updated": updated,
        "removed": removed,
        "backup": str(backup) if backup else None,
        "command": command,
    }
