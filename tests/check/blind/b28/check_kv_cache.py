"""Blind set B28, check_kv_cache (chapter 15): one decoder block's key/value cache as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


class CacheWrongDim:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # (B, H, T, Dh): along H by mistake
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReturnsNew:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return k, v  # the new keys and values

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReturnsPast:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
            return k, v
        past_k, past_v = self.k, self.v
        self.k = torch.cat([self.k, k], dim=2)
        self.v = torch.cat([self.v, v], dim=2)
        return past_k, past_v  # what was cached before this step

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheNoReorder:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        pass  # the keys and values of a hypothesis do not change


class CacheReorderTime:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(2, index)  # the positions axis
            self.v = self.v.index_select(2, index)


class CacheInversePermutation:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            new_k, new_v = torch.empty_like(self.k), torch.empty_like(self.v)
            new_k[index] = self.k  # row i goes to place index[i]
            new_v[index] = self.v
            self.k, self.v = new_k, new_v


class CachePrepends:
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


class CacheFixedBuffer:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:  # room for 16 positions, as the book's LayerCache starts with
            self.k = k.new_zeros(B, H, 16, Dh)
            self.v = v.new_zeros(B, H, 16, v.shape[-1])
        end = self.length + T
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheClassAttribute:
    keys: list[Tensor] = []  # the cached steps
    values: list[Tensor] = []

    def __init__(self) -> None:
        self.keys.clear()
        self.values.clear()

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        for i in range(len(self.keys)):
            self.keys[i] = self.keys[i][index]
            self.values[i] = self.values[i][index]


class CacheKeysAsValues:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, k], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderKeysOnly:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]


class CacheGrowWithoutCopy:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None
        self.length = 0

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        end = self.length + T
        if self.k is None or end > self.k.shape[2]:
            size = max(end, 4, 2 * (0 if self.k is None else self.k.shape[2]))
            self.k = k.new_zeros(B, H, size, Dh)  # a longer buffer
            self.v = v.new_zeros(B, H, size, v.shape[-1])
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheNeedsCapacity:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheReorderReturnsCopy:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> CacheReorderReturnsCopy:
        other = CacheReorderReturnsCopy()
        if self.k is not None:
            other.k, other.v = self.k[index], self.v[index]
        return other  # a reordered cache


# ---------------------------------------------------------------- correct variants


class CacheConcat:
    """torch.cat along the positions axis; index_select for the batch rows."""

    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat((self.k, k), dim=-2)
            self.v = torch.cat((self.v, v), dim=-2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(0, index)
            self.v = self.v.index_select(0, index)


class CacheListOfSteps:
    """A Python list of the steps' tensors, joined when asked."""

    def __init__(self) -> None:
        self.steps: list[tuple[Tensor, Tensor]] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.steps.append((k, v))
        keys = torch.cat([s[0] for s in self.steps], dim=2)
        values = torch.cat([s[1] for s in self.steps], dim=2)
        return keys, values

    def reorder(self, index: Tensor) -> None:
        self.steps = [(k[index], v[index]) for k, v in self.steps]


class CacheDoublingBuffer:
    """A buffer written in place, doubled when full, kept as (B, T, H, Dh) inside; the first
    size is an optional argument."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.length = 0
        self.k: Tensor | None = None  # (B, room, H, Dh)
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        k, v = k.transpose(1, 2), v.transpose(1, 2)  # (B, T_new, H, Dh)
        end = self.length + k.shape[1]
        if self.k is None or end > self.k.shape[1]:
            room = max(end, self.capacity, 0 if self.k is None else 2 * self.k.shape[1])
            new_k = k.new_zeros(k.shape[0], room, *k.shape[2:])
            new_v = v.new_zeros(v.shape[0], room, *v.shape[2:])
            if self.k is not None:
                new_k[:, : self.length] = self.k[:, : self.length]
                new_v[:, : self.length] = self.v[:, : self.length]
            self.k, self.v = new_k, new_v
        self.k[:, self.length : end] = k
        self.v[:, self.length : end] = v
        self.length = end
        return self.k[:, :end].transpose(1, 2), self.v[:, :end].transpose(1, 2)

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index].contiguous()
            self.v = self.v[index].contiguous()


CASES = [
    BlindCase(
        CHECK,
        "cat_along_heads",
        CacheWrongDim,
        "mistake",
        "I concatenated along dim=1, which is the heads axis of (B, H, T, Dh), not the positions.",
    ),
    BlindCase(
        CHECK,
        "returns_only_new",
        CacheReturnsNew,
        "mistake",
        "append_self stores everything but returns only the new keys and values.",
    ),
    BlindCase(
        CHECK,
        "returns_before_append",
        CacheReturnsPast,
        "mistake",
        "append_self returns what was cached before this step, without the new positions.",
    ),
    BlindCase(
        CHECK,
        "reorder_does_nothing",
        CacheNoReorder,
        "mistake",
        "I left reorder empty: the keys of a hypothesis never change, so I thought nothing "
        "needs to move.",
    ),
    BlindCase(
        CHECK,
        "reorder_positions_axis",
        CacheReorderTime,
        "mistake",
        "reorder uses index_select on dim 2, the positions, instead of dim 0, the batch rows.",
    ),
    BlindCase(
        CHECK,
        "reorder_inverse_permutation",
        CacheInversePermutation,
        "mistake",
        "reorder writes new[index] = old, sending row i to place index[i], instead of taking "
        "row index[i] into place i.",
    ),
    BlindCase(
        CHECK,
        "new_positions_first",
        CachePrepends,
        "mistake",
        "I wrote torch.cat([k, self.k]): the new positions go before the old ones.",
    ),
    BlindCase(
        CHECK,
        "fixed_buffer_of_16",
        CacheFixedBuffer,
        "mistake",
        "A buffer of 16 positions written in place that never grows, so more than 16 "
        "positions do not fit.",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        CacheClassAttribute,
        "mistake",
        "I declared keys: list = [] in the class body, so every block's cache shares one list.",
    ),
    BlindCase(
        CHECK,
        "keys_appended_to_values",
        CacheKeysAsValues,
        "mistake",
        "A copy-paste slip: I append k to the values too.",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder moves the keys but I forgot the values.",
    ),
    BlindCase(
        CHECK,
        "grow_without_copy",
        CacheGrowWithoutCopy,
        "mistake",
        "When the buffer is full I make one twice as long but forget to copy the old keys and "
        "values into it.",
    ),
    BlindCase(
        CHECK,
        "init_needs_capacity",
        CacheNeedsCapacity,
        "mistake",
        "My __init__ requires a capacity argument, so MyLayerCache() fails.",
    ),
    BlindCase(
        CHECK,
        "reorder_returns_new_cache",
        CacheReorderReturnsCopy,
        "mistake",
        "reorder returns a reordered copy and leaves the cache itself as it was.",
    ),
    BlindCase(
        CHECK,
        "concat_index_select",
        CacheConcat,
        "correct",
        "torch.cat along dim=-2 and index_select(0, index) to reorder.",
    ),
    BlindCase(
        CHECK,
        "list_of_steps",
        CacheListOfSteps,
        "correct",
        "A list of each step's tensors, concatenated on every call; reorder indexes each one.",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer_other_layout",
        CacheDoublingBuffer,
        "correct",
        "A buffer doubled when full, stored as (B, T, H, Dh) and transposed on the way out; an "
        "optional capacity argument.",
    ),
]
