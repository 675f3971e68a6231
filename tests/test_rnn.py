"""Tests of transformer_tutorial.rnn (chapter 2): the RNN from scratch and the character-level LM."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from transformer_tutorial.reference import recurrent_from_torch
from transformer_tutorial.rnn import (
    RNN,
    CharRNNLM,
    RNNCell,
    evaluate_lm,
    lm_batch,
    lm_loss,
    sample,
    train_lm,
)
from transformer_tutorial.sequences import Vocab, pad_sequences

ATOL = 1e-5


# --- the cell ----------------------------------------------------------------------------------


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_cell_is_the_formula_and_equals_torch_rnn_cell(nonlinearity):
    torch.manual_seed(0)
    cell = RNNCell(4, 6, nonlinearity=nonlinearity)
    x, s = torch.randn(3, 4), torch.randn(3, 6)
    f = torch.tanh if nonlinearity == "tanh" else torch.relu
    W_in, b, W_s = cell.in_proj.weight, cell.in_proj.bias, cell.state_proj.weight
    assert torch.allclose(cell(x, s), f(x @ W_in.T + s @ W_s.T + b), atol=ATOL)

    ref = nn.RNNCell(4, 6, nonlinearity=nonlinearity)
    with torch.no_grad():
        cell.in_proj.weight.copy_(ref.weight_ih)
        cell.state_proj.weight.copy_(ref.weight_hh)
        cell.in_proj.bias.copy_(ref.bias_ih + ref.bias_hh)
    assert torch.allclose(cell(x, s), ref(x, s), atol=ATOL)
    assert torch.allclose(cell(x), ref(x), atol=ATOL)  # no state = zero state


def test_cell_init_matches_torch_range_and_rejects_unknown_nonlinearity():
    torch.manual_seed(0)
    cell = RNNCell(3, 16)
    bound = 1 / math.sqrt(16)
    for p in cell.parameters():
        assert p.abs().max() <= bound
    assert sum(p.numel() for p in cell.parameters()) == 16 * 3 + 16 * 16 + 16
    assert sum(p.numel() for p in RNNCell(3, 16, bias=False).parameters()) == 16 * 3 + 16 * 16
    with pytest.raises(ValueError, match="nonlinearity"):
        RNNCell(3, 4, nonlinearity="sigmoid")


# --- the layer against torch.nn.RNN ------------------------------------------------------------


def _compare_with_torch(B, T, D, H, L, nonlinearity, bias, with_s0, seed):
    torch.manual_seed(seed)
    ref = nn.RNN(D, H, num_layers=L, nonlinearity=nonlinearity, bias=bias, batch_first=True)
    ours = recurrent_from_torch(RNN(D, H, L, bias=bias, nonlinearity=nonlinearity), ref)
    x = torch.randn(B, T, D)
    s0 = torch.randn(L, B, H) if with_s0 else None
    xo, xr = x.clone().requires_grad_(), x.clone().requires_grad_()
    so = s0.clone().requires_grad_() if with_s0 else None
    sr = s0.clone().requires_grad_() if with_s0 else None
    out_o, last_o = ours(xo, so)
    out_r, last_r = ref(xr, sr)
    assert out_o.shape == (B, T, H) and last_o.shape == (L, B, H)
    assert torch.allclose(out_o, out_r, atol=ATOL)
    assert torch.allclose(last_o, last_r, atol=ATOL)

    w_out, w_last = torch.randn(B, T, H), torch.randn(L, B, H)
    ((out_o * w_out).sum() + (last_o * w_last).sum()).backward()
    ((out_r * w_out).sum() + (last_r * w_last).sum()).backward()
    assert torch.allclose(xo.grad, xr.grad, atol=ATOL)
    if with_s0:
        assert torch.allclose(so.grad, sr.grad, atol=ATOL)
    for layer, cell in enumerate(ours.cells):
        ref_w_ih = getattr(ref, f"weight_ih_l{layer}")
        ref_w_hh = getattr(ref, f"weight_hh_l{layer}")
        assert torch.allclose(cell.in_proj.weight.grad, ref_w_ih.grad, atol=ATOL)
        assert torch.allclose(cell.state_proj.weight.grad, ref_w_hh.grad, atol=ATOL)
        if bias:  # b = b_ih + b_hh, so its gradient equals each of theirs
            assert torch.allclose(
                cell.in_proj.bias.grad, getattr(ref, f"bias_ih_l{layer}").grad, atol=ATOL
            )
            assert torch.allclose(
                cell.in_proj.bias.grad, getattr(ref, f"bias_hh_l{layer}").grad, atol=ATOL
            )


@pytest.mark.parametrize("num_layers", [1, 2, 3])
@pytest.mark.parametrize("with_s0", [False, True])
def test_rnn_equals_torch_rnn_values_and_gradients(num_layers, with_s0):
    _compare_with_torch(3, 6, 4, 5, num_layers, "tanh", True, with_s0, seed=num_layers)


@pytest.mark.parametrize("nonlinearity,bias", [("relu", True), ("tanh", False)])
def test_rnn_equals_torch_rnn_other_variants(nonlinearity, bias):
    _compare_with_torch(2, 5, 3, 4, 2, nonlinearity, bias, True, seed=7)


@settings(max_examples=15, deadline=None)
@given(
    B=st.integers(1, 4),
    T=st.integers(1, 8),
    D=st.integers(1, 5),
    H=st.integers(1, 6),
    L=st.integers(1, 3),
    seed=st.integers(0, 1000),
)
def test_rnn_equals_torch_rnn_for_any_shape(B, T, D, H, L, seed):
    _compare_with_torch(B, T, D, H, L, "tanh", True, True, seed)


def test_padded_batch_with_lengths_equals_packed_torch_rnn():
    torch.manual_seed(0)
    ref = nn.RNN(3, 4, num_layers=2, batch_first=True)
    ours = recurrent_from_torch(RNN(3, 4, 2), ref)
    seqs = [torch.randn(n, 3) for n in (5, 1, 3, 5)]
    x, lengths = pad_sequences(seqs)
    s0 = torch.randn(2, 4, 4)
    xo, xr = x.clone().requires_grad_(), x.clone().requires_grad_()
    out_o, last_o = ours(xo, s0, lengths=lengths)
    packed = pack_padded_sequence(xr, lengths, batch_first=True, enforce_sorted=False)
    out_p, last_r = ref(packed, s0)
    out_r, _ = pad_packed_sequence(out_p, batch_first=True, total_length=x.shape[1])
    assert torch.allclose(out_o, out_r, atol=ATOL)
    assert torch.allclose(last_o, last_r, atol=ATOL)
    (out_o.sum() + last_o.sum()).backward()
    (out_r.sum() + last_r.sum()).backward()
    assert torch.allclose(xo.grad, xr.grad, atol=ATOL)
    assert (xo.grad[1, 1:] == 0).all()  # the padding of the length-1 sequence gets no gradient


@settings(max_examples=20, deadline=None)
@given(lengths=st.lists(st.integers(1, 6), min_size=1, max_size=4), extra=st.integers(1, 4))
def test_more_padding_never_changes_real_outputs(lengths, extra):
    torch.manual_seed(0)
    rnn = RNN(2, 3, num_layers=2)
    seqs = [torch.randn(n, 2) for n in lengths]
    x, lens = pad_sequences(seqs)
    x_more = torch.cat([x, torch.randn(len(seqs), extra, 2)], dim=1)  # garbage in the padding
    out, last = rnn(x, lengths=lens)
    out_more, last_more = rnn(x_more, lengths=lens)
    assert torch.allclose(out, out_more[:, : x.shape[1]], atol=1e-6)
    assert (out_more[:, x.shape[1] :] == 0).all()
    assert torch.allclose(last, last_more, atol=1e-6)
    for b, seq in enumerate(seqs):  # and the last state is the one of the sequence alone
        _, alone = rnn(seq[None])
        assert torch.allclose(last[:, b], alone[:, 0], atol=1e-6)


def test_changing_the_future_never_changes_the_past():
    torch.manual_seed(0)
    rnn = RNN(3, 4, num_layers=2)
    x = torch.randn(2, 8, 3)
    x2 = x.clone()
    x2[:, 5:] = torch.randn(2, 3, 3)
    out, _ = rnn(x)
    out2, _ = rnn(x2)
    assert torch.equal(out[:, :5], out2[:, :5])
    assert not torch.allclose(out[:, 5:], out2[:, 5:])


def test_rnn_errors_say_what_to_do():
    rnn = RNN(3, 4, num_layers=2)
    with pytest.raises(ValueError, match="batch first"):
        rnn(torch.randn(5, 3))
    with pytest.raises(ValueError, match=r"\(B, T, 3\)"):
        rnn(torch.randn(2, 5, 4))
    with pytest.raises(ValueError, match="length 0"):
        rnn(torch.randn(2, 0, 3))
    with pytest.raises(ValueError, match="s0 must have shape"):
        rnn(torch.randn(2, 5, 3), torch.zeros(1, 2, 4))
    with pytest.raises(ValueError, match="num_layers"):
        RNN(3, 4, num_layers=0)


def test_recurrent_from_torch_refuses_mismatches():
    with pytest.raises(ValueError, match="Sizes differ"):
        recurrent_from_torch(RNN(3, 4), nn.RNN(3, 5))
    with pytest.raises(ValueError, match="Sizes differ"):
        recurrent_from_torch(RNN(3, 4, num_layers=2), nn.RNN(3, 4))
    with pytest.raises(ValueError, match="one-directional"):
        recurrent_from_torch(RNN(3, 4), nn.RNN(3, 4, bidirectional=True))
    with pytest.raises(ValueError, match="nonlinearity"):
        recurrent_from_torch(RNN(3, 4), nn.RNN(3, 4, nonlinearity="relu"))
    with pytest.raises(ValueError, match="not into"):
        recurrent_from_torch(RNN(3, 4), nn.LSTM(3, 4))


# --- the language model pieces -----------------------------------------------------------------


def test_lm_batch_shifts_by_one_and_masks_padding():
    inputs, targets, mask = lm_batch([[2, 5, 6, 7, 3], [2, 8, 3]], pad_id=0)
    assert inputs.tolist() == [[2, 5, 6, 7], [2, 8, 0, 0]]
    assert targets.tolist() == [[5, 6, 7, 3], [8, 3, 0, 0]]
    assert mask.tolist() == [[True] * 4, [True, True, False, False]]
    with pytest.raises(ValueError, match="at least 2 tokens"):
        lm_batch([[2]])


def test_lm_loss_counts_only_real_targets():
    torch.manual_seed(0)
    logits = torch.randn(2, 4, 7)
    targets = torch.tensor([[1, 2, 3, 4], [5, 6, 0, 0]])
    mask = targets != 0
    expected = F.cross_entropy(logits.reshape(-1, 7), targets.reshape(-1), ignore_index=0)
    assert torch.allclose(lm_loss(logits, targets, mask), expected)
    changed = logits.clone()
    changed[1, 2:] = 100 * torch.randn(2, 7)  # scores at padded positions do not matter
    assert torch.allclose(lm_loss(changed, targets, mask), expected)


def test_char_lm_shapes_and_state():
    torch.manual_seed(0)
    model = CharRNNLM(vocab_size=11, embed_dim=5, hidden_size=7, num_layers=2)
    tokens = torch.randint(0, 11, (3, 6))
    logits, s = model(tokens)
    assert logits.shape == (3, 6, 11) and s.shape == (2, 3, 7)
    # Feeding the sequence in two pieces, carrying the state, gives the same scores.
    first, s1 = model(tokens[:, :4])
    second, s2 = model(tokens[:, 4:], s1)
    assert torch.allclose(torch.cat([first, second], 1), logits, atol=1e-6)
    assert torch.allclose(s2, s, atol=1e-6)


def _tiny_data():
    texts = ["ab", "abab", "aab", "ba", "abba"] * 8
    vocab = Vocab.build([list(t) for t in texts])
    seqs = [vocab.encode(list(t), add_bos=True, add_eos=True) for t in texts]
    return vocab, seqs


def test_evaluate_lm_does_not_depend_on_batch_size():
    torch.manual_seed(0)
    vocab, seqs = _tiny_data()
    model = CharRNNLM(len(vocab), 4, 8)
    a, b = evaluate_lm(model, seqs, batch_size=1), evaluate_lm(model, seqs, batch_size=64)
    assert a == pytest.approx(b, rel=1e-5)
    inputs, targets, mask = lm_batch(seqs)
    assert a == pytest.approx(lm_loss(model(inputs)[0], targets, mask).item(), rel=1e-5)


def test_train_lm_learns_and_is_reproducible():
    vocab, seqs = _tiny_data()

    def run():
        torch.manual_seed(0)
        model = CharRNNLM(len(vocab), 4, 16)
        g = torch.Generator().manual_seed(0)
        return train_lm(
            model, seqs, seqs, steps=60, batch_size=8, lr=1e-2, eval_every=20, generator=g
        )

    history = run()
    assert history["step"] == [20, 40, 60]
    assert len(history["train"]) == len(history["val"]) == 3
    assert history["val"][-1] < history["val"][0] < math.log(len(vocab))
    assert history == run()


def test_sample_is_reproducible_stops_at_eos_and_respects_max_len():
    vocab, seqs = _tiny_data()
    torch.manual_seed(0)
    model = CharRNNLM(len(vocab), 4, 8)
    a = sample(model, vocab, max_len=30, generator=torch.Generator().manual_seed(1))
    b = sample(model, vocab, max_len=30, generator=torch.Generator().manual_seed(1))
    assert a == b and len(a) <= 30
    assert set(a) <= {"a", "b"}  # only characters: never <pad>, <unk> or <bos>
    with torch.no_grad():  # a model that always says <eos> returns just the prompt
        model.head.weight.zero_()
        model.head.bias.fill_(-1e4)
        model.head.bias[vocab.eos_id] = 0.0
    assert sample(model, vocab, prompt="ab", generator=torch.Generator().manual_seed(0)) == "ab"
    with torch.no_grad():  # a model that never says <eos> stops at max_len
        model.head.bias.fill_(-1e4)
        model.head.bias[vocab.stoi["a"]] = 0.0
    assert sample(model, vocab, prompt="b", max_len=9) == "baaaaaaaa"
    with pytest.raises(ValueError, match="temperature"):
        sample(model, vocab, temperature=0.0)
