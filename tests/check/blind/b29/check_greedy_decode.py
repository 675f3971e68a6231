"""Blind set B29, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_greedy_decode"


def _next_token(logits: Tensor, pad: int) -> Tensor:
    """The most probable token that is not PAD, for logits ``(B, V)``."""
    logits = logits.clone()
    logits[:, pad] = float("-inf")
    return logits.argmax(dim=-1)


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
        nxt = logits.argmax(dim=-1)  # the most probable token
        nxt = torch.where(done, pad, nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_bos_kept(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = _next_token(model.decode(tokens, memory, src)[:, -1], pad)
        nxt = torch.where(done, pad, nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens  # the whole decoded sequence


@torch.no_grad()
def greedy_eos_padded(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = _next_token(model.decode(tokens, memory, src)[:, -1], pad)
        done |= nxt == eos_id
        nxt = torch.where(done, pad, nxt)  # finished rows get PAD
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_runs_on(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    seen_eos = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = _next_token(model.decode(tokens, memory, src)[:, -1], pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        seen_eos |= nxt == eos_id
        if seen_eos.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_stop_at_first_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        nxt = _next_token(model.decode(tokens, memory, src)[:, -1], pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        if (nxt == eos_id).any():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_one_short(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len - 1):  # BOS already takes one place
        nxt = _next_token(model.decode(tokens, memory, src)[:, -1], pad)
        nxt = torch.where(done, pad, nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_first_position(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = _next_token(model.decode(tokens, memory, src)[:, 0], pad)
        nxt = torch.where(done, pad, nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_no_eval(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    pad = model.config.pad_id  # no_grad is enough, I thought
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = _next_token(model.decode(tokens, memory, src)[:, -1], pad)
        nxt = torch.where(done, pad, nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_eval_after_encode(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    pad = model.config.pad_id
    memory = model.encode(src)
    was_training = model.training
    model.eval()  # decoding starts here
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = _next_token(model.decode(tokens, memory, src)[:, -1], pad)
        nxt = torch.where(done, pad, nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
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
        logits = model.decode(tokens, memory, src, cache)[:, -1]  # the cache makes it fast
        nxt = torch.where(done, pad, _next_token(logits, pad))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_one_too_many(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    step = 0
    while step <= max_len and not done.all():  # up to and including max_len
        nxt = _next_token(model.decode(tokens, memory, src)[:, -1], pad)
        nxt = torch.where(done, pad, nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        step += 1
    return tokens[:, 1:]


@torch.no_grad()
def greedy_paper_limit(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    lengths = (src != pad).sum(dim=1)
    limits = (lengths + 50).clamp(max=model.config.max_len)  # section 6.1: input length + 50
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for t in range(1, int(limits.max()) + 1):
        nxt = torch.where(done, pad, _next_token(model.decode(tokens, memory, src)[:, -1], pad))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= (nxt == eos_id) | (t >= limits)
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_memory_not_dropped(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    out = torch.full((B, max_len + 1), pad, dtype=torch.long)
    out[:, 0] = bos_id
    open_rows = torch.arange(B)
    t = 0
    for t in range(1, max_len + 1):
        logits = model.decode(out[open_rows, :t], memory, src)[:, -1]  # memory of all rows
        nxt = _next_token(logits, pad)
        out[open_rows, t] = nxt
        open_rows = open_rows[nxt != eos_id]  # finished sentences leave the batch
        if len(open_rows) == 0:
            break
    return out[:, 1 : t + 1]


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_full_prefix(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """Every row stays in the batch; the whole prefix is fed at every step."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        nxt = _next_token(model.decode(tokens, memory, src)[:, -1], pad)
        nxt = nxt.masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt.unsqueeze(1)], dim=1)
        done = done | (nxt == eos_id)
        if bool(done.all()):
            break
    model.train(was_training)
    return tokens[:, 1:]


def greedy_with_cache(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """One new token per step with the model's key/value cache; finished rows are fed PAD."""
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            pad = model.config.pad_id
            B = src.shape[0]
            memory = model.encode(src)
            cache = model.new_cache()
            last = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
            finished = torch.zeros(B, dtype=torch.bool, device=src.device)
            pieces = []
            for _ in range(max_len):
                logits = model.decode(last, memory, src, cache, last_only=True)[:, -1]
                logits[:, pad] = float("-inf")
                nxt = torch.where(finished, torch.full_like(last[:, 0], pad), logits.argmax(-1))
                pieces.append(nxt)
                finished |= nxt == eos_id
                last = nxt[:, None]
                if finished.all():
                    break
            return torch.stack(pieces, dim=1)
    finally:
        model.train(was_training)


@torch.no_grad()
def greedy_one_by_one(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """Each sentence decoded alone with Python lists, then padded to the longest output."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    outputs = []
    for row in src:
        one = row[None]  # (1, S), its own padding kept
        memory = model.encode(one)
        ids = [bos_id]
        while len(ids) - 1 < max_len:
            logits = model.decode(torch.tensor([ids], device=src.device), memory, one)[0, -1]
            logits[pad] = float("-inf")
            ids.append(int(logits.argmax()))
            if ids[-1] == eos_id:
                break
        outputs.append(ids[1:])
    model.train(was_training)
    width = max(len(o) for o in outputs)
    return torch.tensor([o + [pad] * (width - len(o)) for o in outputs], device=src.device)


def greedy_via_forward(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """model(src, prefix) at every step (the teacher-forcing call), source re-encoded each time;
    PAD masked with a large negative number instead of -inf."""
    mode = model.training
    model.eval()
    pad = model.config.pad_id
    prefix = src.new_full((src.size(0), 1), bos_id)
    alive = torch.ones(src.size(0), dtype=torch.bool, device=src.device)
    with torch.no_grad():
        for _ in range(max_len):
            scores = model(src, prefix)[:, -1, :]
            scores[:, pad] = -1e30
            best = scores.argmax(dim=1)
            best[~alive] = pad
            prefix = torch.cat((prefix, best[:, None]), dim=1)
            alive &= best != eos_id
            if not alive.any():
                break
    model.train(mode)
    return prefix[:, 1:]


CASES = [
    BlindCase(
        CHECK,
        "pad_not_excluded",
        greedy_pad_allowed,
        "mistake",
        "I took the argmax over the whole vocabulary, PAD included.",
    ),
    BlindCase(
        CHECK,
        "bos_kept",
        greedy_bos_kept,
        "mistake",
        "I returned the decoded sequence with its BOS in front.",
    ),
    BlindCase(
        CHECK,
        "eos_replaced_by_pad",
        greedy_eos_padded,
        "mistake",
        "I marked the row finished before writing the token, so the EOS itself became PAD.",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_end",
        greedy_runs_on,
        "mistake",
        "A sentence that produced EOS keeps generating tokens until every sentence is done; I "
        "did not put PAD after its end.",
    ),
    BlindCase(
        CHECK,
        "stop_at_first_eos",
        greedy_stop_at_first_eos,
        "mistake",
        "I stopped the loop as soon as any sentence produced EOS.",
    ),
    BlindCase(
        CHECK,
        "one_token_short",
        greedy_one_short,
        "mistake",
        "I looped max_len - 1 times, counting BOS as one of the max_len tokens.",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position,
        "mistake",
        "I took the logits of position 0, decode(...)[:, 0], instead of the last position.",
    ),
    BlindCase(
        CHECK,
        "no_eval_mode",
        greedy_no_eval,
        "mistake",
        "I used torch.no_grad() but never switched the model to eval mode, so dropout stays on.",
    ),
    BlindCase(
        CHECK,
        "eval_after_encode",
        greedy_eval_after_encode,
        "mistake",
        "I called model.eval() after model.encode(src), so the source is encoded with dropout.",
    ),
    BlindCase(
        CHECK,
        "cache_fed_whole_prefix",
        greedy_cache_whole_prefix,
        "mistake",
        "I passed a cache from model.new_cache() but kept feeding the whole prefix at every step.",
    ),
    BlindCase(
        CHECK,
        "one_token_too_many",
        greedy_one_too_many,
        "mistake",
        "My while loop runs while step <= max_len, so a sentence without EOS gets max_len + 1 "
        "tokens.",
    ),
    BlindCase(
        CHECK,
        "max_len_ignored",
        greedy_paper_limit,
        "mistake",
        "I used the paper's limit, source length + 50, and ignored the max_len argument.",
    ),
    BlindCase(
        CHECK,
        "memory_not_dropped",
        greedy_memory_not_dropped,
        "mistake",
        "Finished sentences leave the batch of tokens, but I forgot to drop their rows from the "
        "memory and from src.",
    ),
    BlindCase(
        CHECK,
        "full_prefix_all_rows",
        greedy_full_prefix,
        "correct",
        "No cache and no rows dropped: the whole prefix is fed every step, finished rows get "
        "PAD via masked_fill.",
    ),
    BlindCase(
        CHECK,
        "cache_all_rows",
        greedy_with_cache,
        "correct",
        "The model's cache with one token per step, finished rows fed PAD, outputs stacked from "
        "a list; inference_mode and try/finally.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_by_one,
        "correct",
        "Each sentence decoded alone with Python lists, then padded to the longest output.",
    ),
    BlindCase(
        CHECK,
        "teacher_forcing_call",
        greedy_via_forward,
        "correct",
        "model(src, prefix) at every step (re-encoding the source each time), PAD set to -1e30.",
    ),
]
