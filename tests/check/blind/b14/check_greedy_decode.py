"""Blind set B14, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_greedy_decode"


def _trim(out: Tensor, steps: int) -> Tensor:
    return out[:, :steps]


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def greedy_pad_allowed(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = model.decode(ys, memory, src)[:, -1].argmax(-1)  # PAD can win the argmax
        nxt = nxt.masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_stop_at_first_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        ys = torch.cat([ys, nxt[:, None]], 1)
        if (nxt == eos_id).any():  # stop as soon as a sentence ends
            break
    out = ys[:, 1:]
    ended = (out == eos_id).long().cumsum(1) - (out == eos_id).long() > 0
    return out.masked_fill(ended, pad)


@torch.no_grad()
def greedy_no_pad_after_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    seen = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)  # finished sentences keep generating
        ys = torch.cat([ys, nxt[:, None]], 1)
        seen |= nxt == eos_id
        if seen.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_keeps_bos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys  # BOS still in front


@torch.no_grad()
def greedy_train_mode(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    pad = model.config.pad_id  # no model.eval(): dropout stays on
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_eos_dropped(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        done |= nxt == eos_id
        nxt = nxt.masked_fill(done, pad)  # EOS is not a word: write PAD instead
        ys = torch.cat([ys, nxt[:, None]], 1)
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_last_token_only(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys[:, -1:], memory, src)[:, -1]  # only the newest token, no cache
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_first_position(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, 0]  # the logits of position 0
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_one_short(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    while ys.shape[1] < max_len:  # counted BOS among the max_len tokens
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_finished_fed_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, eos_id)  # finished rows repeat EOS
        ys = torch.cat([ys, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys[:, 1:]


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_whole_prefix(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """No cache: the whole prefix every step, every sentence kept in the batch."""
    was = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        probs = model.decode(ys, memory, src)[:, -1].softmax(-1)
        probs[:, pad] = 0.0
        nxt = probs.argmax(-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], 1)
        done = done | (nxt == eos_id)
        if bool(done.all()):
            break
    model.train(was)
    return ys[:, 1:]


@torch.no_grad()
def greedy_cached(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """With model.new_cache(): one token fed per step, a preallocated output."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    out = torch.full((B, max_len), pad, dtype=torch.long)
    memory = model.encode(src)
    cache = model.new_cache()
    last = torch.full((B, 1), bos_id, dtype=torch.long)
    alive = torch.ones(B, dtype=torch.bool)
    steps = 0
    for t in range(max_len):
        logits = model.decode(last, memory, src, cache)[:, -1]
        logits = logits.masked_fill(torch.arange(logits.shape[-1]) == pad, float("-inf"))
        nxt = torch.where(alive, logits.argmax(-1), torch.full_like(alive, pad, dtype=torch.long))
        out[:, t] = nxt
        steps = t + 1
        alive &= nxt != eos_id
        if not alive.any():
            break
        last = nxt[:, None]
    return _trim(out, steps)


@torch.no_grad()
def greedy_topk_list(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """Python lists per sentence, topk(2) to skip PAD, padded at the end."""
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    B = src.shape[0]
    hyps = [[bos_id] for _ in range(B)]
    finished = [False] * B
    for _ in range(max_len):
        ys = torch.tensor([h + [pad] * 0 for h in hyps])
        logits = model.decode(ys, memory, src)[:, -1]
        top = logits.topk(2, dim=-1).indices
        for b in range(B):
            if finished[b]:
                hyps[b].append(pad)
                continue
            tok = int(top[b, 0]) if int(top[b, 0]) != pad else int(top[b, 1])
            hyps[b].append(tok)
            finished[b] = tok == eos_id
        if all(finished):
            break
    return torch.tensor([h[1:] for h in hyps], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "pad_not_excluded",
        greedy_pad_allowed,
        "mistake",
        "I took the plain argmax; I did not forbid PAD.",
    ),
    BlindCase(
        CHECK,
        "stop_at_first_eos",
        greedy_stop_at_first_eos,
        "mistake",
        "I stop the loop as soon as any sentence outputs EOS (any instead of all).",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_eos",
        greedy_no_pad_after_eos,
        "mistake",
        "Finished sentences keep generating tokens after their EOS instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "bos_returned",
        greedy_keeps_bos,
        "mistake",
        "I return the whole sequence, BOS included.",
    ),
    BlindCase(
        CHECK,
        "no_eval_mode",
        greedy_train_mode,
        "mistake",
        "I forgot model.eval(), so dropout is on while decoding.",
    ),
    BlindCase(
        CHECK,
        "eos_replaced_by_pad",
        greedy_eos_dropped,
        "mistake",
        "When a sentence outputs EOS I write PAD instead, so EOS never appears.",
    ),
    BlindCase(
        CHECK,
        "feeds_last_token_without_cache",
        greedy_last_token_only,
        "mistake",
        "I feed only the newest token to decode(), without a cache.",
    ),
    BlindCase(
        CHECK,
        "logits_of_first_position",
        greedy_first_position,
        "mistake",
        "I took decode(...)[:, 0], the first position's logits, every step.",
    ),
    BlindCase(
        CHECK,
        "one_token_short",
        greedy_one_short,
        "mistake",
        "My loop counts BOS in max_len, so at most max_len - 1 tokens come out.",
    ),
    BlindCase(
        CHECK,
        "finished_rows_repeat_eos",
        greedy_finished_fed_eos,
        "mistake",
        "After a sentence ends I fill its row with EOS, not PAD.",
    ),
    BlindCase(
        CHECK,
        "whole_prefix_softmax",
        greedy_whole_prefix,
        "correct",
        "No cache: re-decodes the prefix, argmax over softmax probs with PAD set to 0.",
    ),
    BlindCase(
        CHECK,
        "cached_preallocated",
        greedy_cached,
        "correct",
        "Uses model.new_cache(), one token per step, preallocated output trimmed.",
    ),
    BlindCase(
        CHECK,
        "python_lists_topk",
        greedy_topk_list,
        "correct",
        "Python lists per sentence, topk(2) to skip PAD.",
    ),
]
