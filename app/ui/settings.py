"""Settings panel: memory folder, agent sources and their folders, engine and models, the
Anthropic API key (kept in the system keyring through `ops.AUTH_SET`, with a Test button),
daily token budget, automatic memorization, idle time, start-up work, and the Claude Code
hooks. Changes are sent as one partial config through `ops.SET_CONFIG`, which validates."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.service.channels import MemoryChannels, is_error
from app.ui.widgets import (
    SPACING,
    Banner,
    Panel,
    guard_wheel,
    icon_button,
    muted,
    push_button,
)

ENGINES = (
    ("auto", "Automatic — Claude when a key is set, otherwise offline"),
    ("offline", "Offline — rules only, nothing leaves this computer"),
    ("anthropic", "Claude — best quality, uses the API key"),
    ("local", "Local model — an OpenAI-compatible server on your machine or network"),
)
MODEL_FIELDS = (
    ("extraction", "Extraction"),
    ("evolution", "Rewriting"),
    ("consolidation", "Consolidation"),
    ("retrieval", "Deep search"),
)


class FolderField(QWidget):
    """A folder path with a Browse button."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.edit = QLineEdit()
        self.edit.setAccessibleName(name)
        browse = icon_button("folder", f"Choose the {name.lower()}")
        browse.clicked.connect(self._on_browse_clicked)
        layout.addWidget(self.edit, 1)
        layout.addWidget(browse)

    def _on_browse_clicked(self) -> None:
        dialog = QFileDialog(self, "Choose a folder", self.edit.text())
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly)
        dialog.fileSelected.connect(self.edit.setText)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()


class FolderList(QWidget):
    """Several project folders, one a line, with an Add button."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.edit = QPlainTextEdit()
        self.edit.setAccessibleName(name)
        self.edit.setPlaceholderText("One project folder a line")
        self.edit.setFixedHeight(64)
        add = icon_button("folder", f"Add a folder to {name.lower()}")
        add.clicked.connect(self._on_add_clicked)
        layout.addWidget(self.edit, 1)
        layout.addWidget(add, 0, Qt.AlignmentFlag.AlignTop)

    def folders(self) -> list[str]:
        """The non-empty lines."""
        return [line.strip() for line in self.edit.toPlainText().splitlines() if line.strip()]

    def set_folders(self, folders: list[str]) -> None:
        """Show folders."""
        self.edit.setPlainText("\n".join(folders))

    def _on_add_clicked(self) -> None:
        dialog = QFileDialog(self, "Add a project folder")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly)
        dialog.fileSelected.connect(lambda path: self.set_folders([*self.folders(), path]))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()


class SettingsPanel(Panel):
    """See the module docstring."""

    title = "Settings"
    subtitle = "Where Puffin reads from, how it thinks, and what it does on its own."
    icon = "settings"

    def __init__(self, channels: MemoryChannels, parent: QWidget | None = None) -> None:
        super().__init__(channels, parent)
        self._config: dict[str, Any] = {}
        self.revert_button = push_button("Revert")
        self.save_button = push_button("Save", "save", tooltip="Save settings (Ctrl+S)")
        self.revert_button.clicked.connect(self._on_revert_button_clicked)
        self.save_button.clicked.connect(self.save)
        self.header_actions.addWidget(self.revert_button)
        self.header_actions.addWidget(self.save_button)
        self.banner = Banner()
        self.body.addWidget(self.banner)

        content = QWidget()
        column = QVBoxLayout(content)
        column.setContentsMargins(0, 0, SPACING, 0)
        column.setSpacing(SPACING)
        column.addWidget(self._storage_group())
        column.addWidget(self._sources_group())
        column.addWidget(self._engine_group())
        column.addWidget(self._search_group())
        column.addWidget(self._automation_group())
        column.addWidget(self._hooks_group())
        column.addStretch(1)
        content.setMaximumWidth(820)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        self.body.addWidget(scroll, 1)
        guard_wheel(*content.findChildren(QAbstractSpinBox), *content.findChildren(QComboBox))
        channels.watch_config(self._on_channels_config_changed)

    # -- groups ---------------------------------------------------------------------------
    def _storage_group(self) -> QGroupBox:
        group = QGroupBox("Memory folder")
        form = QFormLayout(group)
        row = QHBoxLayout()
        self.home_edit = QLineEdit(str(self.channels.home))
        self.home_edit.setReadOnly(True)
        self.home_edit.setAccessibleName("Memory folder")
        open_button = push_button("Open", "folder", tooltip="Show the folder")
        open_button.clicked.connect(self._on_open_home_clicked)
        row.addWidget(self.home_edit, 1)
        row.addWidget(open_button)
        form.addRow("Location", row)
        note = muted(
            QLabel(
                "Start with --home FOLDER or set PUFFIN_MEMORY_HOME to use another "
                "folder. The branch files there are plain Markdown."
            )
        )
        note.setWordWrap(True)
        form.addRow("", note)
        return group

    def _sources_group(self) -> QGroupBox:
        group = QGroupBox("Agent conversations")
        form = QFormLayout(group)
        form.setSpacing(8)
        self.claude_code = QCheckBox("Claude Code")
        self.claude_dir = FolderField("Claude Code projects folder")
        self.codex = QCheckBox("Codex CLI")
        self.codex_dir = FolderField("Codex sessions folder")
        self.puffin = QCheckBox("Puffin")
        self.puffin_projects = FolderList("Puffin projects")
        self.aider = QCheckBox("Aider")
        self.aider_projects = FolderList("Aider projects")
        form.addRow(self.claude_code, self.claude_dir)
        form.addRow(self.codex, self.codex_dir)
        form.addRow(self.puffin, self.puffin_projects)
        form.addRow(self.aider, self.aider_projects)
        note = muted(
            QLabel(
                "Conversations are read where they are, never copied. Secrets are "
                "removed before anything is stored or sent."
            )
        )
        note.setWordWrap(True)
        form.addRow("", note)
        return group

    def _engine_group(self) -> QGroupBox:
        group = QGroupBox("Engine")
        form = QFormLayout(group)
        form.setSpacing(8)
        self.engine = QComboBox()
        self.engine.setAccessibleName("Engine")
        for key, label in ENGINES:
            self.engine.addItem(label, key)
        form.addRow("Engine", self.engine)
        self.models: dict[str, QComboBox] = {}
        for key, label in MODEL_FIELDS:
            combo = QComboBox()
            combo.setEditable(True)
            combo.setAccessibleName(f"{label} model")
            self.models[key] = combo
            form.addRow(f"{label} model", combo)
        self.local_url = QLineEdit()
        self.local_url.setPlaceholderText("http://localhost:11434/v1")
        self.local_url.setAccessibleName("Local model server address")
        form.addRow("Local server", self.local_url)
        self.local_model = QLineEdit()
        self.local_model.setPlaceholderText("e.g. llama3.1:8b or qwen2.5-coder:14b")
        self.local_model.setAccessibleName("Local model name")
        form.addRow("Local model", self.local_model)
        local_note = muted(
            QLabel(
                "Ollama, LM Studio, llama.cpp server or vLLM: anything that speaks the OpenAI chat "
                "API with JSON-schema output. Conversations go to that server only. Set "
                "PUFFIN_MEMORY_LOCAL_API_KEY if it asks for a key."
            )
        )
        local_note.setWordWrap(True)
        form.addRow("", local_note)
        key_row = QHBoxLayout()
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText("sk-ant-…")
        self.api_key.setAccessibleName("Anthropic API key")
        self.key_save_button = push_button(
            "Store key", "key", tooltip="Keep the key in the system keyring"
        )
        self.key_test_button = push_button("Test", tooltip="Check the key with a tiny request")
        self.key_save_button.clicked.connect(self._on_key_save_button_clicked)
        self.key_test_button.clicked.connect(self._on_key_test_button_clicked)
        key_row.addWidget(self.api_key, 1)
        key_row.addWidget(self.key_save_button)
        key_row.addWidget(self.key_test_button)
        form.addRow("API key", key_row)
        self.key_status = muted(QLabel("Checking…"))
        self.key_status.setWordWrap(True)
        form.addRow("", self.key_status)
        self.budget = QSpinBox()
        self.budget.setRange(0, 1_000_000_000)
        self.budget.setSingleStep(100_000)
        self.budget.setGroupSeparatorShown(True)
        self.budget.setSuffix(" tokens")
        self.budget.setAccessibleName("Daily token budget")
        self.budget.setMaximumWidth(240)
        form.addRow("Daily budget", self.budget)
        budget_note = muted(
            QLabel(
                "When the day's budget is used up, the offline engine takes over until tomorrow."
            )
        )
        budget_note.setWordWrap(True)
        form.addRow("", budget_note)
        self.request_timeout = QDoubleSpinBox()
        self.request_timeout.setRange(1, 900)
        self.request_timeout.setDecimals(0)
        self.request_timeout.setSuffix(" s")
        self.request_timeout.setAccessibleName("Request timeout")
        self.request_timeout.setMaximumWidth(240)
        form.addRow("Request timeout", self.request_timeout)
        self.max_retries = QSpinBox()
        self.max_retries.setRange(0, 10)
        self.max_retries.setAccessibleName("Retries per request")
        self.max_retries.setMaximumWidth(240)
        form.addRow("Retries", self.max_retries)
        self.breaker_failures = QSpinBox()
        self.breaker_failures.setRange(0, 100)
        self.breaker_failures.setSpecialValueText("never")
        self.breaker_failures.setSuffix(" failures in a row")
        self.breaker_failures.setAccessibleName("Stop calling Claude after failures in a row")
        self.breaker_failures.setMaximumWidth(240)
        form.addRow("Go offline after", self.breaker_failures)
        limits_note = muted(
            QLabel(
                "A failed or late answer hands the thread to the offline engine. "
                "PUFFIN_MEMORY_LLM_TIMEOUT_S and PUFFIN_MEMORY_LLM_RETRIES override these."
            )
        )
        limits_note.setWordWrap(True)
        form.addRow("", limits_note)
        return group

    def _search_group(self) -> QGroupBox:
        group = QGroupBox("Search")
        form = QFormLayout(group)
        form.setSpacing(8)
        self.semantic = QCheckBox("Find memories by meaning, not only by shared words")
        self.semantic.setAccessibleName("Semantic search")
        self.embedding_dir = FolderField("Embedding model folder")
        self.embedding_dir.edit.setPlaceholderText("Bundled: all-MiniLM-L6-v2 (works offline)")
        form.addRow("", self.semantic)
        form.addRow("Larger model", self.embedding_dir)
        note = muted(
            QLabel(
                "Optional. A sentence-transformers model you downloaded (a folder with "
                "model.safetensors and tokenizer.json, such as all-MiniLM-L12-v2 or "
                "bge-base-en-v1.5) can rank better than the bundled one. Memories get new "
                "vectors at the next scan; the relevance threshold was tuned for the bundled "
                "model."
            )
        )
        note.setWordWrap(True)
        form.addRow("", note)
        return group

    def _automation_group(self) -> QGroupBox:
        group = QGroupBox("Automatic work")
        form = QFormLayout(group)
        form.setSpacing(8)
        self.auto_memorize = QCheckBox("Memorize finished conversations automatically")
        self.idle_minutes = QDoubleSpinBox()
        self.idle_minutes.setRange(0, 24 * 60)
        self.idle_minutes.setDecimals(0)
        self.idle_minutes.setSuffix(" min")
        self.idle_minutes.setAccessibleName("Idle time before a thread counts as complete")
        self.idle_minutes.setMaximumWidth(240)
        self.scan_on_start = QCheckBox("Scan agent history when the app starts")
        self.maintenance_on_start = QCheckBox("Run due maintenance when the app starts")
        form.addRow("", self.auto_memorize)
        form.addRow("Thread complete after", self.idle_minutes)
        form.addRow("", self.scan_on_start)
        form.addRow("", self.maintenance_on_start)
        return group

    def _hooks_group(self) -> QGroupBox:
        group = QGroupBox("Claude Code")
        layout = QVBoxLayout(group)
        note = muted(
            QLabel(
                "Hooks give Claude Code this branch's memory when a session starts "
                "and memorize the session when it ends."
            )
        )
        note.setWordWrap(True)
        layout.addWidget(note)
        row = QHBoxLayout()
        self.hooks_button = push_button("Install Claude Code hooks", "hooks")
        self.unhooks_button = push_button("Remove hooks")
        self.hooks_button.clicked.connect(lambda: self._install_hooks(uninstall=False))
        self.unhooks_button.clicked.connect(lambda: self._install_hooks(uninstall=True))
        row.addWidget(self.hooks_button)
        row.addWidget(self.unhooks_button)
        row.addStretch(1)
        layout.addLayout(row)
        self.hooks_result = muted(QLabel(""))
        self.hooks_result.setWordWrap(True)
        self.hooks_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.hooks_result)
        return group

    # -- loading and saving ---------------------------------------------------------------
    def refresh(self) -> None:
        """Reload settings and the key status."""
        self.run(self._load())

    async def _load(self) -> None:
        reply = await self.channels.get_config()
        if not is_error(reply):
            self._show(reply.get("config", {}))
        await self._load_key_status()

    async def _load_key_status(self) -> None:
        reply = await self.channels.auth_status()
        if is_error(reply):
            self.key_status.setText(str(reply.get("message", "Key status unavailable.")))
            return
        if reply.get("configured"):
            text = f"Key {reply.get('masked', '')} from the {reply.get('origin', 'keyring')}."
        else:
            text = "No key set: the offline engine is used."
        if reply.get("keyringAvailable") is False:
            text += " No system keyring here; set ANTHROPIC_API_KEY instead."
        self.key_status.setText(text)

    def _on_channels_config_changed(self, config: dict[str, Any]) -> None:
        self._show(config)

    def _show(self, config: dict[str, Any]) -> None:
        self._config = dict(config)
        sources = config.get("sources") or {}
        self.claude_code.setChecked(bool(sources.get("claude_code", True)))
        self.claude_dir.edit.setText(str(sources.get("claude_projects_dir", "")))
        self.codex.setChecked(bool(sources.get("codex", True)))
        self.codex_dir.edit.setText(str(sources.get("codex_sessions_dir", "")))
        self.puffin.setChecked(bool(sources.get("puffin", True)))
        self.puffin_projects.set_folders(list(sources.get("puffin_projects") or []))
        self.aider.setChecked(bool(sources.get("aider", True)))
        self.aider_projects.set_folders(list(sources.get("aider_projects") or []))
        self.engine.setCurrentIndex(max(self.engine.findData(config.get("engine", "auto")), 0))
        models = config.get("models") or {}
        # Offer the models the settings already name (the core knows the current ones).
        known = sorted({str(m) for m in models.values() if m})
        for key, combo in self.models.items():
            combo.clear()
            combo.addItems(known)
            combo.setCurrentText(str(models.get(key, "")))
        self.local_url.setText(str(config.get("local_base_url", "") or ""))
        self.local_model.setText(str(config.get("local_model", "") or ""))
        self.budget.setValue(int(config.get("daily_token_budget", 0) or 0))
        self.request_timeout.setValue(float(config.get("request_timeout_s", 120) or 120))
        self.max_retries.setValue(int(config.get("max_retries", 2) or 0))
        self.breaker_failures.setValue(int(config.get("breaker_failures", 3) or 0))
        self.semantic.setChecked(bool(config.get("semantic_search", True)))
        self.embedding_dir.edit.setText(str(config.get("embedding_model_dir", "") or ""))
        self.auto_memorize.setChecked(bool(config.get("auto_memorize", True)))
        self.idle_minutes.setValue(float(config.get("idle_minutes", 30) or 0))
        self.scan_on_start.setChecked(bool(config.get("scan_on_start", True)))
        self.maintenance_on_start.setChecked(bool(config.get("maintenance_on_start", True)))

    def changes(self) -> dict[str, Any]:
        """The settings as a partial config for `ops.SET_CONFIG`."""
        return {
            "engine": self.engine.currentData(),
            "models": {key: combo.currentText().strip() for key, combo in self.models.items()},
            "local_base_url": self.local_url.text().strip() or "http://localhost:11434/v1",
            "local_model": self.local_model.text().strip(),
            "daily_token_budget": self.budget.value(),
            "request_timeout_s": self.request_timeout.value(),
            "max_retries": self.max_retries.value(),
            "breaker_failures": self.breaker_failures.value(),
            "semantic_search": self.semantic.isChecked(),
            "embedding_model_dir": self.embedding_dir.edit.text().strip(),
            "auto_memorize": self.auto_memorize.isChecked(),
            "idle_minutes": self.idle_minutes.value(),
            "scan_on_start": self.scan_on_start.isChecked(),
            "maintenance_on_start": self.maintenance_on_start.isChecked(),
            "sources": {
                "claude_code": self.claude_code.isChecked(),
                "claude_projects_dir": self.claude_dir.edit.text().strip(),
                "codex": self.codex.isChecked(),
                "codex_sessions_dir": self.codex_dir.edit.text().strip(),
                "puffin": self.puffin.isChecked(),
                "puffin_projects": self.puffin_projects.folders(),
                "aider": self.aider.isChecked(),
                "aider_projects": self.aider_projects.folders(),
            },
        }

    def save(self) -> None:
        """Ctrl+S: validate and store the settings."""
        self.save_button.setEnabled(False)
        self.run(self._save(self.changes()))

    async def _save(self, changes: dict[str, Any]) -> None:
        try:
            reply = await self.channels.set_config(changes)
        finally:
            self.save_button.setEnabled(True)
        if is_error(reply):
            self.banner.show_message(f"Not saved — {reply.get('message', '')}")
            return
        note = ""
        if changes.get("engine") != self._config.get("engine") or changes.get(
            "models"
        ) != self._config.get("models"):
            note = " The engine change applies the next time the app starts."
        if reply.get("warning"):
            self.banner.show_message(f"Saved, but {reply['warning']}")
            return
        self.banner.show_message("Settings saved." + note, level="ok")

    def _on_revert_button_clicked(self) -> None:
        self.banner.hide()
        self.refresh()

    def _on_open_home_clicked(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.channels.home)))

    # -- key and hooks --------------------------------------------------------------------
    def _on_key_save_button_clicked(self) -> None:
        key = self.api_key.text().strip()
        if not key:
            self.key_status.setText("Paste a key first.")
            return
        self.run(self._store_key(key))

    async def _store_key(self, key: str) -> None:
        reply = await self.channels.auth_set(key)
        if is_error(reply):
            self.key_status.setText(f"Not stored — {reply.get('message', '')}")
            return
        self.api_key.clear()
        text = f"Stored {reply.get('masked') or 'the key'}. In use: {reply.get('origin', '')}."
        self.key_status.setText(text)

    def _on_key_test_button_clicked(self) -> None:
        self.key_status.setText("Testing…")
        self.key_test_button.setEnabled(False)
        self.run(self._test_key())

    async def _test_key(self) -> None:
        try:
            reply = await self.channels.auth_test()
        finally:
            self.key_test_button.setEnabled(True)
        if is_error(reply):
            self.key_status.setText(f"Test failed — {reply.get('message', '')}")
        else:
            self.key_status.setText(
                ("Key works. " if reply.get("ok") else "Key rejected. ")
                + str(reply.get("message", ""))
            )

    def _install_hooks(self, *, uninstall: bool) -> None:
        self.hooks_result.setText("Removing…" if uninstall else "Installing…")
        self.run(self._hooks(uninstall))

    async def _hooks(self, uninstall: bool) -> None:
        reply = await self.channels.install_hooks(uninstall=uninstall)
        if is_error(reply):
            self.hooks_result.setText(f"Failed — {reply.get('message', '')}")
            return
        where = str(reply.get("settings") or "Claude Code's settings")
        events = [*reply.get("added", []), *reply.get("updated", []), *reply.get("removed", [])]
        if not reply.get("changed", True):
            text = (
                f"No hooks to remove in {where}."
                if uninstall
                else f"The hooks are already in {where}."
            )
        elif uninstall:
            text = f"Removed the hooks from {where}"
        else:
            text = f"Installed the hooks in {where}"
        if reply.get("changed", True) and events:
            text += f" ({', '.join(str(e) for e in events)})"
        if reply.get("changed", True):
            text += "."
        if reply.get("backup"):
            text += f" The previous file was saved as {reply['backup']}."
        self.hooks_result.setText(text)
