"""Blind set B26, check_banded_attention (chapter 20): banded local attention as readers write
it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _band(T: int, window: int, causal: bool, device=None) -> Tensor:
    i = torch.arange(T, device=device)
    diff = i[:, None] - i[None, :]  # t - s
    band = diff.abs() <= window
    return band & (diff >= 0) if causal else band


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: float | None = None) -> Tensor:
    """A right masked attention: a frame that sees no key gets zeros."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale
    scores = scores.masked_fill(~mask, float("-inf"))
    any_key = mask.any(-1, keepdim=True)
    weights = scores.masked_fill(~any_key, 0.0).softmax(-1).masked_fill(~any_key, 0.0)
    return weights @ v


def _with_padding(mask: Tensor, key_padding: Tensor | None) -> Tensor:
    return mask if key_padding is None else mask & key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_strict(q, k, v, window, causal=False, key_padding=None):
    i = torch.arange(q.shape[2])
    diff = i[:, None] - i[None, :]
    band = diff.abs() < window  # within the window
    if causal:
        band &= diff >= 0
    return _attend(q, k, v, _with_padding(band, key_padding))


def band_causal_upper(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool).tril(window).triu(-window)
    if causal:
        band = band.triu()  # keep one side of the diagonal
    return _attend(q, k, v, _with_padding(band, key_padding))


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    return _attend(q, k, v, _with_padding(_band(q.shape[2], window, False), key_padding))


def band_half_window(q, k, v, window, causal=False, key_padding=None):
    half = window // 2  # the window is centred on the frame
    return _attend(q, k, v, _with_padding(_band(q.shape[2], half, causal), key_padding))


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    return _attend(q, k, v, _band(q.shape[2], window, causal))


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    mask = _band(q.shape[2], window, causal)
    if key_padding is not None:
        mask = mask & key_padding[:, None, :, None]
    return _attend(q, k, v, mask)


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    mask = _band(q.shape[2], window, causal)
    if key_padding is not None:
        mask = mask & ~key_padding[:, None, None, :]  # True marks the padding to hide
    return _attend(q, k, v, mask)


def band_padding_three_dims(q, k, v, window, causal=False, key_padding=None):
    mask = _band(q.shape[2], window, causal)
    if key_padding is not None:
        mask = mask & key_padding[:, None, :]  # (B, 1, T): broadcast over the queries
    return _attend(q, k, v, mask)


def band_nan_rows(q, k, v, window, causal=False, key_padding=None):
    mask = _with_padding(_band(q.shape[2], window, causal), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~mask, float("-inf")).softmax(-1) @ v


def band_fill_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    mask = _with_padding(_band(q.shape[2], window, causal), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~mask, -1e9).softmax(-1) @ v


def band_scale_dv(q, k, v, window, causal=False, key_padding=None):
    mask = _with_padding(_band(q.shape[2], window, causal), key_padding)
    return _attend(q, k, v, mask, scale=1.0 / math.sqrt(v.shape[-1]))


def band_returns_weights(q, k, v, window, causal=False, key_padding=None):
    mask = _with_padding(_band(q.shape[2], window, causal), key_padding)
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~mask, float("-inf"))
    any_key = mask.any(-1, keepdim=True)
    weights = scores.masked_fill(~any_key, 0.0).softmax(-1).masked_fill(~any_key, 0.0)
    return weights @ v, weights  # as attention() does


def band_unfold_zero_keys(q, k, v, window, causal=False, key_padding=None):
    """Sliding windows cut with unfold from zero-padded keys; only the band inside is masked."""
    B, H, T, D = q.shape
    after = 0 if causal else window
    width = window + 1 + after
    kw = F.pad(k, (0, 0, window, after)).unfold(2, width, 1)  # (B, H, T, D, width)
    vw = F.pad(v, (0, 0, window, after)).unfold(2, width, 1)
    scores = torch.einsum("bhtd,bhtdw->bhtw", q, kw) / math.sqrt(D)
    if key_padding is not None:
        real = F.pad(key_padding, (window, after), value=True).unfold(1, width, 1)  # (B, T, w)
        scores = scores.masked_fill(~real[:, None], float("-inf"))
    weights = torch.nan_to_num(scores.softmax(-1))
    return torch.einsum("bhtw,bhtdw->bhtd", weights, vw)


def band_blocks_own_and_previous(q, k, v, window, causal=False, key_padding=None):
    """Blocks of `window` frames; each block's queries see its own block and the one before."""
    B, H, T, D = q.shape
    b = max(window, 1)
    out = torch.zeros(*q.shape[:3], v.shape[-1], dtype=v.dtype)
    full = _with_padding(_band(T, window, causal), key_padding)
    for start in range(0, T, b):
        end = min(start + b, T)
        lo = max(start - b, 0)  # the keys of the block before and of this block
        mask = full[..., start:end, lo:end]
        out[:, :, start:end] = _attend(q[:, :, start:end], k[:, :, lo:end], v[:, :, lo:end], mask)
    return out


# ---------------------------------------------------------------- correct variants


def band_where_full(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """Full attention under the band mask built with triu/tril, torch.where for the fill."""
    T = q.size(-2)
    allowed = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(-window)
    allowed = allowed.tril(0 if causal else window)
    if key_padding is not None:
        allowed = allowed & key_padding.unsqueeze(1).unsqueeze(2)  # (B, 1, 1, T)
    scores = torch.matmul(q, k.transpose(-1, -2)) * q.size(-1) ** -0.5
    scores = torch.where(allowed, scores, torch.full_like(scores, float("-inf")))
    visible = allowed.any(dim=-1, keepdim=True)
    scores = torch.where(visible, scores, torch.zeros_like(scores))
    weights = torch.where(visible, scores.softmax(dim=-1), torch.zeros_like(scores))
    return weights @ v


def band_frame_loop(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """A loop over the frames, each one slicing its neighbours out of k and v."""
    B, H, T, Dh = q.shape
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        s = q[:, :, t : t + 1] @ k[:, :, lo:hi].transpose(-2, -1) / math.sqrt(Dh)  # (B, H, 1, n)
        if key_padding is not None:
            s = s.masked_fill(~key_padding[:, None, None, lo:hi], float("-inf"))
        seen = torch.isfinite(s).any(-1, keepdim=True)
        w = torch.softmax(s.masked_fill(~seen, 0.0), dim=-1) * seen
        outs.append(w @ v[:, :, lo:hi])
    return torch.cat(outs, dim=2)


def band_sdpa(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """F.scaled_dot_product_attention with a boolean band mask; a frame with no key is given
    every key and then zeroed."""
    mask = _band(q.shape[-2], window, causal, q.device)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    else:
        mask = mask.expand(q.shape[0], 1, -1, -1)
    any_key = mask.any(-1, keepdim=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~any_key)
    return out.masked_fill(~any_key, 0.0)


def band_unfold_masked(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """O(T * window): each frame's 2w + 1 neighbours cut out with unfold, the frames beyond the
    ends and the padding masked."""
    B, H, T, D = q.shape
    after = 0 if causal else window
    width = window + 1 + after
    kw = F.pad(k, (0, 0, window, after)).unfold(2, width, 1)  # (B, H, T, D, width)
    vw = F.pad(v, (0, 0, window, after)).unfold(2, width, 1)  # (B, H, T, Dv, width)
    real = (
        torch.ones(B, T, dtype=torch.bool, device=q.device) if key_padding is None else key_padding
    )
    real = F.pad(real, (window, after), value=False).unfold(1, width, 1)  # (B, T, width)
    scores = torch.einsum("bhtd,bhtdw->bhtw", q, kw) / math.sqrt(D)
    scores = scores.masked_fill(~real[:, None], float("-inf"))
    seen = real.any(-1)[:, None, :, None]  # (B, 1, T, 1)
    weights = scores.masked_fill(~seen, 0.0).softmax(-1).masked_fill(~seen, 0.0)
    return torch.einsum("bhtw,bhtdw->bhtd", weights, vw)


CASES = [
    BlindCase(
        CHECK,
        "band_strict_inequality",
        band_strict,
        "mistake",
        "I wrote |t - s| < window, so the band is one frame too narrow on each side.",
    ),
    BlindCase(
        CHECK,
        "causal_with_triu",
        band_causal_upper,
        "mistake",
        "For causal I took .triu() of the band, which keeps the future side, not the past.",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        band_causal_ignored,
        "mistake",
        "I accepted causal but always built the two-sided band.",
    ),
    BlindCase(
        CHECK,
        "window_as_total_width",
        band_half_window,
        "mistake",
        "I read window as the width of the whole band and used window // 2 on each side.",
    ),
    BlindCase(
        CHECK,
        "key_padding_ignored",
        band_padding_ignored,
        "mistake",
        "I built the band mask and forgot to combine it with key_padding.",
    ),
    BlindCase(
        CHECK,
        "padding_on_query_axis",
        band_padding_on_queries,
        "mistake",
        "I indexed key_padding as [:, None, :, None], which masks query rows instead of keys.",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I used ~key_padding, as if True marked the padding.",
    ),
    BlindCase(
        CHECK,
        "padding_broadcast_over_heads",
        band_padding_three_dims,
        "mistake",
        "key_padding[:, None, :] has three dimensions, so the batch lines up with the heads.",
    ),
    BlindCase(
        CHECK,
        "nan_for_lonely_frame",
        band_nan_rows,
        "mistake",
        "masked_fill with -inf and softmax, without a guard: a frame with no key gets NaN.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        band_fill_minus_1e9,
        "mistake",
        "I filled with -1e9, so a frame that sees no key averages all values instead of zeros.",
    ),
    BlindCase(
        CHECK,
        "scale_by_value_width",
        band_scale_dv,
        "mistake",
        "I scaled by 1 / sqrt(v.shape[-1]) instead of the query width Dh.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_too",
        band_returns_weights,
        "mistake",
        "I return (out, weights), like attention() does.",
    ),
    BlindCase(
        CHECK,
        "unfold_zero_keys_counted",
        band_unfold_zero_keys,
        "mistake",
        "Windows cut with unfold from zero-padded keys; I masked the padding frames but not the "
        "zeros added past the ends.",
    ),
    BlindCase(
        CHECK,
        "blocks_missing_next",
        band_blocks_own_and_previous,
        "mistake",
        "Blocked version: each block sees its own block and the one before, also when the band "
        "is two-sided.",
    ),
    BlindCase(
        CHECK,
        "full_attention_where",
        band_where_full,
        "correct",
        "Full attention under triu(-w).tril(w) (tril(0) when causal), torch.where for the fills.",
    ),
    BlindCase(
        CHECK,
        "loop_over_frames",
        band_frame_loop,
        "correct",
        "A loop over the frames, each slicing its own neighbours out of k and v.",
    ),
    BlindCase(
        CHECK,
        "sdpa_band_mask",
        band_sdpa,
        "correct",
        "F.scaled_dot_product_attention with the band mask; lonely frames given every key, then "
        "zeroed.",
    ),
    BlindCase(
        CHECK,
        "unfold_windows_masked",
        band_unfold_masked,
        "correct",
        "Sliding windows with unfold, the frames beyond the ends and the padding masked.",
    ),
]
