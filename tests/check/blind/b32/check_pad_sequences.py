"""Blind set B32, check_pad_sequences (chapter 1): padding lists of token ids as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]  # pad in front
    return torch.tensor(rows, dtype=torch.long), lengths


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the batch is as wide as the first sentence
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        s = s[:T]
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_ignores_pad_value(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.zeros(len(seqs), int(lengths.max()), dtype=torch.long)  # <pad> is 0 anyway
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_float_zeros(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.zeros(len(seqs), int(lengths.max())) + pad_value  # default dtype: float32
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_returns_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.full((len(seqs), int(lengths.max())), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return lengths, padded


def pad_time_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)  # (T, B) default
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_lengths_all_T(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    lengths = torch.full((len(seqs),), padded.shape[1], dtype=torch.long)  # the row lengths
    return padded, lengths


def pad_extra_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max()) + 1  # room for one pad after even the longest
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_sorted_by_length(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    seqs = sorted(seqs, key=len, reverse=True)  # longest first, as pack_padded_sequence likes
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.full((len(seqs), int(lengths[0])), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_only_tensor(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    return torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)


def pad_extends_inputs(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # pads the caller's lists in place
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_int32(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    padded = torch.tensor(rows, dtype=torch.int32)  # ids are small, int32 is enough
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.int32)
    return padded, lengths


def pad_lengths_counted(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)
    lengths = (padded != 0).sum(dim=1)  # count the non-pad tokens
    return padded, lengths


# ---------------------------------------------------------------- correct variants


def pad_with_torch_utility(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    return padded, torch.tensor([len(t) for t in tensors], dtype=torch.long)


def pad_python_lists(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    longest = 0
    for s in seqs:
        longest = max(longest, len(s))
    rows = []
    for s in seqs:
        rows.append(list(s) + [pad_value] * (longest - len(s)))
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def pad_f_pad_stack(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    """F.pad on each row, then a stack; an optional max_len as in the chapter's full version."""
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    if max_len is not None:
        tensors = [t[:max_len] for t in tensors]
    T = max_len if max_len is not None else max(len(t) for t in tensors)
    rows = [F.pad(t, (0, T - len(t)), value=pad_value) for t in tensors]
    return torch.stack(rows), torch.tensor([len(t) for t in tensors], dtype=torch.long)


def pad_mask_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    real = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    padded[real] = torch.tensor([i for s in seqs for i in s], dtype=torch.long)
    return padded, lengths


CASES = [
    BlindCase(
        CHECK, "pad_left", pad_left, "mistake", "I put the padding before the tokens (left)."
    ),
    BlindCase(
        CHECK,
        "width_of_first",
        pad_width_of_first,
        "mistake",
        "I made the batch as wide as the first sequence and cut the longer ones to fit.",
    ),
    BlindCase(
        CHECK,
        "ignores_pad_value",
        pad_ignores_pad_value,
        "mistake",
        "I always padded with zeros since <pad> is id 0, ignoring pad_value.",
    ),
    BlindCase(
        CHECK,
        "float_zeros",
        pad_float_zeros,
        "mistake",
        "I started from torch.zeros(B, T) + pad_value, so the batch is float32, not long.",
    ),
    BlindCase(
        CHECK,
        "lengths_first",
        pad_returns_lengths_first,
        "mistake",
        "I returned (lengths, padded) instead of (padded, lengths).",
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
        "lengths_all_T",
        pad_lengths_all_T,
        "mistake",
        "For lengths I returned the padded width of each row, T for every row.",
    ),
    BlindCase(
        CHECK,
        "extra_pad_column",
        pad_extra_column,
        "mistake",
        "I made the batch one wider than the longest sequence, so every row ends with a pad.",
    ),
    BlindCase(
        CHECK,
        "sorted_by_length",
        pad_sorted_by_length,
        "mistake",
        "I sorted the sequences longest first (for packing), so the rows come back reordered.",
    ),
    BlindCase(
        CHECK,
        "returns_only_padded",
        pad_only_tensor,
        "mistake",
        "I returned only the padded tensor and forgot the lengths.",
    ),
    BlindCase(
        CHECK,
        "extends_input_lists",
        pad_extends_inputs,
        "mistake",
        "I padded the caller's lists in place with list.extend before making the tensor.",
    ),
    BlindCase(
        CHECK,
        "int32_ids",
        pad_int32,
        "mistake",
        "I made the batch and the lengths int32 instead of long.",
    ),
    BlindCase(
        CHECK,
        "lengths_counted_nonzero",
        pad_lengths_counted,
        "mistake",
        "I computed the lengths by counting the non-zero ids, which is wrong when pad_value "
        "is not 0 or a token has id 0.",
    ),
    BlindCase(
        CHECK,
        "torch_pad_sequence",
        pad_with_torch_utility,
        "correct",
        "nn.utils.rnn.pad_sequence with batch_first=True and padding_value.",
    ),
    BlindCase(
        CHECK,
        "python_lists",
        pad_python_lists,
        "correct",
        "Padded rows built as Python lists, then one torch.tensor call.",
    ),
    BlindCase(
        CHECK,
        "f_pad_stack_max_len",
        pad_f_pad_stack,
        "correct",
        "F.pad on each row and torch.stack; an extra optional max_len.",
    ),
    BlindCase(
        CHECK,
        "mask_scatter",
        pad_mask_scatter,
        "correct",
        "A full tensor of pad_value, then the ids written through a boolean mask of real slots.",
    ),
]
