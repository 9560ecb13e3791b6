"""Rules tried only where their first word occurs redact exactly as a full scan (issue 11).

Some rules name the literals every match starts with (`_Rule.starts`); `_apply` then tries the
pattern at those positions only. These tests compare with `pattern.sub` over the whole text.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from app.core import redact as layers

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

_PIECES = [
    "password",
    "PASSWORD",
    "Password",
    "pass",
    "PaSs",
    "pa\u017fs",  # long s: re.IGNORECASE reads it as s
    "P\u0131w",
    "\u0130",
    "\u212a",
    "pwd",
    "pw",
    "pw:",
    "db_pw = ",
    "api_key",
    "apiKey",
    "API-KEY",
    "client_secret",
    "secret",
    "SECRET_KEY",
    "token",
    "access-key",
    "private_key",
    "auth_key",
    " is ",
    "\tis ",
    " was ",
    " IS ",
    "=",
    ": ",
    "=> ",
    "'",
    '"',
    "`",
    "hunter2hunter2",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "sk-test-123456",
    "\n",
    " ",
    "-",
    "xyz",
    "é",
    "ß",
    "\u00ad",
    "export ",
    "DB_PASSWORD",
    "API_TOKEN=",
    "\n  X9=",
    "\t",
]


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 40)))


def _full_scan(text: str) -> tuple[str, int]:
    """`redact_with_count` with every rule scanning the whole text."""
    saved = layers._RULES
    layers._RULES = tuple(rule._replace(starts=(), line_with="") for rule in saved)
    try:
        return layers.redact_with_count(text)
    finally:
        layers._RULES = saved


def test_some_rules_name_their_starts() -> None:
    assert sum(1 for rule in layers._RULES if rule.starts) >= 3
    assert any(rule.line_with for rule in layers._RULES)


@pytest.mark.parametrize("seed", range(4))
def test_starts_redact_like_a_full_scan_on_random_text(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(500):
        text = _text(rng)
        assert layers.redact_with_count(text) == _full_scan(text), repr(text)


def test_starts_redact_like_a_full_scan_on_the_secret_corpus() -> None:
    texts = [
        case["text"]
        for split in ("dev", "test")
        for case in json.loads((FIXTURES / "secrets" / split / "cases.json").read_text())
    ]
    texts += [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("extraction/*.txt"))]
    for text in texts:
        assert layers.redact_with_count(text) == _full_scan(text)


def test_sub_at_is_sub_when_every_match_starts_at_a_given_position() -> None:
    pattern = layers._RULES[0].pattern.get()
    rule = next(r for r in layers._RULES if r.starts)
    text = "my password is hunter22 and the api_key=abc123456 PASS: zz9988776655"
    lowered = text.lower()
    starts = layers._positions(lowered, rule.starts)
    compiled = rule.pattern.get()
    assert layers._sub_at(compiled, text, starts, lambda m: "<X>") == compiled.sub(
        lambda m: "<X>", text
    )
    assert layers._sub_at(pattern, text, [], lambda m: "<X>") == text


def test_long_tokens_are_the_token_scan() -> None:
    rng = random.Random(9)
    pieces = [
        "aB3dE6gH9jK2mN5pQ8sT1",
        "x" * 19,
        "y" * 20,
        "key=",
        "/",
        "+",
        "=",
        ".",
        "-",
        "\u00a0",
        "\u001f",
        "\u2028",
        " ",
        "\n",
        "\t",
        "é",
        "token:",
        "AKIA1234567890ABCDEF",
    ]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(3000)]
    texts += [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("extraction/*.txt"))]
    for text in texts:
        expected = [m.span() for m in layers._TOKEN_RE.finditer(text)]
        assert [m.span() for m in layers._long_tokens(text)] == expected, repr(text)
