"""Tests for app/core/similarity.py: tokens, similarity scores, stances and contradictions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.models import Category, MemoryItem
from app.core.similarity import (
    contradicts,
    item_similarity,
    sets_a_value,
    similarity,
    stance,
    stances,
    tokens,
)

PREF = Category.CODING_PREFERENCES


def item(content: str, category: Category = PREF, title: str = "") -> MemoryItem:
    return MemoryItem(category=category, title=title, content=content)


# --- tokens ----------------------------------------------------------------------------------


def test_tokens_drop_stop_words_and_case() -> None:
    assert tokens("The API returns JSON to the caller") == tokens("api RETURNS json caller")
    assert "the" not in tokens("the parser")


def test_tokens_stem_word_forms_alike() -> None:
    assert tokens("tests") == tokens("testing") == tokens("tested") == tokens("test")
    assert tokens("cache") == tokens("cached") == tokens("caching")
    assert tokens("dependencies") == tokens("dependency")


def test_tokens_keep_negation_so_opposites_differ() -> None:
    assert "not" in tokens("don't use globals")
    assert tokens("use globals") != tokens("don't use globals")


def test_tokens_keep_then_for_promise_chains() -> None:
    assert "then" in tokens(".then() chains")


# --- similarity ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "Prefer async/await over .then() chains",
            "User prefers async/await over Promise .then() chains",
        ),
        ("Variables use camelCase across all files", "Variables use camelCase across all files."),
        ("Always run the linter before committing", "Always run the linter before commiting"),
        ("Use pytest fixtures for database setup", "Use pytest fixtures for the database setup"),
    ],
)
def test_near_duplicates_reach_the_default_threshold(a: str, b: str) -> None:
    assert similarity(a, b) >= 0.8


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Use pytest fixtures for database setup", "Use pytest markers for slow tests"),
        ("Race conditions in async state updates", "Composition reduces coupling"),
        ("Use Redis for caching", "Use Postgres for persistence"),
        ("Avoid global state", "Global state lives in the store module"),
    ],
)
def test_texts_that_share_a_few_words_stay_below_the_threshold(a: str, b: str) -> None:
    assert similarity(a, b) < 0.8


def test_related_texts_pass_the_import_threshold_but_not_the_duplicate_one() -> None:
    a = "Always validate request bodies with pydantic models"
    b = "Validate request bodies with pydantic before saving them to the database"
    assert 0.5 <= similarity(a, b) < 0.8


def test_similarity_edge_cases() -> None:
    assert similarity("", "") == 1.0
    assert similarity("something", "") == 0.0
    assert similarity("Use X.", "use x") == 1.0
    # Only stop words: falls back to characters, still in range.
    assert 0.0 <= similarity("to be or not", "to be and not") <= 1.0


def test_floor_keeps_results_at_or_above_it_exact() -> None:
    a = "Prefer async/await over .then() chains"
    b = "User prefers async/await over Promise .then() chains"
    assert similarity(a, b, floor=0.8) == similarity(a, b)
    far = similarity("Use Redis for caching", "Composition reduces coupling", floor=0.8)
    assert far < 0.8


@given(st.text(max_size=60), st.text(max_size=60), st.floats(min_value=0, max_value=1))
def test_similarity_is_bounded_symmetric_and_floor_consistent(a: str, b: str, f: float) -> None:
    score = similarity(a, b)
    assert 0.0 <= score <= 1.0
    assert score == pytest.approx(similarity(b, a))
    floored = similarity(a, b, floor=f)
    assert (floored >= f) == (score >= f)


def test_item_similarity_reads_title_and_content() -> None:
    a = item("Use camelCase for variables", title="Naming")
    b = item("Use camelCase for variables", title="Naming")
    c = item("Race conditions in async state updates", Category.BUG_PATTERNS, title="Race")
    assert item_similarity(a, b) == 1.0
    assert item_similarity(a, c) < 0.5


# --- stances ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "polarity"),
    [
        ("Use black for formatting", 1),
        ("Always use black for formatting", 1),
        ("We prefer black for formatting", 1),
        ("Don't use black for formatting", -1),
        ("Do not use black for formatting", -1),
        ("Never use black for formatting", -1),
        ("Avoid black for formatting", -1),
        ("Stop using black for formatting", -1),
    ],
)
def test_stance_polarity_and_subject(text: str, polarity: int) -> None:
    found = stance(text)
    assert found is not None
    subject, pol = found
    assert pol == polarity
    assert "black" in subject.split()


def test_statements_without_a_stance() -> None:
    assert stance("Race conditions happened in async state updates") is None
    assert stances("The parser is fast") == []


@pytest.mark.parametrize(
    ("text", "favoured", "disfavoured"),
    [
        ("Use httpx instead of requests", "httpx", "request"),
        ("httpx rather than requests", "httpx", "request"),
        ("Prefer httpx to requests", "httpx", "request"),
        ("Prefer httpx over requests", "httpx", "request"),
        ("httpx over requests", "httpx", "request"),
        ("Replace requests with httpx", "httpx", "request"),
        ("Switch from requests to httpx", "httpx", "request"),
        ("Use httpx, not requests", "httpx", "request"),
        ("httpx is better than requests", "httpx", "request"),
        ("Don't use requests instead of httpx", "httpx", "request"),
    ],
)
def test_comparatives_favour_one_side(text: str, favoured: str, disfavoured: str) -> None:
    found = {(" ".join(sorted(s.subject)), s.polarity) for s in stances(text)}
    assert (favoured, 1) in found
    assert (disfavoured, -1) in found


def test_prefer_to_with_a_purpose_is_not_a_comparison() -> None:
    found = stances("Prefer small functions to make testing easier")
    assert all(s.polarity == 1 for s in found)


def test_dotted_code_survives_sentence_splitting() -> None:
    found = stances("Prefer async/await over Promise.then() chains. Keep it simple.")
    keys = {(s.key, s.polarity) for s in found}
    assert ("async await", 1) in keys
    assert any(pol == -1 and "then" in key for key, pol in keys)


# --- contradictions --------------------------------------------------------------------------

CONTRADICTING = [
    ("Use X", "Don't use X"),
    ("Always use tabs for indentation", "Never use tabs for indentation"),
    ("Use Redux for state management", "Avoid Redux for state management"),
    ("Use httpx instead of requests", "Use requests instead of httpx"),
    ("async/await over .then() chains", "prefer .then() chains to async/await"),
    ("User prefers async/await over Promise.then() chains", "Prefer .then() chains to async/await"),
    ("Composition over inheritance", "Inheritance over composition"),
    ("Use tabs, not spaces", "Use spaces, not tabs"),
    ("Replace requests with httpx", "Use requests instead of httpx"),
    ("Mock the database in tests", "Never mock the database in tests"),
    ("Always commit lock files", "Don't commit lock files"),
    ("Switch from npm to pnpm", "Use npm, not pnpm"),
    # The same frame, the name one chose turned down by the other for another one.
    ("Use Gunicorn to serve the Django app.", "Serve the Django app with uvicorn, not Gunicorn."),
    ("Queue the billing jobs with Celery.", "Queue the billing jobs with Dramatiq, not Celery."),
]


@pytest.mark.parametrize(("a", "b"), CONTRADICTING)
def test_opposite_stances_contradict(a: str, b: str) -> None:
    assert contradicts(item(a), item(b))
    assert contradicts(item(b), item(a))


NOT_CONTRADICTING = [
    ("Use X", "Use X"),
    ("Use X", "Always use X"),
    ("Use httpx instead of requests", "Avoid requests"),
    ("Use Redis for caching", "Don't use Redis for sessions"),
    ("Use Redis", "Don't use Redis for sessions"),
    ("Use print for debugging output", "Never use print for logging"),
    ("Use pytest fixtures for database setup", "Don't use pytest markers for slow tests"),
    ("Avoid global state", "Global state lives in the store module"),
    ("Race conditions in async state updates", "Avoid race conditions by locking"),
    ("Prefer async/await over .then() chains", "Use async/await in all new modules"),
    ("The parser doesn't handle tabs", "Use tabs for indentation"),
    ("Use tabs, not spaces", "Tabs render differently in the editor"),
    ("Loop over items with enumerate", "Avoid mutable default arguments"),
    # A name turned down in another frame, or beside more than one new thing.
    ("Use Postgres for the orders service.", "Cache the orders service with Redis, not Postgres."),
    ("Use Gunicorn to serve the Django app.", "Log the Django app with structlog, not Gunicorn."),
    ("Use Gunicorn to serve the Django app.", "Serve the Django app with uvicorn, not nginx."),
]


@pytest.mark.parametrize(("a", "b"), NOT_CONTRADICTING)
def test_shared_words_or_agreement_are_not_contradictions(a: str, b: str) -> None:
    assert not contradicts(item(a), item(b))
    assert not contradicts(item(b), item(a))


CHANGED_SETTINGS = [
    (
        "Set retention for the app logs to 14 days.",
        "Loki retention for app logs goes up to 30 days.",
    ),
    (
        "Access tokens (JWT, HS256 for now) live 15 minutes, refresh tokens 7 days.",
        "New value: 60 minutes for access tokens.",
    ),
    ("Upload limit is 10 MB per file.", "The upload limit goes up to 25 MB."),
    (
        "HTTP calls to the payment provider time out after 30 s.",
        "Payment provider HTTP calls: 10s.",
    ),
    # A bare number: a count, a length, a version.
    ("Max line length is 100 for all Python code.", "Keep Python lines under 120 characters."),
    ("The invoice worker retries 5 times.", "Make it 3 retries for the invoice worker."),
    ("We support python 3.10 as the minimum.", "Python 3.12 is the minimum now."),
    # An acronym, the same one or spelled out.
    ("The minimum supported Rust version is 1.70.", "The MSRV goes up to 1.74."),
    ("The MSRV is 1.70.", "The MSRV goes up to 1.74."),
    # A number in scientific notation, brought down.
    ("AdamW with a peak learning rate of 3e-4.", "Bring the peak learning rate down to 1e-4."),
    # A count written as a word, or one in words and one in digits.
    ("A pull request needs one approval.", "Pull requests need two approvals now."),
    ("The billing worker runs three replicas.", "The billing worker runs 5 replicas."),
    # How often, said in one word.
    ("The staging database is refreshed weekly.", "Staging DB refresh is nightly now."),
    ("Backups run nightly at 02:00.", "Backups run hourly now."),
]
SAME_OR_OTHER_SETTINGS = [
    # The same value said another way.
    ("Retention for app logs is 14 days.", "App log retention stays 2 weeks."),
    # Another thing measured in the same unit.
    ("Access tokens live 15 minutes.", "Refresh tokens live 7 days."),
    ("HTTP calls time out after 30 s.", "Database statements time out after 5 s."),
    # Not a unit: "144hz" is no 144 hours.
    ("The jitter shows on 144hz screens only.", "The jitter shows on 60hz screens too."),
    # Another dimension.
    ("Upload limit is 10 MB per file.", "Upload limit is 10 files per minute request batch."),
    # A count of the same thing in another scope, of another thing, or a year or a name.
    ("Staging runs 2 replicas.", "Prod runs 4 replicas."),
    ("The API service runs 2 replicas.", "The API service runs 4 workers per replica."),
    ("Unity pooling is built in since 2021.", "Unity pooling is built in since 2022."),
    ("Tickets are named like MLX-412.", "Tickets are named like MLX-413."),
    ("We support python 3.10 as the minimum.", "We support python 3.10 as the minimum."),
    ("The peak learning rate is 3e-4.", "Keep the peak learning rate at 3e-4."),
    # An acronym that spells other words, or a capitalised word that is none.
    ("The minimum supported Rust version is 1.70.", "The SLA goes up to 99.9."),
    ("Keep the API at 2 replicas.", "The CPU limit is 4."),
    # A number word that counts nothing: a pronoun, "one of", or the same count in digits.
    ("The one we use for the API is Redis.", "The two we use for the API are Redis and Kafka."),
    ("One of the workers handles retries.", "Two of the workers handle retries."),
    ("A pull request needs two approvals.", "A pull request needs 2 approvals."),
    ("One file per service.", "One file per form."),
    # A period word that names a thing, or the same period, or another thing's period.
    ("The daily job exports orders.", "The weekly job exports orders."),
    ("The staging database is refreshed nightly.", "Staging DB refresh is nightly."),
    ("Backups run nightly.", "Deploys run weekly."),
]


@pytest.mark.parametrize(("old", "new"), CHANGED_SETTINGS)
def test_a_setting_given_another_value_contradicts(old: str, new: str) -> None:
    assert contradicts(item(new, Category.PROJECT_CONVENTIONS), item(old))


@pytest.mark.parametrize(("a", "b"), SAME_OR_OTHER_SETTINGS)
def test_same_values_or_other_settings_do_not_contradict(a: str, b: str) -> None:
    assert not contradicts(item(a), item(b))
    assert not contradicts(item(b), item(a))


def test_bare_statements_in_bug_patterns_are_not_read_as_advice() -> None:
    symptom = item("Mock the database in tests", Category.BUG_PATTERNS)
    advice = item("Never mock the database in tests", Category.BUG_PATTERNS)
    assert not contradicts(symptom, advice)


def test_an_item_does_not_contradict_itself() -> None:
    both = item("Use X; never use X")
    assert not contradicts(both, both)


def test_title_stance_counts() -> None:
    a = item("Reduces coupling and improves reuse", title="Composition over inheritance")
    b = item("Prefer inheritance to composition for widgets")
    assert contradicts(a, b)


def test_descriptions_are_not_read_as_imperatives() -> None:
    story = item("The original function is named getRandomPosition, but the search uses another")
    rename = item("Replace the function named getRandomPosition with getRandomTopPosition")
    assert not contradicts(story, rename)


def test_a_schedule_in_one_word_sets_a_value_and_a_thing_named_by_it_does_not() -> None:
    assert sets_a_value("Staging DB refresh is nightly now.")
    assert not sets_a_value("The daily export job writes to S3.")
