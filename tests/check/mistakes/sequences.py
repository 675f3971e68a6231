"""Mistakes in padding a batch and building its padding mask (chapter 1)."""

from __future__ import annotations

import torch

from transformer_tutorial import check

from . import Correct, Mistake

# --- pad_sequences ---------------------------------------------------------------------------------


def _rows(seqs, pad_value, width):
    return [list(s)[:width] + [pad_value] * (width - len(list(s)[:width])) for s in seqs]


def pad_right(seqs, pad_value=0):
    width = max(len(s) for s in seqs)
    return torch.tensor(_rows(seqs, pad_value, width)), torch.tensor([len(s) for s in seqs])


def pad_returns_only_the_batch(seqs, pad_value=0):
    return pad_right(seqs, pad_value)[0]


def pad_time_first(seqs, pad_value=0):
    padded, lengths = pad_right(seqs, pad_value)
    return padded.T, lengths


def pad_left(seqs, pad_value=0):
    width = max(len(s) for s in seqs)
    rows = [[pad_value] * (width - len(s)) + list(s) for s in seqs]
    return torch.tensor(rows), torch.tensor([len(s) for s in seqs])


def pad_with_zeros_always(seqs, pad_value=0):
    return pad_right(seqs, 0)


def pad_float(seqs, pad_value=0):
    width = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), width), float(pad_value))  # float32
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float32)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_as_wide_as_the_first(seqs, pad_value=0):
    width = len(seqs[0])
    return torch.tensor(_rows(seqs, pad_value, width)), torch.tensor([len(s) for s in seqs])


def pad_lengths_are_the_width(seqs, pad_value=0):
    padded, _ = pad_right(seqs, pad_value)
    return padded, torch.full((len(seqs),), padded.shape[1])


def pad_by_torch(seqs, pad_value=0):
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    return padded, torch.tensor([len(t) for t in tensors])


# --- padding_mask ---------------------------------------------------------------------------------


def mask_right(lengths, max_len=None):
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_inverted(lengths, max_len=None):
    return ~mask_right(lengths, max_len)


def mask_of_ints(lengths, max_len=None):
    return mask_right(lengths, max_len).long()


def mask_off_by_one(lengths, max_len=None):
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_ignores_max_len(lengths, max_len=None):
    return mask_right(lengths)


def mask_time_first(lengths, max_len=None):
    return mask_right(lengths, max_len).T


def mask_by_loops(lengths, max_len=None):
    T = max(int(n) for n in lengths) if max_len is None else max_len
    rows = [[t < int(n) for t in range(T)] for n in lengths]
    return torch.tensor(rows, dtype=torch.bool)


def mask_from_padding_ones(lengths, max_len=None):
    ones = [[1] * int(n) for n in lengths]
    width = int(max(lengths)) if max_len is None else max_len
    return torch.tensor(_rows(ones, 0, width)) == 1


PAD, MASK = check.check_pad_sequences, check.check_padding_mask


def pad_counting_nonzero(seqs, pad_value=0):
    """Lengths counted in the batch: right only while the padding is 0."""
    padded, _ = pad_right(seqs, pad_value)
    return padded, (padded != 0).sum(-1)


def pad_one_too_wide(seqs, pad_value=0):
    T = max(len(s) for s in seqs) + 1
    return (torch.tensor([s + [pad_value] * (T - len(s)) for s in seqs]),
            torch.tensor([len(s) for s in seqs]))  # fmt: skip


def pad_lengths_first(seqs, pad_value=0):
    padded, lengths = pad_one_too_wide(seqs, pad_value)
    return lengths, padded[:, :-1]


def mask_width_batch(lengths, max_len=None):
    return torch.arange(len(lengths))[None, :] < lengths[:, None]


def mask_extra_axis(lengths, max_len=None):
    T = max_len or int(lengths.max())
    return (torch.arange(T)[None, :] < lengths[:, None])[..., None]


def mask_shifted(lengths, max_len=None):
    T = max_len or int(lengths.max())
    positions = torch.arange(T)[None, :]
    return (positions >= 1) & (positions <= lengths[:, None])


MISTAKES = [
    Mistake(PAD, "pad-one-too-wide", pad_one_too_wide, "one more than the longest"),
    Mistake(PAD, "pad-pair-swapped", pad_lengths_first, "you return (lengths, padded)"),
    Mistake(MASK, "mask-width-batch", mask_width_batch, "its width is the batch size"),
    Mistake(MASK, "mask-extra-axis", mask_extra_axis, "an extra axis"),
    Mistake(MASK, "mask-shifted", mask_shifted, "shifted one position to the right"),
    Mistake(PAD, "pad-lengths-from-batch", pad_counting_nonzero, "len(s)"),
    Mistake(PAD, "pad-no-lengths", pad_returns_only_the_batch, "return a pair (padded, lengths)"),
    Mistake(PAD, "pad-time-first", pad_time_first, "this book is batch first"),
    Mistake(PAD, "pad-left", pad_left, "the padding is on the left"),
    Mistake(PAD, "pad-value-ignored", pad_with_zeros_always, "fill with the pad_value argument"),
    Mistake(PAD, "pad-float", pad_float, "use torch.long"),
    Mistake(PAD, "pad-first-width", pad_as_wide_as_the_first, "the length of the first sequence"),
    Mistake(PAD, "pad-lengths-width", pad_lengths_are_the_width, "lengths are the *real* lengths"),
    Mistake(MASK, "mask-polarity", mask_inverted, "mask polarity: yours is True on padding"),
    Mistake(MASK, "mask-ints", mask_of_ints, "make it torch.bool"),
    Mistake(MASK, "mask-off-by-one", mask_off_by_one, "off by one"),
    Mistake(MASK, "mask-max-len-ignored", mask_ignores_max_len, "max_len is ignored"),
    Mistake(MASK, "mask-time-first", mask_time_first, "batch first: (B, T)"),
]

CORRECT = [
    Correct(PAD, "pad-by-lists", pad_right),
    Correct(PAD, "pad-by-torch", pad_by_torch),
    Correct(MASK, "mask-by-arange", mask_right),
    Correct(MASK, "mask-by-loops", mask_by_loops),
    Correct(MASK, "mask-from-padded-ones", mask_from_padding_ones),
]
