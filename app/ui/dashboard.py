"""Dashboard panel: figure cards (branches, items, categories, last memorized, next
maintenance, review queue, tokens and cost today), recent activity, background job progress,
and maintenance with a result summary. With nothing memorized yet it invites a scan."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QStackedWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

import app.core.answers as answers
from app.service.channels import MemoryChannels, is_error
from app.ui.widgets import (
    SPACING,
    Card,
    EmptyState,
    Panel,
    format_time,
    format_tokens,
    heading,
    muted,
    parse_time,
    push_button,
)

CATEGORY_NAMES = {
    "coding_preferences": "Coding Preferences",
    "architectural_decisions": "Architectural Decisions",
    "project_conventions": "Project Conventions",
    "bug_patterns": "Bug Patterns",
    "implementation_notes": "Implementation Notes",
}
MAINTENANCE_KINDS = (
    ("weekly", "Weekly consolidation"),
    ("monthly", "Monthly validation"),
    ("full", "Full (weekly + monthly)"),
)


def humanize_key(key: str) -> str:
    """'branchesConsolidated' or 'branches_consolidated' -> 'branches consolidated'."""
    spaced = re.sub(r"(?<=[a-z0-9])([A-Z])", r" \1", key).replace("_", " ")
    return spaced.lower()


def summarize_results(results: object, depth: int = 0) -> list[str]:
    """Readable 'name: value' lines from a maintenance result dict (nested dicts flattened)."""
    lines: list[str] = []
    if not isinstance(results, dict):
        return lines
    for key, value in results.items():
        if isinstance(value, dict) and depth < 2:
            lines.extend(summarize_results(value, depth + 1))
        elif "duration" in str(key).lower() or key in ("type", "success"):
            continue  # shown in the headline, or not news
        elif isinstance(value, bool):
            lines.append(f"{humanize_key(str(key))}: {'yes' if value else 'no'}")
        elif isinstance(value, int | float | str) and value != "":
            lines.append(f"{humanize_key(str(key))}: {value}")
        elif isinstance(value, list):
            lines.append(f"{humanize_key(str(key))}: {len(value)}")
    return lines


class DashboardPanel(Panel):
    """See the module docstring."""

    title = "Dashboard"
    subtitle = "What Puffin remembers about your work, and what it is doing now."
    icon = "dashboard"
    review_requested = Signal()

    def __init__(self, channels: MemoryChannels, parent: QWidget | None = None) -> None:
        super().__init__(channels, parent)
        self.scan_button = push_button(
            "Scan now", "scan", tooltip="Memorize new agent conversations (Shift+F5)"
        )
        self.scan_button.clicked.connect(self._on_scan_button_clicked)
        self.folder_button = push_button(
            "Scan a folder…", "folder", tooltip="Memorize the transcripts in one folder"
        )
        self.folder_button.clicked.connect(self._on_folder_button_clicked)
        self.header_actions.addWidget(self.folder_button)
        self.header_actions.addWidget(self.scan_button)

        self._events: list[answers.ActivityEvent] = []
        self.cards: dict[str, Card] = {}
        grid = QGridLayout()
        grid.setSpacing(SPACING)
        captions = [
            ("branches", "Branch memories"),
            ("items", "Items"),
            ("categories", "Categories"),
            ("last", "Last memorized"),
            ("next", "Next maintenance"),
            ("review", "Review queue"),
            ("tokens", "Tokens today"),
            ("cost", "Cost today"),
        ]
        for index, (key, caption) in enumerate(captions):
            card = Card(caption)
            self.cards[key] = card
            grid.addWidget(card, index // 4, index % 4)
        self.body.addLayout(grid)

        self.empty = EmptyState(
            "No memories yet. Scan your agent history",
            "Scan now reads your Claude Code, Codex, Aider and Puffin conversations where "
            "they are (nothing is copied or sent anywhere) and keeps the decisions, "
            "conventions and bug patterns in one Markdown file per branch. Then connect "
            "Claude Code in Settings so each session starts with its branch's memory. "
            "Without an API key the offline engine keeps only statements it is sure of; "
            "the rest waits in Review. A key in Settings lets Claude read more deeply.",
            action="Scan now",
            icon="scan",
        )
        self.empty.action_triggered.connect(self._on_scan_button_clicked)

        lower = QHBoxLayout()
        lower.setSpacing(SPACING * 2)
        activity_box = QVBoxLayout()
        activity_box.setSpacing(6)
        activity_box.addWidget(heading("Recent activity"))
        self.activity = QTreeWidget()
        self.activity.setColumnCount(2)
        self.activity.setHeaderHidden(True)
        self.activity.setRootIsDecorated(False)
        self.activity.setAlternatingRowColors(True)
        self.activity.setAccessibleName("Recent activity")
        header = self.activity.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        self.activity_empty = EmptyState(
            "Nothing has happened yet",
            "Scans, edits and maintenance runs show up here.",
            icon="versions",
        )
        self.activity_stack = QStackedWidget()
        self.activity_stack.addWidget(self.activity)
        self.activity_stack.addWidget(self.activity_empty)
        self.activity_stack.addWidget(self.empty)
        activity_box.addWidget(self.activity_stack, 1)
        lower.addLayout(activity_box, 3)

        side = QVBoxLayout()
        side.setContentsMargins(0, 0, 0, 0)
        side.setSpacing(8)
        side.addWidget(heading("Background work"))
        self.job_label = muted(QLabel("Idle"))
        self.job_label.setWordWrap(True)
        self.job_progress = QProgressBar()
        self.job_progress.setTextVisible(False)
        self.job_progress.setMaximumHeight(8)
        self.job_progress.setVisible(False)
        self.job_progress.setAccessibleName("Background job progress")
        side.addWidget(self.job_label)
        side.addWidget(self.job_progress)
        self.last_failure = QLabel("")
        self.last_failure.setWordWrap(True)
        self.last_failure.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.last_failure.setVisible(False)
        side.addWidget(self.last_failure)
        # What the last scan read and gave, and why it gave nothing when it did.
        self.scan_result = muted(QLabel(""))
        self.scan_result.setWordWrap(True)
        self.scan_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.scan_result.setAccessibleName("Last scan")
        self.scan_result.setVisible(False)
        side.addWidget(self.scan_result)
        side.addSpacing(SPACING)
        side.addWidget(heading("Maintenance"))
        explain = muted(
            QLabel(
                "Weekly consolidation merges duplicates and rewrites summaries; "
                "monthly validation checks every file and rebuilds the index."
            )
        )
        explain.setWordWrap(True)
        side.addWidget(explain)
        row = QHBoxLayout()
        self.kind = QComboBox()
        for kind, label in MAINTENANCE_KINDS:
            self.kind.addItem(label, kind)
        self.kind.setAccessibleName("Maintenance type")
        self.maintenance_button = push_button("Run maintenance", "maintenance")
        self.maintenance_button.clicked.connect(self._on_maintenance_button_clicked)
        row.addWidget(self.kind, 1)
        row.addWidget(self.maintenance_button)
        side.addLayout(row)
        self.maintenance_progress = QProgressBar()
        self.maintenance_progress.setRange(0, 0)
        self.maintenance_progress.setTextVisible(False)
        self.maintenance_progress.setMaximumHeight(8)
        self.maintenance_progress.setVisible(False)
        self.maintenance_progress.setAccessibleName("Maintenance progress")
        side.addWidget(self.maintenance_progress)
        self.maintenance_result = QLabel("")
        self.maintenance_result.setWordWrap(True)
        self.maintenance_result.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
        )
        side.addWidget(self.maintenance_result)
        side.addStretch(1)
        side_widget = QWidget()
        side_widget.setLayout(side)
        side_widget.setMaximumWidth(360)
        lower.addWidget(side_widget, 2)
        self.body.addLayout(lower, 1)

        self._activity_timer = QTimer(self, singleShot=True, interval=250)
        self._activity_timer.timeout.connect(self._on_activity_timer_timeout)
        channels.watch_stats(self._on_channels_stats_changed)
        channels.watch_status(self._on_channels_status_changed)
        channels.job_finished.connect(self._on_channels_job_finished)
        channels.progress.connect(self._on_channels_progress)

    # -- loading ------------------------------------------------------------------------
    def refresh(self) -> None:
        """Reload stats and activity."""
        self.channels.refresh_stats()
        self.run(self._load_activity())

    async def _load_activity(self) -> None:
        reply = await self.channels.activity(limit=30)
        if is_error(reply):
            return
        events = list(reply.get("events", []))
        if events != self._events:
            self._events = events
            self._fill_activity(events)
        self._update_activity_view()

    def _fill_activity(self, events: Sequence[Mapping[str, Any]]) -> None:
        items = []
        for event in events:
            message = str(event.get("message", ""))
            count = event.get("count")
            if isinstance(count, int) and count > 1:
                message += f" (×{count})"
            item = QTreeWidgetItem([message, format_time(event.get("timestamp"), never="")])
            moment = parse_time(event.get("timestamp"))
            if moment is not None:
                item.setToolTip(1, moment.astimezone().strftime("%Y-%m-%d %H:%M"))
            item.setToolTip(0, str(event.get("message", "")))
            items.append(item)
        # One batch: item by item, the resize-to-contents column is measured each time.
        self.activity.setUpdatesEnabled(False)
        self.activity.clear()
        self.activity.addTopLevelItems(items)
        self.activity.setUpdatesEnabled(True)

    def _request_activity(self) -> None:
        """Reload the activity soon; a hidden dashboard waits until it is shown (activate),
        so background jobs cost the GUI thread nothing for it."""
        if self.isVisible():
            self._activity_timer.start()

    def _on_activity_timer_timeout(self) -> None:
        if self.isVisible():
            self.run(self._load_activity())

    def _update_activity_view(self) -> None:
        stats: Mapping[str, Any] = self.channels.stats or {}
        if not stats.get("totalBranches") and not self.activity.topLevelItemCount():
            self.activity_stack.setCurrentWidget(self.empty)
        elif not self.activity.topLevelItemCount():
            self.activity_stack.setCurrentWidget(self.activity_empty)
        else:
            self.activity_stack.setCurrentWidget(self.activity)

    # -- channel events -----------------------------------------------------------------
    def _on_channels_stats_changed(self, stats: answers.StatsAnswer) -> None:
        cats = stats.get("categories") or {}
        busiest = max(cats.items(), key=lambda kv: kv[1], default=(None, 0))
        self.cards["branches"].set_value(str(stats.get("totalBranches", 0)), "one file per branch")
        self.cards["items"].set_value(str(stats.get("totalItems", 0)), "remembered facts")
        self.cards["categories"].set_value(
            f"{stats.get('totalCategories', 0)} of 5",
            f"most: {CATEGORY_NAMES.get(str(busiest[0]), '')}" if busiest[1] else "none yet",
        )
        last = stats.get("lastMemorized")
        moment = parse_time(last)
        self.cards["last"].set_value(
            format_time(last), moment.astimezone().strftime("%d %b %Y, %H:%M") if moment else ""
        )
        due = parse_time(stats.get("nextMaintenance"))
        if due is not None and due <= datetime.now(UTC) + timedelta(minutes=1):
            self.cards["next"].set_value("Due now", "runs at start or from here")
        else:
            self.cards["next"].set_value(
                format_time(stats.get("nextMaintenance"), never="Not scheduled"),
                "weekly consolidation",
            )
        queue = int(stats.get("reviewQueue", 0) or 0)
        self.cards["review"].set_value(str(queue), "waiting for you" if queue else "all reviewed")
        self.cards["tokens"].set_value(format_tokens(stats.get("tokensToday", 0)), "LLM tokens")
        cost = float(stats.get("costToday", 0.0) or 0.0)
        self.cards["cost"].set_value(f"${cost:.2f}", "estimated")
        self._request_activity()

    def _on_channels_status_changed(self, status: dict[str, Any]) -> None:
        jobs = status.get("jobs") or []
        running = jobs[0] if jobs else None
        maintenance = any(j.get("kind") == "maintenance" for j in jobs)
        self.maintenance_progress.setVisible(maintenance)
        self.maintenance_button.setEnabled(not maintenance)
        self.scan_button.setEnabled(not any(j.get("kind") == "scan" for j in jobs))
        if running is None:
            self.job_label.setText(
                "Idle" + (" · automatic memorization paused" if status.get("paused") else "")
            )
            self.job_progress.setVisible(False)
            return
        done, total = int(running.get("done", 0)), int(running.get("total", 0))
        text = running.get("name", "Working")
        if total:
            text += f" — {done} of {total}"
        if running.get("label"):
            text += f"\n{running['label']}"
        if len(jobs) > 1:
            text += f"\n{len(jobs) - 1} more queued"
        self.job_label.setText(text)
        self.job_progress.setVisible(True)
        self.job_progress.setRange(0, total if total else 0)
        self.job_progress.setValue(done)

    def _on_channels_progress(self, _job: str, done: int, total: int) -> None:
        if total:
            self.job_progress.setRange(0, total)
            self.job_progress.setValue(done)

    def _on_channels_job_finished(self, name: str, kind: str, reply: dict[str, Any]) -> None:
        if is_error(reply):
            self.last_failure.setText(f"{name} failed: {reply.get('message', '')}")
            self.last_failure.setVisible(True)
        elif kind == "scan":
            self.last_failure.setVisible(False)
            if reply.get("summary"):
                self.scan_result.setText(f"Last scan: {reply['summary']}")
                self.scan_result.setVisible(True)
        if kind == "maintenance":
            if is_error(reply):
                self.maintenance_result.setText(f"{name} failed: {reply.get('message', '')}")
            else:
                lines = summarize_results(reply.get("results"))
                took = reply.get("duration")
                head = f"{name} finished" + (f" in {float(took) / 1000:.1f} s" if took else "")
                self.maintenance_result.setText(
                    head + (":\n• " + "\n• ".join(lines[:8]) if lines else ".")
                )
        self._request_activity()

    # -- actions --------------------------------------------------------------------------
    def _on_scan_button_clicked(self) -> None:
        self.channels.scan_now()

    def _on_folder_button_clicked(self) -> None:
        dialog = QFileDialog(self, "Scan a folder of transcripts")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly)
        dialog.fileSelected.connect(self.channels.scan_folder)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def _on_maintenance_button_clicked(self) -> None:
        kind = str(self.kind.currentData())
        self.maintenance_result.setText("")
        self.maintenance_progress.setVisible(True)
        self.maintenance_button.setEnabled(False)
        self.channels.start_maintenance(kind)
