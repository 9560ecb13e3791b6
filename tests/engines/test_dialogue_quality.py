"""The offline engine on the held-out test split of the labeled dialogue set (issue 11).

Scoring lives in bench/dialogue_quality.py (which prints the full report per split). The
engine is tuned on `dev/` only; these assertions read `test/`. The floors are the levels
reached so far, so a change that loses ground fails here; the issue's targets (precision
0.90, recall 0.80, every sequence check) are not met yet and are tracked in issue 11.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.benches import load_bench

SETS = Path(__file__).resolve().parents[1] / "fixtures" / "dialogue"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("dialogue_quality")


def test_the_labeled_set_is_large_enough_and_split() -> None:
    counts = {
        split: len(list((SETS / split).glob("*.expected.json")))
        for split in ("dev", "test", "holdout")
    }
    assert sum(counts.values()) >= 40 and min(counts["dev"], counts["test"]) >= 18
    assert counts["holdout"] >= 16
    real = list(SETS.glob("*/corpus_*.txt"))
    assert len(real) >= 12
    for split in ("dev", "test"):
        assert len(list((SETS / split / "sequences").iterdir())) >= 8
        for path in (SETS / split).glob("*.expected.json"):
            data = json.loads(path.read_text(encoding="utf-8"))
            text = (
                path.with_name(path.name.replace(".expected.json", ".txt"))
                .read_text(encoding="utf-8")
                .lower()
            )
            for entry in data["must"]:
                assert all(k.lower() in text for k in entry["keywords"]), (path.name, entry)


def test_held_out_quality_does_not_fall(bench: ModuleType) -> None:
    report = bench.evaluate("test")
    passed, total = report.sequence_checks()
    # Raised from 0.76 / 0.53 when the word model alone chose rule categories, and from
    # 0.80 / 0.56 with proposals accepted by name (2026-11-26). 0.80, not 0.81, since two
    # rules stated back to back about one subject became one item: right items 18 -> 17,
    # wrong items 4 -> 4, required items found unchanged (docs/decisions.md, eighth part).
    # 0.84 once one rule said in two sentences of different kinds is one item (thirty-fifth).
    assert report.precision() >= 0.84, report.precision()
    assert report.recall() >= 0.60, report.recall()
    # 10 of 13 since a choice of a tool the keyword tables do not know counts (sixteenth);
    # 11 once a change that names what it retires records it (thirty-second); 12 once not
    # knowing which way the agent asked leaves the point open (forty-sixth).
    assert passed >= 12, (passed, total)
    assert not report.secrets
    assert not report.violations(), report.violations()


@pytest.mark.parametrize("split", ["test", "holdout"])
def test_sessions_as_the_app_renders_them_score_as_the_transcripts(
    bench: ModuleType, split: str
) -> None:
    # What the engine reads from a real Claude Code or Codex session: calls inside the
    # assistant's block, a successful output reduced to its pass summary (thirtieth part;
    # before it, recall here was 0.53 and 0.41). Within one item of the transcript form.
    written = bench.evaluate(split)
    rendered = bench.evaluate(split, rendered=True)
    hits = [
        sum(sum(c.matched(c.committed())) for c in r.conversations) for r in (written, rendered)
    ]
    assert hits[1] >= hits[0] - 1, hits
    assert rendered.precision() >= written.precision() - 0.05, rendered.precision()
    assert rendered.sequence_checks() == written.sequence_checks()
    assert len(rendered.violations()) <= len(written.violations()), rendered.violations()


def test_unseen_annotator_quality_does_not_fall(bench: ModuleType) -> None:
    report = bench.evaluate("holdout")
    passed, total = report.sequence_checks()
    # Lowered from 0.40 / 0.48 when the category model was retrained on 155 dev
    # conversations (docs/decisions.md, "category model retrained"); raised again to the
    # figures after the bug-unit fixes of the fourth part (0.386 / 0.459, 5 violations), and
    # after the seventh part (0.44 / 0.46, 1 violation), after the eighth (0.50 / 0.459), and
    # after the tenth (0.515 / 0.459), after the sixteenth (0.529 / 0.486), and after the
    # seventeenth (0.588 / 0.541), and after the nineteenth (0.606 / 0.541), and once the
    # hold model sends doubted user rules to review (twentieth: 0.645 / 0.541), and once a
    # fixed bug's symptom is no rule as well (twenty-fifth: 0.667 / 0.541), and once a
    # rule's topic no longer keeps its next sentence apart (thirty-second: 0.70 / 0.568),
    # and once one rule said in two sentences of different kinds is one (thirty-fifth: 0.724).
    assert report.precision() >= 0.72, report.precision()
    assert report.recall() >= 0.56, report.recall()
    assert passed >= 1, (passed, total)
    assert not report.secrets
    assert len(report.violations()) <= 1, report.violations()


# The later held-out batches, each written by annotators who never saw the engine:
# (split, precision, recall, sequence checks passed, must-not violations). Batches 3 to 5
# train the learned judge and category model since the fourteenth part (their unseen
# figures are in tests/fixtures/dialogue/README.md); their floors now only catch
# regressions. Batches 6 to 14 (and `holdout/`, `test/`) are still only scored.
HELD_OUT_FLOORS = [
    # A fourth annotator: the figures after the seventh part of the offline engine v2,
    # raised after the eighth, the twelfth and the thirteenth; trained on since the
    # fourteenth (0.457 / 0.377; scored out of batch 0.42 / 0.36 before it joined); 0.447
    # in the sixteenth, when a decision it lists under another category was first found;
    # 0.477 after the seventeenth; 0.488 with the hold model (twentieth); 0.500 once the
    # need a conversation opens with is its task (twenty-fifth); 0.512 once someone else's
    # opinion of a change is no change (twenty-ninth).
    ("holdout3", 0.51, 0.37, 7, 0),
    # Three more annotators: unseen on arrival 0.40 / 0.44; 0.471 / 0.488 and 8 violations
    # after the thirteenth part; trained on since the fourteenth (0.506 / 0.524); 0.518 /
    # 0.524, 24 sequence checks and 7 violations after the seventeenth (0.531 at its end);
    # 0.568 / 0.549 after the nineteenth; 0.618 / 0.561 with the hold model (twentieth);
    # 0.632 / 0.573 once a fixed bug takes in more of the agent's closing account
    # (twenty-second); 25 sequence checks once a list announced as rules is read as rules
    # (thirtieth).
    # 0.653 / 0.585 in the thirty-second.
    # 0.667 / 0.602 in the thirty-seventh.
    # 6 must-not once a rule the hold model doubts is left out, not queued (fifty-second).
    ("holdout4", 0.67, 0.60, 25, 6),  # 0.671 / 0.610 (thirty-ninth)
    # Three more: unseen on arrival 0.36 / 0.38; 0.395 / 0.384 after the twelfth part;
    # trained on since the fourteenth (0.483 / 0.464, 20 of 43 sequence checks); 0.483 /
    # 0.455 and 9 must-not once a reporter's guess is no symptom (fifteenth part).
    # 0.504 / 0.482 after the seventeenth; 0.545 / 0.491 with the hold model (twentieth);
    # 0.564 / 0.509 with more of the closing account (twenty-second); 0.559 once "No
    # captcha tho, product will literally kill me" is no reversal of "me" and stands alone, a
    # true rule whose words its label files under another item (twenty-fourth).
    # 0.562 / 0.518 once one item of the user's list is one rule (thirty-first).
    # 0.573 in the thirty-second. 21 sequence checks once more everyday words retire an old
    # choice ("Mailgun is cancelled", "Tailwind replaced Bootstrap"; forty-fifth).
    ("holdout5", 0.57, 0.51, 21, 9),
    # Three more: unseen on arrival 0.35 / 0.35, 26 must-not, 25 of 52 sequence checks;
    # 0.378 / 0.365 and 27 sequence checks with the models of the fourteenth part; 25
    # must-not after the fifteenth.
    # 29 sequence checks once the agent's accepted report of a replacement counts (sixteenth);
    # 0.389 / 0.372 after the seventeenth; 31 sequence checks after the eighteenth; 0.408 /
    # 0.387 and 24 must-not after the nineteenth; 0.425 / 0.387 with the hold model
    # (twentieth); 23 must-not once a paste the user announces is no one's words
    # (twenty-first); 0.432 once a rule only the agent gave needs the judge's 0.4
    # (twenty-eighth); 32 sequence checks once a held change of a choice in force is
    # committed (thirty-ninth); 20 must-not once the agent's lone candidates need 0.4 (0.7
    # when the rules were unsure of them; forty-eighth); 19 once a rule the hold model
    # doubts is left out, not queued (fifty-second).
    ("holdout6", 0.43, 0.38, 32, 19),
    # Three more: unseen on arrival 0.46 / 0.41 (0.456 with the session-start engine, 0.463
    # with the tenth part's changes), 38 must-not, 27 of 54 sequence checks; after the
    # twelfth 0.471 / 0.442; 37 must-not after the thirteenth, 36 after the fourteenth
    # (0.471 / 0.449); 0.479 / 0.456 and 35 must-not after the fifteenth; 28 sequence
    # checks in the sixteenth, then 30; 0.489 / 0.456 after the seventeenth; 0.489 and 34
    # must-not after the nineteenth; 0.515 / 0.456 with the hold model (twentieth); 33
    # must-not once lines written for an AI reader are nobody's words (twenty-first); 0.523 /
    # 0.463 once the latest closing account after the report completes a bug (twenty-second);
    # 0.531 / 0.469 once a rule compared to the agent's work ("like you did") is a rule
    # (twenty-fourth).
    # 27 must-not once a rule the hold model doubts is left out, not queued (fifty-second).
    ("holdout7", 0.54, 0.46, 30, 27),  # 0.543 (thirty-second); 29 must-not (forty-eighth)
    # Three more, written for the fourteenth part: unseen on arrival 0.34 / 0.35 with the
    # session-start engine, 0.359 / 0.367 with the retrained models; 8 must-not, 40 of 74
    # sequence checks with both; 6 must-not once a remark about "an instruction addressed to
    # an AI" counted as one about a planted instruction; 0.366 / 0.374 after the fifteenth;
    # 41 sequence checks in the sixteenth; 0.381 / 0.381 and 42 after the seventeenth (43
    # in the eighteenth until "X goes away" stopped counting as a retirement); 45 after the
    # nineteenth ("we move X to Y" replaces an earlier thread's choice for X); 0.402 / 0.381
    # with the hold model (twentieth); 46 once turning down the agent's closing offer is no
    # rejection of its report (twenty-seventh); 0.415 and 47 once one item of the user's
    # list is one rule (thirty-first).
    # 48 once a retirement with its reason, then "use …", is one rule (thirty-seventh); 49
    # once a preface calling the rest decided names a rule (fortieth).
    ("holdout8", 0.43, 0.40, 49, 3),  # 0.435 / 0.401 (thirty-fifth); 3 must-not (48th)
    # Three more, written for the fifteenth part: unseen on arrival 0.369 / 0.423 (0.373 /
    # 0.423 with the session-start engine), 14 must-not, 25 of 49 sequence checks; 0.381 /
    # 0.443 once keeping a choice ("we stay on pandas") is a rule (sixteenth part); 0.414 /
    # 0.474 after the seventeenth (0.411 / 0.474 and 26 sequence checks after the
    # eighteenth, once the review queue is settled by later threads); 0.429 / 0.495 after
    # the nineteenth; 0.462 / 0.495 with the hold model (twentieth); 0.476 / 0.505 with
    # more of the closing account (twenty-second); 28 sequence checks once a disagreement
    # keeps the side it answers (twenty-third); 29 once what a thing does to something is no
    # choice dropped (twenty-fourth); 0.485 after the twenty-fifth.
    # 13 must-not with the same change (thirty-seventh); 30 sequence checks once a change
    # records what it retires in more words (fortieth); 31 once not knowing which way the
    # agent asked leaves the point open (forty-sixth), 32 with more ways of putting it off.
    ("holdout9", 0.48, 0.50, 32, 13),
    # Three more, written for the sixteenth part: unseen on arrival 0.479 / 0.481, 12
    # must-not, 30 of 48 sequence checks (0.482 / 0.463 and 29 with the session-start engine);
    # 0.509 / 0.500 after the seventeenth; 31 sequence checks after the eighteenth; 0.547 /
    # 0.500 with the hold model (twentieth); 0.557 / 0.509 with more of the closing account
    # (twenty-second); 0.567 and 11 must-not once a person or a quantity names nothing a
    # reversal drops (twenty-fourth); 0.562 after the twenty-fifth (one wrong item more);
    # 0.571 / 0.519 once a closing account is its whole list item (twenty-sixth).
    # 33 sequence checks once a change records what it retires in more words (fortieth).
    # 10 must-not once the agent's lone candidates need 0.4 (forty-eighth); 9 once a rule the
    # hold model doubts is left out, not queued (fifty-second).
    ("holdout10", 0.59, 0.52, 34, 9),  # 0.598 / 0.528 (35th); 34 sequence checks (46th)
    # Three more, written for the seventeenth part: unseen on arrival 0.346 / 0.302, 7
    # must-not, 15 of 40 sequence checks (0.337 / 0.302 with the session-start engine);
    # 0.354 after the part's last change; 0.359 and 16 sequence checks with the hold model.
    # 17 sequence checks once not knowing which way the agent asked leaves it open (46th).
    ("holdout11", 0.38, 0.32, 17, 7),  # 0.385 / 0.323 (thirty-fifth)
    # Three more, written for the eighteenth part: unseen on arrival 0.50 / 0.417, 8 must-not,
    # 11 of 36 sequence checks, the same with the session-start engine; 0.512 / 0.427 after
    # the nineteenth; 0.538 / 0.427 with the hold model (twentieth); 0.545 once a paste
    # the user announces is no one's words (twenty-first); 12 sequence checks once a point
    # left open may set one named source against an earlier rule (twenty-third).
    # 6 must-not once a rule the hold model doubts is left out, not queued (fifty-second).
    ("holdout12", 0.55, 0.42, 12, 6),  # 0.553 (thirty-second); 7 must-not (forty-eighth)
    # Three more, written for the nineteenth part: unseen on arrival 0.360 / 0.352, 8
    # must-not, 11 of 40 sequence checks (0.349 / 0.341 with the session-start engine);
    # 0.378 / 0.352 with the hold model (twentieth); 0.388 and 6 must-not once lines written
    # for an AI reader are nobody's words (twenty-first); 0.400 / 0.364 with more of the
    # closing account (twenty-second); 5 must-not once the reason for the agent's next step
    # is no cause (twenty-fifth); 4 once the agent's lone candidates need 0.4 (forty-eighth).
    ("holdout13", 0.40, 0.36, 11, 4),
    # Three more, written for the twenty-first part: unseen on arrival 0.417 / 0.406, 17
    # must-not, 11 of 36 sequence checks; 0.421 after that part's changes; 0.427 / 0.417 and
    # 13 sequence checks after the twenty-fourth; 0.457 / 0.438 after the twenty-fifth;
    # 0.479 / 0.458 once a closing account is its whole list item (twenty-sixth); 16
    # must-not once a rule the hold model doubts is left out, not queued (fifty-second).
    ("holdout14", 0.47, 0.45, 13, 16),
]


@pytest.mark.parametrize(
    ("split", "precision", "recall", "sequences", "violations"),
    HELD_OUT_FLOORS,
    ids=[floor[0] for floor in HELD_OUT_FLOORS],
)
def test_later_held_out_batches_do_not_fall(
    bench: ModuleType, split: str, precision: float, recall: float, sequences: int, violations: int
) -> None:
    """Each batch's floors (docs/decisions.md, the part that last moved them)."""
    report = bench.evaluate(split)
    passed, total = report.sequence_checks()
    assert report.precision() >= precision, report.precision()
    assert report.recall() >= recall, report.recall()
    assert passed >= sequences, (passed, total)
    assert not report.secrets
    assert len(report.violations()) <= violations, report.violations()


def test_the_second_annotators_labels_are_well_formed() -> None:
    """agreement/ (bench/annotator_agreement.py): one category, keywords from the conversation."""
    categories = {
        "coding_preferences",
        "project_conventions",
        "architectural_decisions",
        "bug_patterns",
        "implementation_notes",
    }
    files = sorted((SETS / "agreement").glob("*/*.items.json"))
    assert len(files) >= 100
    for path in files:
        conversation = SETS / path.parent.name / path.name.replace(".items.json", ".txt")
        text = conversation.read_text(encoding="utf-8").lower()
        for item in json.loads(path.read_text(encoding="utf-8"))["items"]:
            assert item["category"] in categories, (path.name, item)
            assert 1 <= len(item["keywords"]) <= 3, (path.name, item)
            assert all(k.lower() in text for k in item["keywords"]), (path.name, item)


# A labeled set kept outside the project (`--folder`), as someone else writes it.
_CONVERSATION = (
    "User: For the billing service we use pnpm workspaces, never npm; a package-lock.json "
    "breaks the CI cache.\n\nAssistant: Understood, pnpm only.\n"
)
_LABELS = {
    "must": [{"category": "Architectural Decisions", "keywords": "pnpm"}],
    "must_not": [["yarn"]],
}


def _labeled(folder: Path, name: str, labels: object, text: str = _CONVERSATION) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.txt").write_text(text, encoding="utf-8")
    raw = labels if isinstance(labels, str) else json.dumps(labels)
    (folder / f"{name}.expected.json").write_text(raw, encoding="utf-8")


def test_a_set_split_into_folders_is_scored_per_split(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A set laid out as dev/ and test/ is scored split by split, not read as empty."""
    _labeled(tmp_path / "dev", "one", _LABELS)
    _labeled(tmp_path / "test", "two", {**_LABELS, "must": [{"keywords": ["pnpm"]}]})
    assert bench.main(["--folder", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "[dev] 1 conversations" in out and "[test] 1 conversations" in out
    assert "SKIPPED" not in out


def test_labels_that_cannot_be_read_are_named_and_left_out(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A broken or unknown label costs that file, with the reason, never the whole run."""
    _labeled(tmp_path, "good", _LABELS)
    _labeled(tmp_path, "broken", '{"must": [')
    _labeled(tmp_path, "unknown", {"must": [{"category": "vibes", "keywords": ["pnpm"]}]})
    _labeled(tmp_path, "empty", {"must": [{"category": "bug_patterns", "keywords": []}]})
    sequence = tmp_path / "sequences" / "switch"
    _labeled(sequence, "a", {})
    (sequence / "a.expected.json").unlink()
    (sequence / "expected.json").write_text('{"active": "pnpm"}', encoding="utf-8")
    (tmp_path / "folder.txt").mkdir()  # (a conversation that cannot be read)
    (tmp_path / "folder.expected.json").write_text('{"must": []}', encoding="utf-8")
    assert bench.main(["--folder", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "1 conversations" in out
    assert "SKIPPED broken.expected.json: not readable as JSON" in out
    assert "unknown category 'vibes'" in out
    assert "empty.expected.json must[0]: keywords must be a non-empty list" in out
    assert "switch/expected.json: active is 'pnpm', not a list" in out
    assert "SKIPPED folder.txt: not readable" in out
    assert "5 labeled file(s) could not be read" in out


def test_a_folder_without_labels_is_said_so(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("User: hi\n", encoding="utf-8")
    assert bench.main(["--folder", str(tmp_path)]) == 2
    assert "no labeled set at" in capsys.readouterr().out
    assert bench.main(["--folder", str(tmp_path / "missing")]) == 2


def test_no_item_is_no_perfect_precision(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _labeled(tmp_path, "chatter", {"must": []}, "User: hi there\n\nAssistant: Hello!\n")
    assert bench.main(["--folder", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "precision n/a" in out and "precision 1.00" not in out


@pytest.mark.parametrize(
    ("name", "category"),
    [
        ("architectural_decisions", "architectural_decisions"),
        ("Architectural Decisions", "architectural_decisions"),
        ("decision", "architectural_decisions"),
        ("bug-pattern", "bug_patterns"),
        ("bug", "bug_patterns"),
        ("Coding Preference", "coding_preferences"),
        ("project convention", "project_conventions"),
        ("implementation_note", "implementation_notes"),
        ("notes", "implementation_notes"),
    ],
)
def test_category_names_as_other_sets_write_them(
    bench: ModuleType, name: str, category: str
) -> None:
    assert bench._category(name, "x").value == category


def test_a_sequence_numbered_past_nine_is_read_in_order(bench: ModuleType) -> None:
    names = ["10.txt", "2.txt", "1.txt"]
    assert [p.name for p in sorted(map(Path, names), key=bench._in_order)] == [
        "1.txt",
        "2.txt",
        "10.txt",
    ]
    assert sorted(map(Path, ["c.txt", "a.txt", "b.txt"]), key=bench._in_order)[0].name == "a.txt"
