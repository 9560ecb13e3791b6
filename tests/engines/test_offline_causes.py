"""What an agent's turn gives as a bug's cause (dialogue._diagnosis)."""

from __future__ import annotations

import pytest

from app.core.models import Category, MemoryItem
from app.engines.offline.dialogue import _diagnosis
from app.engines.offline.extract import extract


@pytest.mark.parametrize(
    "offer",
    [
        "To stay safe I could keep the completion-handler versions too, so nothing else breaks.",
        "For the year, I can either hardcode 2025 or compute it, so it never goes stale.",
        "We could also add a retry here, so a flaky network does not fail the sync.",
    ],
)
def test_an_option_the_agent_offers_is_no_cause(offer: str) -> None:
    assert _diagnosis([offer], looked=True) is None


def test_a_cause_is_still_a_cause() -> None:
    found = _diagnosis(
        [
            "The worker reads the config before the volume is mounted, so it starts with the "
            "defaults and never retries.",
        ],
        looked=True,
    )
    assert found is not None
    assert "volume is mounted" in found[0]


def test_the_agent_agreeing_with_a_change_is_no_cause() -> None:
    # After "we're moving the broker off redis to rabbitmq": the reason for the change the
    # user decided, not what went wrong.
    said = ["That makes sense: RabbitMQ persists messages, so a restart won't lose queued jobs."]
    assert _diagnosis(said, looked=False) is None


def test_a_broker_is_no_trouble() -> None:
    from app.engines.offline.dialogue import _symptom

    report = (
        "the email jobs got lost twice this week when redis restarted during a deploy. "
        "we're moving the dramatiq broker off redis to rabbitmq, redis stays only as the cache"
    )
    assert _symptom(report).startswith("the email jobs got lost")


def _bugs(text: str) -> list[MemoryItem]:
    return [i for i in extract(text, source="t").items if i.category is Category.BUG_PATTERNS]


def test_a_guess_that_a_failing_run_disproves_is_no_cause() -> None:
    # As the app renders an Aider session: the first guess, a test that fails, the user's
    # "ok, I was wrong", then the real diagnosis, its fix and a green run.
    bugs = _bugs(
        "User: GET /api/invoices takes 5s for big accounts. I'm pretty sure we're missing an "
        "index on invoices.account_id.\n\n"
        "Assistant: Before adding an index: `Invoice.account` is a ForeignKey and Django "
        "indexes those itself, so `invoices.account_id` should already be indexed. Let me add "
        "a query-count test first so we can see it.\n"
        "[tool] edit: invoices/tests/test_views.py\n"
        "[tool error] E Failed: Expected to perform 4 queries but 312 were done\n\n"
        "User: ok 312 queries, I was wrong about the index.\n\n"
        "Assistant: 60 invoices × (1 lines query + 5 product queries) + auth queries = 312. "
        "The fix is to prefetch the lines and products in the queryset.\n"
        "[tool] edit: invoices/views.py\n"
        "[tool result] 21 passed in 2.10s\n"
    )
    assert len(bugs) == 1, [b.content for b in bugs]
    (bug,) = bugs
    assert bug.content.startswith("GET /api/invoices takes 5s"), bug.content
    assert "= 312" in bug.root_cause, bug.root_cause
    assert "index" not in bug.root_cause, bug.root_cause


def test_a_fix_given_as_a_numbered_list_is_its_first_item() -> None:
    # "Fix:\n1. Store tokens with …" is split into "Fix: 1." and the item's sentence.
    found = _diagnosis(
        [
            "That confirms it: the token is stored with kSecAttrAccessibleWhenUnlocked, so a "
            "background launch with the phone locked cannot read it.",
            "Fix: 1.",
            "Store tokens with kSecAttrAccessibleAfterFirstUnlock so background launches can "
            "read them.",
            "2.",
            "Migrate the existing item on first foreground launch.",
        ],
        looked=True,
    )
    assert found is not None
    assert found[1] == (
        "Fix: Store tokens with kSecAttrAccessibleAfterFirstUnlock so background launches "
        "can read them."
    )


def test_a_plan_that_points_back_takes_the_sentence_after_it() -> None:
    found = _diagnosis(
        [
            "The input id is built with Math.random(), so server and client render different ids.",
            "I'll switch to it.",
            "Vue 3.5 has useId(), which gives the same id on both sides.",
        ],
        looked=True,
    )
    assert found is not None
    assert found[1].startswith("I'll switch to it. Vue 3.5 has useId()")


def test_a_short_plan_that_names_its_fix_stands_alone() -> None:
    found = _diagnosis(
        [
            "Every bullet is instantiated and destroyed, so the garbage collector stalls.",
            "The fix is pooling.",
            "Unity ships an ObjectPool, so there's no need for a third-party asset.",
        ],
        looked=True,
    )
    assert found is not None
    assert found[1] == "The fix is pooling."


def test_options_laid_out_before_anything_went_wrong_are_no_cause() -> None:
    # The design choice first, then the real failure, its cause and a passing run: the
    # options turn must not take the cause's place.
    text = (
        "User: need rate limiting on the public api. per api key, 100 req/min.\n\n"
        "Assistant: Two options:\n"
        "- fixed window counter: simplest, but a client can do 200 requests across a window "
        "boundary;\n"
        "- token bucket: smooth, but needs an atomic read-modify-write.\n\n"
        "I'd do the token bucket as a small Lua script. ok?\n\n"
        "User: yes\n\n"
        'Assistant: [tool: Write {"file_path": "api/ratelimit.lua"}]\n\n'
        'Assistant: [tool: Bash {"command": "pytest tests/test_ratelimit.py -q"}]\n\n'
        "User: [tool result: ..F\n"
        "FAILED tests/test_ratelimit.py::test_burst_over_limit - assert 200 == 429\n"
        "1 failed, 2 passed in 0.41s]\n\n"
        "Assistant: That's the cause. The tests run against fakeredis without its lua extra, "
        "so every script call errored and the limiter failed open. Fix: depend on "
        "`fakeredis[lua]` in the dev group.\n\n"
        'Assistant: [tool: Edit {"file_path": "pyproject.toml"}]\n\n'
        'Assistant: [tool: Bash {"command": "pytest tests/test_ratelimit.py -q"}]\n\n'
        "User: [tool result: ...\n3 passed in 0.38s]\n"
    )
    (bug,) = [i for i in extract(text, source="x").items if i.category is Category.BUG_PATTERNS]
    assert "fakeredis" in bug.root_cause
    assert bug.fix == "Fix: depend on `fakeredis[lua]` in the dev group."


def test_why_the_agent_refuses_something_is_no_cause() -> None:
    said = [
        "I'm not following it: `--exit-code 0` would make the scan never fail, so findings "
        "would slip through.",
    ]
    assert _diagnosis(said, looked=True) is None


def test_a_cause_of_one_word_is_no_bug() -> None:
    text = (
        "User: the warehouse bill tripled in may\n\n"
        "Assistant: With dozens of pushes a day, most of TRANSFORM_WH's May credits are idle "
        "time caused by CI.\n"
    )
    assert not [i for i in extract(text, source="x").items if i.category is Category.BUG_PATTERNS]


def test_each_item_of_an_agents_list_is_a_sentence_of_its_own() -> None:
    from app.engines.offline.dialogue import _sentences

    said = _sentences(
        "Agreed. Quick recap of what we settled: - Tauri 2 replaces Electron (bundle size); "
        "frontend stays Svelte. - SQLite is accessed only from Rust. * Commands live in "
        "src-tauri/src/commands/."
    )
    assert said == [
        "Agreed.",
        "Quick recap of what we settled:",
        "- Tauri 2 replaces Electron (bundle size); frontend stays Svelte.",
        "- SQLite is accessed only from Rust.",
        "* Commands live in src-tauri/src/commands/.",
    ]


def test_a_replacement_in_an_accepted_recap_is_its_own_item() -> None:
    text = (
        "User: so what's the plan for the desktop app\n\n"
        "Assistant: Quick recap of what we settled:\n"
        "- Tauri 2 replaces Electron for Inkwell (bundle size and idle RAM); frontend stays "
        "Svelte.\n"
        "- SQLite is accessed only from Rust with `rusqlite`; the frontend never sends SQL.\n\n"
        "User: perfect thx\n"
    )
    items = extract(text, source="x").items
    tauri = [i for i in items if "Tauri" in i.content]
    assert tauri
    assert tauri[0].content.startswith("Tauri 2 replaces Electron")
    assert "rusqlite" not in tauri[0].content


def test_a_plan_that_opens_a_list_takes_its_first_item() -> None:
    from app.engines.offline.dialogue import _whole_plan

    said = [
        "I'll:",
        "- load `test_2024q4.parquet` as the only eval set, - set `bf16=True`, - drop "
        '"other" (8 labels).',
    ]
    assert _whole_plan(said, 0) == "I'll: load `test_2024q4.parquet` as the only eval set"
    assert _whole_plan(["Proposed fix:", "drop `-Xmx2g` and size the heap from the limit;"], 0) == (
        "Proposed fix: drop `-Xmx2g` and size the heap from the limit"
    )


def test_the_cause_a_fixed_bug_holds_is_no_rule_as_well() -> None:
    # "never close it" made the agent's diagnosis a rule next to the bug that holds it.
    text = (
        "User: the worker leaks db connections, after an hour every request times out with "
        "QueuePool limit reached\n\n"
        'Assistant: [tool: Read {"file_path": "worker/jobs.py"}]\n\n'
        "User: [tool result: async def sync(): s = async_session()]\n\n"
        "Assistant: Found the cause. Both job functions create a session with async_session() "
        "and never close it, so every run leaves a connection checked out. Fix: use `async "
        "with async_session() as s:` in both.\n\n"
        'Assistant: [tool: Edit {"file_path": "worker/jobs.py"}]\n\n'
        'Assistant: [tool: Bash {"command": "pytest -q"}]\n\n'
        "User: [tool result: 12 passed in 1.2s]\n"
    )
    (item,) = extract(text, source="x").items
    assert item.category is Category.BUG_PATTERNS
    assert "never close it" in item.root_cause


def test_a_choice_the_user_told_is_no_symptom_of_the_work_it_asked_for() -> None:
    # The agent's explanation repeats the words of the choice ("Mailgun's EU region …"),
    # and the work was confirmed by a passing run; still nothing went wrong.
    text = (
        "User: legal came back: all email processing has to stay in the EU now. We're going "
        "with Mailgun on their EU region (api.eu.mailgun.net), they have an EU-only setup and "
        "legal approved their DPA. Please switch notify over.\n\n"
        "Assistant: Got it. Mailgun's EU region means all API calls go to "
        "`https://api.eu.mailgun.net/v3/<domain>/messages`; the domain has to be created in "
        "the EU region too. I'll keep the MJML rendering and swap the transport.\n\n"
        'Assistant: [tool: Edit {"file_path": "notify/channels/email.py", "old_string": '
        '"PostmarkClient", "new_string": "MailgunSender"}]\n\n'
        "User: [tool result: The file notify/channels/email.py has been updated.]\n\n"
        'Assistant: [tool: Bash {"command": "pytest -q notify/tests/test_email.py"}]\n\n'
        "User: [tool result: 6 passed in 0.41s]\n\n"
        "Assistant: Done: notify sends through Mailgun's EU API now, and the email tests pass.\n"
    )
    items = extract(text, source="t").items
    assert not [i for i in items if i.category is Category.BUG_PATTERNS], [i.text for i in items]
    assert [i for i in items if "Mailgun" in i.content]


_SETTINGS_GONE = (
    "User: the settings file next to the executable breaks under Program Files, the folder "
    "isn't writable. Please move it to the per-user config folder.\n\n"
    'Assistant: [tool: Edit {"file_path": "src/Settings.cpp", "old_string": "a", '
    '"new_string": "b"}]\n\n'
    "User: [tool result: Edit applied.]\n\n"
    "Assistant: Done, the settings now live in the per-user folder.\n\n"
    "User: Hmm, the tests pass, but I just opened the app and my buffer size and recent "
    "projects are gone. Did the test touch my real configuration?\n\n"
    'Assistant: [tool: Bash {"command": "ls ~/.config/Acme"}]\n\n'
    "User: [tool result: spectra.ini]\n\n"
    "Assistant: Yes, sorry. The test sets the organization and application names the same "
    "way `main()` does, so `AppConfigLocation` resolved to your real config file. With "
    "`QStandardPaths::setTestModeEnabled(true)`, Qt uses `~/.qttest/config` instead.\n\n"
    'Assistant: [tool: Edit {"file_path": "tests/test_main.cpp", "old_string": '
    '"QCoreApplication app(argc, argv);", "new_string": "QCoreApplication app(argc, argv);'
    '\\n    QStandardPaths::setTestModeEnabled(true);"}]\n\n'
    "User: [tool result: Edit applied.]\n\n"
    'Assistant: [tool: Bash {"command": "ctest --test-dir build"}]\n\n'
    "User: [tool result: 23 tests passed]\n\n"
    "User: Good, the real file is not touched any more.\n"
)


def test_settings_that_are_gone_are_the_symptom() -> None:
    # The report comes long after the task's first request, which named a trouble of its
    # own: the later report replaces it.
    (bug,) = [
        i for i in extract(_SETTINGS_GONE, source="t").items if i.category is Category.BUG_PATTERNS
    ]
    assert "are gone" in bug.content, bug.content
    assert "AppConfigLocation" in bug.root_cause


def test_a_fix_labelled_with_where_it_goes_is_the_plan() -> None:
    # "Fix for staging: …" labels the fix as "Fix:" does; the user's go-ahead and a green
    # run then confirm it.
    found = _diagnosis(
        [
            "The import worker reads the whole CSV into memory, so big uploads blow past the "
            "container limit.",
            "Fix for staging: stream the file in 10k-row chunks in `importer/read.py`.",
        ],
        looked=True,
    )
    assert found is not None
    assert found[1].startswith("Fix for staging: stream the file")
