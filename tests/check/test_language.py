"""The verdicts in Chinese: every template is a message of the package's checker.po (zh_CN), a
translation keeps the template's fields, and set_language (or the environment variable
TRANSFORMER_TUTORIAL_LANGUAGE) asks for it; English stays the default."""

from __future__ import annotations

import string

import polib
import pytest
import torch
from mistakes import all_mistakes

from transformer_tutorial import check
from transformer_tutorial.check import families
from transformer_tutorial.language import LOCALE as LOCALE_DIR
from transformer_tutorial.language import set_language

CATALOG = LOCALE_DIR / "zh_CN" / "LC_MESSAGES" / "checker.po"


def no_eps(x):
    mean = x.mean(-1, keepdim=True)
    return (x - mean) / x.var(-1, keepdim=True, unbiased=False).sqrt()


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_template_is_in_the_catalog():
    msgids = {e.msgid for e in polib.pofile(str(CATALOG)) if not e.obsolete}
    missing = set(families.all_messages().values()) - msgids
    assert not missing, (
        f"{len(missing)} templates are not in {CATALOG.name}: run "
        "families.update_catalog() and translate them"
    )


def test_a_translation_keeps_the_fields_of_its_template():
    for entry in polib.pofile(str(CATALOG)):
        if entry.translated():
            assert fields(entry.msgstr) == fields(entry.msgid), entry.msgid


@pytest.fixture
def chinese():
    set_language("zh_CN")
    yield
    set_language(None)


def test_set_language_says_the_verdict_in_chinese(chinese, capsys):
    verdict = check.check_layer_norm(no_eps)
    assert verdict.mistake == "norm-no-eps"
    assert verdict.message.startswith("缺少 eps"), verdict.message
    verdict = check.check_feed_forward(torch.nn.Linear(2, 2))
    assert "检查期望类本身" in verdict.message, verdict.message


def test_a_chinese_verdict_names_the_result_and_the_sizes_in_chinese(chinese, capsys):
    """The names a check gives a result ({what}) or a size ({name}) are catalog messages too:
    no "the output" in the middle of a Chinese sentence."""
    from transformer_tutorial.check.tensors import NAMES
    from transformer_tutorial.check.verdict import translate

    class ReturnsATuple(torch.nn.Module):
        def __init__(self, d_model, d_ff, dropout=0.0):
            super().__init__()
            self.linear1 = torch.nn.Linear(d_model, d_ff)
            self.linear2 = torch.nn.Linear(d_ff, d_model)

        def forward(self, x):
            hidden = torch.relu(self.linear1(x))
            return self.linear2(hidden), hidden

    verdict = check.check_feed_forward(ReturnsATuple)
    assert not verdict.ok and verdict.message.startswith("输出应当是"), verdict.message
    for english in NAMES.values():
        assert english not in verdict.message
        assert translate(english) != english, f"{english!r} has no Chinese"


def test_english_is_the_default_and_the_environment_can_ask(monkeypatch, capsys):
    assert check.check_layer_norm(no_eps).message.startswith("eps is missing")
    monkeypatch.setenv("TRANSFORMER_TUTORIAL_LANGUAGE", "zh_CN")
    assert check.check_layer_norm(no_eps).message.startswith("缺少 eps")


def _verdict(entry, language: str) -> str:
    set_language(language)
    try:
        return str(entry.check(entry.code))
    finally:
        set_language("en")


@pytest.mark.parametrize(
    "entry",
    # every fifth entry of the catalogue (the 28 checks), but for a mistake that is state kept
    # between calls: a second call of it meets another history, so another verdict
    [m for m in all_mistakes()[::5] if m.name != "kv-cache-shared-history"],
    ids=lambda m: m.name,
)
def test_a_verdict_printed_in_english_is_said_again_as_the_checker_says_it_in_chinese(
    entry, capsys
):
    """What the Chinese notebooks store (tools/i18n.py: the English outputs said again) is what
    the checker prints when the notebook runs in Chinese."""
    english, chinese = _verdict(entry, "en"), _verdict(entry, "zh_CN")
    capsys.readouterr()
    set_language("zh_CN")
    try:
        assert families.verdicts_said_again(english) == chinese
    finally:
        set_language("en")
