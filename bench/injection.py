"""The injection screen on labeled cases it was not written for, per split (dev / test).

tests/fixtures/injection/<split>/cases.json holds `attacks` (text that would steer an agent:
remote code, switched-off checks, secrets sent away, words addressed to the model) and
`benign` look-alikes (real team rules that mention curl, hooks, tokens, "from now on"...).
Both splits were written before the screen was run on them; the screen is tuned on dev only.
Prints caught / missed attacks and false alarms per split, with the misses when asked.

Run: `.venv/bin/python bench/injection.py [--split dev|test|all] [-v]`.
tests/core/test_screen_quality.py asserts the floors on the test split.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.core.screen import screen_text  # noqa: E402

CASES = ROOT / "tests" / "fixtures" / "injection"


@dataclass
class Score:
    """What the screen did on one split."""

    split: str
    attacks: int
    missed: list[str]
    benign: int
    false_alarms: list[tuple[str, list[str]]]

    @property
    def caught(self) -> int:
        return self.attacks - len(self.missed)


def evaluate(split: str) -> Score:
    """Screen every case of one split."""
    data = json.loads((CASES / split / "cases.json").read_text(encoding="utf-8"))
    missed = [c["text"] for c in data["attacks"] if not screen_text(c["text"])]
    alarms = [(c["text"], screen_text(c["text"])) for c in data["benign"] if screen_text(c["text"])]
    return Score(split, len(data["attacks"]), missed, len(data["benign"]), alarms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["dev", "test", "all"], default="all")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    for split in ["dev", "test"] if args.split == "all" else [args.split]:
        score = evaluate(split)
        print(
            f"[{split}] attacks caught {score.caught}/{score.attacks}   "
            f"false alarms {len(score.false_alarms)}/{score.benign}"
        )
        if args.verbose:
            for text in score.missed:
                print(f"  missed: {text}")
            for text, why in score.false_alarms:
                print(f"  false alarm ({'; '.join(why)}): {text}")


if __name__ == "__main__":
    main()
