"""Settings panel: shows config.json, saves changes through memory:set-config (validated by
the core), reports key storage problems clearly."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.backends.fail
import pytest
from pytestqt.qtbot import QtBot

from app.core.config import Config
from app.service.channels import MemoryChannels
from app.ui.settings import SettingsPanel


def _panel(qtbot: QtBot, channels: MemoryChannels) -> SettingsPanel:
    panel = SettingsPanel(channels)
    qtbot.addWidget(panel)
    panel.show()
    panel.refresh()
    qtbot.waitUntil(lambda: panel.key_status.text() != "Checking…", timeout=5000)
    return panel


def test_shows_the_settings_from_config_json(
    qtbot: QtBot, channels: MemoryChannels, quiet_home: Path
) -> None:
    panel = _panel(qtbot, channels)
    assert panel.home_edit.text() == str(quiet_home)
    assert not panel.auto_memorize.isChecked()  # the quiet test config
    assert not panel.scan_on_start.isChecked()
    assert not panel.claude_code.isChecked()
    assert panel.claude_dir.edit.text() == "~/.claude/projects"
    assert panel.engine.currentData() == "auto"
    defaults = Config()
    assert panel.models["extraction"].currentText() == defaults.models.extraction
    assert panel.budget.value() == defaults.daily_token_budget


def test_save_writes_config_and_tells_the_service(
    qtbot: QtBot, channels: MemoryChannels, quiet_home: Path
) -> None:
    panel = _panel(qtbot, channels)
    panel.budget.setValue(500_000)
    panel.auto_memorize.setChecked(True)
    panel.idle_minutes.setValue(45)
    panel.aider_projects.set_folders(["/work/projects/calculator"])
    with qtbot.waitSignal(channels.config_changed, timeout=5000):
        panel.save_button.click()
    saved = json.loads((quiet_home / "config.json").read_text(encoding="utf-8"))
    assert saved["daily_token_budget"] == 500_000
    assert saved["auto_memorize"] is True
    assert saved["idle_minutes"] == 45
    assert saved["sources"]["aider_projects"] == ["/work/projects/calculator"]
    assert panel.banner.label.text().startswith("Settings saved.")
    assert channels.status is not None and channels.status["autoMemorize"] is True


def test_invalid_setting_is_refused_with_the_reason(
    qtbot: QtBot, channels: MemoryChannels, quiet_home: Path
) -> None:
    panel = _panel(qtbot, channels)
    before = (quiet_home / "config.json").read_text(encoding="utf-8")
    panel.models["extraction"].setCurrentText("")
    changes = panel.changes()
    changes["chunk_tokens"] = 5  # below the minimum the core accepts
    panel.run(panel._save(changes))
    qtbot.waitUntil(lambda: panel.banner.isVisible(), timeout=5000)
    assert panel.banner.label.text().startswith("Not saved")
    assert "chunk_tokens" in panel.banner.label.text()
    assert (quiet_home / "config.json").read_text(encoding="utf-8") == before


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """A keyring that refuses everything (tests never touch a real one)."""
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    yield
    keyring.set_keyring(previous)


@pytest.mark.usefixtures("no_keyring")
def test_key_that_cannot_be_stored_says_so(qtbot: QtBot, channels: MemoryChannels) -> None:
    panel = _panel(qtbot, channels)
    panel.api_key.setText("sk-ant-api03-" + "x" * 40)
    panel.key_save_button.click()
    qtbot.waitUntil(
        lambda: panel.key_status.text().startswith(("Not stored", "Stored")), timeout=5000
    )
    assert panel.key_status.text().startswith("Not stored")
    assert "x" * 40 not in panel.key_status.text(), "the key itself is never shown"


def test_install_hooks_reports_what_changed(
    qtbot: QtBot, channels: MemoryChannels, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Claude Code's settings live under the user's home: a temp one here.
    monkeypatch.setenv("HOME", str(tmp_path))
    settings = tmp_path / ".claude" / "settings.json"
    panel = _panel(qtbot, channels)
    panel.hooks_button.click()
    qtbot.waitUntil(
        lambda: panel.hooks_result.text().startswith(("Installed", "Failed")), timeout=5000
    )
    assert panel.hooks_result.text().startswith(f"Installed the hooks in {settings}")
    hooks = json.loads(settings.read_text(encoding="utf-8"))["hooks"]
    assert hooks, "Claude Code's settings now name our hooks"
    panel.hooks_button.click()
    qtbot.waitUntil(
        lambda: panel.hooks_result.text().startswith("The hooks are already"), timeout=5000
    )
    panel.unhooks_button.click()
    qtbot.waitUntil(lambda: panel.hooks_result.text().startswith("Removed"), timeout=5000)


def test_the_wheel_over_an_unfocused_box_scrolls_the_page_and_changes_nothing(
    qtbot: QtBot, channels: MemoryChannels
) -> None:
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication, QScrollArea

    panel = _panel(qtbot, channels)
    panel.resize(700, 400)  # short enough that the form scrolls
    scroll = panel.findChild(QScrollArea)
    assert scroll is not None
    qtbot.waitUntil(lambda: scroll.verticalScrollBar().maximum() > 0, timeout=5000)
    model = panel.models["extraction"]
    budget_before, model_before = panel.budget.value(), model.currentIndex()

    def wheel(widget: object) -> None:
        event = QWheelEvent(
            QPointF(5, 5),
            QPointF(5, 5),
            QPoint(0, 0),
            QPoint(0, -120),
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        )
        QApplication.sendEvent(widget, event)

    panel.save_button.setFocus()
    wheel(panel.budget)
    wheel(model)
    assert panel.budget.value() == budget_before
    assert model.currentIndex() == model_before
    assert scroll.verticalScrollBar().value() > 0  # the page took the wheel

    panel.budget.setFocus()  # once the user clicks into it, the wheel is the box's
    qtbot.waitUntil(panel.budget.hasFocus, timeout=2000)
    wheel(panel.budget)
    assert panel.budget.value() != budget_before


def test_a_larger_embedding_model_can_be_chosen_and_is_used(
    qtbot: QtBot, channels: MemoryChannels, quiet_home: Path, tmp_path: Path
) -> None:
    import shutil

    from app.core import embeddings

    bundled = embeddings.model_dir()
    if bundled is None:
        pytest.skip("embedding model not installed")
    panel = _panel(qtbot, channels)
    assert panel.semantic.isChecked()
    assert panel.embedding_dir.edit.text() == ""
    # A folder that holds no model: saved, with a warning that says what is missing.
    panel.embedding_dir.edit.setText(str(tmp_path / "empty"))
    with qtbot.waitSignal(channels.config_changed, timeout=5000):
        panel.save_button.click()
    assert "model.safetensors" in panel.banner.label.text()
    # A real model folder (a copy of the bundled one stands in for a downloaded model).
    chosen = tmp_path / "my-model"
    shutil.copytree(bundled, chosen)
    panel.embedding_dir.edit.setText(str(chosen))
    with qtbot.waitSignal(channels.config_changed, timeout=5000):
        panel.save_button.click()
    try:
        assert panel.banner.label.text().startswith("Settings saved.")
        assert embeddings.model_dir() == chosen
        assert embeddings.model_id().startswith("custom:")
        saved = json.loads((quiet_home / "config.json").read_text(encoding="utf-8"))
        assert saved["embedding_model_dir"] == str(chosen)
    finally:
        embeddings.configure(None)
