"""Secrets never land anywhere (issue 13): planted in every kind of transcript, scanned offline
and through Claude, then searched for in every byte the app wrote and everything it sent.

The secrets are the dev split of tests/fixtures/secrets (varied kinds: cloud keys, tokens,
passwords in prose, connection strings), written where a user would paste them: in the middle
of standing rules the engines do extract. After the scans, every file under the memory home
(branch files, versions, archive, review queue, SQLite index and its WAL, vectors, ledger,
activity, usage, the operational log) is read as bytes; so are the CLI's stdout/stderr and
every HTTP body sent to the (stand-in) API.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest

from app.container import build_api
from tests.fixtures.anthropic.fake_api import FakeAPI, asked_for, fast_retries, reply

ROOT = Path(__file__).resolve().parents[1]
CASES = json.loads((ROOT / "tests/fixtures/secrets/dev/cases.json").read_text(encoding="utf-8"))
SECRET_CASES = [c for c in CASES if c.get("secrets")][:12]
SECRETS = [s for c in SECRET_CASES for s in c["secrets"]]


def _lines() -> list[str]:
    """User turns: a standing rule with a secret pasted into it, one per case, and two rules
    without secrets that must still be remembered."""
    return [
        f"From now on always use this setup for the deploy scripts: {c['text']}"
        for c in SECRET_CASES
    ] + [
        "We always run make lint before pushing; never push a red build.",
        "All services log JSON lines through structlog, never print().",
    ]


def _claude_code(folder: Path) -> Path:
    path = folder / "claude" / "-home-u-shop" / "5e0c2a9e-1111-4222-8333-444455556666.jsonl"
    path.parent.mkdir(parents=True)
    rows, parent = [], None
    for n, text in enumerate(_lines()):
        for role, content in (("user", text), ("assistant", "Noted, I will follow that.")):
            uuid = f"u{n}{role[0]}"
            rows.append(
                {
                    "parentUuid": parent,
                    "isSidechain": False,
                    "userType": "external",
                    "cwd": "/home/u/shop",
                    "sessionId": path.stem,
                    "version": "2.1.40",
                    "gitBranch": "main",
                    "type": role,
                    "uuid": uuid,
                    "timestamp": f"2026-03-03T12:{n:02d}:00.000Z",
                    "message": {"role": role, "content": content},
                }
            )
            parent = uuid
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def _codex(folder: Path) -> Path:
    name = "rollout-2026-01-07T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0009.jsonl"
    path = folder / "codex" / name
    path.parent.mkdir(parents=True)
    rows: list[dict[str, Any]] = [
        {
            "timestamp": "2026-01-07T10:00:00.000Z",
            "type": "session_meta",
            "payload": {
                "id": "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0009",
                "timestamp": "2026-01-07T10:00:00.000Z",
                "cwd": "/home/u/tool",
                "originator": "codex_cli_rs",
            },
        }
    ]
    for n, text in enumerate(_lines()):
        rows.append(
            {
                "timestamp": f"2026-01-07T10:{n:02d}:01.000Z",
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": text}],
                },
            }
        )
        rows.append(
            {
                "timestamp": f"2026-01-07T10:{n:02d}:02.000Z",
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Noted."}],
                },
            }
        )
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def _puffin(folder: Path) -> Path:
    project = folder / "puffin" / "web"
    (project / ".puffin").mkdir(parents=True)
    prompts = [
        {
            "id": f"p{n}",
            "parentId": None if n == 0 else f"p{n - 1}",
            "content": text,
            "timestamp": 1767261600000 + n * 60_000,
            "children": [],
            "response": {"content": "Noted.", "timestamp": 1767261630000 + n * 60_000},
        }
        for n, text in enumerate(_lines())
    ]
    history = {
        "branches": {"deploy": {"id": "deploy", "name": "Deploy", "prompts": prompts}},
        "activeBranch": "deploy",
    }
    (project / ".puffin" / "history.json").write_text(json.dumps(history), encoding="utf-8")
    return project


def _aider(folder: Path) -> Path:
    project = folder / "aider" / "calc"
    project.mkdir(parents=True)
    parts = ["# aider chat started at 2026-02-01 10:00:00\n"]
    for text in _lines():
        parts.append(f"#### {text}\n\nNoted.\n")
    (project / ".aider.chat.history.md").write_text("\n".join(parts), encoding="utf-8")
    return project


def _everything_written(home: Path) -> bytes:
    return b"\n".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


def _leaks(blob: bytes | str) -> list[str]:
    data = blob.encode("utf-8", "replace") if isinstance(blob, str) else blob
    found = []
    for secret in SECRETS:
        raw = secret.encode("utf-8")
        escaped = json.dumps(secret)[1:-1].encode("utf-8")
        if raw in data or escaped in data:
            found.append(secret)
    return found


@pytest.fixture
def transcripts(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "transcripts"
    return [_claude_code(folder), _codex(folder), _puffin(folder), _aider(folder)]


def test_the_planted_secrets_are_really_there(transcripts: list[Path]) -> None:
    assert len(SECRETS) >= 12
    blob = b"".join(
        p.read_bytes()
        if p.is_file()
        else b"".join(f.read_bytes() for f in p.rglob("*") if f.is_file())
        for p in transcripts
    )
    assert _leaks(blob) == SECRETS


def test_an_offline_scan_of_every_source_stores_no_secret(
    home: Path, transcripts: list[Path]
) -> None:
    (home / "config.json").write_text(json.dumps({"idle_minutes": 0}), encoding="utf-8")
    env = {**os.environ, "PUFFIN_MEMORY_HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}
    env.pop("ANTHROPIC_API_KEY", None)
    memorized = 0
    for path in transcripts:
        done = subprocess.run(
            [sys.executable, "-m", "app", "--engine", "offline", "scan", "--path", str(path)],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert _leaks(done.stdout + done.stderr) == []
        memorized += json.loads(done.stdout)["memorized"]
    assert memorized == len(transcripts)
    api = build_api(home, engine_override="offline")
    kept = " ".join((p.read_text(encoding="utf-8")) for p in (home / "branches").glob("*.md"))
    assert "structlog" in kept  # what had no secret in it is remembered
    assert "[REDACTED" not in kept  # and what was only about a secret is not
    api.invoke("memory:run-maintenance", {"type": "full"})
    for query in ("deploy", "password token key", "setup"):
        answer = api.invoke("memory:retrieve", {"query": query})
        assert _leaks(json.dumps(answer)) == []
    api.index.close()
    assert _leaks(_everything_written(home)) == []


def test_claude_never_receives_a_secret_and_none_comes_back_to_disk(
    home: Path, transcripts: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_retries(monkeypatch)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "k" * 40)
    (home / "config.json").write_text(
        json.dumps(
            {
                "engine": "anthropic",
                "idle_minutes": 0,
                "models": {
                    "extraction": "claude-haiku-4-5",
                    "evolution": "claude-sonnet-4-6",
                    "consolidation": "claude-sonnet-4-6",
                    "retrieval": "claude-haiku-4-5",
                },
            }
        ),
        encoding="utf-8",
    )

    def answer(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        if asked_for(body) == "record_memories":
            return reply("extraction_reply.json")
        return reply("changes_reply.json")

    fake = FakeAPI([answer] * 200)
    api = build_api(home, http_client=fake.client())
    for path in transcripts:
        outcome = api.invoke("memory:scan", {"path": str(path)})
        assert "error" not in outcome, outcome
    assert fake.requests, "Claude was never called"
    assert _leaks(b"\n".join(r.content for r in fake.requests)) == []
    api.index.close()
    assert _leaks(_everything_written(home)) == []
