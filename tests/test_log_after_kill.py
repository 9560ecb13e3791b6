"""A scan killed half-way leaves a log that says what it was doing (issue 16, point 5)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _project(folder: Path, threads: int) -> None:
    prompts = [
        {
            "id": f"r{k}",
            "parentId": None,
            "content": f"We decided to always run the tool{k} check before merging; it caught "
            f"the thing{k} bug twice. Keep it as a rule.",
            "timestamp": 1767261600000 + k * 1000,
            "children": [],
            "response": {"content": f"Noted, tool{k} before merging.", "timestamp": 1767261660000},
        }
        for k in range(threads)
    ]
    (folder / ".puffin").mkdir(parents=True)
    (folder / ".puffin" / "history.json").write_text(
        json.dumps({"branches": {"main": {"id": "main", "name": "Main", "prompts": prompts}}}),
        encoding="utf-8",
    )


def test_a_scan_killed_half_way_leaves_a_log_of_what_it_was_doing(
    home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "shop"
    _project(folder, 400)
    (home / "config.json").write_text(json.dumps({"idle_minutes": 0}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PUFFIN_MEMORY_HOME"}
    env["PYTHONPATH"] = str(REPO)
    scan = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "app",
            "--home",
            str(home),
            "--engine",
            "offline",
            "scan",
            "--path",
            str(folder),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    log = home / "logs"
    deadline = time.monotonic() + 60
    text = ""
    try:
        while time.monotonic() < deadline and scan.poll() is None:
            files = list(log.glob("*.log")) if log.is_dir() else []
            text = files[0].read_text(encoding="utf-8", errors="replace") if files else ""
            if text.count("op=memory:memorize") >= 3:
                break
            time.sleep(0.05)
        assert scan.poll() is None, "the scan ended before it could be killed"
        scan.send_signal(signal.SIGKILL)
    finally:
        scan.wait(10)
    text = next(log.glob("*.log")).read_text(encoding="utf-8", errors="replace")
    # The scan said it started, with its folder; each thread's memorize says where it was.
    assert "op=memory:scan" in text and "started" in text and "shop" in text
    assert "op=memory:memorize" in text and "branchId='shop/main'" in text
    scan_lines = [line for line in text.splitlines() if "op=memory:scan" in line]
    assert not any("outcome=" in line for line in scan_lines)  # it never finished
