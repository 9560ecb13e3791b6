"""The app as a process (`python -m app`, offscreen): it starts without a traceback, a
second launch for the same home exits at once and leaves the first running, and SIGTERM or
SIGINT ends it cleanly within 5 seconds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STARTED = "Puffin Memory is running for"


class App:
    """A running app process whose stderr is collected on a thread."""

    def __init__(self, home: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "--home", str(home), "--engine", "offline"],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    def wait_started(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if STARTED in self.stderr:
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        pytest.fail(f"the app did not start:\n{self.stderr}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        self._reader.join(2)


@pytest.fixture
def app_env(tmp_path: Path, home: Path) -> dict[str, str]:
    (home / "config.json").write_text(
        json.dumps({"scan_on_start": False, "maintenance_on_start": True, "auto_memorize": False})
    )
    env = dict(os.environ)
    env.update(
        {
            "QT_QPA_PLATFORM": "offscreen",
            "HOME": str(tmp_path),
            "XDG_RUNTIME_DIR": str(tmp_path),
            "PYTHONPATH": str(REPO),
        }
    )
    env.pop("PUFFIN_MEMORY_HOME", None)
    return env


@pytest.fixture
def running(home: Path, app_env: dict[str, str]) -> Iterator[App]:
    app = App(home, app_env)
    app.wait_started()
    yield app
    app.stop()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_quits_cleanly_within_five_seconds(running: App, signum: int) -> None:
    time.sleep(0.5)  # let the core start and the start-up maintenance run
    started = time.monotonic()
    running.proc.send_signal(signum)
    code = running.proc.wait(timeout=5)
    assert time.monotonic() - started < 5
    running.stop()
    assert code == 0, running.stderr
    assert "Traceback" not in running.stderr
    assert "Puffin Memory is quitting" in running.stderr


def test_second_launch_brings_the_first_forward_and_exits(
    running: App, home: Path, app_env: dict[str, str]
) -> None:
    second = subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home)],
        cwd=REPO,
        env=app_env,
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert second.returncode == 0
    assert "already running" in second.stderr
    assert STARTED not in second.stderr
    deadline = time.monotonic() + 5
    while "another launch asked for the window" not in running.stderr:
        assert time.monotonic() < deadline, running.stderr
        time.sleep(0.05)
    assert running.proc.poll() is None, "the first instance keeps running"
    assert "Traceback" not in running.stderr


def test_another_home_gets_its_own_instance(
    running: App, tmp_path: Path, app_env: dict[str, str]
) -> None:
    other = tmp_path / "other-home"
    other.mkdir()
    (other / "config.json").write_text(
        json.dumps({"scan_on_start": False, "maintenance_on_start": False})
    )
    second = App(other, app_env)
    try:
        second.wait_started()
        assert running.proc.poll() is None
    finally:
        second.proc.send_signal(signal.SIGTERM)
        second.proc.wait(5)
        second.stop()
