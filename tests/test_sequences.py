"""Tests of transformer_tutorial.sequences (chapter 1): padding and batching of sequences."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_tutorial.sequences import pad_sequences, padding_mask

id_lists = st.lists(st.lists(st.integers(1, 1000), min_size=0, max_size=12), min_size=1, max_size=8)


def test_pad_sequences_example():
    padded, lengths = pad_sequences([[5, 6, 7], [8], [9, 10]])
    assert padded.dtype == torch.long
    assert torch.equal(padded, torch.tensor([[5, 6, 7], [8, 0, 0], [9, 10, 0]]))
    assert torch.equal(lengths, torch.tensor([3, 1, 2]))


@settings(max_examples=60, deadline=None)
@given(seqs=id_lists, pad=st.integers(-5, 0))
def test_pad_sequences_round_trip(seqs, pad):
    padded, lengths = pad_sequences(seqs, pad_value=pad)
    B, T = padded.shape
    assert B == len(seqs) and T == max(len(s) for s in seqs)
    assert lengths.tolist() == [len(s) for s in seqs]
    for b, s in enumerate(seqs):
        assert padded[b, : len(s)].tolist() == s  # real tokens kept in order
        assert (padded[b, len(s) :] == pad).all()  # the rest is padding


@settings(max_examples=40, deadline=None)
@given(seqs=id_lists, max_len=st.integers(0, 15))
def test_pad_sequences_max_len_cuts_and_fixes_width(seqs, max_len):
    padded, lengths = pad_sequences(seqs, max_len=max_len)
    assert padded.shape == (len(seqs), max_len)
    assert lengths.tolist() == [min(len(s), max_len) for s in seqs]
    for b, s in enumerate(seqs):
        assert padded[b, : lengths[b]].tolist() == s[:max_len]


def test_pad_sequences_vector_sets_keep_dtype_and_features():
    frames = [torch.randn(4, 3), torch.randn(2, 3)]  # e.g. two clips of 3-dim audio frames
    padded, lengths = pad_sequences(frames, pad_value=0.0)
    assert padded.shape == (2, 4, 3) and padded.dtype == torch.float32
    assert torch.equal(padded[0], frames[0]) and torch.equal(padded[1, :2], frames[1])
    assert (padded[1, 2:] == 0).all()
    assert lengths.tolist() == [4, 2]


def test_pad_sequences_accepts_1d_tensors():
    padded, lengths = pad_sequences([torch.tensor([1, 2]), torch.tensor([3])], pad_value=-1)
    assert torch.equal(padded, torch.tensor([[1, 2], [3, -1]]))


def test_pad_sequences_errors():
    with pytest.raises(ValueError, match="at least one"):
        pad_sequences([])
    with pytest.raises(ValueError, match="same feature shape"):
        pad_sequences([torch.zeros(2, 3), torch.zeros(2, 4)])
    with pytest.raises(ValueError, match="max_len"):
        pad_sequences([[1]], max_len=-1)


def test_padding_mask_example():
    mask = padding_mask(torch.tensor([3, 1, 0]))
    expected = torch.tensor([[1, 1, 1], [1, 0, 0], [0, 0, 0]], dtype=torch.bool)
    assert mask.dtype == torch.bool and torch.equal(mask, expected)
    assert padding_mask([2, 1], max_len=4).tolist() == [
        [True, True, False, False],
        [True] + [False] * 3,
    ]


@settings(max_examples=60, deadline=None)
@given(seqs=id_lists)
def test_padding_mask_marks_exactly_the_real_tokens(seqs):
    padded, lengths = pad_sequences(seqs, pad_value=0)  # ids are >= 1, so 0 is only padding
    mask = padding_mask(lengths)
    assert mask.shape == padded.shape
    assert torch.equal(mask, padded != 0)
    assert mask.sum(1).tolist() == lengths.tolist()


def test_padding_mask_errors():
    with pytest.raises(ValueError, match="shorter than the longest"):
        padding_mask(torch.tensor([3, 5]), max_len=4)
    with pytest.raises(ValueError, match=">= 0"):
        padding_mask(torch.tensor([2, -1]))
    with pytest.raises(ValueError, match="1-D integer"):
        padding_mask(torch.tensor([[1, 2]]))
    with pytest.raises(ValueError, match="1-D integer"):
        padding_mask(torch.tensor([1.5, 2.0]))
