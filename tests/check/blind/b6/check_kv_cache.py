"""Blind set B6, check_kv_cache (chapter 15): one decoder block's key/value cache as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


class CatOnHeadAxis:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # dim 1: "the sequence axis", as in (B, T, D)
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class ReturnsOnlyNew:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return k, v  # the inputs, not everything so far

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class ReorderResultDropped:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k.index_select(0, index)  # not in place: the result is thrown away
            self.v.index_select(0, index)


class ReorderTimeAxis:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(2, index)  # the axis I concatenate on
            self.v = self.v.index_select(2, index)


class NewPositionsFirst:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([k, self.k], dim=2)  # newest first
        self.v = v if self.v is None else torch.cat([v, self.v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class SharedClassLists:
    keys: list[Tensor] = []  # class attributes: one list for every cache
    values: list[Tensor] = []

    def __init__(self) -> None:
        pass

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys[:] = [k[index] for k in self.keys]
        self.values[:] = [v[index] for v in self.values]


class ReorderKeysOnly:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]  # the values stay where they were


class ReorderScatter:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            new_k = self.k.new_zeros((len(index), *self.k.shape[1:]))
            new_v = self.v.new_zeros((len(index), *self.v.shape[1:]))
            n = min(len(index), self.k.shape[0])
            # "old row i goes to place index[i]": the inverse of what is asked
            new_k[index[:n]] = self.k[:n]
            new_v[index[:n]] = self.v[:n]
            self.k, self.v = new_k, new_v


class ReorderAsKeepMask:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            keep = torch.zeros(self.k.shape[0], dtype=torch.bool, device=self.k.device)
            keep[index] = True  # the rows that stay, in their old order, each once
            self.k, self.v = self.k[keep], self.v[keep]


class ConcatenationNotStored:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
            return k, v
        return torch.cat([self.k, k], dim=2), torch.cat([self.v, v], dim=2)  # never saved

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


# ---------------------------------------------------------------- correct variants


class ChunkLists:
    """A list of the appended chunks, concatenated when asked for."""

    def __init__(self) -> None:
        self.k_chunks: list[Tensor] = []
        self.v_chunks: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k_chunks.append(k)
        self.v_chunks.append(v)
        return torch.cat(self.k_chunks, dim=2), torch.cat(self.v_chunks, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.k_chunks = [c.index_select(0, index) for c in self.k_chunks]
        self.v_chunks = [c.index_select(0, index) for c in self.v_chunks]


class GrowingBuffer:
    """A preallocated buffer doubled when full; the filled part returned as a view."""

    def __init__(self) -> None:
        self.buf_k: Tensor | None = None
        self.buf_v: Tensor | None = None
        self.n = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.n + k.shape[2]
        if self.buf_k is None or end > self.buf_k.shape[2]:
            size = max(8, end, 0 if self.buf_k is None else 2 * self.buf_k.shape[2])
            B, H, _, Dh = k.shape
            new_k = k.new_zeros(B, H, size, Dh)
            new_v = v.new_zeros(B, H, size, v.shape[-1])
            if self.buf_k is not None:
                new_k[:, :, : self.n] = self.buf_k[:, :, : self.n]
                new_v[:, :, : self.n] = self.buf_v[:, :, : self.n]
            self.buf_k, self.buf_v = new_k, new_v
        self.buf_k[:, :, self.n : end] = k
        self.buf_v[:, :, self.n : end] = v
        self.n = end
        return self.buf_k[:, :, :end], self.buf_v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.buf_k is not None:
            self.buf_k = self.buf_k[index]  # advanced indexing copies
            self.buf_v = self.buf_v[index]


class ConcatIndexSelect:
    """torch.cat on the time axis; reorder with index_select on the batch axis."""

    def __init__(self) -> None:
        self.state: tuple[Tensor, Tensor] | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.state is not None:
            k = torch.cat((self.state[0], k), dim=-2)
            v = torch.cat((self.state[1], v), dim=-2)
        self.state = (k, v)
        return k, v

    def reorder(self, index: Tensor) -> None:
        if self.state is not None:
            self.state = tuple(t.index_select(0, index.to(t.device)) for t in self.state)


CASES = [
    BlindCase(
        CHECK,
        "cat_on_head_axis",
        CatOnHeadAxis,
        "mistake",
        "I concatenate the new keys and values on dim=1, which is the head axis of "
        "(B, H, T, Dh), not the time axis.",
    ),
    BlindCase(
        CHECK,
        "returns_only_new",
        ReturnsOnlyNew,
        "mistake",
        "append_self stores the concatenation but returns only the new k and v it was given.",
    ),
    BlindCase(
        CHECK,
        "reorder_result_dropped",
        ReorderResultDropped,
        "mistake",
        "In reorder I call self.k.index_select(0, index) without assigning the result, so the "
        "cache is never reordered.",
    ),
    BlindCase(
        CHECK,
        "reorder_on_time_axis",
        ReorderTimeAxis,
        "mistake",
        "reorder selects along dim 2, the positions, instead of the batch rows.",
    ),
    BlindCase(
        CHECK,
        "new_positions_first",
        NewPositionsFirst,
        "mistake",
        "I concatenate [new, past] instead of [past, new], so the positions are in reverse "
        "order of arrival.",
    ),
    BlindCase(
        CHECK,
        "shared_class_lists",
        SharedClassLists,
        "mistake",
        "The lists of keys and values are class attributes, so every cache (every layer, "
        "every new decode) appends to the same two lists.",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        ReorderKeysOnly,
        "mistake",
        "reorder reorders the keys but I forgot the values.",
    ),
    BlindCase(
        CHECK,
        "reorder_scatter_inverse",
        ReorderScatter,
        "mistake",
        "I read reorder as 'old row i moves to place index[i]' and scattered the rows there, "
        "the inverse of keeping rows index; with repeated rows some places stay zero.",
    ),
    BlindCase(
        CHECK,
        "reorder_as_keep_mask",
        ReorderAsKeepMask,
        "mistake",
        "reorder turns index into a boolean mask of rows to keep, which works for dropping "
        "finished rows but loses the order and the repeats beam search needs.",
    ),
    BlindCase(
        CHECK,
        "concatenation_not_stored",
        ConcatenationNotStored,
        "mistake",
        "After the first call append_self returns torch.cat(past, new) but never stores it, "
        "so the cache only ever holds the first position.",
    ),
    BlindCase(
        CHECK,
        "chunk_lists",
        ChunkLists,
        "correct",
        "A list of the appended chunks, concatenated on the time axis at every call; reorder "
        "applies index_select to every chunk.",
    ),
    BlindCase(
        CHECK,
        "growing_buffer",
        GrowingBuffer,
        "correct",
        "A preallocated buffer that doubles when full, written in place and returned as a "
        "view of the filled part; reorder by advanced indexing.",
    ),
    BlindCase(
        CHECK,
        "cat_index_select",
        ConcatIndexSelect,
        "correct",
        "The keys and values kept as one tuple, concatenated on dim -2, reordered with "
        "index_select on dim 0.",
    ),
]
