"""Changes of mind as a new user says them: two threads, the second retiring a choice of the first.

The acceptance point of issue 11, tried the way a user would: thread A states a choice ("Email
is sent through Mailgun."), thread B, weeks later, changes it in everyday words ("Email goes
out through Postmark these days, Mailgun is cancelled."). Each pair is memorized through the
API into a fresh home, offline, and passes when nothing of thread A is left active, thread B
left an active item, and A's statement was recorded as superseded (from the branch or from
the review queue).

These 60 pairs were written in the forty-fifth part of docs/decisions.md to find the forms the
engine missed, and some of its changes answer them: their figure is a probe, not a quality
claim (the labeled splits of bench/dialogue_quality.py are). Each pair is tried said alone
and said inside a longer thread (thread B after a finished task, opened by "thanks.", the
agent answering in general words). Prints each pair failing alone, then for each shape the
count that passes beside the count at the forty-fifth part's start.

Run: .venv/bin/python bench/changes_of_mind.py
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from app.container import build_api

# Pairs passing with the engine at the forty-fifth part's start (3e8a2b7): said alone, and
# said inside a longer thread.
BASELINE_PASSED = {"alone": 35, "in a longer thread": 29}

# (thread A says, thread B says)
PAIRS: tuple[tuple[str, str], ...] = (
    (
        "Background jobs run on Celery with Redis as the broker.",
        "We moved off Celery; background jobs run on Dramatiq now.",
    ),
    (
        "The CI uses CircleCI for every repository.",
        "CircleCI was replaced by Buildkite for every repository.",
    ),
    (
        "We use Moment.js for date formatting in the web app.",
        "We've retired Moment.js, the web app formats dates with date-fns.",
    ),
    ("Error tracking goes to Rollbar.", "We got rid of Rollbar, errors go to Sentry."),
    (
        "Use the requests library for HTTP calls in the Python services.",
        "requests is deprecated in our services, use httpx for HTTP calls.",
    ),
    ("The search runs on Elasticsearch.", "We migrated search from Elasticsearch to OpenSearch."),
    ("Sessions are stored in Memcached.", "Going with Redis for sessions instead of Memcached."),
    (
        "We write the docs in reStructuredText.",
        "Docs are Markdown now, rather than reStructuredText.",
    ),
    ("The team uses Trello for the backlog.", "Trello is out, the backlog lives in Linear."),
    (
        "Use Yarn for installing packages in the monorepo.",
        "We ditched Yarn, the monorepo installs packages with pnpm.",
    ),
    ("Use Gunicorn to serve the Django app.", "Serve the Django app with uvicorn, not Gunicorn."),
    (
        "Metrics are pushed to Graphite.",
        "Graphite has been phased out in favour of Prometheus for metrics.",
    ),
    (
        "The service talks to Postgres through SQLAlchemy.",
        "We swapped SQLAlchemy for raw asyncpg queries in the service.",
    ),
    ("Logs are shipped with Logstash.", "Fluent Bit took over from Logstash for shipping logs."),
    (
        "Translations are managed in Crowdin.",
        "We no longer use Crowdin; translations are managed in Lokalise.",
    ),
    (
        "Dates are stored as local time in Europe/Paris.",
        "Dates are stored in UTC now, we stopped storing Paris local time.",
    ),
    (
        "Images are stored on the local disk under /var/uploads.",
        "Uploads no longer go to local disk; they go to S3 now.",
    ),
    (
        "We build the frontend with Webpack.",
        "Webpack is gone from the frontend, Vite builds it now.",
    ),
    (
        "Feature branches are merged with merge commits.",
        "From now on we squash-merge feature branches, no more merge commits.",
    ),
    (
        "Email is sent through Mailgun.",
        "Email goes out through Postmark these days, Mailgun is cancelled.",
    ),
    ("We deploy the API to Heroku.", "Heroku is history, the API deploys to Fly.io since Monday."),
    ("Use Mocha for the backend tests.", "mocha not used anymore, backend tests are on node:test."),
    ("Tokens are signed with HS256.", "we dont sign with HS256 anymore, RS256 for all tokens."),
    (
        "Our monitoring runs on Datadog.",
        "Datadog contract ended, monitoring moved to Grafana Cloud.",
    ),
    (
        "Keep the secrets in a .env file on the server.",
        "Secrets live in Vault now. The .env file on the server is not allowed anymore.",
    ),
    (
        "The Android app uses Retrofit for networking.",
        "Retrofit was removed, networking uses Ktor client now.",
    ),
    (
        "Use MySQL 5.7 for the reporting database.",
        "Reporting database is upgraded to MySQL 8, 5.7 is end of life for us.",
    ),
    (
        "We write the firmware drivers in C.",
        "New firmware drivers are written in Rust, we stop writing drivers in C.",
    ),
    ("Config files are in INI format.", "Config is TOML from now on, INI files are converted."),
    (
        "The batch jobs are scheduled with cron on the VM.",
        "The batch jobs are scheduled by Airflow, no cron on the VM anymore.",
    ),
    (
        "Use Storybook 6 for the component library.",
        "We upgraded to Storybook 8, Storybook 6 is dropped.",
    ),
    (
        "The queue consumer is written in Python.",
        "We rewrote the queue consumer in Go, the Python one is deleted.",
    ),
    ("Use Bootstrap for the admin UI styling.", "Tailwind replaced Bootstrap in the admin UI."),
    (
        "Product images are resized by ImageMagick.",
        "libvips instead of ImageMagick for resizing product images.",
    ),
    (
        "Tests run against SQLite in CI.",
        "CI tests run against Postgres in a container, SQLite was giving false greens.",
    ),
    ("We pin Node 16 in the Dockerfile.", "Node 16 is EOL so we pin Node 20 in the Dockerfile."),
    (
        "Use Formik for forms in the React app.",
        "Formik is abandoned upstream; react-hook-form for all forms.",
    ),
    (
        "API keys are sent in the query string.",
        "API keys go in the Authorization header, never in the query string anymore.",
    ),
    (
        "Releases are tagged by hand.",
        "Releases are tagged by semantic-release now, no manual tags.",
    ),
    ("The cache TTL is 5 minutes.", "Cache TTL changed to 60 seconds, 5 minutes was too stale."),
    ("Max upload size is 10 MB.", "We raised the max upload size to 25 MB."),
    (
        "Use 2 spaces for indentation in YAML files.",
        "YAML files use 4 spaces now, 2 spaces was too cramped.",
    ),
    (
        "Branch names follow feature/<ticket>.",
        "Branch names are <ticket>-<slug> now, no more feature/ prefix.",
    ),
    ("API timeouts are 30 seconds.", "API timeout is 10 seconds from now on."),
    ("Commit messages use gitmoji.", "We don't do gitmoji anymore, conventional commits instead."),
    (
        "Keep test files next to the source files.",
        "Tests go in a separate tests/ folder now instead of next to the source.",
    ),
    ("Password hashing uses bcrypt.", "Switch password hashing to argon2id."),
    ("The staging database is refreshed weekly.", "Staging DB refresh is nightly now."),
    ("We release every two weeks.", "We release every Monday now, the two-week cycle is over."),
    (
        "Log level in production is DEBUG.",
        "Production log level goes to INFO, DEBUG was too noisy.",
    ),
    ("Use snake_case for JSON fields.", "JSON fields are camelCase from now on."),
    ("A pull request needs one approval.", "Pull requests need two approvals now."),
    ("Retry failed webhooks 3 times.", "Retry failed webhooks 5 times, 3 was not enough."),
    ("Docker images are based on Ubuntu.", "Base images are Debian slim now instead of Ubuntu."),
    (
        "Run the linter in a pre-commit hook.",
        "The linter runs in CI only, we removed the pre-commit hook.",
    ),
    ("Use Python 3.10 for all services.", "All services moved to Python 3.12."),
    ("Store money as float.", "Money is stored as integer cents now, floats caused rounding bugs."),
    ("The app supports iOS 14 and newer.", "Minimum iOS version is 16 now."),
    (
        "Session cookies expire after 24 hours.",
        "Session cookies expire after 8 hours, security asked for it.",
    ),
    (
        "Use GraphQL for the mobile API.",
        "We're going back to REST for the mobile API, GraphQL added too much complexity.",
    ),
)

BRANCH = "probe/main"


@dataclass
class Outcome:
    old_active: bool
    new_active: bool
    superseded: bool

    @property
    def passed(self) -> bool:
        return not self.old_active and self.new_active and self.superseded

    def why(self) -> str:
        return ", ".join(
            reason
            for reason, wrong in (
                ("the old choice is still active", self.old_active),
                ("nothing of thread B is active", not self.new_active),
                ("nothing recorded as superseded", not self.superseded),
            )
            if wrong
        )


def _thread(said: str, source: str, shape: str) -> str:
    """The conversation text: the statement alone, or (thread B in a longer thread) after a
    task the agent finished, opened by "thanks.", answered in general words."""
    if shape == "alone" or source == "thread-a":
        return f"User: {said}\n\nAssistant: Noted.\n"
    return (
        "User: can you bump the dependencies this week?\n\n"
        "Assistant: Done, all minor bumps, tests pass.\n\n"
        f"User: thanks. {said}\n\n"
        "Assistant: Got it, I'll keep that in mind for the next changes.\n"
    )


def _memorize(api: Any, said: str, source: str, day: date, shape: str) -> None:
    reply = api.invoke(
        "memory:memorize",
        {
            "conversationText": _thread(said, source, shape),
            "branchId": BRANCH,
            "source": source,
            "conversationDate": day.isoformat(),
        },
    )
    assert "error" not in reply, reply


def probe(before: str, after: str, shape: str = "alone") -> Outcome:
    root = Path(tempfile.mkdtemp(prefix="puffin-probe-"))
    try:
        api = build_api(root / "home", engine_override="offline")
        _memorize(api, before, "thread-a", date(2026, 10, 1), shape)
        _memorize(api, after, "thread-b", date(2026, 11, 20), shape)
        memory = api.store.read(BRANCH)
        active = memory.all_items() if memory is not None else []
        superseded = memory is not None and any(
            c.status == "superseded" and any("thread-a" in i.sources for i in c.items)
            for c in memory.contradictions
        )
        return Outcome(
            old_active=any("thread-a" in i.sources for i in active),
            new_active=any("thread-b" in i.sources for i in active),
            superseded=superseded,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    for shape, baseline in BASELINE_PASSED.items():
        passed = 0
        for n, (before, after) in enumerate(PAIRS, 1):
            outcome = probe(before, after, shape)
            passed += outcome.passed
            if not outcome.passed and shape == "alone":
                print(f"  {n:2d}. {after!r}: {outcome.why()}")
        print(
            f"changes of mind, {shape}: {passed} of {len(PAIRS)} pass "
            f"(the engine at the forty-fifth part's start: {baseline} of {len(PAIRS)})"
        )


if __name__ == "__main__":
    main()
