"""Blind set B11, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_greedy_decode"


@torch.no_grad()
def _greedy(
    model,
    src: Tensor,
    max_len: int,
    bos_id: int,
    eos_id: int,
    *,
    block_pad: bool = True,
    keep_bos: bool = False,
    keep_eos: bool = True,
    pad_after_end: bool = True,
    feed_last_only: bool = False,
    read_position: int = -1,
    steps: int | None = None,
    eval_mode: bool = True,
    stop_when_any: bool = False,
) -> Tensor:
    """A plain greedy loop over the whole prefix; the flags are the slips of the mistakes."""
    if eval_mode:
        model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len if steps is None else steps):
        fed = tokens[:, -1:] if feed_last_only else tokens
        logits = model.decode(fed, memory, src)[:, read_position]  # (B, V)
        if block_pad:
            logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        if pad_after_end:
            nxt = nxt.masked_fill(done, pad)
        is_eos = nxt == eos_id
        if not keep_eos:
            nxt = nxt.masked_fill(is_eos, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done = done | is_eos
        if (stop_when_any and done.any()) or done.all():
            break
    return tokens if keep_bos else tokens[:, 1:]


# ---------------------------------------------------------------- mistakes


def greedy_pad_allowed(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, block_pad=False)


def greedy_keeps_bos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, keep_bos=True)


def greedy_drops_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, keep_eos=False)


def greedy_no_pad_after_end(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, pad_after_end=False)


def greedy_feeds_last_token_without_cache(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, feed_last_only=True)


def greedy_reads_first_position(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, read_position=0)


def greedy_one_step_short(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, steps=max_len - 1)


def greedy_no_eval(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, eval_mode=False)


def greedy_stops_at_first_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, stop_when_any=True)


@torch.no_grad()
def greedy_eos_only_row0(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    memory = model.encode(src)
    out = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        logits = model.decode(out, memory, src)[:, -1]
        logits[:, model.config.pad_id] = float("-inf")
        nxt = logits.argmax(dim=-1, keepdim=True)
        out = torch.cat([out, nxt], dim=1)
        if nxt[0, 0] == eos_id:  # tested on one sentence, so row 0 decides
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_softmax_over_batch(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    out = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    finished = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        probs = model.decode(out, memory, src)[:, -1].softmax(dim=0)  # (B, V)
        probs[:, pad] = 0.0
        nxt = torch.where(finished, pad, probs.argmax(dim=1))
        out = torch.cat([out, nxt[:, None]], dim=1)
        finished |= nxt == eos_id
        if finished.all():
            break
    return out[:, 1:]


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_with_cache_all_rows(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    """With the book's key/value cache, one new token per step; finished rows stay in the batch
    (they are fed PAD) instead of being dropped; the model's mode is restored at the end."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.size(0)
    memory = model.encode(src)
    cache = model.new_cache()
    last = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    pieces = []
    for _ in range(max_len):
        logits = model.decode(last, memory, src, cache=cache, last_only=True)[:, -1]
        logits = logits.clone()
        logits[:, pad] = -torch.inf
        nxt = torch.where(finished, torch.full_like(finished, pad, dtype=torch.long),
                          logits.argmax(-1))  # fmt: skip
        pieces.append(nxt)
        finished = finished | (nxt == eos_id)
        last = nxt[:, None]
        if bool(finished.all()):
            break
    model.train(was_training)
    return torch.stack(pieces, dim=1)


@torch.no_grad()
def greedy_one_sentence_at_a_time(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    """Each sentence decoded alone in a Python loop, a list of ids each, padded at the end."""
    mode = model.training
    model.eval()
    pad = model.config.pad_id
    outputs = []
    for b in range(src.shape[0]):
        one = src[b : b + 1]
        memory = model.encode(one)
        ids = [bos_id]
        while len(ids) - 1 < max_len:
            logits = model.decode(torch.tensor([ids], device=src.device), memory, one)[0, -1]
            logits[pad] = float("-inf")
            ids.append(int(logits.argmax()))
            if ids[-1] == eos_id:
                break
        outputs.append(ids[1:])
    model.train(mode)
    width = max(len(o) for o in outputs)
    return torch.tensor([o + [pad] * (width - len(o)) for o in outputs], device=src.device)


@torch.no_grad()
def greedy_preallocated(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int, temperature: float = 1.0
) -> Tensor:
    """A preallocated (B, max_len + 1) buffer filled in place, cut at the last step; an extra
    temperature argument (which cannot change an argmax) with a default."""
    was = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    buf = torch.full((B, max_len + 1), pad, dtype=torch.long, device=src.device)
    buf[:, 0] = bos_id
    alive = torch.ones(B, dtype=torch.bool, device=src.device)
    memory = model.encode(src)
    t = 0
    for t in range(1, max_len + 1):
        scores = model.decode(buf[:, :t], memory, src)[:, t - 1] / temperature
        scores[:, pad] = float("-inf")
        best = scores.argmax(-1)
        buf[alive, t] = best[alive]
        alive &= best != eos_id
        if not alive.any():
            break
    model.train(was)
    return buf[:, 1 : t + 1]


CASES = [
    BlindCase(
        CHECK,
        "pad_not_blocked",
        greedy_pad_allowed,
        "mistake",
        "I took the argmax over the whole vocabulary, PAD included.",
    ),
    BlindCase(
        CHECK,
        "bos_kept",
        greedy_keeps_bos,
        "mistake",
        "I returned the token tensor with the BOS column still in front.",
    ),
    BlindCase(
        CHECK,
        "eos_dropped",
        greedy_drops_eos,
        "mistake",
        "I replaced the EOS by PAD in the output, since EOS is not a word.",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_end",
        greedy_no_pad_after_end,
        "mistake",
        "A finished sentence keeps getting argmax tokens after its EOS instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "feeds_last_token_without_cache",
        greedy_feeds_last_token_without_cache,
        "mistake",
        "I fed only the newest token to model.decode at each step, as with a cache, but "
        "without passing a cache, so the decoder forgets the prefix.",
    ),
    BlindCase(
        CHECK,
        "reads_first_position",
        greedy_reads_first_position,
        "mistake",
        "I read the logits at position 0 ([:, 0]) instead of the last position.",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        greedy_one_step_short,
        "mistake",
        "My loop is range(1, max_len), so a sentence without EOS gets max_len - 1 tokens.",
    ),
    BlindCase(
        CHECK,
        "no_eval_mode",
        greedy_no_eval,
        "mistake",
        "I forgot model.eval(), so dropout stays on while decoding a model in training mode.",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_eos",
        greedy_stops_at_first_eos,
        "mistake",
        "I break out of the loop as soon as any sentence produces EOS.",
    ),
    BlindCase(
        CHECK,
        "eos_tested_on_row0",
        greedy_eos_only_row0,
        "mistake",
        "I stop when the first sentence produces EOS (nxt[0] == eos_id), written for one "
        "sentence; other rows neither stop nor get PAD after their EOS.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        greedy_softmax_over_batch,
        "mistake",
        "I took softmax(dim=0) before the argmax, over the sentences instead of the vocabulary.",
    ),
    BlindCase(
        CHECK,
        "cache_all_rows",
        greedy_with_cache_all_rows,
        "correct",
        "Uses model.new_cache() and feeds one token per step; finished rows stay in the batch "
        "and get PAD; restores the training mode.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_sentence_at_a_time,
        "correct",
        "Each sentence decoded alone with Python lists, then padded to the longest output.",
    ),
    BlindCase(
        CHECK,
        "preallocated_buffer",
        greedy_preallocated,
        "correct",
        "A preallocated buffer written in place, the whole prefix recomputed each step; an "
        "extra temperature argument with a default.",
    ),
]
