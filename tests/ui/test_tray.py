"""The status indicator: tray menu actions, icon and tooltip per status, and the status-bar
form used where the desktop has no system tray (as offscreen)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.service.channels import MemoryChannels
from app.ui import icons
from app.ui.tray import StatusBarIndicator, StatusIndicator, describe
from tests.service.support import start_channels, stop_channels


def _menu_texts(indicator: StatusIndicator) -> list[str]:
    texts = []
    for action in indicator.menu.actions():
        if action.isSeparator():
            continue
        texts.append(action.text())
        if action.menu() is not None:
            texts.extend(f"  {a.text()}" for a in action.menu().actions())
    return texts


def test_menu_offers_the_documented_actions(qtbot: QtBot, channels: MemoryChannels) -> None:
    indicator = StatusIndicator(channels, use_tray=False)
    assert _menu_texts(indicator) == [
        "Open Puffin Memory",
        "Scan now",
        "Run maintenance",
        "  Weekly",
        "  Monthly",
        "  Full",
        "Pause automatic memorization",
        "Quit",
    ]
    with qtbot.waitSignal(indicator.open_requested, timeout=1000):
        indicator.open_action.trigger()
    with qtbot.waitSignal(indicator.quit_requested, timeout=1000):
        indicator.quit_action.trigger()
    indicator.close()


def test_run_maintenance_from_the_menu_runs_it_in_the_background(
    qtbot: QtBot, seeded_channels: MemoryChannels
) -> None:
    indicator = StatusIndicator(seeded_channels, use_tray=False)
    states: list[str] = []
    seeded_channels.status_changed.connect(lambda s: states.append(s["status"]))
    with qtbot.waitSignal(seeded_channels.job_finished, timeout=15_000) as blocker:
        indicator.maintenance_actions["monthly"].trigger()
    name, kind, reply = blocker.args
    assert (name, kind) == ("Monthly maintenance", "maintenance")
    assert reply["success"] is True
    assert "maintenance" in states, "the indicator showed maintenance while it ran"
    qtbot.waitUntil(lambda: indicator.state == "ready", timeout=5000)
    indicator.close()


def test_pause_is_a_checkable_action_reflected_in_the_status(
    qtbot: QtBot, channels: MemoryChannels
) -> None:
    indicator = StatusIndicator(channels, use_tray=False)
    assert not channels.paused
    with qtbot.waitSignal(channels.status_changed, timeout=2000):
        indicator.pause_action.trigger()
    assert channels.paused
    assert channels.status is not None and channels.status["paused"] is True
    assert "paused" in indicator.tooltip
    indicator.pause_action.trigger()
    assert not channels.paused
    indicator.close()


def test_tray_icon_and_tooltip_follow_the_status(qtbot: QtBot, channels: MemoryChannels) -> None:
    indicator = StatusIndicator(channels, use_tray=True)
    assert indicator.tray is not None
    assert indicator.tray.icon().cacheKey() == icons.status_icon("ready").cacheKey()
    channels.report_error("The disk is full")
    assert indicator.state == "error"
    assert indicator.tray.icon().cacheKey() == icons.status_icon("error").cacheKey()
    assert "Last error: The disk is full" in indicator.tray.toolTip()
    indicator.close()


def test_status_bar_indicator_has_the_menu_when_there_is_no_tray(
    qtbot: QtBot, channels: MemoryChannels
) -> None:
    indicator = StatusIndicator(channels, use_tray=False)
    bar = StatusBarIndicator(channels, indicator, with_menu=True)
    qtbot.addWidget(bar)
    assert bar.label.text() == "Ready"
    assert bar.menu_button is not None and bar.menu_button.menu() is indicator.menu
    assert bar.menu_button.accessibleName() == "Puffin menu"
    channels.report_error("Extraction failed: engine offline")
    assert bar.label.text() == "Error: Extraction failed: engine offline"
    indicator.close()


def test_describe_names_jobs_and_errors() -> None:
    text, tooltip = describe(
        {
            "status": "processing",
            "engine": "offline",
            "lastError": "boom",
            "jobs": [{"name": "Scan corpus", "done": 3, "total": 12}, {"name": "Weekly"}],
        }
    )
    assert text == "Scan corpus (3/12)"
    assert "1 more job(s) queued" in tooltip
    assert "Last error: boom" in tooltip


def test_a_damaged_branch_file_shows_a_warning_not_ready(
    qtbot: QtBot, qloop: object, seeded_home: Path
) -> None:
    (seeded_home / "branches" / "garbage.md").write_text("not a memory file\n")
    channels = start_channels(qtbot, seeded_home)
    try:
        indicator = StatusIndicator(channels, use_tray=True)
        bar = StatusBarIndicator(channels, indicator, with_menu=True)
        qtbot.addWidget(bar)
        qtbot.waitUntil(lambda: indicator.state == "warning", timeout=10_000)
        assert indicator.tray is not None
        assert indicator.tray.icon().cacheKey() == icons.status_icon("warning").cacheKey()
        assert bar.label.text().startswith("Needs attention: The memory file of garbage")
        assert str(seeded_home / "branches" / "garbage.md") in indicator.tray.toolTip()
        indicator.close()
    finally:
        stop_channels(qtbot, channels)


def test_a_broken_config_is_reported_with_where_it_went(
    qtbot: QtBot,
    qloop: object,
    quiet_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The defaults replace the broken config: keep their start-up scan off the real home.
    monkeypatch.setenv("HOME", str(tmp_path))
    (quiet_home / "config.json").write_text("{ not json")
    channels = start_channels(qtbot, quiet_home)
    try:
        indicator = StatusIndicator(channels, use_tray=False)
        qtbot.waitUntil(lambda: indicator.state == "warning", timeout=10_000)
        assert "config.json was invalid" in indicator.tooltip
        assert "moved to config.json.broken-" in indicator.tooltip
        indicator.close()
    finally:
        stop_channels(qtbot, channels)
