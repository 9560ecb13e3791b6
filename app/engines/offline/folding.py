"""Case-insensitive patterns answered on lowercased text, which Python's regex engine scans
several times faster.

Under `re.IGNORECASE` the engine compares every character through a case table and gives
up its literal-prefix scan; the engine's patterns are mostly written that way, and on a
100 KB conversation the difference is milliseconds of memorize (bench/memorize.py). A
pattern compiled without the flag and searched in the text folded once (`folded`, cached)
gives the same answer, as long as the pattern itself names only lowercase letters:
`Folded` checks that when it is built.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["Folded", "folded"]


# Texts up to this long are folded once and remembered (sentences and short turns, which
# several patterns ask about); a longer one is folded each time, so the cache stays small
# in a long-running app.
_CACHED_CHARS = 2_000


def folded(text: str) -> str:
    """`text` lowercased the way `re.IGNORECASE` matches ASCII letters, one character for one.

    Besides ASCII capitals, four characters match an ASCII letter case-insensitively: `İ`
    and `ı` (i), `ſ` (s) and the Kelvin sign (k, which `lower` already maps). `İ` is the
    only character whose lowercase is longer.
    """
    return _folded_short(text) if len(text) <= _CACHED_CHARS else _fold(text)


def _fold(text: str) -> str:
    return text.replace("\u0130", "i").replace("\u0131", "i").replace("\u017f", "s").lower()


_folded_short = lru_cache(maxsize=4096)(_fold)


# What a pattern's source may hold besides lowercase letters: escapes (`\S`, `\B`) and the
# names of groups are not letters to match.
_NOT_MATCHED = re.compile(r"\\.|\(\?P<\w+>|\(\?P=\w+\)|\(\?<?[=!]", re.DOTALL)
_LEADING_FLAGS = re.compile(r"^\(\?([aiLmsux]+)\)")


class Folded:
    """A pattern written for `re.IGNORECASE`, answering yes or no on folded text.

    Only whether (and where) it matches is the same as the original's: the text it
    matches is lowercased, so it offers no groups.
    """

    __slots__ = ("_rx",)

    def __init__(self, source: str, flags: int = 0) -> None:
        pattern = re.compile(source, flags)
        if not pattern.flags & re.IGNORECASE:
            raise ValueError(f"not a case-insensitive pattern: {source[:60]!r}")
        if "(?-i" in source or re.search(r"\(\?[a-z]*i[a-z]*:", source):
            raise ValueError(f"case switched inside the pattern: {source[:60]!r}")
        letters = _NOT_MATCHED.sub("", source)
        if any(ch.isalpha() and (ch != ch.lower() or not ch.isascii()) for ch in letters):
            raise ValueError(f"a letter other than a lowercase ASCII one: {source[:60]!r}")
        leading = _LEADING_FLAGS.match(source)
        if leading:
            rest = leading.group(1).replace("i", "")
            source = (f"(?{rest})" if rest else "") + source[leading.end() :]
        self._rx = re.compile(source, pattern.flags & ~re.IGNORECASE)

    def search(self, text: str) -> bool:
        """Whether the original pattern's `search` finds a match in `text`."""
        return self._rx.search(folded(text)) is not None

    def match(self, text: str) -> bool:
        """Whether the original pattern matches at the start of `text`."""
        return self._rx.match(folded(text)) is not None
