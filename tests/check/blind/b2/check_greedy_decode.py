"""Blind cases for check_greedy_decode (chapter 15), written from the chapter's text only."""

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
    keep_bos=False,
    ban_pad=True,
    pad_after_eos=True,
    keep_eos=True,
    stop_on_any=False,
    position=-1,
    steps_delta=0,
):
    """One loop with a switch per slip; the defaults are the right answer."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    with torch.no_grad():
        memory = model.encode(src)
        tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(B, dtype=torch.bool, device=src.device)
        for _ in range(max_len + steps_delta):
            logits = model.decode(tokens, memory, src)[:, position]  # (B, V)
            if ban_pad:
                logits[:, pad] = float("-inf")
            nxt = logits.argmax(dim=-1)
            if pad_after_eos:
                nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
            if not keep_eos:
                nxt = torch.where(nxt == eos_id, torch.full_like(nxt, pad), nxt)
            tokens = torch.cat([tokens, nxt[:, None]], dim=1)
            done = done | (tokens[:, -1] == eos_id) | (logits.argmax(-1) == eos_id)
            if done.any() if stop_on_any else done.all():
                break
    model.train(was_training)
    return tokens if keep_bos else tokens[:, 1:]


# ---- mistakes -------------------------------------------------------------------------------


def bos_kept(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_bos=True)


def pad_not_banned(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, ban_pad=False)


def keeps_going_after_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, pad_after_eos=False)


def eos_dropped(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_eos=False)


def stops_at_first_eos_in_batch(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_on_any=True)


def first_position_logits(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, position=0)


def one_step_short(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, steps_delta=-1)


def one_step_too_many(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, steps_delta=1)


def memory_recomputed_from_tokens(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    with torch.no_grad():
        tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_len):
            memory = model.encode(src)
            logits = model.decode(tokens, memory, tokens)[:, -1]  # passed the target as src
            logits[:, pad] = float("-inf")
            nxt = logits.argmax(-1).masked_fill(done, pad)
            tokens = torch.cat([tokens, nxt[:, None]], 1)
            done |= nxt == eos_id
            if done.all():
                break
    return tokens[:, 1:]


# ---- reader's slip ------------------------------------------------------------------------------


def returns_lists(model, src, max_len, bos_id, eos_id):
    out = _greedy(model, src, max_len, bos_id, eos_id)
    return [row[row != model.config.pad_id].tolist() for row in out]


# ---- correct variants ---------------------------------------------------------------------------


def recompute_prefix(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id)


@torch.no_grad()
def with_cache_and_trim(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    cache = model.new_cache()
    out = torch.full((B, max_len), pad, dtype=torch.long)
    prev = torch.full((B, 1), bos_id, dtype=torch.long)
    finished = torch.zeros(B, dtype=torch.bool)
    for t in range(max_len):
        logits = model.decode(prev, memory, src, cache)[:, -1].clone()
        logits[:, pad] = -float("inf")
        token = logits.argmax(-1)
        out[:, t] = torch.where(finished, pad, token)
        finished = finished | (token == eos_id)
        prev = token[:, None]  # finished rows keep being fed, their output is ignored
    model.train(was_training)
    used = (out != pad).any(dim=0).nonzero()
    width = int(used.max()) + 1 if len(used) else 1
    return out[:, :width]


@torch.no_grad()
def one_sentence_at_a_time(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    rows = []
    for b in range(src.shape[0]):
        s = src[b : b + 1]
        memory = model.encode(s)
        ys = [bos_id]
        for _ in range(max_len):
            logits = model.decode(torch.tensor([ys]), memory, s)[0, -1]
            logits[pad] = float("-inf")
            ys.append(int(logits.argmax()))
            if ys[-1] == eos_id:
                break
        rows.append(ys[1:])
    model.train(was_training)
    width = max(len(r) for r in rows)
    return torch.tensor([r + [pad] * (width - len(r)) for r in rows], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "bos_kept",
        bos_kept,
        "mistake",
        "I returned the token history with the BOS column still in front",
    ),
    BlindCase(
        CHECK,
        "pad_not_banned",
        pad_not_banned,
        "mistake",
        "I took the argmax over every token, PAD included",
    ),
    BlindCase(
        CHECK,
        "keeps_going_after_eos",
        keeps_going_after_eos,
        "mistake",
        "I kept appending argmax tokens after a sentence's EOS instead of PAD",
    ),
    BlindCase(
        CHECK,
        "eos_dropped",
        eos_dropped,
        "mistake",
        "I wrote PAD where a sentence produced EOS, so the EOS is not kept",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_eos_in_batch",
        stops_at_first_eos_in_batch,
        "mistake",
        "I stopped the loop as soon as any sentence of the batch had ended",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        first_position_logits,
        "mistake",
        "I read the logits at position 0 instead of the last fed position",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        one_step_short,
        "mistake",
        "I looped range(max_len - 1), so a sentence gets at most max_len - 1 tokens",
    ),
    BlindCase(
        CHECK,
        "one_step_too_many",
        one_step_too_many,
        "mistake",
        "I looped range(max_len + 1), so a sentence can get max_len + 1 tokens",
    ),
    BlindCase(
        CHECK,
        "memory_recomputed_from_tokens",
        memory_recomputed_from_tokens,
        "mistake",
        "I passed the target tokens as the src argument of decode, so the source padding mask is built from the wrong tensor",
    ),
    BlindCase(
        CHECK,
        "returns_lists",
        returns_lists,
        "mistake",
        "I returned a Python list of token lists without the padding instead of a tensor",
    ),
    BlindCase(
        CHECK,
        "recompute_prefix",
        recompute_prefix,
        "correct",
        "I fed the whole prefix at each step without a cache and banned PAD by setting its logit to -inf",
    ),
    BlindCase(
        CHECK,
        "with_cache_and_trim",
        with_cache_and_trim,
        "correct",
        "I used the key/value cache for all max_len steps and cut the columns after the last non-PAD token",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        one_sentence_at_a_time,
        "correct",
        "I decoded each sentence alone with Python lists and padded the results at the end",
    ),
]
