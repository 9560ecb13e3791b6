"""Words that say nothing about a memory: shared by the index and the cold hook path.

Standard library only (the per-prompt hook imports it and must not load pydantic).
"""

from __future__ import annotations

import re

# Dropped from a query when it has other terms, so "what do we use for X" ranks on X
# ("use" starts most preference items, so it would match a large part of the index).
STOP_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "do",
        "does",
        "did",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "use",
        "uses",
        "used",
        "using",
    }
)


def as_written(name: str, text: str) -> str:
    """`name` as `text` writes it ("RabbitMQ" for the tag's "rabbitmq"), or `name` itself
    when `text` does not hold it as a whole word."""
    said = re.search(rf"(?i)(?<![\w-]){re.escape(name)}(?![\w-])", text)
    return said.group(0) if said else name
