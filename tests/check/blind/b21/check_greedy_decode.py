"""Blind set B21, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_greedy_decode"


@torch.no_grad()
def _greedy(model, src: Tensor, max_len: int, bos_id: int, eos_id: int, slip: str = "") -> Tensor:
    """A greedy search without a cache: the whole prefix is fed at every step. ``slip`` names
    the one thing a case does wrong (the rest is right)."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    cache = model.new_cache() if slip == "cache_full_prefix" else None
    steps = max_len - 1 if slip == "one_short" else max_len
    for _ in range(steps):
        fed = tokens[:, -1:] if slip == "last_token_only" else tokens
        logits = model.decode(fed, memory, src, cache)  # (B, t, V)
        logits = logits[:, 0] if slip == "first_position" else logits[:, -1]
        if slip == "softmax_over_batch":
            logits = logits.softmax(dim=0)
        if slip == "pad_sliced":
            next_token = logits[:, pad + 1 :].argmax(dim=-1)  # PAD is id 0: look past it
        else:
            if slip != "pad_allowed":
                logits = logits.clone()
                logits[:, pad] = float("-inf")
            next_token = logits.argmax(dim=-1)  # (B,)
        if slip != "no_pad_after_end":
            next_token = torch.where(done, torch.full_like(next_token, pad), next_token)
        if slip == "done_from_last":
            done = tokens[:, -1] == eos_id
            next_token = torch.where(done, torch.full_like(next_token, pad), next_token)
            done = done | (next_token == eos_id)
        else:
            done = done | (next_token == eos_id)
        if slip == "eos_dropped":
            next_token = torch.where(next_token == eos_id, pad, next_token)
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)
        if done.any() if slip == "stop_on_any" else done.all():
            break
    return tokens if slip == "keeps_bos" else tokens[:, 1:]


# ---------------------------------------------------------------- mistakes


def greedy_pad_allowed(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "pad_allowed")


def greedy_pad_sliced(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "pad_sliced")


def greedy_eos_dropped(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "eos_dropped")


def greedy_no_pad_after_end(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "no_pad_after_end")


def greedy_keeps_bos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "keeps_bos")


def greedy_one_short(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "one_short")


def greedy_last_token_only(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "last_token_only")


def greedy_first_position(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "first_position")


def greedy_stop_on_any(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "stop_on_any")


def greedy_done_from_last(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "done_from_last")


def greedy_softmax_over_batch(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "softmax_over_batch")


def greedy_cache_full_prefix(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "cache_full_prefix")


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_cached(model, src, max_len, bos_id, eos_id):
    """One new token per step through the model's key/value cache, finished rows fed PAD."""
    model.eval()
    pad = model.config.pad_id
    B = src.size(0)
    memory = model.encode(src)
    cache = model.new_cache()
    out = torch.full((B, max_len), pad, dtype=torch.long)
    last = torch.full((B, 1), bos_id, dtype=torch.long)
    finished = torch.zeros(B, dtype=torch.bool)
    n = 0
    for t in range(max_len):
        logits = model.decode(last, memory, src, cache, last_only=True)[:, -1]
        logits = logits.index_fill(1, torch.tensor([pad]), float("-inf"))
        nxt = logits.topk(1, dim=-1).indices.squeeze(1)
        nxt = nxt.masked_fill(finished, pad)
        out[:, t] = nxt
        n = t + 1
        finished |= nxt == eos_id
        last = nxt[:, None]
        if bool(finished.all()):
            break
    return out[:, :n]


@torch.no_grad()
def greedy_one_by_one(model, src, max_len, bos_id, eos_id):
    """Each sentence decoded alone (its own padding cut off), then padded to the longest."""
    model.eval()
    pad = model.config.pad_id
    outputs = []
    for row in src:
        s = row[None]
        memory = model.encode(s)
        ys = [bos_id]
        for _ in range(max_len):
            tgt = torch.tensor([ys])
            log_p = model.decode(tgt, memory, s)[0, -1].log_softmax(-1)
            log_p[pad] = float("-inf")
            ys.append(int(log_p.argmax()))
            if ys[-1] == eos_id:
                break
        outputs.append(ys[1:])
    width = max(len(o) for o in outputs)
    return torch.tensor([o + [pad] * (width - len(o)) for o in outputs], dtype=torch.long)


@torch.no_grad()
def greedy_while_loop(model, src, max_len, bos_id, eos_id):
    """A while loop over the prefix length; alive rows tracked as a float mask."""
    was = model.training
    model.train(False)
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((len(src), 1), bos_id, dtype=torch.long)
    alive = torch.ones(len(src))
    while ys.shape[1] <= max_len and alive.sum() > 0:
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = -float("inf")
        best = torch.max(logits, dim=-1).indices
        best = torch.where(alive > 0, best, torch.tensor(pad))
        ys = torch.cat([ys, best.unsqueeze(1)], 1)
        alive = alive * (best != eos_id).float()
    model.train(was)
    return ys[:, 1:]


CASES = [
    BlindCase(
        CHECK,
        "pad_allowed",
        greedy_pad_allowed,
        "mistake",
        "I took the plain argmax: PAD can be chosen",
    ),
    BlindCase(
        CHECK,
        "pad_sliced_off",
        greedy_pad_sliced,
        "mistake",
        "argmax of logits[:, 1:] to skip PAD, without adding the 1 back to the index",
    ),
    BlindCase(
        CHECK,
        "eos_dropped",
        greedy_eos_dropped,
        "mistake",
        "I wrote PAD where EOS was chosen, so EOS is not in the output",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_end",
        greedy_no_pad_after_end,
        "mistake",
        "finished sentences keep generating tokens after their EOS",
    ),
    BlindCase(
        CHECK, "keeps_bos", greedy_keeps_bos, "mistake", "I returned the tokens with BOS in front"
    ),
    BlindCase(
        CHECK,
        "one_short",
        greedy_one_short,
        "mistake",
        "range(max_len - 1): counted BOS in max_len",
    ),
    BlindCase(
        CHECK,
        "last_token_only",
        greedy_last_token_only,
        "mistake",
        "fed only the last token each step, without a cache",
    ),
    BlindCase(
        CHECK,
        "first_position",
        greedy_first_position,
        "mistake",
        "took logits[:, 0] (the prediction after BOS) at every step",
    ),
    BlindCase(
        CHECK,
        "stop_on_any",
        greedy_stop_on_any,
        "mistake",
        "I stop the loop as soon as any sentence has produced EOS",
    ),
    BlindCase(
        CHECK,
        "done_from_last",
        greedy_done_from_last,
        "mistake",
        "finished = last token is EOS, recomputed each step, so a row restarts after PAD",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        greedy_softmax_over_batch,
        "mistake",
        "softmax(dim=0) before the argmax, across the batch",
    ),
    BlindCase(
        CHECK,
        "cache_full_prefix",
        greedy_cache_full_prefix,
        "mistake",
        "I made a cache but still fed the whole prefix every step",
    ),
    BlindCase(
        CHECK,
        "cached_one_token",
        greedy_cached,
        "correct",
        "the model's KV cache, one token per step, into a preallocated output",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_by_one,
        "correct",
        "each sentence decoded alone with Python lists, padded at the end",
    ),
    BlindCase(
        CHECK,
        "while_loop_alive_mask",
        greedy_while_loop,
        "correct",
        "a while loop with a float alive mask, no cache",
    ),
]
