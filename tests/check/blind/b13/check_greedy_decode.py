"""Blind set B13, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_greedy_decode"


def _next(model, tokens: Tensor, memory: Tensor, src: Tensor, pad_allowed: bool = False) -> Tensor:
    logits = model.decode(tokens, memory, src)[:, -1]  # (B, V)
    if not pad_allowed:
        logits[:, model.config.pad_id] = float("-inf")
    return logits.argmax(-1)


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def greedy_pad_allowed(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = model.decode(tokens, memory, src)[:, -1].argmax(-1)  # any token
        nxt = nxt.masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_keeps_bos(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = _next(model, tokens, memory, src).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens  # BOS included


@torch.no_grad()
def greedy_no_pad_after_eos(model, src, max_len, bos_id, eos_id):
    model.eval()
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = _next(model, tokens, memory, src)  # finished rows keep generating
        tokens = torch.cat([tokens, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_stops_at_first_eos(model, src, max_len, bos_id, eos_id):
    model.eval()
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        nxt = _next(model, tokens, memory, src)
        tokens = torch.cat([tokens, nxt[:, None]], 1)
        if (nxt == eos_id).any():  # a sentence is done
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_drops_eos(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = _next(model, tokens, memory, src).masked_fill(done, pad)
        done |= nxt == eos_id
        tokens = torch.cat([tokens, nxt.masked_fill(nxt == eos_id, pad)[:, None]], 1)
        if done.all():
            break
    return tokens[:, 1:]  # EOS is not a word


@torch.no_grad()
def greedy_last_token_no_cache(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    out = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = _next(model, out[:, -1:], memory, src).masked_fill(done, pad)  # only the new token
        out = torch.cat([out, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_first_position(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, 0]  # (B, V)
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_one_short(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(1, max_len):  # BOS counts as one of the max_len
        nxt = _next(model, tokens, memory, src).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_no_eval(model, src, max_len, bos_id, eos_id):
    pad = model.config.pad_id  # the model is used in whatever mode it is in
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = _next(model, tokens, memory, src).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_fills_with_eos(model, src, max_len, bos_id, eos_id):
    model.eval()
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = _next(model, tokens, memory, src).masked_fill(done, eos_id)  # repeat EOS
        tokens = torch.cat([tokens, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_full_prefix(model, src, max_len, bos_id, eos_id):
    """Recomputes the whole prefix each step; finished rows filled with PAD."""
    was = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1].log_softmax(-1)
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, torch.full_like(done, pad, dtype=torch.long), logits.argmax(-1))
        tokens = torch.cat([tokens, nxt.unsqueeze(1)], dim=1)
        done = done | (nxt == eos_id)
        if bool(done.all()):
            break
    model.train(was)
    return tokens[:, 1:]


@torch.no_grad()
def greedy_with_cache(model, src, max_len, bos_id, eos_id, use_cache: bool = True):
    """The book's KVCache, one new token per step, finished rows fed PAD."""
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    cache = model.new_cache() if use_cache else None
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        fed = tokens[:, -1:] if use_cache else tokens
        logits = model.decode(fed, memory, src, cache)[:, -1]
        logits = logits.index_fill(1, torch.tensor([pad]), float("-inf"))
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_per_sentence(model, src, max_len, bos_id, eos_id):
    """Each sentence decoded alone (its padding removed), then padded together."""
    model.eval()
    pad = model.config.pad_id
    outs = []
    for row in src:
        s = row[row != pad][None]
        memory = model.encode(s)
        seq = [bos_id]
        while len(seq) <= max_len:
            logits = model.decode(torch.tensor([seq]), memory, s)[0, -1]
            logits[pad] = float("-inf")
            seq.append(int(logits.argmax()))
            if seq[-1] == eos_id:
                break
        outs.append(seq[1:])
    width = max(len(o) for o in outs)
    return torch.tensor([o + [pad] * (width - len(o)) for o in outs], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "pad_not_excluded",
        greedy_pad_allowed,
        "mistake",
        "I took the plain argmax, so PAD can be generated.",
    ),
    BlindCase(
        CHECK,
        "bos_kept",
        greedy_keeps_bos,
        "mistake",
        "I returned the sequence with the BOS at the front.",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_eos",
        greedy_no_pad_after_eos,
        "mistake",
        "Finished sentences keep generating tokens after their EOS.",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_eos",
        greedy_stops_at_first_eos,
        "mistake",
        "I stop the whole batch as soon as one sentence produces EOS.",
    ),
    BlindCase(
        CHECK,
        "eos_dropped",
        greedy_drops_eos,
        "mistake",
        "I replaced the EOS by PAD in the output.",
    ),
    BlindCase(
        CHECK,
        "last_token_without_cache",
        greedy_last_token_no_cache,
        "mistake",
        "I fed only the last token each step, without a cache.",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position,
        "mistake",
        "I took the logits of position 0 instead of the last position.",
    ),
    BlindCase(
        CHECK,
        "one_token_short",
        greedy_one_short,
        "mistake",
        "I counted BOS in max_len, so at most max_len - 1 tokens are generated.",
    ),
    BlindCase(
        CHECK,
        "no_eval_mode",
        greedy_no_eval,
        "mistake",
        "I never switched the model to eval mode, so dropout stays on.",
    ),
    BlindCase(
        CHECK,
        "fills_with_eos",
        greedy_fills_with_eos,
        "mistake",
        "After a sentence's EOS I kept writing EOS instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "full_prefix",
        greedy_full_prefix,
        "correct",
        "Recomputes the prefix every step, log_softmax before argmax, restores train mode.",
    ),
    BlindCase(
        CHECK,
        "with_cache",
        greedy_with_cache,
        "correct",
        "Uses model.new_cache() and feeds one token per step; finished rows fed PAD.",
    ),
    BlindCase(
        CHECK,
        "per_sentence",
        greedy_per_sentence,
        "correct",
        "Decodes each sentence alone in a Python loop and pads the results.",
    ),
]
