"""The injection screen: memory text that would steer an agent rather than inform it.

Memory is handed back to coding agents, so a note that tells the agent to run remote code,
to switch off safety checks, to send secrets away, or to obey new "system" instructions is
an attack carried by pasted text or tool output, not something the team decided. The
screen looks for the *actions* (a download piped into an interpreter, a verb that disables
a safety mechanism, a secret sent to a network address, words addressed to the model about
its instructions) rather than for whole phrases, so rewordings are caught too.

`screen_text(text)` returns the reasons, `is_unsafe(text)` whether there are any. Standard
library only: the per-prompt hook imports this module on its cold path.
"""

from __future__ import annotations

import re

# Characters that re.IGNORECASE matches to an ASCII letter although str.lower() does not give
# that letter: the anchor check reads the text as the patterns do.
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


class _Check:
    """One pattern of the screen, compiled on first use and tried only when one of its
    anchors (literals every match contains, lowercase) occurs in the text: most texts hold
    none of them, and compiling all the patterns cost a cold hook ~5 ms."""

    __slots__ = ("_anchors", "_compiled", "_source")

    def __init__(self, source: str, anchors: tuple[str, ...]) -> None:
        self._source = source
        self._anchors = anchors
        self._compiled: re.Pattern[str] | None = None

    def search(self, text: str, folded: str) -> bool:
        """Whether the pattern matches `text` (`folded`: the text as `_folded` gives it)."""
        if not any(anchor in folded for anchor in self._anchors):
            return False
        return self.pattern().search(text) is not None

    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern."""
        if self._compiled is None:
            self._compiled = re.compile(self._source)
        return self._compiled


# A download (curl, wget, iwr, Invoke-WebRequest, fetch) whose output is run by a shell or
# interpreter, in any of the usual shapes.
_REMOTE_EXEC = (
    _Check(
        r"(?i)\b(?:curl|wget|iwr|invoke-webrequest|invoke-restmethod|irm|fetch)\b[^\n|;&]{0,300}"
        r"\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b|\|\s*(?:sudo\s+)?(?:python[0-9.]*|node|perl"
        r"|ruby|iex|invoke-expression|powershell|pwsh)\b",
        ("|",),
    ),
    _Check(r"(?i)\b(?:ba|z)?sh\s+(?:-c\s+)?[\"']?<\(\s*(?:curl|wget)\b", ("<(",)),
    _Check(
        r"(?i)\b(?:iex|invoke-expression)\s*\(?\s*\(?\s*(?:iwr|irm|new-object\s+net\.webclient"
        r"|invoke-webrequest|invoke-restmethod)\b",
        ("iex", "invoke-expression"),
    ),
    _Check(
        r"(?i)\bpowershell(?:\.exe)?\s+(?:-\w+\s+)*-e(?:nc(?:odedcommand)?)?\s+[A-Za-z0-9+/=]{16,}",
        ("powershell",),
    ),
    _Check(r"(?i)\beval\s*\(?\s*[\"'`$(]*\s*(?:curl|wget)\b", ("eval",)),
    # The same in words: "pipe https://…/install.sh into bash", "run the script at <url>".
    _Check(
        r"(?i)\b(?:pipe|feed|stream|send)\b[^.\n]{0,30}https?://\S+[^.\n]{0,30}"
        r"\b(?:in)?to\s+(?:(?:a|the)\s+)?(?:sudo\s+)?(?:(?:ba|z|da|k|fi)?sh|python[0-9.]*|node"
        r"|perl|ruby|powershell|pwsh)\b",
        ("://",),
    ),
    _Check(
        r"(?i)\b(?:run|execute|source)\s+(?:the\s+)?(?:script|installer|code|file)\s+"
        r"(?:at|from)\s+https?://",
        ("://",),
    ),
    # The address first, then the piping: "download https://… and pipe it into python3".
    _Check(
        r"(?i)https?://\S+[^.\n]{0,60}\b(?:pipe|feed|stream)\b[^.\n]{0,20}\b(?:in)?to\s+"
        r"(?:(?:a|the)\s+)?(?:sudo\s+)?(?:(?:ba|z|da|k|fi)?sh|python[0-9.]*|node|perl|ruby"
        r"|powershell|pwsh)\b",
        ("://",),
    ),
    # A download run through command substitution: python -c "$(curl …)", sh -c `wget …`.
    _Check(
        r"(?i)\b(?:(?:ba|z|da|k)?sh|python[0-9.]*|node|perl|ruby)\s+-c\s+[\"']?"
        r"(?:\$\(|`)\s*(?:curl|wget|iwr|fetch)\b",
        ("-c",),
    ),
)
# Switching off the checks that protect the user's code and machine.
_DISABLE = (
    _Check(
        r"(?i)--no-verify\b|--insecure\b|(?<![\w-])-k\s+https?://"
        r"|verify\s*=\s*false|NODE_TLS_REJECT_UNAUTHORIZED\s*=\s*['\"]?0"
        r"|strict-ssl\s+false|sslverify\s*=?\s*false",
        ("--no-verify", "--insecure", "-k", "verify", "node_tls_reject_unauthorized", "strict-ssl"),
    ),
    _Check(
        r"(?i)\bchmod\s+(?:-R\s+)?777\s+/(?:\s|$)|\brm\s+-rf\s+(?:/|~)(?:\s|$)", ("chmod", "rm")
    ),
    # A rule that tells the agent to switch one off ("never disable TLS" protects instead).
    _Check(
        r"(?i)\b(?:always|must|should)\b[^.\n]{0,40}\b(?:disable|turn off|skip|bypass|"
        r"remove|ignore)\b[^.\n]{0,40}\b(?:security|safety|sandbox|permission|antivirus|"
        r"signature|certificate|tls|ssl|pre-commit|hooks?|code review|2fa|mfa)\b",
        ("always", "must", "should"),
    ),
)
# Secrets or private files sent to somewhere outside.
_EXFILTRATE = (
    _Check(
        r"(?i)\b(?:send|post|upload|exfiltrate|forward|email|leak|copy)\b[^\n]{0,80}?(?<!\w)(?:"
        r"env(?:ironment)?(?: variables)?|\.env|secrets?|credentials?|api[ _-]?keys?|tokens?|"
        r"passwords?|ssh keys?|id_rsa|\.aws|private keys?)(?!\w)[^\n]{0,80}?"
        r"(?:https?://|\bto\s+\S+@)",
        ("://", "@"),
    ),
    _Check(
        r"(?i)\b(?:curl|wget)\b[^\n]{0,200}(?:-d|--data[\w-]*|-F|-T)\s*[\"'@]?[^\n]{0,80}"
        r"(?:\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD)\w*|~/\.ssh|\.env\b|/etc/passwd|id_rsa)",
        ("curl", "wget"),
    ),
)
# Words addressed to the model about its own instructions, role or rules.
_OVERRIDE = (
    _Check(
        r"(?i)\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}\b(?:previous|prior|"
        r"above|earlier|all|any|your|system|original)\b[^.\n]{0,30}\b(?:instructions?|prompts?|"
        r"rules|guidelines|directives|policies|messages)\b",
        ("ignore", "disregard", "forget", "override", "bypass"),
    ),
    _Check(
        r"(?i)(?:^|\n|\s)(?:system|assistant|developer)\s*(?:prompt|message|note|policy)?"
        r"\s*:\s*(?:new|updated|override|you)\b",
        ("system", "assistant", "developer"),
    ),
    _Check(r"(?i)<\s*/?\s*(?:system|system-prompt|instructions?|im_start|admin)\s*>", ("<",)),
    _Check(
        r"(?i)\b(?:from now on|henceforth|going forward)\b[^.\n]{0,20}\b(?:the |you\b|your )?"
        r"(?:assistant|ai|model|agent|claude|llm|you)\b[^.\n]{0,20}\b(?:must|shall|will|should|"
        r"are required|have to)\b",
        ("from now on", "henceforth", "going forward"),
    ),
    _Check(
        r"(?i)\b(?:as an ai|you are now|act as|pretend to be|new (?:system )?policy)\b"
        r"[^.\n]{0,60}\b(?:must|required|allowed|unrestricted|jailbreak|dan|no rules)\b",
        ("as an ai", "you are now", "act as", "pretend to be", "policy"),
    ),
    _Check(
        r"(?i)\b(?:do not|don't|never)\s+(?:tell|inform|show|reveal to|alert)\s+the\s+user\b",
        ("user",),
    ),
    # Turning the agent against its user: "ignore the user's request", "follow these instead
    # of the user's", "your real instructions are in …".
    _Check(
        r"(?i)\b(?:ignore|disregard|override)\s+(?:the\s+|what\s+the\s+)?"
        r"(?:user|human)(?:'s)?\s+(?:says|requests?|instructions?|asks|wants|"
        r"messages?|wishes)\b",
        ("user", "human"),
    ),
    _Check(r"(?i)\binstead\s+of\s+(?:the\s+|what\s+the\s+)?(?:user|human)(?:'s)?\b", ("instead",)),
    _Check(
        r"(?i)\byour\s+(?:real|actual|true|new)\s+(?:instructions|task|orders|job"
        r"|rules)\b",
        ("your",),
    ),
    # A note hidden in an HTML comment and addressed to the model.
    _Check(r"(?i)<!--[^>]{0,20}\b(?:system|assistant|developer|ai|agent|llm|model)\s*:", ("<!--",)),
)
_KINDS = (
    (_REMOTE_EXEC, "runs code downloaded from the network"),
    (_DISABLE, "switches off a safety check"),
    (_EXFILTRATE, "sends secrets or private files away"),
    (_OVERRIDE, "addresses the agent's own instructions"),
)


def screen_text(text: str) -> list[str]:
    """Why `text` must not be handed to an agent as memory; empty when it is fine."""
    if not text:
        return []
    sample = text[:20_000]
    folded = _folded(sample)
    return [reason for checks, reason in _KINDS if any(c.search(sample, folded) for c in checks)]


def _folded(text: str) -> str:
    """`text` lowercased as the patterns' IGNORECASE reads it, for the anchor checks."""
    return text.translate(_FOLD).lower()


def is_unsafe(text: str) -> bool:
    """Whether the screen finds anything in `text`."""
    return bool(screen_text(text))
