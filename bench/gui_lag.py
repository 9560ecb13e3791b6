"""GUI responsiveness: the longest event-loop stall while the app memorizes the corpus.

Opens the real main window (offscreen unless QT_QPA_PLATFORM says otherwise) over a fresh
temporary home, then runs `memory:scan` over ../shared/corpus (or --corpus), then over the
same transcripts laid out the way each agent writes them (`<project>/.aider.chat.history.md`,
`<project>/.puffin/history.json`, session folders), so that every reader runs, then a full
maintenance, all through MemoryChannels exactly as the Scan and Run maintenance buttons do.
A QTimer probe fires every 5 ms on the GUI thread; any gap beyond that is time the GUI could
not react. Prints the longest stall (target: no stall over 50 ms) and a few percentiles.

    .venv/bin/python bench/gui_lag.py [--corpus DIR] [--engine offline] [--copies N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import qasync  # noqa: E402
from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

PROBE_MS = 5
TARGET_MS = 50.0


class StallProbe:
    """Measures how late a 5 ms timer fires on the GUI thread."""

    def __init__(self) -> None:
        self.gaps: list[float] = []
        self._last = 0.0
        self._timer = QTimer()
        self._timer.setInterval(PROBE_MS)
        self._timer.timeout.connect(self._on_timer_timeout)

    def start(self) -> None:
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def _on_timer_timeout(self) -> None:
        now = time.perf_counter()
        self.gaps.append((now - self._last) * 1000.0 - PROBE_MS)
        self._last = now

    def figures(self) -> dict[str, float]:
        gaps = sorted(self.gaps) or [0.0]
        return {
            "samples": len(gaps),
            "max_stall_ms": round(gaps[-1], 1),
            "p99_stall_ms": round(gaps[int(len(gaps) * 0.99) - 1 if len(gaps) > 1 else 0], 1),
            "median_stall_ms": round(statistics.median(gaps), 2),
            "stalls_over_50ms": sum(1 for g in gaps if g > TARGET_MS),
        }


def lay_out(corpus: Path, target: Path, copy: int = 0) -> list[Path]:
    """Copy the corpus into the file names each agent uses; return the folders to scan.

    Copy `n` > 0 puts the projects under other names, so that their threads are new work
    (a heavier load); Claude Code and Codex sessions keep their ids and are only laid out once.
    """
    folders: list[Path] = []
    suffix = f"-copy{copy}" if copy else ""
    if copy:
        target = target / f"copy{copy}"
    sessions = target / "claude-projects"
    for path in sorted((corpus / "claude-code").glob("*.jsonl")) if not copy else []:
        sessions.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, sessions / path.name.split("__", 1)[-1])
    for path in sorted((corpus / "aider").glob("*.aider.chat.history.md")):
        project = target / (path.name.split("__", 1)[0] + suffix)
        project.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, project / ".aider.chat.history.md")
        folders.append(project)
    for path in sorted((corpus / "puffin").glob("*__.puffin__history.json")):
        project = target / (path.name.split("__", 1)[0] + suffix)
        (project / ".puffin").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, project / ".puffin" / "history.json")
        folders.append(project)
    codex = target / "codex-sessions"
    for path in sorted((corpus / "codex").glob("*.jsonl")) if not copy else []:
        codex.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, codex / path.name.split("__")[-1])
    return [p for p in (sessions, codex) if p.is_dir()] + folders


def corpus_texts(corpus: Path) -> list[str]:
    """Every transcript of the corpus as text."""
    paths = sorted(
        p
        for p in corpus.rglob("*")
        if p.suffix in (".md", ".jsonl", ".json") and p.name != "README.md"
    )
    return [p.read_text(encoding="utf-8", errors="replace") for p in paths]


async def measure(
    corpus: Path, engine: str, panel: str, copies: int, extra: int
) -> dict[str, object]:
    from app.service.channels import MemoryChannels
    from app.service.host import MemoryHost
    from app.ui.main_window import MainWindow
    from app.ui.tray import StatusIndicator

    with tempfile.TemporaryDirectory(prefix="puffin-gui-lag-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        (home / "config.json").write_text(
            json.dumps(
                {
                    "scan_on_start": False,
                    "maintenance_on_start": False,
                    "auto_memorize": False,
                    "idle_minutes": 0,
                }
            ),
            encoding="utf-8",
        )
        channels = MemoryChannels(MemoryHost(home, engine_override=engine))
        indicator = StatusIndicator(channels, use_tray=False)
        window = MainWindow(channels, indicator)
        window.resize(1180, 760)
        window.show()
        window.show_panel({"dashboard": 0, "branches": 1}.get(panel, 0))
        started = time.perf_counter()
        ready = asyncio.Event()
        channels.stats_changed.connect(lambda _stats: ready.set())
        channels.start_service()
        await ready.wait()
        ready_s = time.perf_counter() - started

        folders = [f for n in range(copies) for f in lay_out(corpus, Path(tmp) / "projects", n)]
        probe = StallProbe()
        probe.start()
        t0 = time.perf_counter()
        scans = [await channels.scan(path=str(corpus))]
        for folder in folders:
            scans.append(await channels.scan(path=str(folder)))
        scan_s = time.perf_counter() - t0
        t2 = time.perf_counter()
        texts = await asyncio.to_thread(corpus_texts, corpus)
        memorized = 0
        for n in range(extra):
            text = texts[n % len(texts)]
            reply = await channels.memorize(text, f"bench/extra-{n}")
            memorized += not reply.get("error")
        extra_s = time.perf_counter() - t2
        if panel == "branches" and window.browser.tree.topLevelItemCount():
            group = window.browser.tree.topLevelItem(0)
            if group.childCount():
                window.browser.tree.setCurrentItem(group.child(0))
        t1 = time.perf_counter()
        maintenance = await channels.run_maintenance("full")
        maintenance_s = time.perf_counter() - t1
        await asyncio.sleep(0.5)  # let the window take in the last changes
        probe.stop()

        stats = channels.stats or {}
        await channels.shutdown()
        indicator.close()
        window.deleteLater()
    return {
        "corpus": str(corpus),
        "copies": copies,
        "engine": engine,
        "core_ready_s": round(ready_s, 2),
        "scan_s": round(scan_s, 2),
        "scanned_paths": 1 + len(folders),
        "threads_memorized": sum(int(r.get("memorized", 0) or 0) for r in scans),
        "scan_errors": [r.get("message") for r in scans if r.get("error")],
        "extra_memorize": f"{memorized}/{extra} whole corpus files in {extra_s:.2f} s",
        "maintenance_s": round(maintenance_s, 2),
        "maintenance_ok": bool(maintenance.get("success")),
        "branches": stats.get("totalBranches"),
        "items": stats.get("totalItems"),
        "review_queue": stats.get("reviewQueue"),
        **probe.figures(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--engine", default="offline")
    parser.add_argument("--panel", choices=["dashboard", "branches"], default="branches")
    parser.add_argument(
        "--copies",
        type=int,
        default=1,
        help="lay the projects out this many times (more work, same content)",
    )
    parser.add_argument(
        "--memorize",
        type=int,
        default=0,
        metavar="N",
        help="also memorize whole corpus files into N branches (heavier)",
    )
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    app = QApplication(sys.argv[:1])
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        result = runner.run(
            measure(
                args.corpus, args.engine, args.panel, max(args.copies, 1), max(args.memorize, 0)
            )
        )
    print(json.dumps(result, indent=2))
    verdict = "OK" if result["max_stall_ms"] <= TARGET_MS else "OVER TARGET"
    print(
        f"longest GUI stall: {result['max_stall_ms']} ms (target <= {TARGET_MS:.0f} ms): {verdict}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
