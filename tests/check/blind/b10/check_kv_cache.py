"""Blind set B10, check_kv_cache (chapter 15): one decoder block's key/value cache as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_kv_cache"


class _Concat:
    """The plain version: one tensor per side, grown with torch.cat."""

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


# ---------------------------------------------------------------- mistakes


class CacheReorderNoop(_Concat):
    def reorder(self, index: Tensor) -> None:
        pass  # "the rows stay where they are"


class CacheReplaces:
    def __init__(self) -> None:
        self.k = self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.k, self.v = k, v  # overwritten: only the newest positions are kept
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CachePrepends(_Concat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([k, self.k], dim=2)  # the new positions in front
            self.v = torch.cat([v, self.v], dim=2)
        return self.k, self.v


class CacheCatHeads(_Concat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None:
            self.k, self.v = k, v
        else:
            self.k = torch.cat([self.k, k], dim=1)  # dim=1 thinking (B, T, ...)
            self.v = torch.cat([self.v, v], dim=1)
        return self.k, self.v


class CacheReorderKeysOnly(_Concat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k[index]  # forgot the values


class CacheReorderDim1(_Concat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = self.k.index_select(1, index)
            self.v = self.v.index_select(1, index)


class CacheReorderScatter(_Concat):
    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            k, v = torch.empty_like(self.k), torch.empty_like(self.v)
            k[index] = self.k  # row i goes to place index[i]
            v[index] = self.v
            self.k, self.v = k, v


class CacheReturnsNewOnly(_Concat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        super().append_self(k, v)
        return k, v  # stored everything, returned only the new positions


class CacheReturnsKeysTwice(_Concat):
    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        keys, _ = super().append_self(k, v)
        return keys, keys


class CacheClassLevelList:
    keys: list = []  # class attributes: every instance shares these lists
    values: list = []

    def __init__(self) -> None:
        pass

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index: Tensor) -> None:
        self.keys[:] = [k[index] for k in self.keys]
        self.values[:] = [v[index] for v in self.values]


class CacheChunksLastOnly:
    def __init__(self) -> None:
        self.ks: list[Tensor] = []
        self.vs: list[Tensor] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.ks.append(k)
        self.vs.append(v)
        return torch.cat(self.ks, dim=2), torch.cat(self.vs, dim=2)

    def reorder(self, index: Tensor) -> None:
        if self.ks:  # only the chunk of the latest step is reordered
            self.ks[-1] = self.ks[-1][index]
            self.vs[-1] = self.vs[-1][index]


class CacheWholeBuffer:
    def __init__(self, capacity: int = 16) -> None:
        self.capacity, self.length = capacity, 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        if self.k is None:
            self.k = k.new_zeros(B, H, self.capacity, Dh)
            self.v = v.new_zeros(B, H, self.capacity, v.shape[-1])
        self.k[:, :, self.length : self.length + T] = k
        self.v[:, :, self.length : self.length + T] = v
        self.length += T
        return self.k, self.v  # the whole buffer, unfilled positions included

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


class CacheGrowWithoutCopy:
    def __init__(self, capacity: int = 4) -> None:
        self.capacity, self.length = capacity, 0
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        B, H, T, Dh = k.shape
        end = self.length + T
        if self.k is None or end > self.k.shape[2]:
            size = max(end, 2 * (0 if self.k is None else self.k.shape[2]), self.capacity)
            self.k = k.new_zeros(B, H, size, Dh)  # a bigger buffer, but the old keys not copied
            self.v = v.new_zeros(B, H, size, v.shape[-1])
        self.k[:, :, self.length : end] = k
        self.v[:, :, self.length : end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k, self.v = self.k[index], self.v[index]


# ---------------------------------------------------------------- correct variants


class CacheChunkList:
    """Keeps a list of per-step chunks; concatenates them on each call; reorders each chunk."""

    def __init__(self) -> None:
        self.chunks: list[tuple[Tensor, Tensor]] = []

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        self.chunks.append((k, v))
        keys = torch.cat([c[0] for c in self.chunks], dim=-2)
        values = torch.cat([c[1] for c in self.chunks], dim=-2)
        return keys, values

    def reorder(self, index: Tensor) -> None:
        self.chunks = [(k[index], v[index]) for k, v in self.chunks]

    def __len__(self) -> int:
        return sum(k.shape[2] for k, _ in self.chunks)


class CacheTimeMajor:
    """Stores (B, T, H, Dh) internally and transposes on the way in and out."""

    def __init__(self) -> None:
        self.k = None
        self.v = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        k_t, v_t = k.transpose(1, 2), v.transpose(1, 2)  # (B, T_new, H, Dh)
        self.k = k_t if self.k is None else torch.cat((self.k, k_t), dim=1)
        self.v = v_t if self.v is None else torch.cat((self.v, v_t), dim=1)
        return self.k.transpose(1, 2), self.v.transpose(1, 2)

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:
            self.k = torch.index_select(self.k, 0, index)
            self.v = torch.index_select(self.v, 0, index)


class CacheDoublingBuffer:
    """A buffer that doubles when full (written in place), with cross_k/cross_v slots and a
    ``cross`` flag on reorder, as the book's cache has; capacity 2 to start."""

    def __init__(self, capacity: int = 2) -> None:
        self.capacity = capacity
        self.length = 0
        self.buf_k: Tensor | None = None
        self.buf_v: Tensor | None = None
        self.cross_k: Tensor | None = None
        self.cross_v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        end = self.length + k.shape[2]
        if self.buf_k is None or end > self.buf_k.shape[2]:
            size = max(end, self.capacity if self.buf_k is None else 2 * self.buf_k.shape[2])
            new_k = k.new_zeros(*k.shape[:2], size, k.shape[3])
            new_v = v.new_zeros(*v.shape[:2], size, v.shape[3])
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
            self.buf_k = self.buf_k[index]
            self.buf_v = self.buf_v[index]
        if cross and self.cross_k is not None:
            self.cross_k = self.cross_k[index]
            self.cross_v = self.cross_v[index]


CASES = [
    BlindCase(
        CHECK,
        "reorder_noop",
        CacheReorderNoop,
        "mistake",
        "My reorder does nothing: I thought the rows could stay where they are.",
    ),
    BlindCase(
        CHECK,
        "replaces_instead_of_appending",
        CacheReplaces,
        "mistake",
        "append_self overwrites the stored keys and values with the new ones, so only the "
        "newest positions are kept.",
    ),
    BlindCase(
        CHECK,
        "prepends_new_positions",
        CachePrepends,
        "mistake",
        "I concatenated [new, old] instead of [old, new], so the positions are in reverse "
        "order of steps.",
    ),
    BlindCase(
        CHECK,
        "cat_along_heads",
        CacheCatHeads,
        "mistake",
        "I concatenated along dim=1, thinking of (B, T, D) tensors, which is the head axis of "
        "(B, H, T, Dh).",
    ),
    BlindCase(
        CHECK,
        "reorder_keys_only",
        CacheReorderKeysOnly,
        "mistake",
        "reorder selects the rows of the keys and forgets the values.",
    ),
    BlindCase(
        CHECK,
        "reorder_along_heads",
        CacheReorderDim1,
        "mistake",
        "reorder uses index_select(1, index), the head axis instead of the batch axis.",
    ),
    BlindCase(
        CHECK,
        "reorder_scatter",
        CacheReorderScatter,
        "mistake",
        "I wrote new[index] = old, sending row i to place index[i], instead of new = old[index].",
    ),
    BlindCase(
        CHECK,
        "returns_new_only",
        CacheReturnsNewOnly,
        "mistake",
        "append_self stores everything but returns only the keys and values it was given.",
    ),
    BlindCase(
        CHECK,
        "returns_keys_twice",
        CacheReturnsKeysTwice,
        "mistake",
        "append_self returns the keys twice, (keys, keys), instead of (keys, values).",
    ),
    BlindCase(
        CHECK,
        "class_level_lists",
        CacheClassLevelList,
        "mistake",
        "I declared the lists as class attributes (keys: list = []), so every layer's cache "
        "shares one list.",
    ),
    BlindCase(
        CHECK,
        "reorder_last_chunk_only",
        CacheChunksLastOnly,
        "mistake",
        "I keep one chunk per step and my reorder only reorders the newest chunk.",
    ),
    BlindCase(
        CHECK,
        "returns_whole_buffer",
        CacheWholeBuffer,
        "mistake",
        "With a preallocated buffer, append_self returns the whole buffer, unfilled (zero) "
        "positions included.",
    ),
    BlindCase(
        CHECK,
        "grow_without_copy",
        CacheGrowWithoutCopy,
        "mistake",
        "When the buffer is full I allocate a twice larger one but forget to copy the old keys "
        "and values into it.",
    ),
    BlindCase(
        CHECK,
        "chunk_list",
        CacheChunkList,
        "correct",
        "A list of per-step chunks, concatenated on every call, each chunk reordered; "
        "an extra __len__.",
    ),
    BlindCase(
        CHECK,
        "time_major_storage",
        CacheTimeMajor,
        "correct",
        "Stores (B, T, H, Dh) internally and transposes on the way in and out.",
    ),
    BlindCase(
        CHECK,
        "doubling_buffer",
        CacheDoublingBuffer,
        "correct",
        "An in-place buffer that doubles when full (starting at 2 positions), with cross_k / "
        "cross_v slots and reorder(index, cross=True).",
    ),
]
