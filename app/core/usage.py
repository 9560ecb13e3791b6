"""The LLM usage ledger (`usage.json`): tokens and estimated cost per model and per phase
(extraction, evolution, consolidation, retrieval) per day.

Every Claude reply's token counts (input, output, cache read, cache write) are added here, so
the app can show what memory costs and stop calling the API once the daily token budget is
used. The CLI and the desktop app may both record at the same time, so each update reads,
changes and atomically rewrites the file under a `filelock` on `usage.json.lock`. Costs are
*estimates* from a price table per model id (list prices in USD per million tokens, each row
with its source and the date it was checked; ids not in it are priced by family); the
Anthropic console remains the authority on what was billed.
"""

from __future__ import annotations

import contextlib
import logging
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from app.core.atomic import move_aside, read_json, write_json
from app.core.errors import StorageError

log = logging.getLogger(__name__)

TOKEN_FIELDS: tuple[str, ...] = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
# Days kept in the file: a year and a bit, enough for monthly totals and a yearly view.
_KEEP_DAYS = 400
_LOCK_TIMEOUT_S = 10.0
# What status shows while the offline engine stands in for Claude because of the budget.
BUDGET_NOTE = "Daily token budget reached: using the offline engine until tomorrow"


@dataclass(frozen=True)
class Price:
    """Estimated list prices in USD per million tokens, and where they come from."""

    input: float
    output: float
    cache_read: float
    # 5-minute cache writes (the only kind this app asks for).
    cache_write: float
    source: str = ""


PRICES_CHECKED = "2026-11-24"
_PRICING_PAGE = "platform.claude.com/docs/en/about-claude/pricing"
_SONNET_4 = Price(3.0, 15.0, 0.30, 3.75, f"{_PRICING_PAGE}, checked {PRICES_CHECKED}")
_HAIKU_4_5 = Price(1.0, 5.0, 0.10, 1.25, f"{_PRICING_PAGE}, checked {PRICES_CHECKED}")
_OPUS_4_5 = Price(5.0, 25.0, 0.50, 6.25, f"{_PRICING_PAGE}, checked {PRICES_CHECKED}")
_OPUS_4 = Price(15.0, 75.0, 1.50, 18.75, f"{_PRICING_PAGE}, checked {PRICES_CHECKED}")
# List prices per model id (a dated id such as `claude-haiku-4-5-20251001` uses its base id).
# Keep `source` and the date with every change: prices move between releases.
MODEL_PRICES: dict[str, Price] = {
    "claude-sonnet-5-5": Price(
        2.0,
        10.0,
        0.10,
        2.50,
        "Anthropic docs: Claude Sonnet 5.5 model page ($2 / $10, 5m cache write $2.50) and "
        "Sonnet 5.5 migration guide (cache reads $0.10, half the Sonnet 5 rate, since "
        f"2026-10-07); checked {PRICES_CHECKED}",
    ),
    "claude-haiku-5-5": Price(
        0.10,
        0.50,
        0.01,
        0.125,
        "UNVERIFIED: not found on an Anthropic page here; third-party release notes and "
        "guides (2026-10) give $0.10 / $0.50, cache read $0.01, 5m write $0.125 for prompts "
        "up to 100k tokens, and five times that above (not modelled: estimates run low for "
        f"longer prompts); checked {PRICES_CHECKED}",
    ),
    "claude-sonnet-5": Price(
        2.0,
        10.0,
        0.20,
        2.50,
        f"Anthropic docs: Claude Sonnet 5 model page; checked {PRICES_CHECKED}",
    ),
    "claude-opus-5-5": Price(
        4.0,
        20.0,
        0.20,
        5.0,
        "Anthropic docs: model comparison on the Sonnet 5.5 page ($4 / $20); cache rates "
        f"UNVERIFIED (0.05x / 1.25x of input assumed); checked {PRICES_CHECKED}",
    ),
    "claude-opus-5": Price(5.0, 25.0, 0.50, 6.25, f"{_PRICING_PAGE}, checked {PRICES_CHECKED}"),
    "claude-opus-4-8": _OPUS_4_5,
    "claude-opus-4-7": _OPUS_4_5,
    "claude-opus-4-6": _OPUS_4_5,
    "claude-opus-4-5": _OPUS_4_5,
    "claude-opus-4-1": _OPUS_4,
    "claude-opus-4": _OPUS_4,
    "claude-sonnet-4-6": _SONNET_4,
    "claude-sonnet-4-5": _SONNET_4,
    "claude-sonnet-4": _SONNET_4,
    "claude-haiku-4-5": _HAIKU_4_5,
    "claude-3-5-haiku": Price(0.80, 4.0, 0.08, 1.0, f"{_PRICING_PAGE}, checked {PRICES_CHECKED}"),
}
# Ids not in the table are priced by family (cache writes at 1.25x input, cache reads at 0.1x
# input); unknown families like Sonnet, so the estimate errs on the high side rather than
# showing a cost of zero.
PRICES: dict[str, Price] = {
    "haiku": Price(1.0, 5.0, 0.10, 1.25, "family estimate (model id not in the table)"),
    "sonnet": Price(3.0, 15.0, 0.30, 3.75, "family estimate (model id not in the table)"),
    "opus": Price(5.0, 25.0, 0.50, 6.25, "family estimate (model id not in the table)"),
    "opus-legacy": Price(15.0, 75.0, 1.50, 18.75, "family estimate (model id not in the table)"),
}
_LEGACY_OPUS = ("claude-opus-4-0", "claude-opus-4-1", "claude-opus-4-2025", "claude-3-opus")
_MODEL_ID_RE = re.compile(r"^(?P<base>.+?)(?:-\d{8}|-latest)?(?:\[[^\]]*\])?$")
# The Message Batches API bills half of the normal price.
BATCH_DISCOUNT = 0.5


def price_for(model: str) -> Price:
    """The estimated price of a model: its own row, else its family's (see MODEL_PRICES)."""
    name = model.strip().lower()
    match = _MODEL_ID_RE.match(name)
    base = match.group("base") if match else name
    if base in MODEL_PRICES:
        return MODEL_PRICES[base]
    if any(name.startswith(prefix) for prefix in _LEGACY_OPUS):
        return PRICES["opus-legacy"]
    for family in ("haiku", "sonnet", "opus"):
        if family in name:
            return PRICES[family]
    return PRICES["sonnet"]


def estimate_cost(model: str, tokens: dict[str, int], *, batch: bool = False) -> float:
    """Estimated USD cost of one reply's token counts."""
    price = price_for(model)
    cost = (
        tokens.get("input_tokens", 0) * price.input
        + tokens.get("output_tokens", 0) * price.output
        + tokens.get("cache_read_input_tokens", 0) * price.cache_read
        + tokens.get("cache_creation_input_tokens", 0) * price.cache_write
    ) / 1_000_000
    return cost * BATCH_DISCOUNT if batch else cost


def _today() -> date:
    return datetime.now(UTC).date()


def _empty_totals() -> dict[str, Any]:
    totals: dict[str, Any] = dict.fromkeys(TOKEN_FIELDS, 0)
    totals["requests"] = 0
    totals["cost_usd"] = 0.0
    return totals


def _add(into: dict[str, Any], entry: dict[str, Any]) -> None:
    for field in (*TOKEN_FIELDS, "requests"):
        into[field] = int(into.get(field, 0)) + int(entry.get(field, 0))
    cost = float(into.get("cost_usd", 0.0)) + float(entry.get("cost_usd", 0.0))
    into["cost_usd"] = round(cost, 6)


def total_tokens(entry: dict[str, Any]) -> int:
    """All tokens of an entry: input, output and both cache counts (what the budget counts)."""
    return sum(int(entry.get(field, 0)) for field in TOKEN_FIELDS)


class UsageLedger:
    """Reads and updates `usage.json` (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        """Use the ledger at `path` (created on the first record)."""
        self.path = path
        self._lock = FileLock(str(path.with_name(path.name + ".lock")), timeout=_LOCK_TIMEOUT_S)

    def record(
        self,
        model: str,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cache_read_input_tokens: int = 0,
        cache_creation_input_tokens: int = 0,
        batch: bool = False,
        day: date | None = None,
        phase: str = "",
    ) -> dict[str, Any]:
        """Add one reply's tokens to today's entry for `model` (and for `phase`, when given:
        extraction, evolution, consolidation, retrieval); returns the model's day entry."""
        tokens = {
            "input_tokens": max(0, int(input_tokens)),
            "output_tokens": max(0, int(output_tokens)),
            "cache_read_input_tokens": max(0, int(cache_read_input_tokens)),
            "cache_creation_input_tokens": max(0, int(cache_creation_input_tokens)),
        }
        entry: dict[str, Any] = {**tokens, "requests": 1}
        entry["cost_usd"] = round(estimate_cost(model, tokens, batch=batch), 6)
        key = (day or _today()).isoformat()
        try:
            with self._lock:
                data = self._load()
                days: dict[str, Any] = data["days"]
                per_model: dict[str, Any] = days.setdefault(key, {})
                current = per_model.setdefault(model, _empty_totals())
                _add(current, entry)
                if phase:
                    phases: dict[str, Any] = data["phases"].setdefault(key, {})
                    _add(phases.setdefault(phase, _empty_totals()), entry)
                newest = date.fromisoformat(max(days))
                cutoff = (newest - timedelta(days=_KEEP_DAYS)).isoformat()
                for old in [d for d in days if d < cutoff]:
                    del days[old]
                for old in [d for d in data["phases"] if d < cutoff]:
                    del data["phases"][old]
                write_json(self.path, data)
                return dict(current)
        except Timeout as exc:
            raise StorageError(
                f"{self.path.name} is locked by another Puffin Memory process; usage not recorded"
            ) from exc

    def day(self, day: date) -> dict[str, Any]:
        """Totals of one day: tokens, requests, estimated cost, and a `models` breakdown."""
        per_model = self._read()["days"].get(day.isoformat(), {})
        totals = _empty_totals()
        for entry in per_model.values():
            _add(totals, entry)
        totals["date"] = day.isoformat()
        totals["total_tokens"] = total_tokens(totals)
        totals["models"] = {name: dict(entry) for name, entry in per_model.items()}
        phases = self._read()["phases"].get(day.isoformat(), {})
        totals["phases"] = {name: dict(entry) for name, entry in phases.items()}
        return totals

    def today(self) -> dict[str, Any]:
        """Today's totals (UTC day), see `day`."""
        return self.day(_today())

    def month(self, year: int | None = None, month: int | None = None) -> dict[str, Any]:
        """Totals of a calendar month (the current one by default), with a `models` breakdown."""
        now = _today()
        prefix = f"{year or now.year:04d}-{month or now.month:02d}-"
        totals = _empty_totals()
        models: dict[str, dict[str, Any]] = {}
        for key, per_model in self._read()["days"].items():
            if not key.startswith(prefix):
                continue
            for name, entry in per_model.items():
                _add(totals, entry)
                _add(models.setdefault(name, _empty_totals()), entry)
        phases: dict[str, dict[str, Any]] = {}
        for key, per_phase in self._read()["phases"].items():
            if key.startswith(prefix):
                for name, entry in per_phase.items():
                    _add(phases.setdefault(name, _empty_totals()), entry)
        totals["month"] = prefix[:-1]
        totals["total_tokens"] = total_tokens(totals)
        totals["models"] = models
        totals["phases"] = phases
        return totals

    def tokens_today(self) -> int:
        """All tokens used today (UTC), the figure the daily budget is compared with."""
        return int(self.today()["total_tokens"])

    def _read(self) -> dict[str, Any]:
        # Readers take no lock: writes are atomic replaces, so a reader sees old or new.
        try:
            return self._validated(read_json(self.path, default=None))
        except StorageError as exc:
            log.warning("usage ledger unreadable, showing no usage: %s", exc.message)
            return {"version": 1, "days": {}, "phases": {}}

    def _load(self) -> dict[str, Any]:
        try:
            return self._validated(read_json(self.path, default=None))
        except StorageError as exc:
            # A broken ledger must not stop memorizing: keep it for inspection, start afresh.
            log.warning("usage ledger unreadable, moving it aside: %s", exc.message)
            with contextlib.suppress(OSError):
                move_aside(self.path)
            return {"version": 1, "days": {}, "phases": {}}

    def _validated(self, data: Any) -> dict[str, Any]:
        if data is None:
            return {"version": 1, "days": {}, "phases": {}}
        if not isinstance(data, dict) or not isinstance(data.get("days"), dict):
            raise StorageError(f"{self.path.name} does not hold a usage ledger")
        return {
            "version": 1,
            "days": _clean_days(data["days"]),
            "phases": _clean_days(data.get("phases")),
        }


def _clean_days(raw: object) -> dict[str, Any]:
    """Day -> name -> totals, keeping only well-formed entries (a hand-edited ledger)."""
    days: dict[str, Any] = {}
    if not isinstance(raw, dict):
        return days
    for key, per_name in raw.items():
        if not isinstance(per_name, dict) or not _is_day(key):
            continue
        days[str(key)] = {
            str(name): {
                **{f: _as_int(entry.get(f)) for f in (*TOKEN_FIELDS, "requests")},
                "cost_usd": _as_float(entry.get("cost_usd")),
            }
            for name, entry in per_name.items()
            if isinstance(entry, dict)
        }
    return days


def _is_day(key: object) -> bool:
    try:
        date.fromisoformat(str(key))
    except ValueError:
        return False
    return True


def _as_int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _as_float(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return 0.0
