"""UI test fixtures: the service fixtures of `tests/service/support.py`, plus one filtered
Qt warning."""

from __future__ import annotations

import pytest

from tests.service.support import channels, qloop, quiet_home, seeded_channels, seeded_home

__all__ = ["channels", "qloop", "quiet_home", "seeded_channels", "seeded_home"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Ignore the offscreen platform's notes about window management.

    On QT_QPA_PLATFORM=offscreen, showing a top-level widget logs "This plugin does not
    support propagateSizeHints()" and raising one "This plugin does not support raise()":
    the platform has no window manager. They say nothing about the app, and every other Qt
    warning still fails the test.
    """
    for item in items:
        if "tests/ui/" in item.nodeid.replace("\\", "/"):
            item.add_marker(
                pytest.mark.qt_log_ignore(
                    r"This plugin does not support (propagateSizeHints|raise)\(\)"
                )
            )
