"""MemoryStore: the file-system layer that owns the memory home and every branch file.

Branch files are the source of truth, so every change goes the same safe way: take the
branch's lock file, read the current bytes, keep them as a version, write a unique temp file
in the same folder, fsync, `os.replace`, fsync the folder. Reads take no lock (an atomic
replace means a reader sees the old or the new file, never a mix). Branch ids are free text
and are encoded into file names that can never leave `branches/`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.core.atomic import atomic_write_bytes, fsync_dir, held_lock
from app.core.errors import InvalidInput, NotFound, PuffinError, StorageError
from app.core.models import BranchMemory
from app.core.paths import (
    HASH_PREFIX,
    decode_stem,
    encode_branch,
)

_VERSION_NAME = re.compile(r"\d{8}T\d{12}Z(?:-\d+)?")
_HEADER_ID = re.compile(r"^#\s*Branch Memory:\s*(.+?)\s*$", re.MULTILINE)
LOCK_TIMEOUT_S = 30.0
_PARSE_CACHE = 32


@dataclass(frozen=True, slots=True)
class VersionInfo:
    """A saved previous content of a branch file."""

    version: str
    timestamp: datetime
    size: int

    def to_dict(self) -> dict[str, object]:
        """API shape."""
        return {
            "version": self.version,
            "timestamp": self.timestamp.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "size": self.size,
        }


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


DAILY_AFTER = timedelta(days=30)
WEEKLY_AFTER = timedelta(days=180)


def version_policy(names: list[str], *, keep_recent: int, now: datetime) -> set[str]:
    """The version names to evict: never the newest `keep_recent`, never one under 30 days.

    Older versions are thinned to the newest of each day, and past 180 days to the newest
    of each ISO week. Names sort by time (they are UTC stamps).
    """
    evict: set[str] = set()
    seen: set[tuple[int, ...]] = set()
    for rank, name in enumerate(sorted(names, reverse=True)):
        try:
            stamp = datetime.strptime(name[:22], "%Y%m%dT%H%M%S%fZ").replace(tzinfo=UTC)
        except ValueError:
            continue
        age = now - stamp
        if rank < keep_recent or age < DAILY_AFTER:
            continue
        if age < WEEKLY_AFTER:
            bucket: tuple[int, ...] = (stamp.year, stamp.month, stamp.day)
        else:
            year, week, _ = stamp.isocalendar()
            bucket = (year, week, 0, 0)
        if bucket in seen:
            evict.add(name)
        else:
            seen.add(bucket)
    return evict


class MemoryStore:
    """Owns `<home>/branches`, `<home>/versions` and the per-branch locks."""

    def __init__(self, home: Path, *, versions_keep: int = 20) -> None:
        self.home = home.expanduser()
        self.branches_dir = self.home / "branches"
        self.versions_dir = self.home / "versions"
        self.locks_dir = self.home / ".locks"
        self.versions_keep = versions_keep
        self._stem_names: dict[str, str] = {}
        self._parsed: dict[tuple[str, bytes], BranchMemory] = {}

    # -- paths -------------------------------------------------------------------------
    @property
    def config_path(self) -> Path:
        """`config.json`."""
        return self.home / "config.json"

    @property
    def review_queue_path(self) -> Path:
        """`review-queue.json`."""
        return self.home / "review-queue.json"

    @property
    def ledger_path(self) -> Path:
        """`ledger.json`."""
        return self.home / "ledger.json"

    @property
    def maintenance_log_path(self) -> Path:
        """`maintenance-log.json`."""
        return self.home / "maintenance-log.json"

    @property
    def usage_path(self) -> Path:
        """`usage.json`."""
        return self.home / "usage.json"

    @property
    def index_path(self) -> Path:
        """`index.sqlite`."""
        return self.home / "index.sqlite"

    @property
    def activity_path(self) -> Path:
        """`activity.json` (recent events shown on the dashboard)."""
        return self.home / "activity.json"

    def ensure(self) -> None:
        """Create the home layout (idempotent)."""
        try:
            for folder in (self.branches_dir, self.versions_dir, self.locks_dir):
                folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"Cannot create the memory folder {self.home}: {exc}") from exc

    def migrate_file_names(self) -> list[str]:
        """Rename branch files (and version folders) named by an older encoding.

        Ids with capitals and Windows device names got new stems (so "Main" and "main" no
        longer share a file where case is ignored); a file still under its old stem is moved
        to the new one under the branch's lock, unless the new name is taken. Returns the
        branches moved. Cheap when there is nothing to do: one directory listing.
        """
        moved: list[str] = []
        try:
            paths = list(self.branches_dir.glob("*.md"))
        except OSError:
            return moved
        for path in paths:
            branch = decode_stem(path.stem)
            if branch is None or path.stem.startswith(HASH_PREFIX):
                continue
            try:
                stem = encode_branch(branch)
            except InvalidInput:
                continue
            if stem == path.stem:
                continue
            with self.lock(branch), contextlib.suppress(OSError):
                target = self.branches_dir / f"{stem}.md"
                if target.exists() or not path.exists():
                    continue
                os.replace(path, target)
                old_versions = self.versions_dir / path.stem
                if old_versions.is_dir() and not (self.versions_dir / stem).exists():
                    os.replace(old_versions, self.versions_dir / stem)
                moved.append(branch)
        return moved

    def branch_file(self, branch: str) -> Path:
        """The file of a branch (which may not exist)."""
        return self.branches_dir / f"{encode_branch(branch)}.md"

    def _version_folder(self, branch: str) -> Path:
        return self.versions_dir / encode_branch(branch)

    @contextlib.contextmanager
    def lock(self, branch: str) -> Iterator[None]:
        """Hold the branch's lock file (a separate `.lock`, never the data file)."""
        self.ensure()
        with held_lock(
            self.locks_dir / f"{encode_branch(branch)}.lock",
            LOCK_TIMEOUT_S,
            f"Branch {branch!r} is busy (another writer held its lock for "
            f"{LOCK_TIMEOUT_S:.0f} s); try again.",
        ):
            yield

    # -- reading -----------------------------------------------------------------------
    def list_branches(self) -> list[str]:
        """Decoded ids of every branch file, sorted."""
        if not self.branches_dir.is_dir():
            return []
        found: list[str] = []
        for path in self.branches_dir.glob("*.md"):
            branch = self._branch_of(path)
            if branch is not None:
                found.append(branch)
        return sorted(found)

    def _branch_of(self, path: Path) -> str | None:
        stem = path.stem
        if stem.startswith(".") and "%" not in stem:
            return None  # temp files and other hidden files
        decoded = decode_stem(stem)
        if decoded is not None:
            return decoded
        with contextlib.suppress(OSError):
            return path.with_suffix(".name").read_text(encoding="utf-8")
        try:
            with path.open("r", encoding="utf-8", errors="replace") as handle:
                head = handle.read(1024)
        except OSError:
            return None
        match = _HEADER_ID.search(head)
        return match.group(1) if match else None

    def exists(self, branch: str) -> bool:
        """Whether the branch has a memory file."""
        return self.branch_file(branch).is_file()

    def read_bytes(self, branch: str) -> bytes | None:
        """Raw bytes of a branch file, or None when it does not exist."""
        try:
            return self.branch_file(branch).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"Cannot read memory of {branch!r}: {exc.strerror}") from exc

    def read_text(self, branch: str) -> str | None:
        """Text of a branch file (undecodable bytes replaced), or None."""
        data = self.read_bytes(branch)
        return None if data is None else data.decode("utf-8", errors="replace")

    def read(self, branch: str) -> BranchMemory | None:
        """The parsed branch memory, or None when there is no file."""

        data = self.read_bytes(branch)
        return None if data is None else self.parse_bytes(branch, data)

    def parse_bytes(self, branch: str, data: bytes) -> BranchMemory:
        """Parse a branch file's bytes, reusing the result for bytes parsed before.

        A long-lived process (the app) mostly reads back what it has just written; parsing a
        50-item file costs ~5 ms, a copy of the cached model well under 1. The cache is keyed
        by the exact bytes, so an edit by hand is always parsed anew. Callers get their own
        copy and may change it.
        """
        from app.core.format import parse

        key = (branch, hashlib.blake2b(data, digest_size=16).digest())
        cached = self._parsed.pop(key, None)
        if cached is None:
            cached = parse(data.decode("utf-8", errors="replace"), branch_id=branch)
            # The file name is authoritative: a hand-edited header must not move items.
            cached.branch_id = branch
        self._parsed[key] = cached
        while len(self._parsed) > _PARSE_CACHE:
            self._parsed.pop(next(iter(self._parsed)))
        return _own_copy(cached)

    def remember_parsed(self, branch: str, text: str, memory: BranchMemory) -> None:
        """Seed the parse cache with a memory just rendered to `text` and written."""
        key = (branch, hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest())
        self._parsed[key] = _own_copy(memory)
        while len(self._parsed) > _PARSE_CACHE:
            self._parsed.pop(next(iter(self._parsed)))

    def signature(self, branch: str) -> tuple[int, int] | None:
        """(mtime_ns, size) of the branch file, or None."""
        try:
            st = self.branch_file(branch).stat()
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def signatures(self) -> dict[str, tuple[int, int]]:
        """(mtime_ns, size) of every branch file."""
        result: dict[str, tuple[int, int]] = {}
        if not self.branches_dir.is_dir():
            return result
        names = self._stem_names
        with os.scandir(self.branches_dir) as entries:
            for entry in entries:
                if not entry.name.endswith(".md"):
                    continue
                # A plain or percent-encoded stem always names the same branch: decode it
                # once (searches call this on every query).
                branch = names.get(entry.name)
                if branch is None:
                    branch = self._branch_of(Path(entry.path))
                    if branch is None:
                        continue
                    if not entry.name.startswith(HASH_PREFIX):
                        names[entry.name] = branch
                st = entry.stat()
                result[branch] = (st.st_mtime_ns, st.st_size)
        return result

    # -- writing -----------------------------------------------------------------------
    def write_text(self, branch: str, text: str) -> str | None:
        """Replace a branch file; the previous content is kept as a version (returned)."""
        with self.lock(branch):
            return self._write_locked(branch, text.encode("utf-8"))

    def update(
        self, branch: str, change: Callable[[BranchMemory | None], BranchMemory | None]
    ) -> BranchMemory | None:
        """Read-modify-write under the branch lock, so concurrent writers lose nothing.

        `change` gets the current memory (None when the file does not exist) and returns the
        new one, or None to leave the file untouched. Whatever `change` raises propagates
        and the file stays as it was.
        """
        from app.core.format import render

        with self.lock(branch):
            data = self.read_bytes(branch)
            current = None if data is None else self.parse_bytes(branch, data)
            new = change(current)
            if new is None:
                return current
            self._write_locked(branch, render(new).encode("utf-8"))
            return new

    def write_if_unchanged(self, branch: str, expected: bytes | None, text: str) -> bool:
        """Write only if the file still holds `expected` (None: must not exist).

        Lets slow work (an LLM rewrite) run without holding the lock: the caller reads,
        thinks, then commits here; False means someone else wrote meanwhile and the caller
        should start again from the new content.
        """
        with self.lock(branch):
            if self.read_bytes(branch) != expected:
                return False
            self._write_locked(branch, text.encode("utf-8"))
            return True

    def _write_locked(self, branch: str, data: bytes) -> str | None:
        path = self.branch_file(branch)
        self.ensure()
        version: str | None = None
        try:
            old = path.read_bytes()
        except FileNotFoundError:
            old = None
        except OSError as exc:
            raise StorageError(f"Cannot read memory of {branch!r}: {exc.strerror}") from exc
        if old is not None:
            if old == data:
                return None
            version = self._save_version(branch, old)
        elif path.stem.startswith(HASH_PREFIX):
            # Hashed names cannot be decoded: keep the id beside the file.
            atomic_write_bytes(path.with_suffix(".name"), branch.encode("utf-8"))
        atomic_write_bytes(path, data)
        return version

    def delete(self, branch: str) -> str:
        """Remove a branch file, keeping its content as a version (returned) for undo."""
        with self.lock(branch):
            path = self.branch_file(branch)
            data = self.read_bytes(branch)
            if data is None:
                raise NotFound(f"No memory file for branch {branch!r}.")
            version = self._save_version(branch, data)
            try:
                path.unlink()
            except OSError as exc:
                raise StorageError(f"Cannot delete memory of {branch!r}: {exc}") from exc
            fsync_dir(path.parent)
            return version

    # -- versions ----------------------------------------------------------------------
    def _save_version(self, branch: str, data: bytes) -> str:
        folder = self._version_folder(branch)
        newest = self._newest_version(folder)
        if newest is not None and _same_bytes(newest, data):
            return newest.stem  # identical to the last saved version: one copy is enough
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        name, counter = stamp, 1
        while (folder / f"{name}.md").exists():
            name = f"{stamp}-{counter}"
            counter += 1
        atomic_write_bytes(folder / f"{name}.md", data)
        self._prune_versions(branch, folder)
        return name

    @staticmethod
    def _newest_version(folder: Path) -> Path | None:
        versions = sorted(p for p in folder.glob("*.md") if _VERSION_NAME.fullmatch(p.stem))
        return versions[-1] if versions else None

    def _prune_versions(self, branch: str, folder: Path) -> None:
        """Thin old versions by `version_policy`; their only copies of items are archived.

        Before a version file is removed, every item in it that is neither in the branch
        file nor in the archive (nor forgotten by the user on purpose) is archived, so no
        policy can evict the last copy of anything. A version that cannot be read or
        parsed is kept.
        """
        versions = sorted(p for p in folder.glob("*.md") if _VERSION_NAME.fullmatch(p.stem))
        evict = version_policy(
            [p.stem for p in versions], keep_recent=self.versions_keep, now=datetime.now(UTC)
        )
        if not evict:
            return
        from app.core.archive import Archive

        archive = Archive(self.home)
        current = self.read(branch) if self.exists(branch) else None
        known = {i.id for i in current.all_items()} if current is not None else set()
        known |= archive.ids(branch) | archive.forgotten(branch)
        for path in versions:
            if path.stem not in evict:
                continue
            try:
                old = self.parse_bytes(branch, path.read_bytes())
                orphans = [
                    (item, f"kept from version {path.stem} before it was removed")
                    for item in old.all_items()
                    if item.id not in known
                ]
                known |= set(archive.add(branch, orphans))
            except (OSError, PuffinError, ValueError):
                continue  # unreadable: keep the file rather than risk its items
            with contextlib.suppress(OSError):
                path.unlink()

    def list_versions(self, branch: str) -> list[VersionInfo]:
        """Saved versions of a branch, newest first (also for deleted branches)."""
        folder = self._version_folder(branch)
        if not folder.is_dir():
            return []
        infos: list[VersionInfo] = []
        for path in folder.glob("*.md"):
            if not _VERSION_NAME.fullmatch(path.stem):
                continue
            stamp = datetime.strptime(path.stem[:22], "%Y%m%dT%H%M%S%fZ").replace(tzinfo=UTC)
            infos.append(VersionInfo(path.stem, stamp, path.stat().st_size))
        return sorted(infos, key=lambda v: v.version, reverse=True)

    def _version_path(self, branch: str, version: str) -> Path:
        if not isinstance(version, str) or not _VERSION_NAME.fullmatch(version):
            raise InvalidInput(f"{version!r} is not a version name.")
        path = self._version_folder(branch) / f"{version}.md"
        if not path.is_file():
            raise NotFound(f"No version {version} for branch {branch!r}.")
        return path

    def read_version(self, branch: str, version: str) -> str:
        """Content of a saved version."""
        return self._version_path(branch, version).read_bytes().decode("utf-8", "replace")

    def restore(self, branch: str, version: str) -> str | None:
        """Bring back a version's exact bytes; the current content becomes a version."""
        data = self._version_path(branch, version).read_bytes()
        with self.lock(branch):
            return self._write_locked(branch, data)


def _own_copy(memory: BranchMemory) -> BranchMemory:
    """A copy whose containers (sections, contradictions, extra sections) are the caller's own.

    Items and contradiction entries are shared: nothing changes them in place (every change
    is a `model_copy(update=...)`), so copying the containers is enough for a caller to add,
    remove or reorder freely, at a fraction of a deep copy's cost.
    """
    return memory.model_copy(
        update={
            "items": {category: list(items) for category, items in memory.items.items()},
            "contradictions": list(memory.contradictions),
            "extra_sections": list(memory.extra_sections),
        }
    )
