"""Tests of transformer_tutorial.sequences (chapter 1): padding and batching of sequences."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_tutorial.sequences import (
    Vocab,
    length_sorted_batches,
    pad_sequences,
    padding_fraction,
    padding_mask,
    simple_tokenize,
)

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


# --- tokenizer and vocabulary -------------------------------------------------------------------


def test_simple_tokenize_splits_words_and_punctuation():
    assert simple_tokenize("Two young, White males.") == [
        "two",
        "young",
        ",",
        "white",
        "males",
        ".",
    ]
    assert simple_tokenize("Ein Mädchen läuft!") == ["ein", "mädchen", "läuft", "!"]
    assert simple_tokenize("   ") == []


def test_vocab_build_orders_specials_then_counts_then_alphabet():
    vocab = Vocab.build([["b", "a", "c"], ["a", "b"], ["a", "d"]])
    assert vocab.itos == ["<pad>", "<unk>", "<bos>", "<eos>", "a", "b", "c", "d"]
    assert (vocab.pad_id, vocab.unk_id, vocab.bos_id, vocab.eos_id) == (0, 1, 2, 3)
    assert len(vocab) == 8 and "c" in vocab and "z" not in vocab
    assert Vocab.build([["b", "a", "c"], ["a", "b"]], min_freq=2).itos[4:] == ["a", "b"]


def test_vocab_does_not_depend_on_data_order():
    data = [["x", "y"], ["y", "z"], ["z", "x", "w"]]
    assert Vocab.build(data).itos == Vocab.build(data[::-1]).itos


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(list("abcdefg")), max_size=6), min_size=1, max_size=6))
def test_vocab_encode_decode_round_trip(sentences):
    vocab = Vocab.build(sentences)
    for s in sentences:
        ids = vocab.encode(s, add_bos=True, add_eos=True)
        assert ids[0] == vocab.bos_id and ids[-1] == vocab.eos_id and len(ids) == len(s) + 2
        assert vocab.decode(ids) == s
        assert vocab.decode(ids, skip_specials=False) == ["<bos>", *s, "<eos>"]


def test_vocab_unknown_tokens_and_errors():
    vocab = Vocab.build([["a"]])
    assert vocab.encode(["a", "never-seen"]) == [4, vocab.unk_id]
    assert vocab.decode([vocab.unk_id]) == ["<unk>"]  # <unk> is kept: it stands for a word
    with pytest.raises(ValueError, match="start with the special tokens"):
        Vocab(["a", "<pad>"])
    with pytest.raises(ValueError, match="twice"):
        Vocab([*Vocab.SPECIALS, "a", "a"])


# --- batching ------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 50), min_size=1, max_size=200),
    batch_size=st.integers(1, 32),
    seed=st.integers(0, 10),
)
def test_length_sorted_batches_is_a_partition_of_sorted_runs(lengths, batch_size, seed):
    g = torch.Generator().manual_seed(seed)
    batches = length_sorted_batches(lengths, batch_size, generator=g)
    flat = torch.cat(batches).tolist()
    assert sorted(flat) == list(range(len(lengths)))  # every index exactly once
    assert len(batches) == -(-len(lengths) // batch_size)
    assert sum(len(b) < batch_size for b in batches) <= 1  # only one batch may be short
    # Sorted: the length ranges of different batches do not interleave.
    spans = sorted((min(lengths[i] for i in b), max(lengths[i] for i in b)) for b in batches)
    for (_, hi), (lo, _) in zip(spans, spans[1:], strict=False):
        assert hi <= lo


def test_length_sorted_batches_is_reproducible_and_shuffled():
    lengths = torch.randint(1, 40, (500,), generator=torch.Generator().manual_seed(1))
    a = length_sorted_batches(lengths, 16, generator=torch.Generator().manual_seed(0))
    b = length_sorted_batches(lengths, 16, generator=torch.Generator().manual_seed(0))
    c = length_sorted_batches(lengths, 16, generator=torch.Generator().manual_seed(1))
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(torch.equal(x, y) for x, y in zip(a, c, strict=True))
    maxima = [int(lengths[batch].max()) for batch in a]
    assert maxima != sorted(maxima)  # batch order is shuffled, not shortest first
    with pytest.raises(ValueError, match="batch_size"):
        length_sorted_batches(lengths, 0)


def test_padding_fraction_counts_padded_cells():
    lengths = torch.tensor([2, 4, 4, 1])
    assert padding_fraction([[1, 2]], lengths) == 0.0
    assert padding_fraction([[0, 1]], lengths) == pytest.approx(2 / 8)
    assert padding_fraction([[0, 1], [2, 3]], lengths) == pytest.approx((2 + 3) / 16)
    with pytest.raises(ValueError, match="non-empty"):
        padding_fraction([], lengths)


def test_sorting_by_length_wastes_less_padding_than_random_batches():
    g = torch.Generator().manual_seed(0)
    lengths = torch.randint(5, 60, (2000,), generator=g)
    random_batches = list(torch.randperm(2000, generator=g).split(32))
    sorted_batches = length_sorted_batches(lengths, 32, generator=g)
    assert padding_fraction(sorted_batches, lengths) < padding_fraction(random_batches, lengths) / 5
