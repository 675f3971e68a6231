"""Long-sequence checks: banded local attention (chapter 20)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from ..attention import attention
from ..local_attention import band_mask
from .diagnoses import MASKING
from .engine import check
from .tensors import close, expect_tensor, randn
from .verdict import POLARITY, Verdict, Wrong, say

# --- banded local attention ------------------------------------------------------------------


def _offsets_mask(T: int, lo: int, hi: int) -> Tensor:
    """``(T, T)`` bool: query ``t`` sees key ``s`` when ``lo <= s - t <= hi``."""
    t = torch.arange(T)
    diff = t[None, :] - t[:, None]  # (T, T): s - t
    return (diff >= lo) & (diff <= hi)


def _masked(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, scale=None) -> Tensor:
    return attention(q, k, v, mask, scale=scale)[0]


def _gathered(q: Tensor, k: Tensor, v: Tensor, lo: int, hi: int, edge: str) -> Tensor:
    """Attention over the keys ``t + lo .. t + hi`` gathered per query, with one of three wrong
    ways of treating a key that falls outside ``0 .. T - 1``: a zero vector that still takes
    part in the softmax (``"zeros"``), the nearest frame (``"clamp"``), or the frame at the
    other end (``"wrap"``)."""
    T, Dh = q.shape[-2], q.shape[-1]
    index = torch.arange(T)[:, None] + torch.arange(lo, hi + 1)[None, :]  # (T, width)
    if edge == "zeros":
        k = F.pad(k, (0, 0, 0, 1))  # frame T is a zero key and a zero value
        v = F.pad(v, (0, 0, 0, 1))
        index = torch.where((index < 0) | (index >= T), T, index)
    elif edge == "clamp":
        index = index.clamp(0, T - 1)
    else:
        index = index % T
    keys, values = k[..., index, :], v[..., index, :]  # (B, H, T, width, Dh)
    scores = (q.unsqueeze(-2) * keys).sum(-1) / math.sqrt(Dh)  # (B, H, T, width)
    return (scores.softmax(-1).unsqueeze(-1) * values).sum(-2)  # (B, H, T, Dv)


def _same(a: Tensor, b: Tensor) -> bool:
    """Equal to the rounding of the coarser dtype (a reader may compute in float32)."""
    tol = max({torch.float64: 1e-8, torch.float32: 1e-4}.get(t.dtype, 5e-3) for t in (a, b))
    return close(a.detach().to(torch.float64), b.detach().to(torch.float64), tol)


def _call(fn: Callable, q: Tensor, k: Tensor, v: Tensor, window: int, causal: bool, real) -> Tensor:
    result = fn(q, k, v, window, causal=causal, key_padding=real)
    if isinstance(result, tuple) and len(result) == 2:  # (out, weights) is fine too
        result = result[0]
    return expect_tensor(result, "the output", tuple(v.shape))


def _setting(window: int, causal: bool, real: Tensor | None, T: int) -> str:
    padding = "" if real is None else ", padding at the end of sequence 1"
    return f"(T = {T}, window = {window}, causal = {causal}{padding})"


def _context(q: Tensor, w: int, causal: bool, real):
    """What every diagnosis of a band uses: T, the setting in words, the padding mask
    ``(B, 1, 1, T)``, the band, its offsets and a function that adds the padding to a band."""
    T = q.shape[-2]
    pad = None if real is None else real[:, None, None, :]  # (B, 1, 1, T)

    def both(band: Tensor) -> Tensor:
        return band if pad is None else band & pad

    return (
        T,
        _setting(w, causal, real, T),
        pad,
        band_mask(T, w, causal),
        -w,
        0 if causal else w,
        both,
    )


def _diagnose(got: Tensor, q: Tensor, k: Tensor, v: Tensor, w: int, causal: bool, real) -> str:
    """The likeliest mistake that turns band-masked full attention into ``got``."""
    for diagnosis in (_scores_mistake, _width_mistake, _causal_mistake, _padding_mistake):
        said = diagnosis(got, q, k, v, w, causal, real)
        if said:
            return said
    return _edges_or_difference(got, q, k, v, w, causal, real)


def _scores_mistake(
    got: Tensor, q: Tensor, k: Tensor, v: Tensor, w: int, causal: bool, real
) -> str | None:
    """NaN, no scale, or no band at all."""
    T, here, pad, band, lo, hi, both = _context(q, w, causal, real)
    if torch.isnan(got).any():
        return (
            f"your output contains NaN {here}: a frame whose keys are all padding gets "
            "softmax(-inf, ..., -inf) = 0/0. Give it zero weights and a zero output, as "
            "masked_softmax does (chapter 6)."
        )
    if _same(got, _masked(q, k, v, both(band), scale=1.0)):
        return (
            f"you forgot to divide the scores by sqrt(Dh): with Dh = {q.shape[-1]} the softmax "
            f"gets scores {math.sqrt(q.shape[-1]):.1f} times too large."
        )
    if _same(got, _masked(q, k, v, pad)):
        return (
            "there is no band: every frame attends to every frame. Frame t may see only the "
            "keys s with |t - s| <= window (and s <= t when causal)."
        )
    return None


def _width_mistake(
    got: Tensor, q: Tensor, k: Tensor, v: Tensor, w: int, causal: bool, real
) -> str | None:
    """A band one frame too narrow or too wide, or one-sided when it should not be."""
    T, here, pad, band, lo, hi, both = _context(q, w, causal, real)
    keys = "2w + 1 keys" if not causal else "w + 1 keys"
    if w > 0 and _same(got, _masked(q, k, v, both(_offsets_mask(T, lo + 1, hi - (not causal))))):
        return (
            "the band is one frame too narrow on each side: with window = w, frame t sees "
            f"|t - s| <= w, both ends included ({keys} away from the edges), not |t - s| < w."
        )
    if _same(got, _masked(q, k, v, both(_offsets_mask(T, lo - 1, hi + (not causal))))):
        return (
            "the band is one frame too wide on each side: with window = w, frame t sees "
            f"|t - s| <= w ({keys} away from the edges), not |t - s| <= w + 1."
        )
    if not causal and w > 0:
        for a, b in ((lo, hi - 1), (lo + 1, hi)):
            if _same(got, _masked(q, k, v, both(_offsets_mask(T, a, b)))):
                side = "after" if a == lo else "before"
                return (
                    f"one side of the band is a frame short: you give frame t the keys t{a:+d} .. "
                    f"t{b:+d}, 2w keys, and miss the last one {side} it (a Python range's end is "
                    "exclusive). The band is t - w .. t + w, 2w + 1 keys."
                )
        if _same(got, _masked(q, k, v, both(_offsets_mask(T, -w, 0)))):
            return (
                "your band is one-sided: with causal=False frame t sees the frames on both "
                "sides, t - w .. t + w; yours sees only the past, t - w .. t."
            )
        if _same(got, _masked(q, k, v, both(_offsets_mask(T, 0, w)))):
            return (
                "your band is one-sided and looks ahead: with causal=False frame t sees "
                "t - w .. t + w; yours sees only t .. t + w."
            )
    return None


def _causal_mistake(
    got: Tensor, q: Tensor, k: Tensor, v: Tensor, w: int, causal: bool, real
) -> str | None:
    """The causal band two-sided, transposed, or without the frame itself."""
    T, here, pad, band, lo, hi, both = _context(q, w, causal, real)
    if causal:
        if _same(got, _masked(q, k, v, both(band_mask(T, w)))):
            return (
                "with causal=True frame t must not see the future: the causal band is "
                "t - w .. t, one-sided; yours is two-sided, t - w .. t + w."
            )
        if _same(got, _masked(q, k, v, both(band_mask(T, w, causal=True).T))):
            return (
                "your causal band looks ahead, t .. t + w, instead of back, t - w .. t: the band "
                "is laid along the wrong axis (rows are queries t, columns keys s; transposed)."
            )
        if w > 0 and _same(got, _masked(q, k, v, both(_offsets_mask(T, -w, -1)))):
            return (
                "frame t does not see itself: the causal band is t - w .. t, both ends included "
                "(w + 1 keys); yours stops at t - 1."
            )
    return None


def _padding_mistake(
    got: Tensor, q: Tensor, k: Tensor, v: Tensor, w: int, causal: bool, real
) -> str | None:
    """key_padding unused, inverted, or laid on the queries."""
    T, here, pad, band, lo, hi, both = _context(q, w, causal, real)
    if pad is not None:  # a frame sees no key: a -1e9 fill attends to all its keys
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, T, T)
        if _same(got, torch.softmax(scores.masked_fill(~both(band), -1e9), dim=-1) @ v):
            return say(MASKING, "softmax-minus-1e9")
    if pad is not None:
        if _same(got, _masked(q, k, v, band)):
            return (
                "key_padding is not used: the padding frames at the end of sequence 1 are seen "
                "as keys. Mask them: a key may be attended only where key_padding is True."
            )
        if _same(got, _masked(q, k, v, band & ~pad)):
            return f"key_padding polarity: True = a real frame, the key may be seen -- {POLARITY}."
        if _same(got, _masked(q, k, v, band & real[:, None, :, None])):
            return (
                "key_padding masks the queries instead of the keys: a padding frame must not be "
                "seen as a key by any frame; use key_padding[:, None, None, :] (B, 1, 1, T)."
            )
    return None


def _edges_or_difference(
    got: Tensor, q: Tensor, k: Tensor, v: Tensor, w: int, causal: bool, real
) -> str | None:
    """The ends of the sequence wrong, or the difference described."""
    T, here, pad, band, lo, hi, both = _context(q, w, causal, real)
    if real is None:
        for edge, what in (
            ("zeros", "the zero padding you add in front of (and behind) the sequence takes part "
             "in the softmax as keys with score 0"),
            ("clamp", "the nearest frame is counted again in place of each missing key (indices "
             "clamped to 0 .. T - 1)"),
            ("wrap", "the band wraps around: frame 0 sees the last frames of the sequence "
             "(torch.roll, or indices modulo T)"),
        ):  # fmt: skip
            if _same(got, _gathered(q, k, v, lo, hi, edge)):
                return (
                    f"the first {'' if causal else 'and last '}{w} frames are wrong: {what}. "
                    "Near the ends of the sequence a frame has fewer keys (frame 0 has "
                    f"{w + 1}); a key outside 0 .. T - 1 must be masked out."
                )
    expected = _masked(q, k, v, both(band))
    bad = ((got - expected).abs().amax(-1) > 1e-5).any(0).any(0).nonzero().flatten().tolist()
    if w > 0 and bad and all(t < w or t >= T - (0 if causal else w) for t in bad):
        return (
            f"the frames near the ends of the sequence are wrong ({bad} {here}): the middle is "
            f"right. Frame t sees the keys max(0, t - w) .. {'t' if causal else 'min(T - 1, t + w)'}"
            ", fewer than the others near the edges, but it still has an output."
        )
    return (
        f"the output differs from full attention under the band mask {here} at frames "
        f"{bad[:8]}{' ...' if len(bad) > 8 else ''}."
    )


@check("banded local attention", call="fn(q, k, v, window, causal=False, key_padding=None)")
def check_banded_attention(fn: Callable[..., Tensor]) -> Verdict:
    """``fn(q, k, v, window, causal=False, key_padding=None) -> out``: attention of each frame
    ``t`` to the keys ``s`` with ``|t - s| <= window`` (and ``s <= t`` when ``causal``), padding
    frames (``key_padding`` False) never seen; q, k ``(B, H, T, Dh)``, v ``(B, H, T, Dv)``,
    out ``(B, H, T, Dv)``; a frame that sees no key gets zeros. It must equal the book's full
    ``attention`` under ``band_mask(T, window, causal) & key_padding[:, None, None, :]``."""
    B, H, T, Dh, Dv = 2, 2, 11, 8, 5
    q, k, v = (
        randn(B, H, T, Dh),
        randn(B, H, T, Dh, seed=1),
        randn(B, H, T, Dv, seed=2),
    )
    real = torch.ones(B, T, dtype=torch.bool)
    real[1, 7:] = False  # sequence 1 ends at frame 6: frame 10's keys (8 .. 10) are padding
    settings = [
        (2, False, None),  # the band, both sides
        (3, True, None),  # the causal band
        (2, False, real),  # with padding; one frame sees no key at all
        (1, True, real),
    ]
    for window, causal, pad in settings:
        got = _call(fn, q.clone(), k.clone(), v.clone(), window, causal, pad)
        mask = band_mask(T, window, causal)
        if pad is not None:
            mask = mask & pad[:, None, None, :]
        if not _same(got, _masked(q, k, v, mask)):
            raise Wrong(_diagnose(got, q, k, v, window, causal, pad))
    for window, T_short in ((0, 6), (8, 5), (5, 6)):  # itself only; the whole sequence
        qs, ks, vs = q[..., :T_short, :], k[..., :T_short, :], v[..., :T_short, :]
        got = _call(fn, qs, ks, vs, window, False, None)
        if not _same(got, _masked(qs, ks, vs, band_mask(T_short, window))):
            what = (
                "each frame sees only itself, so the output is v"
                if window == 0
                else "the band covers the whole sequence: it is full attention"
            )
            raise Wrong(f"with window = {window} and T = {T_short}, {what}. "
                        + _diagnose(got, qs, ks, vs, window, False, None))  # fmt: skip
    # gradients, including through the frame that sees no key
    mine = [t.clone().requires_grad_() for t in (q, k, v)]
    ours = [t.clone().requires_grad_() for t in (q, k, v)]
    grad_out = randn(B, H, T, Dv, seed=3)
    out = _call(fn, *mine, 2, False, real)
    (out * grad_out).sum().backward()
    mask = band_mask(T, 2) & real[:, None, None, :]
    (_masked(*ours, mask) * grad_out).sum().backward()
    for name, a, b in zip("qkv", mine, ours, strict=True):
        if a.grad is None:
            raise Wrong(f"no gradient reaches {name}: keep the computation in autograd.")
        if torch.isnan(a.grad).any():
            raise Wrong(f"the gradient with respect to {name} has NaN: a frame that sees no "
                        "key must not reach the softmax as a row of -inf.")  # fmt: skip
        if not _same(a.grad.to(out.dtype), b.grad):  # to the output's rounding
            raise Wrong(f"the values are right but the gradient with respect to {name} "
                        "differs from the reference.")  # fmt: skip
    return (
        "equal to full attention under the band mask: both ends of the band, causal or not, "
        "the edges of the sequence, padding, window 0 and window >= T, and the gradients."
    )
