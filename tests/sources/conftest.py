"""Helpers for the source tests: fixture paths, realistic folder layouts, an async runner."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TypeVar

import pytest

from app.core.config import SourceSettings

T = TypeVar("T")


@pytest.fixture
def src_fixtures(fixtures_dir: Path) -> Path:
    """tests/fixtures/sources."""
    return fixtures_dir / "sources"


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    """An empty home folder standing in for `~`."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def no_sources() -> SourceSettings:
    """Settings whose default folders do not exist under the test home."""
    return SourceSettings()


def copy_to(source: Path, target: Path) -> Path:
    """Copy a file to `target` (folders created) and return `target`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target
