"""Helpers for the hook tests: memory homes with branch files, git checkouts, hook processes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from app.core.format import render
from app.core.models import BranchMemory, Category, MemoryItem
from app.core.store import MemoryStore

REPO = Path(__file__).resolve().parents[2]


def item(category: str, title: str, content: str, **fields: Any) -> MemoryItem:
    """A MemoryItem with a fixed extraction date unless one is given."""
    fields.setdefault("extracted", date(2026, 3, 1))
    return MemoryItem(category=Category(category), title=title, content=content, **fields)


def write_memory(home: Path, branch: str, items: Sequence[MemoryItem], summary: str = "") -> Path:
    """Write a branch file the way the app does and return its path."""
    store = MemoryStore(home)
    store.ensure()
    memory = BranchMemory(branch_id=branch, summary=summary)
    for entry in items:
        memory.items[entry.category].append(entry)
    store.write_text(branch, render(memory))
    return store.branch_file(branch)


def checkout(root: Path, name: str = "spotter", head: str = "ref: refs/heads/feature-x") -> Path:
    """A repository folder `name` whose .git/HEAD holds `head`."""
    repo = root / name
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text(head + "\n", encoding="utf-8")
    return repo


@pytest.fixture
def hook_env(tmp_path: Path) -> dict[str, str]:
    """Environment of a hook process: this checkout importable, temp folder under tmp_path."""
    env = {k: v for k, v in os.environ.items() if k not in {"PUFFIN_MEMORY_HOME", "PYTHONPATH"}}
    env["PYTHONPATH"] = str(REPO)
    scratch = tmp_path / "tmpdir"
    scratch.mkdir(exist_ok=True)
    env["TMPDIR"] = str(scratch)
    env["HOME"] = str(tmp_path / "user-home")
    return env


RunHook = Callable[..., subprocess.CompletedProcess[bytes]]


@pytest.fixture
def run_hook(hook_env: dict[str, str]) -> RunHook:
    """Run `python -m app.integrations ARGS` with `stdin` bytes; returns the finished process."""

    def run(
        *args: str, stdin: bytes = b"", timeout: float = 60
    ) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "app.integrations", *args],
            input=stdin,
            capture_output=True,
            env=hook_env,
            timeout=timeout,
            check=False,
        )

    return run
