"""End to end: `python -m app memorize --engine anthropic` against a local Messages API.

A small Messages-API-compatible HTTP server runs on 127.0.0.1 in a thread; the CLI runs as a
subprocess with ANTHROPIC_BASE_URL pointing at it, exactly as a user's shell would. A healthy
server gets the branch file evolved and the tokens recorded; a failing one (500, 401,
garbage) leaves an existing branch file byte-for-byte as it was, and the CLI says why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import pytest

from app.core.format import parse
from app.core.store import MemoryStore
from tests.fixtures.anthropic.fake_api import (
    HERE,
    MODELS,
    SOURCE,
    as_event_stream,
    asked_for,
    load,
    request_problem,
    structured,
    text,
)

REPO = Path(__file__).resolve().parents[2]
BRANCH = "spotter/feature-auth"
KEY = "sk-ant-api03-cli-e2e-test-key-0000000000000000"
REPLIES = {"record_memories": "extraction_reply.json", "change_list": "changes_reply.json"}

pytestmark = pytest.mark.slow


class MessagesAPI(ThreadingHTTPServer):
    """The server: answers by `mode` and keeps every request body and its headers."""

    daemon_threads = True

    def __init__(self, mode: str) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.mode = mode
        self.bodies: list[dict[str, Any]] = []
        self.headers_seen: list[dict[str, str]] = []


class Handler(BaseHTTPRequestHandler):
    server: MessagesAPI

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test reads the recorded requests instead."""

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.send_header("request-id", "req_011CSHvLocalTestServer")
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        body = json.loads(raw)
        self.server.bodies.append(body)
        self.server.headers_seen.append({k.lower(): v for k, v in self.headers.items()})
        mode = self.server.mode
        problem = request_problem(body)
        if self.path != "/v1/messages":
            self._send(404, json.dumps(load("error_404.json")).encode())
        elif problem is not None:
            # What the real API answers to a request shape the model refuses.
            error = {
                "type": "error",
                "request_id": "req_rules",
                "error": {"type": "invalid_request_error", "message": problem},
            }
            self._send(400, json.dumps(error).encode())
        elif mode == "healthy":
            name = asked_for(body)
            payload = json.dumps(structured(load(REPLIES[name]))).encode()
            if body.get("stream"):
                streamed = as_event_stream(httpx2.Response(200, content=payload))
                self._send(200, streamed.content, "text/event-stream")
            else:
                self._send(200, payload)
        elif mode in ("500", "401"):
            self._send(int(mode), json.dumps(load(f"error_{mode}.json")).encode())
        else:
            self._send(200, b"<html><body>Captive portal: please log in</body></html>", "text/html")


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[MessagesAPI]:
    api = MessagesAPI(request.param)
    thread = threading.Thread(target=api.serve_forever, daemon=True)
    thread.start()
    yield api
    api.shutdown()
    api.server_close()
    thread.join(5)


def prepare_home(home: Path) -> bytes:
    """A memory home with settings for the test and an existing branch file."""
    (home / "config.json").write_text(
        json.dumps(
            {
                "engine": "anthropic",
                "models": MODELS.model_dump(),
                "max_retries": 0,
                "request_timeout_s": 20,
            }
        )
    )
    store = MemoryStore(home)
    store.ensure()
    store.write_text(BRANCH, text("branch_before.md"))
    return store.branch_file(BRANCH).read_bytes()


def run_cli(home: Path, server: MessagesAPI) -> tuple[int, dict[str, Any], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PUFFIN_"))}
    env.update(
        {
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}",
            "ANTHROPIC_API_KEY": KEY,
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            "HOME": str(home.parent),
            "PYTHONPATH": str(REPO),
            "QT_QPA_PLATFORM": "offscreen",
        }
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "--home",
            str(home),
            "--engine",
            "anthropic",
            "memorize",
            "--branch",
            BRANCH,
            "--file",
            str(HERE / "conversation_auth.txt"),
            "--source",
            SOURCE,
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    return done.returncode, json.loads(done.stdout), done.stderr


@pytest.mark.parametrize("server", ["healthy"], indirect=True)
def test_memorize_through_claude_writes_the_evolved_file(home: Path, server: MessagesAPI) -> None:
    prepare_home(home)

    code, reply, stderr = run_cli(home, server)

    assert code == 0, (reply, stderr)
    assert reply["engine"] == "anthropic" and reply["path"] == "anthropic"
    assert reply["itemsExtracted"] == 4 and reply["queuedForReview"] == 1
    memory = parse(MemoryStore(home).branch_file(BRANCH).read_text())
    assert memory.find("arch-7c5008ff") is not None  # the new decision is in the file
    # The per-module client it superseded is kept whole among the contradictions.
    assert any(i.id == "arch-5c6d7e8f" for c in memory.contradictions for i in c.items)
    assert {"pref-0e1f2a3b", "pref-77aa01cd", "conv-1a2b3c4d"} <= {i.id for i in memory.all_items()}
    assert any("superseded arch-5c6d7e8f" in n for n in reply["notes"])

    extraction, evolution = server.bodies
    assert asked_for(extraction) == "record_memories"
    assert asked_for(evolution) == "change_list"
    assert not any("tool_choice" in b for b in server.bodies)
    assert all(b["system"][0]["cache_control"] == {"type": "ephemeral"} for b in server.bodies)
    sent = json.dumps(server.bodies)
    assert "sk-ant-api03-Zx9Yw8" not in sent and KEY not in sent
    assert all(h["authorization"] == f"Bearer {KEY}" for h in server.headers_seen)

    usage = json.loads((home / "usage.json").read_text())
    [day] = usage["days"].values()
    assert day["claude-haiku-4-5"]["input_tokens"] == 1843
    assert day["claude-haiku-4-5"]["cache_read_input_tokens"] == 1126
    assert day["claude-sonnet-4-6"]["input_tokens"] == 1650
    assert day["claude-sonnet-4-6"]["output_tokens"] == 310


@pytest.mark.parametrize(
    ("server", "why"),
    [
        ("500", "server error (500)"),
        ("401", "rejected the API key (401)"),
        ("garbage", "not a Messages API reply"),
    ],
    indirect=["server"],
)
def test_a_failing_api_falls_back_to_the_offline_engine(
    home: Path, server: MessagesAPI, why: str
) -> None:
    original = parse(prepare_home(home).decode())

    code, reply, stderr = run_cli(home, server)

    assert code == 0, (reply, stderr)
    # The answer says which engine did the work and why.
    assert reply["engine"] == "offline-fallback" and reply["path"] == "offline-fallback"
    assert any(why in note and "offline engine was used" in note for note in reply["notes"])
    # The thread's items are in the file, and every item that was there still is.
    memory = parse(MemoryStore(home).branch_file(BRANCH).read_text())
    assert reply["itemsExtracted"] > 0
    assert {i.id for i in original.all_items()} <= {i.id for i in memory.all_items()} | {
        i.id for c in memory.contradictions for i in c.items
    }
    assert memory.item_count() > original.item_count()
    # The merge of a thread whose extraction failed is not tried on Claude again.
    assert len(server.bodies) == 1
    assert KEY not in json.dumps(reply) and KEY not in stderr
