"""MemoryHost: the core on its own thread, the job queue (one job per branch at a time,
exclusive jobs, no duplicates), the composed status, and failures turned into an error
status instead of tracebacks."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import qasync
from pytestqt.qtbot import QtBot

from app.service.channels import MemoryChannels
from app.service.host import MemoryHost, is_error
from tests.service.support import run


def test_core_answers_on_its_own_thread(
    qtbot: QtBot, qloop: qasync.QEventLoop, seeded_home: Path
) -> None:
    threads: list[str] = []
    gui = threading.current_thread().name

    def factory(home: Path, engine: str | None) -> Any:
        from app.container import build_api

        threads.append(threading.current_thread().name)
        return build_api(home, engine_override=engine)

    host = MemoryHost(seeded_home, api_factory=factory, engine_override="offline")
    host.start()
    reply = run(qtbot, host.invoke("memory:list-branches", {}))
    assert len(reply["branches"]) == 2
    assert threads == ["puffin-core"] and gui != "puffin-core"
    run(qtbot, host.stop())


def test_a_core_that_cannot_start_shows_an_error_status(
    qtbot: QtBot, qloop: qasync.QEventLoop, quiet_home: Path
) -> None:
    def broken(_home: Path, _engine: str | None) -> Any:
        raise OSError("disk not mounted")

    host = MemoryHost(quiet_home, api_factory=broken)
    channels = MemoryChannels(host)
    with qtbot.waitSignal(
        channels.status_changed, timeout=5000, check_params_cb=lambda s: s["status"] == "error"
    ):
        channels.start_service()
    assert channels.status is not None
    assert "disk not mounted" in str(channels.status["lastError"])
    reply = run(qtbot, channels.list_branches())
    assert is_error(reply) and reply["code"] == "INTERNAL_ERROR"
    run(qtbot, channels.shutdown())


def test_task_failure_goes_to_the_one_error_handler(qtbot: QtBot, channels: MemoryChannels) -> None:
    async def failing() -> None:
        raise ValueError("unexpected shape")

    with qtbot.waitSignal(channels.error_reported, timeout=2000) as blocker:
        channels.start(failing())
    assert "unexpected shape" in blocker.args[0]
    assert channels.status is not None and channels.status["status"] == "error"


class _SlowApi:
    """Records the order in which the core ran jobs, holding each one for a moment."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.progress: Any = None
        self.queue_length: Any = None

    def invoke(self, channel: str, payload: dict[str, Any]) -> dict[str, Any]:
        if channel in {"memory:memorize", "memory:scan", "memory:run-maintenance"}:
            name = str(payload.get("branchId") or channel)
            self.events.append(f"start {name}")
            time.sleep(0.075)
            if self.progress is not None:  # a step of the job: quick requests may run here
                self.progress(1, 2, name)
            time.sleep(0.075)
            self.events.append(f"end {name}")
            return {"success": True}
        if channel == "memory:get-config":
            return {"config": {"maintenance_on_start": False, "scan_on_start": False}}
        if channel == "memory:list-branches":
            self.events.append("list-branches")
            return {"branches": []}
        return {"status": "ready"}

    def check_maintenance(self) -> dict[str, Any]:
        return {}


def test_jobs_run_one_per_branch_and_exclusive_jobs_alone(
    qtbot: QtBot, qloop: qasync.QEventLoop, quiet_home: Path
) -> None:
    # A stand-in core: this test is about ordering, which the real core makes too fast to see.
    api = _SlowApi()
    host = MemoryHost(quiet_home, api_factory=lambda _h, _e: api)
    host.start()

    async def scenario() -> list[dict[str, Any]]:
        return list(
            await asyncio.gather(
                host.invoke("memory:memorize", {"conversationText": "a", "branchId": "x/1"}),
                host.invoke("memory:memorize", {"conversationText": "b", "branchId": "x/1"}),
                host.invoke("memory:memorize", {"conversationText": "c", "branchId": "y/2"}),
                host.invoke("memory:run-maintenance", {"type": "weekly"}),
                host.invoke("memory:run-maintenance", {"type": "weekly"}),
            )
        )

    replies = run(qtbot, scenario())
    assert all(r["success"] for r in replies)
    events = api.events
    # The core runs one request at a time, so no two jobs overlap, in the order queued.
    starts = [e.removeprefix("start ") for e in events if e.startswith("start ")]
    assert starts == ["x/1", "y/2", "x/1", "memory:run-maintenance"], events
    for n, event in enumerate(events):
        if event.startswith("start "):
            assert events[n + 1] == "end " + event.removeprefix("start "), events
    # Maintenance waits for every memorization and runs alone; the duplicate is merged.
    assert events.count("start memory:run-maintenance") == 1
    maint = events.index("start memory:run-maintenance")
    assert maint == len(events) - 2, events
    assert events[-1] == "end memory:run-maintenance"
    run(qtbot, host.stop())


def test_status_shows_processing_while_a_job_runs(
    qtbot: QtBot, qloop: qasync.QEventLoop, quiet_home: Path
) -> None:
    api = _SlowApi()
    host = MemoryHost(quiet_home, api_factory=lambda _h, _e: api)
    seen: list[str] = []
    host.listener.status = lambda status: seen.append(status["status"])
    host.start()
    run(qtbot, host.invoke("memory:memorize", {"conversationText": "a", "branchId": "x/1"}))
    run(qtbot, host.invoke("memory:run-maintenance", {"type": "monthly"}))
    assert "processing" in seen and "maintenance" in seen
    assert seen[-1] == "ready"
    run(qtbot, host.stop())


def test_pause_stops_automatic_scans(
    qtbot: QtBot, qloop: qasync.QEventLoop, quiet_home: Path
) -> None:
    api = _SlowApi()
    config = {"auto_memorize": True, "scan_on_start": False, "maintenance_on_start": False}
    original = api.invoke

    def invoke(channel: str, payload: dict[str, Any]) -> dict[str, Any]:
        if channel == "memory:get-config":
            return {"config": config}
        return original(channel, payload)

    api.invoke = invoke  # type: ignore[method-assign]
    host = MemoryHost(quiet_home, api_factory=lambda _h, _e: api, source_scan_interval=0.05)
    host.start()
    qtbot.waitUntil(lambda: "start memory:scan" in api.events, timeout=3000)
    host.set_paused(True)
    qtbot.waitUntil(lambda: not host.jobs, timeout=3000)
    before = api.events.count("start memory:scan")
    qtbot.wait(400)
    assert api.events.count("start memory:scan") == before, "no automatic scan while paused"
    assert host.status()["paused"] is True
    host.set_paused(False)
    qtbot.waitUntil(lambda: api.events.count("start memory:scan") > before, timeout=3000)
    run(qtbot, host.stop())


def test_start_runs_maintenance_and_a_source_scan_when_enabled(
    qtbot: QtBot, qloop: qasync.QEventLoop, home: Path, tmp_path: Path, corpus_dir: Path
) -> None:
    projects = tmp_path / "claude-projects" / "-work-spotter"
    projects.mkdir(parents=True)
    for path in (corpus_dir / "claude-code").glob("marot-spotter__*.jsonl"):
        shutil.copyfile(path, projects / path.name.split("__", 1)[1])
    (home / "config.json").write_text(
        json.dumps(
            {
                "maintenance_on_start": True,
                "scan_on_start": True,
                "auto_memorize": False,
                "idle_minutes": 0,
                "sources": {
                    "claude_code": True,
                    "claude_projects_dir": str(projects.parent),
                    "codex": False,
                    "puffin": False,
                    "aider": False,
                },
            }
        )
    )
    channels = MemoryChannels(MemoryHost(home, engine_override="offline"))
    finished: list[tuple[str, str, dict[str, Any]]] = []
    channels.job_finished.connect(lambda name, kind, reply: finished.append((name, kind, reply)))
    channels.start_service()
    qtbot.waitUntil(lambda: len(finished) == 2, timeout=15_000)
    kinds = {kind: reply for _name, kind, reply in finished}
    assert set(kinds) == {"maintenance", "scan"}
    assert kinds["scan"]["memorized"] == 3, kinds["scan"]
    assert (home / "maintenance-log.json").is_file()
    run(qtbot, channels.shutdown())


def test_a_quick_request_runs_between_the_steps_of_a_long_job(
    qtbot: QtBot, qloop: qasync.QEventLoop, quiet_home: Path
) -> None:
    api = _SlowApi()
    host = MemoryHost(quiet_home, api_factory=lambda _h, _e: api)
    host.start()
    qtbot.waitUntil(lambda: api.progress is not None, timeout=3000)

    async def scenario() -> None:
        job = asyncio.ensure_future(host.invoke("memory:scan", {}))
        await asyncio.sleep(0.03)  # the scan has started its first step
        reply = await host.invoke("memory:list-branches", {})
        assert reply == {"branches": []}
        assert not job.done(), "the search did not wait for the whole scan"
        await job

    run(qtbot, scenario())
    assert api.events == ["start memory:scan", "list-branches", "end memory:scan"], api.events
    run(qtbot, host.stop())


def test_a_search_during_a_real_scan_waits_for_one_thread_not_the_scan(
    qtbot: QtBot, qloop: qasync.QEventLoop, seeded_home: Path, corpus_dir: Path
) -> None:
    # The real core scanning the Puffin history of the corpus (32 threads): a search asked
    # for once the scan is under way is answered between two of its threads.
    order: list[str] = []
    asked = threading.Event()

    def factory(home: Path, engine: str | None) -> Any:
        from app.container import build_api

        api = build_api(home, engine_override=engine)
        invoke = api.invoke

        def recorded(channel: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
            order.append(f"start {channel}")
            if channel == "memory:memorize" and order.count("start memory:memorize") == 2:
                asked.wait(10)  # hold the scan at its second thread until the search is sent
            reply = invoke(channel, payload)
            order.append(f"end {channel}")
            return reply

        api.invoke = recorded
        return api

    host = MemoryHost(seeded_home, api_factory=factory, engine_override="offline")
    under_way = asyncio.Event()

    def on_progress(_job: str, done: int, _total: int) -> None:
        if done:  # the scan has memorized at least one thread
            under_way.set()

    host.listener.progress = on_progress
    host.start()
    history = corpus_dir / "puffin" / "jdubray-puffin-todo-list__.puffin__history.json"
    project = seeded_home.parent / "todo-list"
    (project / ".puffin").mkdir(parents=True)
    shutil.copyfile(history, project / ".puffin" / "history.json")

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        scan = asyncio.ensure_future(host.invoke("memory:scan", {"path": str(project)}))
        await under_way.wait()
        search = asyncio.ensure_future(host.invoke("memory:list-branches", {}))
        await asyncio.sleep(0.05)  # the request reaches the core's queue
        asked.set()
        return await search, await scan

    found, scanned = run(qtbot, scenario(), timeout=60_000)
    assert len(found["branches"]) >= 2
    assert scanned["memorized"] >= 20, scanned
    searched = order.index("start memory:list-branches")
    assert order.index("start memory:scan") < searched < order.index("end memory:scan"), order
    run(qtbot, host.stop())


def test_quitting_while_the_core_is_busy_does_not_hang(
    qtbot: QtBot, qloop: qasync.QEventLoop, quiet_home: Path, monkeypatch: Any
) -> None:
    # A step that cannot be interrupted (a stuck network call, a huge transcript): quitting
    # waits a few seconds for it, cancels what was queued behind it, and goes.
    from app.service import host as host_module

    monkeypatch.setattr(host_module, "STOP_TIMEOUT_S", 0.5)
    release, running = threading.Event(), threading.Event()
    api = _SlowApi()
    original = api.invoke

    def invoke(channel: str, payload: dict[str, Any]) -> dict[str, Any]:
        if channel == "memory:scan":
            running.set()
            release.wait(10)
            return {"success": True}
        return original(channel, payload)

    api.invoke = invoke  # type: ignore[method-assign]
    host = MemoryHost(quiet_home, api_factory=lambda _h, _e: api)
    host.start()
    stuck = host.scan()
    qtbot.waitUntil(running.is_set, timeout=3000)

    async def quit_now() -> tuple[float, dict[str, Any]]:
        queued = asyncio.ensure_future(host.invoke("memory:list-branches", {}))
        await asyncio.sleep(0.05)
        started = time.monotonic()
        await host.stop()
        return time.monotonic() - started, await queued

    took, queued_reply = run(qtbot, quit_now())
    release.set()
    assert took < 2.0, took
    assert stuck.cancelled()
    assert is_error(queued_reply) and "shutting down" in queued_reply["message"]
