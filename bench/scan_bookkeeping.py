"""Scan costs: bookkeeping per thread, and reading real Claude Code transcripts.

1. Bookkeeping. After every thread a scan records the thread in the maintenance log and an
   event in the activity feed (app/core/writer.py). Both files hold history: the feed up
   to 200 events, the log a digest per consolidated branch. This bench fills a home with
   that history (`--branches` digests, a full feed) and times the bookkeeping of `--threads`
   threads, each of a different branch, as a scan of a 1 MB Puffin history with many
   threads does - beside the way it was done before (read, modify and rewrite both JSON
   files under their locks), run on a copy of the same home. Target: <= 2 ms per thread.
2. Reading. Real Claude Code transcripts (../shared/corpus/claude-code) replicated to
   `--mb` MB in a Claude projects folder are read by the scan's discovery (app.sources), and
   the same bytes by the floor: `json.loads` on every line. Target: >= 50 MB/s.

Run: `.venv/bin/python bench/scan_bookkeeping.py [--threads 161] [--branches 161] [--mb 20]`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.activity import MAX_EVENTS, ActivityLog  # noqa: E402
from app.core.atomic import read_json, write_json  # noqa: E402
from app.core.maintenance import MaintenanceLog  # noqa: E402
from app.core.models import utc_now  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus" / "claude-code"
MB = 1024 * 1024
TARGET_MS, TARGET_MBS = 2.0, 50.0


def fill_history(home: Path, branches: int) -> None:
    """A feed at its cap and a maintenance log with a digest per branch."""
    feed = ActivityLog(home / "activity.json")
    for n in range(MAX_EVENTS):
        feed.record(
            "memorize", f"Remembered 3 item(s) for project/topic-{n}", branch=f"project/topic-{n}"
        )
    log = MaintenanceLog(home / "maintenance-log.json")
    log.ran("full")
    log.consolidated({f"project/topic-{n}": uuid.uuid4().hex * 2 for n in range(branches)})


class OldBookkeeping:
    """The way before: the whole feed and the whole log rewritten for every thread."""

    def __init__(self, home: Path) -> None:
        self.feed = home / "activity-old.json"
        self.log = home / "maintenance-log.json"
        write_json(self.feed, ActivityLog(home / "activity.json").recent(MAX_EVENTS)[::-1])

    def thread(self, branch: str, message: str) -> None:
        from filelock import FileLock

        with FileLock(str(self.log) + ".lock", timeout=30):
            data: dict[str, Any] = read_json(self.log, default={})
            data["lastThreadProcessed"] = {"branchId": branch, "timestamp": "2026-01-01T00:00Z"}
            write_json(self.log, data, durable=False)
        with FileLock(str(self.feed) + ".lock", timeout=5):
            events: list[dict[str, Any]] = read_json(self.feed, default=[])
            events.append(
                {
                    "timestamp": utc_now().strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "kind": "memorize",
                    "message": message,
                    "branch": branch,
                }
            )
            write_json(self.feed, events[-MAX_EVENTS:], durable=False)


def bookkeeping(root: Path, threads: int, branches: int) -> None:
    home = root / "home"
    home.mkdir()
    fill_history(home, branches)
    old_home = root / "old-home"
    shutil.copytree(home, old_home)
    log_size = (home / "maintenance-log.json").stat().st_size
    print(
        f"history: feed of {MAX_EVENTS} events, maintenance log of {log_size / 1024:.1f} KB "
        f"({branches} branch digests); {threads} threads"
    )
    feed, log = ActivityLog(home / "activity.json"), MaintenanceLog(home / "maintenance-log.json")
    old = OldBookkeeping(old_home)
    new_ms, old_ms = [], []
    for n in range(threads):
        branch = f"project/thread-{n}"
        message = f"Remembered 2 item(s) for {branch}"
        start = time.perf_counter()
        log.thread_processed(branch)
        feed.record("memorize", message, branch=branch)
        new_ms.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        old.thread(branch, message)
        old_ms.append((time.perf_counter() - start) * 1000)
    events = feed.recent(MAX_EVENTS)
    assert events[0]["branch"] == f"project/thread-{threads - 1}"
    assert log.last_memorized() is not None
    new_p50, old_p50 = statistics.median(new_ms), statistics.median(old_ms)
    verdict = "met" if new_p50 <= TARGET_MS else "MISSED"
    print(
        f"bookkeeping per thread: p50 {new_p50:.3f} ms, max {max(new_ms):.2f} ms   "
        f"(rewriting both files, as before: p50 {old_p50:.3f} ms, max {max(old_ms):.2f} ms)"
        f"   target <= {TARGET_MS} ms: {verdict}"
    )
    print(
        f"  activity.json {(home / 'activity.json').stat().st_size / 1024:.1f} KB "
        f"(JSON lines; rewritten to the newest events past 192 KB), {len(events)} shown"
    )


def reading(root: Path, target_mb: float) -> None:
    from app.core.config import SourceSettings
    from app.sources.scan import discover

    sources = sorted(CORPUS.glob("*.jsonl"))
    if not sources:
        print(f"reading: {CORPUS} is absent; skipped")
        return
    projects = root / "claude" / "projects"
    total = 0
    copy = 0
    while total < target_mb * MB:
        for source in sources:
            folder = projects / f"-work-project-{copy % 7}"
            folder.mkdir(parents=True, exist_ok=True)
            data = source.read_bytes().replace(
                b'"sessionId":"', f'"sessionId":"copy{copy}-'.encode()
            )
            (folder / f"{uuid.uuid4()}.jsonl").write_bytes(data)
            total += len(data)
            copy += 1
    files = sorted(projects.rglob("*.jsonl"))
    floor_s = []
    for _ in range(3):
        start = time.perf_counter()
        for path in files:
            with open(path, "rb") as handle:
                for line in handle:
                    if line.strip():
                        json.loads(line)
        floor_s.append(time.perf_counter() - start)
    home = root / "scan-home"
    home.mkdir()
    settings = SourceSettings(claude_projects_dir=str(projects))
    scan_s = []
    found = None
    for _ in range(3):
        start = time.perf_counter()
        found = discover(settings, source="claude-code", home=home)
        scan_s.append(time.perf_counter() - start)
    assert found is not None
    mb = total / MB
    floor, scan = mb / min(floor_s), mb / min(scan_s)
    print(
        f"reading {mb:.1f} MB of real Claude Code transcripts ({len(files)} files, "
        f"{len(found.threads)} threads): discovery {scan:.0f} MB/s   floor (json.loads of "
        f"every line) {floor:.0f} MB/s   target >= {TARGET_MBS:.0f} MB/s: "
        f"{'met' if scan >= TARGET_MBS else 'MISSED'}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=161)
    parser.add_argument("--branches", type=int, default=161)
    parser.add_argument("--mb", type=float, default=20.0)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="puffin-scan-bookkeeping-"))
    try:
        bookkeeping(root, args.threads, args.branches)
        reading(root, args.mb)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
