"""BranchWatcher: notices branch files changed by anyone (the CLI, an editor, this app).

It watches the `branches/` FOLDER and every file in it with `QFileSystemWatcher`: the folder
catches files that appear, disappear or are atomically replaced (Qt forgets a watched file
once it is replaced, so paths are re-added after every check), the files catch in-place
edits. Events are debounced, then the folder's (mtime, size) signatures are read on a worker
thread and compared with the last ones, so a burst of events gives one signal naming exactly
the branches that changed. A slow poll covers platforms where watching fails, and also
notices changes to the home's other files (review queue, activity, config).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from app.core.errors import PuffinError
from app.core.store import MemoryStore

Spawn = Callable[[Coroutine[Any, Any, Any]], "asyncio.Task[Any]"]
HOME_FILES = (
    "review-queue.json",
    "activity.json",
    "maintenance-log.json",
    "usage.json",
    "config.json",
)
Signatures = dict[str, tuple[int, int]]


def _home_signatures(home: Path) -> Signatures:
    found: Signatures = {}
    for name in HOME_FILES:
        try:
            st = os.stat(home / name)
        except OSError:
            continue
        found[name] = (st.st_mtime_ns, st.st_size)
    return found


class BranchWatcher(QObject):
    """Emits `branches_changed(list)` with the ids of branch files that changed on disk."""

    branches_changed = Signal(object)
    home_files_changed = Signal()

    def __init__(
        self,
        home: Path,
        spawn: Spawn,
        parent: QObject | None = None,
        *,
        debounce_ms: int = 200,
        poll_ms: int = 4000,
    ) -> None:
        super().__init__(parent)
        self._store = MemoryStore(home)
        self._home = home
        self._spawn = spawn
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(self._on_watcher_changed)
        self._watcher.fileChanged.connect(self._on_watcher_changed)
        self._debounce = QTimer(self, singleShot=True, interval=debounce_ms)
        self._debounce.timeout.connect(self.check_now)
        self._poll = QTimer(self, interval=poll_ms)
        self._poll.timeout.connect(self.check_now)
        self._branches: Signatures | None = None
        self._home_files: Signatures | None = None
        self._checking = False
        self._again = False

    def start(self) -> None:
        """Take the first snapshot and start watching."""
        self._poll.start()
        self.check_now()

    def stop(self) -> None:
        """Stop watching (pending checks are dropped)."""
        self._poll.stop()
        self._debounce.stop()
        paths = self._watcher.files() + self._watcher.directories()
        if paths:
            self._watcher.removePaths(paths)

    def _on_watcher_changed(self, _path: str) -> None:
        self._debounce.start()

    def check_now(self) -> None:
        """Compare the folder with the last snapshot now (coalesced if a check is running)."""
        if self._checking:
            self._again = True
            return
        self._checking = True
        self._spawn(self._check())

    async def _check(self) -> None:
        try:
            while True:
                self._again = False
                branches, home_files = await asyncio.to_thread(self._read)
                self._compare(branches, home_files)
                self._rewatch(branches)
                if not self._again:
                    break
        finally:
            self._checking = False

    def _read(self) -> tuple[Signatures, Signatures]:
        """Runs on a worker thread."""
        try:
            branches = self._store.signatures()
        except OSError:
            branches = {}
        return branches, _home_signatures(self._home)

    def _compare(self, branches: Signatures, home_files: Signatures) -> None:
        first = self._branches is None
        previous = self._branches or {}
        self._branches = branches
        if not first:
            changed = sorted(
                b for b in set(previous) | set(branches) if previous.get(b) != branches.get(b)
            )
            if changed:
                self.branches_changed.emit(changed)
        if self._home_files is not None and home_files != self._home_files:
            self.home_files_changed.emit()
        self._home_files = home_files

    def _rewatch(self, branches: Signatures) -> None:
        folder = self._store.branches_dir
        wanted = [str(folder)] if folder.is_dir() else []
        for branch in branches:
            try:
                wanted.append(str(self._store.branch_file(branch)))
            except PuffinError:
                continue  # an id read from a hand-written header that cannot name a file
        watched = set(self._watcher.files()) | set(self._watcher.directories())
        missing = [p for p in wanted if p not in watched]
        if missing:
            self._watcher.addPaths(missing)
