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

# A download (curl, wget, iwr, Invoke-WebRequest, fetch) whose output is run by a shell or
# interpreter, in any of the usual shapes.
_REMOTE_EXEC = (
    re.compile(
        r"(?i)\b(?:curl|wget|iwr|invoke-webrequest|invoke-restmethod|irm|fetch)\b[^\n|;&]{0,300}"
        r"\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b|\|\s*(?:sudo\s+)?(?:python[0-9.]*|node|perl"
        r"|ruby|iex|invoke-expression|powershell|pwsh)\b"
    ),
    re.compile(r"(?i)\b(?:ba|z)?sh\s+(?:-c\s+)?[\"']?<\(\s*(?:curl|wget)\b"),
    re.compile(
        r"(?i)\b(?:iex|invoke-expression)\s*\(?\s*\(?\s*(?:iwr|irm|new-object\s+net\.webclient"
        r"|invoke-webrequest|invoke-restmethod)\b"
    ),
    re.compile(
        r"(?i)\bpowershell(?:\.exe)?\s+(?:-\w+\s+)*-e(?:nc(?:odedcommand)?)?\s+[A-Za-z0-9+/=]{16,}"
    ),
    re.compile(r"(?i)\beval\s*\(?\s*[\"'`$(]*\s*(?:curl|wget)\b"),
    # The same in words: "pipe https://…/install.sh into bash", "run the script at <url>".
    re.compile(
        r"(?i)\b(?:pipe|feed|stream|send)\b[^.\n]{0,30}https?://\S+[^.\n]{0,30}"
        r"\b(?:in)?to\s+(?:(?:a|the)\s+)?(?:sudo\s+)?(?:(?:ba|z|da|k|fi)?sh|python[0-9.]*|node"
        r"|perl|ruby|powershell|pwsh)\b"
    ),
    re.compile(
        r"(?i)\b(?:run|execute|source)\s+(?:the\s+)?(?:script|installer|code|file)\s+"
        r"(?:at|from)\s+https?://"
    ),
    # The address first, then the piping: "download https://… and pipe it into python3".
    re.compile(
        r"(?i)https?://\S+[^.\n]{0,60}\b(?:pipe|feed|stream)\b[^.\n]{0,20}\b(?:in)?to\s+"
        r"(?:(?:a|the)\s+)?(?:sudo\s+)?(?:(?:ba|z|da|k|fi)?sh|python[0-9.]*|node|perl|ruby"
        r"|powershell|pwsh)\b"
    ),
    # A download run through command substitution: python -c "$(curl …)", sh -c `wget …`.
    re.compile(
        r"(?i)\b(?:(?:ba|z|da|k)?sh|python[0-9.]*|node|perl|ruby)\s+-c\s+[\"']?"
        r"(?:\$\(|`)\s*(?:curl|wget|iwr|fetch)\b"
    ),
)
# Switching off the checks that protect the user's code and machine.
_DISABLE = (
    re.compile(
        r"(?i)--no-verify\b|--insecure\b|(?<![\w-])-k\s+https?://"
        r"|verify\s*=\s*false|NODE_TLS_REJECT_UNAUTHORIZED\s*=\s*['\"]?0"
        r"|strict-ssl\s+false|sslverify\s*=?\s*false"
    ),
    re.compile(r"(?i)\bchmod\s+(?:-R\s+)?777\s+/(?:\s|$)|\brm\s+-rf\s+(?:/|~)(?:\s|$)"),
    # A rule that tells the agent to switch one off ("never disable TLS" protects instead).
    re.compile(
        r"(?i)\b(?:always|must|should)\b[^.\n]{0,40}\b(?:disable|turn off|skip|bypass|"
        r"remove|ignore)\b[^.\n]{0,40}\b(?:security|safety|sandbox|permission|antivirus|"
        r"signature|certificate|tls|ssl|pre-commit|hooks?|code review|2fa|mfa)\b"
    ),
)
# Secrets or private files sent to somewhere outside.
_EXFILTRATE = (
    re.compile(
        r"(?i)\b(?:send|post|upload|exfiltrate|forward|email|leak|copy)\b[^\n]{0,80}?(?<!\w)(?:"
        r"env(?:ironment)?(?: variables)?|\.env|secrets?|credentials?|api[ _-]?keys?|tokens?|"
        r"passwords?|ssh keys?|id_rsa|\.aws|private keys?)(?!\w)[^\n]{0,80}?"
        r"(?:https?://|\bto\s+\S+@)"
    ),
    re.compile(
        r"(?i)\b(?:curl|wget)\b[^\n]{0,200}(?:-d|--data[\w-]*|-F|-T)\s*[\"'@]?[^\n]{0,80}"
        r"(?:\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD)\w*|~/\.ssh|\.env\b|/etc/passwd|id_rsa)"
    ),
)
# Words addressed to the model about its own instructions, role or rules.
_OVERRIDE = (
    re.compile(
        r"(?i)\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}\b(?:previous|prior|"
        r"above|earlier|all|any|your|system|original)\b[^.\n]{0,30}\b(?:instructions?|prompts?|"
        r"rules|guidelines|directives|policies|messages)\b"
    ),
    re.compile(
        r"(?i)(?:^|\n|\s)(?:system|assistant|developer)\s*(?:prompt|message|note|policy)?"
        r"\s*:\s*(?:new|updated|override|you)\b"
    ),
    re.compile(r"(?i)<\s*/?\s*(?:system|system-prompt|instructions?|im_start|admin)\s*>"),
    re.compile(
        r"(?i)\b(?:from now on|henceforth|going forward)\b[^.\n]{0,20}\b(?:the |you\b|your )?"
        r"(?:assistant|ai|model|agent|claude|llm|you)\b[^.\n]{0,20}\b(?:must|shall|will|should|"
        r"are required|have to)\b"
    ),
    re.compile(
        r"(?i)\b(?:as an ai|you are now|act as|pretend to be|new (?:system )?policy)\b"
        r"[^.\n]{0,60}\b(?:must|required|allowed|unrestricted|jailbreak|dan|no rules)\b"
    ),
    re.compile(
        r"(?i)\b(?:do not|don't|never)\s+(?:tell|inform|show|reveal to|alert)\s+the\s+user\b"
    ),
    # Turning the agent against its user: "ignore the user's request", "follow these instead
    # of the user's", "your real instructions are in …".
    re.compile(
        r"(?i)\b(?:ignore|disregard|override)\s+(?:the\s+|what\s+the\s+)?"
        r"(?:user|human)(?:'s)?\s+(?:says|requests?|instructions?|asks|wants|"
        r"messages?|wishes)\b"
    ),
    re.compile(r"(?i)\binstead\s+of\s+(?:the\s+|what\s+the\s+)?(?:user|human)(?:'s)?\b"),
    re.compile(
        r"(?i)\byour\s+(?:real|actual|true|new)\s+(?:instructions|task|orders|job"
        r"|rules)\b"
    ),
    # A note hidden in an HTML comment and addressed to the model.
    re.compile(r"(?i)<!--[^>]{0,20}\b(?:system|assistant|developer|ai|agent|llm|model)\s*:"),
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
    return [reason for patterns, reason in _KINDS if any(p.search(sample) for p in patterns)]


def is_unsafe(text: str) -> bool:
    """Whether the screen finds anything in `text`."""
    return bool(screen_text(text))
