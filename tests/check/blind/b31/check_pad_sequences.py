"""Blind set B31, check_pad_sequences (chapter 1): padding lists of token ids as readers do it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # padding first, tokens last
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the first sequence is the longest in the chapter's example
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        s = s[:T]
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_zeros_always(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # <pad> is id 0 anyway
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_float_batch(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), float(pad_value))  # float32 by default
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)  # (T, B)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_returns_only_batch(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    return torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)


def pad_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    return lengths, padded


def pad_lengths_all_T(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)
    lengths = torch.tensor([padded.shape[1]] * len(seqs))  # the length of each row
    return padded, lengths


def pad_sorted_by_length(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # longest first, as pack_padded_sequence likes
    T = len(seqs[0])
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_int32(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.int32)  # small numbers
    return padded, lengths


def pad_lists_in_place_then_count(
    seqs: list[list[int]], pad_value: int = 0
) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))
    lengths = torch.tensor([len(s) for s in seqs])  # counted after padding
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_lists_in_place(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    T = int(lengths.max())
    for s in seqs:
        s += [pad_value] * (T - len(s))  # pads the caller's lists too
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_room_for_eos(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # one more column, for <eos>
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, torch.tensor([len(s) for s in seqs])


def pad_lengths_last_index(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    lengths = torch.tensor([len(s) - 1 for s in seqs])  # index of the last real token
    return padded, lengths


# ---------------------------------------------------------------- correct variants


def pad_with_torch_pad_sequence(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    return padded, lengths


def pad_list_comprehension(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    """Plain Python lists, with an optional max_len (cut and fixed width) as extra argument."""
    if max_len is not None:
        seqs = [s[:max_len] for s in seqs]
    T = max(len(s) for s in seqs) if max_len is None else max_len
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor(list(map(len, seqs))).long()


def pad_with_f_pad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    rows = [
        F.pad(torch.tensor(s, dtype=torch.long), (0, T - len(s)), value=pad_value) for s in seqs
    ]
    return torch.stack(rows), lengths


def pad_by_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    padded = torch.empty(len(seqs), T, dtype=torch.long).fill_(pad_value)
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    padded[real] = torch.tensor([tok for s in seqs for tok in s], dtype=torch.long)
    return padded, lengths


CASES = [
    BlindCase(CHECK, "pad_left", pad_left, "mistake", "I put the padding before the tokens."),
    BlindCase(
        CHECK,
        "width_of_first_sequence",
        pad_width_of_first,
        "mistake",
        "I made the batch as wide as the first sequence (the longest in the chapter's example) "
        "and cut the others to it.",
    ),
    BlindCase(
        CHECK,
        "zeros_instead_of_pad_value",
        pad_zeros_always,
        "mistake",
        "I started from torch.zeros, since <pad> is id 0, so pad_value is never used.",
    ),
    BlindCase(
        CHECK,
        "float_batch",
        pad_float_batch,
        "mistake",
        "I built the batch with torch.full(..., float(pad_value)), so the ids come back float32.",
    ),
    BlindCase(
        CHECK,
        "time_first_pad_sequence",
        pad_time_first,
        "mistake",
        "I used nn.utils.rnn.pad_sequence without batch_first=True, so the batch is (T, B).",
    ),
    BlindCase(
        CHECK,
        "returns_only_batch",
        pad_returns_only_batch,
        "mistake",
        "I returned only the padded batch and forgot the lengths.",
    ),
    BlindCase(
        CHECK,
        "returns_lengths_first",
        pad_lengths_first,
        "mistake",
        "I returned (lengths, padded) instead of (padded, lengths).",
    ),
    BlindCase(
        CHECK,
        "lengths_are_row_width",
        pad_lengths_all_T,
        "mistake",
        "I took the lengths from the padded rows, so every length is T.",
    ),
    BlindCase(
        CHECK,
        "sorted_by_length",
        pad_sorted_by_length,
        "mistake",
        "I sorted the sequences longest first (as pack_padded_sequence wants), so the rows are "
        "no longer in the order given.",
    ),
    BlindCase(
        CHECK,
        "lengths_int32",
        pad_lengths_int32,
        "mistake",
        "I stored the lengths as int32 instead of long.",
    ),
    BlindCase(
        CHECK,
        "pads_lists_then_counts",
        pad_lists_in_place_then_count,
        "mistake",
        "I extended the caller's lists with pad_value and counted the lengths afterwards.",
    ),
    BlindCase(
        CHECK,
        "pads_caller_lists",
        pad_lists_in_place,
        "mistake",
        "I padded the input lists in place with +=; the result is right but the caller's "
        "sequences are changed.",
    ),
    BlindCase(
        CHECK,
        "extra_column_for_eos",
        pad_room_for_eos,
        "mistake",
        "I made the batch one column wider than the longest sequence, to leave room for <eos>.",
    ),
    BlindCase(
        CHECK,
        "lengths_minus_one",
        pad_lengths_last_index,
        "mistake",
        "I returned the index of each last real token (len - 1) as the length.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_with_torch_pad_sequence,
        "correct",
        "nn.utils.rnn.pad_sequence with batch_first=True and padding_value=pad_value.",
    ),
    BlindCase(
        CHECK,
        "list_comprehension_with_max_len",
        pad_list_comprehension,
        "correct",
        "Rows padded as Python lists then one torch.tensor; an optional max_len argument.",
    ),
    BlindCase(
        CHECK,
        "f_pad_and_stack",
        pad_with_f_pad,
        "correct",
        "Each row padded on the right with F.pad, then stacked.",
    ),
    BlindCase(
        CHECK,
        "boolean_scatter",
        pad_by_scatter,
        "correct",
        "A batch filled with pad_value, then all tokens written through the padding mask.",
    ),
]
