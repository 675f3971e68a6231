"""Long-sequence checks: banded local attention (chapter 20)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from ..attention import attention, masked_softmax
from ..local_attention import band_mask
from .attention import MISTAKES as ATTENTION
from .diagnoses import GRADIENTS, MASKING
from .engine import check
from .tensors import NAMES as TENSOR_NAMES
from .tensors import close, expect_dtype_kept, expect_tensor, randn, unpacks_to
from .verdict import POLARITY, Verdict, Wrong, say

_EDGES = (
    " Near the ends of the sequence a frame has fewer keys (frame 0 has {n}); a key outside "
    "0 .. T - 1 must be masked out."
)
MISTAKES = {
    "banded-returns-pair": "you return a pair, (out, weights), as attention() does: the exercise's "
    "function returns the output alone, a tensor (B, H, T, Dv), as local_attention does (and a "
    "banded attention that avoids the (T, T) scores has no weights table to return).",
    "banded-scaled-by-keys": "the scores are divided by sqrt({n}), the number of keys a frame "
    "sees: the scale is sqrt(Dh) = {root:.4g}, the size of the query and key vectors "
    "(q.shape[-1] = {dh}).",
    "banded-no-abs": "the band is one-sided: frame t sees every key s with t - s <= w, all the "
    "frames after it too. The band is |t - s| <= w: take abs() of the offset, or, built with tril "
    "and triu as band_mask does, keep .tril(window) as well as .triu(-window).",
    "banded-causal-no-window": "the causal band has no window: frame t sees the whole past, "
    "s <= t. It sees t - w .. t ({n} keys), band_mask(T, w, causal=True).",
    "banded-scaled-by-dh": "the scores are divided by Dh = {dh} (by Dh itself, or by sqrt(Dh) "
    "twice: q or k scaled, then the scores again), not once by sqrt(Dh) = {root:.4g}.",
    "banded-padding-zeroed": "the padding frames' keys and values are set to zero instead of "
    "masked: a zero key still scores 0 and takes weight exp(0) in the softmax. Leave them out "
    "with the mask (-inf before the softmax), band & key_padding.",
    "banded-padding-outputs-zeroed": "the outputs of the padding frames are set to zero, after "
    "the attention or by a mask on the queries too (key_padding on both axes: they see no key). "
    "A padding frame still attends to the real keys in its band: key_padding hides keys, not "
    "queries (band & key_padding[:, None, None, :]); only a frame that sees no key at all gets "
    "zeros.",
    "banded-nan-row": "your output contains NaN {here}: a frame whose keys are all padding gets "
    "softmax(-inf, ..., -inf) = 0/0. Give it zero weights and a zero output, as masked_softmax "
    "does (chapter 6).",
    "banded-unscaled": "you forgot to divide the scores by sqrt(Dh): with Dh = {dh} the softmax "
    "gets scores {times:.1f} times too large.",
    "banded-no-band": "there is no band: every frame attends to every frame. Frame t may see only "
    "the keys s with |t - s| <= window (and s <= t when causal).",
    "banded-too-narrow": "the band is one frame too narrow on each side: with window = w, frame t "
    "sees |t - s| <= w, both ends included ({keys} keys away from the edges), not |t - s| < w.",
    "banded-too-wide": "the band is one frame too wide on each side: with window = w, frame t sees "
    "|t - s| <= w ({keys} keys away from the edges), not |t - s| <= w + 1.",
    "banded-slice-end": "each frame's band stops one key short: a slice band[t, lo:hi] leaves "
    "out hi, so frame t never sees key t + window, and near "
    "the end, where hi is clamped to {last}, no frame sees key {last}. Slice to hi + 1, or build "
    "the band from the offsets, |t - s| <= window.",
    "banded-range-end-exclusive": "one side of the band is a frame short: you give frame t the "
    "keys t{a:+d} .. t{b:+d}, 2w keys, and miss the last one {side} it (a Python range's end is "
    "exclusive, or a < where <= belongs on that side of an offset mask). The band is t - w .. t + "
    "w, 2w + 1 keys.",
    "banded-one-sided": "your band is one-sided: with causal=False frame t sees the frames on both "
    "sides, t - w .. t + w; yours sees only the past, t - w .. t.",
    "banded-ahead-only": "your band is one-sided and looks ahead: with causal=False frame t sees "
    "t - w .. t + w; yours sees only t .. t + w.",
    "banded-ignores-causal": "with causal=True frame t must not see the future: the causal band "
    "is t - w .. t, one-sided; yours is two-sided, t - w .. t + w.",
    "banded-causal-wrong-axis": "your causal band looks ahead, t .. t + w, instead of back, t - w "
    ".. t: the band is laid along the wrong axis (rows are queries t, columns keys s; "
    "transposed), or its causal edge is cut with triu where tril belongs (keys s <= t).",
    "banded-causal-excludes-self": "frame t does not see itself: the causal band is t - w .. t, "
    "both ends included (w + 1 keys); yours stops at t - 1.",
    "banded-padding-ignored": "key_padding is not used: the padding frames at the end of sequence "
    "1 are seen as keys. Mask them: a key may be attended only where key_padding is True.",
    "banded-padding-polarity": "key_padding polarity: True = a real frame, the key may be seen -- "
    "in this book a mask is True where a query *may attend*.",
    "banded-padding-on-queries": "key_padding masks the queries instead of the keys: a padding "
    "frame must not be seen as a key by any frame; use key_padding[:, None, None, :] "
    "(B, 1, 1, T).",
    "banded-edges-zero-padding": "{ends} are wrong: the zero padding you add in front of (and "
    "behind) the sequence takes part in the softmax as keys with score 0." + _EDGES,
    "banded-edges-clamped": "{ends} are wrong: the nearest frame is counted again in place of "
    "each missing key (indices clamped to 0 .. T - 1)." + _EDGES,
    "banded-edges-wrap-around": "{ends} are wrong: the band wraps around: frame 0 sees the last "
    "frames of the sequence (torch.roll, or indices modulo T)." + _EDGES,
}

MESSAGES = {
    "setting": "(T = {T}, window = {window}, causal = {causal})",
    "setting-padded": "(T = {T}, window = {window}, causal = {causal}, padding at the end of "
    "sequence 1)",
    "side-after": "after",
    "side-before": "before",
    "ends-first": "the first {w} frames",
    "ends-both": "the first and last {w} frames",
    "banded-ends-differ": "the frames near the ends of the sequence are wrong ({bad} {here}): the "
    "middle is right. Frame t sees the keys max(0, t - w) .. {upper}, fewer than the others near "
    "the edges, but it still has an output.",
    "banded-differs": "the output differs from full attention under the band mask {here} at "
    "frames {frames}.",
    "banded-keys-seen": "Frame {t} attends to keys {mine} in yours, to keys {right} in the "
    "book's: with window = {w} a frame t sees the keys s with |t - s| <= {w} (and s <= t when "
    "causal), that are real.",
    "banded-nan": "your output contains NaN {here} at frames {frames}, where the book's has "
    "numbers (zeros for a frame that sees no key). A softmax over scores that are all -inf is "
    "0/0 = NaN: check which keys each of these frames sees, and give a frame that sees none zero "
    "weights, as masked_softmax does (chapter 6).",
    "banded-window-itself": "with window = {window} and T = {T}, each frame sees only itself, so "
    "the output is v. {diagnosis}",
    "banded-window-whole": "with window = {window} and T = {T}, the band covers the whole "
    "sequence: it is full attention. {diagnosis}",
    "banded-gradient-nan": "the gradient with respect to {name} has NaN: a frame that sees no key "
    "must not reach the softmax as a row of -inf.",
    "banded-gradient-differs": "the values are right but the gradient with respect to {name} "
    "differs from the reference.",
}

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
    if unpacks_to(result, 2) and getattr(result[0], "shape", None) == v.shape:
        raise Wrong.named(MISTAKES, "banded-returns-pair")
    return expect_tensor(result, TENSOR_NAMES["output"], tuple(v.shape))


def _setting(window: int, causal: bool, real: Tensor | None, T: int) -> str:
    key = "setting" if real is None else "setting-padded"
    return say(MESSAGES, key, T=T, window=window, causal=causal)


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


def _frames(frames: list[int]) -> str:
    """The first frames of a list, in words: ``[0, 3, 4, ...]``."""
    return "[" + ", ".join(map(str, frames[:8])) + (", ..." if len(frames) > 8 else "") + "]"


def _diagnose(got: Tensor, q: Tensor, k: Tensor, v: Tensor, w: int, causal: bool, real) -> Wrong:
    """The likeliest mistake that turns band-masked full attention into ``got``."""
    if torch.isnan(got).any():
        return _nan_mistake(got, q, k, v, w, causal, real)
    for diagnosis in (_scores_mistake, _width_mistake, _causal_mistake, _padding_mistake):
        said = diagnosis(got, q, k, v, w, causal, real)
        if said:
            return said
    return _edges_or_difference(got, q, k, v, w, causal, real)


def _nan_mistake(got: Tensor, q: Tensor, k: Tensor, v: Tensor, w: int, causal: bool, real) -> Wrong:
    """NaN in ``got``: at exactly the frames that see no key, the rest right; else the mistake
    that ``got`` shows with its NaN frames as zeros (what the mistake's frames that see no key
    get from the book's attention); else the NaN frames said."""
    T, here, pad, band, lo, hi, both = _context(q, w, causal, real)
    nan = got.isnan().any(-1)  # (B, H, T)
    zeroed = got.masked_fill(nan[..., None], 0.0)
    unseen = ~both(band).any(-1)  # (B or 1, 1, T): the frames that see no key
    if torch.equal(nan, unseen.expand_as(nan)) and _same(zeroed, _masked(q, k, v, both(band))):
        return Wrong.named(MISTAKES, "banded-nan-row", here=here)
    said = _diagnose(zeroed, q, k, v, w, causal, real)
    if said.mistake not in (None, "banded-padding-outputs-zeroed"):  # zeros put, not NaN made
        return said
    frames = _frames(nan.any(0).any(0).nonzero().flatten().tolist())
    return Wrong.differs(MESSAGES, "banded-nan", here=here, frames=frames)


def _scores_mistake(
    got: Tensor, q: Tensor, k: Tensor, v: Tensor, w: int, causal: bool, real
) -> Wrong | None:
    """No scale, or no band at all."""
    T, here, pad, band, lo, hi, both = _context(q, w, causal, real)
    if _same(got, _masked(q, k, v, both(band), scale=1.0)):
        dh = q.shape[-1]
        return Wrong.named(MISTAKES, "banded-unscaled", dh=dh, times=math.sqrt(dh))
    if _same(got, _masked(q, k, v, pad)):
        return Wrong.named(MISTAKES, "banded-no-band")
    dh = q.shape[-1]
    if _same(got, _masked(q, k, v, both(band), scale=1 / dh)):
        return Wrong.named(MISTAKES, "banded-scaled-by-dh", dh=dh, root=math.sqrt(dh))
    dv = v.shape[-1]
    if dv != dh and _same(got, _masked(q, k, v, both(band), scale=1 / math.sqrt(dv))):
        return Wrong.named(ATTENTION, "attention-sqrt-dv", dv=dv, dk=dh)
    n = w + 1 if causal else 2 * w + 1  # the keys a frame sees away from the ends
    if n != dh and _same(got, _masked(q, k, v, both(band), scale=1 / math.sqrt(n))):
        return Wrong.named(MISTAKES, "banded-scaled-by-keys", n=n, dh=dh, root=math.sqrt(dh))
    scores = (q @ k.transpose(-2, -1) / math.sqrt(dh)).masked_fill(~both(band), -math.inf)
    if _same(got, scores.softmax(-2).nan_to_num() @ v):  # (B, H, T, T): over the queries
        return Wrong.named(MASKING, "softmax-wrong-axis", axis=-2, polarity=POLARITY)
    return None


def _width_mistake(
    got: Tensor, q: Tensor, k: Tensor, v: Tensor, w: int, causal: bool, real
) -> Wrong | None:
    """A band one frame too narrow or too wide, or one-sided when it should not be."""
    T, here, pad, band, lo, hi, both = _context(q, w, causal, real)
    keys = "2w + 1" if not causal else "w + 1"
    if w > 0 and _same(got, _masked(q, k, v, both(_offsets_mask(T, lo + 1, hi - (not causal))))):
        return Wrong.named(MISTAKES, "banded-too-narrow", keys=keys)
    if _same(got, _masked(q, k, v, both(_offsets_mask(T, lo - 1, hi + (not causal))))):
        return Wrong.named(MISTAKES, "banded-too-wide", keys=keys)
    sliced = torch.zeros(T, T, dtype=torch.bool)  # band[t, lo:hi] with hi clamped to T - 1
    for t in range(T):
        sliced[t, max(0, t - w) : min(T - 1, t + w)] = True
    if not causal and _same(got, _masked(q, k, v, both(sliced))):  # causal: excludes itself
        return Wrong.named(MISTAKES, "banded-slice-end", last=T - 1)
    if not causal and w > 0:
        for a, b in ((lo, hi - 1), (lo + 1, hi)):
            if _same(got, _masked(q, k, v, both(_offsets_mask(T, a, b)))):
                side = say(MESSAGES, "side-after" if a == lo else "side-before")
                return Wrong.named(MISTAKES, "banded-range-end-exclusive", a=a, b=b, side=side)
        if _same(got, _masked(q, k, v, both(_offsets_mask(T, -w, 0)))):
            return Wrong.named(MISTAKES, "banded-one-sided")
        if _same(got, _masked(q, k, v, both(_offsets_mask(T, -w, T)))):
            return Wrong.named(MISTAKES, "banded-no-abs")
        if _same(got, _masked(q, k, v, both(_offsets_mask(T, 0, w)))):
            return Wrong.named(MISTAKES, "banded-ahead-only")
    return None


def _causal_mistake(
    got: Tensor, q: Tensor, k: Tensor, v: Tensor, w: int, causal: bool, real
) -> Wrong | None:
    """The causal band two-sided, transposed, or without the frame itself."""
    T, here, pad, band, lo, hi, both = _context(q, w, causal, real)
    if causal:
        if _same(got, _masked(q, k, v, both(band_mask(T, w)))):
            return Wrong.named(MISTAKES, "banded-ignores-causal")
        if _same(got, _masked(q, k, v, both(band_mask(T, w, causal=True).T))):
            return Wrong.named(MISTAKES, "banded-causal-wrong-axis")
        if w > 0 and _same(got, _masked(q, k, v, both(_offsets_mask(T, -w, -1)))):
            return Wrong.named(MISTAKES, "banded-causal-excludes-self")
        if w < T - 1 and _same(got, _masked(q, k, v, both(_offsets_mask(T, -T, 0)))):
            return Wrong.named(MISTAKES, "banded-causal-no-window", n=w + 1)
    return None


def _padding_mistake(
    got: Tensor, q: Tensor, k: Tensor, v: Tensor, w: int, causal: bool, real
) -> Wrong | None:
    """key_padding unused, inverted, or laid on the queries."""
    T, here, pad, band, lo, hi, both = _context(q, w, causal, real)
    if pad is not None:
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, T, T)
        # a frame sees no key: a -1e9 fill attends to all its keys
        if _same(got, torch.softmax(scores.masked_fill(~both(band), -1e9), dim=-1) @ v):
            return Wrong.named(MASKING, "softmax-minus-1e9")
        if _same(got, _masked(q, k, v, band)):
            return Wrong.named(MISTAKES, "banded-padding-ignored")
        if _same(got, _masked(q, k, v, band & ~pad)):
            return Wrong.named(MISTAKES, "banded-padding-polarity")
        if _same(got, _masked(q, k, v, band & real[:, None, :, None])):
            return Wrong.named(MISTAKES, "banded-padding-on-queries")
        weights = attention(q, k, v, band)[1]  # the band's weights, padding not hidden
        if _same(got, (weights * pad) @ v):
            return Wrong.named(MASKING, "softmax-then-zero")
        if _same(got, masked_softmax(scores * pad, band) @ v):  # a padding key scores 0
            return Wrong.named(MASKING, "softmax-times-mask")
        zeroed = real[:, None, :, None].to(k.dtype)  # (B, 1, T, 1): 0 at the padding frames
        if _same(got, _masked(q, k * zeroed, v * zeroed, band)):
            return Wrong.named(MISTAKES, "banded-padding-zeroed")
        if _same(got, _masked(q, k, v, both(band)) * zeroed):
            return Wrong.named(MISTAKES, "banded-padding-outputs-zeroed")
    return None


def _edges_or_difference(
    got: Tensor, q: Tensor, k: Tensor, v: Tensor, w: int, causal: bool, real
) -> Wrong | None:
    """The ends of the sequence wrong, or the difference described."""
    T, here, pad, band, lo, hi, both = _context(q, w, causal, real)
    if real is None:
        edges = {"zeros": "banded-edges-zero-padding", "clamp": "banded-edges-clamped",
                 "wrap": "banded-edges-wrap-around"}  # fmt: skip
        for edge, key in edges.items():
            if _same(got, _gathered(q, k, v, lo, hi, edge)):
                ends = say(MESSAGES, "ends-first" if causal else "ends-both", w=w)
                return Wrong.named(MISTAKES, key, ends=ends, n=w + 1)
    return _difference(got, q, k, v, w, causal, real)


def _difference(got: Tensor, q: Tensor, k: Tensor, v: Tensor, w: int, causal: bool, real) -> Wrong:
    """The frames where ``got`` differs from the book's, described: NaN, or numbers."""
    T, here, pad, band, lo, hi, both = _context(q, w, causal, real)
    if got.isnan().any():
        frames = _frames(got.isnan().any(-1).any(0).any(0).nonzero().flatten().tolist())
        return Wrong.differs(MESSAGES, "banded-nan", here=here, frames=frames)
    expected = _masked(q, k, v, both(band))
    bad = ((got - expected).abs().amax(-1) > 1e-5).any(0).any(0).nonzero().flatten().tolist()
    if w > 0 and bad and all(t < w or t >= T - (0 if causal else w) for t in bad):
        upper = "t" if causal else "min(T - 1, t + w)"
        return Wrong.differs(MESSAGES, "banded-ends-differ", bad=bad, here=here, upper=upper)
    return Wrong.differs(MESSAGES, "banded-differs", here=here, frames=_frames(bad))


def _band(T: int, w: int, causal: bool, real, wrong: Callable = band_mask) -> Tensor:
    """The band of ``wrong(T, w, causal)`` (the book's by default), padding keys left out."""
    band = wrong(T, w, causal)
    return band if real is None else band & real[:, None, None, :]


_BANDS = {  # the bands of the mistakes named by their width: (T, w, causal) -> (T, T)
    "banded-too-narrow": (lambda T, w, c: _offsets_mask(T, 1 - w, 0 if c else w - 1),),
    "banded-too-wide": (lambda T, w, c: _offsets_mask(T, -w - 1, 0 if c else w + 1),),
    "banded-no-band": (
        lambda T, w, c: _offsets_mask(T, -T, T),
        lambda T, w, c: _offsets_mask(T, -T, 0 if c else T),  # the causal mask kept
    ),
}


def _confirmed(fn: Callable, probes: list, i: int, got: Tensor) -> Wrong:
    """What is wrong with ``got``, ``fn``'s output on ``probes[i]``. A band of ``_BANDS`` is
    named only when it gives ``fn``'s output on every probe (a frame that sees no key: zeros,
    or NaN); otherwise the difference is described. The window 0 and window >= T probes (no
    padding) say so first."""
    q, k, v, w, causal, pad = probes[i]
    said = _diagnose(got, q, k, v, w, causal, pad)
    if said.mistake in _BANDS and not any(
        all(_gives(fn, probe, band) for probe in probes) for band in _BANDS[said.mistake]
    ):
        said = _difference(got, q, k, v, w, causal, pad)
    T = q.shape[-2]
    if said.mistake is None and (seen := _keys_seen(fn, probes[i])) is not None:
        said = Wrong(f"{said} {seen}", None)
    if pad is None and (w == 0 or w >= T - 1):
        key = "banded-window-itself" if w == 0 else "banded-window-whole"
        return Wrong(say(MESSAGES, key, window=w, T=T, diagnosis=str(said)), said.mistake)
    return said


def _keys_seen(fn: Callable, probe: tuple) -> str | None:
    """Which keys a middle frame attends to, read from ``fn`` run with one-hot values (out is
    then the weights), beside the band's; None if they agree or cannot be read."""
    q, k, _, w, causal, pad = probe
    B, H, T, _ = q.shape
    eye = torch.eye(T, dtype=q.dtype).expand(B, H, T, T)  # value s is the one-hot of key s
    try:
        weights = _call(fn, q.clone(), k.clone(), eye.clone(), w, causal, pad)
    except Exception:  # the reader's code: a failure here says nothing more
        return None
    t = T // 2
    mine = (weights[0, 0, t].abs() > 1e-9).nonzero().flatten().tolist()
    band = _band(T, w, causal, pad)  # (T, T), or (B, 1, T, T) with padding
    right = (band[t] if band.dim() == 2 else band[0, 0, t]).nonzero().flatten().tolist()
    if mine == right:
        return None
    return say(MESSAGES, "banded-keys-seen", t=t, mine=mine, right=right, w=w)


def _gives(fn: Callable, probe: tuple, wrong: Callable) -> bool:
    """Does the band ``wrong(T, w, causal)`` give ``fn``'s output on ``probe``?"""
    q, k, v, w, causal, pad = probe
    try:
        got = _call(fn, q.clone(), k.clone(), v.clone(), w, causal, pad)
    except Exception:  # the reader's code: any failure is "no"
        return False
    return _same(got.nan_to_num(0.0), _masked(q, k, v, _band(q.shape[-2], w, causal, pad, wrong)))


@check("banded local attention", call="fn(q, k, v, window, causal=False, key_padding=None)")
def check_banded_attention(fn: Callable[..., Tensor]) -> Verdict:
    """``fn(q, k, v, window, causal=False, key_padding=None) -> out``: attention of each frame
    ``t`` to the keys ``s`` with ``|t - s| <= window`` (and ``s <= t`` when ``causal``), padding
    frames (``key_padding`` False) never seen; q, k ``(B, H, T, Dh)``, v ``(B, H, T, Dv)``,
    out ``(B, H, T, Dv)``; a frame that sees no key gets zeros. It must equal the book's full
    ``attention`` under ``band_mask(T, window, causal) & key_padding[:, None, None, :]``."""
    B, H, T, Dh, Dv = 2, 2, 11, 8, 6  # Dv is no band's number of keys (5, 4, 2, 1)
    q, k, v = (
        randn(B, H, T, Dh),
        randn(B, H, T, Dh, seed=1),
        randn(B, H, T, Dv, seed=2),
    )
    real = torch.ones(B, T, dtype=torch.bool)
    real[1, 7:] = False  # sequence 1 ends at frame 6: frame 10's keys (8 .. 10) are padding
    probes = [
        (q, k, v, 2, False, None),  # the band, both sides
        (q, k, v, 3, True, None),  # the causal band
        (q, k, v, 2, False, real),  # with padding; one frame sees no key at all
        (q, k, v, 1, True, real),
        (q, k, v, 0, False, real),  # itself only: a padding frame sees no key
    ]
    short = ((0, 6), (8, 5), (5, 6))  # (window, T): itself only; the whole sequence
    probes += [(q[..., :n, :], k[..., :n, :], v[..., :n, :], w, False, None) for w, n in short]
    for i, (qs, ks, vs, window, causal, pad) in enumerate(probes):
        got = _call(fn, qs.clone(), ks.clone(), vs.clone(), window, causal, pad)
        if not _same(got, _masked(qs, ks, vs, _band(qs.shape[-2], window, causal, pad))):
            raise _confirmed(fn, probes, i, got)
    # gradients, including through the frame that sees no key
    mine = [t.clone().requires_grad_() for t in (q, k, v)]
    ours = [t.clone().requires_grad_() for t in (q, k, v)]
    grad_out = randn(B, H, T, Dv, seed=3)
    out = _call(fn, *mine, 2, False, real)
    (out * grad_out).sum().backward()
    (_masked(*ours, _band(T, 2, False, real)) * grad_out).sum().backward()
    for name, a, b in zip("qkv", mine, ours, strict=True):
        if a.grad is None:
            raise Wrong.named(GRADIENTS, "gradient-detached", name=name)
        if torch.isnan(a.grad).any():
            raise Wrong.differs(MESSAGES, "banded-gradient-nan", name=name)
        if not _same(a.grad.to(out.dtype), b.grad):  # to the output's rounding
            raise Wrong.differs(MESSAGES, "banded-gradient-differs", name=name)
    expect_dtype_kept(out, q, "out")
    return (
        "equal to full attention under the band mask: both ends of the band, causal or not, "
        "the edges of the sequence, padding, window 0 and window >= T, and the gradients."
    )
