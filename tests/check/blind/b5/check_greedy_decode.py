"""Blind set B5, check_greedy_decode (chapter 15): greedy searches as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_greedy_decode"


def _no_pad(logits: Tensor, pad: int) -> Tensor:
    logits = logits.clone()
    logits[:, pad] = float("-inf")
    return logits


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def greedy_pad_allowed(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        nxt = logits.argmax(-1)  # PAD may win the argmax
        nxt = nxt.masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_runs_on_after_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = _no_pad(model.decode(tokens, memory, src)[:, -1], pad)
        nxt = logits.argmax(-1)  # finished rows keep writing words after their EOS
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_one_short(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    while tokens.shape[1] < max_len:  # BOS counted as one of the max_len tokens
        logits = _no_pad(model.decode(tokens, memory, src)[:, -1], pad)
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_eos_dropped(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = _no_pad(model.decode(tokens, memory, src)[:, -1], pad)
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    out = tokens[:, 1:]
    return out.masked_fill(out == eos_id, pad)  # EOS is not a word, so I removed it


@torch.no_grad()
def greedy_first_position(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = _no_pad(model.decode(tokens, memory, src)[:, 0], pad)  # position 0, not -1
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_cache_whole_prefix(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    cache = model.new_cache()
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        # the cache is passed, but the whole prefix is fed again at every step
        logits = _no_pad(model.decode(tokens, memory, src, cache)[:, -1], pad)
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_stop_at_first_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        logits = _no_pad(model.decode(tokens, memory, src)[:, -1], model.config.pad_id)
        nxt = logits.argmax(-1)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        if (nxt == eos_id).any():  # one sentence ended, so I stopped the batch
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_without_eval(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    pad = model.config.pad_id  # model.eval() forgotten: dropout stays on if it was training
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = _no_pad(model.decode(tokens, memory, src)[:, -1], pad)
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_keeps_bos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = _no_pad(model.decode(tokens, memory, src)[:, -1], pad)
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens  # BOS left at the front


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_recompute_preallocated(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    """No cache: a preallocated output, the whole prefix fed each step, the mode restored."""
    was_training = model.training
    model.eval()
    B, pad = src.shape[0], model.config.pad_id
    out = torch.full((B, max_len + 1), pad, dtype=torch.long, device=src.device)
    out[:, 0] = bos_id
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    memory = model.encode(src)
    steps = 0
    for t in range(1, max_len + 1):
        logits = model.decode(out[:, :t], memory, src)[:, -1].clone()  # (B, V)
        logits[:, pad] = float("-inf")
        best = logits.argmax(dim=-1)
        out[:, t] = torch.where(finished, torch.full_like(best, pad), best)
        finished = finished | (best == eos_id)
        steps = t
        if bool(finished.all()):
            break
    model.train(was_training)
    return out[:, 1 : steps + 1]


@torch.no_grad()
def greedy_with_cache_all_rows(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int, use_cache: bool = True
) -> Tensor:
    """With the model's key/value cache; finished rows stay in the batch and are fed PAD."""
    was_training = model.training
    model.eval()
    try:
        pad = model.config.pad_id
        memory = model.encode(src)
        cache = model.new_cache() if use_cache else None
        generated: list[Tensor] = []
        last = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
        prefix = last
        alive = torch.ones(src.shape[0], dtype=torch.bool, device=src.device)
        for _ in range(max_len):
            fed = last if use_cache else prefix
            scores = model.decode(fed, memory, src, cache, last_only=True)[:, -1]
            scores = scores.index_fill(1, torch.tensor([pad], device=src.device), -torch.inf)
            token = torch.where(alive, scores.argmax(-1), pad)
            generated.append(token)
            alive = alive & (token != eos_id)
            if not alive.any():
                break
            last = token[:, None]
            prefix = torch.cat([prefix, last], dim=1)
        return torch.stack(generated, dim=1)
    finally:
        model.train(was_training)


CASES = [
    BlindCase(
        CHECK,
        "pad_can_be_generated",
        greedy_pad_allowed,
        "mistake",
        "I took the plain argmax of the logits, so PAD can be chosen as a word.",
    ),
    BlindCase(
        CHECK,
        "rows_run_on_after_eos",
        greedy_runs_on_after_eos,
        "mistake",
        "A sentence that produced EOS keeps getting argmax tokens until the whole batch "
        "is done, instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_max_len",
        greedy_one_short,
        "mistake",
        "My loop runs while the sequence with BOS is shorter than max_len, so a sentence "
        "that never ends gets max_len - 1 tokens.",
    ),
    BlindCase(
        CHECK,
        "eos_removed",
        greedy_eos_dropped,
        "mistake",
        "I replaced EOS by PAD in the output, thinking it is not part of the sentence.",
    ),
    BlindCase(
        CHECK,
        "logits_of_position_zero",
        greedy_first_position,
        "mistake",
        "I read the logits at position 0 ([:, 0]) instead of the last fed position.",
    ),
    BlindCase(
        CHECK,
        "cache_fed_whole_prefix",
        greedy_cache_whole_prefix,
        "mistake",
        "I passed a key/value cache to decode but still fed the whole prefix at every "
        "step, so the cache holds every position several times.",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_eos",
        greedy_stop_at_first_eos,
        "mistake",
        "I stop the whole batch as soon as any sentence produces EOS.",
    ),
    BlindCase(
        CHECK,
        "no_eval",
        greedy_without_eval,
        "mistake",
        "I never call model.eval(), so a model in training mode decodes with dropout on.",
    ),
    BlindCase(
        CHECK,
        "bos_returned",
        greedy_keeps_bos,
        "mistake",
        "I return the token tensor with BOS still in column 0.",
    ),
    BlindCase(
        CHECK,
        "recompute_preallocated",
        greedy_recompute_preallocated,
        "correct",
        "No cache: a preallocated (B, max_len + 1) tensor, the whole prefix fed at each "
        "step, the training mode restored at the end.",
    ),
    BlindCase(
        CHECK,
        "cache_all_rows_kept",
        greedy_with_cache_all_rows,
        "correct",
        "The model's cache, one token fed per step; finished rows stay in the batch and "
        "are fed PAD; an optional use_cache argument.",
    ),
]
