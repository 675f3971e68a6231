"""Tests of transformer_tutorial.attention_pooling (chapter 5): average pooling and
Nadaraya-Watson kernel regression as attention pooling."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_tutorial.attention_pooling import (
    NadarayaWatson,
    average_pooling,
    fit_width,
    gaussian_scores,
    leave_one_out,
    make_regression_data,
    nadaraya_watson,
    true_function,
)

FAST = settings(max_examples=30, deadline=None)


def _data(seed: int, n: int = 50):
    return make_regression_data(n, generator=torch.Generator().manual_seed(seed))


def test_make_regression_data_shapes_and_noise():
    x, y = _data(0, 2000)
    assert x.shape == y.shape == (2000,)
    assert (x[1:] >= x[:-1]).all() and x.min() >= 0 and x.max() < 5
    residual = y - true_function(x)
    assert abs(residual.std().item() - 0.5) < 0.05
    assert abs(residual.mean().item()) < 0.05
    x2, y2 = _data(0, 2000)
    assert torch.equal(x, x2) and torch.equal(y, y2)  # the generator makes it reproducible


def test_true_function_values():
    x = torch.tensor([0.0, 1.0, math.pi])
    expected = torch.tensor([0.0, 2 * math.sin(1.0) + 1.0, math.pi**0.8])
    assert torch.allclose(true_function(x), expected, atol=1e-6)


def test_average_pooling_is_the_mean_for_every_query():
    x, y = _data(1)
    queries = torch.linspace(0, 5, 7)
    out, weights = average_pooling(queries, x, y)
    assert out.shape == (7,) and weights.shape == (7, 50)
    assert torch.allclose(out, y.mean().expand(7))
    assert torch.allclose(weights, torch.full((7, 50), 1 / 50))


def test_gaussian_scores_formula_and_per_query_keys():
    q = torch.tensor([0.0, 1.0])
    k = torch.tensor([0.0, 2.0, -1.0])
    scores = gaussian_scores(q, k, 2.0)
    expected = -torch.tensor([[0.0, 4.0, 1.0], [1.0, 1.0, 4.0]]) / 8
    assert torch.allclose(scores, expected)
    per_query = gaussian_scores(q, k.expand(2, 3), 2.0)
    assert torch.allclose(per_query, expected)


@FAST
@given(seed=st.integers(0, 10_000), width=st.floats(0.05, 5.0))
def test_nadaraya_watson_weights_are_distributions_favouring_near_keys(seed, width):
    x, y = _data(seed, 30)
    queries = torch.rand(20, generator=torch.Generator().manual_seed(seed + 1)) * 5
    out, weights = nadaraya_watson(queries, x, y, width)
    assert (weights >= 0).all()
    assert torch.allclose(weights.sum(-1), torch.ones(20))
    distance = (queries.unsqueeze(-1) - x).abs()
    # a strictly nearer key never gets less weight
    nearer = distance.unsqueeze(-1) < distance.unsqueeze(-2)  # (T_q, T_k, T_k)
    heavier = weights.unsqueeze(-1) >= weights.unsqueeze(-2)
    assert heavier[nearer].all()
    # the prediction is a convex combination of the values
    assert (out >= y.min() - 1e-5).all() and (out <= y.max() + 1e-5).all()
    assert torch.allclose(out, weights @ y, atol=1e-5)


def test_nadaraya_watson_matches_the_kernel_formula():
    x, y = _data(2, 10)
    q = torch.tensor([0.3, 2.7])
    out, _ = nadaraya_watson(q, x, y, width=0.7)
    kernel = torch.exp(-((q[:, None] - x) ** 2) / (2 * 0.7**2))
    assert torch.allclose(out, (kernel * y).sum(-1) / kernel.sum(-1), atol=1e-6)


def test_nadaraya_watson_limits():
    x, y = _data(3)
    queries = torch.linspace(0.05, 4.95, 40)
    wide, _ = nadaraya_watson(queries, x, y, width=1e4)
    assert torch.allclose(wide, y.mean().expand(40), atol=1e-4)
    narrow, _ = nadaraya_watson(queries, x, y, width=1e-3)
    squared = ((queries[:, None] - x) ** 2).sort(-1)
    nearest = squared.indices[:, 0]
    # away from near-ties (second-nearest key's score lower by > 20, a weight ratio < e^-20)
    clear = (squared.values[:, 1] - squared.values[:, 0]) / (2 * 1e-3**2) > 20
    assert clear.sum() > 30
    assert torch.allclose(narrow[clear], y[nearest][clear], atol=1e-6)


def test_leave_one_out_hides_exactly_each_own_pair():
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    y = torch.tensor([10.0, 20.0, 30.0, 40.0])
    keys, values = leave_one_out(x, y)
    assert torch.equal(keys[0], torch.tensor([2.0, 3.0, 4.0]))
    assert torch.equal(keys[2], torch.tensor([1.0, 2.0, 4.0]))
    assert torch.equal(values, 10 * keys)  # pairs stay together
    out, weights = nadaraya_watson(x, keys, values, 1.0)
    assert out.shape == (4,) and weights.shape == (4, 3)


def test_nadaraya_watson_module_equals_function_and_has_gradient():
    x, y = _data(4)
    model = NadarayaWatson(width=0.8)
    assert torch.allclose(model.width, torch.tensor(0.8))
    out, weights = model(x, x, y)
    ref, ref_w = nadaraya_watson(x, x, y, 0.8)
    assert torch.allclose(out, ref) and torch.allclose(weights, ref_w)
    torch.mean((out - y) ** 2).backward()
    assert model.log_width.grad is not None and torch.isfinite(model.log_width.grad)


@pytest.mark.slow  # fits many widths: `make unit` skips it, `make test` runs it
def test_fit_width_leave_one_out_beats_fixed_and_self_collapses():
    x, y = _data(0)
    queries = torch.arange(0, 5, 0.1)
    truth = true_function(queries)

    def mse(width):
        return torch.mean((nadaraya_watson(queries, x, y, width)[0] - truth) ** 2).item()

    torch.manual_seed(0)
    learned = NadarayaWatson(1.0)
    widths = fit_width(learned, x, y, steps=300, exclude_self=True)
    collapsed = NadarayaWatson(1.0)
    fit_width(collapsed, x, y, steps=300, exclude_self=False)
    assert len(widths) == 300 and widths[-1] == pytest.approx(learned.width.item())
    assert collapsed.width.item() < 0.05 < 0.1 < learned.width.item() < 0.6
    average = torch.mean((y.mean() - truth) ** 2).item()
    with torch.no_grad():
        assert average > mse(1.0) > mse(learned.width) and mse(collapsed.width) > mse(learned.width)


def test_error_paths():
    x, y = _data(5, 10)
    with pytest.raises(ValueError, match="positive"):
        NadarayaWatson(width=0.0)
    with pytest.raises(ValueError, match="one value"):
        nadaraya_watson(x, x, y[:5])
    with pytest.raises(ValueError, match="one row per query"):
        nadaraya_watson(x[:3], x.expand(10, 10), y.expand(10, 10))
    with pytest.raises(ValueError, match=r"\(T_q,\)"):
        average_pooling(x.view(2, 5), x, y)
