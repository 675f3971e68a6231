"""Blind cases for check_greedy_decode (chapter 15), written from the chapter's text only."""

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
    mask_pad: bool = True,
    keep_eos: bool = True,
    keep_bos: bool = False,
    stop_when_any: bool = False,
    pad_after_end: bool = True,
    position: int = -1,
    steps_short: int = 0,
) -> Tensor:
    """Greedy search that recomputes the whole prefix at every step; the flags are the slips."""
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    ys = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len - steps_short):
        logits = model.decode(ys, memory, src)[:, position]  # (B, V)
        if mask_pad:
            logits[:, pad] = float("-inf")
        nxt = logits.argmax(dim=-1)
        is_eos = nxt == eos_id
        if pad_after_end:
            nxt = torch.where(finished, torch.full_like(nxt, pad), nxt)
        if not keep_eos:
            nxt = torch.where(is_eos, torch.full_like(nxt, pad), nxt)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        finished |= is_eos
        if finished.any() if stop_when_any else finished.all():
            break
    return ys if keep_bos else ys[:, 1:]


def pad_not_masked(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, mask_pad=False)


def eos_not_kept(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_eos=False)


def bos_returned(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_bos=True)


def stops_when_any_ends(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_when_any=True)


def keeps_writing_after_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, pad_after_end=False)


def first_position_logits(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, position=0)


def one_step_short(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, steps_short=1)


def recompute_prefix(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id)


@torch.no_grad()
def with_kv_cache(model, src, max_len, bos_id, eos_id, use_cache: bool = True):
    """Feeds one token per step with the model's cache; finished rows stay in the batch."""
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    cache = model.new_cache() if use_cache else None
    out = []
    last = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    fed = last
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(last if use_cache else fed, memory, src, cache)[:, -1].clone()
        logits.index_fill_(1, torch.tensor([pad], device=src.device), float("-inf"))
        nxt = logits.argmax(dim=-1).masked_fill(done, pad)
        out.append(nxt)
        done = done | (nxt == eos_id)
        last = nxt[:, None]
        fed = torch.cat([fed, last], dim=1)
        if bool(done.all()):
            break
    return torch.stack(out, dim=1)


CASES = [
    BlindCase(
        CHECK,
        "pad_not_masked",
        pad_not_masked,
        "mistake",
        "I took the argmax over the whole vocabulary, PAD included",
    ),
    BlindCase(
        CHECK,
        "eos_not_kept",
        eos_not_kept,
        "mistake",
        "when a sentence produced EOS I wrote PAD in its place, so EOS is not in the output",
    ),
    BlindCase(
        CHECK,
        "bos_returned",
        bos_returned,
        "mistake",
        "I returned the whole sequence, BOS in the first column",
    ),
    BlindCase(
        CHECK,
        "stops_when_any_ends",
        stops_when_any_ends,
        "mistake",
        "I stopped the loop as soon as any sentence of the batch produced EOS",
    ),
    BlindCase(
        CHECK,
        "keeps_writing_after_eos",
        keeps_writing_after_eos,
        "mistake",
        "a finished sentence keeps getting argmax tokens after its EOS instead of PAD",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        first_position_logits,
        "mistake",
        "I read the logits at position 0 instead of the last position",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        one_step_short,
        "mistake",
        "my loop ran range(max_len - 1) times, counting BOS as one of the tokens",
    ),
    BlindCase(
        CHECK,
        "recompute_prefix",
        recompute_prefix,
        "correct",
        "no cache: the whole prefix fed at every step, finished rows kept in the batch "
        "and given PAD",
    ),
    BlindCase(
        CHECK,
        "with_kv_cache",
        with_kv_cache,
        "correct",
        "one token per step through model.new_cache(), every row kept, an optional "
        "use_cache argument",
    ),
]
