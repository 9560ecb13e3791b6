"""SingleInstance: one app per memory home; a later launch finds it and asks for the window."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from app.service.instance import SingleInstance, server_name


def test_second_launch_reaches_the_first(qtbot: QtBot, tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = SingleInstance(home)
    assert not first.notify_running(timeout_ms=200), "nobody is running yet"
    assert first.listen()
    second = SingleInstance(home)
    with qtbot.waitSignal(first.activated, timeout=3000):
        assert second.notify_running()
    first.close()
    assert not SingleInstance(home).notify_running(timeout_ms=200)


def test_each_home_has_its_own_name(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert server_name(a) != server_name(b)
    assert server_name(a) == server_name(tmp_path / "x" / ".." / "a")
    assert len(server_name(a)) < 60  # Unix socket paths are short
