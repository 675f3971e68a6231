"""Blind set B24, check_kv_cache (chapter 15): one decoder block's key/value cache as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


# ---------------------------------------------------------------- mistakes


class CacheReturnsNewOnly:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=2)
            self.v = torch.cat([self.v, v], dim=2)
        return k, v  # the new positions' keys and values

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[index]
        self.v = self.v[index]


class CacheReorderNoop:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        pass  # the keys stay where they are; the decoder picks the rows it needs


class CacheReorderKeysOnly:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k.index_select(0, index)


class CacheReorderHeads:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[:, index]  # (B, H, T, Dh): I indexed the second axis
        self.v = self.v[:, index]


class CacheSharedDefaultLists:
    def __init__(self, keys: list = [], values: list = []) -> None:
        self.keys = keys
        self.values = values

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys[:] = [k[index] for k in self.keys]
        self.values[:] = [v[index] for v in self.values]


class CacheScatterReorder:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        new_k = torch.zeros_like(self.k)
        new_v = torch.zeros_like(self.v)
        new_k[index] = self.k  # row i goes to place index[i]
        new_v[index] = self.v
        self.k, self.v = new_k, new_v


class CacheBoolKeep:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        keep = torch.zeros(self.k.shape[0], dtype=torch.bool, device=self.k.device)
        keep[index] = True  # the rows to keep
        self.k, self.v = self.k[keep], self.v[keep]


class CacheReturnsKeysTwice:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
        return self.k, self.k

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheNewFirst:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([k, self.k], dim=2)  # newest first
        self.v = v if self.v is None else torch.cat([v, self.v], dim=2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheGrowWithoutCopy:
    """A buffer that doubles when full, as in the chapter, but the old keys are not copied."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            size = max(end, self.capacity, 2 * (0 if self.k is None else self.k.shape[2]))
            B, H, _, Dh = k.shape
            self.k = k.new_zeros(B, H, size, Dh)
            self.v = v.new_zeros(B, H, size, v.shape[-1])
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        self.k = self.k.index_select(0, index)
        self.v = self.v.index_select(0, index)


class CacheConcatHeads:
    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k = k if self.k is None else torch.cat([self.k, k], dim=1)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=1)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        self.k, self.v = self.k[index], self.v[index]


class CacheBufferLengthReset:
    """A buffer written in place; reorder builds a new buffer and forgets how much was filled."""

    def __init__(self) -> None:
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            old_k, old_v = self.k, self.v
            size = max(16, end, 2 * (0 if old_k is None else old_k.shape[2]))
            self.k = k.new_zeros(k.shape[0], k.shape[1], size, k.shape[3])
            self.v = v.new_zeros(v.shape[0], v.shape[1], size, v.shape[3])
            if old_k is not None:
                self.k[:, :, : self.length] = old_k[:, :, : self.length]
                self.v[:, :, : self.length] = old_v[:, :, : self.length]
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        self.k = self.k[index]
        self.v = self.v[index]
        self.length = 0  # a fresh buffer


# ---------------------------------------------------------------- correct variants


class CacheConcat:
    """torch.cat on the time axis; reorder by index_select."""

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


class CacheStepList:
    """One tensor per step in a list, concatenated when asked; reorder every piece."""

    def __init__(self) -> None:
        self.ks: list[Tensor] = []
        self.vs: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.ks.append(k)
        self.vs.append(v)
        return torch.cat(self.ks, dim=2), torch.cat(self.vs, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.ks = [k[index] for k in self.ks]
        self.vs = [v[index] for v in self.vs]


class CacheDoublingBuffer:
    """A buffer written in place that doubles when full, as the chapter describes."""

    def __init__(self, capacity: int = 2) -> None:
        self.capacity = capacity
        self.length = 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.k is None or end > self.k.shape[2]:
            size = max(end, self.capacity, 2 * (0 if self.k is None else self.k.shape[2]))
            new_k = k.new_empty(k.shape[0], k.shape[1], size, k.shape[3])
            new_v = v.new_empty(v.shape[0], v.shape[1], size, v.shape[3])
            if self.k is not None:
                new_k[:, :, : self.length] = self.k[:, :, : self.length]
                new_v[:, :, : self.length] = self.v[:, :, : self.length]
            self.k, self.v = new_k, new_v
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]
            self.v = self.v[index]


class CacheTimeMajor:
    """Stored time-major, (T, B, H, Dh), and permuted back when returned."""

    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        k_t, v_t = k.permute(2, 0, 1, 3), v.permute(2, 0, 1, 3)  # (T_new, B, H, Dh)
        self.k = k_t if self.k is None else torch.cat([self.k, k_t])
        self.v = v_t if self.v is None else torch.cat([self.v, v_t])
        return self.k.permute(1, 2, 0, 3), self.v.permute(1, 2, 0, 3)

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[:, index].contiguous()
            self.v = self.v[:, index].contiguous()


CASES = [
    BlindCase(
        CHECK,
        "returns_new_positions_only",
        CacheReturnsNewOnly,
        "mistake",
        "append_self stores everything but returns only the k, v it was given.",
    ),
    BlindCase(
        CHECK,
        "reorder_does_nothing",
        CacheReorderNoop,
        "mistake",
        "I left reorder empty, thinking the decoder picks the rows.",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder moves the keys and forgets the values.",
    ),
    BlindCase(
        CHECK,
        "reorder_on_heads_axis",
        CacheReorderHeads,
        "mistake",
        "reorder indexes the second axis, self.k[:, index], instead of the batch axis.",
    ),
    BlindCase(
        CHECK,
        "shared_default_lists",
        CacheSharedDefaultLists,
        "mistake",
        "__init__(self, keys=[], values=[]): every cache, of every block, shares one list.",
    ),
    BlindCase(
        CHECK,
        "reorder_scatters",
        CacheScatterReorder,
        "mistake",
        "reorder writes row i to place index[i] (a scatter) instead of taking row index[i].",
    ),
    BlindCase(
        CHECK,
        "reorder_with_bool_mask",
        CacheBoolKeep,
        "mistake",
        "reorder turns index into a boolean keep-mask, so repeated rows and the order are lost.",
    ),
    BlindCase(
        CHECK,
        "keys_returned_as_values",
        CacheReturnsKeysTwice,
        "mistake",
        "Typo: append_self returns self.k, self.k.",
    ),
    BlindCase(
        CHECK,
        "newest_first",
        CacheNewFirst,
        "mistake",
        "I put the new keys in front of the old ones: cat([k, self.k]).",
    ),
    BlindCase(
        CHECK,
        "buffer_grows_without_copy",
        CacheGrowWithoutCopy,
        "mistake",
        "A buffer that doubles when full, but the new one is zeros: the old keys are not copied.",
    ),
    BlindCase(
        CHECK,
        "concat_on_heads_axis",
        CacheConcatHeads,
        "mistake",
        "torch.cat(..., dim=1): I appended along the heads, not the positions.",
    ),
    BlindCase(
        CHECK,
        "buffer_length_reset_on_reorder",
        CacheBufferLengthReset,
        "mistake",
        "A buffer written in place; reorder sets length back to 0, so the next step writes over "
        "position 0.",
    ),
    BlindCase(
        CHECK,
        "concat_index_select",
        CacheConcat,
        "correct",
        "torch.cat on dim -2, reorder with index_select.",
    ),
    BlindCase(
        CHECK,
        "list_of_steps",
        CacheStepList,
        "correct",
        "A list with one tensor per step, concatenated on return; reorder maps over the list.",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        CacheDoublingBuffer,
        "correct",
        "A preallocated buffer written in place that doubles when full (capacity 2).",
    ),
    BlindCase(
        CHECK,
        "time_major_storage",
        CacheTimeMajor,
        "correct",
        "Stored as (T, B, H, Dh), permuted back on return; reorder indexes axis 1.",
    ),
]
