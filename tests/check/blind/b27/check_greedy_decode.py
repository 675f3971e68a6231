"""Blind set B27, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_greedy_decode"


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def greedy_keeps_bos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens  # the whole sequence


@torch.no_grad()
def greedy_ignores_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(max_len):  # always max_len tokens; I cut at EOS when printing
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        tokens = torch.cat([tokens, logits.argmax(-1, keepdim=True)], dim=1)
    return tokens[:, 1:]


@torch.no_grad()
def greedy_pad_allowed(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = model.decode(tokens, memory, src)[:, -1].argmax(-1)  # the most probable token
        nxt = nxt.masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_no_eval(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    pad = model.config.pad_id  # no model.eval(): the caller decides the mode
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_one_short(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    while tokens.shape[1] < max_len:  # the sequence may hold max_len tokens
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return tokens[:, 1:]


@torch.no_grad()
def greedy_no_pad_after_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    seen_eos = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        seen_eos |= nxt == eos_id
        if seen_eos.all():
            break
    model.train(was_training)
    return tokens[:, 1:]


@torch.no_grad()
def greedy_drops_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        done |= nxt == eos_id
        nxt = nxt.masked_fill(done, pad)  # the sentence is over: pad from here
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        if done.all():
            break
    model.train(was_training)
    return tokens[:, 1:]


@torch.no_grad()
def greedy_first_position(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, 0]  # (B, V) of the step
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return tokens[:, 1:]


@torch.no_grad()
def greedy_stops_at_first_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        if (nxt == eos_id).any():
            break
    model.train(was_training)
    return tokens[:, 1:]


@torch.no_grad()
def greedy_paper_limit(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    limit = min(src.shape[1] + 50, model.config.max_len)  # the paper: input length + 50
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(limit):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return tokens[:, 1:]


@torch.no_grad()
def greedy_mode_not_restored(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()  # and it stays in eval mode
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_returns_lists(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> list:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    out = []
    for i in range(src.shape[0]):
        s = src[i : i + 1]
        memory = model.encode(s)
        ys = [bos_id]
        for _ in range(max_len):
            logits = model.decode(torch.tensor([ys]), memory, s)[0, -1]
            logits[pad] = float("-inf")
            ys.append(int(logits.argmax()))
            if ys[-1] == eos_id:
                break
        out.append(ys[1:])  # one list of ids per sentence, no padding needed
    model.train(was_training)
    return out


@torch.no_grad()
def greedy_softmax_over_batch(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]  # (B, V)
        probs = logits.softmax(0)
        probs[:, pad] = 0.0
        nxt = probs.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return tokens[:, 1:]


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_recompute(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """No cache: the whole prefix again at every step; finished rows are fed PAD."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1, :].clone()
        logits[:, pad] = float("-inf")
        padding = torch.full_like(finished, pad, dtype=torch.long)
        next_ids = torch.where(finished, padding, logits.argmax(dim=-1))
        tokens = torch.cat([tokens, next_ids.unsqueeze(1)], dim=1)
        finished = finished | (next_ids == eos_id)
        if bool(finished.all()):
            break
    model.train(was_training)
    return tokens[:, 1:]


@torch.no_grad()
def greedy_cached_rows_kept(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """The model's key/value cache, one new token a step; finished rows stay in the batch."""
    was_training = model.training
    model.eval()
    try:
        pad = model.config.pad_id
        B = src.size(0)
        memory = model.encode(src)
        cache = model.new_cache()
        out = []
        last = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
        alive = torch.ones(B, dtype=torch.bool, device=src.device)
        for _ in range(max_len):
            scores = model.decode(last, memory, src, cache, last_only=True)[:, -1]
            scores = scores.index_fill(1, torch.tensor([pad], device=src.device), -float("inf"))
            best = scores.argmax(-1)
            best[~alive] = pad
            out.append(best)
            alive &= best != eos_id
            if not alive.any():
                break
            last = best[:, None]
        return torch.stack(out, dim=1)
    finally:
        model.train(was_training)


@torch.no_grad()
def greedy_one_sentence_at_a_time(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    """Each sentence alone in a Python loop, then padded to the longest output."""
    mode = model.training
    model.eval()
    pad = model.config.pad_id
    outputs = []
    for row in src:
        s = row[None]
        memory = model.encode(s)
        ids = torch.tensor([[bos_id]], device=src.device)
        for _ in range(max_len):
            log_p = model.decode(ids, memory, s)[0, -1].log_softmax(-1)
            log_p[pad] = -float("inf")
            ids = torch.cat([ids, log_p.argmax().view(1, 1)], dim=1)
            if ids[0, -1].item() == eos_id:
                break
        outputs.append(ids[0, 1:])
    model.train(mode)
    width = max(len(o) for o in outputs)
    result = torch.full((len(outputs), width), pad, dtype=torch.long, device=src.device)
    for i, o in enumerate(outputs):
        result[i, : len(o)] = o
    return result


def greedy_forward_calls(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """``model(src, prefix)`` (teacher forcing's call) at every step, under torch.no_grad."""
    pad = model.config.pad_id
    previous = model.training
    model.eval()
    try:
        with torch.no_grad():
            prefix = src.new_full((len(src), 1), bos_id)
            ended = src.new_zeros(len(src), dtype=torch.bool)
            step = 0
            while step < max_len and not ended.all():
                logits = model(src, prefix)[:, -1]
                logits[:, pad] = logits.min() - 1.0  # below every real token
                token = torch.where(ended, pad, logits.argmax(-1))
                prefix = torch.cat((prefix, token[:, None]), 1)
                ended = ended | token.eq(eos_id)
                step += 1
    finally:
        model.train(previous)
    return prefix[:, 1:]


CASES = [
    BlindCase(
        CHECK,
        "keeps_bos",
        greedy_keeps_bos,
        "mistake",
        "I return the whole token tensor, BOS in the first column.",
    ),
    BlindCase(
        CHECK,
        "ignores_eos",
        greedy_ignores_eos,
        "mistake",
        "I always generate max_len tokens and never look at EOS.",
    ),
    BlindCase(
        CHECK,
        "pad_allowed",
        greedy_pad_allowed,
        "mistake",
        "I take the argmax over the whole vocabulary, PAD included.",
    ),
    BlindCase(
        CHECK,
        "no_eval",
        greedy_no_eval,
        "mistake",
        "I did not switch the model to eval mode, so dropout stays on while decoding.",
    ),
    BlindCase(
        CHECK,
        "one_token_short",
        greedy_one_short,
        "mistake",
        "My loop runs while the sequence, BOS included, is shorter than max_len, so at most "
        "max_len - 1 tokens are generated.",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_eos",
        greedy_no_pad_after_eos,
        "mistake",
        "A sentence that has produced EOS keeps getting argmax tokens until every sentence has "
        "ended.",
    ),
    BlindCase(
        CHECK,
        "drops_eos",
        greedy_drops_eos,
        "mistake",
        "When a sentence produces EOS I write PAD in its place, so EOS is not in the output.",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position,
        "mistake",
        "I took logits[:, 0] of decode's output instead of the last position.",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_eos",
        greedy_stops_at_first_eos,
        "mistake",
        "The loop stops as soon as any sentence of the batch produces EOS.",
    ),
    BlindCase(
        CHECK,
        "paper_limit",
        greedy_paper_limit,
        "mistake",
        "I used the paper's limit, the source width + 50, instead of max_len.",
    ),
    BlindCase(
        CHECK,
        "mode_not_restored",
        greedy_mode_not_restored,
        "mistake",
        "I call model.eval() but never switch a training model back to train mode.",
    ),
    BlindCase(
        CHECK,
        "returns_lists",
        greedy_returns_lists,
        "mistake",
        "I decode sentence by sentence and return a list of id lists, without padding.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        greedy_softmax_over_batch,
        "mistake",
        "I took softmax(0) of the (B, V) logits before the argmax.",
    ),
    BlindCase(
        CHECK,
        "recompute_prefix",
        greedy_recompute,
        "correct",
        "No cache: the whole prefix is decoded again at every step; finished rows are fed PAD.",
    ),
    BlindCase(
        CHECK,
        "cache_rows_kept",
        greedy_cached_rows_kept,
        "correct",
        "The model's cache with one new token per step; finished sentences stay in the batch "
        "and get PAD.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_sentence_at_a_time,
        "correct",
        "Each sentence decoded alone in a loop, argmax of log_softmax, then padded to the longest.",
    ),
    BlindCase(
        CHECK,
        "forward_calls",
        greedy_forward_calls,
        "correct",
        "model(src, prefix) at every step inside torch.no_grad, PAD pushed below every logit, "
        "a while loop.",
    ),
]
