"""install-hooks: our entries merged into Claude Code's settings, idempotent, undoable."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from app.core.errors import InvalidInput
from app.integrations.installer import HOOKS, base_command, install_hooks, is_ours

ORIGINAL: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"], "deny": []},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "tmux-hello.sh"}]}
        ],
    },
    "env": {"FOO": "1"},
}

EVENTS = ["PreCompact", "SessionEnd", "SessionStart", "UserPromptSubmit"]


def _write(path: Path, data: dict[str, Any]) -> bytes:
    raw = (json.dumps(data, indent=2) + "\n").encode()
    path.write_bytes(raw)
    return raw


def _ours(settings: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [h for g in settings["hooks"].get(event, []) for h in g["hooks"] if is_ours(h)]


@pytest.fixture
def settings(tmp_path: Path) -> Path:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    _write(path, ORIGINAL)
    return path


def test_install_adds_ours_and_keeps_everything_else(settings: Path, home: Path) -> None:
    reply = install_hooks(settings, home=home)

    data = json.loads(settings.read_text(encoding="utf-8"))
    assert reply["changed"] is True
    assert sorted(reply["added"]) == EVENTS
    assert list(data) == list(ORIGINAL)  # key order kept
    for key in ("model", "permissions", "env"):
        assert data[key] == ORIGINAL[key]
    assert data["hooks"]["PreToolUse"] == ORIGINAL["hooks"]["PreToolUse"]
    assert data["hooks"]["SessionStart"][0] == ORIGINAL["hooks"]["SessionStart"][0]
    start = _ours(data, "SessionStart")
    assert len(start) == 1
    assert start[0]["type"] == "command"
    assert start[0]["command"].endswith(" hook session-start")
    assert isinstance(start[0]["timeout"], int)
    assert _ours(data, "SessionEnd")[0]["command"].endswith(" hook session-end")
    assert _ours(data, "PreCompact")[0]["command"].endswith(" hook pre-compact")
    assert settings.read_text(encoding="utf-8").startswith('{\n  "model"')  # 2 spaces


def test_install_keeps_a_backup_of_the_original(settings: Path, home: Path) -> None:
    original = settings.read_bytes()

    reply = install_hooks(settings, home=home)

    backup = Path(reply["backup"])
    assert backup.name.startswith("settings.json.bak-")
    assert backup.read_bytes() == original


def test_install_twice_duplicates_nothing(settings: Path, home: Path) -> None:
    install_hooks(settings, home=home)
    first = settings.read_bytes()
    backups = sorted(settings.parent.glob("settings.json.bak-*"))

    reply = install_hooks(settings, home=home)

    assert reply["changed"] is False
    assert reply["backup"] is None
    assert settings.read_bytes() == first
    assert sorted(settings.parent.glob("settings.json.bak-*")) == backups
    data = json.loads(first)
    for event, *_ in HOOKS:
        assert len(_ours(data, event)) == 1


def test_uninstall_gives_back_the_original(settings: Path, home: Path) -> None:
    install_hooks(settings, home=home)

    reply = install_hooks(settings, uninstall=True, home=home)

    restored = json.loads(settings.read_text(encoding="utf-8"))
    assert restored == ORIGINAL
    assert list(restored) == list(ORIGINAL)
    assert list(restored["hooks"]) == list(ORIGINAL["hooks"])
    assert sorted(reply["removed"]) == EVENTS
    assert install_hooks(settings, uninstall=True, home=home)["changed"] is False


def test_uninstall_removes_the_hooks_key_it_added(tmp_path: Path, home: Path) -> None:
    path = tmp_path / "settings.json"
    _write(path, {"model": "sonnet"})

    install_hooks(path, home=home)
    install_hooks(path, uninstall=True, home=home)

    assert json.loads(path.read_text(encoding="utf-8")) == {"model": "sonnet"}


def test_a_changed_command_replaces_ours_in_place(settings: Path, tmp_path: Path) -> None:
    install_hooks(settings)
    reply = install_hooks(settings, home=tmp_path / "other-home")

    data = json.loads(settings.read_text(encoding="utf-8"))
    assert sorted(reply["updated"]) == EVENTS
    commands = [h["command"] for h in _ours(data, "SessionStart")]
    assert len(commands) == 1
    assert "--home" in commands[0]
    assert str((tmp_path / "other-home").resolve()) in commands[0]


def test_invalid_json_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"model": "opus",, }', encoding="utf-8")

    with pytest.raises(InvalidInput, match="not valid JSON"):
        install_hooks(path)

    assert path.read_text(encoding="utf-8") == '{"model": "opus",, }'
    assert not list(tmp_path.glob("settings.json.bak-*"))


@pytest.mark.parametrize(
    "content", ['["a list"]', '{"hooks": []}', '{"hooks": {"SessionStart": {}}}']
)
def test_settings_of_the_wrong_shape_are_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(content, encoding="utf-8")

    with pytest.raises(InvalidInput):
        install_hooks(path)

    assert path.read_text(encoding="utf-8") == content


def test_a_missing_settings_file_is_created(tmp_path: Path) -> None:
    path = tmp_path / "new" / ".claude" / "settings.json"

    reply = install_hooks(path)

    assert reply["backup"] is None
    data = json.loads(path.read_text(encoding="utf-8"))
    assert set(data["hooks"]) == {"SessionStart", "UserPromptSubmit", "SessionEnd", "PreCompact"}


def test_four_space_indentation_and_a_symlink_are_kept(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "claude-settings.json"
    real.parent.mkdir()
    real.write_text(json.dumps({"model": "opus"}, indent=4) + "\n", encoding="utf-8")
    link = tmp_path / "settings.json"
    link.symlink_to(real)

    install_hooks(link)

    assert link.is_symlink()
    assert real.read_text(encoding="utf-8").startswith('{\n    "model"')


def test_our_user_written_entries_in_a_shared_group_are_the_only_ones_removed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings.json"
    mixed = {
        "hooks": {
            "SessionEnd": [
                {
                    "hooks": [
                        {"type": "command", "command": "notify-send bye"},
                        {
                            "type": "command",
                            "command": "/opt/bin/puffin-memory --home /x hook session-end",
                        },
                    ]
                }
            ]
        }
    }
    _write(path, mixed)

    install_hooks(path, uninstall=True)

    assert json.loads(path.read_text(encoding="utf-8")) == {
        "hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "notify-send bye"}]}]}
    }


@pytest.mark.parametrize(
    ("command", "ours"),
    [
        ("/usr/local/bin/puffin-memory hook session-start", True),
        ("'/Apps/Puffin Memory/puffin-memory' --home /h hook session-end", True),
        ('"C:\\Puffin\\puffin-memory-cli.exe" hook pre-compact', True),
        ("PYTHONPATH=/src /venv/bin/python -m app hook stop", True),
        ("/venv/bin/python -m app --home /h --engine offline hook session-start", True),
        ("puffin-memory retrieve hook", False),
        ("other-tool hook session-start", False),
        ("my-puffin-memory-helper hook session-start", False),
    ],
)
def test_which_commands_are_ours(command: str, ours: bool) -> None:
    assert is_ours({"type": "command", "command": command}) is ours


def test_the_command_runs_this_installation(home: Path, tmp_path: Path) -> None:
    command = base_command(None)
    script = Path(sys.executable).with_name("puffin-memory")
    if script.is_file():
        assert command.startswith(str(script))
    else:
        assert f"{sys.executable} -m app" in command
    assert "--home" not in command
    assert "--home" in base_command(tmp_path / "elsewhere")
    default = Path.home() / ".puffin" / "memory"
    assert "--home" not in base_command(default)


def _cli_routes_hooks() -> bool:
    import argparse

    from app.cli import build_parser

    parser = build_parser()
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return any("hook" in a.choices for a in subs)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell command")
def test_the_installed_command_really_runs_the_hook(tmp_path: Path, home: Path) -> None:
    import subprocess

    if not _cli_routes_hooks():
        pytest.skip("app.cli does not call app.integrations.cli_hooks.add_parsers yet")
    path = tmp_path / "settings.json"
    install_hooks(path, home=home)
    data = json.loads(path.read_text(encoding="utf-8"))
    command = _ours(data, "SessionStart")[0]["command"]
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PUFFIN_MEMORY_HOME"}}

    done = subprocess.run(
        ["/bin/sh", "-c", command],
        input=b"garbage",
        capture_output=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
        check=False,
    )

    # Garbage in: nothing out, exit 0, and the reason in the log of the home it was given.
    assert (done.returncode, done.stdout) == (0, b""), done.stderr
    assert "not JSON" in (home / "logs" / "hooks.log").read_text(encoding="utf-8")
