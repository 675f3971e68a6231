"""Blind cases for check_kv_cache (chapter 15), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


class ReturnsOnlyNew:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return k, v  # the new positions' keys and values, not the whole cache

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class ConcatOnHeads:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=1)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class ReorderDoesNothing:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        pass  # I thought each row keeps its own history


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
            self.k = self.k.index_select(0, index)


class ReorderAlongTime:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(2, index)
            self.v = self.v.index_select(2, index)


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
            keep = torch.isin(torch.arange(self.k.shape[0], device=index.device), index)
            self.k, self.v = self.k[keep], self.v[keep]  # "keep the rows index"


class NewPositionsFirst:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([k, self.k], dim=2)
        self.v = v if self.v is None else torch.cat([v, self.v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class ClassLevelLists:
    keys: list[Tensor] = []  # written once at class level: every instance shares these lists
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


class MethodNamedAppend:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


# ---------------------------------------------------------------- correct variants


class ConcatCache:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=2)
            self.v = torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(0, index)
            self.v = self.v.index_select(0, index)


class ListOfSteps:
    def __init__(self) -> None:
        self.steps: list[tuple[Tensor, Tensor]] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.steps.append((k, v))
        keys = torch.cat([step[0] for step in self.steps], dim=-2)
        values = torch.cat([step[1] for step in self.steps], dim=-2)
        return keys, values

    def reorder(self, index: Tensor) -> None:
        self.steps = [(k[index], v[index]) for k, v in self.steps]


class DoublingBuffer:
    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.length = 0
        self.buf_k: Tensor | None = None
        self.buf_v: Tensor | None = None
        self.cross_k: Tensor | None = None  # the projected memory, as the book's cache has
        self.cross_v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.buf_k is None or end > self.buf_k.shape[2]:
            size = max(end, self.capacity, 2 * (0 if self.buf_k is None else self.buf_k.shape[2]))
            B, H, _, Dh = k.shape
            new_k = k.new_zeros(B, H, size, Dh)
            new_v = v.new_zeros(B, H, size, v.shape[-1])
            if self.buf_k is not None:
                new_k[:, :, : self.length] = self.buf_k[:, :, : self.length]
                new_v[:, :, : self.length] = self.buf_v[:, :, : self.length]
            self.buf_k, self.buf_v = new_k, new_v
        self.buf_k[:, :, self.length : end] = k
        self.buf_v[:, :, self.length : end] = v
        self.length = end
        return self.buf_k[:, :, :end], self.buf_v[:, :, :end]

    def reorder(self, index: Tensor, cross: bool = True) -> None:
        if self.buf_k is not None:
            self.buf_k, self.buf_v = self.buf_k[index], self.buf_v[index]
        if cross and self.cross_k is not None:
            self.cross_k, self.cross_v = self.cross_k[index], self.cross_v[index]


CASES = [
    BlindCase(
        CHECK,
        "returns_only_new",
        ReturnsOnlyNew,
        "mistake",
        "append_self stores the keys and values but returns only the new positions' k and v, "
        "not those of every position so far",
    ),
    BlindCase(
        CHECK,
        "concat_on_heads",
        ConcatOnHeads,
        "mistake",
        "I concatenated the new keys and values along dim 1 (the heads) instead of dim 2 "
        "(the positions)",
    ),
    BlindCase(
        CHECK,
        "reorder_does_nothing",
        ReorderDoesNothing,
        "mistake",
        "my reorder does nothing: I thought each row keeps its own history",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        ReorderKeysOnly,
        "mistake",
        "reorder reorders the keys but I forgot the values",
    ),
    BlindCase(
        CHECK,
        "reorder_along_time",
        ReorderAlongTime,
        "mistake",
        "reorder selects index along dim 2 (the positions) instead of dim 0 (the batch rows)",
    ),
    BlindCase(
        CHECK,
        "reorder_as_keep_mask",
        ReorderAsKeepMask,
        "mistake",
        "reorder keeps the rows that appear in index, as a boolean mask: a repeated row is "
        "kept once and the rows stay in their old order",
    ),
    BlindCase(
        CHECK,
        "new_positions_first",
        NewPositionsFirst,
        "mistake",
        "I concatenated the new keys and values in front of the cached ones (torch.cat([k, "
        "self.k])), so the positions are in the wrong order",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        ClassLevelLists,
        "mistake",
        "I declared the lists of keys and values at class level, so every cache instance "
        "(every decoder block) appends to the same lists",
    ),
    BlindCase(
        CHECK,
        "method_named_append",
        MethodNamedAppend,
        "mistake",
        "I named the method append instead of append_self",
    ),
    BlindCase(
        CHECK,
        "concat_cache",
        ConcatCache,
        "correct",
        "torch.cat along the positions on append, index_select on dim 0 on reorder",
    ),
    BlindCase(
        CHECK,
        "list_of_steps",
        ListOfSteps,
        "correct",
        "a list of each step's (k, v), concatenated when read, every entry indexed on reorder",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        DoublingBuffer,
        "correct",
        "a preallocated buffer written in place and doubled when full, with cross_k/cross_v "
        "attributes and an extra reorder argument cross=True",
    ),
]
