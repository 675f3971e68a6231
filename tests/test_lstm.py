"""Tests of transformer_tutorial.lstm (chapter 3): the LSTM from scratch and the delayed-recall task."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from transformer_tutorial.lstm import (
    GATE_NAMES,
    LSTM,
    LSTMCell,
    RecallClassifier,
    delayed_recall_batch,
    gradient_by_distance,
    init_forget_bias,
    recall_accuracy,
    train_recall,
)
from transformer_tutorial.reference import recurrent_from_torch
from transformer_tutorial.rnn import RNN

ATOL = 1e-5


# --- the cell ----------------------------------------------------------------------------------


def _copy_cell(ours: LSTMCell, ref: nn.LSTMCell) -> None:
    with torch.no_grad():
        ours.in_proj.weight.copy_(ref.weight_ih)
        ours.state_proj.weight.copy_(ref.weight_hh)
        ours.in_proj.bias.copy_(ref.bias_ih + ref.bias_hh)


def test_cell_is_the_formula_block_by_block():
    torch.manual_seed(0)
    D, H = 3, 5
    cell = LSTMCell(D, H)
    x, h, c = torch.randn(4, D), torch.randn(4, H), torch.randn(4, H)
    h_new, c_new, (i, f, g, o) = cell.forward_with_gates(x, (h, c))
    W_in, b, W_h = cell.in_proj.weight, cell.in_proj.bias, cell.state_proj.weight
    z = x @ W_in.T + h @ W_h.T + b  # (B, 4H)
    zi, zf, zg, zo = z.split(H, dim=-1)
    assert torch.allclose(i, torch.sigmoid(zi), atol=ATOL)
    assert torch.allclose(f, torch.sigmoid(zf), atol=ATOL)
    assert torch.allclose(g, torch.tanh(zg), atol=ATOL)
    assert torch.allclose(o, torch.sigmoid(zo), atol=ATOL)
    assert torch.allclose(c_new, f * c + i * g, atol=ATOL)
    assert torch.allclose(h_new, o * torch.tanh(c_new), atol=ATOL)
    h2, c2 = cell(x, (h, c))
    assert torch.equal(h2, h_new) and torch.equal(c2, c_new)
    assert GATE_NAMES == ("input", "forget", "candidate", "output")


def test_cell_equals_torch_lstm_cell_values_and_gradients():
    torch.manual_seed(0)
    ref = nn.LSTMCell(4, 6)
    ours = LSTMCell(4, 6)
    _copy_cell(ours, ref)
    x, h, c = torch.randn(3, 4), torch.randn(3, 6), torch.randn(3, 6)
    leaves_o = [t.clone().requires_grad_() for t in (x, h, c)]
    leaves_r = [t.clone().requires_grad_() for t in (x, h, c)]
    ho, co = ours(leaves_o[0], (leaves_o[1], leaves_o[2]))
    hr, cr = ref(leaves_r[0], (leaves_r[1], leaves_r[2]))
    assert torch.allclose(ho, hr, atol=ATOL) and torch.allclose(co, cr, atol=ATOL)
    w1, w2 = torch.randn(3, 6), torch.randn(3, 6)
    ((ho * w1).sum() + (co * w2).sum()).backward()
    ((hr * w1).sum() + (cr * w2).sum()).backward()
    for a, b in zip(leaves_o, leaves_r, strict=True):
        assert torch.allclose(a.grad, b.grad, atol=ATOL)
    assert torch.allclose(ours.in_proj.weight.grad, ref.weight_ih.grad, atol=ATOL)
    assert torch.allclose(ours.state_proj.weight.grad, ref.weight_hh.grad, atol=ATOL)
    assert torch.allclose(ours.in_proj.bias.grad, ref.bias_ih.grad, atol=ATOL)
    # no state = zero state
    h0, c0 = ours(x)
    h1, c1 = ref(x)
    assert torch.allclose(h0, h1, atol=ATOL) and torch.allclose(c0, c1, atol=ATOL)


def test_cell_init_range_and_parameter_count():
    torch.manual_seed(0)
    cell = LSTMCell(3, 16)
    bound = 1 / math.sqrt(16)
    for p in cell.parameters():
        assert p.abs().max() <= bound
        assert p.abs().max() > bound / 2  # really spread over the range, not left at zero
    torch_count = sum(p.numel() for p in nn.LSTMCell(3, 16).parameters())
    ours_count = sum(p.numel() for p in cell.parameters())
    assert ours_count == torch_count - 4 * 16  # one bias instead of two
    assert sum(p.numel() for p in LSTMCell(3, 16, bias=False).parameters()) == 4 * 16 * (3 + 16)


def test_cell_rejects_wrong_shapes_with_a_helpful_message():
    cell = LSTMCell(3, 4)
    with pytest.raises(ValueError, match=r"\(B, 3\).*use LSTM"):
        cell(torch.randn(2, 5, 3))
    with pytest.raises(ValueError, match=r"\(B, 3\)"):
        cell(torch.randn(2, 7))
    with pytest.raises(ValueError, match=r"pair \(h, c\)"):
        cell(torch.randn(2, 3), (torch.zeros(2, 4), torch.zeros(2, 5)))
    with pytest.raises(ValueError, match=r"pair \(h, c\)"):
        cell(torch.randn(2, 3), (torch.zeros(2, 4),))


# --- the layer against torch.nn.LSTM -----------------------------------------------------------


def _compare_with_torch(B, T, D, H, L, bias, with_state, seed):
    torch.manual_seed(seed)
    ref = nn.LSTM(D, H, num_layers=L, bias=bias, batch_first=True)
    ours = recurrent_from_torch(LSTM(D, H, L, bias=bias), ref)
    x = torch.randn(B, T, D)
    state = (torch.randn(L, B, H), torch.randn(L, B, H)) if with_state else None
    xo, xr = x.clone().requires_grad_(), x.clone().requires_grad_()
    so = tuple(s.clone().requires_grad_() for s in state) if with_state else None
    sr = tuple(s.clone().requires_grad_() for s in state) if with_state else None
    out_o, (h_o, c_o) = ours(xo, so)
    out_r, (h_r, c_r) = ref(xr, sr)
    assert out_o.shape == (B, T, H) and h_o.shape == (L, B, H) and c_o.shape == (L, B, H)
    for a, b in ((out_o, out_r), (h_o, h_r), (c_o, c_r)):
        assert torch.allclose(a, b, atol=ATOL)
    w_out, w_h, w_c = torch.randn(B, T, H), torch.randn(L, B, H), torch.randn(L, B, H)
    ((out_o * w_out).sum() + (h_o * w_h).sum() + (c_o * w_c).sum()).backward()
    ((out_r * w_out).sum() + (h_r * w_h).sum() + (c_r * w_c).sum()).backward()
    assert torch.allclose(xo.grad, xr.grad, atol=ATOL)
    if with_state:
        for a, b in zip(so, sr, strict=True):
            assert torch.allclose(a.grad, b.grad, atol=ATOL)
    for layer, cell in enumerate(ours.cells):
        w_ih, w_hh = getattr(ref, f"weight_ih_l{layer}"), getattr(ref, f"weight_hh_l{layer}")
        assert torch.allclose(cell.in_proj.weight.grad, w_ih.grad, atol=ATOL)
        assert torch.allclose(cell.state_proj.weight.grad, w_hh.grad, atol=ATOL)
        if bias:
            for name in ("bias_ih", "bias_hh"):
                b_grad = getattr(ref, f"{name}_l{layer}").grad
                assert torch.allclose(cell.in_proj.bias.grad, b_grad, atol=ATOL)
        else:
            assert cell.in_proj.bias is None


def test_layer_equals_torch_lstm_two_layers_with_initial_state():
    _compare_with_torch(B=3, T=7, D=4, H=5, L=2, bias=True, with_state=True, seed=0)


@settings(max_examples=12, deadline=None)
@given(
    B=st.integers(1, 4),
    T=st.integers(1, 6),
    D=st.integers(1, 5),
    H=st.integers(1, 6),
    L=st.integers(1, 3),
    bias=st.booleans(),
    with_state=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_layer_equals_torch_lstm_for_many_shapes(B, T, D, H, L, bias, with_state, seed):
    _compare_with_torch(B, T, D, H, L, bias, with_state, seed)


@settings(max_examples=8, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 6), min_size=1, max_size=4),
    L=st.integers(1, 2),
    seed=st.integers(0, 2**16),
)
def test_padded_batch_equals_packed_torch_lstm(lengths, L, seed):
    torch.manual_seed(seed)
    D, H = 3, 4
    ref = nn.LSTM(D, H, num_layers=L, batch_first=True)
    ours = recurrent_from_torch(LSTM(D, H, L), ref)
    T = max(lengths)
    lengths_t = torch.tensor(lengths)
    x = torch.randn(len(lengths), T, D)
    state = (torch.randn(L, len(lengths), H), torch.randn(L, len(lengths), H))
    out_o, (h_o, c_o) = ours(x, state, lengths=lengths_t)
    packed = pack_padded_sequence(x, lengths_t, batch_first=True, enforce_sorted=False)
    out_p, (h_r, c_r) = ref(packed, state)
    out_r, _ = pad_packed_sequence(out_p, batch_first=True, total_length=T)
    for a, b in ((out_o, out_r), (h_o, h_r), (c_o, c_r)):
        assert torch.allclose(a, b, atol=ATOL)
    # Padding never changes anything real: each row alone gives the same final state.
    for b, n in enumerate(lengths):
        _, (h1, c1) = ours(x[b : b + 1, :n], (state[0][:, b : b + 1], state[1][:, b : b + 1]))
        assert torch.allclose(h_o[:, b], h1[:, 0], atol=ATOL)
        assert torch.allclose(c_o[:, b], c1[:, 0], atol=ATOL)
        assert (out_o[b, n:] == 0).all()


def test_layer_is_its_cell_unrolled_and_causal():
    torch.manual_seed(0)
    lstm = LSTM(3, 4)
    x = torch.randn(2, 6, 3)
    h, c = torch.zeros(2, 4), torch.zeros(2, 4)
    hs = []
    for t in range(6):
        h, c = lstm.cells[0](x[:, t], (h, c))
        hs.append(h)
    out, (h_n, c_n) = lstm(x)
    assert torch.allclose(out, torch.stack(hs, 1), atol=ATOL)
    assert torch.allclose(h_n[0], h, atol=ATOL) and torch.allclose(c_n[0], c, atol=ATOL)
    # Changing a later input never changes an earlier output.
    x2 = x.clone()
    x2[:, 4:] = torch.randn(2, 2, 3)
    out2, _ = lstm(x2)
    assert torch.allclose(out2[:, :4], out[:, :4]) and not torch.allclose(out2[:, 4:], out[:, 4:])


def test_forward_with_gates_shapes_and_consistency():
    torch.manual_seed(0)
    lstm = LSTM(3, 4, num_layers=2)
    x = torch.randn(2, 5, 3)
    out, (h_n, c_n), gates = lstm.forward_with_gates(x)
    out2, (h2, c2) = lstm(x)
    assert torch.equal(out, out2) and torch.equal(h_n, h2) and torch.equal(c_n, c2)
    assert set(gates) == {*GATE_NAMES, "cell_state"}
    for value in gates.values():
        assert value.shape == (2, 2, 5, 4)  # (L, B, T, H)
    i, f, g, o, c = (gates[k] for k in (*GATE_NAMES, "cell_state"))
    c_prev = torch.cat([torch.zeros(2, 2, 1, 4), c[:, :, :-1]], dim=2)
    assert torch.allclose(c, f * c_prev + i * g, atol=ATOL)
    assert torch.allclose(out, (o * torch.tanh(c))[-1], atol=ATOL)
    assert torch.allclose(c[:, :, -1], c_n, atol=ATOL)
    for k in ("input", "forget", "output"):
        assert ((gates[k] > 0) & (gates[k] < 1)).all()


def test_layer_rejects_wrong_inputs_with_helpful_messages():
    lstm = LSTM(3, 4, num_layers=2)
    with pytest.raises(ValueError, match=r"\(B, T, 3\).*x\[None\]"):
        lstm(torch.randn(5, 3))
    with pytest.raises(ValueError, match=r"\(B, T, 3\)"):
        lstm(torch.randn(2, 5, 7))
    with pytest.raises(ValueError, match="length 0"):
        lstm(torch.randn(2, 0, 3))
    with pytest.raises(ValueError, match=r"\(num_layers, B, H\) = \(2, 2, 4\)"):
        lstm(torch.randn(2, 5, 3), (torch.zeros(2, 2, 4), torch.zeros(2, 4)))
    with pytest.raises(ValueError, match=r"pair \(h0, c0\)"):
        lstm(torch.randn(2, 5, 3), torch.zeros(2, 2, 4))
    with pytest.raises(ValueError, match="lengths"):
        lstm(torch.randn(2, 5, 3), lengths=torch.tensor([5, 6]))
    with pytest.raises(ValueError, match="lengths"):
        lstm(torch.randn(2, 5, 3), lengths=torch.tensor([0, 3]))
    with pytest.raises(ValueError, match="lengths"):
        lstm(torch.randn(2, 5, 3), lengths=torch.tensor([3]))
    with pytest.raises(ValueError, match="num_layers"):
        LSTM(3, 4, num_layers=0)


def test_copy_weights_rejects_mismatches():
    with pytest.raises(ValueError, match="Sizes differ"):
        recurrent_from_torch(LSTM(3, 4), nn.LSTM(3, 5, batch_first=True))
    with pytest.raises(ValueError, match="Sizes differ"):
        recurrent_from_torch(LSTM(3, 4, bias=False), nn.LSTM(3, 4, batch_first=True))
    with pytest.raises(ValueError, match="one-directional"):
        recurrent_from_torch(LSTM(3, 4), nn.LSTM(3, 4, bidirectional=True))
    with pytest.raises(ValueError, match="one-directional"):
        recurrent_from_torch(LSTM(3, 4), nn.LSTM(3, 4, proj_size=2))


def test_init_forget_bias_sets_only_the_forget_block():
    torch.manual_seed(0)
    lstm = LSTM(3, 4, num_layers=2)
    before = [cell.in_proj.bias.clone() for cell in lstm.cells]
    assert init_forget_bias(lstm, 2.0) is lstm
    for cell, old in zip(lstm.cells, before, strict=True):
        b = cell.in_proj.bias
        assert torch.equal(b[4:8], torch.full((4,), 2.0))
        assert torch.equal(b[:4], old[:4]) and torch.equal(b[8:], old[8:])
        # With zero input and zero state the forget gate is exactly sigmoid(2).
        _, _, (_, f, _, _) = cell.forward_with_gates(torch.zeros(1, cell.input_size))
        assert torch.allclose(f, torch.sigmoid(torch.tensor(2.0)).expand(1, 4))
    with pytest.raises(ValueError, match="bias=False"):
        init_forget_bias(LSTM(3, 4, bias=False))


# --- the delayed-recall task -------------------------------------------------------------------


@settings(max_examples=10, deadline=None)
@given(B=st.integers(1, 16), T=st.integers(0, 12), K=st.integers(2, 9), seed=st.integers(0, 99))
def test_delayed_recall_batch_shapes_and_labels(B, T, K, seed):
    x, labels = delayed_recall_batch(B, T, K, generator=torch.Generator().manual_seed(seed))
    assert x.shape == (B, T + 1, K + 1) and x.dtype == torch.float32
    assert labels.shape == (B,) and labels.dtype == torch.long
    assert ((labels >= 0) & (labels < K)).all()
    # Exactly one symbol per step, the marker on step 0 only, and the label is step 0's symbol.
    assert (x[..., :K].sum(-1) == 1).all() and set(x.unique().tolist()) <= {0.0, 1.0}
    assert (x[:, 0, K] == 1).all() and (x[:, 1:, K] == 0).all()
    assert torch.equal(x[:, 0, :K].argmax(-1), labels)
    # Reproducible with the same seed.
    x2, labels2 = delayed_recall_batch(B, T, K, generator=torch.Generator().manual_seed(seed))
    assert torch.equal(x, x2) and torch.equal(labels, labels2)


def test_delayed_recall_batch_draws_every_symbol_uniformly_and_rejects_bad_arguments():
    x, labels = delayed_recall_batch(4000, 3, 4, generator=torch.Generator().manual_seed(0))
    counts = torch.bincount(labels, minlength=4).float() / 4000
    assert (counts - 0.25).abs().max() < 0.03
    distractors = x[:, 1:, :4].argmax(-1).flatten()
    assert (
        torch.bincount(distractors, minlength=4).float() / distractors.numel() - 0.25
    ).abs().max() < 0.03
    for bad in ((0, 3, 4), (2, -1, 4), (2, 3, 1)):
        with pytest.raises(ValueError, match="Need batch_size"):
            delayed_recall_batch(*bad)


class _ShowFirstStep(nn.Module):
    """A stand-in recurrent layer whose every output is the first input: a perfect memory."""

    def __init__(self, size: int):
        super().__init__()
        self.hidden_size = size

    def forward(self, x):
        return x[:, :1].expand_as(x), None


class _Identity(nn.Module):
    """A stand-in recurrent layer whose output at step t is x_t: no memory at all."""

    def __init__(self, size: int):
        super().__init__()
        self.hidden_size = size

    def forward(self, x):
        return x, None


def test_recall_accuracy_of_a_perfect_memory_and_of_a_constant_guess():
    K = 5
    perfect = RecallClassifier(_ShowFirstStep(K + 1), num_symbols=K)
    with torch.no_grad():
        perfect.head.weight.copy_(torch.eye(K, K + 1))
        perfect.head.bias.zero_()
    gen = torch.Generator().manual_seed(0)
    assert recall_accuracy(perfect, delay=7, num_examples=300, generator=gen) == 1.0
    with torch.no_grad():
        perfect.head.weight.zero_()
        perfect.head.bias.copy_(torch.tensor([1.0, 0, 0, 0, 0]))  # always says symbol 0
    acc = recall_accuracy(perfect, delay=7, num_examples=2000, generator=gen)
    assert abs(acc - 1 / K) < 0.03


def test_classifier_wraps_our_lstm_chapter_2_rnn_and_torch_layers():
    x, _ = delayed_recall_batch(3, 4, 6)
    for layer in (
        LSTM(7, 8),
        RNN(7, 8),
        nn.LSTM(7, 8, batch_first=True),
        nn.RNN(7, 8, batch_first=True),
    ):
        model = RecallClassifier(layer, num_symbols=6)
        assert model(x).shape == (3, 6)
    with pytest.raises(ValueError, match="batch first"):
        RecallClassifier(nn.LSTM(7, 8), num_symbols=6)


def test_train_recall_learns_a_short_delay():
    torch.manual_seed(0)
    model = RecallClassifier(LSTM(5, 16), num_symbols=4)
    gen = torch.Generator().manual_seed(0)
    before = recall_accuracy(model, 3, generator=torch.Generator().manual_seed(1))
    losses = train_recall(model, max_delay=3, steps=150, batch_size=32, generator=gen)
    after = recall_accuracy(model, 3, generator=torch.Generator().manual_seed(1))
    assert len(losses) == 150
    assert sum(losses[-10:]) / 10 < 0.2 < 1.0 < sum(losses[:10]) / 10
    assert before < 0.5 and after > 0.95


def test_gradient_by_distance_matches_autograd_and_counts_back_from_the_end():
    torch.manual_seed(0)
    model = RecallClassifier(LSTM(5, 6), num_symbols=4)
    x, labels = delayed_recall_batch(8, 5, 4, generator=torch.Generator().manual_seed(0))
    g = gradient_by_distance(model, x, labels)
    assert g.shape == (6,)
    assert all(p.grad is None for p in model.parameters())  # the model's gradients are untouched
    xr = x.clone().requires_grad_()
    F.cross_entropy(model(xr), labels).backward()
    expected = xr.grad.norm(dim=-1).mean(0)  # (T,), index = step
    assert torch.allclose(g, expected.flip(0), atol=1e-7)
    # A model without memory gets a gradient from the last input only: k = 0.
    no_memory = RecallClassifier(_Identity(5), num_symbols=4)
    g0 = gradient_by_distance(no_memory, x, labels)
    assert g0[0] > 0 and (g0[1:] == 0).all()
