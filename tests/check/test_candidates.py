"""No mistake is claimed by two names: on the inputs a check probes with, the candidates a family
compares a reader's output with are all different from each other and from the right answer, so
that matching one of them names exactly one mistake."""

from __future__ import annotations

import itertools

import pytest
import torch

from transformer_tutorial.check import diagnoses, families, layer_norm
from transformer_tutorial.check.tensors import close

pytestmark = pytest.mark.usefixtures("one_thread")


def assert_all_apart(candidates: dict[str, list[torch.Tensor]], right: torch.Tensor) -> None:
    for name, values in candidates.items():
        assert not any(close(v, right) for v in values), f"{name} gives the right answer"
    for (a, va), (b, vb) in itertools.combinations(candidates.items(), 2):
        assert not any(close(x, y) for x in va for y in vb), f"{a} and {b} look alike"


def test_layer_norm_candidates_are_apart():
    x = layer_norm._layer_norm_input()
    right = torch.nn.functional.layer_norm(x, (8,), eps=1e-5)
    candidates = {k: [v] for k, v in layer_norm._layer_norm_mistakes(x, 1e-5).items()}
    assert_all_apart(candidates, right)


def test_loss_normalisations_are_apart():
    per_token = torch.rand(3, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    real = torch.tensor([[1, 1, 1, 0, 0], [1, 0, 0, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    right = per_token[real].mean()
    assert_all_apart(diagnoses.loss_normalisations(per_token, real), right)
    assert diagnoses.normalisation_named(per_token[real].sum() / 3, per_token, real) == (
        "loss-per-sentence"
    )


def test_a_ratio_equal_to_tokens_over_sentences_is_told():
    real = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1]], dtype=torch.bool)
    said = diagnoses.loss_described(2.0 * 8 / 3, 2.0, real)
    assert "the number of real tokens over the number of sentences (8 / 3)" in said, said
    assert "negative" in diagnoses.loss_described(-0.5, 2.0, real)


def test_every_mistake_id_is_declared_once():
    declared = families.declared_mistakes()  # raises when two families declare one id twice
    assert len(declared) >= 20
    for module in families.modules(families.FAMILIES + families.SHARED):
        for table in ("MISTAKES", "MESSAGES"):
            for key, template in getattr(module, table, {}).items():
                assert template.strip() and key == key.lower(), (module.__name__, key)
