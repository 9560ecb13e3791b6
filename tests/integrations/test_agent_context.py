"""One context builder: the session-start hook, `puffin-memory context --branch` and the
API's `memory:context` with a branch give an agent the same text (issue 16, point 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from app.container import build_api

REPO = Path(__file__).resolve().parents[2]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PUFFIN_MEMORY_HOME"}
    env["PYTHONPATH"] = str(REPO)
    return env


def _checkout(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return folder


def test_hook_cli_and_api_give_the_same_session_start_text(home: Path, tmp_path: Path) -> None:
    api = build_api(home, engine_override="offline")
    for text in (
        "Use pnpm workspaces for the monorepo; never add a package-lock.json.",
        "Every API handler validates its input with zod before touching the database.",
    ):
        reply = api.invoke(
            "memory:remember",
            {"branch": "shop/main", "text": text, "category": "project_conventions"},
        )
        assert reply.get("success"), reply
    answer = api.invoke("memory:context", {"branch": "shop/main"})
    api.index.close()
    assert answer["items"] == 2 and "pnpm workspaces" in answer["markdown"]

    hook = subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), "hook", "session-start"],
        input=json.dumps({"cwd": str(_checkout(tmp_path)), "source": "startup"}),
        capture_output=True,
        text=True,
        env=_env(home),
        check=True,
        timeout=60,
    )
    injected = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    assert answer["markdown"].strip() == injected.strip()

    cli = subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), "context", "--branch", "shop/main"],
        capture_output=True,
        text=True,
        env=_env(home),
        check=True,
        timeout=60,
    )
    assert cli.stdout.strip() == injected.strip()


def test_a_branch_with_nothing_remembered_says_so(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    answer = api.invoke("memory:context", {"branch": "empty/main"})
    bad = api.invoke("memory:context", {"branch": "../etc"})
    api.index.close()
    assert answer["markdown"] == "" and "Nothing remembered" in answer["message"]
    assert bad["error"] and bad["code"] == "INVALID_INPUT"
