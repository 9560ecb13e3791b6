"""Long fuzz run of every transcript reader: the shapes of `tests/sources/test_fuzz_readers.py`.

Runs each reader (unguarded: the scan's per-file net is not used) and the ledger on many more
hypothesis examples than `make test` can afford - random JSON shapes keyed like the real
formats, invalid UTF-8, truncated files, deep nesting - then on a 20 MB line, a FIFO, a
folder and a vanished file in place of each reader's file. Prints, per reader, the examples
tried and the failures (an exception that escaped, or a read that blocked), with the first
few failing inputs. Exits 1 when anything failed.

Run: `.venv/bin/python bench/fuzz_readers.py [--examples 2000] [--seed N]`.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from app.sources.models import ReadStats  # noqa: E402
from tests.sources.fuzzing import (  # noqa: E402
    READERS,
    exercise,
    exercise_ledger,
    json_documents,
    jsonl_files,
    place,
)

_BLOCK_S = 10.0


class Tally:
    """Examples tried and failures seen for one target."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.tried = 0
        self.failures: list[str] = []

    def record(self, work: Callable[[], object], shown: bytes | str) -> None:
        self.tried += 1
        try:
            work()
        except Exception:
            self.failures.append(f"{traceback.format_exc(limit=3)}input: {shown!r:.300}")


def _fuzz(
    tally: Tally,
    strategy: st.SearchStrategy[object],
    run: Callable[[object], object],
    examples: int,
    rng_seed: int,
) -> None:
    @seed(rng_seed)
    @settings(
        max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(value=strategy)
    def check(value: object) -> None:
        shown = value if isinstance(value, bytes | str) else repr(value)
        tally.record(lambda: run(value), shown)

    check()


def _bounded(work: Callable[[], object]) -> None:
    """Run `work`; raise when it blocks longer than `_BLOCK_S` (a FIFO opened for reading)."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            work()
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(_BLOCK_S)
    if thread.is_alive():
        raise TimeoutError(f"blocked for more than {_BLOCK_S} s")
    if errors:
        raise errors[0]


def _odd_files(tally: Tally, name: str) -> None:
    """A 20 MB line, a FIFO, a folder and a vanished file in place of the reader's file."""
    reader = READERS[name][1]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        huge = b'{"type":"user","message":{"content":"' + b"x" * (20 * 1024 * 1024) + b'"}}\n'
        tally.record(lambda: _bounded(lambda: exercise(root / "huge", name, huge)), "20 MB line")
        path = place(root / "odd", name, b"")
        path.unlink()
        tally.record(lambda: _bounded(lambda: reader((path,), ReadStats())), "vanished file")
        path.mkdir()
        tally.record(lambda: _bounded(lambda: reader((path,), ReadStats())), "folder")
        path.rmdir()
        if hasattr(os, "mkfifo"):
            os.mkfifo(path)
            tally.record(lambda: _bounded(lambda: reader((path,), ReadStats())), "FIFO")


def main() -> int:
    """Fuzz every reader and the ledger; print examples tried and failures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=2000, help="examples per target")
    parser.add_argument("--seed", type=int, default=random.randrange(2**32))
    args = parser.parse_args()
    print(f"seed {args.seed}, {args.examples} examples per target")
    tallies: list[Tally] = []
    started = time.perf_counter()
    for name in sorted(READERS):
        tally = Tally(name)
        tallies.append(tally)
        pair = st.tuples(READERS[name][2], st.none() | jsonl_files())

        def run(value: object, name: str = name) -> None:
            data, extra = value  # type: ignore[misc]
            with tempfile.TemporaryDirectory() as folder:
                exercise(Path(folder), name, data, extra)

        _fuzz(tally, pair, run, args.examples, args.seed)
        _odd_files(tally, name)
    ledger = Tally("ledger")
    tallies.append(ledger)

    def run_ledger(value: object) -> None:
        with tempfile.TemporaryDirectory() as folder:
            exercise_ledger(Path(folder), value)  # type: ignore[arg-type]

    _fuzz(ledger, json_documents(), run_ledger, args.examples, args.seed)
    elapsed = time.perf_counter() - started
    failed = 0
    for tally in tallies:
        print(f"{tally.name:12} examples tried {tally.tried:6}  failures {len(tally.failures)}")
        failed += len(tally.failures)
        for failure in tally.failures[:3]:
            print("  " + failure.replace("\n", "\n  "))
    total = sum(t.tried for t in tallies)
    print(f"total: {total} examples in {elapsed:.1f} s, {failed} failures (target: 0)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
