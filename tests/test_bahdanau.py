"""Tests of transformer_tutorial.bahdanau (chapter 7): the attention decoder builds a fresh
context c_t = sum_i alpha_ti s_i at every step, never looks at padding, and plugs into chapter 4's
training and evaluation code."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_tutorial.bahdanau import AttentionSeq2Seq, BahdanauDecoder
from transformer_tutorial.seq2seq import (
    BOS_ID,
    EOS_ID,
    NUM_SPECIALS,
    PAD_ID,
    Seq2Seq,
    Seq2SeqConfig,
    TransductionTask,
    accuracy_by_length,
    greedy_generate,
    last_hidden,
    make_batch,
    train_seq2seq,
)

RNN_TYPES = ["gru", "lstm", "rnn"]

pytestmark = pytest.mark.usefixtures("one_thread")


V = NUM_SPECIALS + 10  # the task's vocabulary: the special tokens and ten digits


def small_model(
    rnn_type: str = "gru", seed: int = 0, attn_dim: int | None = 10
) -> AttentionSeq2Seq:
    torch.manual_seed(seed)
    config = Seq2SeqConfig(vocab_size=V, embed_dim=8, hidden_dim=12, rnn_type=rnn_type)
    return AttentionSeq2Seq(config, attn_dim=attn_dim)


def random_batch(lengths: list[int], seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    task = TransductionTask(min_len=1, max_len=max(lengths))
    pairs = [task.sample(1, g, length=L) for L in lengths]
    sources, targets = [p[0][0] for p in pairs], [p[1][0] for p in pairs]
    return sources, targets, make_batch(sources, targets)


def test_shapes_and_parameters_beyond_chapter_4():
    model = small_model(attn_dim=10)
    _, _, batch = random_batch([4, 7, 2])
    logits, weights = model.forward_with_weights(batch.src, batch.src_lengths, batch.tgt_in)
    B, T = batch.tgt_in.shape
    assert logits.shape == (B, T, V) and weights.shape == (B, T, batch.src.shape[1])
    assert torch.equal(model(batch.src, batch.src_lengths, batch.tgt_in), logits)
    # The only new parameters are those of additive attention: W_q (D x A), W_k (D x A), w_v (A).
    torch.manual_seed(0)
    plain = Seq2Seq(model.config)
    extra = sum(p.numel() for p in model.parameters()) - sum(p.numel() for p in plain.parameters())
    assert extra == 12 * 10 + 12 * 10 + 10
    assert small_model(attn_dim=None).decoder.attention.w_v.in_features == 12  # default: hidden_dim


@settings(max_examples=25, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 9), min_size=1, max_size=5),
    rnn_type=st.sampled_from(RNN_TYPES),
    seed=st.integers(0, 1000),
)
def test_weights_are_distributions_over_real_source_positions(lengths, rnn_type, seed):
    model = small_model(rnn_type, seed)
    _, _, batch = random_batch(lengths, seed)
    with torch.no_grad():
        _, weights = model.forward_with_weights(batch.src, batch.src_lengths, batch.tgt_in)
    real = torch.arange(batch.src.shape[1])[None, :] < batch.src_lengths[:, None]  # (B, S)
    assert (weights >= 0).all()
    assert torch.allclose(weights.sum(dim=-1), torch.ones(weights.shape[:2]), atol=1e-6)
    assert (weights.masked_select(~real[:, None, :]) == 0).all()  # exactly zero at padding


@settings(max_examples=15, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 9), min_size=2, max_size=4),
    rnn_type=st.sampled_from(RNN_TYPES),
    seed=st.integers(0, 1000),
)
def test_padding_never_changes_outputs_or_weights_at_real_positions(lengths, rnn_type, seed):
    """Each pair alone gives the same logits and weights as in a padded batch, whatever is
    written into the padded source positions."""
    model = small_model(rnn_type, seed)
    sources, targets, batch = random_batch(lengths, seed)
    g = torch.Generator().manual_seed(seed)
    src = batch.src.clone()
    pad = src == PAD_ID
    src[pad] = torch.randint(NUM_SPECIALS, V, (int(pad.sum()),), generator=g)
    with torch.no_grad():
        logits, weights = model.forward_with_weights(src, batch.src_lengths, batch.tgt_in)
        for b, (s, t) in enumerate(zip(sources, targets, strict=True)):
            alone = make_batch([s], [t])
            one_logits, one_weights = model.forward_with_weights(
                alone.src, alone.src_lengths, alone.tgt_in
            )
            T_b, S_b = len(t) + 1, len(s)
            assert torch.allclose(logits[b, :T_b], one_logits[0], atol=1e-5)
            assert torch.allclose(weights[b, :T_b, :S_b], one_weights[0], atol=1e-6)


def test_context_is_the_weighted_sum_of_encoder_states_with_the_previous_state_as_query():
    model = small_model("gru", seed=3)
    _, _, batch = random_batch([5, 3], seed=3)
    start = model.start(batch.src, batch.src_lengths)
    prev = batch.tgt_in[:, 0]
    calls = []
    handle = model.decoder.attention.register_forward_hook(
        lambda module, inputs, output: calls.append((inputs, output))
    )
    with torch.no_grad():
        _, new_hidden, weights = model.decoder.step(
            prev, start.hidden, start.memory, start.src_mask
        )
    handle.remove()
    (query, keys, values), (context, hook_weights) = calls[0][0][:3], calls[0][1]
    assert torch.equal(query[:, 0], last_hidden(start.hidden))  # the query is s'_{t-1}
    assert keys is start.memory and values is start.memory  # keys and values are s_1 ... s_S
    expected = torch.einsum("bs,bsd->bd", weights, start.memory)  # c_t = sum_i alpha_ti s_i
    assert torch.allclose(context[:, 0], expected, atol=1e-6)
    assert torch.equal(hook_weights[:, 0], weights)
    # The next step asks with the new state, so its distribution differs (it depends on t).
    with torch.no_grad():
        _, _, next_weights = model.decoder.step(
            batch.tgt_in[:, 1], new_hidden, start.memory, start.src_mask
        )
    assert not torch.allclose(next_weights, weights)


@pytest.mark.parametrize("rnn_type", RNN_TYPES)
def test_step_by_step_equals_teacher_forced_forward(rnn_type):
    model = small_model(rnn_type, seed=1)
    _, _, batch = random_batch([6, 4], seed=1)
    with torch.no_grad():
        logits, _ = model.forward_with_weights(batch.src, batch.src_lengths, batch.tgt_in)
        state = model.start(batch.src, batch.src_lengths)
        steps = []
        for t in range(batch.tgt_in.shape[1]):
            step_logits, state = model.decode_step(batch.tgt_in[:, t], state)
            steps.append(step_logits)
    assert torch.allclose(torch.stack(steps, dim=1), logits, atol=1e-6)


def test_projected_keys_are_computed_once_per_source_and_change_nothing():
    """The decoder state carries W_k s_i from ``start``; a step given them equals a step that
    computes them itself."""
    model = small_model("gru", seed=4)
    _, _, batch = random_batch([5, 3], seed=4)
    with torch.no_grad():
        start = model.start(batch.src, batch.src_lengths)
        assert torch.equal(start.keys, model.decoder.attention.project_keys(start.memory))
        prev = batch.tgt_in[:, 0]
        given = model.decoder.step(prev, start.hidden, start.memory, start.src_mask, start.keys)
        computed = model.decoder.step(prev, start.hidden, start.memory, start.src_mask)
    for a, b in zip(given, computed, strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("rnn_type", RNN_TYPES)
def test_teacher_forcing_on_own_outputs_reproduces_greedy_decoding(rnn_type):
    model = small_model(rnn_type, seed=2)
    _, _, batch = random_batch([7, 3, 5], seed=2)
    generated = greedy_generate(model, batch.src, batch.src_lengths, max_len=10)
    B = generated.shape[0]
    tgt_in = torch.cat([torch.full((B, 1), BOS_ID), generated[:, :-1]], dim=1)
    with torch.no_grad():
        forced = model(batch.src, batch.src_lengths, tgt_in).argmax(dim=-1)
    is_eos = (generated == EOS_ID).long()
    real = (is_eos.cumsum(dim=1) - is_eos) == 0
    assert torch.equal(forced[real], generated[real])


def test_decoder_rejects_mismatched_query_size():
    decoder = BahdanauDecoder(vocab_size=V, embed_dim=4, hidden_dim=6)
    memory = torch.randn(2, 5, 7)  # keys of size 7, but the decoder state has size 6
    with pytest.raises(ValueError):
        decoder(
            torch.full((2, 3), BOS_ID),
            memory,
            torch.ones(2, 5, dtype=torch.bool),
            torch.zeros(1, 2, 6),
        )


def test_encoder_errors_reach_the_user():
    with pytest.raises(ValueError, match="length"):
        small_model()(torch.tensor([[3, 4]]), torch.tensor([0]), torch.tensor([[BOS_ID]]))


def test_trains_and_evaluates_with_chapter_4_code():
    model = small_model("gru", seed=0)
    task = TransductionTask(min_len=2, max_len=4)
    losses = train_seq2seq(
        model, task, steps=40, batch_size=32, lr=1e-2, generator=torch.Generator().manual_seed(0)
    )
    assert sum(losses[-10:]) / 10 < 0.8 * sum(losses[:10]) / 10
    rows = accuracy_by_length(
        model, task, [3], n_per_length=16, generator=torch.Generator().manual_seed(1)
    )
    assert set(rows[0]) == {"length", "exact", "token_acc", "bleu", "forced_token_acc"}
    assert 0.0 <= rows[0]["exact"] <= 1.0
