"""Secret redaction: API keys, tokens, passwords and private keys out of conversation text.

Every piece of conversation text goes through `redact` before it is stored in a memory file or
sent to an LLM. Each secret is replaced by `[REDACTED:<kind>]` (for assignments and URLs only
the value is replaced, so `password=[REDACTED:password]` still reads well). The rules are a
table of precompiled regular expressions with bounded repetition, run in a fixed order
(provider-specific formats first, generic assignments last), so the cost is linear in the
text; rules whose literal anchor is absent are not run at all. Generic rules check each
candidate with a small predicate so that ordinary code (`password = get_password()`,
`max_tokens=4096`, `KEY_LENGTH=32`) and placeholders (`${TOKEN}`, `<your-key>`) stay as they
are. Redaction is idempotent: redacting redacted text changes nothing.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

MARK = "[REDACTED:"

# Values that are obviously not secrets: references, templates, masks, examples.
_PLACEHOLDER_RE = re.compile(
    r"""^(?:
        \$\{? | \$\( | %\( | %[A-Za-z_]+% | <[^>]*>$ | \{\{ | \[REDACTED: | \*{3,} | x{4,} | X{4,}
        | \.{3} | …
    )""",
    re.VERBOSE,
)
_PLACEHOLDER_WORDS = ("your_", "your-", "yourkey", "example", "placeholder", "redacted", "dummy")
_KEYWORDS = frozenset(
    {
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "str",
        "string",
        "int",
        "bool",
        "bytes",
        "any",
        "object",
        "number",
        "optional",
        "required",
        "secret",
        "password",
        "token",
        "env",
    }
)
_DOTTED_IDENT_RE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
_IDENT_RE = re.compile(r"^[A-Za-z_]\w*$")
_CODE_CHARS = frozenset("()[]{}<>$`")


def _is_placeholder(value: str) -> bool:
    if not value or _PLACEHOLDER_RE.match(value):
        return True
    lowered = value.lower()
    return any(word in lowered for word in _PLACEHOLDER_WORDS)


def _looks_like_code(value: str) -> bool:
    """An unquoted value that is an expression, an identifier or a type, not a literal."""
    if value.lower() in _KEYWORDS or _DOTTED_IDENT_RE.match(value):
        return True
    if any(c in _CODE_CHARS for c in value):
        return True
    # A bare identifier without digits (`password = password`, `token: str`) is a name.
    return bool(_IDENT_RE.match(value)) and not any(c.isdigit() for c in value)


def _has_mixed_chars(token: str) -> bool:
    """Random keys mix upper case, lower case and digits; words and slugs do not."""
    return (
        any(c.isdigit() for c in token)
        and any(c.isupper() for c in token)
        and any(c.islower() for c in token)
    )


class _Lazy:
    """A regular expression compiled on first use: most rules never run on a given text
    (their anchors are absent), and compiling all of them cost a cold hook ~7 ms."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def get(self) -> re.Pattern[str]:
        """The compiled pattern."""
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled


class _Rule(NamedTuple):  # not a dataclass: importing dataclasses costs a cold hook ~10 ms
    kind: str
    pattern: _Lazy
    # Literal substrings, one of which must occur (case-insensitively when `fold`) for the
    # rule to be worth running; empty means always run.
    anchors: tuple[str, ...] = ()
    fold: bool = False
    # Regex group holding the secret; 0 replaces the whole match.
    group: int = 0
    # Optional check on the match; returning False leaves the text unchanged.
    accept: Callable[[re.Match[str]], bool] | None = None
    # Optional finer kind from the match (`password` vs `token` for assignments).
    kind_of: Callable[[re.Match[str]], str] | None = None
    # Lowercase literals one of which every match starts with (in the text lowercased, `ſ`
    # and `ı` read as `s` and `i`, as `re.IGNORECASE` reads them): the pattern is then tried
    # only where one occurs instead of at every position (see `_sub_at`). Empty: scan all.
    starts: tuple[str, ...] = ()
    # A literal on the first line of every match, which starts that line (`(?m)^...`): the
    # pattern is then tried only at the start of lines holding it. Empty: scan all.
    line_with: str = ""


def _accept_openai(m: re.Match[str]) -> bool:
    body = m.group(0)
    return body.startswith(("sk-proj-", "sk-svcacct-", "sk-admin-")) or _has_mixed_chars(body[3:])


def _accept_bearer(m: re.Match[str]) -> bool:
    token = m.group(1)
    return (
        not _is_placeholder(token)
        and (any(c.isdigit() for c in token) or len(token) >= 32)
        and not token.isalpha()
    )


def _accept_url_password(m: re.Match[str]) -> bool:
    # `https://[REDACTED:github_token]@host`: the colon is the redaction label's own.
    return not m.group(2).startswith("[REDACTED") and not _is_placeholder(m.group(3))


def _accept_assignment(m: re.Match[str]) -> bool:
    raw = m.group("val")
    quoted = raw[:1] in "\"'"
    value = raw[1:-1] if quoted else raw.rstrip(".,;")
    if len(value) < 4 or _is_placeholder(value):
        return False
    if quoted:
        return not value.isspace()
    if _looks_like_code(value):
        return False
    # Unquoted words without digits or symbols are more often prose than passwords.
    return any(not c.isalpha() for c in value)


_ENV_SECRET_WORDS = frozenset(
    {
        "SECRET",
        "SECRETS",
        "TOKEN",
        "KEY",
        "APIKEY",
        "PASSWORD",
        "PASSWD",
        "PWD",
        "PASS",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "AUTH",
        "PAT",
        "DSN",
    }
)
_ENV_STRONG_WORDS = frozenset({"SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASSPHRASE"})
# Settings *about* a secret, not the secret itself (`PASSWORD_MIN_LENGTH=8`).
_ENV_META_WORDS = frozenset(
    {
        "LENGTH",
        "LEN",
        "MIN",
        "MAX",
        "ROUNDS",
        "COUNT",
        "LIMIT",
        "SIZE",
        "ENABLED",
        "FILE",
        "PATH",
        "DIR",
        "URL",
        "NAME",
        "TTL",
        "EXPIRY",
        "EXPIRES",
        "TIMEOUT",
        "TYPE",
        "ID",
        "HEADER",
    }
)


def _assignment_kind(m: re.Match[str]) -> str:
    key = m.group("key").lower()
    if "pass" in key:
        return "password"
    return "token" if "token" in key else "secret"


def _accept_env(m: re.Match[str]) -> bool:
    parts = m.group(1).split("_")
    last = parts[-1]
    if last in _ENV_META_WORDS:
        return False
    if last not in _ENV_SECRET_WORDS and not _ENV_STRONG_WORDS.intersection(parts):
        return False
    value = m.group(2).strip()
    if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) >= 2:
        value = value[1:-1]
    return len(value) >= 4 and not _is_placeholder(value) and value.lower() not in _KEYWORDS


# The secret's name right before "is", or with whose it is in between ("the password of
# the service user is …", "the token for the staging API is …").
_PROSE_NAME_RE = re.compile(
    r"(?i)(?<![\w-])(?:password|passphrase|passwd|pwd|pw|secret(?:[ _-]access)?[ _-]key"
    r"|api[ _-]key|access[ _-]token|auth[ _-]token|token)"
    r"(?:\s+(?:of|for)\s+(?:the\s+|our\s+|my\s+|a\s+|an\s+)?[\w.-]+(?:\s+[\w.-]+){0,3})?"
    r"\s{0,2}$"
)


def _accept_prose_secret(m: re.Match[str]) -> bool:
    """`my password is hunter2`: a value with a digit or symbol, or a long random token.

    Prose says "the password is stored in the keychain" as often as it gives one, so a
    plain lower-case word is taken for English, not for a password.
    """
    value = m.group("val").rstrip(".,;:!?)")
    if len(value) < 4 or _is_placeholder(value) or value.lower() in _KEYWORDS:
        return False
    if _looks_like_code(value) or (value.isalpha() and (value.islower() or value.istitle())):
        return False
    if not (any(not c.isalpha() for c in value) or _has_mixed_chars(value) or len(value) >= 20):
        return False
    return _PROSE_NAME_RE.search(m.string, max(0, m.start() - 70), m.start() + 1) is not None


def _accept_labelled(m: re.Match[str]) -> bool:
    """`pass: B7gLkD756qiNl3`: a value right after a short credential label and a colon.

    The label alone says little ("tests pass: 1240", "pwd: /home/dev", "first pass:
    tokenize"), so the value must look like a credential: long enough, letters with digits
    or symbols, not a path, a placeholder, code or a plain word.
    """
    value = m.group("val").rstrip(".,;:!?)")
    if len(value) < 6 or _is_placeholder(value):
        return False
    if m.group(0).startswith("PASS") and _is_name(value):
        return False  # a test runner's "--- PASS: TestRateLimit_Returns429"
    if value.isalpha():
        # Letters only: random keys switch case again and again ("HUMiEOsjhGUv"); words
        # and CamelCase names ("OpenSearch") switch once or twice.
        switches = sum(1 for a, b in itertools.pairwise(value) if a.isupper() != b.isupper())
        return len(value) >= 10 and switches >= 4
    if _looks_like_code(value) or value[0] in "/~." or "/" in value or "\\" in value:
        return False
    return any(c.isalpha() for c in value)


# What makes a "key" a credential: "api key", "encryption key", "deploy_key" …
_KEY_OWNER_RE = re.compile(
    r"(?i)\b(?:api|encryption|signing|master|secret|access|license|deploy|private)[ _-]$"
)


def _accept_quoted_secret(m: re.Match[str]) -> bool:
    """`passphrase 'correct horse battery staple 42'`: a quoted value with a digit or a
    symbol, or of three words or more; not a placeholder, a variable or code."""
    value = m.group("val").strip()
    if len(value) < 6 or _is_placeholder(value) or "$" in value or "{" in value:
        return False
    if m.group(0)[:3].lower() == "key" and not _KEY_OWNER_RE.search(
        m.string, max(0, m.start() - 14), m.start()
    ):
        return False  # "press the key 'ctrl+shift+p'": only a credential's key counts
    return any(not (c.isalpha() or c.isspace()) for c in value) or len(value.split()) >= 3


def _accept_curl_user(m: re.Match[str]) -> bool:
    """`-u user:pass` of a curl or wget command on the same line."""
    start = m.start()
    if start and not m.string[start - 1].isspace():
        return False
    line = m.string[m.string.rfind("\n", 0, start) + 1 : start]
    return ("curl" in line or "wget" in line) and _accept_value(m)


def _accept_value(m: re.Match[str]) -> bool:
    value = m.group("val")
    return len(value) >= 3 and not _is_placeholder(value) and not value.startswith("$")


def _key_word_pattern() -> str:
    """Secret key names in the casings code uses (`api_key`, `apiKey`, `ApiKey`, `API_KEY`).

    Spelled out rather than compiled with IGNORECASE: a case-insensitive alternation is
    tried at every position and made this rule several times slower than all others.
    """
    words = (
        ("password",),
        ("passwd",),
        ("passphrase",),
        ("secret",),
        ("client", "secret"),
        ("token",),
        ("api", "key"),
        ("access", "key"),
        ("private", "key"),
        ("secret", "key"),
        ("auth", "key"),
    )
    variants: set[str] = set()
    for parts in words:
        variants.add("[_-]?".join(p.lower() for p in parts))
        variants.add("[_-]?".join(p.upper() for p in parts))
        variants.add("[_-]?".join(p.capitalize() for p in parts))
        variants.add("[_-]?".join([parts[0], *(p.capitalize() for p in parts[1:])]))
    return "|".join(sorted(variants, key=len, reverse=True))


_RULES: tuple[_Rule, ...] = (
    # Telegram bot tokens (`<bot id>:AA<key>`), also inside api.telegram.org/bot<token>/ URLs.
    _Rule(
        "telegram_token",
        _Lazy(r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{30,40}(?![A-Za-z0-9_-])"),
        anchors=(":AA",),
    ),
    _Rule(
        "private_key",
        _Lazy(
            r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
            r"[\s\S]{0,20000}?-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
        ),
        anchors=("PRIVATE KEY",),
    ),
    # A truncated key block (no END line) is still a key.
    _Rule(
        "private_key",
        _Lazy(
            r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[ \t]*\r?\n?[ \t]*[A-Za-z0-9+/=:,-]{16,}){1,400}"
        ),
        anchors=("PRIVATE KEY",),
    ),
    _Rule(
        "anthropic_key",
        _Lazy(r"(?<![\w-])sk-ant-[A-Za-z0-9]{2,12}-[A-Za-z0-9_-]{20,300}"),
        anchors=("sk-ant-",),
    ),
    _Rule(
        "openai_key",
        _Lazy(r"(?<![\w-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,300}"),
        anchors=("sk-",),
        accept=_accept_openai,
    ),
    _Rule(
        "aws_access_key",
        _Lazy(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}(?![A-Z0-9])"),
        anchors=("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA"),
    ),
    _Rule(
        "aws_secret_key",
        _Lazy(
            r"(?i)(aws[_.-]?secret[_.-]?(?:access[_.-]?)?key[\"']?\s{0,3}[:=]{1,2}\s{0,3}[\"']?)"
            r"([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        anchors=("aws",),
        fold=True,
        group=2,
    ),
    _Rule(
        "github_token",
        _Lazy(
            r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})"
        ),
        anchors=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _Rule(
        "slack_token",
        _Lazy(r"(?<![A-Za-z0-9])(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,250}"),
        anchors=("xox", "xapp-"),
    ),
    _Rule(
        "slack_webhook",
        _Lazy(r"https://hooks\.slack\.com/services/[A-Za-z0-9_/]{20,200}"),
        anchors=("hooks.slack.com",),
    ),
    _Rule(
        "google_api_key",
        _Lazy(r"(?<![A-Za-z0-9_])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
        anchors=("AIza",),
    ),
    _Rule(
        "stripe_key",
        _Lazy(r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,247}"),
        anchors=("_live_", "_test_"),
    ),
    _Rule(
        "npm_token",
        _Lazy(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
        anchors=("npm_",),
    ),
    _Rule(
        # HashiCorp Vault service, batch and recovery tokens.
        "vault_token",
        _Lazy(r"(?<![A-Za-z0-9_.])hv[sbr]\.[A-Za-z0-9_-]{24,400}(?![A-Za-z0-9_-])"),
        anchors=("hvs.", "hvb.", "hvr."),
    ),
    _Rule(
        "huggingface_token",
        _Lazy(r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,40}(?![A-Za-z0-9])"),
        anchors=("hf_",),
    ),
    _Rule(
        "gitlab_token",
        _Lazy(r"(?<![A-Za-z0-9_-])gl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_-]{20,64}"),
        anchors=("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-"),
    ),
    _Rule(
        "sendgrid_key",
        _Lazy(r"(?<![A-Za-z0-9_])SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}"),
        anchors=("SG.",),
    ),
    _Rule(
        "azure_key",
        # Storage connection strings: `AccountKey=<base64>` (also SharedAccessKey=...).
        _Lazy(r"(?i)((?:account|sharedaccess)key\s{0,2}=\s{0,2})([A-Za-z0-9+/]{20,200}={0,2})"),
        anchors=("accountkey", "sharedaccesskey"),
        fold=True,
        group=2,
    ),
    _Rule(
        "gcp_private_key_id",
        _Lazy(r"(\\?\"private_key_id\\?\"\s{0,3}:\s{0,3}\\?\")([0-9a-f]{40})"),
        anchors=("private_key_id",),
        group=2,
    ),
    _Rule(
        "password",
        # Command lines that carry a password: `mysql -u root -pS3cret`, `curl -u me:pass`.
        _Lazy(
            r"(?<![\w-])(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]{0,200}?"
            r"\s-p(?P<val>[^\s\-][^\s]{0,100})"
        ),
        anchors=("mysql", "mariadb"),
        fold=True,
        group=1,
        accept=_accept_value,
    ),
    _Rule(
        "password",
        _Lazy(r"-(?:u|-user)[ =][ \t]{0,2}[\"']?[^\s:\"']{1,100}:(?P<val>[^\s\"']{1,200})"),
        anchors=("curl", "wget"),
        group=1,
        accept=_accept_curl_user,
    ),
    _Rule(
        "password",
        # Prose: "my password is hunter2", "the secret key is wJalr..." (assignments with
        # `=` or `:` are the next rule's). The match starts at " is "/" was " and the
        # secret's name is checked behind it: a long alternation of names tried at every
        # position made this rule the slowest of all.
        _Lazy(r"[ \t](?:is|was)[ \t]{1,3}[\"'`]?(?P<val>[^\s\"'`]{4,200})"),
        anchors=("pass", "pw", "secret", "key", "token"),
        fold=True,
        group=1,
        accept=_accept_prose_secret,
        starts=(" is", "\tis", " was", "\twas"),
    ),
    _Rule(
        "password",
        # A short label and a colon or equals sign: "admin pass: …", "db pw = …". The long
        # names (password, secret, token...) are the assignment rule's.
        _Lazy(
            r"(?<![\w-])(?:pass|pwd|pw)[ \t]{0,2}[:=][ \t]{0,2}[\"'`]?"
            r"(?P<val>[^\s\"'`,;]{6,200})",
            re.IGNORECASE,
        ),
        anchors=("pass", "pwd", "pw"),
        fold=True,
        group=1,
        accept=_accept_labelled,
        starts=("pass", "pw"),
    ),
    _Rule(
        "password",
        # Prose without "is" or a colon: "dev creds are user etl_dev / password Tr0ub4dor&3".
        # The value must look like a credential (`_accept_labelled`): "password reset",
        # "password hashing" and "password field" are words.
        _Lazy(
            r"(?<![\w-])(?:password|passwd|passphrase)[ \t]{1,2}[\"'`]?"
            r"(?P<val>[^\s\"'`,;]{6,200})",
            re.IGNORECASE,
        ),
        anchors=("pass",),
        fold=True,
        group=1,
        accept=_accept_labelled,
        starts=("pass",),
    ),
    _Rule(
        "password",
        # A credential's name and its value in quotes, spaces and all: "with passphrase
        # 'correct horse battery staple 42'", "the password is "open sesame 7"" (the rules
        # above take one word after "is" or the name, and only an assignment takes quotes).
        _Lazy(
            r"(?:(?<![\w-])(?:password|passwd|passphrase|secret|token)|(?<=[ _-])key)"
            r"(?:[ \t]{0,2}[=:]|[ \t]{1,2}(?:is|was|of))?[ \t]{1,2}"
            r"[\"'“‘](?P<val>[^\"'“”‘’\n]{4,200})[\"'”’]",
            re.IGNORECASE,
        ),
        anchors=("pass", "secret", "token", "key"),
        fold=True,
        group=1,
        accept=_accept_quoted_secret,
        starts=("pass", "secret", "token", "key"),
    ),
    _Rule(
        "password",
        # Whose it is between the name and the colon: "wifi password for the office:
        # CoffeeBeans!2024", "the db pass for staging: Summer-2024-Rain".
        _Lazy(
            r"(?<![\w-])(?:password|passwd|passphrase|pass|pwd)[ \t]{1,2}(?:of|for)"
            r"(?:[ \t]{1,2}[\w.-]+){1,4}[ \t]{0,2}[:=][ \t]{0,2}[\"'`]?"
            r"(?P<val>[^\s\"'`,;]{6,200})",
            re.IGNORECASE,
        ),
        anchors=("pass", "pwd"),
        fold=True,
        group=1,
        accept=_accept_labelled,
        starts=("pass", "pwd"),
    ),
    _Rule(
        "password",
        # A user and a password after a label: "prod creds: admin / Xy7!kLm9Qz".
        _Lazy(
            r"(?<![\w-])(?:creds|credentials|login)[ \t]{0,2}[:=][ \t]{0,2}[^\s/]{1,60}"
            r"[ \t]{0,2}/[ \t]{0,2}(?P<val>[^\s\"'`,;]{6,200})",
            re.IGNORECASE,
        ),
        anchors=("cred", "login"),
        fold=True,
        group=1,
        accept=_accept_labelled,
        starts=("cred", "login"),
    ),
    _Rule(
        "jwt",
        _Lazy(
            r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,4000}\.eyJ[A-Za-z0-9_-]{8,8000}"
            r"\.[A-Za-z0-9_-]{0,4000}"
        ),
        anchors=("eyJ",),
    ),
    _Rule(
        "bearer_token",
        _Lazy(r"(?i)(?<![A-Za-z0-9])bearer\s{1,3}([A-Za-z0-9._~+/-]{16,2000}=*)"),
        anchors=("bearer",),
        fold=True,
        group=1,
        accept=_accept_bearer,
    ),
    _Rule(
        "basic_auth",
        _Lazy(
            r"(?i)(authorization[\"']?\s{0,3}[:=]\s{0,3}[\"']?basic\s{1,3})([A-Za-z0-9+/]{8,500}=*)"
        ),
        anchors=("authorization",),
        fold=True,
        group=2,
    ),
    _Rule(
        "url_password",
        # Starts at the literal `://` (the scheme needs no matching), which the regex engine
        # finds with a fast search instead of trying every word.
        _Lazy(r"(://)([^\s:/@'\"<>]{0,128}):([^\s@/'\"<>]{1,256})@"),
        anchors=("://",),
        group=3,
        accept=_accept_url_password,
    ),
    _Rule(
        "password",
        _Lazy(
            # Anchored on the key word itself: a prefix such as `db_` needs no matching.
            r"(?P<key>(?:" + _key_word_pattern() + r")[\"']?)"
            r"(?P<sep>\s{0,3}(?:=>|:=|[:=])\s{0,3})"
            r"(?P<val>\"[^\"\n]{0,500}\"|'[^'\n]{0,500}'|[^\s\"',;)}\]]{1,500})"
        ),
        anchors=("pass", "secret", "token", "key"),
        fold=True,
        group=3,
        accept=_accept_assignment,
        kind_of=_assignment_kind,
        # The first word of every name `_key_word_pattern` spells.
        starts=("pass", "secret", "client", "token", "api", "access", "private", "auth"),
    ),
    _Rule(
        "env_secret",
        _Lazy(r"(?m)^[ \t]*(?:export[ \t]+)?([A-Z][A-Z0-9_]{1,80})[ \t]*=[ \t]*(\S[^\n]{0,500})$"),
        anchors=("=",),
        group=2,
        accept=_accept_env,
        line_with="=",
    ),
)


def _positions(lowered: str, literals: tuple[str, ...]) -> list[int]:
    """Every index where one of `literals` occurs in `lowered` (overlaps included), sorted."""
    found: set[int] = set()
    for literal in literals:
        at = lowered.find(literal)
        while at >= 0:
            found.add(at)
            at = lowered.find(literal, at + 1)
    return sorted(found)


class _Folded:
    """The text lowercased and folded as `re.IGNORECASE` reads it, and where each literal
    occurs in it, found once for all the rules that start at it (until a rule changes the
    text: many rules start at "pass", "secret" or "token")."""

    __slots__ = ("found", "text")

    def __init__(self, lowered: str) -> None:
        self.text = lowered.replace("\u017f", "s").replace("\u0131", "i")
        self.found: dict[str, tuple[int, ...]] = {}

    def positions(self, literals: tuple[str, ...]) -> list[int]:
        found: set[int] = set()
        for literal in literals:
            known = self.found.get(literal)
            if known is None:
                known = self.found[literal] = tuple(_positions(self.text, (literal,)))
            found.update(known)
        return sorted(found)


def _line_starts(text: str, literal: str) -> list[int]:
    """The start of every line that holds `literal`, sorted."""
    found: set[int] = set()
    at = text.find(literal)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        found.add(start)
        # The rest of this line adds nothing: go on from the next line.
        end = text.find("\n", at)
        if end < 0:
            break
        at = text.find(literal, end)
    return sorted(found)


def _sub_at(
    pattern: re.Pattern[str], text: str, starts: list[int], repl: Callable[[re.Match[str]], str]
) -> str:
    """`pattern.sub(repl, text)` when every match starts at one of `starts`.

    `sub` takes the leftmost match, then searches on from its end; trying the pattern at
    each start in order past the last match's end finds the same matches (a match attempt
    at a position sees the text before it, for lookbehinds and word boundaries, exactly as
    the scan does). The patterns given starts never match the empty string.
    """
    pieces: list[str] = []
    last = 0
    for at in starts:
        if at < last:
            continue
        m = pattern.match(text, at)
        if m is None:
            continue
        pieces.append(text[last:at])
        pieces.append(repl(m))
        last = m.end()
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _apply(
    rule: _Rule, text: str, lowered: str | None = None, folded: _Folded | None = None
) -> tuple[str, int]:
    count = 0
    fixed_label = f"{MARK}{rule.kind}]"

    def replace(m: re.Match[str]) -> str:
        nonlocal count
        whole = m.group(0)
        if MARK in whole and rule.group == 0:
            return whole
        if rule.accept is not None and not rule.accept(m):
            return whole
        count += 1
        label = fixed_label if rule.kind_of is None else f"{MARK}{rule.kind_of(m)}]"
        if rule.group == 0:
            return label
        start, end = m.span(rule.group)
        secret = m.group(rule.group)
        base = m.start()
        # Keep the quotes around a quoted assignment value.
        if secret[:1] in "\"'" and secret[-1:] == secret[:1] and len(secret) >= 2:
            return whole[: start - base + 1] + label + whole[end - base - 1 :]
        return whole[: start - base] + label + whole[end - base :]

    if rule.line_with:
        return _sub_at(rule.pattern.get(), text, _line_starts(text, rule.line_with), replace), count
    if rule.starts and lowered is not None and len(lowered) == len(text):
        # Same length: every character lowercased to one, so indexes agree with `text`.
        starts = (folded or _Folded(lowered)).positions(rule.starts)
        return _sub_at(rule.pattern.get(), text, starts, replace), count
    return rule.pattern.get().sub(replace, text), count


# The last layer: a long random-looking token on a line that talks about a secret ("the aws
# secret key for the ci user is AP1X…", "\"token\": \"vKcx…\"", ".../bot<id>:<key>/…").
# Random strings of 20+ characters have high character entropy; names, paths, words and
# hex digests on lines without a secret word are left alone.
_SECRET_WORD_RE = re.compile(
    r"(?i)(?<!public )(?<!public_)\b(?:secret|token|password|passwd|passphrase|pass|api[_ -]?key|"
    r"access[_ -]?key|auth|credentials?|bot)|(?<![a-z])key\b(?![ -]*(?:id|name|board|word))"
)
_TOKEN_RE = re.compile(r"(?<![\w/+=.-])[A-Za-z0-9][A-Za-z0-9+/_:.-]{18,}[A-Za-z0-9]=*(?![\w])")
MIN_ENTROPY = 3.7


def _entropy(token: str) -> float:
    import math
    from collections import Counter

    counts = Counter(token)
    return -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())


_WORD_RUN_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_NAME_SEPARATORS_RE = re.compile(r"[/_.:@-]")


def _is_name_part(part: str) -> bool:
    """Words, CamelCase and acronyms with at most two numbers in them ("TokenStore",
    "AllowsUpToLimit", "APIClient", "Returns429", "ubuntu22"), or a short plain piece
    ("v10", "a11y"). Random keys run capitals together and strand single letters again and
    again ("kiUupWwkLRDFvVjiAbVC38USq")."""
    runs = _WORD_RUN_RE.findall(part)
    if "".join(runs) != part or sum(r.isdigit() for r in runs) > 2:
        return False
    if len(part) <= 4:
        return part.islower() or part.isupper() or part.isdigit() or part[1:].islower()
    stranded = sum(1 for r in runs if len(r) == 1 and r.isalpha())
    acronyms = sum(1 for r in runs if len(r) > 1 and r.isupper())
    return stranded <= 1 and acronyms <= 2


def _is_name(token: str) -> bool:
    """A path, module or file name made of words ("src/auth/TokenStore.swift:31",
    "github.com/go-redis/redis_rate/v10", "0143_invoices_tenant_id.up.sql"). Random keys
    mix digits into their parts again and again, and base64 carries `+` and `=`."""
    if "+" in token or token.endswith("="):
        return False
    return all(_is_name_part(part) for part in _NAME_SEPARATORS_RE.split(token) if part)


def _looks_random(token: str) -> bool:
    if MARK[1:-1] in token or "://" in token or token.count(".") > 3:
        return False
    if _is_name(token):
        return False  # PASSWORD_MIN_LENGTH, auth.session-cookie, src/auth/tokens.ts: names
    if "/" in token and token.count("/") > 2 and not any(c.isdigit() for c in token):
        return False  # a path
    kinds = sum(
        (
            any(c.islower() for c in token),
            any(c.isupper() for c in token),
            any(c.isdigit() for c in token),
        )
    )
    return kinds >= 2 and _entropy(token) >= MIN_ENTROPY and not _is_placeholder(token)


_TOKEN_MIN = 20  # the shortest text `_TOKEN_RE` matches


def _long_tokens(text: str) -> Iterator[re.Match[str]]:
    """`_TOKEN_RE.finditer(text)`, searching only runs of 20+ non-space characters.

    A token holds no whitespace, so each match lies inside one such run, and the scan of the
    run sees the same neighbours (the pattern looks behind the run's start, and whitespace or
    the end after it both pass its closing check). `str.split` finds the runs in C; each run
    is located from the end of the previous long one (a shorter run cannot hold it).
    """
    cursor = 0
    for chunk in text.split():
        if len(chunk) < _TOKEN_MIN:
            continue
        start = text.find(chunk, cursor)
        cursor = start + len(chunk)
        yield from _TOKEN_RE.finditer(text, start, cursor)


def _entropy_layer(text: str) -> tuple[str, int]:
    """Random-looking tokens on lines that mention a secret.

    Long tokens are rare in prose, so they are found first and only their own line is
    checked for a secret word (a line-by-line pass cost half the redaction's time).
    """
    pieces: list[str] = []
    last = 0
    count = 0
    lines: dict[int, bool] = {}
    for m in _long_tokens(text):
        token = m.group(0)
        if not _looks_random(token):
            continue
        start = text.rfind("\n", 0, m.start()) + 1
        talks = lines.get(start)
        if talks is None:
            end = text.find("\n", m.end())
            talks = _SECRET_WORD_RE.search(text, start, end if end >= 0 else len(text)) is not None
            lines[start] = talks
        if not talks:
            continue
        pieces.append(text[last : m.start()])
        pieces.append(f"{MARK}token]")
        last = m.end()
        count += 1
    if not count:
        return text, 0
    pieces.append(text[last:])
    return "".join(pieces), count


def redact_with_count(text: str) -> tuple[str, int]:
    """Redact secrets and say how many were replaced."""
    if not text:
        return text, 0
    text, total = _rules_layer(text)
    text, found = _entropy_layer(text)
    return text, total + found


# From this length on, the anchors of a case-sensitive rule are looked for in one pass
# (`_anchors_of`): one `in` per anchor is a full scan each, and the 42 such anchors cost about
# 1.9 ms over 100 KB, against 1.1 ms for one pattern per rule. The folded rules' anchors
# ("token", "secret") mostly occur early, where `in` stops, so they keep it.
_ANCHOR_SCAN_MIN = 4096
_ANCHOR_PATTERNS: dict[tuple[str, ...], re.Pattern[str]] = {}


def _anchors_of(anchors: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern matching any of a rule's anchors (compiled on first use)."""
    found = _ANCHOR_PATTERNS.get(anchors)
    if found is None:
        found = _ANCHOR_PATTERNS[anchors] = re.compile("|".join(map(re.escape, anchors)))
    return found


def _rules_layer(text: str) -> tuple[str, int]:
    lowered: str | None = None
    folded: _Folded | None = None
    # Whether an anchor occurs, asked once per anchor (or, in a long text, per rule's
    # anchors) until a rule changes the text.
    present: dict[tuple[bool, str], bool] = {}
    present_any: dict[tuple[str, ...], bool] = {}
    total = 0
    for rule in _RULES:
        if rule.anchors:
            if rule.fold:
                if lowered is None:
                    lowered = text.lower()
                haystack = lowered
            else:
                haystack = text
            if not rule.fold and len(haystack) >= _ANCHOR_SCAN_MIN:
                hit = present_any.get(rule.anchors)
                if hit is None:
                    hit = present_any[rule.anchors] = (
                        _anchors_of(rule.anchors).search(haystack) is not None
                    )
                if not hit:
                    continue
            else:
                for anchor in rule.anchors:
                    key = (rule.fold, anchor)
                    hit = present.get(key)
                    if hit is None:
                        hit = present[key] = anchor in haystack
                    if hit:
                        break
                else:
                    continue
        if rule.starts and lowered is not None and folded is None and len(lowered) == len(text):
            folded = _Folded(lowered)
        text, count = _apply(rule, text, lowered, folded)
        if count:
            total += count
            lowered = folded = None
            present.clear()
            present_any.clear()
    return text, total


def redact(text: str) -> str:
    """Replace every secret found in `text` by `[REDACTED:<kind>]`."""
    return redact_with_count(text)[0]
