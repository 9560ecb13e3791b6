"""`puffin-memory mcp` driven by a raw JSON-RPC client over a real stdio subprocess:
initialize, tools/list, every tool, bad arguments, and a clean exit when stdin closes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.api import CHANNELS
from app.integrations.mcp_tools import TOOLS

REPO = Path(__file__).resolve().parents[2]


class Client:
    """A minimal MCP client: one JSON object per line each way."""

    def __init__(self, home: Path, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "--home", str(home), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            text=True,
            env={**_env(), "PYTHONPATH": str(REPO)},
        )
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        self.send(
            {
                "jsonrpc": "2.0",
                "id": self.next_id,
                "method": method,
                **({"params": params} if params is not None else {}),
            }
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"server closed stdout; stderr: {self._stderr()}"
        reply = json.loads(line)  # stdout holds JSON-RPC only
        assert reply["id"] == self.next_id
        return reply

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self.request("tools/call", {"name": name, "arguments": arguments})[
            "result"
        ]
        return result

    def _stderr(self) -> str:
        self.proc.kill()
        return self.proc.stderr.read() if self.proc.stderr else ""


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "PUFFIN_MEMORY_HOME"}


@pytest.fixture
def client(home: Path, tmp_path: Path) -> Iterator[Client]:
    checkout = tmp_path / "shop"
    (checkout / ".git").mkdir(parents=True)
    (checkout / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    started = Client(home, checkout)
    init = started.request(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "pytest", "version": "0"},
        },
    )
    assert init["result"]["serverInfo"]["name"] == "puffin-memory"
    started.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    yield started
    if started.proc.poll() is None:
        started.proc.kill()
        started.proc.wait(5)


def _structured(result: dict[str, Any]) -> dict[str, Any]:
    assert not result.get("isError"), result
    data: dict[str, Any] = result["structuredContent"]
    return data


def test_every_tool_is_declared_once_against_a_real_channel() -> None:
    assert len({t.name for t in TOOLS}) == len(TOOLS)
    for tool in TOOLS:
        assert set(tool.channels) <= set(CHANNELS), tool


def test_tools_are_listed_with_schemas_and_hints(client: Client) -> None:
    tools = {t["name"]: t for t in client.request("tools/list")["result"]["tools"]}
    assert set(tools) == {t.name for t in TOOLS}
    assert tools["search"]["annotations"]["readOnlyHint"] is True
    assert tools["forget"]["annotations"]["destructiveHint"] is True
    assert "query" in tools["search"]["inputSchema"]["required"]
    assert tools["remember"]["inputSchema"]["properties"]["category"]["enum"]


def test_remember_search_get_list_forget_review_over_stdio(client: Client) -> None:
    text = "Use pnpm workspaces for the monorepo; never add a package-lock.json"
    added = _structured(client.call("remember", {"text": text, "category": "project_conventions"}))
    # No branch given: the git branch of the client's folder (shop, on main).
    assert added["branch"] == "shop/main" and added["added"] is True

    found = _structured(client.call("search", {"query": "pnpm workspaces monorepo"}))
    assert found["memories"][0]["id"] == added["id"]
    assert found["memories"][0]["branch"] == "shop/main"

    nothing = _structured(client.call("search", {"query": "kubernetes helm chart upgrade"}))
    assert nothing["memories"] == [] and nothing["message"]

    branch = _structured(client.call("get_branch", {}))
    assert "pnpm workspaces" in branch["content"]
    # What a session start on this branch is given: the hook's own text.
    start = _structured(client.call("session_context", {}))
    assert start["branch"] == "shop/main" and "pnpm workspaces" in start["markdown"]
    assert start["markdown"].startswith('<remembered-notes source="puffin-memory">')
    listed = _structured(client.call("list_branches", {}))
    assert [b["branch"] for b in listed["branches"]] == ["shop/main"]
    queue = _structured(client.call("review_queue", {"action": "list"}))
    assert queue["items"] == []

    gone = _structured(client.call("forget", {"id": added["id"]}))
    assert gone["forgotten"] == 1 and gone["versions"]
    again = _structured(client.call("search", {"query": "pnpm workspaces monorepo"}))
    assert again["memories"] == []


def test_bad_arguments_are_error_results_and_the_server_lives_on(client: Client) -> None:
    missing = client.call("forget", {})
    assert missing["isError"] is True
    unknown = client.call("get_branch", {"branch": "nope/branch"})
    assert unknown["isError"] is True and "NOT_FOUND" in unknown["content"][0]["text"]
    approve = client.call("review_queue", {"action": "approve"})
    assert approve["isError"] is True
    assert "needs the candidate's id" in approve["content"][0]["text"]
    wrong = client.call("remember", {"text": "x", "category": "gossip"})
    assert wrong["isError"] is True
    assert client.request("tools/list")["result"]["tools"], "still answering"


def test_the_server_exits_cleanly_when_stdin_closes(client: Client) -> None:
    assert client.proc.stdin is not None
    client.proc.stdin.close()
    started = time.monotonic()
    assert client.proc.wait(10) == 0
    assert time.monotonic() - started < 5
