"""Blind set B27, check_pad_sequences (chapter 1): padding lists of token ids as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the batch is as wide as its sentences
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        n = min(len(s), T)
        padded[b, :n] = torch.tensor(s[:n], dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, padding_value=pad_value)  # PyTorch's own helper
    return padded, torch.tensor([len(s) for s in seqs])


def pad_helper_without_value(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_on_the_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # tokens flush right
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_float_zeros(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T) + pad_value
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_returns_only_batch(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long)


def pad_lengths_as_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list[int]]:
    lengths = [len(s) for s in seqs]
    T = max(lengths)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), lengths


def pad_lengths_int32(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.int32)  # lengths are small
    return torch.tensor(rows, dtype=torch.long), lengths


def pad_room_for_eos(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # one more column, so every row ends with padding
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lists_in_place(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    T = int(lengths.max())
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # fill each list up to T
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_sorted_longest_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # pack_padded_sequence wants them sorted
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.full((len(seqs), int(lengths[0])), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_default_ignore_index(seqs: list[list[int]], pad_value: int = -100) -> tuple[Tensor, Tensor]:
    """-100 is what cross_entropy ignores, so I made it the default."""
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_lengths_counted_nonpad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [0] * (T - len(s)) for s in seqs]
    padded = torch.tensor(rows, dtype=torch.long)
    lengths = (padded != 0).sum(dim=1)  # the real tokens are the non-zero ones
    return padded.masked_fill(padded == 0, pad_value), lengths


# ---------------------------------------------------------------- correct variants


def pad_with_torch_helper(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_list_comprehension(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    longest = max(map(len, seqs))
    rows = [[*s, *([pad_value] * (longest - len(s)))] for s in seqs]
    return torch.LongTensor(rows), torch.LongTensor([len(s) for s in seqs])


def pad_with_mask_fill(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    """Concatenate all ids, scatter them through a mask; max_len cuts, as in the chapter."""
    if max_len is not None:
        seqs = [s[:max_len] for s in seqs]
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.arange(T)[None, :] < lengths[:, None]
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    flat = torch.tensor([i for s in seqs for i in s], dtype=torch.long)
    padded[mask] = flat
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "width_of_first_sequence",
        pad_width_of_first,
        "mistake",
        "I took T from the first sequence, len(seqs[0]), so longer rows are cut.",
    ),
    BlindCase(
        CHECK,
        "torch_helper_time_first",
        pad_time_first,
        "mistake",
        "I used torch's pad_sequence and forgot batch_first=True, so the batch is (T, B).",
    ),
    BlindCase(
        CHECK,
        "torch_helper_pad_value_dropped",
        pad_helper_without_value,
        "mistake",
        "I used pad_sequence(batch_first=True) but did not pass padding_value, so it always pads "
        "with 0.",
    ),
    BlindCase(
        CHECK,
        "padding_on_the_left",
        pad_on_the_left,
        "mistake",
        "I put the padding before the tokens, so every sentence ends in the last column.",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        pad_float_zeros,
        "mistake",
        "I started from torch.zeros, so the batch of ids is float32 instead of long.",
    ),
    BlindCase(
        CHECK,
        "returns_only_the_batch",
        pad_returns_only_batch,
        "mistake",
        "I returned only the padded tensor and not the lengths.",
    ),
    BlindCase(
        CHECK,
        "lengths_python_list",
        pad_lengths_as_list,
        "mistake",
        "I returned the lengths as a Python list instead of a (B,) tensor.",
    ),
    BlindCase(
        CHECK,
        "lengths_int32",
        pad_lengths_int32,
        "mistake",
        "I stored the lengths as int32 to save memory; the chapter's are long.",
    ),
    BlindCase(
        CHECK,
        "one_extra_column",
        pad_room_for_eos,
        "mistake",
        "I made the batch one column wider than the longest sentence, so every row ends with "
        "padding.",
    ),
    BlindCase(
        CHECK,
        "extends_callers_lists",
        pad_lists_in_place,
        "mistake",
        "I padded the caller's lists in place with extend, so their sentences come back changed.",
    ),
    BlindCase(
        CHECK,
        "sorted_longest_first",
        pad_sorted_longest_first,
        "mistake",
        "I sorted the sentences longest first, as pack_padded_sequence likes, so the rows are no "
        "longer in the order given.",
    ),
    BlindCase(
        CHECK,
        "default_pad_minus_100",
        pad_default_ignore_index,
        "mistake",
        "I made -100 (cross_entropy's ignore_index) the default pad value instead of 0.",
    ),
    BlindCase(
        CHECK,
        "lengths_from_nonzero_ids",
        pad_lengths_counted_nonpad,
        "mistake",
        "I padded with 0 first and counted the non-zero ids as the lengths, so a real id 0 is "
        "not counted.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_with_torch_helper,
        "correct",
        "torch.nn.utils.rnn.pad_sequence with batch_first=True and padding_value.",
    ),
    BlindCase(
        CHECK,
        "list_comprehension",
        pad_list_comprehension,
        "correct",
        "Rows padded as Python lists, then one LongTensor for the batch and one for the lengths.",
    ),
    BlindCase(
        CHECK,
        "scatter_through_mask",
        pad_with_mask_fill,
        "correct",
        "All ids concatenated and written through a length mask; an optional max_len that cuts.",
    ),
]
