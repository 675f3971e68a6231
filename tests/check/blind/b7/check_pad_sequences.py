"""Blind set B7, check_pad_sequences (chapter 1): padding lists of token ids into one batch."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_pad_sequences"


# ---------------------------------------------------------------- mistakes


def pad_width_of_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = len(seqs[0])  # the batch is as wide as its first sentence
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s[:T], dtype=torch.long)
    return padded, torch.tensor([min(len(s), T) for s in seqs], dtype=torch.long)


def pad_on_the_left(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, T - len(s) :] = torch.tensor(s, dtype=torch.long)  # padding first, then ids
    return padded, lengths


def pad_float_zeros(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.zeros(len(seqs), int(lengths.max())) + pad_value  # float32 batch
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_value_ignored(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.zeros(len(seqs), int(lengths.max()), dtype=torch.long)  # <pad> is 0 anyway
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_time_major(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, padding_value=pad_value)  # (T, B)
    return padded, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def pad_returns_lengths_first(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.full((len(seqs), int(lengths.max())), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return lengths, padded


def pad_lengths_as_list(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, list[int]]:
    lengths = [len(s) for s in seqs]
    T = max(lengths)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    return torch.tensor(rows, dtype=torch.long), lengths


def pad_lengths_counted_after(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    T = max(len(s) for s in seqs)
    rows = [list(s) + [pad_value] * (T - len(s)) for s in seqs]
    padded = torch.tensor(rows, dtype=torch.long)
    lengths = (padded != pad_value).sum(dim=1)  # count the real tokens back from the batch
    return padded, lengths


def pad_int32(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = torch.full((len(seqs), int(lengths.max())), pad_value, dtype=torch.int)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s)
    return padded, lengths


def pad_extra_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max()) + 1  # one spare column, so even the longest row ends with <pad>
    padded = torch.full((len(seqs), T), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


def pad_extends_input_lists(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    T = int(lengths.max())
    for s in seqs:
        s.extend([pad_value] * (T - len(s)))  # pads the caller's lists in place
    return torch.tensor(seqs, dtype=torch.long), lengths


def pad_lengths_column(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([[len(s)] for s in seqs], dtype=torch.long)  # (B, 1)
    padded = torch.full((len(seqs), int(lengths.max())), pad_value, dtype=torch.long)
    for b, s in enumerate(seqs):
        padded[b, : len(s)] = torch.tensor(s, dtype=torch.long)
    return padded, lengths


# ---------------------------------------------------------------- correct variants


def pad_with_torch_pad_sequence(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    tensors = [torch.as_tensor(s, dtype=torch.long) for s in seqs]
    padded = torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value)
    return padded, torch.tensor([len(t) for t in tensors])


def pad_python_lists(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    longest = max(map(len, seqs))
    rows = [[*s, *([pad_value] * (longest - len(s)))] for s in seqs]
    return torch.LongTensor(rows), torch.LongTensor([len(s) for s in seqs])


def pad_f_pad_stack(
    seqs: list[list[int]], pad_value: int = 0, max_len: int | None = None
) -> tuple[Tensor, Tensor]:
    """With an optional max_len that cuts, as the chapter's version has."""
    tensors = [torch.tensor(s, dtype=torch.long)[:max_len] for s in seqs]
    lengths = torch.tensor([t.numel() for t in tensors], dtype=torch.long)
    T = max_len if max_len is not None else int(lengths.max())
    rows = [F.pad(t, (0, T - t.numel()), value=pad_value) for t in tensors]
    return torch.stack(rows), lengths


def pad_masked_scatter(seqs: list[list[int]], pad_value: int = 0) -> tuple[Tensor, Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    real = torch.arange(int(lengths.max()))[None, :] < lengths[:, None]  # (B, T)
    flat = torch.tensor([tok for s in seqs for tok in s], dtype=torch.long)
    padded = torch.full(real.shape, pad_value, dtype=torch.long)
    padded[real] = flat  # row-major order of True cells = the ids in order
    return padded, lengths


CASES = [
    BlindCase(
        check=CHECK,
        name="width_of_first_row",
        code=pad_width_of_first,
        kind="mistake",
        what="I made the batch as wide as the first sentence, assuming it is the longest, and "
        "cut the longer ones to fit.",
    ),
    BlindCase(
        check=CHECK,
        name="padding_on_the_left",
        code=pad_on_the_left,
        kind="mistake",
        what="I put the padding before the tokens (right-aligned rows) instead of after them.",
    ),
    BlindCase(
        check=CHECK,
        name="float_batch",
        code=pad_float_zeros,
        kind="mistake",
        what="I built the batch with torch.zeros(...) + pad_value, so the ids come back as "
        "float32 instead of long.",
    ),
    BlindCase(
        check=CHECK,
        name="pad_value_ignored",
        code=pad_value_ignored,
        kind="mistake",
        what="I always padded with zeros (the id of <pad>) and never used the pad_value argument.",
    ),
    BlindCase(
        check=CHECK,
        name="time_major_pad_sequence",
        code=pad_time_major,
        kind="mistake",
        what="I used torch.nn.utils.rnn.pad_sequence without batch_first=True, so the batch is "
        "(T, B) instead of (B, T).",
    ),
    BlindCase(
        check=CHECK,
        name="returns_lengths_first",
        code=pad_returns_lengths_first,
        kind="mistake",
        what="I returned (lengths, padded) instead of (padded, lengths).",
    ),
    BlindCase(
        check=CHECK,
        name="lengths_python_list",
        code=pad_lengths_as_list,
        kind="mistake",
        what="I returned the lengths as a plain Python list instead of a (B,) long tensor.",
    ),
    BlindCase(
        check=CHECK,
        name="lengths_counted_from_batch",
        code=pad_lengths_counted_after,
        kind="mistake",
        what="I computed the lengths afterwards as (padded != pad_value).sum(1), which "
        "undercounts any sentence that contains the pad id as a real token.",
    ),
    BlindCase(
        check=CHECK,
        name="int32_batch",
        code=pad_int32,
        kind="mistake",
        what="I built the batch with torch.full(..., dtype=torch.int), so it is int32, not long.",
    ),
    BlindCase(
        check=CHECK,
        name="one_extra_column",
        code=pad_extra_column,
        kind="mistake",
        what="I made the batch one column wider than the longest sentence (max + 1), so every "
        "row ends with padding.",
    ),
    BlindCase(
        check=CHECK,
        name="extends_callers_lists",
        code=pad_extends_input_lists,
        kind="mistake",
        what="I padded the caller's lists in place with list.extend before stacking them; the "
        "lengths are taken first, but a second call on the same lists sees them all full "
        "length.",
    ),
    BlindCase(
        check=CHECK,
        name="lengths_shape_b1",
        code=pad_lengths_column,
        kind="mistake",
        what="I built the lengths from [[len(s)] for s in seqs], so they have shape (B, 1) "
        "instead of (B,).",
    ),
    BlindCase(
        check=CHECK,
        name="torch_pad_sequence_batch_first",
        code=pad_with_torch_pad_sequence,
        kind="correct",
        what="I used torch.nn.utils.rnn.pad_sequence(batch_first=True, padding_value=pad_value).",
    ),
    BlindCase(
        check=CHECK,
        name="python_lists_then_tensor",
        code=pad_python_lists,
        kind="correct",
        what="I padded the rows as Python lists (copies, not the caller's lists) and turned "
        "them into a LongTensor at the end.",
    ),
    BlindCase(
        check=CHECK,
        name="f_pad_and_stack_with_max_len",
        code=pad_f_pad_stack,
        kind="correct",
        what="I padded each row with F.pad(value=pad_value) and stacked them; I also accept an "
        "optional max_len (default None) like the chapter's version.",
    ),
    BlindCase(
        check=CHECK,
        name="boolean_index_scatter",
        code=pad_masked_scatter,
        kind="correct",
        what="I built the (B, T) mask of real cells first and wrote all ids at once with "
        "padded[mask] = the flattened ids.",
    ),
]
