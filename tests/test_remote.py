"""The CLI's fast path: quick reads answered by the running app over its local socket."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app import remote
from app.service.naming import socket_path

REPO = Path(__file__).resolve().parents[1]
SEED = REPO / "tests" / "fixtures" / "format" / "seed_example.md"
pytestmark = pytest.mark.skipif(os.name != "posix", reason="Unix sockets")


def _seeded(home: Path) -> Path:
    (home / "branches").mkdir(parents=True, exist_ok=True)
    (home / "branches" / "feature-auth.md").write_bytes(SEED.read_bytes())
    # No start-up scan or maintenance: on a slow machine they could rewrite the seeded file
    # between the cold read and the app's answer, and the two would differ for that reason.
    (home / "config.json").write_text(
        json.dumps({"scan_on_start": False, "maintenance_on_start": False}), encoding="utf-8"
    )
    return home


def _cli(home: Path, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    return json.loads(proc.stdout)


def test_without_a_running_app_the_cli_answers_itself(home: Path) -> None:
    _seeded(home)
    assert remote.invoke(home, "memory:get-stats", {}) is None
    assert _cli(home, "stats")["totalItems"] == 6


def test_write_channels_are_never_sent_to_the_app(home: Path) -> None:
    assert remote.invoke(home, "memory:clear-branch-memory", {"branch": "x"}) is None


def test_a_garbage_answer_falls_back_to_the_cli(home: Path) -> None:
    _seeded(home)
    path = socket_path(home)
    assert path is not None
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"not json\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        assert remote.invoke(home, "memory:get-stats", {}) is None
        thread.join(5)
        assert _cli(home, "stats")["totalItems"] == 6
    finally:
        server.close()
        path.unlink(missing_ok=True)


def test_the_running_app_answers_the_same_as_a_cold_cli(home: Path) -> None:
    _seeded(home)
    cold = _cli(home, "branch", "show", "feature-auth")
    env = {**os.environ, "PYTHONPATH": str(REPO), "QT_QPA_PLATFORM": "offscreen"}
    app = subprocess.Popen(
        [sys.executable, "-m", "app", "--home", str(home)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        served = None
        while time.monotonic() < deadline and served is None:
            served = remote.invoke(home, "memory:get-branch-memory", {"branch": "feature-auth"})
            time.sleep(0.2)
        assert served is not None, "the app never answered on its socket"
        assert served == cold
        found = remote.invoke(home, "memory:retrieve", {"query": "async"})
        assert found is not None and found["memories"][0]["title"] == "Async pattern"
        missing = remote.invoke(home, "memory:get-branch-memory", {"branch": "nope"})
        assert missing is not None and missing["code"] == "NOT_FOUND"
    finally:
        app.send_signal(signal.SIGTERM)
        assert app.wait(timeout=10) == 0
