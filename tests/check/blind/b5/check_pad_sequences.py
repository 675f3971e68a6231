"""Chapter 1, "Your turn": ``pad_sequences(seqs, pad_value=0) -> (padded (B, T) long, lengths)``."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_pad_sequences"


# --- mistakes ---------------------------------------------------------------------------------


def width_of_first_row(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the width of the batch: the first sentence's length
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s[:T], dtype=torch.long)
    lengths = torch.tensor([min(len(s), T) for s in seqs], dtype=torch.long)
    return padded, lengths


def pad_on_the_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [[pad_value] * (T - len(s)) + list(s) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), torch.tensor([len(s) for s in seqs])


def zeros_then_fill_float(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T) + pad_value  # torch.zeros is float32
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.float32)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_value_never_used(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), T, dtype=torch.long)  # <pad> is 0 anyway, I thought
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def time_first_like_nn_rnn(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    padded = torch.nn.utils.rnn.pad_sequence(
        [torch.tensor(s, dtype=torch.long) for s in seqs], padding_value=pad_value
    )  # batch_first left at its default (False): (T, B)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def room_for_eos(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs) + 1  # one more column, so that <eos> always fits
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def lengths_by_counting_non_pad(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    lengths = (padded != pad_value).sum(dim=1)  # a real id equal to pad_value is not counted
    return padded, lengths


def sorted_longest_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    ordered = sorted(seqs, key=len, reverse=True)  # pack_padded_sequence likes this order
    T = len(ordered[0])
    padded = torch.full((len(ordered), T), pad_value, dtype=torch.long)
    for b, s in enumerate(ordered):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, torch.tensor([len(s) for s in ordered], dtype=torch.long)


def extends_the_callers_lists(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # pads the caller's own lists in place
    return torch.tensor(seqs, dtype=torch.long), lengths


def returns_only_the_batch(seqs: list[list[int]], pad_value: int = 0) -> Tensor:
    T = max(len(s) for s in seqs)
    return torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)


def lengths_as_python_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list[int]]:
    T = max(len(s) for s in seqs)
    padded = torch.tensor([list(s) + [pad_value] * (T - len(s)) for s in seqs], dtype=torch.long)
    return padded, [len(s) for s in seqs]


# --- correct variants -------------------------------------------------------------------------


def with_pad_sequence(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    return padded, torch.tensor([len(t) for t in tensors], dtype=torch.long)


def with_list_padding(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = [len(s) for s in seqs]
    T = max(lengths)
    rows = [list(s) + [pad_value] * (T - n) for s, n in zip(seqs, lengths)]
    return torch.tensor(rows, dtype=torch.long), torch.tensor(lengths, dtype=torch.long)


def with_new_full_and_max_len(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(list(s)[:max_len], dtype=torch.long) for s in seqs]
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    T = max_len if max_len is not None else int(lengths.max())
    padded = tensors[0].new_full((len(tensors), T), pad_value)
    for row, t in zip(padded, tensors):
        row[: t.numel()] = t
    return padded, lengths


CASES = [
    BlindCase(
        CHECK,
        "width_of_first_row",
        width_of_first_row,
        "mistake",
        "I made the batch as wide as the first sentence instead of the longest one, and cut the "
        "longer sentences to fit.",
    ),
    BlindCase(
        CHECK,
        "pad_on_the_left",
        pad_on_the_left,
        "mistake",
        "I put the padding before the tokens (left padding) instead of after them.",
    ),
    BlindCase(
        CHECK,
        "zeros_then_fill_float",
        zeros_then_fill_float,
        "mistake",
        "I started from torch.zeros(B, T) + pad_value, so the batch is float32, not long.",
    ),
    BlindCase(
        CHECK,
        "pad_value_never_used",
        pad_value_never_used,
        "mistake",
        "I filled the batch with zeros and never used pad_value, since <pad> is id 0 anyway.",
    ),
    BlindCase(
        CHECK,
        "time_first_like_nn_rnn",
        time_first_like_nn_rnn,
        "mistake",
        "I called nn.utils.rnn.pad_sequence without batch_first=True, so the batch is (T, B).",
    ),
    BlindCase(
        CHECK,
        "room_for_eos",
        room_for_eos,
        "mistake",
        "I made the batch one column wider than the longest sentence, to leave room for <eos>.",
    ),
    BlindCase(
        CHECK,
        "lengths_by_counting_non_pad",
        lengths_by_counting_non_pad,
        "mistake",
        "I computed the lengths afterwards by counting the entries that differ from pad_value, "
        "which undercounts a sentence that contains that id.",
    ),
    BlindCase(
        CHECK,
        "sorted_longest_first",
        sorted_longest_first,
        "mistake",
        "I sorted the sentences longest first (as pack_padded_sequence likes), so the rows no "
        "longer come in the order they were given.",
    ),
    BlindCase(
        CHECK,
        "extends_the_callers_lists",
        extends_the_callers_lists,
        "mistake",
        "I padded by calling .extend on the caller's own lists, so their input is changed in place.",
    ),
    BlindCase(
        CHECK,
        "returns_only_the_batch",
        returns_only_the_batch,
        "mistake",
        "I returned only the padded tensor and forgot to return the lengths.",
    ),
    BlindCase(
        CHECK,
        "lengths_as_python_list",
        lengths_as_python_list,
        "mistake",
        "I returned the lengths as a Python list instead of a (B,) long tensor.",
    ),
    BlindCase(
        CHECK,
        "with_pad_sequence",
        with_pad_sequence,
        "correct",
        "I used torch.nn.utils.rnn.pad_sequence with batch_first=True and padding_value.",
    ),
    BlindCase(
        CHECK,
        "with_list_padding",
        with_list_padding,
        "correct",
        "I padded the Python lists first and made one tensor from them at the end.",
    ),
    BlindCase(
        CHECK,
        "with_new_full_and_max_len",
        with_new_full_and_max_len,
        "correct",
        "I used new_full and a row-by-row copy, with an extra optional max_len argument.",
    ),
]
