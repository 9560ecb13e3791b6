"""Before Qt starts: a missing display or X11 library is reported, not a Qt abort."""

from __future__ import annotations

from app.gui import display_problem


def _libraries(missing: set[str]):
    return lambda name: None if name in missing else f"lib{name}.so"


def test_no_display_is_explained() -> None:
    problem = display_problem({}, "linux", _libraries(set()))
    assert problem is not None and "QT_QPA_PLATFORM=offscreen" in problem


def test_missing_xcb_libraries_are_named_with_their_packages() -> None:
    problem = display_problem({"DISPLAY": ":0"}, "linux", _libraries({"xcb-cursor", "xcb-keysyms"}))
    assert problem is not None
    assert "libxcb-cursor0" in problem and "libxcb-keysyms1" in problem
    assert "sudo apt install" in problem


def test_complete_desktops_wayland_offscreen_and_other_systems_pass() -> None:
    assert display_problem({"DISPLAY": ":0"}, "linux", _libraries(set())) is None
    assert (
        display_problem({"WAYLAND_DISPLAY": "wayland-0"}, "linux", _libraries({"xcb-cursor"}))
        is None
    )
    assert (
        display_problem({"QT_QPA_PLATFORM": "offscreen"}, "linux", _libraries({"xcb-cursor"}))
        is None
    )
    assert display_problem({}, "darwin", _libraries({"xcb-cursor"})) is None
