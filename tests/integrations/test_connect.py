"""`connect codex|cursor|claude`: our MCP entry merged into each client's configuration,
with a backup, idempotent, and removed alone by --uninstall."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from app.core.errors import InvalidInput
from app.integrations.connect import BACKUP_SUFFIX, connect

USER_TOML = """# my Codex settings
model = "gpt-5"

[mcp_servers.github]
command = "gh-mcp"
args = ["serve"]

[profiles.fast]
model = "small"
"""


def test_codex_entry_is_added_keeping_the_users_file_byte_for_byte(tmp_path: Path) -> None:
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(USER_TOML)

    first = connect("codex", home=tmp_path)
    text = config.read_text()
    assert first["changed"] and text.startswith(USER_TOML)
    parsed = tomllib.loads(text)
    assert parsed["mcp_servers"]["puffin-memory"]["args"][-1] == "mcp"
    assert parsed["mcp_servers"]["github"]["command"] == "gh-mcp"
    assert (config.parent / ("config.toml" + BACKUP_SUFFIX)).read_text() == USER_TOML

    again = connect("codex", home=tmp_path)
    assert not again["changed"] and config.read_text() == text

    removed = connect("codex", uninstall=True, home=tmp_path)
    assert removed["changed"]
    assert tomllib.loads(config.read_text()) == tomllib.loads(USER_TOML)
    assert config.read_text().rstrip("\n") == USER_TOML.rstrip("\n")


def test_codex_entry_in_the_middle_is_replaced_in_place(tmp_path: Path) -> None:
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        '[mcp_servers.puffin-memory]\ncommand = "old"\nargs = []\n\n'
        '[profiles.fast]\nmodel = "small"\n'
    )
    connect("codex", home=tmp_path)
    parsed = tomllib.loads(config.read_text())
    assert parsed["mcp_servers"]["puffin-memory"]["command"] != "old"
    assert parsed["profiles"]["fast"]["model"] == "small"


def test_cursor_and_claude_json_are_merged(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    mcp_json = project / ".mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}, "keep": 1}))

    connect("claude", project=project, home=tmp_path)
    data = json.loads(mcp_json.read_text())
    assert set(data["mcpServers"]) == {"other", "puffin-memory"} and data["keep"] == 1

    cursor = connect("cursor", home=tmp_path)  # no project: the user-wide file
    assert Path(cursor["path"]) == tmp_path / ".cursor" / "mcp.json"
    assert "puffin-memory" in json.loads(Path(cursor["path"]).read_text())["mcpServers"]

    connect("claude", project=project, uninstall=True, home=tmp_path)
    assert json.loads(mcp_json.read_text())["mcpServers"] == {"other": {"command": "x"}}


def test_a_broken_config_is_refused_and_left_alone(tmp_path: Path) -> None:
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text("this is = = not toml")
    with pytest.raises(InvalidInput, match="not valid TOML"):
        connect("codex", home=tmp_path)
    assert config.read_text() == "this is = = not toml"


def test_the_cli_prints_json_and_refuses_unknown_clients(tmp_path: Path) -> None:
    ran = subprocess.run(
        [sys.executable, "-m", "app", "connect", "claude", "--project", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["path"] == str(tmp_path / ".mcp.json")
    bad = subprocess.run(
        [sys.executable, "-m", "app", "connect", "vim"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert bad.returncode == 2 and json.loads(bad.stdout)["code"] == "INVALID_INPUT"
