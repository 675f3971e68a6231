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
    block_pad: bool = True,
    keep_eos: bool = True,
    stop_rows_at_eos: bool = True,
    after_end: str = "pad",
    position: int = -1,
    steps_less: int = 0,
    stop_when_any_ends: bool = False,
    keep_bos: bool = False,
) -> Tensor:
    """My greedy loop: the whole prefix fed again at every step, every row kept to the end."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len - steps_less):
        logits = model.decode(tokens, memory, src)[:, position]  # (B, V)
        if block_pad:
            logits[:, pad] = float("-inf")
        next_token = logits.argmax(dim=-1)  # (B,)
        filler = pad if after_end == "pad" else eos_id
        next_token = torch.where(done, torch.full_like(next_token, filler), next_token)
        ended = next_token == eos_id
        if not keep_eos:
            next_token = torch.where(ended, torch.full_like(next_token, pad), next_token)
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)
        if stop_rows_at_eos:
            done = done | ended
        if stop_when_any_ends and bool(done.any()):
            break
        if bool(done.all()):
            break
    model.train(was_training)
    return tokens if keep_bos else tokens[:, 1:]


# ---------------------------------------------------------------- mistakes


def pad_not_blocked(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, block_pad=False)


def eos_not_kept(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_eos=False)


def rows_never_stop(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_rows_at_eos=False)


def bos_kept_in_output(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_bos=True)


def one_step_short(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, steps_less=1)


def first_position_logits(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, position=0)


def stops_when_any_sentence_ends(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_when_any_ends=True)


def eos_repeated_after_end(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, after_end="eos")


def returns_tokens_and_logits(model, src, max_len, bos_id, eos_id):
    was_training = model.training
    model.eval()
    with torch.no_grad():
        memory = model.encode(src)
        pad = model.config.pad_id
        tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
        steps = []
        for _ in range(max_len):
            logits = model.decode(tokens, memory, src)[:, -1]
            logits[:, pad] = float("-inf")
            steps.append(logits)
            nxt = logits.argmax(-1).masked_fill(done, pad)
            tokens = torch.cat([tokens, nxt[:, None]], 1)
            done |= nxt == eos_id
            if done.all():
                break
    model.train(was_training)
    return tokens[:, 1:], torch.stack(steps, 1)  # the tokens and the logits of every step


# ---------------------------------------------------------------- correct variants


def recompute_prefix(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id)


@torch.no_grad()
def cached_all_rows(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.size(0)
    memory = model.encode(src)
    cache = model.new_cache()
    out = torch.full((B, max_len), pad, dtype=torch.long, device=src.device)
    last = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    t = 0
    while t < max_len and not finished.all():
        logits = model.decode(last, memory, src, cache)[:, -1].clone()
        logits[:, pad] = -float("inf")
        choice = logits.argmax(-1)
        choice[finished] = pad  # finished rows are fed padding, which the cache masks
        out[:, t] = choice
        finished |= choice == eos_id
        last = choice[:, None]
        t += 1
    model.train(was_training)
    return out[:, :t]


@torch.no_grad()
def one_sentence_at_a_time(model, src, max_len, bos_id, eos_id, use_cache: bool = False):
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    outputs = []
    for row in src:
        s = row[None]  # (1, S), padding and all: it is masked
        memory = model.encode(s)
        ys = [bos_id]
        for _ in range(max_len):
            logits = model.decode(torch.tensor([ys], device=src.device), memory, s)[0, -1]
            logits[pad] = float("-inf")
            ys.append(int(logits.argmax()))
            if ys[-1] == eos_id:
                break
        outputs.append(ys[1:])
    width = max(len(o) for o in outputs)
    out = torch.full((len(outputs), width), pad, dtype=torch.long, device=src.device)
    for i, o in enumerate(outputs):
        out[i, : len(o)] = torch.tensor(o, device=src.device)
    model.train(was_training)
    return out


CASES = [
    BlindCase(
        CHECK,
        "pad_not_blocked",
        pad_not_blocked,
        "mistake",
        "I took the argmax over the whole vocabulary, PAD included: the model may generate PAD",
    ),
    BlindCase(
        CHECK,
        "eos_not_kept",
        eos_not_kept,
        "mistake",
        "I stop a sentence at its EOS but write PAD in place of the EOS, so the output has no EOS",
    ),
    BlindCase(
        CHECK,
        "rows_never_stop",
        rows_never_stop,
        "mistake",
        "I never mark a sentence as finished: after its EOS it goes on writing tokens "
        "(no PAD after the end) until max_len",
    ),
    BlindCase(
        CHECK,
        "bos_kept_in_output",
        bos_kept_in_output,
        "mistake",
        "I returned the whole token tensor, BOS in the first column included",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        one_step_short,
        "mistake",
        "my loop runs range(max_len - 1) steps (I counted BOS as one of the max_len "
        "tokens), so a sentence that never ends gets one token too few",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        first_position_logits,
        "mistake",
        "I took logits[:, 0] (the prediction after BOS) instead of logits[:, -1], the "
        "prediction after the last fed token",
    ),
    BlindCase(
        CHECK,
        "stops_when_any_sentence_ends",
        stops_when_any_sentence_ends,
        "mistake",
        "I break out of the loop as soon as any sentence of the batch has produced EOS, "
        "not when all have",
    ),
    BlindCase(
        CHECK,
        "eos_repeated_after_end",
        eos_repeated_after_end,
        "mistake",
        "after a sentence's EOS I fill its row with EOS instead of PAD",
    ),
    BlindCase(
        CHECK,
        "returns_tokens_and_logits",
        returns_tokens_and_logits,
        "mistake",
        "my function returns a pair (tokens, logits of every step) instead of the tokens alone",
    ),
    BlindCase(
        CHECK,
        "recompute_prefix",
        recompute_prefix,
        "correct",
        "no cache: the whole prefix fed again at every step, finished rows kept in the batch "
        "and given PAD",
    ),
    BlindCase(
        CHECK,
        "cached_all_rows",
        cached_all_rows,
        "correct",
        "the model's key/value cache, one token fed per step, finished rows kept in the batch "
        "and fed PAD; output written into a preallocated tensor and cut at the last step",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        one_sentence_at_a_time,
        "correct",
        "each sentence decoded alone with Python lists, then padded to the longest; an extra "
        "unused use_cache=False argument",
    ),
]
