"""Units of a conversation that span turns: a reported problem, its diagnosis, the fix and
its confirmation; a proposal and the user's answer.

Owns reading the speaker turns (`extract_text.split_turns`) as a dialogue rather than as
sentences. A coding-agent session is mostly the agent's work: the user reports a symptom,
the agent explains the cause, edits, and a test run or the user confirms it. Only that
whole chain makes a bug pattern worth remembering: a cause the agent only guessed, or a fix
nobody verified, is not one. The same reading finds proposals ("Should I ...?", "I
propose ...") and whether the user's next turn accepts or rejects them.

What counts is found by the shape of the exchange (who speaks, tool calls and their
results, discourse connectives such as "because" and "so"), not by topic words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise

from app.core.similarity import STOP_WORDS
from app.engines.offline import extract_rules
from app.engines.offline.extract_text import (
    _NOISE_ALPHA_RE,
    _NOISE_OTHER_RE,
    MAX_PATTERN_LINE,
    PASTED_AFTER_RE,
    Speaker,
    Turn,
    announces_paste,
    looks_like_code,
    paste_goes_on,
    split_sentences,
)
from app.engines.offline.folding import Folded
from app.engines.offline.folding import folded as _folded

__all__ = [
    "DialogueTurn",
    "Dispute",
    "Fix",
    "Proposal",
    "Reversal",
    "find_disputes",
    "find_fixes",
    "find_proposals",
    "find_reversals",
    "read_dialogue",
]

_TOOL_CALL = re.compile(r"^\s*\[tool:\s*(?P<name>[\w.-]+)", re.IGNORECASE)
_TOOL_RESULT = re.compile(r"^\s*\[tool result:", re.IGNORECASE)
# Tools that change files (the fix) and the ones that only look.
_EDIT_TOOLS = re.compile(
    r"^(?:edit|multiedit|write|apply_patch|str_replace\w*|notebookedit)$", re.IGNORECASE
)
_EDIT_COMMAND = re.compile(r"\b(?:sed -i|git apply|patch -p|perl -pi)\b")
# A test or build run that passed, and signs that it did not.
_PASSED = re.compile(
    r"(?i)\b(?:\d+ passed|passed\b|pass\b|ok\b|success(?:ful|fully)?\b|succeeded|"
    r"no changes|errors?:? 0\b|0 errors|0 failed|build successful|test succeeded|"
    # a process's own word: "exit=0", "exit code 0", "exited with 0"
    r"exit(?:ed)?(?:\s+(?:code|status|with))?\s*[=:]?\s*0\b)|✓|✔"
)
_FAILED = re.compile(
    r"(?i)\b(?:[1-9]\d* failed|fail(?:ed|ure)?\b|error\b|errors\b|traceback|"
    r"panic|exception|fatal)"
)
_ZERO_FAIL = re.compile(r"(?i)\b(?:0 failed|errors?:? 0|0 errors|no errors?)\b")
# The user saying it works, or that it does not.
# The agent reporting a change it made: "I" and a past-tense verb ("I set", "I switched",
# "I've moved"), told apart by the verb's form.
_DID = re.compile(r"^I(?:'ve|\s+have)?\s+(?:[a-z]+ed|set|made|put|wrote|split|cut)\b")
# A report that the problem is gone: it confirms a fix and is never a rule itself.
PROBLEM_GONE = (
    r"\b(?:works now|no more|that fixed|that did it|it works"
    r"|now .{0,30}(?:works|normal|follow|right|fine)|tested\b.{0,40}\bno more)"
)
PROBLEM_GONE_RE = Folded("(?i)" + PROBLEM_GONE)
_CONFIRM = re.compile(
    r"(?i)^\W*(?:ok(?:ay)?\b|great|nice|perfect|awesome|cool|good|thanks|thank you|ty\b|"
    r"yes\b|yep\b|works?\b|fixed\b|🎉|👍|better\b)|" + PROBLEM_GONE
)
_DENY = Folded(
    r"(?i)\b(?:still (?:fail|broken|crash|happen|wrong|see)|doesn'?t work|didn'?t "
    r"(?:work|help|fix)|not fixed|same (?:error|problem)|i doubt (?:it|that))"
)
# Discourse shape of an explanation: a cause and its effect.
_CAUSAL = re.compile(
    r"(?i)\b(?:because|so (?:the|it|react|pip|terraform|the kubelet|anyone|a|every)\b|"
    r", so\b|which (?:means|makes|blocks|causes)|caus(?:es|ed|ing)|root cause|the (?:problem|"
    r"issue|bug) (?:is|was)|that'?s why|leads? to|results? in|means? (?:that )?)"
)
_HEDGE = re.compile(
    r"(?i)\b(?:maybe|might|could be|possibly|perhaps|probably|i think|not "
    r"sure|let me check|i suspect|my (?:first )?guess|i guess|guessing)\b"
)
_PLAN = Folded(
    r"(?i)^(?:(?:so )?(?:\w+ )?fix(?:es)?(?: for [\w./-]+)?:|i'?ll|i will|i'?d|i set|"
    r"i replaced|i added|i removed|i moved|fixed:?|moving|"
    r"i(?:'ve)? fixed|i (?:changed|memoized|wrapped|switched)|"
    r"setting|using|adding|wrapping|replacing|switching|removing|injecting|a fix is|the fix is|"
    r"let me (?:add|fix|change|remove|wrap|move|use|switch|replace|return|set|guard))"
    # ("Fix for prod: set NODE_OPTIONS …" names where the fix goes. After "Fix:" there is no
    # word boundary: the colon ends the label.)
    r"(?:\b|(?<=:))"
)
_ACCEPT = re.compile(
    r"(?i)^\W*(?:yes|yep|yeah|sure|ok(?:ay)?|sounds good|go ahead|do it|do both|do that|"
    r"please do|lgtm|agreed|ship it|good idea|makes sense|let'?s do (?:it|that)|👍)\b"
)
_REJECT = re.compile(
    r"(?i)^\W*(?:no|nope|nah|don'?t|let'?s not|not now|not in this|skip|"
    r"rather not|never mind|later|not yet)\b"
)
_PROPOSAL = re.compile(
    r"(?i)\b(?:should i|shall i|want me to|do you want me to|would you like me to|i propose|"
    r"i suggest|i'?d suggest|i recommend|we could|i could also|how about|"
    r"(?:one|a|my) (?:suggestion|recommendation|proposal)|i'?d (?:recommend|go with|use|send|"
    r"make|add|put|keep|pick))\b"
)


@dataclass(frozen=True)
class _Gated:
    """A case-insensitive pattern searched only in texts that hold one of `literals`.

    Every match of `pattern` contains one of the lowercase `literals` once folded
    (`_folded`), so `search` answers exactly as `pattern.search`, mostly without the regex
    engine trying every position of every sentence.
    """

    pattern: re.Pattern[str]
    literals: tuple[str, ...]

    def search(self, text: str) -> re.Match[str] | None:
        # (A substring test per literal is about twice as fast as one alternation of them.)
        low = _folded(text)
        for literal in self.literals:
            if literal in low:
                return self.pattern.search(text)
        return None


_PROPOSAL_GATED = _Gated(
    _PROPOSAL,
    (
        "should i",
        "shall i",
        "want me to",
        "like me to",
        "i propose",
        "i suggest",
        "d suggest",
        "i recommend",
        "we could",
        "i could also",
        "how about",
        "suggestion",
        "recommendation",
        "proposal",
        "i'd ",
        "id ",
    ),
)
_CAUSAL_GATED = _Gated(
    _CAUSAL,
    (
        "because",
        "so ",
        ", so",
        "which ",
        "caus",
        "the problem",
        "the issue",
        "the bug",
        "s why",
        "lead",
        "result",
        "mean",
    ),
)


@dataclass
class Fix:
    """A confirmed problem: what the user saw, why, and what fixed it."""

    symptom: str
    cause: str
    fix: str
    start: int  # first turn of the unit
    end: int  # the turn that confirmed it
    hedged: bool = False


@dataclass
class Proposal:
    """An agent's proposal and the user's verdict on it."""

    text: str
    turn: int
    accepted: bool
    reply: str = ""


@dataclass
class DialogueTurn:
    """One turn of a conversation: who spoke, where, and what kind of text it is."""

    speaker: Speaker
    index: int
    kind: str  # "prose", "call", "result"
    text: str
    tools: list[str] = field(default_factory=list)
    _split: list[str] | None = None

    @property
    def sentences(self) -> list[str]:
        """The prose's sentences (split once; several finders read them)."""
        if self._split is None:
            self._split = _sentences(self.text)
        return self._split


def _prose(lines: list[str], *, user: bool = False) -> str:
    kept: list[str] = []
    fence = pasted = comment = False
    for line in lines:
        if comment:
            comment = "-->" not in line
            continue
        if pasted:
            if paste_goes_on(line, line.strip()):
                continue
            pasted = False
        if line.lstrip().startswith("<!--"):
            comment = "-->" not in line.lstrip()[4:]
            continue  # an HTML comment: hidden markup, not the speaker's words
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        stripped = line.strip()
        if fence or stripped.startswith(">") or line.startswith(("  ", "\t")):
            continue  # quoted, fenced or indented: pasted material, not the speaker's words
        # Stack frames, log and compiler lines; one cheap test by the first character, as
        # the sentence reader does.
        if stripped[:1].isalpha():
            if len(stripped) <= MAX_PATTERN_LINE and _NOISE_ALPHA_RE.match(stripped):
                continue
        elif _NOISE_OTHER_RE.match(stripped):
            continue
        if user and announces_paste(stripped):
            pasted = True  # the lines after it are what the user pasted
        kept.append(stripped)
    return " ".join(part for part in kept if part)


def read_dialogue(turns: list[Turn]) -> list[DialogueTurn]:
    """The turns as prose / tool call / tool result, read once for every finder."""
    out: list[DialogueTurn] = []
    for turn in turns:
        first = next((line for line in turn.lines if line.strip()), "")
        joined = "\n".join(turn.lines)
        if _TOOL_RESULT.match(first):
            out.append(DialogueTurn(turn.speaker, turn.index, "result", joined))
            continue
        calls = [
            m.group("name") for line in turn.lines if "[" in line and (m := _TOOL_CALL.match(line))
        ]
        if calls and all(_TOOL_CALL.match(line) or not line.strip() for line in turn.lines):
            out.append(DialogueTurn(turn.speaker, turn.index, "call", joined, calls))
            continue
        out.append(
            DialogueTurn(
                turn.speaker,
                turn.index,
                "prose",
                _prose(turn.lines, user=turn.speaker is Speaker.USER),
            )
        )
    return out


def _passed(text: str) -> bool:
    cleaned = _ZERO_FAIL.sub(" ", text)
    return bool(_PASSED.search(text)) and not _FAILED.search(cleaned)


# Where a list item starts inside prose joined from lines ("… we settled: - Tauri 2 replaces
# Electron …. - SQLite is …"): each item is a sentence of its own.
_ITEM_START = re.compile(r"(?<=[.:;!?])\s+(?=(?:[-*•]|\d{1,2}[.)])\s+\S)")


def _unmarked(sentence: str) -> str:
    """A sentence without the list mark it opens with ("- `a.c` replaces `b.c`")."""
    return _LIST_MARK.sub("", sentence, count=1)


_LIST_MARK = re.compile(r"^(?:[-*•]|\d{1,2}[.)])\s+")


def _sentences(text: str) -> list[str]:
    return [
        part.strip() for s in split_sentences(text) for part in _ITEM_START.split(s) if part.strip()
    ]


# "Fix: 1." (a list's first number), "I'll switch to it.": a plan that says what it is only
# in the sentences after it.
_LIST_NUMBER_END = re.compile(r":\s*\d{1,2}[.)]$")
_POINTS_BACK = re.compile(r"(?i)\b(?:it|that|this|them)\W*$")
_SHORT_PLAN = 5
_NEXT_ITEM = re.compile(r"[,;]?\s+[-*•]\s+")


def _whole_plan(sentences: list[str], k: int) -> str:
    """The plan sentence `k` with the sentences it needs to say what it is."""
    if k < 0:
        return ""
    plan = sentences[k]
    numbered = _LIST_NUMBER_END.search(plan) is not None or plan.rstrip().endswith(":")
    if numbered:
        # "Fix: 1.", "I'll:", "Proposed fix:": what follows is the plan
        plan = _LIST_NUMBER_END.sub(":", plan).rstrip()
    elif len(plan.split()) >= _SHORT_PLAN or not _POINTS_BACK.search(plan):
        return plan
    for more in sentences[k + 1 : k + 3]:
        if more.rstrip().endswith("?") or re.search(r"\s\d{1,2}[.)]$", more):
            break
        more = _LIST_MARK.sub("", more)
        # (the first item of a list written on one line: "load X, - set Y, - use Z")
        plan = f"{plan} {_NEXT_ITEM.split(more, maxsplit=1)[0]}"
        if len(plan.split()) >= 2 * _SHORT_PLAN:
            break
    return plan.rstrip(" ,;")


def _diagnosis(sentences: list[str], looked: bool) -> tuple[str, str, bool] | None:
    """(cause, planned fix, hedged) of an agent turn that explains a cause.

    `looked`: the agent read code or ran something since the problem was reported.
    """
    at = next((k for k, s in enumerate(sentences) if _PLAN.match(s)), -1)
    plan = sentences[at] if at >= 0 else ""
    whole = _whole_plan(sentences, at)
    # "Confirmed root cause: `add_index` without `algorithm: :concurrently` …": the agent
    # names its finding as the cause.
    labelled = next((k for k, s in enumerate(sentences) if _ROOT_CAUSE.match(s)), -1)
    if labelled >= 0:
        # (The label stays: it is what makes the finding a cause.)
        said = sentences[labelled]
        if len(_ROOT_CAUSE.sub("", said).split()) < 5 and labelled + 1 < len(sentences):
            said = f"{said} {sentences[labelled + 1]}"
        if len(_ROOT_CAUSE.sub("", said).split()) >= 5:
            return said, whole, False
    # "That confirms it. The workflow references X@main, and upstream renamed …": what the
    # agent states right after confirming is the established cause.
    marked = next((k for k, s in enumerate(sentences) if _FOUND_IT.match(s)), -1)
    if marked >= 0:
        confirmed = [
            s
            for s in sentences[marked + 1 : marked + 4]
            if not s.rstrip().endswith("?")
            and not _PLAN.match(s)
            and not _FIRST_PERSON.match(s)
            and not _WOULD.search(s)
            and not _RULED_OUT_GATED.search(s)
            and len(s.split()) >= 5
        ]
        if confirmed:
            return " ".join(confirmed), whole, False
    # The plan is what will be done, not why it broke ("I'd switch to X so a rerun ...").
    causes = [
        _with_antecedent(sentences, k)
        for k, s in enumerate(sentences)
        if _CAUSAL_GATED.search(s)
        and not s.rstrip().endswith("?")
        and not s.startswith("(")  # an aside
        and s != plan
        and not _PLAN.match(s)
        # "…, so the token is fine": a suspect ruled out, not the cause.
        and not _RULED_OUT_GATED.search(s)
        # "Add a Dependabot config, so the SHAs get updated": advice, not a cause.
        and not is_request(s.split(maxsplit=1)[0] if s.split() else "")
        # "I could keep the old versions too, so nothing breaks": an option offered, not
        # what went wrong; so is "To stay safe I could …" and "I can either hardcode 2025
        # or compute it …".
        and not _OFFERS_AN_OPTION.match(s)
        and not _OFFERS_WITHIN.search(s)
        # "Makes sense; I'll trigger it from the confirmation screen, so it only happens
        # once": the agent taking on a request, not explaining a failure.
        and not _TAKES_IT_ON.match(s)
        # "Your shell already has a vault session, so I'll work with that": the reason for
        # the agent's next step, not for the failure.
        and not _SO_I_WILL.search(s)
        # "I'm not following it: `--exit-code 0` would make the scan never fail": why the
        # agent refuses something, not what went wrong.
        and not _REFUSES.match(s)
    ]
    if not causes:
        # "The messages do arrive, so the token is fine. The system suppresses them: …": what
        # follows a ruled-out suspect is the explanation.
        causes = [
            _with_antecedent(sentences, k + 1)
            for k, s in enumerate(sentences[:-1])
            if _RULED_OUT_GATED.search(s)
            and not sentences[k + 1].rstrip().endswith("?")
            and not _PLAN.match(sentences[k + 1])
            and len(sentences[k + 1].split()) >= 5
        ][:1]
    if not causes and plan and looked:
        # "X only exists from iOS 16. It's called unconditionally. I'll wrap it": after
        # looking at the code, what the agent states before its change is its diagnosis.
        before = sentences[: sentences.index(plan)]
        causes = [
            s
            for s in before
            if not s.rstrip().endswith("?")
            and len(s.split()) >= 5
            and not _RULED_OUT_GATED.search(s)
            and not _OFFERS_AN_OPTION.match(s)
            and not _SO_I_WILL.search(s)
        ][-2:]
    if not causes:
        return None
    hedged = all(_HEDGE.search(s) for s in causes)
    return " ".join(causes[:2]), whole, hedged


def without_cause_label(cause: str) -> str:
    """A cause without the label that named it one ("Root cause: the proxy …" → "the proxy
    …"): the item says "Root cause:" itself."""
    return _ROOT_CAUSE.sub("", cause, count=1) or cause


# "Confirmed root cause:", "Root cause —": what follows the label is the cause.
_ROOT_CAUSE = re.compile(
    r"(?i)^\W*(?:confirmed |actual |real )?root cause(?: confirmed)?[\s*_]*[:—–-]+\W*"
)


_OFFERS_AN_OPTION = re.compile(
    r"(?i)^\W*(?:(?:i|we) (?:could|can|might)|one option|option \w+:|let me|agreed\b)"
    # "- **SWR**: smaller, …": an entry of a list of options (not "**Root cause:** …")
    r"|^\W*\*\*[^*:]+\*\*(?:\s*\([^()]*\))?\s*[:—–-]"
)
_OFFERS_WITHIN = re.compile(
    r"(?i)\b(?:i|we)\s+(?:could|can|might)\s+(?:either\b|also\b|keep\b|add\b|use\b|go\b)"
    r"|\beither\b[^.;]{1,80}\bor\b"
)
_TAKES_IT_ON = re.compile(
    r"(?i)^\W*(?:ok(?:ay)?|sure|(?:that |this )?makes sense|understood|got it|sounds good|"
    r"noted|will do|good (?:call|point|idea))\b"
)
_SO_I_WILL = re.compile(
    r"(?i)\bso\s+(?:i|we)(?:'ll|'m|'d| will| am| would| can| need to| have to)\s"
    r"|\bso\s+let(?: me|'s)\b"
)
_FOUND_IT = re.compile(
    r"(?i)^\W*(?:that confirms it|confirmed|found it|there it is|that'?s the (?:culprit|cause|"
    r"problem|bug)|got it|this is the (?:culprit|cause|bug))\W*$"
)
# "I propose…", "We could…", "Let me…": the agent's next step, not what went wrong.
_FIRST_PERSON = re.compile(r"(?i)^\W*(?:i|we|let me|let'?s)\b")
_WOULD = re.compile(r"(?i)\b(?:would|could|might)\b")
_RULED_OUT = re.compile(
    r"(?i)\b(?:(?:is|are|was|were)(?:n'?t| not) (?:it|the (?:cause|problem|issue|culprit))|"
    r"(?:is|are|looks?|seems?) (?:fine|ok(?:ay)?|correct|right|good)\b|rules? (?:that |it )?out|"
    r"not (?:the|a) (?:cause|problem|culprit)|that'?s not it|"
    # "so the corrupted-DB theory is out", "so the race doesn't explain a cold launch"
    r"(?:theory|idea|hypothesis|suspect|guess) is (?:out|dead|ruled out|wrong)|"
    r"(?:theory|idea|hypothesis|guess|explanation) (?:does ?n[o']?t|doesn'?t) hold|"
    r"(?:does ?n[o']?t|can ?n[o']?t|cannot) explain)"
)
# Every match of `_RULED_OUT` holds one of these ("isnt it" holds "nt it").
_RULED_OUT_GATED = _Gated(
    _RULED_OUT,
    (
        "n't it",
        "nt it",
        "not it",
        "n't the",
        "nt the",
        "not the",
        "not a ",
        " fine",
        " ok",
        " correct",
        " right",
        " good",
        "rule",
        "theory",
        "idea",
        "hypothesis",
        "suspect",
        "guess",
        "explanation",
        "explain",
    ),
)
_ANAPHOR = re.compile(r"(?i)^\W*(?:it|its|it'?s|this|that|they|these|those|there|which)\b")


def _with_antecedent(sentences: list[str], k: int) -> str:
    """The sentence, led by the one before it when it opens by pointing back ("It gets None")."""
    if (
        k > 0
        and _ANAPHOR.match(sentences[k])
        and not sentences[k - 1].rstrip().endswith("?")
        # ("Let me test your vsync idea first. There's no way to see …": not its antecedent)
        and not _OFFERS_AN_OPTION.match(sentences[k - 1])
    ):
        return f"{sentences[k - 1]} {sentences[k]}"
    return sentences[k]


def _first_error(text: str) -> str:
    lines = [
        line.strip() for line in text.replace("[tool result:", "").splitlines() if line.strip()
    ]
    hit = next(
        (line for line in lines if _FAILED.search(_ZERO_FAIL.sub(" ", line))),
        lines[0] if lines else "",
    )
    return hit.rstrip("]").strip()


# Words that say something is wrong: a symptom sentence holds one ("fails", "missing").
_TROUBLE = re.compile(
    r"(?i)\b(?:fail\w*|error\w*|crash\w*|broke(?!rs?\b)\w*|wrong|missing|slow\w*|drop\w*|lost|"
    r"los(?:e|es|ing)|never|no longer|(?:does|do|is|are|was|were|did|can)(?:n'?t| not)|"
    r"stuck|hang\w*|hung|timing out|leak\w*|time[sd]? ?out|exception|flak\w*|empty|"
    r"duplicat\w*|twice|"
    r"doubl\w*|blank|freez\w*|stopp?\w*|instead of|only|strange|weird|odd|"
    r"unexpected\w*|keeps?|sometimes|random\w*|intermittent\w*|until|any ?more|"
    r"problem|issue|bug|"
    # "CI on main has been red since yesterday", "the deploy job is red": a failing check.
    r"(?:is|are|was|were|been|went|turned|goes|keeps|stays)\s+red|red\s+(?:since|again)|ci\s+red|"
    # "the concentrations are going to NaN after 40 s", "loss goes nan at step 3k"
    r"nans?|"
    # "the solver gives slightly different answers on the cluster vs my laptop"
    r"different\s+(?:answers|results|outputs?|numbers|values)|(?:results|answers|outputs?)\s+differ)\b"
)
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
_CORRECTS_THE_AGENT = re.compile(r"(?i)^\W*(?:(?:hmm|hm|uh|um|wait)\W+)?(?:no|nope|nah)\b")
_VAGUE_TROUBLE = frozenset({"problem", "issue", "bug", "only"})
_GREETING = re.compile(
    r"(?i)^\W*(?:hello|hi|hey|dear|good (?:morning|afternoon|evening)|greetings)\b\W*"
    r"(?:\w+\W*){0,5}$"
)
# "Need rate limiting…", "I need add a favourites feature…": asking for work.
# Words of _TROUBLE that rules and requests use as well ("money is Decimal, never float",
# "ask only after the first order"): alone they do not make a request a problem report.
_RULE_WORDS = re.compile(
    r"(?i)\b(?:never|only|instead of|until|no longer|any ?more|keeps?|sometimes|empty|"
    r"duplicat\w*|double\w*|twice|random\w*)\b"
)
_ASKS_FOR_WORK = re.compile(
    r"(?i)^\W*(?:(?:hello|hi|hey)\W+)?(?:(?:i|we)(?: really)? (?:need|want|would like)|"
    r"i'?d like|we'?d like|need|let'?s|lets|can you|could you|would you|please|pls|add|"
    r"implement|build|create|make)\b"
)


# What went wrong, told as a description: the main clause names trouble ("the build job fails
# on every pull request", "event never shows up") with no modal or imperative, so it reports a
# problem rather than setting a rule ("never edit requirements.txt", "X must never …").
_DESCRIBED_TROUBLE = Folded(
    # (whole words: "broker", "Hungarian notation", "the stuck-job reaper" report nothing)
    r"(?i)\b(?:fail(?:s|ed|ing)|errors? out|crash(?:es|ed|ing)|broke(?:n)?|wrong|missing|"
    r"slow(?:er|s)?\b|dropp(?:ed|ing)|drops|lost|los(?:es|ing)|no longer|hung|hangs|stuck|"
    r"timing out|times out|timed out|leak(?:s|ed|ing)|flaky|doubled|twice|freez(?:es|ing)|"
    # "my buffer size and recent project are gone", "the sessions disappeared"
    r"(?:is|are|was|were) (?:all )?gone|disappear(?:s|ed|ing)|vanish(?:es|ed|ing)|"
    # "we're getting double orders in prod", "the diffs are unreadable", "nobody knows which
    # notebook is the actual one"
    r"getting (?:double|duplicate)|unreadable|nobody knows|"
    # (", never defaults" ends a rule: "every JWT verification pins the list, never defaults";
    # so does a present passive: "outputs are never committed", "a posted line is never
    # updated")
    r"(?<![,;] )(?<!\bis )(?<!\bare )never (?:\w+(?:s|ed)|got|came|went|shows?)\b|"
    r"(?:does|did|is|are|was|were)(?:n'?t| not) (?:work|show|appear|arrive|load|start|run|"
    r"happen|get|save|persist|sync|send|connect|render|compile|build)\w*)(?![\w-])"
)
_DIRECTIVE = re.compile(
    r"(?i)\b(?:must|should|shall|have to|has to|need to|needs to|always|from now on|going "
    r"forward|make sure)\b|^\W*(?:please |pls )?(?:do not|don'?t|never|avoid|use|keep|put|"
    r"prefer|stop)\b"
    # "No StateNotifier, it's legacy": a ban on one named thing ("No emails arrive" is not).
    r"|^\W*no\s+[\w.`/@-]+\s*[,.;:—–]"
)
_SUBORDINATE = re.compile(
    r"(?i)(?<=\S)(?:,? (?:so|because|since|which|otherwise|or else|"
    r"instead of|if)\b|\s?[:;—–])"
)


# "If the camera is wrong, …": a condition leading the statement.
_CONDITION_LEAD = re.compile(r"(?i)^\W*(?:if|unless)\b[^,;:.]{3,80},\s*(?=\S)")


def main_clause(text: str) -> str:
    """The statement up to its first subordinate clause ("…, so …", "because …", ": …"),
    after an "if" that leads it ("If the camera is wrong, we configure Cinemachine"; a
    leading "when …" tells what happens)."""
    lead = _CONDITION_LEAD.match(text)
    if lead is not None:
        text = text[lead.end() :]
    return _SUBORDINATE.split(text, maxsplit=1)[0]


def is_directive(text: str) -> bool:
    """Whether a statement tells someone what to do or not to do."""
    return _DIRECTIVE.search(text) is not None


def is_hedged(text: str) -> bool:
    """Whether a statement only guesses ("probably", "I think", "might")."""
    return _HEDGE.search(text) is not None


_ASIDE = re.compile(r"\([^()]*\)")
# "The slow query log threshold is 200 ms", "our flaky test quarantine lives in
# tests/quarantine": a trouble word that only starts a longer name (two words or more follow
# it before the verb) names a thing, and the sentence says where or what that thing is.
_NAMED_BY_TROUBLE = re.compile(
    r"(?i)\b(?:the|our|a|an|this|that|each|every)\s+(?:slow|flaky|lost|broken|missing|stuck|"
    r"hung|dropped)\s+(?:[a-z][\w-]*\s+){2,3}(?=(?:is|are|lives|live|runs|run|sits|sit|goes|"
    r"go|stays|stay|holds|hold|uses|use)\b)"
)


def _trouble_said(text: str) -> bool:
    clause = _ASIDE.sub("", main_clause(text))
    return _DESCRIBED_TROUBLE.search(_NAMED_BY_TROUBLE.sub("the named thing ", clause))


def reports_trouble(text: str) -> bool:
    """Whether the main clause of a statement names a failure, whatever rule words it has
    ("failed again …, always on a different day's file")."""
    return _trouble_said(text)


def describes_trouble(text: str) -> bool:
    """Whether a statement reports a problem instead of stating a rule or a choice."""
    if _DIRECTIVE.search(text) and not (
        # "the build always fails on Mondays", "in staging it fails always": how often it
        # fails, no rule (which "Always fail fast on config errors" opening with it is)
        _ALWAYS_FAILS.search(text) and not _RULE_SAID.search(text)
    ):
        return False
    # (an aside in brackets is no report: "retries only for exit_status -1 (agent lost)")
    return _trouble_said(text)


_ALWAYS_FAILS = re.compile(
    r"(?i)(?<!^)(?<![.!?]\s)\balways\s+(?:fail|crash|break|hang|error|throw|time[sd]?\s+out|"
    r"freez|drop|lose|los)\w*|\b(?:fail|crash|break|hang|error|throw|freez)\w*\s+always\b"
)


# "Here's the trace from Crashlytics.": what introduces pasted material says nothing itself.
INTRODUCES_PASTE = re.compile(
    r"(?i)^\W*(?:here'?s|here is|here are|below is|attached is)\b(?![^.:]{0,60}\b(?:rule|"
    r"convention|decision)\b)"
)


# A rule's wording in a problem report: `_DIRECTIVE` without "always", which describes
# trouble as often ("tf plan always shows changes to sg-web") as it sets a rule.
_RULE_SAID = re.compile(
    r"(?i)\b(?:must|should|shall|have to|has to|need to|needs to|from now on|going forward|"
    r"make sure)\b|^\W*(?:please |pls )?(?:do not|don'?t|never|avoid|use|keep|put|prefer|stop)\b"
)


# "We're going with Mailgun on their EU region, …": a choice told, however many words the
# diagnosis repeats of it, is no symptom.
_CHOICE_SAID = re.compile(
    r"(?i)^\W*(?:so\W+)?(?:we(?:'re| are| will|'ll)|let'?s|i(?:'m| am))\s+"
    r"(?:going (?:with|to (?:use|go with|switch to|move to))|go(?:ing)? with|switch(?:ing)? to|"
    r"moving to|using)\b"
)


# "The interpolation buffer stays at 100 ms": a setting or choice kept, no trouble.
_KEPT_SAID = re.compile(
    r"(?i)^\W*(?:the\s+|our\s+)?(?!(?:it|this|that|there|everything|nothing)\b)[\w`.@/+-]+"
    r"(?:\s+[\w`.@/+-]+){0,2}\s+(?:stays|remains)\s+(?:at|on|with|as|in|the same)\b(?!\s+~)"
)


def said_as_rule(text: str) -> bool:
    """Whether a statement carries a rule's own wording ("must", "make sure", "never …")."""
    return _RULE_SAID.search(text) is not None


_GUESSES_THE_CAUSE = re.compile(
    r"(?i)^\W*(?:(?:so|and|but|also|hmm+|ok)\W+)?(?:probably|maybe|perhaps|i think|i guess|"
    r"i suspect|i bet|(?:i'?m |i am )?(?:pretty|quite|fairly) sure|my guess|could it be|"
    r"might be)\b"
)


def _states_a_rule(sentence: str) -> bool:
    """ "…, never float", "… and never pip install": a rule's own wording."""
    return extract_rules.first(extract_rules.STRONG, sentence, sentence.lower()) is not None


# "logs from payments missing in loki since yesterday, other namespaces look fine??": a
# report of trouble with a question mark, not a question (it opens with no question word
# and asks nobody: "CI is red since this morning, can you take a look?" asks for work).
_TOLD_AS_ASKED = re.compile(
    r"(?i)^(?!\W*(?:(?:also|and|so|but|hm+|ok(?:ay)?|btw|oh)\W+)*(?:why|how|what|when|where|which|"
    r"who|whom|whose|is|are|was|were|am|can|could|should|would|will|shall|do|does|did|any|"
    r"anyone|anybody|has|have|had|may|might|must|isn'?t|aren'?t|doesn'?t|don'?t|won'?t|"
    r"shouldn'?t|wouldn'?t|couldn'?t|if|whether|maybe|perhaps|or|right|correct|true)\b)"
    r"(?!.*\b(?:you|u|ya)\b)(?=.*\S\s+\S+\s+\S)"
)


_ASKS_TO_LOOK = re.compile(
    r"(?i)^\W*(?:(?:so|pls|please|can you|could you)\W+)*(?:look into|take a look|have a look|"
    r"investigate|debug|figure out|find out|dig into|check)\b"
)
# "S3 backend can lock by itself now, right?": a statement the asker wants confirmed.
_TAG_QUESTION = re.compile(
    r"(?i),\s*(?:right|correct|yes|no|true|isn'?t (?:it|that)|doesn'?t it|ok(?:ay)?)\s*\?+\W*$"
)


_REPORT_THEN_REQUEST = re.compile(
    r"(?i)^(?P<said>(?!\W*(?:why|how|what|when|where|which|who|is|are|can|could|should|would|"
    r"will|do|does|did|any)\b)\S+(?:\s+\S+){3,}?)\s*(?:[—–]|\s-|,|;)\s*(?:(?:so|and|but)\s+)?"
    r"(?:could|can|would|will)\s+(?:you|u|ya)\b[^?.!]{0,60}\?*\s*$"
)


# "It happens whenever kafka has a hiccup": what goes wrong, told by pointing back (not a
# suspect ruled out: "it's not the browser").
_POINTS_BACK_TO_TROUBLE = re.compile(
    r"(?i)^\W*(?:it|they)\b(?!'?s not\b|'re not\b| is not\b| are not\b| isn'?t\b| aren'?t\b)"
)


# Where one clause of a sentence ends and another begins: a spaced dash, a semicolon, ", and",
# ", so".
_CLAUSE_BREAK = re.compile(r"\s[—–-]+\s|;\s|,\s+(?:and|but|so)\s+")


def _symptom(text: str, cause: str = "") -> str:
    """The sentence of a problem report that says what goes wrong.

    Not the greeting or the request around it ("Good morning.", "Could you look?"): the
    sentence that names trouble, sharing most words with the diagnosis; the first such one
    on a tie.
    """
    text = re.split(r"(?i)\btraceback \(most recent", text, maxsplit=1)[0].rstrip(" :")
    if ":" in text:
        # "CI is red on main, pasting the log from the build job: Run make …": what comes
        # after the colon is what the user pasted, not their words about the problem.
        said = PASTED_AFTER_RE.split(text, maxsplit=1)[0].rstrip(" ,:")
        if len(said.split()) >= 3:
            text = said
    # "CI on main has been red since yesterday — could you look?": the report, without the
    # request that ends its sentence.
    sentences = [_REPORT_THEN_REQUEST.sub(r"\g<said>.", x) for x in _sentences(text)]
    if not sentences:
        return text
    explained = set(_WORD.findall(cause.lower()))

    def weight(sentence: str) -> tuple[int, int, int]:
        words = set(_WORD.findall(sentence.lower()))
        prose = (
            len(sentence.split()) >= 4
            and (
                not sentence.rstrip().endswith("?")
                or (
                    _TOLD_AS_ASKED.match(sentence) is not None
                    and not _TAG_QUESTION.search(sentence)
                )
            )
            and not looks_like_code(sentence)
            and not INTRODUCES_PASTE.match(sentence)
            # "I'd like to get rid of the dynamo table": work asked for, nothing gone wrong
            and not (_ASKS_FOR_WORK.match(sentence) and not _TROUBLE.search(sentence))
            # "look into it, dont touch prod": the ask, not what went wrong
            and not _ASKS_TO_LOOK.match(sentence)
            # "Probably we're missing an index …": the reporter's guess at the cause
            and not _GUESSES_THE_CAUSE.match(sentence)
            # "This project is managed with uv — run everything through `uv run`": a rule
            # said with the report, in a clause of its own
            and not any(_RULE_SAID.search(c) for c in _CLAUSE_BREAK.split(sentence)[1:])
        )
        # A named failure ("missing", "fails") says more than "I have a problem". In a rule
        # ("money is Decimal, never float") "never" and "only" set the rule, not trouble.
        said = _RULE_WORDS.sub(" ", sentence) if _states_a_rule(sentence) else sentence
        trouble = {m.group(0).lower() for m in _TROUBLE.finditer(said)}
        named = bool(trouble - _VAGUE_TROUBLE)
        vague = bool(trouble & _VAGUE_TROUBLE)
        return (int(prose), int(named), int(vague) + len(words & explained))

    content = [x for x in sentences if not _GREETING.match(x)]
    if (
        content
        and _ASKS_FOR_WORK.match(content[0])
        and not any(_TROUBLE.search(_RULE_WORDS.sub(" ", sentence)) for sentence in sentences)
    ):
        # nothing goes wrong: a request for new work, not a problem (unless it asks why)
        return _asked_why(content)
    if content and _CORRECTS_THE_AGENT.match(content[0]):
        return ""  # "hmm no, we don't use floats here": the agent's plan was wrong, not the code
    best = max(range(len(sentences)), key=lambda k: (weight(sentences[k]), -k))
    prose, named, other = weight(sentences[best])
    if (
        _RULE_SAID.search(sentences[best])
        or _CHOICE_SAID.match(sentences[best])
        or _KEPT_SAID.match(sentences[best])
        or not (prose and (named or other))
    ):
        # "money is Decimal, never float": a rule said with the report is no symptom
        return _asked_why(content)
    said = sentences[best]
    # "Order gets saved, event never shows up in kafka. It happens whenever kafka has a
    # hiccup": a sentence that points back needs the one it points to.
    if best > 0 and _POINTS_BACK_TO_TROUBLE.match(said):
        before = sentences[best - 1]
        if not (
            _GREETING.match(before)
            or before.rstrip().endswith("?")
            or _ASKS_FOR_WORK.match(before)
            or _ASKS_WHY.search(before)
        ):
            said = f"{before.rstrip()} {said}"
    # (a report told with a question mark reads as a statement in the memory)
    return re.sub(r"\s*\?+[!?]*$", ".", said.rstrip())


# The user asks for a diagnosis, not for work: "can you find out why", "figure out what
# happened", "CI is red …, can you take a look?".
_ASKS_WHY = re.compile(
    r"(?i)\b(?:why\b|what happened|what'?s (?:going on|causing)|find (?:out|the cause)|"
    r"figure out|root cause|look into|take a look|have a look|check and fix|debug|investigate)"
)
_THANKS = re.compile(r"(?i)^\W*(?:thanks|thank you|thx|cheers|regards|best)\b")
_WHY_LEAD = re.compile(
    r"(?i)^\W*(?:(?:hello|hi|hey)\W+)?(?:(?:can|could|would) you (?:please )?(?:help me )?"
    r"(?:understand|find out|figure out|tell me|explain|check|see)?\s*)?why\s+"
)


def _asked_why(sentences: list[str]) -> str:
    """What a report asking for a diagnosis says goes wrong, with no trouble word in it.

    "disk alert on orders-pg-primary: 88% used, pg_wal is at 180GB and growing … can you
    check and fix?": the turn asks why, so its first statement is the symptom ("Could you
    help me understand why our NAT costs doubled?" gives "our NAT costs doubled.")."""
    if not any(_ASKS_WHY.search(x) for x in sentences):
        return ""
    for sentence in sentences:
        lead = _WHY_LEAD.match(sentence)
        text = sentence[lead.end() :] if lead else sentence
        if (
            len(text.split()) < 4
            or looks_like_code(text)
            or INTRODUCES_PASTE.match(text)
            or _GUESSES_THE_CAUSE.match(text)
            or _RULE_SAID.search(text)
            or _THANKS.match(text)
            # the request itself ("can you take a look?"), unless it carries the symptom
            or (not lead and (text.rstrip().endswith("?") or _ASKS_FOR_WORK.match(text)))
            or (not lead and _ASKS_WHY.search(text) and len(text.split()) < 8)
        ):
            continue
        return re.sub(r"\s*\?+[!?]*$", ".", text.rstrip())
    return ""


def find_fixes(classified: list[DialogueTurn]) -> list[Fix]:
    """Problems whose cause was explained, fixed by an edit, and confirmed.

    Confirmation is a passing test/build result after the edit, or the user's next words
    saying it works; a denial ("still fails") cancels the diagnosis. A later explanation
    replaces an earlier, hedged one (the agent's first guess is often wrong).
    """
    found: list[Fix] = []
    _find_fixes(classified, found)
    # A fix with no described trouble was work the user asked for, not a bug.
    return [fix for fix in found if fix.symptom]


# What the user asks for in place of a refused plan: an order in the base form ("Do a
# per-call timeout", "just return the cached price", "instead, pin the version").
_DO_INSTEAD = re.compile(
    r"(?i)^\W*(?:(?:just|instead|then|rather)\W+)?(?:do|use|add|put|keep|set|make|return|"
    r"wrap|call|fall back|handle|catch|log|pass|move|pin|cap|limit|split|read|write|retry)\b"
)


def _firmer(cause: tuple[str, str, bool], later: tuple[str, str, bool], said: list[str]) -> bool:
    """Whether an unhedged cause outranks a later diagnosis: it was named as the root cause
    and the later one was not, or it explains (a cause and its effect) and the later turn
    only confirms it with evidence ("1,943 of 2,000 keys expire together. Confirmed.")."""
    if cause[2]:
        return False
    if _ROOT_CAUSE.match(cause[0]):
        return not _ROOT_CAUSE.match(later[0])
    # "Confirmed." after the evidence, with the fix next: the earlier theory is confirmed.
    # ("That's the cause. The receive loop …" states the cause after the mark instead.)
    marked = [k for k, s in enumerate(said) if _FOUND_IT.match(s)]
    return (
        bool(marked)
        and (marked[-1] + 1 == len(said) or bool(_PLAN.match(said[marked[-1] + 1])))
        and bool(_CAUSAL_GATED.search(cause[0]))
        and not _CAUSAL_GATED.search(later[0])
    )


def _names_in(text: str) -> set[str]:
    """The names a sentence holds: capitalised past its first word, or with a digit, a
    symbol or an inner capital ("cuDNN", "Combine", "visibility_timeout", "x/net")."""
    words = re.findall(r"[A-Za-z][\w./-]*[A-Za-z0-9]", text)
    return {
        w.lower()
        for k, w in enumerate(words)
        if len(w) > 3
        and (
            re.search(r"[\d_./-]", w) or any(ch.isupper() for ch in w[1:]) or (k and w[0].isupper())
        )
    }


def _takes_back(sentences: list[str], cause: str) -> bool:
    """Whether the agent rules out the cause it gave ("so cuDNN isn't the cause")."""
    ruling = [s for s in sentences if _RULED_OUT_GATED.search(s)]
    if not ruling:
        return False
    named = _names_in(cause)
    return any(_names_in(s) & named for s in ruling)


_REFUSES = re.compile(r"(?i)^\W*(?:i'?m not|i am not|i won'?t|i will not|i'?d rather not)\b")
_LAYS_OUT_OPTIONS = re.compile(
    r"(?i)^\W*(?:\w+\s+){0,2}(?:options|approaches|alternatives|choices|ways)(?:\s+\w+){0,4}\s*:"
)


def _nothing_wrong(report: DialogueTurn | None) -> bool:
    """Whether nothing was reported wrong: no report, or the user's words name no trouble."""
    return report is None or (report.kind == "prose" and not _TROUBLE.search(report.text))


def _find_fixes(classified: list[DialogueTurn], found: list[Fix]) -> None:
    report: DialogueTurn | None = None
    cause: tuple[str, str, bool] | None = None
    cause_turn = -1
    edited = False
    # Only a plan so far ("I'd switch to ..."): the user's "yes" then approves the plan, it
    # does not confirm a fix; the edit and a passing run (or "works now") still have to come.
    planned = False
    looked = False
    guessed = False  # the cause was given before anything was looked at
    for turn in classified:
        if turn.kind in ("call", "result"):
            looked = True
        if turn.speaker is Speaker.USER and turn.kind == "prose":
            confirms = PROBLEM_GONE_RE.search(turn.text) if planned else _CONFIRM.search(turn.text)
            if cause is not None and edited and confirms and not _DENY.search(turn.text):
                if _explained(report, cause):
                    found.append(_fix(report, cause, cause_turn, turn.index))
                cause, edited = None, False
                continue
            if _DENY.search(turn.text):
                cause, edited = None, False
                continue
            if cause is not None and planned and cause[1] and _REJECT.match(turn.text):
                # "No. I don't want a new dependency … Do a per-call timeout": the plan was
                # refused, so the fix is what the user asked for instead, once it is made.
                instead = next((s for s in turn.sentences if _DO_INSTEAD.match(s)), "")
                if instead:
                    cause, edited, planned = (cause[0], instead, cause[2]), False, False
                else:
                    cause = (cause[0], "", cause[2])
                continue
            if cause is None and (
                report is None
                or report.kind == "result"
                or not _TROUBLE.search(report.text)
                or _DESCRIBED_TROUBLE.search(turn.text)
            ):
                # A follow-up ("I already tried 16g executor memory") keeps the report that
                # described the problem; a new description of trouble replaces it.
                report, looked = turn, False
            continue
        if turn.kind == "prose" and turn.speaker is Speaker.AGENT:
            if cause is not None and _takes_back(turn.sentences, cause[0]):
                # "Still varies, and on CPU too, so cuDNN isn't the cause.": the agent's own
                # run took its theory back before anything was confirmed.
                cause, edited, planned = None, False, False
            elif (
                found
                and found[-1].end < turn.index
                and _takes_back(turn.sentences, found[-1].cause)
            ):
                # … or after the edit was already taken for the fix: that was no fix.
                found.pop()
            found_cause = _diagnosis(turn.sentences, looked)
            if (
                found_cause is not None
                and _LAYS_OUT_OPTIONS.match(turn.text)
                and _nothing_wrong(report)
            ):
                # "Two options: fixed window …, token bucket …" after "need rate limiting":
                # with nothing gone wrong, the agent lays out a design, not a cause.
                found_cause = None
            if (
                found_cause is not None
                and cause is not None
                and _firmer(cause, found_cause, turn.sentences)
            ):
                # "1,943 of 2,000 keys expire within the same 3 seconds. Confirmed.": the
                # evidence for the cause already explained, not a new one.
                found_cause = (cause[0], found_cause[1], cause[2])
            if found_cause is not None and (cause is None or cause[2] or not edited):
                cause, cause_turn = found_cause, turn.index
                guessed = not looked
                # A stated plan ("I'll remove the printf") counts as the change: agents
                # often edit in the same step as the run that verifies it.
                edited = bool(found_cause[1])
                planned = edited
            elif cause is not None and not cause[1]:
                at = next((k for k, s in enumerate(turn.sentences) if _PLAN.match(s)), -1)
                plan = _whole_plan(turn.sentences, at)
                if plan:
                    cause = (cause[0], plan, cause[2])
            elif cause is not None and edited and not planned:
                # After the edit, the agent saying what it did ("I set X=dynamic") is the
                # fix as made, better than the plan it announced before.
                done = next((s for s in turn.sentences if _DID.match(s)), "")
                if done:
                    cause = (cause[0], done, cause[2])
            continue
        if turn.kind == "call" and cause is not None:
            if any(_EDIT_TOOLS.match(t) for t in turn.tools) or _EDIT_COMMAND.search(turn.text):
                edited, planned = True, False
            continue
        if turn.kind == "result" and cause is not None and edited and _passed(turn.text):
            if _explained(report, cause):
                found.append(_fix(report, cause, cause_turn, turn.index))
            cause, edited = None, False
        elif (
            turn.kind == "result"
            and cause is not None
            and edited
            and not planned
            and guessed
            and _FAILED.search(_ZERO_FAIL.sub(" ", turn.text))
        ):
            # The run after the change still fails, and the cause was a guess made before
            # anything was read or run: that change fixed nothing, so the user's "ok, I was
            # wrong about the index" next acknowledges the failure, and the agent's next
            # diagnosis replaces the guess.
            edited = False
        elif (
            turn.kind == "result"
            and cause is None
            and _FAILED.search(_ZERO_FAIL.sub(" ", turn.text))
            # the user's own description of the problem outranks a failing run after it, as
            # does a report that asks why ("patients get the SMS two or three times … find
            # out why"): the run is the agent's reproduction of it
            and (
                report is None
                or report.kind == "result"
                or not (_TROUBLE.search(report.text) or _ASKS_WHY.search(report.text))
            )
        ):
            # A failing run after a request is the symptom ("error: gcc failed").
            report = DialogueTurn(turn.speaker, turn.index, "result", _first_error(turn.text))
    return None


# A turn that asks for work ("let's…", "can you…", "add…") rather than describing what
# happened: the first word is a request or a verb in its base form.
_REQUEST = re.compile(
    r"(?i)^\W*(?:let'?s|lets|can|could|would|please|pls|go|add|use|make|create|implement|"
    r"build|set|write|change|update|remove|rename|refactor|commit|bump|move|run|port|start|"
    r"stop|switch|replace|convert|deploy|ship|try|show|give|tell|explain|check|new|yes|no|"
    r"ok(?:ay)?|sure|thanks?)\b"
)


def is_request(word: str) -> bool:
    """Whether a turn opening with this word asks for work (a request or base-form verb)."""
    return _REQUEST.match(word) is not None


def _explained(report: DialogueTurn | None, cause: tuple[str, str, bool]) -> bool:
    """Whether a fix is a lesson: a described problem, or a failing run with a reason.

    A failing run the agent only fixed (lint, a stale test) is not a lesson, nor is work the
    user asked for; a problem the user described, or a failure whose cause the agent
    explained ("…, so pip compiles numpy from source"), is.
    """
    if report is None:
        return False
    if report.kind == "result":
        return bool(_CAUSAL_GATED.search(cause[0]))
    return len(report.text.split()) >= 4 and not _REQUEST.match(report.text)


def _fix(report: DialogueTurn | None, cause: tuple[str, str, bool], start: int, end: int) -> Fix:
    symptom = _symptom(report.text, cause[0]) if report is not None else ""
    return Fix(
        symptom=symptom,
        cause=cause[0],
        fix=cause[1],
        start=report.index if report is not None else start,
        end=end,
        hedged=cause[2],
    )


def find_proposals(classified: list[DialogueTurn]) -> list[Proposal]:
    """Agent proposals that the next user turn accepts or rejects."""
    found: list[Proposal] = []
    for i, turn in enumerate(classified):
        if turn.speaker is not Speaker.AGENT or turn.kind != "prose":
            continue
        offers = [s for s in turn.sentences if _PROPOSAL_GATED.search(s)]
        if not offers:
            continue
        reply = next((t for t in classified[i + 1 :] if t.speaker is Speaker.USER), None)
        if reply is None or reply.kind != "prose":
            continue
        # A hedged aside ("maybe later we could …") is not what was asked; the offer the
        # reply repeats words of is, else the last firm one.
        firm = [o for o in offers if not _HEDGE.search(o) and "later" not in o.lower()]
        if not firm:
            continue
        said = set(re.findall(r"\w{4,}", reply.text.lower()))
        offer = max(
            firm, key=lambda o: (len(said & set(re.findall(r"\w{4,}", o.lower()))), firm.index(o))
        )
        if _ACCEPT.match(reply.text):
            found.append(Proposal(offer, turn.index, True, reply.text))
        elif _REJECT.match(reply.text):
            found.append(Proposal(offer, turn.index, False, reply.text))
    return found


# -- reversals ---------------------------------------------------------------------------
# (one way only to split a name around its first letter or digit: the regex engine does not
# try every split of a long token when what follows fails)
_NAME = r"[`'\"]?(?P<{g}>[@./+#<>-]*\w[\w@./+#<>-]*)[`'\"]?"
# (and the adjective that only says which one: "killed our old admin panel")
_SKIP = r"(?:(?:the|our|a|an|using|doing|with|on)\s+)?(?:(?:old|current|existing|previous)\s+)?"
# "switching from X to Y", "replace X with Y": what was and what is, both named.
_FROM_TO = re.compile(
    rf"(?i)\b(?:switch(?:ing|ed)?|mov(?:e|ed|ing)|migrat(?:e|ed|ing)|going|port(?:ed|ing)?"
    rf")\s+(?:\w+\s+)?from\s+{_SKIP}{_NAME.format(g='old')}\s+(?:to|over to)\s+"
    rf"{_SKIP}{_NAME.format(g='new')}"
)
# "switch the message broker from RabbitMQ to NATS": more words name what moves, which a task
# for the session says as often as a change of choice (`Reversal.tentative`).
_FROM_TO_WIDE = re.compile(
    rf"(?i)\b(?:(?:switch(?:ing|ed)?|mov(?:e|ing)|migrat(?:e|ing)|port(?:ing)?)\s+(?:[\w.-]+\s+)"
    rf"{{2,3}}|(?:chang(?:e|ing)|convert(?:ing)?)\s+(?:[\w.-]+\s+){{1,3}})from\s+{_SKIP}"
    rf"{_NAME.format(g='old')}\s+(?:to|over to)\s+"
    rf"{_SKIP}{_NAME.format(g='new')}"
)
# "let's move background jobs to Dramatiq, Celery keeps breaking": where the work goes, then
# what fails with the choice it leaves (the other order is in `_REPLACES`).
_MOVES_THEN_COMPLAINT = re.compile(
    rf"(?i)\b(?:let'?s|we'?re|we\s+are|we'?ll|we\s+will)\s+(?:mov(?:e|ing)|switch(?:ing)?|"
    rf"migrat(?:e|ing)|port(?:ing)?)\s+(?:[\w.-]+\s+){{1,4}}?(?:to|onto|over\s+to)\s+{_SKIP}"
    rf"{_NAME.format(g='new')}(?:\s*[,;:—–-]+\s*(?:(?:since|because|as)\s+)?|\s+(?:since|"
    rf"because|as)\s+){_SKIP}"
    rf"{_NAME.format(g='old')}\s+(?:keeps|kept|is\s+too|was\s+too|can'?t|cannot|doesn'?t|"
    rf"does\s+not|won'?t|isn'?t|is\s+not|has\s+been)\b"
)
# "going to swap celery out for dramatiq", "swap pickle for msgpack": what goes and what comes.
_SWAP_FOR = re.compile(
    # (not what would happen: "we'd swap deadlocks for serialization failures")
    rf"(?i)(?<!'d\s)(?<!would\s)(?<!could\s)(?<!might\s)(?<!just\s)\bswap(?:s|ping|ped)?\s+"
    rf"(?:out\s+)?{_SKIP}{_NAME.format(g='old')}\s+(?:out\s+)?"
    rf"(?:for|with)\s+{_SKIP}{_NAME.format(g='new')}"
)
# (a pronoun or a time is no choice: "do it now, not later")
_NOT_A_THING = r"(?!(?:it|this|that|them|one|later|yet|before|again|today|tomorrow|soon|ever)\b)"
# "background jobs now run on Dramatiq, not Celery": the choice now, and the one it is not.
_NOW_NOT = re.compile(
    rf"(?i)(?:\bnow\b[^.;!?]{{0,60}}?\s{_SKIP}{_NAME.format(g='new')}|\s{_SKIP}{_NOT_A_THING}"
    rf"{_NAME.format(g='new').replace('(?P<new>', '(?P<new2>')}\s+now)\s*,\s*(?:and\s+)?not\s+"
    rf"{_SKIP}{_NOT_A_THING}{_NAME.format(g='old')}\W*$"
)


def _replacing(agent: bool, low: str) -> tuple[re.Pattern[str], ...]:
    """The change patterns to try on a sentence (`low`, folded) that the gate let through."""
    if agent:
        return _AGENT_REPLACES
    return (*_REPLACES, _NOW_NOT) if "now" in low else _REPLACES


def _tentative(gate: bool, low: str) -> tuple[re.Pattern[str], ...]:
    """The looser change patterns whose words the sentence (`low`, folded) holds: changes a
    task for the session says in the same words, held until a choice they name is in force
    (`Reversal.tentative`)."""
    found: tuple[re.Pattern[str], ...] = (_FROM_TO_WIDE,) if gate else ()
    if "to" in low and any(w in low for w in ("mov", "switch", "migrat", "port")):
        found += (_MOVES_THEN_COMPLAINT,)
    if "swap" in low:
        found += (_SWAP_FOR,)
    return found


# The choice a change puts in place, told as the one now: "logging is pino now", "everything
# deploys to Fly.io now", "the team went with pino", "pnpm instead", "ClickHouse it is".
_NOW_NAMED = (
    re.compile(
        rf"(?i)(?:\b(?:is|are)\s+{_NAME.format(g='new')}\s+(?:now|from now on|going forward)"
        rf"|\bto\s+{_NAME.format(g='new')}\s+(?:now|instead))\b".replace("(?P<new>", "(?P<new1>", 1)
    ),
    re.compile(rf"(?i){_NAME.format(g='new')}\s+(?:instead(?!\s+of)|it is)\b"),
    # (a verb of choosing names the choice, followed by where it goes or the clause's end)
    re.compile(
        rf"(?i)\b(?:went with|go(?:ing)? with|use|switched to|moved to)\s+(?:the\s+)?"
        rf"{_NAME.format(g='new')}(?=\s*(?:[,.;!]|$)|\s+(?:for|instead|now|everywhere|"
        rf"from now on|going forward|with|on|in|at|across|via)\b)"
    ),
)
_NOW_WORDS = frozenset({"now", "instead", "it", "here", "there", "fine", "done", "out", "gone"})
_REPLACE_WITH = re.compile(
    rf"(?i)\breplac(?:e|ing|ed)\s+{_SKIP}{_NAME.format(g='old')}\s+(?:with|by)\s+"
    rf"{_SKIP}{_NAME.format(g='new')}"
)
# "gh-ost, which reads the binlog instead of using triggers": what is turned down in passing,
# often no choice of its own.
_INSTEAD_OF = re.compile(rf"(?i)\b(?:instead\s+of|rather\s+than)\s+{_SKIP}{_NAME.format(g='old')}")
_REPLACES = (
    # "scratch what I said about lib/providers/", "forget what I wrote about the cron"
    re.compile(
        rf"(?i)\b(?:scratch|forget|ignore|disregard)\s+what\s+(?:i|we)\s+(?:said|wrote|"
        rf"suggested|proposed)\s+(?:about|on|regarding)\s+{_SKIP}{_NAME.format(g='old')}"
    ),
    _FROM_TO,
    _REPLACE_WITH,
    re.compile(
        rf"(?i)\b(?:not\s+(?:using|doing|on)|no\s+longer\s+(?:using|use|on|(?:go(?:es)?|run(?:s)?|"
        rf"live(?:s)?|sit(?:s)?|get(?:s)?\s+stored|(?:is|are)\s+(?:stored|kept|hosted))\s+"
        rf"(?:to|on|in|at|through|via))|stop(?:ped)?\s+"
        # ("we stopped storing Paris local time": what is no longer done with a name)
        rf"using|stopp(?:ed|ing)\s+(?!using\b)[a-z]{{2,}}ing(?=\s+(?:(?:the|our)\s+)?"
        rf"(?-i:[`'\"]?[A-Z0-9]))|"
        rf"(?:mov|migrat)(?:e|ed|ing)\s+(?:off|away\s+from)(?:\s+of)?|"
        # ("dropped like 8% week over week" is a number going down, not a choice dropped)
        rf"dropp?(?:ed|ing)?(?!\s+(?:like|by|about|around|almost|nearly|to|from|below|under)\b|\s+~?\d)|"
        rf"got\s+rid\s+of|getting\s+rid"
        rf"\s+of|ditch(?:ed|ing)?|moving\s+away\s+from|"
        # "scratch zerolog", not "the scratch dataset" or "Scratch is not backed up" (the word
        # as a name)
        rf"(?<!the\s)(?<!a\s)(?<!our\s)(?<!/)scratch(?!\s+(?:is|are|was|were|has|space|disk|what|"
        rf"dataset|bucket|storage|volume|dir\w*|file\w*|partition)\b))\s+{_SKIP}"
        rf"{_NAME.format(g='old')}"
    ),
    _INSTEAD_OF,
    # "we are not writing HDF5 anymore, Zarr instead": what the work no longer makes, when
    # "anymore" says it is a change
    re.compile(
        rf"(?i)\bnot\s+(?:writing|running|shipping|storing|generating|publishing|deploying)\s+"
        rf"{_SKIP}{_NAME.format(g='old')}\s+(?:any\s?more|from\s+now\s+on)\b"
    ),
    # "turns out celery can't do cron-like schedules, so we're switching the jobs to dramatiq":
    # what fails, then what the work moves to
    re.compile(
        rf"(?i)^\W*(?:(?:turns out|so|well|honestly|ok(?:ay)?|and|but)\W+)*{_SKIP}"
        rf"{_NAME.format(g='old')}\s+(?:can'?t|cannot|doesn'?t|does not|won'?t|isn'?t|is not|"
        rf"keeps|kept|is too|was too)\b[^.;]*?[,;]\s*(?:so\s+)?(?:we'?re|we are|we'?ll|we will|"
        rf"let'?s|i'?m)\s+(?:switching|moving|migrating|porting)\b[^.;]{{0,40}}?\bto\s+{_SKIP}"
        rf"{_NAME.format(g='new')}"
    ),
    # "we've retired Mailgun", "no more pickle", "forget Liquibase", "ripped out mkdocs"
    re.compile(
        rf"(?i)\b(?:retir(?:e|ed|ing)|no\s+more|(?<!-)(?<!not\s)(?<!n't\s)(?<!dont\s)(?<!never\s)forget(?:\s+about)?"
        rf"(?!\s+(?:what|that|it|this|"
        rf"everything|about\s+what)\b)|ripp(?:ed|ing)\s+out|rip\s+out|we(?:'ve|\s+have)?\s+"
        rf"removed|kill(?:ed|ing)?|abandon(?:ed|ing)?|sunset(?:ted|ting)?|"
        rf"gave\s+up\s+on|giving\s+up\s+on|phas(?:ed|ing)\s+out)\s+{_SKIP}"
        rf"{_NAME.format(g='old')}"
    ),
    # "axios is out", "Joda is deprecated here", "Zustand was a mistake", "wkhtmltopdf got
    # dropped from the base image"
    re.compile(
        rf"(?i)(?:^|[,.;:]\s*|\b(?:and|but|so)\s+)(?:(?:in\s+hindsight|looking\s+back|honestly|"
        rf"frankly|tbh)\W+)?{_SKIP}{_NAME.format(g='old')}(?:'s(?=\s+(?:out|dead)\b)|\s+(?:is|was|"
        rf"are|were|got|has\s+been|have\s+been))\s+(?:out|gone|dead|deprecated|a\s+mistake|"
        rf"(?:a|the)\s+(?:wrong|bad)\s+(?:call|choice|pick|decision)|no\s+"
        rf"longer\s+used|retired|dropped|removed|ripped\s+out|phased\s+out|replaced|"
        rf"cancel(?:l)?ed|discontinued|shut\s+down|history)\b"
    ),
    # "we're moving the invoice jobs off Celery and onto Dramatiq": what moves may sit between
    # the verb and "off".
    re.compile(
        rf"(?i)\b(?:mov|migrat|port|switch)(?:e|ed|es|ing)?\s+(?:[\w-]+\s+){{1,4}}?(?:off(?:\s+of)?|"
        rf"away\s+from)\s+{_SKIP}{_NAME.format(g='old')}"
    ),
    # "Preact gets ripped out", "moment will be removed" (not "the error goes away", "the
    # cache gets out of sync": trouble gone or come)
    re.compile(
        rf"(?i)(?:^|[,.;:]\s*|\b(?:and|but|so)\s+){_SKIP}{_NAME.format(g='old')}\s+(?:gets|get|"
        rf"will\s+be|is\s+being|are\s+being|should\s+be)\s+(?:ripped\s+out|removed|dropped|"
        rf"retired|phased\s+out|out(?!\s+of))\b"
    ),
    # "we're done with dynamodb for state locking"
    re.compile(
        rf"(?i)\b(?:we'?re|we\s+are|i'?m|i\s+am)\s+(?:done|finished|through)\s+with\s+{_SKIP}"
        rf"{_NAME.format(g='old')}"
    ),
    # "I pulled psycopg2 out of requirements", "let's get RTT out of there" (not "users get
    # logged out", "Yup is getting pulled out of admin")
    re.compile(
        rf"(?i)\b(?:pull(?:ed|ing)?|get(?:ting)?)\s+{_SKIP}(?![\w-]+ed\b){_NAME.format(g='old')}"
        rf"\s+out\s+of\b"
    ),
    # "we're leaving gorilla/mux behind", "moving on from Travis"
    re.compile(rf"(?i)\bleav(?:e|es|ing)\s+{_SKIP}{_NAME.format(g='old')}\s+behind\b"),
    re.compile(rf"(?i)\bmov(?:e|ed|ing)\s+on\s+from\s+{_SKIP}{_NAME.format(g='old')}"),
    # "MkDocs Material replaces Docusaurus", "(it used to be Europe/Berlin local time)"
    re.compile(
        rf"(?i)\b(?:replaces|replacing|supersedes|superseding|used\s+to\s+be|was\s+"
        rf"previously)\s+{_SKIP}{_NAME.format(g='old')}"
    ),
    # "Tailwind replaced Bootstrap in the admin UI", "RDS snapshots replaced the pg_dump
    # thing": a named thing that took the old one's place (not "I just replaced the thumb",
    # one piece of work; "replaced X with Y" is `_REPLACE_WITH`)
    re.compile(
        rf"(?i)(?:^|[,.;:]\s*|\b(?:and|but|so)\s+){_SKIP}(?!(?:i|we|you|they|he|she|it|that|"
        rf"this|someone|somebody)\b)(?:[\w.+#/@-]+\s+){{1,2}}(?:has\s+|have\s+)?replaced\s+"
        rf"(?!(?:by|with)\b){_SKIP}{_NAME.format(g='old')}"
    ),
    # "let's not do the lifecycle rule after all", "we won't need Redis after all": a choice
    # of this conversation or an earlier one, taken back.
    re.compile(
        rf"(?i)\b(?:let'?s\s+not|we\s+won'?t|we\s+will\s+not|we'?re\s+not\s+going\s+to|"
        rf"don'?t)\s+(?:do|use|go\s+with|add|keep|bother\s+with|need)\s+{_SKIP}"
        rf"{_NAME.format(g='old')}\b[^.;!?]{{0,60}}?\bafter\s+all\b"
    ),
)
# What a reversal may name by pointing back ("we're moving off it").
_POINTERS = frozenset({"it", "that", "this", "them"})
# The subject of a sentence that judges something ("the redux toolkit setup is way too much
# ceremony", "the amplitude thing didn't survive the budget review").
_JUDGED_SUBJECT = re.compile(
    r"(?i)(?:^|\band\s+|\bso\s+|,\s*)(?:the|our|this|that)\s+(?P<np>(?:[\w.+#/@-]+\s+){0,2}?"
    r"[\w.+#/@-]+)\s+(?:is|was|has\s+been|feels|felt|turned\s+out|keeps?|kept|"
    r"did\s*n[o']?t|does\s*n[o']?t|is\s*n[o']?t|was\s*n[o']?t)\b"
)
# "and styled-components is fighting us every step of the way": a name written as one (a dot
# or a dash inside it) needs no article to be the subject judged.
_JUDGED_NAME = re.compile(
    r"(?:^|\band\s+|\bso\s+|[,;:—–]\s*)(?P<np>[A-Za-z][\w+#@]*[-.][\w+#@.-]*[\w+#])\s+"
    r"(?:is|was|has\s+been|keeps?|kept)\b"
)
# Heads that say what kind of thing the name is, not which.
_KIND_WORDS = frozenset(
    {
        "setup",
        "thing",
        "stuff",
        "approach",
        "integration",
        "config",
        "library",
        "lib",
        "package",
        "part",
        "service",
        "solution",
        "tool",
        "plugin",
        "stack",
        "way",
        "idea",
        "one",
    }
)


def points_back(sentence: str) -> bool:
    """Whether a sentence drops or replaces something it only points to ("we're moving off
    it", "PostHog replaces it")."""
    return _REPLACE_GATE.search(sentence) is not None and any(
        m.group("old").lower().strip(".,") in _POINTERS
        for rx in _REPLACES
        for m in rx.finditer(sentence)
    )


_PLAIN_ADJECTIVES = frozenset(
    {"old", "new", "current", "existing", "whole", "entire", "legacy", "custom", "homegrown"}
)


# A sentence that opens with a name and goes on about it before pointing back to it.
_OPENING_NAME = re.compile(
    # (a name: capitalised, or with a digit or a symbol in it, "psycopg2")
    r"^\W*`?(?P<np>[A-Z][\w.+#-]*[\w+#]|[a-z][\w.+#-]*[\d_+#][\w.+#-]*)`?\s+"
    r"(?:only\s+|also\s+|just\s+|still\s+)?[a-z]+\b"
    # "…, so it's out", "…, so I pulled it out of requirements"
    r"[^.;]*[,;]\s*(?:so|and|which means)\s+(?:(?:[Ii]|[Ww]e)\s+[a-z]+\s+)?(?:it|that)\b"
)


def _antecedent(before: list[str]) -> tuple[str, str]:
    """The name a pointing word stands for: the judged subject of the nearest sentence
    before it in the same turn, without its kind word ("the redux toolkit setup" gives
    "redux toolkit"), with that sentence; or two empty strings."""
    for sentence in reversed(before):
        found = _JUDGED_SUBJECT.search(sentence) or _JUDGED_NAME.search(sentence)
        if found is None:
            continue
        words = found.group("np").split()
        while words and words[-1].lower() in _KIND_WORDS:
            words.pop()
        if any(w.lower() not in _PLAIN_ADJECTIVES for w in words) and words[0].lower() not in (
            _NOT_NAMES
        ):
            return sentence, " ".join(words)
    return "", ""


# Someone other than the speaker (and their team as a whole) doing or wanting the change.
_HEARSAY = re.compile(
    r"(?i)\b(?:people|someone|somebody|folks|others|half (?:of )?(?:my|our|the) \w+|some of (?:my|"
    r"our|the) \w+)\b[^,.;]*?\b(?:want|wants|wanted|keep|keeps|kept|are|is|were|was|suggest|"
    r"suggests|suggested|propose|proposes|proposed|think|thinks|say|says|said|\w+ing)\b"
)

# Someone's opinion of a change, not the change: "Marta thinks we should drop sidekiq and use
# good_job, she will write it up next week", "the platform team suggested moving off Jenkins".
# (What the speaker thinks, or takes up from the agent, "as you suggested", is theirs.)
_OPINION = re.compile(
    r"(?i)\b(?!(?:i|we|you)\b)[\w-]+\s+(?:(?:really|also|still|now)\s+)?(?:thinks|thought|"
    r"suggests|suggested|proposes|proposed|recommends|recommended)\b"
)


def _said_by_others(sentence: str, match: re.Match[str]) -> bool:
    """Whether the change `match` found is what others do or want, by the sentence's words
    up to the change (its own verb included: "people switching from dbt to SQLMesh")."""
    if _NOT_DONE.search(sentence, max(0, match.start() - 30), match.start()):
        return True  # "Nobody dropped the slot.", "we never ditched X": nothing changed
    if not match.group(0).lower().startswith(("not", "no ")) and _THING_DOES.search(
        sentence, max(0, match.start() - 40), match.start()
    ):
        return True  # "the controllers are dropping CAN frames": what a thing does
    found = _HEARSAY.search(sentence, 0, match.end())
    if found is None:
        found = _OPINION.search(sentence, 0, match.end())
    return found is not None and found.start() < match.start()


# A change verb after a subject that is no person of the conversation and a form of "be",
# "keep" or "get": "the controllers are dropping CAN frames again", "bitbang with irqs off is
# obviously killing usb", "the app gets killed in the background" tell what a thing does or
# suffers, where "we're dropping X", "the team is moving off X" and "drop X" are a choice.
_THING_DOES = re.compile(
    r"(?i)(?<![\w'])(?!(?:we|i|you|us|let|team|company|org|everyone|everybody)\b)[\w-]+\s+"
    r"(?:is|are|was|were|keeps|kept|gets|got|"
    r"has been|have been)\s+(?:\w+ly\s+|still\s+|just\s+|now\s+|also\s+)?$"
    # "after a merchandiser replaces the image", "when the user removes a card": a clause of
    # time whose subject is someone outside the conversation tells how things go
    r"|(?<![\w'])(?:after|when|whenever|once|each time|every time|until|before|as soon as)\s+"
    r"(?:a|an|the|some|any|every|each|our|their|my|your)\s+"
    r"(?!(?:team|company|org)\b)[\w-]+\s+(?:\w+ly\s+)?$"
    # "the deep-offset thing is exactly what killed our old admin panel": what a thing did
    r"|(?<![\w'])(?:what|which|that)\s+(?:\w+ly\s+)?$"
)
_NOT_DONE = re.compile(
    r"(?i)\b(?:nobody|no one|never|did ?n[o']?t|have ?n[o']?t|has ?n[o']?t|had ?n[o']?t|"
    r"was ?n[o']?t|were ?n[o']?t|"
    # "we are not dropping sidekiq anytime soon", "we won't move off it": no change either
    r"(?:are|is|am)\s+not|aren'?t|isn'?t|'re\s+not|'m\s+not|won'?t|will\s+not|not\s+going\s+to)"
    r"\s+(?:\w+\s+)?$"
)


# Cheap test before the patterns above: one of their words must be there.
_REPLACE_GATE = Folded(
    r"(?i)\b(?:from|replac|not|no longer|stop|off|drop|got|getting|ditch|"
    r"away|scratch|instead|rather|retir|no more|forget|rip|remov|kill|abandon|sunset|"
    r"gave up|giving up|phas|is out|was out|gone|dead|deprecated|mistake|wrong call|wrong choice|"
    r"bad call|bad choice|wrong pick|bad pick|wrong decision|bad decision|supersede|used to|"
    r"after all|"
    r"behind|moving on|moved on|move on|done with|finished with|through with|out\b|switching|"
    r"migrating|cancel|discontinu|shut down|history)"
)
# What a speaker says while thinking, before taking something back: "hmm, scratch that",
# "whoa wait, actually …", "no, wait".
_MUSING = r"(?:(?:hmm+|hm+|oh|ah|ok(?:ay)?|um+|uh+|well|whoa|wait|yes|yeah|no)\W+){0,3}"
# What takes back what the speaker said last: "scratch that", "no wait", "never mind".
_TAKE_BACK = r"scratch that|no,? wait|wait,? no|never ?mind|actually,? no"
_RETRACTS = re.compile(rf"(?i)^\W*{_MUSING}(?:actually\W+)?(?:{_TAKE_BACK})\b")
# A correction without naming what it replaces ("actually deploys can happen any weekday").
_CORRECTION = Folded(
    r"(?i)^\W*(?:actually|scratch that|correction|change of plan|no,? wait|wait,? no"
    r"|on (?:a )?second thoughts?)\b|\b(?:changed (?:the|"
    r"our) (?:convention|rule|mind|plan|policy)|we changed|from now on|not anymore|any ?more)\b"
)
_FROM_NOW_ON = re.compile(r"(?i)\bfrom now on\b")
# "once nothing imports the store anymore, delete it": a condition for a step of the work,
# not a correction of anything; nor is a clause describing a thing ("it jumps to #content,
# which doesn't exist anymore since the refactor").
_WHEN_NO_MORE = re.compile(
    r"(?i)\b(?:once|when|whenever|until|after|as soon as|which|where|who)\b[^,.;:]*?"
    r"\bany ?more\b"
    # "that target does not even exist in our Makefile anymore", "most of that does not
    # apply to us anymore": what is gone or beside the point, not a choice reversed.
    r"|\b(?:n'?t|not) (?:even )?(?:exists?|apply|applies)\b[^,.;:]*?\bany ?more\b"
)


def _corrects(sentence: str) -> bool:
    """Whether a sentence corrects something said before, without naming it."""
    if not _CORRECTION.search(sentence):
        return False
    # (The condition can only matter where "anymore" is what made it a correction.)
    return "more" not in sentence.lower() or bool(
        _CORRECTION.search(_WHEN_NO_MORE.sub(" ", sentence))
    )


# ("any" and "earlier" are the tags of a reversal that names nothing.)
_NOT_NAMES = frozenset(
    {"it", "that", "this", "them", "there", "now", "everything", "all", "any", "earlier"}
    # (nor the tag of one whose words name no thing)
    | {"unnamed"}
    # Words that join or place, never a name: "the app was killed during write", "gets
    # dropped when the PR closes".
    | {
        *("in", "at", "during", "by", "for", "to", "into", "onto", "without", "after"),
        *("before", "over", "under", "through", "when", "while", "because", "if", "again"),
        *("too", "and", "or", "but", "so", "as", "since", "until", "of", "up", "down", "then"),
        # nor a person or a quantity: "finance will kill me", "instead of us finding out"
        *("i", "me", "us", "we", "you", "him", "her", "they", "some", "every", "each"),
        *("whatever", "whichever", "many", "much", "few", "several"),
    }
)


@dataclass
class Reversal:
    """A user statement that replaces an earlier choice."""

    text: str
    turn: int
    old: list[str]  # names of what it replaces; empty: whatever shares its subject
    # Only "from now on" marks it: a rule for the future, which replaces what earlier
    # threads said on its subject but restates, rather than reverses, what this one said.
    earlier_only: bool = False
    # The sentence a pointing word was read from ("the redux toolkit setup is way too much
    # ceremony" before "we're moving off it"): why the choice goes, not a rule of its own.
    reason: str = ""
    # What comes instead, when the sentence names it ("switch from X to Y", "replace X with
    # Y"): with one old name, the item's title says what replaced what.
    new: list[str] = field(default_factory=list)
    # The sentence that takes back what the speaker said last ("hmm, scratch that."), when
    # it opens the reversal; the statement it takes back is no item (`_retracted`).
    retracts: str = ""
    # Read only by a looser pattern ("switch the message broker from RabbitMQ to NATS" may
    # be a task for this session as well as a change of a standing choice): alone it waits
    # for review, and it is committed once a choice it names is in force in the branch.
    tentative: bool = False


# A sentence with no word of a decision in it: what it says is gone is news, not a choice.
_REPORTS_ONLY = re.compile(
    r"(?i)^(?!.*\b(?:let'?s|we(?:'re| are)? (?:moving|switching|dropping|going)|use|rule|should|"
    r"must|always|never|from now|instead|rather|decid\w*|go with|it is)\b)"
)


_CHANGE_MARKER = Folded(
    r"(?i)\b(?:change|changes) of (?:plan|plans|direction|course)\b|\bplan changed\b|\bnew plan\b"
)
_NAMES_IT = re.compile(r"(?i)\b(?:it|that|them|this)\b")
# (what the work moves to, named: "port it to typer", "move the jobs over to Dramatiq")
_MOVED_TO = re.compile(rf"(?i)\b(?:onto|to|over to)\s+{_SKIP}{_NAME.format(g='new')}")
_MOVES_TO = re.compile(
    r"(?i)\b(?:move|moves|moving|go|goes|going|port|porting|switch|switches|switching|migrate|"
    r"migrates|migrating)\s+(?:[\w.-]+\s+){0,4}?(?:onto|to|over to)\s+\S"
)


# What an agent reports it replaced ("Biome now does both, replacing ESLint and Prettier",
# "switched from X to Y", "replaced X with Y"): only the explicit verbs.
# A name in a list, before the last one.
_LISTED = r"[`'\"]?[\w@./+#<>-]+[`'\"]?"
_AGENT_REPLACES = (
    _FROM_TO,
    _REPLACE_WITH,
    re.compile(
        rf"(?i)\b(?:replaces|replacing|supersedes|superseding)\s+{_SKIP}{_NAME.format(g='old')}"
    ),
    # … and the last of several it names: "replacing ESLint and Prettier", "replaces X, Y
    # and Z"
    re.compile(
        rf"(?i)\b(?:replaces|replacing|supersedes|superseding)\s+{_SKIP}{_LISTED}"
        rf"(?:,\s*{_LISTED})*,?\s+and\s+{_SKIP}{_NAME.format(g='old')}"
    ),
)
# An option or a proposal ("I'd switch to …", "One option: replace QSettings with …") is not
# what was done.
_OFFERED = re.compile(
    r"(?i)\b(?:i'?d|i would|i could|we could|you could|options?|i (?:suggest|propose|recommend)|"
    r"suggestion|proposal|if you|want me to|should i|shall i)\b"
)


_GO_ON = re.compile(r"(?i)^\W*(?:great|perfect|nice|good|thanks|thank you|merge it|lgtm)\b")


def _accepted_turns(classified: list[DialogueTurn]) -> set[int]:
    """Positions of the agent's prose turns that the user's next words accept ("great,
    merge it"): the last one before each such reply, which is what the user answers."""
    accepted: set[int] = set()
    reply: DialogueTurn | None = None
    for n in range(len(classified) - 1, -1, -1):
        turn = classified[n]
        if turn.kind != "prose":
            continue
        if turn.speaker is Speaker.USER:
            reply = turn
        elif turn.speaker is Speaker.AGENT and reply is not None:
            if _ACCEPT.match(reply.text) or _GO_ON.match(reply.text):
                accepted.add(n)
            reply = None
    return accepted


# "Ci takes 14 min on every PR", "Spark job sessions_enrich takes 3h, used to be 25min": a
# main clause that gives how long something takes reports a measurement, not a choice.
_MEASURES = re.compile(
    r"(?i)^\W*(?:[\w`'./-]+\s+){1,5}(?:takes?|took|is taking|are taking)\s+"
    r"(?:~|about\s+|like\s+|almost\s+|over\s+|under\s+|up to\s+)?\d"
)


def measures(sentence: str) -> bool:
    """Whether the main clause of a sentence reports how long something takes."""
    low = sentence.lower()
    if "tak" not in low and "took" not in low:
        return False  # (most sentences: no clause to read)
    return _MEASURES.match(main_clause(sentence)) is not None


# A sentence that opens by not knowing or by putting the question off.
_UNSURE = re.compile(
    r"(?i)^\W*(?:(?:hm+|well|uh+|honestly|tbh)\W+)*(?:dunno|(?:i\s+)?(?:don'?t|do not)\s+"
    r"know|not sure|no idea|let me think|lemme think|(?:i\s+)?need to think)\b"
    # ("not sure if you saw, but we moved off Heroku" tells a change all the same)
    r"(?!\s+(?:if|whether|why|how|what|where|when|who)\b)"
)


def find_reversals(classified: list[DialogueTurn]) -> list[Reversal]:
    """User sentences that drop or replace an earlier choice, with what they replace, and the
    agent's report of a replacement it made ("Biome now does both, replacing ESLint and
    Prettier as we agreed") once the user accepts it ("great, merge it")."""
    found: list[Reversal] = []
    accepted = _accepted_turns(classified)
    for n, turn in enumerate(classified):
        if turn.kind != "prose":
            continue
        # What the agent reports it replaced counts once the user accepts the report.
        if turn.speaker is not Speaker.USER and n not in accepted:
            continue
        sentences = turn.sentences
        joined_next = -1
        for k, sentence in enumerate(sentences):
            if sentence.rstrip().endswith("?") or k == joined_next or measures(sentence):
                continue
            if _UNSURE.match(sentence):
                continue  # "hm dunno, let me think about that, it's not on the list": no change
            agent = turn.speaker is not Speaker.USER
            gate = _REPLACE_GATE.search(sentence)
            low = _folded(sentence)
            matches = (
                [
                    m
                    for rx in _replacing(agent, low)
                    for m in rx.finditer(sentence)
                    # "people on linkedin switching from dbt to SQLMesh", "half my team wants
                    # to drop helm": what others do or want is no choice of the speaker's.
                    if not _said_by_others(sentence, m)
                ]
                if gate
                else []
            )
            tentative = False
            if not matches and not agent:
                matches = [
                    m
                    for rx in _tentative(gate, low)
                    for m in rx.finditer(sentence)
                    if not _said_by_others(sentence, m)
                ]
                tentative = bool(matches)
            old = [m.group("old").strip("`'\".,") for m in matches]
            reason = ""
            resolved = ""
            guessed = False  # what went was read from a sentence before the pointing word
            if not agent and any(o.lower() in _POINTERS for o in old):
                # "the redux toolkit setup is way too much ceremony. … we're moving off it."
                reason, resolved = _antecedent(sentences[max(0, k - 2) : k])
                guessed = bool(resolved)
                if not resolved:
                    # "Postmark only processes in the US, so it's out": the name the sentence
                    # opens with
                    opening = _OPENING_NAME.match(sentence)
                    if opening is not None and opening.group("np").lower() not in (
                        STOP_WORDS | _NOT_NAMES
                    ):
                        resolved = opening.group("np")
                if resolved:
                    # (its first distinctive word names it, as the other patterns' names do)
                    old = [
                        *old,
                        next(w for w in resolved.split() if w.lower() not in _PLAIN_ADJECTIVES),
                    ]
                    at = next(
                        m.start("old")
                        for m in matches
                        if m.group("old").lower().strip(".,") in _POINTERS
                    )
                    end = at + len(re.match(r"\w+", sentence[at:])[0])  # type: ignore[index]
                    sentence = f"{sentence[:at]}{resolved}{sentence[end:]}"
            old = [o for o in old if o.lower() not in _NOT_NAMES]
            if agent:
                # A name, not a word: capitalised, or with a digit, a symbol or code quotes.
                old = [o for o in old if re.search(r"[A-Z\d_./@+-]", o)]
                if not old or _OFFERED.search(sentence) or _HEDGE.search(sentence):
                    continue
            retracts = sentence if not agent and _RETRACTS.match(sentence) else ""
            if not old and _only_marker(sentence):
                # "hmm, scratch that. Use RQ instead, it's simpler.": the marker only takes
                # back; what comes instead is said after it, often after the reason ("Actually
                # scratch that. Doubling the nightly isn't worth it … Let's do it at submit
                # time instead"), and the rules read it there.
                if retracts:
                    found.append(Reversal("", turn.index, [], retracts=retracts))
                continue
            if not old and not _corrects(sentence):
                if not _CHANGE_MARKER.search(sentence):
                    continue
                # "change of direction on the order events. … So order events move onto NATS
                # JetStream.": the marker announces it, a later sentence says what now.
                later = next(
                    (
                        j
                        for j in range(k + 1, min(k + 6, len(sentences)))
                        if _MOVES_TO.search(sentences[j])
                        and not sentences[j].rstrip().endswith("?")
                    ),
                    None,
                )
                if later is None:
                    continue
                found.append(Reversal(_unmarked(sentences[later]), turn.index, []))
                joined_next = later
                continue
            if not old and not agent and describes_trouble(sentence):
                continue  # "Actually the game does not save nothing": a report, no change
            if _REPORTS_ONLY.match(sentence) and PROBLEM_GONE_RE.search(sentence):
                continue  # "no more 500s since the deploy": a fix confirmed, not a choice
            text = sentence
            named_new = any(m.groupdict().get("new") or m.groupdict().get("new2") for m in matches)
            moved_to = ""
            moves = (
                next(
                    (
                        j
                        for j in range(k + 1, min(k + 4, len(sentences)))
                        if _MOVES_TO.search(sentences[j])
                        and not sentences[j].rstrip().endswith("?")
                        # (it points back at what went: "port it to typer")
                        and _NAMES_IT.search(sentences[j])
                    ),
                    None,
                )
                if old and not named_new and not agent
                else None
            )
            if moves is not None:
                # "argparse was the wrong call for hostctl. we're at 14 subcommands … port it
                # to typer.": what comes instead is where the work moves, a few sentences on.
                text = f"{sentence} {sentences[moves]}"
                joined_next = moves
                target = _MOVED_TO.search(sentences[moves])
                moved_to = target.group("new").strip("`'\".,") if target is not None else ""
            elif (
                old
                and not named_new
                and k + 1 < len(sentences)
                and not sentences[k + 1].rstrip().endswith("?")
                # (another item of a list is another point)
                and not _LIST_MARK.match(sentences[k + 1])
            ):
                # "We dropped MongoDB. ClickHouse it is": the choice is the next sentence.
                text = f"{sentence} {sentences[k + 1]}"
                joined_next = k + 1
            elif not old:
                # "the air-gap reason doesn't hold anymore, … so: port the CLI to Typer.": what
                # comes instead follows within two sentences.
                then = next(
                    (
                        j
                        for j in range(k + 1, min(k + 3, len(sentences)))
                        if _MOVES_TO.search(sentences[j])
                        and not sentences[j].rstrip().endswith("?")
                    ),
                    None,
                )
                if then is not None:
                    text = f"{sentence} {sentences[then]}"
                    joined_next = then
            earlier_only = not old and not _corrects(_FROM_NOW_ON.sub(" ", sentence))
            names = list(dict.fromkeys(old))
            # (not when what went was read from a pointing word: that reading can be off)
            instead = [
                (m.group("new") or m.group("new2")).strip("`'\".,")
                for m in matches
                if (m.groupdict().get("new") or m.groupdict().get("new2")) and not guessed
            ]
            if (
                not instead
                and old
                and not guessed
                and all(m.re is not _INSTEAD_OF for m in matches)
            ):
                # "we dropped winston. logging is pino now", "Heroku is dead to us, Fly.io
                # instead": the new choice in the words that say it is the one now
                told = {
                    (m.group("new") or m.groupdict().get("new1") or "").strip("`'\".,")
                    for rx in _NOW_NAMED
                    for m in rx.finditer(text)
                }
                told = {
                    n
                    for n in told
                    if n
                    and n.lower() not in _NOT_NAMES
                    and n.lower() not in _NOW_WORDS
                    and n.lower() not in STOP_WORDS
                    and n.lower() not in {o.lower() for o in old}
                }
                if len(told) == 1:
                    instead = [*told]
                elif not told and moved_to and moved_to.lower() not in _NOT_NAMES | STOP_WORDS:
                    instead = [moved_to]
            found.append(
                Reversal(
                    _unmarked(text),
                    turn.index,
                    names,
                    earlier_only,
                    reason,
                    [n for n in dict.fromkeys(instead) if n.lower() not in _NOT_NAMES],
                    retracts,
                    tentative,
                )
            )
    return found


def moves_to(sentence: str) -> bool:
    """Whether a sentence says where work moves ("port it to typer", "switch the jobs to
    Dramatiq")."""
    return _MOVES_TO.search(sentence) is not None


# A retraction or a correction's opening words, alone or not.
_MARKER = re.compile(
    rf"(?i)^\W*{_MUSING}(?:actually\W+)?(?:{_TAKE_BACK}"
    r"|actually|correction|change of plan|on (?:a )?second thoughts?)\b"
)


def _only_marker(sentence: str) -> bool:
    """Whether a sentence says nothing but that something is taken back ("Actually scratch
    that.", "no, wait."): what comes instead is in the sentence after it."""
    found = _MARKER.match(sentence)
    return found is not None and not re.search(r"\w", sentence[found.end() :])


# -- disagreements -----------------------------------------------------------------------
_DISPUTE = re.compile(
    r"(?i)\b(?:conflicts? with|differs? from|contradicts?|is at odds with|disagrees? with|"
    r"clashes with)\s+(?P<what>[^.?!;]{3,80})"
)
_DISPUTE_GATED = _Gated(
    _DISPUTE, ("conflict", "differ", "contradict", "at odds with", "disagree", "clashes with")
)
_GENERIC = frozenset(
    {
        "the",
        "a",
        "an",
        "rule",
        "rules",
        "you",
        "gave",
        "given",
        "set",
        "decided",
        "earlier",
        "before",
        "previously",
        "we",
        "our",
        "your",
        "that",
        "this",
        "one",
        "decision",
        "convention",
        "what",
        "was",
        "were",
        "agreed",
        "said",
        "of",
        "to",
        "for",
        "in",
        "on",
        "outbound",
        "calls",
        "call",
        "should",
        "which",
        "it",
        "is",
        "are",
        "retrying",
        # function words name no rule ("… your BACKWARD rule and would let …")
        "and",
        "or",
        "but",
        "nor",
        "so",
        "as",
        "at",
        "by",
        "with",
        "from",
        "into",
        "than",
        "then",
        "also",
        "not",
        "no",
        "all",
        "any",
        "its",
        "their",
        "his",
        "her",
        "my",
        "them",
        "they",
        "he",
        "she",
        "would",
        "could",
        "can",
        "will",
        "may",
        "might",
        "must",
        "let",
        "lets",
        "do",
        "does",
        "did",
        "has",
        "have",
        "had",
        "be",
        "been",
        "being",
        "shall",
    }
)


# Where the words naming the earlier rule end.
_CLAUSE_GOES_ON = re.compile(r"(?i),|\s(?:and|but|so|which|because|since|while|as|though)\s")


@dataclass
class Dispute:
    """A user statement that the agent pointed out disagrees with an earlier rule."""

    turn: int
    names: list[str]


def find_disputes(classified: list[DialogueTurn]) -> list[Dispute]:
    """User turns followed by the agent saying they conflict with an earlier rule.

    The words the agent uses for the earlier rule ("the 10 minute TTL decided earlier")
    name it, so the evolution can hold both as an open contradiction instead of keeping
    two rules that disagree.
    """
    found: list[Dispute] = []
    for i, turn in enumerate(classified):
        if turn.speaker is not Speaker.USER or turn.kind != "prose":
            continue
        reply = next((t for t in classified[i + 1 :] if t.kind == "prose"), None)
        if reply is None or reply.speaker is not Speaker.AGENT:
            continue
        match = _DISPUTE_GATED.search(reply.text)
        if match is None:
            continue
        # "… contradicts your BACKWARD rule and would let breaking changes through": the
        # earlier rule is named before the clause goes on about something else.
        what = _CLAUSE_GOES_ON.split(match.group("what"), maxsplit=1)[0]
        words = re.findall(r"[\w.+#-]+", what.lower())
        names = [w for w in words if w not in _GENERIC and len(w) > 1]
        # "… which contradicts your BACKWARD rule": a rule named in the turn itself is not
        # an earlier one it disputes, it is the side the agent keeps to.
        own = set(re.findall(r"[\w.+#-]+", turn.text.lower()))
        if names and not all(n in own for n in names):
            found.append(Dispute(turn.index, names[:4]))
    return found


# -- disagreements left open ---------------------------------------------------------------
@dataclass
class OpenPoint:
    """Two sources that disagree, which the user explicitly left undecided.

    `text` states the disagreement (the user's own sentence, or the agent's when it was the
    agent that pointed it out); `names` are its distinctive words, which name the earlier
    rule it concerns.
    """

    turn: int
    text: str
    names: list[str]


# The user leaving a question of who is right to someone else or to later.
_UNDECIDED = re.compile(
    r"(?i)\b(?:(?:no idea|(?:i )?(?:don'?t|do not) know|not sure|unclear) (?:yet |still |really "
    r")?(?:who'?s|who is|who|"
    r"which (?:one|of them|is|\w+ (?=wins|is right|applies))) ?(?:right|wins|correct|applies)?|"
    r"who wins|(?:haven'?t|have not|hasn'?t|has not) made up (?:my|our|their|his|her) minds?|"
    r"(?:not|won'?t) (?:going to |gonna )?decide (?:this|that|it)\b|not my (?:decision|call)|"
    r"(?:haven'?t|have not|hasn'?t|has not|didn'?t|did not|never) (?:yet )?(?:agreed|decided)|"
    r"not (?:yet )?(?:agreed|decided)|undecided|no decision(?: yet)?|(?:still )?an open "
    r"(?:point|question)|(?:i'?ll|i will|let me|need to|have to|gotta) (?:ask|check with|talk "
    r"to|sync with)\b|pending (?:a |the )?decision|not (?:picking|choosing|taking) (?:a )?sides?\b|"
    r"(?:not|won'?t|can'?t) (?:be )?(?:deciding|decide) (?:this|that|it|now|today|yet|between)\b|"
    # "… the doc saying 768px and the Figma saying 834px and that's just open"
    r"(?:that'?s|it'?s|this is|is|stays|remains) (?:just |still )?(?:open|unsettled|unresolved)\b|"
    r"not (?:yet )?settled|"
    # Put off to later or to someone else: "let's park that", "we'll decide at the next
    # sync", "it's up in the air", "leave it open for now", "TBD", "the jury is still out",
    # "hold off on picking one", "I'll bring it up at the architecture sync", "put it on the
    # agenda", "that's for the tech leads to settle", "I'm not going to pick one today".
    r"\bpark(?:ing|ed)?\s+(?:that|this|it)\b|"
    r"(?:we'?ll|we will|let'?s|gonna|going to)\s+(?:decide|settle|sort)\b(?:\s+(?:it|this|that))?"
    r"(?:\s+out)?\s+(?:at|in|on|after|with|next|later|once|when)\b|"
    r"\bup in the air\b|\bleave (?:it|this|that|both|them) open\b|\btbd\b|"
    r"\bto be (?:decided|determined|settled)\b|"
    r"(?:haven'?t|have not|hasn'?t|has not) (?:yet )?made (?:a|the) call\b|"
    r"\bjury is (?:still )?out\b|"
    r"\bhold(?:ing)? off on (?:picking|choosing|deciding)\b|"
    r"\b(?:bring|raise) (?:it|this|that) (?:up )?(?:at|in|with)\b|\bon the agenda\b|"
    r"\bfor (?:the |our )?[\w-]+(?: [\w-]+)? to (?:decide|settle|sort out|pick)\b|"
    r"\bnot (?:going to |gonna )?(?:pick|choose) (?:one|either|between)\b)"
)
# One sentence giving two sides: "the guidelines doc says X, Lena's doc says Y", "Priya
# wants X, Tomás wants Y", "X contradicts Y", "but earlier you said".
_SIDE = r"(?:says?|saying|said|wants?|prefers?|insists? on|argues? for|requires?|asks? for)"
_TWO_SIDES = re.compile(
    rf"(?i)\b{_SIDE}\b.{{3,}}?\b{_SIDE}\b|\b(?:contradicts?|disagree(?:s|ment)?|conflicts? "
    r"with|inconsistent with|at odds with)\b|\bbut (?:earlier|before|last time) you said\b"
)
_ONE_SIDE = re.compile(rf"(?i)\b{_SIDE}\b")
# A source someone else speaks for, with what it says in the same breath: "the guild says
# Day.js", "the DPO says crash reporting has to be opt-in" (not "I want", not "it says:").
_ONE_SOURCE = re.compile(
    r"(?i)\b(?<!\bi )(?<!\bwe )(?<!\byou )(?:says|said|requires)\b(?!\s*(?:[:\"“]|about\b))"
)
# (… or "X (whose) vs Y (whose)": "retention is disputed: 30 days (platform, cost) vs 90
# days (security standard v2)"; a bare "the 3 vs 5 question" names no side)
_BOTH_SIDES = re.compile(
    rf"(?i)\b{_SIDE}\b.{{3,}}?\b{_SIDE}\b|"
    r"\S[^()]{0,40}\([^()]{2,60}\)\s*(?:vs\.?|versus)\s+[^()]{1,40}\([^()]{2,60}\)"
)
# "(torn / undecided / my mind) between X and Y": the two sides in the cue itself.
_BETWEEN = re.compile(r"(?i)\bbetween\s+\S.{1,80}?\s+and\s+[^,.;]+")
# How many prose turns back the two sides of an undecided point are looked for.
_SIDES_BACK = 3
# Every match of `_UNDECIDED` holds one of these: the regex runs only where one occurs.
_UNDECIDED_GATED = _Gated(
    _UNDECIDED,
    (
        "idea",
        "know who",
        "know which",
        "yet which",
        "yet who",
        "still which",
        "still who",
        "really which",
        "really who",
        "sure who",
        "sure which",
        "unclear",
        "who wins",
        "agreed",
        "decid",
        "decision",
        "open point",
        "open question",
        "ll ask",
        "will ask",
        "me ask",
        "to ask",
        "tta ask",
        "check with",
        "talk to",
        "sync with",
        "side",
        "open",
        "unsettled",
        "unresolved",
        "settled",
        "mind",
        "my call",
        "park",
        "settle",
        "sort",
        "in the air",
        "tbd",
        "determined",
        "made a call",
        "made the call",
        "jury",
        "off on",
        "bring it",
        "bring this",
        "bring that",
        "raise it",
        "raise this",
        "raise that",
        "agenda",
        "pick one",
        "pick either",
        "pick between",
        "choose one",
        "choose either",
        "choose between",
        "to pick",
    ),
)
_OPEN_GENERIC = frozenset(
    [
        "about",
        "also",
        "always",
        "another",
        "because",
        "before",
        "being",
        "between",
        "both",
        "but",
        "can",
        "cannot",
        "could",
        "does",
        "doesn",
        "each",
        "earlier",
        "either",
        "every",
        "from",
        "have",
        "here",
        "into",
        "just",
        "like",
        "more",
        "most",
        "must",
        "never",
        "only",
        "other",
        "ours",
        "same",
        "says",
        "said",
        "should",
        "some",
        "such",
        "than",
        "that",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "want",
        "wants",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "will",
        "with",
        "would",
        "your",
        "yours",
        "one",
        "ones",
        "applies",
        "apply",
        "right",
        "wins",
        "correct",
        "doc",
        "docs",
        "team",
        # the words of a cue said in the same sentence ("honestly no idea who's right, …")
        "honestly",
        "idea",
        "know",
        "sure",
        "really",
        "think",
        "maybe",
    ]
)


# A value the two sides give ("88", "120", "4px", "1mb"): as distinctive as a name.
_VALUE = re.compile(r"\d{2,}[a-z]{0,3}|\d[a-z]{1,3}")


def _open_names(text: str) -> list[str]:
    words = re.findall(r"[\w.+#-]+", text.lower())
    names = [w.strip(".") for w in words]
    return list(
        dict.fromkeys(
            w
            for w in names
            if (len(w) > 3 or _VALUE.fullmatch(w)) and w not in _OPEN_GENERIC and w.isascii()
        )
    )[:8]


def leaves_undecided(text: str) -> bool:
    """ "No idea who's right, I'll ask Dana": the user leaving a question to later."""
    return _UNDECIDED_GATED.search(text) is not None


def names_two_sides(text: str) -> bool:
    """ "These two disagree", "the spec says X, our code says Y": a disagreement described."""
    return _TWO_SIDES.search(text) is not None


# Someone other than the speaker holding a side: "she wants the table partitioned by hour",
# "Priya prefers hourly", "the DPO says opt-in" (not "I want", "we said").
_ANOTHERS_SIDE = re.compile(
    r"(?i)\b(?<!\bi )(?<!\bwe )(?<!\byou )(?:says|said|wants|prefers|insists on|argues for|"
    r"asks for|requires)\b"
)


def gives_anothers_side(text: str) -> bool:
    """ "Priya … wants the events table partitioned by hour": someone else's side."""
    return _ANOTHERS_SIDE.search(text) is not None


def find_open_points(classified: list[DialogueTurn]) -> list[OpenPoint]:
    """Disagreements the user says are not decided ("no idea who's right", "they haven't
    agreed yet"): the sentence giving both sides, from the user's turn or from the agent's
    turn just before that pointed the conflict out."""
    found: list[OpenPoint] = []
    for i, turn in enumerate(classified):
        if turn.speaker is not Speaker.USER or turn.kind != "prose":
            continue
        if _UNDECIDED_GATED.search(turn.text) is None:
            unanswered = _unanswered_choice(classified, i)
            if unanswered is not None:
                found.append(unanswered)
            continue
        sentences = turn.sentences
        # The last cue: "I don't know which one is right. … so the doc says 768px and the
        # Figma 834px, and that's just open." gives the sides after the first one.
        cue = next(
            (k for k in reversed(range(len(sentences))) if _UNDECIDED.search(sentences[k])), None
        )
        if cue is None:
            continue
        if any(_PICKS_ONE.search(t) and not _UNDECIDED.search(t) for t in sentences[:cue]):
            # "… the standard says 90 days. Go with 90 days. I'll ask Dana about the archive
            # tier.": chosen before the cue, which is about something else.
            continue
        sides = next(
            (t for t in reversed(sentences[: cue + 1]) if _TWO_SIDES.search(t)),
            None,
        )
        if sides is None:
            # "I'm not picking a side here. … the two disagree: our standard says 1.2 allowed,
            # Northwind says 1.3 only.": both sides given after the cue, in the same turn ("just
            # write down that the two contradict each other" names neither).
            sides = next((t for t in sentences[cue + 1 :] if _BOTH_SIDES.search(t)), None)
        if sides is None:
            # "Mei wants the JSON fixtures to stay. Jonas says exactly the opposite."
            pairs = pairwise(sentences[: cue + 1])
            sides = next(
                (
                    f"{a} {b}"
                    for a, b in reversed(list(pairs))
                    if _ONE_SIDE.search(a) and _ONE_SIDE.search(b)
                ),
                None,
            )
        if sides is None:
            # The agent's turn just before pointed the conflict out, or the user gave both
            # sides earlier and, after the agent offered ways out, declined to choose ("So
            # the spec says 5 minutes and our implementation says 30 seconds." … "I'm not
            # deciding this"): the last few prose turns.
            earlier = [t for t in reversed(classified[:i]) if t.kind == "prose"][:_SIDES_BACK]
            for k, before in enumerate(earlier):
                if k and before.speaker is not Speaker.USER:
                    continue
                at = next((n for n, t in enumerate(before.sentences) if _TWO_SIDES.search(t)), None)
                if at is not None:
                    sides = _with_values(before.sentences, at)
                    break
        # "I haven't made up my mind between fighting for 120 and just going with 88":
        # with no sides given anywhere else, a cue names them itself (the names come from
        # that clause, the point reads as the whole sentence); the last cue may be a
        # shorter one ("until then it stays open").
        cues = (k for k in reversed(range(cue + 1)) if _UNDECIDED.search(sentences[k]))
        between = (
            None
            if sides is not None
            else next(
                ((k, b) for k in cues if (b := _BETWEEN.search(sentences[k])) is not None), None
            )
        )
        if between is not None:
            k, clause = between
            found.append(OpenPoint(turn.index, sentences[k].strip(), _open_names(clause[0])))
            continue
        if sides is None:
            # "so the guild says Day.js, and I just moved the admin panel to date-fns": one
            # source the user named, in their own words (a paste is not their words), set
            # against a rule of an earlier thread; the evolution links that rule by its names.
            own = [*sentences[:cue], *_earlier_user_prose(classified, i)]
            sides = next((side for t in own if (side := _source_clause(t))), None)
            if sides is not None:
                # "…, a conflict you should know about: crash reporting was set up as
                # opt-out on purpose …" / "I don't know, that's not my decision": the other
                # side is the one the agent set against the source just before.
                named = _conflict_named_before(classified, i)
                if named and named not in sides:
                    sides = f"{named} {sides}"
        if sides is None:
            # "honestly I don't know. … I'll put it on the agenda": the sides are the ways
            # the agent laid out just before and asked between.
            unanswered = _unanswered_choice(classified, i)
            if unanswered is not None:
                found.append(unanswered)
            continue
        names = _open_names(sides)
        if names:
            found.append(OpenPoint(turn.index, sides.strip(), names))
    return found


# A reply that opens by not knowing: "honestly I don't know.", "I don't know, that's …",
# "no idea", "not sure" (not "I don't know why it fails", which reports trouble).
_NO_ANSWER = re.compile(
    r"(?i)^\W*(?:(?:honestly|tbh|frankly|hm+|well|ugh)\W+)*(?:i\s+)?(?:(?:really|honestly|just)"
    r"\s+)?(?:(?:don'?t|do not)\s+know|dunno)\b(?!\s+(?:why|how|what|where|when))"
    r"|^\W*(?:(?:honestly|tbh|hm+)\W+)*(?:no idea|not sure)\b"
)
# … and then chooses anyway: "go with", "let's do", "option 2", "the second one" (not "I'll
# take it to Jonas", nor "I'm not picking a side").
_PICKS_ONE = re.compile(
    r"(?i)\b(?:go(?:ing)? with|let'?s (?:go|do|use|take|pick))\b|"
    r"\boption\s+(?:\d|[a-c]\b|one|two)|\bthe (?:first|second|third|other) one\b"
)
# How many of the agent's sentences before its question give the sides.
_CHOICE_SIDES = 3


def _unanswered_choice(classified: list[DialogueTurn], i: int) -> OpenPoint | None:
    """The agent laid out two ways with their values and asked which ("… the broker takes
    ~1 MB, ingestkit sends anything over 256 KB through the claim check. … Which one should
    win?"); the user's answer opens by not knowing ("honestly I don't know. … leave it at
    256 KB for now, I'll put it on the agenda"). Nobody decided: the agent's sentences
    that give the values are the sides."""
    turn = classified[i]
    if not turn.sentences or not _NO_ANSWER.match(turn.sentences[0]):
        return None
    if any(_PICKS_ONE.search(t) for t in turn.sentences):
        return None  # "I don't know, just go with the second one": a choice after all
    before = next((t for t in reversed(classified[:i]) if t.kind == "prose"), None)
    if before is None or before.speaker is Speaker.USER or not before.sentences:
        return None
    asked = before.sentences[-1].rstrip()
    if not asked.endswith("?") or not re.search(r"(?i)\b(?:which|or)\b", asked):
        return None  # ("What port does it listen on?" asks for a fact, not a choice)
    sides = [
        t.strip()
        for t in before.sentences[:-1]
        if not t.rstrip().endswith("?") and _VALUE.search(t.lower())
    ][-_CHOICE_SIDES:]
    text = " ".join(sides)
    names = _open_names(text)
    return OpenPoint(turn.index, text, names) if names else None


# The agent pointing out a conflict with something already in force: "a conflict you should
# know about: …", "this clashes with …", "that goes against what we set up".
_CONFLICT_NAMED = re.compile(
    r"(?i)\b(?:a|one|the|this|that)\s+conflict\b|\bclash(?:es)?\s+with\b|"
    r"\bgoes\s+against\b|\bcontradicts?\b|\bat\s+odds\s+with\b|\binconsistent\s+with\b"
)


def _conflict_named_before(classified: list[DialogueTurn], i: int) -> str:
    """The sentence of the agent's prose turn just before turn `i` that points out a
    conflict, or ""."""
    before = next((t for t in reversed(classified[:i]) if t.kind == "prose"), None)
    if before is None or before.speaker is Speaker.USER:
        return ""
    for sentence in before.sentences:
        found = _CONFLICT_NAMED.search(sentence)
        if found is None:
            continue
        # (what follows "a conflict you should know about:" is the conflict)
        head, colon, rest = sentence.partition(": ")
        if colon and found.end() <= len(head) and rest.strip():
            return rest.strip()
        return sentence.strip()
    return ""


def _source_clause(sentence: str) -> str:
    """The sentence from the last clause where a source speaks ("… pasting the relevant
    part: so the guild says Day.js, …" gives "so the guild says Day.js, …"), or ""."""
    pieces = sentence.split(": ")
    for k in reversed(range(len(pieces))):
        rest = ": ".join(pieces[k:])
        found = _ONE_SOURCE.search(rest)
        if found is not None and found.start() < len(pieces[k]):
            return rest
    return ""


def _earlier_user_prose(classified: list[DialogueTurn], i: int) -> list[str]:
    """The sentences of the user's prose turns just before turn `i`, latest first."""
    earlier = [t for t in reversed(classified[:i]) if t.kind == "prose"][:_SIDES_BACK]
    return [
        sentence
        for before in earlier
        if before.speaker is Speaker.USER
        for sentence in reversed(before.sentences)
    ]


def _with_values(sentences: list[str], at: int) -> str:
    """Sentence `at` stating a disagreement ("the tokens disagree with Figma"), after the
    ones just before it that give the values in question ("… defines it as 4px", "Figma has
    6px") and share a name with it: a point that names no value cannot be decided. With no
    such values, a sentence giving one side ("Marta opened an issue saying …") leads the
    disagreement that answers it ("I mostly disagree: …")."""
    names = set(_open_names(sentences[at]))
    lead: list[str] = []
    for sentence in reversed(sentences[max(0, at - 2) : at]):
        words = set(_open_names(sentence))
        if not (words & names and any(_VALUE.fullmatch(w) for w in words)):
            break
        lead.insert(0, sentence.strip())
        names |= words
    if (
        not lead
        and at
        and not _ONE_SIDE.search(sentences[at])
        and _ONE_SIDE.search(sentences[at - 1])
    ):
        # "Marta opened an issue saying the config should be TOML, not YAML. I mostly
        # disagree: …": the side the disagreement answers is the sentence before.
        lead = [sentences[at - 1].strip()]
    return " ".join([*lead, sentences[at].strip()])


# -- dependency swaps ---------------------------------------------------------------------
@dataclass
class Swap:
    """A stretch of agent work that removed one dependency, usually for another.

    `request` is the user's prose that asked for the work, `report` the agent's last prose
    after it; `removed` / `added` are the names the packages go by in prose ("@auth0/
    nextjs-auth0" is "auth0", "react-native-onesignal" is "onesignal").
    """

    turn: int
    request: str
    report: str
    removed: list[str]
    added: list[str]


# Package managers' remove and add commands, as an agent runs them.
_PM_REMOVE = re.compile(
    r"\b(?:(?:npm|pnpm|yarn|bun) (?:uninstall|remove|rm|un)|(?:pip3?|pipenv) uninstall|"
    r"(?:poetry|uv|cargo|bundle|composer) remove|gem uninstall|dotnet remove package|"
    r"(?:flutter|dart) pub remove)((?:\s+(?:-[\w-]+|['\"]?[@\w][\w@/.+-]*['\"]?))+)"
)
_PM_ADD = re.compile(
    r"\b(?:(?:npm|pnpm|bun) (?:install|i|add)|yarn add|(?:pip3?|pipenv) install|"
    r"(?:poetry|uv|cargo|bundle|flutter pub|dart pub) add|composer require|"
    # (a spec in quotes, "pip install 'dbt-bigquery~=1.8'", is a package too)
    r"dotnet add package|go get)((?:\s+(?:-[\w-]+|['\"]?[@\w][\w@/.+=<>~^-]*['\"]?))+)"
)
# Cheap test before the patterns above: a removal names one of these verbs.
_PM_REMOVE_WORD = re.compile(r"\b(?:uninstall|remove|rm|un)\b")
# Words of a package name that say nothing about which tool it is.
_PACKAGE_NOISE = frozenset(
    [
        "types",
        "node",
        "react",
        "native",
        "browser",
        "nextjs",
        "next",
        "vue",
        "angular",
        "svelte",
        "plugin",
        "plugins",
        "core",
        "sdk",
        "client",
        "lib",
        "libs",
        "python",
        "js",
        "ts",
        "rs",
        "go",
        "the",
        "app",
        "web",
        "analytics",
        "server",
        "api",
        "cli",
        "dev",
        "tools",
        "firebase",
        "messaging",
        "binary",
    ]
)


def package_names(spec: str) -> list[str]:
    """The words a package goes by in prose: "@auth0/nextjs-auth0" -> ["auth0"]."""
    name = re.split(r"[=<>~^]|(?<=.)@", spec, maxsplit=1)[0].lower()
    base = name.rsplit("/", 1)[-1]
    parts = [w for w in re.split(r"[@/._-]+", name) if len(w) >= 3 and w not in _PACKAGE_NOISE]
    # "env_logger" is written whole in prose; "mixpanel-browser" is "mixpanel".
    whole = [base] if "_" in base and base not in parts else []
    return list(dict.fromkeys(whole + parts))


def _packages(pattern: re.Pattern[str], text: str) -> list[str]:
    names: list[str] = []
    for match in pattern.finditer(text):
        for spec in match.group(1).split():
            if not spec.startswith("-") and not spec.startswith("."):
                names.extend(package_names(spec.strip("'\"")))
    return list(dict.fromkeys(names))


def find_swaps(classified: list[DialogueTurn]) -> list[Swap]:
    """Work that removed a dependency with its package manager, which the user did not
    reject: what came in its place is a standing choice, and it replaces the old one."""
    found: list[Swap] = []
    request: DialogueTurn | None = None
    calls: list[str] = []
    report = ""
    for turn in [*classified, None]:
        if turn is not None and turn.speaker is Speaker.AGENT:
            if turn.kind == "call":
                calls.append(turn.text)
            elif turn.kind == "prose":
                report = turn.text
            continue
        if turn is not None and (turn.speaker is not Speaker.USER or turn.kind != "prose"):
            continue
        removed = [
            n for text in calls if _PM_REMOVE_WORD.search(text) for n in _packages(_PM_REMOVE, text)
        ]
        if request is not None and removed:
            added = [n for text in calls for n in _packages(_PM_ADD, text)]
            gone = [n for n in dict.fromkeys(removed) if n not in added]
            rejected = turn is not None and _REPORT_REJECT.search(turn.text.split("\n", 1)[0])
            if gone and not rejected:
                fresh = [n for n in dict.fromkeys(added) if n not in removed]
                found.append(Swap(request.index, request.text, report, gone, fresh))
        request, calls, report = turn, [], ""
    return found


# -- implementation reports --------------------------------------------------------------
@dataclass
class ReportFact:
    """A statement of how the built system works, from the agent's report of finished work.

    `engaged`: the user's next words take it up (share its words) without rejecting the
    report; `accepted`: they accept the report as a whole ("correct", "fine", "thanks").
    """

    text: str
    turn: int
    engaged: bool
    accepted: bool


# A name from the code: `backticked`, a path, snake_case, CamelCase or a file name.
_CODE_NAME = re.compile(
    r"`[^`\n]{2,80}`|\b(?:[a-z][\w.-]*/[\w./-]*|[\w-]+(?:/[\w-]+)*\.[a-z]{1,5}\b)|"
    r"\b[a-z]+_[a-z0-9_]+\b|\b[A-Z][a-z]+[A-Z]\w*\b|"
    r"\b[a-z]+[A-Z]\w*\b|\b\w+\.(?:py|ts|tsx|js|jsx|rs|go|java|kt|swift|rb|lua|sql|ya?ml|"
    r"toml|json|c|h|cpp|cs|php|ex|exs|dart|vue|svelte)\b"
)
# What a report says about the work itself rather than the system: plans, offers,
# questions, test and lint results, and the opening "Done."
_ABOUT_THE_WORK = re.compile(
    r"(?i)^\W*(?:i'?ll|i will|let me|next|want me|shall i|should i|if you want|do you want|"
    r"done\b|summary\b|all (?:\d+ )?tests?)|\b(?:tests? (?:pass|passed|are green)|\d+ "
    r"(?:tests? )?passed|clippy is clean|lint(?:er)? is clean|no (?:lint )?warnings)\b"
)
_REPORT_ACCEPT = re.compile(
    r"(?i)^\W*(?:yes|yep|yeah|great|perfect|good|nice|thanks|thank you|agreed|exactly|"
    r"correct|right|cool|fine|ok(?:ay)?|sounds good|makes sense|lgtm|looks good|ship it|"
    r"push it|merge it|👍|🎉)\b"
)
_REPORT_REJECT = re.compile(
    r"(?i)^\W*(?:no\b|nope|nah|wrong|that'?s (?:wrong|not)|not quite|revert|undo)|"
    r"\b(?:don'?t|do not|shouldn'?t|instead)\b"
)
_FACT_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
_CLAIMS_CHANGE = Folded(
    r"(?i)\b(?:i'?ve|i have) (?:now )?(?:created|implemented|built|added|updated|changed|"
    r"written|refactored|moved|replaced)\b|\bimplementation (?:is )?complete\b"
)
_REPORT_MAX_FACTS = 3


def _fact_words(text: str) -> set[str]:
    return {w for w in _FACT_WORD.findall(text.lower()) if w not in _COMMON}


_COMMON = frozenset(
    {
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "into",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "but",
        "not",
        "you",
        "your",
        "our",
        "its",
        "it's",
        "can",
        "will",
        "would",
        "should",
        "could",
        "all",
        "any",
        "one",
        "two",
        "each",
        "per",
        "via",
        "also",
        "only",
        "then",
        "when",
        "what",
        "which",
        "who",
        "how",
        "why",
        "there",
        "here",
        "they",
        "them",
        "their",
        "than",
        "just",
        "now",
        "new",
        "use",
        "used",
        "uses",
        "using",
        "add",
        "added",
        "adds",
        "make",
        "made",
        "keep",
        "kept",
        "fine",
        "good",
        "great",
        "thanks",
        "okay",
        "yes",
        "push",
        "done",
        "work",
        "works",
        "test",
        "tests",
        "pass",
        "passed",
    }
)


def find_reports(classified: list[DialogueTurn]) -> list[ReportFact]:
    """Facts from the agent's reports of finished work that the user let stand.

    A report is the agent's last prose before the user speaks again, after it changed
    files (an edit tool or an editing command) in that stretch of work. Its statements
    naming something in the code (a file, a function, a key) describe the system as
    built. The user's next turn decides what they are worth: rejected, nothing; accepted
    or taken up (its words reused), they are the user's knowledge too.
    """
    found: list[ReportFact] = []
    edited = False
    last_prose: DialogueTurn | None = None
    for turn in [*classified, None]:
        if turn is not None and turn.speaker is Speaker.AGENT:
            if turn.kind == "call" and (
                any(_EDIT_TOOLS.match(t) for t in turn.tools) or _EDIT_COMMAND.search(turn.text)
            ):
                edited = True
            elif turn.kind == "prose":
                last_prose = turn
                # Histories that keep only the prose: the agent says it made the change.
                edited = edited or _CLAIMS_CHANGE.search(turn.text)
            continue
        if turn is not None and (turn.speaker is not Speaker.USER or turn.kind != "prose"):
            continue
        if edited and last_prose is not None:
            reply = turn.text if turn is not None else ""
            found.extend(_report_facts(last_prose, reply))
        edited, last_prose = False, None
    return found


def _report_facts(report: DialogueTurn, reply: str) -> list[ReportFact]:
    if reply and _REPORT_REJECT.search(reply[:80]):
        return []
    accepted = bool(_REPORT_ACCEPT.match(reply)) or not reply
    taken = _fact_words(reply)
    facts: list[tuple[int, int, str]] = []
    pieces = [p for s in report.sentences for p in _BULLET_BREAK.split(s)]
    for k, piece in enumerate(pieces):
        text = _REPORT_LEAD.sub("", piece.lstrip("-*•# ").replace("**", "")).strip()
        if (
            len(text.split()) < 6
            or text.rstrip().endswith("?")
            or _ABOUT_THE_WORK.search(text)
            or _FUTURE.search(text)
            or looks_like_code(text)
            or not _CODE_NAME.search(text)
            or _LABEL_ONLY.search(text)
        ):
            continue
        shared = len(_fact_words(text) & taken)
        if _TROUBLE.search(text) and shared < 2:
            continue  # the problem and its cause: the bug unit's part, unless taken up
        facts.append((shared, -k, text))
    facts.sort(reverse=True)
    return [
        ReportFact(text, report.index, shared >= 2, accepted)
        for shared, _k, text in facts[:_REPORT_MAX_FACTS]
    ]


# Bullets the prose reader joined into one line, and the labels opening a report.
_BULLET_BREAK = re.compile(r"\s+(?:[-*•]|#{1,6})\s+(?=[`A-Za-z(*])")
_REPORT_LEAD = re.compile(
    r"(?i)^(?:what (?:i built|changed|i did)|changes?|summary of the \w+|"
    r"implemented in [^:]{1,60}|for context, as i read the code)\s*:\s*"
)
# A template's field with nothing after it ("Description:"), or a ticket header.
_LABEL_ONLY = re.compile(r"(?i)[:\-–—]\s*$|\b(?:depends on|epic|task \d+|story \d+)\s*:")
_FUTURE = re.compile(r"(?i)\b(?:i'?ll|i will|we'?ll|i'?m going to|next i)\b")
