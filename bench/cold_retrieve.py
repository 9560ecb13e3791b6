"""Cold `puffin-memory retrieve`: CPU of a fresh process beside the floor of Python itself.

Builds the memory home of bench/hook_latency.py (40 + 10 branches x 25 items, indexed), then
starts each command `--runs` times as a new process and takes the CPU time (user + system)
the child used, from `os.wait4`. Wall time is printed too, but CPU is the figure: this
machine is shared, and wall time counts the waits for it. Commands:

- floor: `python -c "import sqlite3, json"` (Python, its site packages, what a read needs);
- `retrieve` through `python -m app` (the lean read path, app/readpath.py, when it answers);
- the same `retrieve` through the full command line (`app.cli.main`: argparse, build_api),
  for comparison: what every retrieve cost before the lean path;
- a query whose best candidates are in one branch only (no conflict check) and one whose
  candidates span branches and disagree (the conflict check runs, on plain rows: no models).

Target (issue 16, point 7): cold `retrieve` <= 2.5x the floor's CPU (p50).

Run: `.venv/bin/python bench/cold_retrieve.py [--runs 20]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from hook_latency import build_home  # noqa: E402

TARGET = 2.5
FULL = "import sys; from app.cli import main; sys.exit(main(sys.argv[1:]))"


def add_solo_branch(home: Path) -> None:
    """A branch whose words no other branch uses: a query about it stays in one branch."""
    from datetime import date

    from app.core.format import render
    from app.core.index import MemoryIndex
    from app.core.models import BranchMemory, Category, MemoryItem
    from app.core.store import MemoryStore

    store = MemoryStore(home)
    memory = BranchMemory(branch_id="solo/main", summary="Kerberos work.")
    for k in range(10):
        memory.items[Category.IMPLEMENTATION_NOTES].append(
            MemoryItem(
                category=Category.IMPLEMENTATION_NOTES,
                title=f"Kerberos ticket renewal {k}",
                content=f"Renew the kerberos ticket {k} minutes before expiry with kinit -R.",
                confidence=0.8,
                extracted=date(2026, 3, 1 + k),
                sources=["bench"],
            )
        )
    store.write_text("solo/main", render(memory))
    with MemoryIndex(store.index_path) as index:
        index.sync(store)


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float, bytes]:
    """(CPU ms of the child, wall ms, stdout) of one fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=tempfile.gettempdir()
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _pid, _status, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped here; keep Popen from waiting again
    wall = (time.perf_counter() - start) * 1000
    return (usage.ru_utime + usage.ru_stime) * 1000, wall, out


def measure(argv: list[str], env: dict[str, str], runs: int) -> tuple[float, float, bytes]:
    """p50 CPU ms, p50 wall ms and the last stdout over `runs` runs (one warm-up first)."""
    run_once(argv, env)
    cpu, wall = [], []
    out = b""
    for _ in range(runs):
        c, w, out = run_once(argv, env)
        cpu.append(c)
        wall.append(w)
    return statistics.median(cpu), statistics.median(wall), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--branches", type=int, default=40)
    parser.add_argument("--items", type=int, default=25)
    args = parser.parse_args()

    python = sys.executable
    env = {k: v for k, v in os.environ.items() if k != "PUFFIN_MEMORY_HOME"}
    env["PYTHONPATH"] = str(REPO)
    tmp = Path(tempfile.mkdtemp(prefix="puffin-cold-retrieve-"))
    # Installed apps run from compiled bytecode; this machine sets PYTHONDONTWRITEBYTECODE,
    # which would make every run compile the sources again (see bench/hook_latency.py).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    try:
        home = tmp / "home"
        build_home(home, args.branches, args.items)
        add_solo_branch(home)
        print(
            f"memory home: {args.branches} + {max(1, args.branches // 4)} branches x "
            f"{args.items} items; {args.runs} runs each, CPU = user + system of the child"
        )
        floor, floor_wall, _ = measure([python, "-c", "import sqlite3, json"], env, args.runs)
        print(
            f"floor  python -c 'import sqlite3, json'   CPU p50 {floor:6.1f} ms   "
            f"wall p50 {floor_wall:6.1f} ms"
        )
        queries = [
            ("one branch", ["--branch", "solo/main", "kerberos ticket renewal"]),
            ("across branches", ["why does the watcher lose events after a rename"]),
        ]
        for label, words in queries:
            query = [w for w in words if not w.startswith("--") and "/" not in w][-1]
            rest = [w for w in words if w != query]
            cli = ["--home", str(home), "retrieve", query, *rest]
            for how, argv in (
                ("lean", [python, "-m", "app", *cli]),
                ("full", [python, "-c", FULL, *cli]),
            ):
                cpu, wall, out = measure(argv, env, args.runs)
                reply = json.loads(out)
                found = len(reply.get("memories", []))
                conflicts = len(reply.get("conflicts", []))
                ratio = cpu / floor
                verdict = ("meets" if ratio <= TARGET else "MISSES") if how == "lean" else ""
                print(
                    f"{how:<5} retrieve, {label:<16} CPU p50 {cpu:6.1f} ms   wall p50 "
                    f"{wall:6.1f} ms   {ratio:4.2f}x the floor (target {TARGET}x) {verdict}"
                    f"   [{found} memories, {conflicts} conflicts]"
                )
        writes = sorted(p.name for p in home.iterdir() if p.name.startswith("access.log"))
        print(f"files written by the reads: {writes or 'none'} (the side log of access counts)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
