"""Fixtures shared by the service and UI tests: a qasync loop for the test QApplication, a
real memory service over a temp home (offline engine), seeded branch files, and a helper
that drives a coroutine to completion while Qt processes events."""

from __future__ import annotations

import asyncio
import gc
import json
import shutil
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
import qasync
from pytestqt.qtbot import QtBot

from app.core.store import MemoryStore
from app.service.channels import MemoryChannels
from app.service.host import MemoryHost

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gui"
SEED_BRANCHES = {
    "spotter/main": "spotter__main.md",
    "puffin-todo-list/ui": "todo__ui.md",
}
# Nothing in a test may read the developer's real agent folders: start-up work is off and
# every source is disabled (a "Scan now" then finds nothing to read).
QUIET_CONFIG: dict[str, Any] = {
    "scan_on_start": False,
    "maintenance_on_start": False,
    "auto_memorize": False,
    "sources": {"claude_code": False, "codex": False, "puffin": False, "aider": False},
}


def run(qtbot: QtBot, coro: Coroutine[Any, Any, Any], timeout: int = 15_000) -> Any:
    """Run `coro` on the qasync loop while Qt processes events; return its result."""
    task = asyncio.ensure_future(coro)
    qtbot.waitUntil(task.done, timeout=timeout)
    return task.result()


def write_config(home: Path, **changes: Any) -> None:
    """Write `config.json` as a person (or the CLI) would."""
    (home / "config.json").write_text(json.dumps({**QUIET_CONFIG, **changes}), encoding="utf-8")


def seed_branches(home: Path, names: dict[str, str] | None = None) -> list[str]:
    """Copy the fixture branch files into the home, as if written earlier by the CLI."""
    store = MemoryStore(home)
    store.ensure()
    for branch, fixture in (names or SEED_BRANCHES).items():
        shutil.copyfile(FIXTURES / fixture, store.branch_file(branch))
    return sorted(names or SEED_BRANCHES)


def drain(qtbot: QtBot, channels: MemoryChannels, timeout: int = 15_000) -> None:
    """Wait until no request or job of the service is running."""
    qtbot.waitUntil(lambda: not channels.tasks and not channels.jobs, timeout=timeout)


@pytest.fixture
def qloop(qapp: Any) -> Iterator[qasync.QEventLoop]:
    """A qasync loop over the test QApplication, running whenever Qt processes events."""
    # QObjects of earlier tests that sit in reference cycles must be freed here, on the GUI
    # thread: if the cyclic collector ran first in a worker thread, Qt would delete them
    # from the wrong thread.
    gc.collect()
    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    yield loop
    for task in asyncio.all_tasks(loop):
        task.cancel()
    for _ in range(5):
        qapp.processEvents()
    # `loop.stop()` would call QApplication.exit(), which makes every later nested Qt event
    # loop (qtbot.waitUntil, waitSignal) return at once; mark the loop stopped instead.
    loop._QEventLoop__is_running = False  # type: ignore[attr-defined]
    asyncio.events._set_running_loop(None)
    loop.close()
    asyncio.set_event_loop(None)
    gc.collect()


def start_channels(qtbot: QtBot, home: Path) -> MemoryChannels:
    """A started service over `home` (offline engine), once its first status is out."""
    host = MemoryHost(home, engine_override="offline")
    channels = MemoryChannels(host)
    channels.start_service()
    qtbot.waitUntil(
        lambda: (
            channels.status is not None
            and channels.status["status"] != "starting"
            and channels.stats is not None
        ),
        timeout=15_000,
    )
    return channels


def stop_channels(qtbot: QtBot, channels: MemoryChannels) -> None:
    """Shut the service down and wait for its thread."""
    run(qtbot, channels.shutdown())


@pytest.fixture
def quiet_home(home: Path) -> Path:
    """A fresh home whose config keeps start-up scans and maintenance off."""
    write_config(home)
    return home


@pytest.fixture
def seeded_home(quiet_home: Path) -> Path:
    """A quiet home holding two branch files in two projects."""
    seed_branches(quiet_home)
    return quiet_home


@pytest.fixture
def channels(qtbot: QtBot, qloop: qasync.QEventLoop, quiet_home: Path) -> Iterator[MemoryChannels]:
    """A running service over an empty quiet home."""
    service = start_channels(qtbot, quiet_home)
    yield service
    stop_channels(qtbot, service)


@pytest.fixture
def seeded_channels(
    qtbot: QtBot, qloop: qasync.QEventLoop, seeded_home: Path
) -> Iterator[MemoryChannels]:
    """A running service over a home with two branch files."""
    service = start_channels(qtbot, seeded_home)
    yield service
    stop_channels(qtbot, service)
