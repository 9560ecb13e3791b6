"""The Claude Code plugin folder: manifest, hooks, MCP server and launcher, checked by
running every command it declares the way Claude Code would."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "packaging" / "claude-plugin"
LAUNCHER = PLUGIN / "bin" / "puffin-memory-launch"
pytestmark = pytest.mark.skipif(os.name == "nt", reason="the launcher is a POSIX sh script")


def _load(relative: str) -> dict[str, object]:
    data = json.loads((PLUGIN / relative).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _commands() -> list[str]:
    hooks = _load("hooks/hooks.json")["hooks"]
    assert isinstance(hooks, dict)
    return [h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]]


def _installed_bin(tmp_path: Path) -> Path:
    """A `puffin-memory` executable running this checkout, as an installed one would."""
    script = tmp_path / "bin" / "puffin-memory"
    script.parent.mkdir()
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m app "$@"\n')
    script.chmod(0o755)
    return script


def test_manifest_marketplace_and_files_are_where_claude_code_looks() -> None:
    manifest = _load(".claude-plugin/plugin.json")
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", str(manifest["name"]))
    assert manifest["version"] and manifest["description"]
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    entry = market["plugins"][0]
    assert entry["name"] == manifest["name"]
    assert (REPO / entry["source"]).resolve() == PLUGIN.resolve()
    assert (PLUGIN / "skills" / "memory" / "SKILL.md").read_text().startswith("---\nname:")
    assert {p.name for p in (PLUGIN / "commands").iterdir()} == {"remember.md", "memory.md"}


def test_no_absolute_paths_and_everything_goes_through_the_launcher() -> None:
    for path in PLUGIN.rglob("*.json"):
        text = path.read_text()
        assert "/work/" not in text and "/home/" not in text and "C:\\\\" not in text, path
    mcp = _load(".mcp.json")["mcpServers"]["puffin-memory"]  # type: ignore[index]
    assert mcp["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/puffin-memory-launch"  # type: ignore[index]
    assert mcp["args"] == ["mcp"]  # type: ignore[index]
    for command in _commands():
        assert command.startswith("${CLAUDE_PLUGIN_ROOT}/bin/puffin-memory-launch hook ")
    assert os.access(LAUNCHER, os.X_OK)
    matcher = _load("hooks/hooks.json")["hooks"]["SessionStart"][0]["matcher"]  # type: ignore[index]
    assert matcher == "startup|resume|clear|compact"


def test_every_hook_command_runs_and_exits_0(tmp_path: Path) -> None:
    binary = _installed_bin(tmp_path)
    home = tmp_path / "memory"
    env = {
        **os.environ,
        "PUFFIN_MEMORY_BIN": str(binary),
        "PUFFIN_MEMORY_HOME": str(home),
        "CLAUDE_PLUGIN_ROOT": str(PLUGIN),
    }
    sample = json.dumps(
        {
            "session_id": "s1",
            "cwd": str(tmp_path),
            "prompt": "hello there",
            "source": "startup",
            "transcript_path": str(tmp_path / "none.jsonl"),
        }
    )
    for command in _commands():
        argv = command.replace("${CLAUDE_PLUGIN_ROOT}", str(PLUGIN)).split()
        done = subprocess.run(
            argv, input=sample, capture_output=True, text=True, env=env, timeout=60
        )
        assert done.returncode == 0, (command, done.stderr)


def test_the_plugin_mcp_server_is_puffin_memory_mcp(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PUFFIN_MEMORY_BIN": str(_installed_bin(tmp_path)),
        "PUFFIN_MEMORY_HOME": str(tmp_path / "memory"),
    }
    init = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        }
    )
    done = subprocess.run(
        [str(LAUNCHER), "mcp"],
        input=init + "\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == (
        "puffin-memory"
    )


def test_without_the_app_hooks_stay_silent_and_mcp_says_how_to_install(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}  # no puffin-memory anywhere
    hook = subprocess.run(
        ["/bin/sh", str(LAUNCHER), "hook", "session-start"],
        input="{}",
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert hook.returncode == 0 and hook.stdout == "" and hook.stderr == ""
    mcp = subprocess.run(
        ["/bin/sh", str(LAUNCHER), "mcp"], capture_output=True, text=True, env=env, timeout=30
    )
    assert mcp.returncode == 1 and "pipx install" in mcp.stderr
