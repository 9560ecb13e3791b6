"""A full disk or a read-only memory folder gives one clear sentence and changes nothing
(issue 13): never a traceback, never a partial file, never an "unexpected" error.

Where the machine allows it (root with mount rights), a real tmpfs is filled up or remounted
read-only; otherwise the operating system's answer (ENOSPC, EROFS) is produced at the lowest
level the app calls, `os.replace` / `tempfile.mkstemp`, so everything above runs as it would.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.container import build_api
from app.core import atomic

FIRST = "User: We always run make lint before pushing; never push a red build.\n\nAssistant: Ok."
SECOND = (
    "User: We always deploy with terraform apply from CI only, never from laptops.\n\n"
    "Assistant: Noted."
)


def _memorize(home: Path, text: str) -> dict[str, object]:
    api = build_api(home, engine_override="offline")
    try:
        return api.invoke(
            "memory:memorize", {"conversationText": text, "branchId": "p/main", "source": "t"}
        )
    finally:
        api.index.close()


def _branch_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((home / "branches").glob("*.md")))


def _no_temp_files(home: Path) -> bool:
    return not [p for p in home.rglob(".*.tmp") if p.is_file()]


def test_a_full_disk_is_a_storage_error_and_the_file_stays(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "error" not in _memorize(home, FIRST)
    before = _branch_bytes(home)

    def full(src: object, dst: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(dst))

    monkeypatch.setattr(atomic.os, "replace", full)
    answer = _memorize(home, SECOND)

    assert answer["error"] and answer["code"] == "STORAGE_ERROR", answer
    assert "is full" in str(answer["message"]) and "Nothing was changed" in str(answer["message"])
    monkeypatch.undo()
    assert _branch_bytes(home) == before
    assert _no_temp_files(home)


def test_a_read_only_folder_is_a_storage_error_not_a_crash(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "error" not in _memorize(home, FIRST)
    before = _branch_bytes(home)

    def read_only(*args: object, **kwargs: object) -> tuple[int, str]:
        raise OSError(errno.EROFS, "Read-only file system", str(kwargs.get("dir", "")))

    monkeypatch.setattr(atomic.tempfile, "mkstemp", read_only)
    answer = _memorize(home, SECOND)

    assert answer["error"] and answer["code"] == "STORAGE_ERROR", answer
    assert "read-only" in str(answer["message"])
    monkeypatch.undo()
    assert _branch_bytes(home) == before


def test_a_lock_file_that_cannot_be_made_is_a_storage_error(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """filelock opens its lock file itself: the API turns that OSError into the sentence."""
    import filelock

    def refuse(self: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(home / "x.lock"))

    monkeypatch.setattr(filelock.UnixFileLock, "_acquire", refuse)
    answer = _memorize(home, FIRST)
    assert answer["error"] and answer["code"] == "STORAGE_ERROR", answer
    assert "No permission to write" in str(answer["message"])


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A real 256 KB tmpfs, when this machine lets the tests mount one."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a small file system")
    target = tmp_path / f"fs-{uuid.uuid4().hex[:6]}"
    target.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(target)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip("mounting a tmpfs is not allowed here")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True, check=False)


def _fill(path: Path) -> None:
    with path.open("wb") as handle:
        while True:
            handle.write(b"\0" * 16_384)
            handle.flush()


def test_a_really_full_and_then_read_only_disk(tmpfs: Path) -> None:
    home = tmpfs / "home"
    assert "error" not in _memorize(home, FIRST)
    before = _branch_bytes(home)
    filler = tmpfs / "filler"
    with pytest.raises(OSError, match="No space left"):
        _fill(filler)
    full = _memorize(home, SECOND)
    assert full["code"] == "STORAGE_ERROR" and "is full" in str(full["message"]), full
    assert _branch_bytes(home) == before
    filler.unlink()
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    read_only = _memorize(home, SECOND)
    assert read_only["code"] == "STORAGE_ERROR", read_only
    assert "read-only" in str(read_only["message"])
    assert _branch_bytes(home) == before
    # Reading still works from a read-only memory folder.
    api = build_api(home, engine_override="offline")
    found = api.invoke("memory:retrieve", {"query": "lint before pushing"})
    assert found.get("memories"), found
