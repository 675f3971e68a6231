"""Tests of transformer_tutorial.training (chapter 14): batching, loss, schedule, step (the
tokenizer's are in test_tokens.py)."""

from __future__ import annotations

import math
import random

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID
from transformer_tutorial.training import (
    Batch,
    LabelSmoothingLoss,
    collate,
    evaluate_loss,
    make_batches,
    make_optimizer,
    noam_lr,
    noam_scheduler,
    padded_lengths,
    padding_fraction,
    token_budget_batches,
    train_loop,
    train_step,
)

# --- batching -----------------------------------------------------------------------------------

pairs_strategy = st.lists(
    st.tuples(
        st.lists(st.integers(4, 50), min_size=0, max_size=30),
        st.lists(st.integers(4, 50), min_size=0, max_size=30),
    ),
    min_size=1,
    max_size=80,
)


@settings(max_examples=60, deadline=None)
@given(pairs=pairs_strategy, max_tokens=st.integers(31, 200), seed=st.integers(0, 10))
def test_token_budget_batches_partition_and_respect_the_budget(pairs, max_tokens, seed):
    batches = token_budget_batches(pairs, max_tokens, seed=seed)
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(len(pairs)))  # every pair exactly once
    for b in batches:
        assert b
        collated = collate([pairs[i] for i in b])
        B, S = collated.src.shape
        T = collated.tgt_in.shape[1]
        assert B * max(S, T) <= max_tokens  # padding included
    assert batches == token_budget_batches(pairs, max_tokens, seed=seed)  # deterministic


def test_batch_order_is_shuffled_by_seed_and_lengths_are_grouped():
    rng = random.Random(0)
    lengths = [
        rng.randint(3, 40) for _ in range(500)
    ]  # a translation is about as long as its source
    pairs = [([5] * n, [6] * (n + rng.randint(-2, 2))) for n in lengths]
    a = token_budget_batches(pairs, 400, seed=0)
    b = token_budget_batches(pairs, 400, seed=1)
    assert a != b and sorted(map(sorted, a)) != [] and len(a) > 5
    unshuffled = token_budget_batches(pairs, 400, shuffle=False)
    longest = [max(max(padded_lengths(pairs[i])) for i in batch) for batch in unshuffled]
    assert longest == sorted(longest)
    # Sorting by length wastes far less space on padding than random batches of the same count.
    random_order = list(range(len(pairs)))
    rng.shuffle(random_order)
    size = len(pairs) // len(a) + 1
    random_batches = [random_order[i : i + size] for i in range(0, len(pairs), size)]
    assert padding_fraction(pairs, a) < 0.5 * padding_fraction(pairs, random_batches)


def test_a_pair_longer_than_the_budget_is_an_error():
    with pytest.raises(ValueError, match="max_tokens"):
        token_budget_batches([([5] * 50, [6] * 3)], max_tokens=20)


def test_collate_shifts_the_target_for_teacher_forcing():
    pairs = [([5, 6, 7], [8, 9]), ([10], [11, 12, 13, 14])]
    batch = collate(pairs)
    assert batch.src.tolist() == [[5, 6, 7, EOS_ID], [10, EOS_ID, PAD_ID, PAD_ID]]
    assert batch.tgt_in.tolist() == [[BOS_ID, 8, 9, PAD_ID, PAD_ID], [BOS_ID, 11, 12, 13, 14]]
    assert batch.tgt_out.tolist() == [[8, 9, EOS_ID, PAD_ID, PAD_ID], [11, 12, 13, 14, EOS_ID]]
    # The input at position t+1 is the answer at position t.
    real = batch.tgt_in[:, 1:] != PAD_ID
    assert torch.equal(batch.tgt_in[:, 1:][real], batch.tgt_out[:, :-1][real])
    assert batch.n_tokens == 3 + 5
    with pytest.raises(ValueError, match="at least one"):
        collate([])


def test_make_batches_collates_every_pair():
    pairs = [([5] * (i % 7 + 1), [6] * (i % 5 + 1)) for i in range(40)]
    batches = make_batches(pairs, max_tokens=32, seed=3)
    assert all(isinstance(b, Batch) for b in batches)
    assert sum(b.src.shape[0] for b in batches) == 40


# --- label smoothing ----------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    smoothing=st.floats(0.0, 0.9),
    B=st.integers(1, 4),
    T=st.integers(1, 6),
    V=st.integers(2, 11),
    seed=st.integers(0, 1000),
)
def test_label_smoothing_equals_pytorch_values_and_gradients(smoothing, B, T, V, seed):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(B, T, V, generator=g, dtype=torch.float64)
    target = torch.randint(0, V, (B, T), generator=g)
    target[0, 0] = 1  # at least one scored position (PyTorch's mean of nothing is NaN)
    if T > 1:
        target[0, -1] = PAD_ID
    ours_in = logits.clone().requires_grad_()
    ref_in = logits.clone().requires_grad_()
    ours = LabelSmoothingLoss(smoothing, ignore_index=PAD_ID)(ours_in, target)
    ref = nn.CrossEntropyLoss(label_smoothing=smoothing, ignore_index=PAD_ID)(
        ref_in.reshape(-1, V), target.reshape(-1)
    )
    ours.backward()
    ref.backward()
    assert ours.dtype == ref.dtype == torch.float64
    torch.testing.assert_close(ours, ref)
    torch.testing.assert_close(ours_in.grad, ref_in.grad)


def test_label_smoothing_reductions_and_errors():
    logits = torch.randn(3, 5, 7)
    target = torch.randint(1, 7, (3, 5))
    target[:, -1] = PAD_ID
    for reduction in ("sum", "none"):
        ours = LabelSmoothingLoss(0.2, reduction=reduction)(logits, target)
        ref = nn.CrossEntropyLoss(label_smoothing=0.2, ignore_index=PAD_ID, reduction=reduction)(
            logits.reshape(-1, 7), target.reshape(-1)
        )
        torch.testing.assert_close(ours.reshape(-1) if reduction == "none" else ours, ref)
    with pytest.raises(ValueError, match="smoothing"):
        LabelSmoothingLoss(1.0)
    with pytest.raises(ValueError, match="reduction"):
        LabelSmoothingLoss(0.1, reduction="avg")
    with pytest.raises(ValueError, match="vocabulary dimension"):
        LabelSmoothingLoss(0.1)(logits, target[:, :2])


def test_smoothing_zero_is_plain_cross_entropy_and_smoothing_raises_the_minimum():
    target = torch.tensor([2])
    confident = torch.full((1, 5), -30.0)
    confident[0, 2] = 30.0
    assert LabelSmoothingLoss(0.0)(confident, target).item() < 1e-6
    # With smoothing, a fully confident model is penalised: it must leave mass on other tokens.
    assert LabelSmoothingLoss(0.1)(confident, target).item() > 1.0


# --- learning-rate schedule ---------------------------------------------------------------------


def test_noam_lr_formula_and_peak():
    d_model, warmup = 512, 4000
    rates = [noam_lr(s, d_model, warmup) for s in range(1, 20001)]
    assert max(range(len(rates)), key=rates.__getitem__) + 1 == warmup
    assert math.isclose(rates[warmup - 1], d_model**-0.5 * warmup**-0.5)
    assert math.isclose(noam_lr(1, d_model, warmup), d_model**-0.5 * warmup**-1.5)
    assert math.isclose(noam_lr(16000, d_model, warmup), d_model**-0.5 / 16000**0.5)
    assert math.isclose(noam_lr(10, d_model, warmup, factor=2.0), 2 * noam_lr(10, d_model, warmup))
    with pytest.raises(ValueError, match="count from 1"):
        noam_lr(0, d_model, warmup)


def test_noam_scheduler_follows_noam_lr():
    model = nn.Linear(3, 3)
    optimizer = make_optimizer(model, lr=2.0)
    assert optimizer.defaults["betas"] == (0.9, 0.98) and optimizer.defaults["eps"] == 1e-9
    scheduler = noam_scheduler(optimizer, d_model=64, warmup=10)
    seen = []
    for _ in range(30):
        seen.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    expected = [2.0 * noam_lr(s, 64, 10) for s in range(1, 31)]
    assert seen == pytest.approx(expected)


# --- training step ------------------------------------------------------------------------------


class TinySeq2Seq(nn.Module):
    """A test double with the Transformer's call signature: model(src, tgt_in) -> (B, T, V)."""

    def __init__(self, V: int = 20, D: int = 16):
        super().__init__()
        self.src_embed = nn.Embedding(V, D)
        self.tgt_embed = nn.Embedding(V, D)
        self.out = nn.Linear(D, V)

    def forward(self, src, tgt_in):
        context = self.src_embed(src).mean(dim=1, keepdim=True)  # (B, 1, D)
        return self.out(torch.tanh(self.tgt_embed(tgt_in) + context))  # (B, T, V)


def _toy_pairs(n=64, seed=0):
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        src = [rng.randint(4, 19) for _ in range(rng.randint(1, 6))]
        pairs.append((src, [4 + (x * 3) % 16 for x in src]))
    return pairs


def test_train_step_lowers_the_loss_and_clips():
    torch.manual_seed(0)
    model = TinySeq2Seq()
    optimizer = make_optimizer(model, lr=1.0)
    scheduler = noam_scheduler(optimizer, d_model=16, warmup=5)
    criterion = LabelSmoothingLoss(0.1)
    batch = collate(_toy_pairs())
    # Clipping: the step reports the norm before clipping; the gradient it applied is <= 0.1.
    sgd = torch.optim.SGD(model.parameters(), lr=0.0)
    record = train_step(model, batch, criterion, sgd, clip_norm=0.1)
    applied = torch.sqrt(sum((p.grad**2).sum() for p in model.parameters()))
    assert record["grad_norm"] > 0.1
    assert applied.item() == pytest.approx(0.1, rel=1e-4)
    before = evaluate_loss(model, [batch], criterion)
    records = [
        train_step(model, batch, criterion, optimizer, scheduler, clip_norm=0.5) for _ in range(40)
    ]
    after = evaluate_loss(model, [batch], criterion)
    assert after < before - 0.5
    assert records[0]["lr"] == pytest.approx(noam_lr(1, 16, 5))
    assert records[0]["tokens"] == batch.n_tokens


def test_normalizer_makes_shard_gradients_average_to_the_global_gradient():
    """What DDP relies on: W processes each divide by (global tokens / W); DDP averages."""
    torch.manual_seed(0)
    pairs = _toy_pairs(16)
    model = TinySeq2Seq()
    criterion = LabelSmoothingLoss(0.1)
    whole = collate(pairs)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)  # lr 0: look at gradients only
    train_step(model, whole, criterion, opt, clip_norm=None)
    full_grads = [p.grad.clone() for p in model.parameters()]
    W = 2
    averaged = [torch.zeros_like(g) for g in full_grads]
    for shard in (pairs[0::W], pairs[1::W]):
        train_step(
            model, collate(shard), criterion, opt, clip_norm=None, normalizer=whole.n_tokens / W
        )
        for acc, p in zip(averaged, model.parameters(), strict=True):
            acc += p.grad / W
    for a, b in zip(averaged, full_grads, strict=True):
        torch.testing.assert_close(a, b)


def test_evaluate_loss_weights_batches_by_tokens():
    torch.manual_seed(0)
    model = TinySeq2Seq()
    criterion = LabelSmoothingLoss(0.0)
    pairs = _toy_pairs(10)
    a, b = collate(pairs[:3]), collate(pairs[3:])
    whole = collate(pairs)
    with torch.no_grad():
        expected = criterion(model(whole.src, whole.tgt_in), whole.tgt_out).item()
    assert evaluate_loss(model, [a, b], criterion) == pytest.approx(expected, rel=1e-5)
    with pytest.raises(ValueError, match="no target tokens"):
        evaluate_loss(model, [], criterion)


def test_train_loop_runs_epochs_and_records_validation():
    torch.manual_seed(0)
    model = TinySeq2Seq()
    pairs = _toy_pairs(64)
    optimizer = make_optimizer(model, lr=1.0)
    history = train_loop(
        model,
        pairs,
        max_tokens=64,
        max_steps=30,
        criterion=LabelSmoothingLoss(0.1),
        optimizer=optimizer,
        scheduler=noam_scheduler(optimizer, 16, 5),
        val_batches=[collate(pairs[:8])],
        eval_every=10,
    )
    assert [r["step"] for r in history] == list(range(1, 31))
    assert history[-1]["epoch"] >= 1  # more steps than batches in one epoch
    vals = [r["val_loss"] for r in history if "val_loss" in r]
    assert len(vals) == 3 and vals[-1] < vals[0]
