"""Blind cases for check_banded_attention (chapter 20), written from the chapter's text only."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.attention import attention, masked_softmax

from .. import BlindCase

CHECK = "check_banded_attention"


def _offsets(T: int, device=None) -> Tensor:
    i = torch.arange(T, device=device)
    return i[:, None] - i[None, :]  # (T, T): t - s


def _full(
    q, k, v, allowed: Tensor, key_padding, *, scale=None, pad_on_queries=False, invert_padding=False
):
    mask = allowed  # (T, T)
    if key_padding is not None:
        kp = ~key_padding if invert_padding else key_padding
        mask = mask & (kp[:, None, :, None] if pad_on_queries else kp[:, None, None, :])
    return attention(q, k, v, mask, scale=scale)[0]


# ---- mistakes -------------------------------------------------------------------------------


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    allowed = (d.abs() < window) & ((d >= 0) if causal else True)
    return _full(q, k, v, allowed, key_padding)


def band_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    allowed = (d.abs() <= window + 1) & ((d >= 0) if causal else True)
    return _full(q, k, v, allowed, key_padding)


def range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    allowed = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        end = t if causal else t + window  # range(start, end) leaves `end` out
        for s in range(max(0, t - window), min(T, end)):
            allowed[t, s] = True
    return _full(q, k, v, allowed, key_padding)


def always_one_sided(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    allowed = (d >= 0) & (d <= window)  # only the past, whatever causal says
    return _full(q, k, v, allowed, key_padding)


def causal_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    return _full(q, k, v, d.abs() <= window, key_padding)


def causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    allowed = (d.abs() <= window) & ((d <= 0) if causal else True)  # s >= t
    return _full(q, k, v, allowed, key_padding)


def zero_keys_at_the_ends(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    w = window
    after = 0 if causal else w
    kp = F.pad(k, (0, 0, w, after))  # zero frames before and after
    vp = F.pad(v, (0, 0, w, after))
    k_win = kp.unfold(2, w + 1 + after, 1)  # (B, H, T, Dh, width)
    v_win = vp.unfold(2, w + 1 + after, 1)
    scores = torch.einsum("bhtd,bhtdw->bhtw", q, k_win) / math.sqrt(Dh)
    real = torch.ones(B, T, dtype=torch.bool) if key_padding is None else key_padding
    real = F.pad(real, (w, after), value=True).unfold(1, w + 1 + after, 1)  # the pads count as real
    weights = masked_softmax(scores, real[:, None])
    return torch.einsum("bhtw,bhtdw->bhtd", weights, v_win)


def indices_clamped(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    offs = torch.arange(-window, (0 if causal else window) + 1)
    idx = (torch.arange(T)[:, None] + offs).clamp(0, T - 1)  # (T, width)
    k_win, v_win = k[:, :, idx], v[:, :, idx]  # (B, H, T, width, D)
    scores = (q.unsqueeze(3) * k_win).sum(-1) / math.sqrt(Dh)
    mask = None if key_padding is None else key_padding[:, idx][:, None]
    weights = masked_softmax(scores, mask)
    return (weights.unsqueeze(-1) * v_win).sum(3)


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    d = _offsets(T) % T  # t - s modulo T
    allowed = (d <= window) | (False if causal else (d >= T - window))
    return _full(q, k, v, allowed, key_padding)


def padding_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    allowed = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _full(q, k, v, allowed, None)


def padding_inverted(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    allowed = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _full(q, k, v, allowed, key_padding, invert_padding=True)


def padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    allowed = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _full(q, k, v, allowed, key_padding, pad_on_queries=True)


def nan_for_lonely_frames(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    allowed = (d.abs() <= window) & ((d >= 0) if causal else True)
    mask = allowed if key_padding is None else allowed & key_padding[:, None, None, :]
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def not_scaled(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    allowed = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _full(q, k, v, allowed, key_padding, scale=1.0)


# ---- reader's slip ------------------------------------------------------------------------------


def returns_out_and_weights(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    mask = (d.abs() <= window) & ((d >= 0) if causal else True)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    return attention(q, k, v, mask)  # (out, weights), as attention returns


# ---- correct variants ---------------------------------------------------------------------------


def full_band_mask(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    T = q.shape[-2]
    d = _offsets(T, q.device)
    mask = (d <= window) & (d >= (0 if causal else -window))
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    return attention(q, k, v, mask)[0]


def loop_over_frames(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    B, H, T, Dh = q.shape
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        s = q[:, :, t : t + 1] @ k[:, :, lo:hi].transpose(-2, -1) / math.sqrt(Dh)  # (B, H, 1, n)
        m = None if key_padding is None else key_padding[:, None, None, lo:hi]
        w = masked_softmax(s, m)
        outs.append(w @ v[:, :, lo:hi])
    return torch.cat(outs, dim=2)


def gathered_windows(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
    scale: float | None = None,
) -> Tensor:
    B, H, T, Dh = q.shape
    scale = 1 / math.sqrt(Dh) if scale is None else scale
    offs = torch.arange(-window, (0 if causal else window) + 1)
    pos = torch.arange(T)[:, None] + offs  # (T, width): key frame of each slot
    inside = (pos >= 0) & (pos < T)
    idx = pos.clamp(0, T - 1)
    k_win, v_win = k[:, :, idx], v[:, :, idx]  # (B, H, T, width, D)
    scores = torch.einsum("bhtd,bhtwd->bhtw", q, k_win) * scale
    mask = inside[None, None]
    if key_padding is not None:
        mask = mask & key_padding[:, idx][:, None]
    weights = masked_softmax(scores, mask)
    return torch.einsum("bhtw,bhtwd->bhtd", weights, v_win)


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        band_too_narrow,
        "mistake",
        "I wrote |t - s| < window instead of <= window",
    ),
    BlindCase(
        CHECK,
        "band_too_wide",
        band_too_wide,
        "mistake",
        "I allowed |t - s| <= window + 1, counting the frame itself as one of the window",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        range_end_left_out,
        "mistake",
        "I built the band with range(t - window, t + window), which leaves out the last frame on the right (and the frame itself when causal)",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        always_one_sided,
        "mistake",
        "I only allowed 0 <= t - s <= window, as if causal were always True",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        causal_ignored,
        "mistake",
        "I built the two-sided band and never used causal",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        causal_looks_ahead,
        "mistake",
        "for causal I kept s >= t instead of s <= t, so frames look ahead",
    ),
    BlindCase(
        CHECK,
        "zero_keys_at_the_ends",
        zero_keys_at_the_ends,
        "mistake",
        "I padded k and v with zero frames and unfolded windows, but did not mask the pad frames, so they count as keys",
    ),
    BlindCase(
        CHECK,
        "indices_clamped",
        indices_clamped,
        "mistake",
        "I gathered each frame's window with indices clamped to 0 .. T-1, so frames at the ends see their edge frame several times",
    ),
    BlindCase(
        CHECK,
        "band_wraps_around",
        band_wraps_around,
        "mistake",
        "I measured t - s modulo T, so the band wraps around the ends of the sequence",
    ),
    BlindCase(CHECK, "padding_ignored", padding_ignored, "mistake", "I never used key_padding"),
    BlindCase(
        CHECK,
        "padding_inverted",
        padding_inverted,
        "mistake",
        "I used ~key_padding, reading True as padding",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        padding_on_queries,
        "mistake",
        "I laid key_padding on the query axis, key_padding[:, None, :, None], instead of the keys",
    ),
    BlindCase(
        CHECK,
        "nan_for_lonely_frames",
        nan_for_lonely_frames,
        "mistake",
        "I filled -inf and took a plain softmax, so a frame that sees no key gets NaN",
    ),
    BlindCase(CHECK, "not_scaled", not_scaled, "mistake", "I forgot the 1/sqrt(Dh) scale"),
    BlindCase(
        CHECK,
        "returns_out_and_weights",
        returns_out_and_weights,
        "mistake",
        "I returned what attention returns, the pair (out, weights), instead of the output alone",
    ),
    BlindCase(
        CHECK,
        "full_band_mask",
        full_band_mask,
        "correct",
        "I built the band from the (T, T) matrix of t - s and called the package's attention with it and the padding",
    ),
    BlindCase(
        CHECK,
        "loop_over_frames",
        loop_over_frames,
        "correct",
        "I looped over the frames, attending to each frame's slice of keys with the masked softmax",
    ),
    BlindCase(
        CHECK,
        "gathered_windows",
        gathered_windows,
        "correct",
        "I gathered a window of keys per frame with clamped indices and masked the slots that fall outside the sequence, with an optional scale",
    ),
]
