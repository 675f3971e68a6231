"""Blind set B29, check_banded_attention (chapter 20): local attention under a band as readers
write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _attend(q: Tensor, k: Tensor, v: Tensor, allowed: Tensor) -> Tensor:
    """Masked attention with zero output for a query that sees no key (the right part)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~allowed, float("-inf"))
    has_key = allowed.any(-1, keepdim=True)
    weights = scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)
    return weights @ v


def _offsets(T: int, device) -> Tensor:
    """t - s for every query t (rows) and key s (columns)."""
    pos = torch.arange(T, device=device)
    return pos[:, None] - pos[None, :]


def _padding(key_padding: Tensor | None) -> Tensor | bool:
    return True if key_padding is None else key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_strict(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = d.abs() < window  # "within the window"
    if causal:
        band &= d >= 0
    return _attend(q, k, v, band & _padding(key_padding))


def band_window_is_width(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = d.abs() <= window // 2  # a window of `window` frames, centred on t
    if causal:
        band &= d >= 0
    return _attend(q, k, v, band & _padding(key_padding))


def band_range_loop(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    band = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        stop = t if causal else t + window  # range leaves its end out
        for s in range(max(0, t - window), min(T, stop)):
            band[t, s] = True
    return _attend(q, k, v, band & _padding(key_padding))


def band_causal_ignores_window(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d >= 0) if causal else (d.abs() <= window)  # causal: the usual causal mask
    return _attend(q, k, v, band & _padding(key_padding))


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = band.triu(0).tril(window) if causal else band.tril(window).triu(-window)
    return _attend(q, k, v, band & _padding(key_padding))


def band_always_one_sided(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d >= 0) & (d <= window)  # the window looks back
    return _attend(q, k, v, band & _padding(key_padding))


def band_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    rel = torch.arange(-window, 1 if causal else window + 1, device=q.device)
    idx = (torch.arange(T, device=q.device)[:, None] + rel).clamp(0, T - 1)  # (T, n)
    k_win, v_win = k[..., idx, :], v[..., idx, :]  # (B, H, T, n, D)
    scores = (q[..., None, :] * k_win).sum(-1) / math.sqrt(q.shape[-1])  # (B, H, T, n)
    if key_padding is not None:
        real = key_padding[:, idx][:, None]  # (B, 1, T, n)
        scores = scores.masked_fill(~real, float("-inf"))
        seen = real.any(-1, keepdim=True)
        w = scores.masked_fill(~seen, 0.0).softmax(-1).masked_fill(~seen, 0.0)
    else:
        w = scores.softmax(-1)
    return (w[..., None] * v_win).sum(-2)


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    d = _offsets(T, q.device) % T  # distance on a ring
    dist = torch.minimum(d, T - d)
    band = dist <= window
    if causal:
        band &= (d <= window) & (d >= 0)
    return _attend(q, k, v, band & _padding(key_padding))


def band_zero_padded_keys(q, k, v, window, causal=False, key_padding=None):
    right = 0 if causal else window
    k_pad = F.pad(k, (0, 0, window, right))  # zeros beyond both ends
    v_pad = F.pad(v, (0, 0, window, right))
    k_win = k_pad.unfold(-2, window + 1 + right, 1)  # (B, H, T, D, n)
    v_win = v_pad.unfold(-2, window + 1 + right, 1)
    scores = (q[..., None, :] @ k_win).squeeze(-2) / math.sqrt(q.shape[-1])  # (B, H, T, n)
    if key_padding is not None:
        real = F.pad(key_padding, (window, right), value=True).unfold(-1, window + 1 + right, 1)
        scores = scores.masked_fill(~real[:, None], float("-inf"))
    w = torch.nan_to_num(scores.softmax(-1))
    return (v_win @ w[..., None]).squeeze(-1)


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = d.abs() <= window
    if causal:
        band &= d >= 0
    return _attend(q, k, v, band.expand(q.shape[0], 1, -1, -1))


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = d.abs() <= window
    if causal:
        band &= d >= 0
    pad = True if key_padding is None else ~key_padding[:, None, None, :]  # True = padding
    return _attend(q, k, v, band & pad)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = d.abs() <= window
    if causal:
        band &= d >= 0
    pad = True if key_padding is None else key_padding[:, None, :, None]
    return _attend(q, k, v, band & pad)


def band_nan_rows(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = d.abs() <= window
    if causal:
        band &= d >= 0
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~(band & _padding(key_padding)), float("-inf"))
    return scores.softmax(-1) @ v


def band_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = d.abs() <= window
    if causal:
        band &= d >= 0
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~(band & _padding(key_padding)), -1e9)
    return scores.softmax(-1) @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d >= 0
    return _attend(q * math.sqrt(q.shape[-1]), k, v, allowed & _padding(key_padding))


def band_scale_by_dv(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d >= 0
    q = q * math.sqrt(q.shape[-1] / v.shape[-1])  # so that the scale is 1 / sqrt(Dv)
    return _attend(q, k, v, allowed & _padding(key_padding))


def band_returns_weights(q, k, v, window, causal=False, key_padding=None):
    from transformer_tutorial.attention import attention

    d = _offsets(q.shape[-2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d >= 0
    return attention(q, k, v, allowed & _padding(key_padding))  # (out, weights)


def band_padding_truthiness(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d >= 0
    if key_padding:
        allowed = allowed & key_padding[:, None, None, :]
    return _attend(q, k, v, allowed)


# ---------------------------------------------------------------- correct variants


def band_mask_tril_triu(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """Full attention under a band built with tril/triu, a masked softmax written out."""
    T = q.size(-2)
    band = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = band.tril(0 if causal else window).triu(-window)
    mask = band if key_padding is None else band & key_padding[:, None, None, :]
    scores = torch.matmul(q, k.transpose(-1, -2)) * q.size(-1) ** -0.5
    scores = scores.masked_fill(~mask, float("-inf"))
    empty = ~mask.any(-1, keepdim=True)
    probs = torch.softmax(scores.masked_fill(empty, 0.0), -1).masked_fill(empty, 0.0)
    return torch.matmul(probs, v)


def band_chunked(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
    chunk: int = 4,
) -> Tensor:
    """Queries in chunks of `chunk` frames, each scored only against the keys it can reach."""
    B, H, T, _ = q.shape
    outs = []
    for start in range(0, T, chunk):
        stop = min(T, start + chunk)
        lo, hi = max(0, start - window), (stop if causal else min(T, stop - 1 + window + 1))
        t = torch.arange(start, stop, device=q.device)[:, None]
        s = torch.arange(lo, hi, device=q.device)[None, :]
        allowed = ((t - s).abs() <= window) & ((s <= t) if causal else True)
        if key_padding is not None:
            allowed = allowed & key_padding[:, None, None, lo:hi]
        outs.append(_attend(q[..., start:stop, :], k[..., lo:hi, :], v[..., lo:hi, :], allowed))
    return torch.cat(outs, dim=-2) if outs else v[..., :0, :]


def band_sdpa_safe(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """F.scaled_dot_product_attention under the band; a query with no key is given one
    harmless key and its output zeroed afterwards, so neither values nor gradients see NaN."""
    T = q.shape[-2]
    pos = torch.arange(T, device=q.device)
    rel = pos[:, None] - pos[None, :]
    mask = (rel <= window) & (rel >= (0 if causal else -window))  # (T, T)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]  # (B, 1, T, T)
    mask = mask.expand(q.shape[0], 1, T, T) if mask.dim() == 4 else mask
    has_key = mask.any(-1, keepdim=True)
    safe = mask | ~has_key  # a row with no key sees everything, then is zeroed
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=safe)
    return out * has_key


def band_einsum_additive(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """einsum products and an additive mask of zeros and -inf; empty rows found by isinf."""
    T = q.shape[-2]
    i = torch.arange(T, device=q.device)
    diff = i.view(-1, 1) - i.view(1, -1)
    ok = diff.abs() <= window
    if causal:
        ok = ok & (diff >= 0)
    if key_padding is not None:
        ok = ok[None, None] & key_padding[:, None, None, :]
    bias = torch.zeros(ok.shape, dtype=q.dtype, device=q.device).masked_fill(~ok, -math.inf)
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(q.shape[-1]) + bias
    dead = torch.isinf(scores).all(-1, keepdim=True)
    w = torch.softmax(torch.where(dead, torch.zeros_like(scores), scores), dim=-1)
    w = torch.where(dead, torch.zeros_like(w), w)
    return torch.einsum("bhts,bhsd->bhtd", w, v)


CASES = [
    BlindCase(
        CHECK,
        "band_one_too_narrow",
        band_strict,
        "mistake",
        "I wrote |t - s| < window, so the frames exactly window away are left out.",
    ),
    BlindCase(
        CHECK,
        "window_as_total_width",
        band_window_is_width,
        "mistake",
        "I read window as the width of the whole band and let each side reach window // 2.",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        band_range_loop,
        "mistake",
        "I built the mask with loops over range(t - window, t + window), whose end is left out, "
        "so the last frame on the right (and t itself when causal) is missing.",
    ),
    BlindCase(
        CHECK,
        "causal_ignores_window",
        band_causal_ignores_window,
        "mistake",
        "With causal=True I used the plain causal mask, every earlier frame, not just the last "
        "window of them.",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "For causal I wrote triu(0).tril(window), the band on the wrong side: frames look ahead.",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        band_always_one_sided,
        "mistake",
        "My band always looks back only (0 <= t - s <= window), also when causal is False.",
    ),
    BlindCase(
        CHECK,
        "indices_clamped",
        band_clamped_indices,
        "mistake",
        "I gathered the 2w + 1 neighbours of each frame with indices clamped to 0 .. T - 1, so "
        "the end frames count their edge neighbour several times.",
    ),
    BlindCase(
        CHECK,
        "band_wraps_around",
        band_wraps_around,
        "mistake",
        "I measured the distance modulo T, so the first frames see the last ones.",
    ),
    BlindCase(
        CHECK,
        "zero_padding_counted",
        band_zero_padded_keys,
        "mistake",
        "I padded k and v with zeros at both ends and unfolded windows, but did not mask the "
        "zero keys, so the end frames attend to them.",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "I took key_padding as an argument but never used it.",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I used ~key_padding, reading True as a padding frame.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "I broadcast key_padding as [:, None, :, None], which masks the padded queries' rows "
        "instead of the padded keys.",
    ),
    BlindCase(
        CHECK,
        "nan_for_empty_rows",
        band_nan_rows,
        "mistake",
        "I filled with -inf and took the plain softmax, so a frame with no key gets NaN.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        band_minus_1e9,
        "mistake",
        "I filled the masked scores with -1e9, so a frame that sees no key averages every value.",
    ),
    BlindCase(
        CHECK,
        "scale_missing",
        band_no_scale,
        "mistake",
        "I forgot the 1 / sqrt(Dh) on the scores.",
    ),
    BlindCase(
        CHECK,
        "scale_by_dv",
        band_scale_by_dv,
        "mistake",
        "I scaled by 1 / sqrt of v's last dimension instead of q's.",
    ),
    BlindCase(
        CHECK,
        "returns_out_and_weights",
        band_returns_weights,
        "mistake",
        "I called the package's attention under my band mask and returned what it returns, "
        "(out, weights).",
    ),
    BlindCase(
        CHECK,
        "padding_truth_test",
        band_padding_truthiness,
        "mistake",
        "I wrote `if key_padding:` to test whether padding was given, which fails for a tensor.",
    ),
    BlindCase(
        CHECK,
        "tril_triu_mask",
        band_mask_tril_triu,
        "correct",
        "Full attention under a band from tril/triu, the masked softmax written out, scale as "
        "q.size(-1) ** -0.5.",
    ),
    BlindCase(
        CHECK,
        "query_chunks",
        band_chunked,
        "correct",
        "Queries in chunks, each scored only against the keys it can reach; the chunk size an "
        "extra argument with a default.",
    ),
    BlindCase(
        CHECK,
        "sdpa_guarded",
        band_sdpa_safe,
        "correct",
        "F.scaled_dot_product_attention under the band, with rows that see no key opened up and "
        "zeroed afterwards.",
    ),
    BlindCase(
        CHECK,
        "einsum_additive_mask",
        band_einsum_additive,
        "correct",
        "einsum products and an additive 0 / -inf mask, empty rows found with isinf.",
    ),
]
