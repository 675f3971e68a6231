"""Blind set B12, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_greedy_decode"


def _greedy(
    model,
    src,
    max_len,
    bos_id,
    eos_id,
    *,
    exclude_pad=True,
    keep_bos=False,
    keep_eos=True,
    pad_after=True,
    steps_fix=0,
    position=-1,
    last_only_fed=False,
    eval_mode=True,
    stop_on_any=False,
):
    """A full-prefix greedy search with switches for the mistakes."""
    if eval_mode:
        model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len + steps_fix):
        fed = tokens[:, -1:] if last_only_fed else tokens
        logits = model.decode(fed, memory, src)[:, position]  # (B, V)
        if exclude_pad:
            logits = logits.clone()
            logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        is_eos = nxt == eos_id
        if pad_after:
            nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        if not keep_eos:
            nxt = torch.where(is_eos & ~done, torch.full_like(nxt, pad), nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done = done | is_eos
        if stop_on_any and done.any():
            break
        if done.all():
            break
    return tokens if keep_bos else tokens[:, 1:]


# ---------------------------------------------------------------- mistakes


def greedy_pad_allowed(model: object, src: Tensor, max_len: int, bos_id: int, eos_id: int):
    return _greedy(model, src, max_len, bos_id, eos_id, exclude_pad=False)


def greedy_keeps_bos(model: object, src: Tensor, max_len: int, bos_id: int, eos_id: int):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_bos=True)


def greedy_drops_eos(model: object, src: Tensor, max_len: int, bos_id: int, eos_id: int):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_eos=False)


def greedy_no_pad_after_end(model: object, src: Tensor, max_len: int, bos_id: int, eos_id: int):
    return _greedy(model, src, max_len, bos_id, eos_id, pad_after=False)


def greedy_one_step_short(model: object, src: Tensor, max_len: int, bos_id: int, eos_id: int):
    return _greedy(model, src, max_len, bos_id, eos_id, steps_fix=-1)


def greedy_first_position(model: object, src: Tensor, max_len: int, bos_id: int, eos_id: int):
    return _greedy(model, src, max_len, bos_id, eos_id, position=0)


def greedy_last_token_only(model: object, src: Tensor, max_len: int, bos_id: int, eos_id: int):
    return _greedy(model, src, max_len, bos_id, eos_id, last_only_fed=True)


def greedy_no_eval(model: object, src: Tensor, max_len: int, bos_id: int, eos_id: int):
    return _greedy(model, src, max_len, bos_id, eos_id, eval_mode=False)


def greedy_stop_on_first_eos(model: object, src: Tensor, max_len: int, bos_id: int, eos_id: int):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_on_any=True)


def greedy_softmax_over_batch(model: object, src: Tensor, max_len: int, bos_id: int, eos_id: int):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        probs = logits.softmax(0)  # softmax over dim 0
        probs[:, pad] = 0.0
        nxt = probs.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


# ---------------------------------------------------------------- correct variants


def greedy_full_prefix(model: object, src: Tensor, max_len: int, bos_id: int, eos_id: int):
    """Recomputes the whole prefix every step; finished rows get PAD."""
    return _greedy(model, src, max_len, bos_id, eos_id)


@torch.no_grad()
def greedy_with_cache(model: object, src: Tensor, max_len: int, bos_id: int, eos_id: int):
    """The model's key/value cache, one token fed per step; masked_fill for PAD."""
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    cache = model.new_cache()
    B = src.shape[0]
    last = torch.full((B, 1), bos_id, dtype=torch.long)
    out, done = [], torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(last, memory, src, cache, last_only=True)[:, -1]
        ban = torch.zeros_like(logits, dtype=torch.bool)
        ban[:, pad] = True
        nxt = logits.masked_fill(ban, float("-inf")).argmax(-1)
        nxt = nxt.masked_fill(done, pad)
        out.append(nxt)
        done = done | (nxt == eos_id)
        if bool(done.all()):
            break
        last = nxt[:, None]
    return torch.stack(out, dim=1)


def greedy_one_by_one(
    model: object, src: Tensor, max_len: int, bos_id: int, eos_id: int, verbose: bool = False
):
    """Each sentence decoded alone (its own padding stripped), then padded to a common length."""
    model.eval()
    pad = model.config.pad_id
    rows = []
    for b in range(src.shape[0]):
        s = src[b : b + 1]
        s = s[:, : int((s != pad).sum())] if bool((s == pad).any()) else s
        mem = model.encode(s)
        ys = [bos_id]
        for _ in range(max_len):
            logits = model.decode(torch.tensor([ys]), mem, s)[0, -1].clone()
            logits[pad] = float("-inf")
            ys.append(int(logits.argmax()))
            if ys[-1] == eos_id:
                break
        rows.append(ys[1:])
    T = max(len(r) for r in rows)
    return torch.tensor([r + [pad] * (T - len(r)) for r in rows], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "pad_not_excluded",
        greedy_pad_allowed,
        "mistake",
        "I took the argmax over every token, PAD included.",
    ),
    BlindCase(
        CHECK,
        "keeps_bos",
        greedy_keeps_bos,
        "mistake",
        "I returned the tokens with the BOS column in front.",
    ),
    BlindCase(
        CHECK,
        "eos_dropped",
        greedy_drops_eos,
        "mistake",
        "I wrote PAD instead of the EOS that ends a sentence.",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_end",
        greedy_no_pad_after_end,
        "mistake",
        "A sentence that ended keeps getting its argmax tokens instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        greedy_one_step_short,
        "mistake",
        "range(max_len - 1): I thought BOS counted as one of the max_len tokens.",
    ),
    BlindCase(
        CHECK,
        "logits_of_first_position",
        greedy_first_position,
        "mistake",
        "I took logits[:, 0] instead of the last position's logits.",
    ),
    BlindCase(
        CHECK,
        "feeds_last_token_only",
        greedy_last_token_only,
        "mistake",
        "I fed only the last token to decode, without a cache, so the prefix is lost.",
    ),
    BlindCase(
        CHECK,
        "no_eval_mode",
        greedy_no_eval,
        "mistake",
        "I did not call model.eval(), so dropout is on while decoding.",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_eos",
        greedy_stop_on_first_eos,
        "mistake",
        "I stopped the loop when any sentence produced EOS, not when all had.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        greedy_softmax_over_batch,
        "mistake",
        "I took softmax(0) over the batch before the argmax.",
    ),
    BlindCase(
        CHECK,
        "full_prefix",
        greedy_full_prefix,
        "correct",
        "No cache: the whole prefix is decoded every step.",
    ),
    BlindCase(
        CHECK,
        "with_kv_cache",
        greedy_with_cache,
        "correct",
        "model.new_cache() and one token per step; the outputs stacked at the end.",
    ),
    BlindCase(
        CHECK,
        "sentence_by_sentence",
        greedy_one_by_one,
        "correct",
        "Each sentence decoded alone with Python lists, then padded; extra verbose arg.",
    ),
]
