"""Every entry of the catalogue of mistakes (tests/check/mistakes/) is caught and named, and every
correct implementation written differently passes."""

from __future__ import annotations

import pytest
from mistakes import Correct, Mistake, all_correct, all_mistakes

from transformer_tutorial.check import families

pytestmark = pytest.mark.usefixtures("one_thread")

MISTAKES = all_mistakes()
CORRECT = all_correct()
DECLARED = families.declared_mistakes()  # id -> message template, every family's MISTAKES


def expected_id(entry: Mistake) -> str | None:
    """The mistake id the verdict on ``entry`` must carry (None: the check names none yet)."""
    return entry.mistake or (entry.name if entry.name in DECLARED else None)


def test_every_declared_mistake_has_its_catalogue_entry() -> None:
    names = {m.name for m in MISTAKES}
    assert not set(DECLARED) - names, f"mistakes without an example: {set(DECLARED) - names}"
    assert all(m.mistake in DECLARED for m in MISTAKES if m.mistake), "an unknown mistake id"


def test_the_catalogue_is_large_and_its_names_unique() -> None:
    names = [m.name for m in MISTAKES]
    assert len(set(names)) == len(names), "two catalogue entries share a name"
    assert len(MISTAKES) >= 120, f"the catalogue has {len(MISTAKES)} mistakes; it promises 120"


@pytest.mark.parametrize("entry", MISTAKES, ids=lambda m: m.name)
def test_each_mistake_is_caught_and_named(entry: Mistake, capsys) -> None:
    verdict = entry.check(entry.code)
    printed = capsys.readouterr().out
    assert printed.strip() == str(verdict)  # the reader sees exactly the verdict
    assert not verdict.ok, f"{entry.name} passed the check"
    assert entry.diagnosis in verdict.message, verdict.message
    assert verdict.mistake == expected_id(entry), (verdict.mistake, verdict.message)
    assert "bug in the checker" not in verdict.message, verdict.message


@pytest.mark.parametrize("entry", CORRECT, ids=lambda c: c.name)
def test_each_correct_implementation_passes(entry: Correct, capsys) -> None:
    verdict = entry.check(entry.code)
    assert verdict.ok, verdict.message
