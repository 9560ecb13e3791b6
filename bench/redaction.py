"""Redaction: what it catches on the labeled secret corpus, what it costs, and detect-secrets.

Prints per split (tests/fixtures/secrets/{dev,test}) the secrets found and missed and the
look-alikes altered, for three detectors side by side: our rules alone, our rules plus the
entropy layer (what `redact` runs), and detect-secrets 1.5's default plugins (each finding's
value replaced), when detect-secrets is installed. Then the throughput of `redact` on about
10 MB of conversation text next to the rules alone (the baseline).

Run: `.venv/bin/python bench/redaction.py`.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core import redact as layers  # noqa: E402

CASES = REPO / "tests" / "fixtures" / "secrets"
TEXT = REPO / "tests" / "fixtures" / "extraction"


def rules_only(text: str) -> str:
    return layers._rules_layer(text)[0]


def detect_secrets() -> Callable[[str], str] | None:
    if importlib.util.find_spec("detect_secrets") is None:
        return None
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    def run(text: str) -> str:
        out = text
        with default_settings():
            for line in text.splitlines():
                for found in scan_line(line):
                    value = found.secret_value
                    if value and len(value) >= 4:
                        out = out.replace(value, "[REDACTED:ds]")
        return out

    return run


def score(split: str, detector: Callable[[str], str]) -> tuple[int, int, int, int]:
    cases = json.loads((CASES / split / "cases.json").read_text(encoding="utf-8"))
    found = missed = altered = lookalikes = 0
    for case in cases:
        out = detector(case["text"])
        if case["secrets"]:
            if any(s in out for s in case["secrets"]):
                missed += 1
            else:
                found += 1
        else:
            lookalikes += 1
            altered += out != case["text"]
    return found, missed, altered, lookalikes


def throughput(detector: Callable[[str], str], text: str) -> float:
    start = time.perf_counter()
    detector(text)
    return len(text.encode()) / 1e6 / (time.perf_counter() - start)


def main() -> None:
    detectors: list[tuple[str, Callable[[str], str]]] = [
        ("rules only", rules_only),
        ("rules + entropy (redact)", layers.redact),
    ]
    ds = detect_secrets()
    if ds is not None:
        detectors.append(("detect-secrets defaults", ds))
    print(f"{'detector':28} {'split':5} {'found':>6} {'missed':>6} {'look-alikes altered':>20}")
    for name, detector in detectors:
        for split in ("dev", "test"):
            found, missed, altered, total = score(split, detector)
            print(f"{name:28} {split:5} {found:6d} {missed:6d} {altered:12d} of {total}")
    sample = "\n\n".join(p.read_text(encoding="utf-8") for p in sorted(TEXT.glob("*.txt")))
    text = (sample * (10_000_000 // len(sample) + 1))[:10_000_000]
    print(f"throughput on {len(text) / 1e6:.0f} MB of conversation text:")
    print(f"  rules only (baseline)      {throughput(rules_only, text):6.1f} MB/s")
    print(f"  redact (rules + entropy)   {throughput(layers.redact, text):6.1f} MB/s")


if __name__ == "__main__":
    main()
