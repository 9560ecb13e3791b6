"""Dashboard: figure cards, recent activity, the empty state, and maintenance with progress
and a result summary."""

from __future__ import annotations

import json
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.service.channels import MemoryChannels
from app.ui.dashboard import DashboardPanel, summarize_results


def _panel(qtbot: QtBot, channels: MemoryChannels) -> DashboardPanel:
    panel = DashboardPanel(channels)
    qtbot.addWidget(panel)
    panel.show()
    return panel


def test_cards_show_the_stats(qtbot: QtBot, seeded_channels: MemoryChannels) -> None:
    panel = _panel(qtbot, seeded_channels)
    assert panel.cards["branches"].value.text() == "2"
    assert panel.cards["items"].value.text() == "7"
    assert panel.cards["categories"].value.text() == "5 of 5"
    assert panel.cards["review"].value.text() == "0"
    assert panel.cards["cost"].value.text() == "$0.00"
    assert panel.cards["last"].value.text() == "Never"


def test_empty_home_shows_the_invitation_to_scan(qtbot: QtBot, channels: MemoryChannels) -> None:
    panel = _panel(qtbot, channels)
    panel.refresh()
    qtbot.waitUntil(lambda: panel.activity_stack.currentWidget() is panel.empty, timeout=5000)
    assert panel.empty.headline.text() == "No memories yet. Scan your agent history"
    assert panel.cards["branches"].value.text() == "0"


def test_run_maintenance_shows_progress_then_a_summary(
    qtbot: QtBot, seeded_channels: MemoryChannels
) -> None:
    panel = _panel(qtbot, seeded_channels)
    panel.kind.setCurrentIndex(panel.kind.findData("full"))
    with qtbot.waitSignal(seeded_channels.job_finished, timeout=15_000):
        panel.maintenance_button.click()
        assert panel.maintenance_progress.isVisible()
        assert not panel.maintenance_button.isEnabled()
    qtbot.waitUntil(
        lambda: panel.maintenance_result.text().startswith("Full maintenance finished"),
        timeout=5000,
    )
    assert "•" in panel.maintenance_result.text()
    qtbot.waitUntil(lambda: not panel.maintenance_progress.isVisible(), timeout=5000)
    assert panel.maintenance_button.isEnabled()
    qtbot.waitUntil(
        lambda: any(
            "maintenance" in panel.activity.topLevelItem(i).text(0).lower()
            for i in range(panel.activity.topLevelItemCount())
        ),
        timeout=5000,
    )


def test_summarize_results_reads_nested_results() -> None:
    lines = summarize_results(
        {
            "weekly": {"branchesConsolidated": 2, "duration": 3.0},
            "monthly": {"indexRebuilt": True, "invalid": []},
        }
    )
    assert lines == ["branches consolidated: 2", "index rebuilt: yes", "invalid: 0"]


def test_a_scan_of_a_missing_folder_says_why(
    qtbot: QtBot, channels: MemoryChannels, tmp_path: Path
) -> None:
    panel = _panel(qtbot, channels)
    with qtbot.waitSignal(channels.job_finished, timeout=10_000):
        channels.scan_folder(str(tmp_path / "no-such-folder"))
    assert panel.last_failure.isVisible()
    assert panel.last_failure.text().startswith("Scan no-such-folder failed: No such file")
    assert channels.status is not None and channels.status["status"] == "ready", (
        "a wrong path is the person's to fix, not an app error"
    )


def test_a_scan_that_remembers_nothing_says_what_it_read_and_why(
    qtbot: QtBot, channels: MemoryChannels, tmp_path: Path
) -> None:
    folder = tmp_path / "project" / ".puffin"
    folder.mkdir(parents=True)
    # Two finished Puffin threads of small talk: read, but nothing worth keeping.
    prompts = [
        {
            "id": f"p{n}",
            "parentId": None,
            "content": "hello there, how are you today?",
            "timestamp": 1767261600000 + n * 3_600_000,
            "children": [],
            "response": {
                "content": "Fine, thanks!",
                "sessionId": f"s-{n}",
                "timestamp": 1767261660000 + n * 3_600_000,
            },
        }
        for n in (1, 2)
    ]
    folder.joinpath("history.json").write_text(
        json.dumps({"branches": {"main": {"id": "main", "name": "Main", "prompts": prompts}}})
    )
    panel = _panel(qtbot, channels)
    with qtbot.waitSignal(channels.job_finished, timeout=20_000) as finished:
        channels.scan_folder(str(folder.parent))
    reply = finished.args[2]
    assert not reply.get("error"), reply
    assert panel.scan_result.isVisible()
    text = panel.scan_result.text()
    assert text.startswith("Last scan: "), text
    assert reply["memorized"] >= 1 and reply["itemsAdded"] == 0, reply
    assert "Puffin thread" in text and "0 items remembered" in text
    assert "the offline engine found no statement it trusts" in text
