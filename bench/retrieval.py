"""Retrieval speed: p50/p95 of fast `retrieve` in process and of the CLI end to end.

Builds a temporary memory home of 200 branches x 50 items (real Markdown files written
through `MemoryStore.write_text` + `format.render`), syncs the index once (timed: the first
build), then times the no-change sync, in-process fast retrieves and, when `app/cli.py`
exists, `python -m app --home H retrieve "..."` as a subprocess.
Targets: p95 <= 10 ms in process, <= 150 ms CLI; no-change sync well under 1 ms. The CLI is
measured cold (a fresh Python that imports the core) and served by the running app (the
normal case for a tray app: `app/remote.py` forwards quick reads over its local socket).

    .venv/bin/python bench/retrieval.py [--branches 200] [--items 50] [--runs 300] [--keep]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.config import Config  # noqa: E402
from app.core.engine import Candidate, DeepAnswer  # noqa: E402
from app.core.format import render  # noqa: E402
from app.core.index import MemoryIndex  # noqa: E402
from app.core.models import (  # noqa: E402
    BranchMemory,
    Category,
    EvolutionResult,
    ExtractionResult,
    MemoryItem,
)
from app.core.reader import MemoryReader  # noqa: E402
from app.core.store import MemoryStore  # noqa: E402

TOPICS = [
    "async/await",
    "logging",
    "retries",
    "database migrations",
    "feature flags",
    "caching",
    "authentication",
    "rate limiting",
    "websocket reconnect",
    "error handling",
    "pagination",
    "file uploads",
    "background jobs",
    "i18n",
    "dependency injection",
    "config loading",
    "unit tests",
    "integration tests",
    "CI pipeline",
    "docker images",
    "API versioning",
    "GraphQL schema",
    "REST endpoints",
    "state management",
    "CSS modules",
    "bundle size",
    "TypeScript strict mode",
    "lint rules",
    "code review",
    "release process",
    "monorepo",
    "SQL indexes",
    "connection pooling",
    "timeouts",
    "telemetry",
    "secrets handling",
    "C++ bindings",
    "foo-bar service",
    "search ranking",
    "email delivery",
]
TOOLS = [
    "pnpm",
    "ruff",
    "pytest",
    "structlog",
    "Postgres",
    "Redis",
    "SQLite",
    "Celery",
    "Vite",
    "React Query",
    "Zod",
    "pydantic",
    "httpx",
    "tenacity",
    "OpenTelemetry",
    "Sentry",
    "GitHub Actions",
    "Terraform",
    "Kubernetes",
    "nginx",
    "Alembic",
    "Prisma",
    "Jest",
]
VERBS = ["Use", "Prefer", "Always use", "Avoid", "Never use", "Keep", "Wrap", "Document"]
PLACES = [
    "in the API layer",
    "for every service",
    "in tests",
    "in the worker",
    "on the client",
    "across the monorepo",
    "in migrations",
    "behind a feature flag",
]
QUERIES = [
    "async pattern",
    "how do we handle retries",
    "logging format",
    "database migrations",
    "feature flags default",
    "rate limiting strategy",
    "websocket reconnect backoff",
    "c++ bindings",
    "foo-bar service timeouts",
    "what do we use for caching",
    "pnpm",
    "error handling in the worker",
    "TypeScript strict",
    "release process",
    "connection pooling Postgres",
    "secrets",
    "pagination cursor",
    "docker images size",
    "GraphQL schema versioning",
    "search ranking",
]


def make_item(rng: random.Random, category: Category, n: int) -> MemoryItem:
    topic, tool = rng.choice(TOPICS), rng.choice(TOOLS)
    content = (
        f"{rng.choice(VERBS)} {tool} for {topic} {rng.choice(PLACES)}; "
        f"decided after incident {rng.randint(100, 999)} ({n})."
    )
    extra: dict[str, Any] = {}
    if category is Category.ARCHITECTURAL_DECISIONS:
        extra = {"rationale": f"keeps {topic} predictable", "trade_offs": f"more {tool} setup"}
    elif category is Category.BUG_PATTERNS:
        extra = {"root_cause": f"{topic} race in {tool}", "fix": f"serialise {topic} calls"}
    return MemoryItem(
        category=category,
        title="",
        content=content,
        confidence=round(rng.uniform(0.75, 1.0), 2),
        sources=[f"thread-{rng.randint(1, 10_000)}"],
        extracted=date(2024, 1, 1) + timedelta(days=rng.randint(0, 600)),
        tags=[f"topic:{topic.split()[0].lower()}"],
        **extra,
    )


def build_home(home: Path, branches: int, items: int) -> MemoryStore:
    rng = random.Random(7)
    store = MemoryStore(home)
    store.ensure()
    categories = list(Category)
    for b in range(branches):
        branch = f"project{b % 20}/feature/branch-{b}"
        by_cat: dict[Category, list[MemoryItem]] = {c: [] for c in Category}
        for n in range(items):
            category = categories[n % len(categories)]
            by_cat[category].append(make_item(rng, category, b * items + n))
        memory = BranchMemory(branch_id=branch, items=by_cat, summary=f"Branch {b}.")
        store.write_text(branch, render(memory))
    return store


class FrozenSignatures:
    """The store with its signatures taken once: isolates the index's share of a sync."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._signatures = store.signatures()

    def read(self, branch: str) -> BranchMemory | None:
        return self._store.read(branch)

    def signatures(self) -> dict[str, tuple[int, int]]:
        return self._signatures


class NoEngine:
    """Fast mode never thinks; this only satisfies the constructor."""

    name = "none"

    def extract(self, conversation: str, *, source: str) -> ExtractionResult:
        raise NotImplementedError

    def evolve(
        self, current: BranchMemory | None, items: list[MemoryItem], *, branch_id: str
    ) -> EvolutionResult:
        raise NotImplementedError

    def consolidate(self, memory: BranchMemory) -> EvolutionResult:
        raise NotImplementedError

    def deep_retrieve(self, query: str, candidates: list[Candidate]) -> DeepAnswer:
        raise NotImplementedError


def percentiles(samples_ms: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples_ms)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95, ordered[-1]


def show(label: str, samples_ms: list[float], target: float | None = None) -> None:
    p50, p95, worst = percentiles(samples_ms)
    verdict = "" if target is None else ("  OK" if p95 <= target else f"  OVER {target:g} ms")
    print(
        f"{label:<34} n={len(samples_ms):<4} p50={p50:8.3f} ms  p95={p95:8.3f} ms  "
        f"max={worst:8.3f} ms{verdict}"
    )


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def in_process(reader: MemoryReader, runs: int) -> tuple[list[float], dict[str, Any]]:
    samples: list[float] = []
    reply: dict[str, Any] = {}
    for n in range(runs):
        query = QUERIES[n % len(QUERIES)]
        start = time.perf_counter()
        reply = reader.retrieve(query, 5)
        samples.append((time.perf_counter() - start) * 1000)
    return samples, reply


def _bytecode_env(home: Path) -> dict[str, str]:
    """The environment with a bytecode cache, as an installed app runs (a machine setting
    PYTHONDONTWRITEBYTECODE would otherwise recompile the app on every start)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(home.parent / "pycache")
    return env


def cli_samples(python: Path, home: Path, runs: int) -> list[float] | None:
    """Wall time of `puffin-memory retrieve` as a subprocess (first run discarded)."""
    samples: list[float] = []
    for n in range(runs + 1):
        query = QUERIES[n % len(QUERIES)]
        start = time.perf_counter()
        done = subprocess.run(
            [str(python), "-m", "app", "--home", str(home), "retrieve", query],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
            env=_bytecode_env(home),
        )
        elapsed = (time.perf_counter() - start) * 1000
        if done.returncode != 0:
            print(f"CLI failed ({done.returncode}): {done.stderr.strip()[:500]}")
            return None
        if n:  # the first run warms the OS file cache and .pyc files
            samples.append(elapsed)
    return samples


def with_app_running(python: Path, home: Path, runs: int) -> list[float] | None:
    """The same CLI while the desktop app (offscreen) serves this home."""
    from app.remote import invoke

    # Steady state: the app has done its start-up work (due maintenance, a source scan)
    # long ago; measuring during that work would time its first consolidation, not reads.
    (home / "config.json").write_text(
        '{"maintenance_on_start": false, "scan_on_start": false, "auto_memorize": false}\n',
        encoding="utf-8",
    )
    env = {**_bytecode_env(home), "QT_QPA_PLATFORM": "offscreen"}
    app = subprocess.Popen(
        [str(python), "-m", "app", "--home", str(home)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Steady state: wait until the app has finished its start-up work (maintenance that
        # is due, a scan) and is idle, as it is most of a working day.
        deadline = time.monotonic() + 300
        while True:
            # A fast retrieve that comes back in time means the core is idle and warm.
            if invoke(home, "memory:retrieve", {"query": QUERIES[0]}) is not None:
                break
            if time.monotonic() > deadline or app.poll() is not None:
                print("app did not become ready; skipped the app-served measure")
                return None
            time.sleep(0.5)
        return cli_samples(python, home, runs)
    finally:
        app.send_signal(signal.SIGTERM)
        app.wait(timeout=15)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--branches", type=int, default=200)
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--cli-runs", type=int, default=20)
    parser.add_argument("--keep", action="store_true", help="keep the temporary home")
    parser.add_argument(
        "--no-semantic",
        action="store_true",
        help="skip the semantic measurement (10,000 vectors take minutes)",
    )
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="puffin-bench-"))
    home = tmp / "home"
    try:
        start = time.perf_counter()
        store = build_home(home, args.branches, args.items)
        print(
            f"home: {home}  ({args.branches} branches x {args.items} items, written in "
            f"{time.perf_counter() - start:.1f} s)"
        )

        index = MemoryIndex(store.index_path)
        start = time.perf_counter()
        report = index.sync(store)
        print(
            f"first sync (full build): {(time.perf_counter() - start) * 1000:.0f} ms, "
            f"reason={report['reason']}, items={index.health()['items']}"
        )

        show("sync, nothing changed", timed(lambda: index.sync(store), 200))
        show("  store.signatures() (200 stats)", timed(store.signatures, 200))
        frozen = FrozenSignatures(store)
        show("  index part (compare signatures)", timed(lambda: index.sync(frozen), 200), 1.0)
        one_file = store.branch_file(store.list_branches()[0])
        one_file.write_text(one_file.read_text(encoding="utf-8") + "\n", encoding="utf-8")
        show("sync after one hand edit", timed(lambda: index.sync(store), 1))

        reader = MemoryReader(store, index, NoEngine(), Config())
        in_process(reader, 20)  # warm-up: caches, first compiles
        samples, reply = in_process(reader, args.runs)
        show("retrieve fast, in process", samples, 10.0)
        print(
            f"  last reply: {len(reply['memories'])} memories, {len(reply['conflicts'])} "
            f"conflicts, {reply['totalTokens']} tokens"
        )

        from app.core import embeddings

        if embeddings.available() and not args.no_semantic:
            reader = MemoryReader(store, index, NoEngine(), Config(), semantic=True)
            started = time.perf_counter()
            vectors = reader.backfill_vectors()
            print(
                f"semantic: vectors for {vectors} items in "
                f"{time.perf_counter() - started:.0f} s (a scan does this once)"
            )
            in_process(reader, 20)
            semantic, _ = in_process(reader, args.runs)
            show("retrieve fast + semantic, in process", semantic, 20.0)
            size = (home / "vectors.sqlite").stat().st_size
            print(
                f"  vectors.sqlite: {size / 1e6:.1f} MB for {vectors} items "
                f"({size / max(1, vectors):.0f} bytes an item)"
            )

        scan = MemoryIndex(tmp / "scan.sqlite", use_fts5=False)
        scan.sync(store)
        scan_reader = MemoryReader(store, scan, NoEngine(), Config())
        scan_samples, _ = in_process(scan_reader, max(20, args.runs // 10))
        show("retrieve fast, no-FTS5 fallback", scan_samples)
        scan.close()
        index.close()

        if not (REPO / "app" / "cli.py").exists():
            print("CLI: app/cli.py is missing; skipped")
            return 0
        python = REPO / ".venv" / "bin" / "python"
        if not python.exists():
            python = Path(sys.executable)
        cli = cli_samples(python, home, args.cli_runs)
        if cli is None:
            return 1
        show("CLI retrieve, cold (no app running)", cli)
        startup = timed(lambda: subprocess.run([str(python), "-c", "pass"], check=True), 5)
        show("  bare python start, for scale", startup)
        served = with_app_running(python, home, args.cli_runs)
        if served is not None:
            show("CLI retrieve, answered by the running app", served, 150.0)
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
