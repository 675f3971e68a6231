"""Blind set B15, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_greedy_decode"


def _greedy(
    model,
    src: Tensor,
    max_len: int,
    bos_id: int,
    eos_id: int,
    *,
    eval_mode: bool = True,
    ban_pad: bool = True,
    keep_eos: bool = True,
    stop_at_eos: bool = True,
    steps_offset: int = 0,
    position: int = -1,
    keep_bos: bool = False,
    stop_rule: str = "all",
) -> Tensor:
    """Greedy search recomputing the whole prefix; the flags switch on one slip each."""
    if eval_mode:
        model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    with torch.no_grad():
        memory = model.encode(src)
        tokens = torch.full((B, 1), bos_id, dtype=torch.long)
        done = torch.zeros(B, dtype=torch.bool)
        for _ in range(max_len + steps_offset):
            logits = model.decode(tokens, memory, src)[:, position]  # (B, V)
            if ban_pad:
                logits[:, pad] = float("-inf")
            nxt = logits.argmax(-1)
            if stop_at_eos:
                nxt = torch.where(done, pad, nxt)
            is_eos = nxt == eos_id
            if not keep_eos:
                nxt = torch.where(is_eos, pad, nxt)
            tokens = torch.cat([tokens, nxt[:, None]], dim=1)
            if stop_at_eos:
                done |= is_eos
                if stop_rule == "all" and done.all():
                    break
                if stop_rule == "any" and done.any():
                    break
                if stop_rule == "first" and done[0]:
                    break
    return tokens if keep_bos else tokens[:, 1:]


# ---------------------------------------------------------------- mistakes


def greedy_train_mode(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, eval_mode=False)


def greedy_pad_allowed(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, ban_pad=False)


def greedy_drops_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_eos=False)


def greedy_never_stops(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_at_eos=False)


def greedy_one_step_short(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, steps_offset=-1)


def greedy_first_position(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, position=0)


def greedy_keeps_bos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_bos=True)


def greedy_stops_at_any(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_rule="any")


def greedy_stops_on_first_row(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_rule="first")


def greedy_eos_after_end(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    with torch.no_grad():
        memory = model.encode(src)
        ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
        finished = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_len):
            probs = model.decode(ys, memory, src)[:, -1].softmax(-1)
            probs[:, pad] = 0.0
            nxt = probs.argmax(-1)
            nxt[finished] = eos_id  # a finished sentence keeps saying EOS
            ys = torch.cat([ys, nxt[:, None]], 1)
            finished |= nxt == eos_id
            if finished.all():
                break
        return ys[:, 1:]


# ---------------------------------------------------------------- correct variants


def greedy_with_cache(model, src, max_len, bos_id, eos_id):
    """Feeds one token a step with the model's key/value cache."""
    was = model.training
    model.eval()
    pad = model.config.pad_id
    with torch.no_grad():
        memory = model.encode(src)
        cache = model.new_cache()
        out = []
        last = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
        alive = torch.ones(src.shape[0], dtype=torch.bool)
        for _ in range(max_len):
            logits = model.decode(last, memory, src, cache)[:, -1]
            logits = logits.index_fill(-1, torch.tensor([pad]), float("-inf"))
            nxt = torch.where(
                alive, logits.argmax(-1), torch.full_like(alive, pad, dtype=torch.long)
            )
            out.append(nxt)
            alive &= nxt != eos_id
            if not alive.any():
                break
            last = nxt[:, None]
    model.train(was)
    return torch.stack(out, dim=1)


def greedy_one_by_one(model, src, max_len, bos_id, eos_id):
    """Each sentence decoded alone as a Python list, padded at the end."""
    model.eval()
    pad = model.config.pad_id
    rows = []
    with torch.no_grad():
        for b in range(src.shape[0]):
            s = src[b : b + 1]
            memory = model.encode(s)
            seq = [bos_id]
            while len(seq) - 1 < max_len:
                logits = model.decode(torch.tensor([seq]), memory, s)[0, -1]
                logits[pad] = -float("inf")
                seq.append(int(logits.argmax()))
                if seq[-1] == eos_id:
                    break
            rows.append(seq[1:])
    width = max(len(r) for r in rows)
    return torch.tensor([r + [pad] * (width - len(r)) for r in rows], dtype=torch.long)


def greedy_log_softmax_buffer(model, src, max_len, bos_id, eos_id, temperature: float = 1.0):
    """A preallocated PAD buffer, log_softmax before the argmax, an extra argument."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    buf = torch.full((B, max_len + 1), pad, dtype=torch.long)
    buf[:, 0] = bos_id
    ended = torch.zeros(B, dtype=torch.bool)
    with torch.no_grad():
        memory = model.encode(src)
        t = 0
        for t in range(1, max_len + 1):
            scores = (model.decode(buf[:, :t], memory, src)[:, -1] / temperature).log_softmax(-1)
            scores[:, pad] = -torch.inf
            buf[:, t] = scores.argmax(-1).masked_fill(ended, pad)
            ended |= buf[:, t] == eos_id
            if bool(ended.all()):
                break
    return buf[:, 1 : t + 1]


CASES = [
    BlindCase(
        CHECK,
        "train_mode",
        greedy_train_mode,
        "mistake",
        "I never called model.eval(), so dropout stays on while decoding.",
    ),
    BlindCase(
        CHECK,
        "pad_not_banned",
        greedy_pad_allowed,
        "mistake",
        "I took the argmax over the whole vocabulary, PAD included.",
    ),
    BlindCase(
        CHECK,
        "eos_dropped",
        greedy_drops_eos,
        "mistake",
        "I wrote PAD where the model produced EOS, so the EOS is not in the output.",
    ),
    BlindCase(
        CHECK,
        "never_stops",
        greedy_never_stops,
        "mistake",
        "I ignored EOS and always ran max_len steps, so tokens follow the EOS.",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        greedy_one_step_short,
        "mistake",
        "My loop ran range(max_len - 1) since BOS already takes a place, one token too few.",
    ),
    BlindCase(
        CHECK,
        "logits_of_first_position",
        greedy_first_position,
        "mistake",
        "I read the next token from logits[:, 0] instead of the last position.",
    ),
    BlindCase(
        CHECK,
        "bos_kept",
        greedy_keeps_bos,
        "mistake",
        "I returned the whole token tensor, BOS in column 0.",
    ),
    BlindCase(
        CHECK,
        "stops_when_any_ends",
        greedy_stops_at_any,
        "mistake",
        "I broke out of the loop as soon as one sentence produced EOS (any instead of all).",
    ),
    BlindCase(
        CHECK,
        "stops_on_first_row",
        greedy_stops_on_first_row,
        "mistake",
        "I stopped when the first sentence of the batch ended, as if the batch had one row.",
    ),
    BlindCase(
        CHECK,
        "eos_repeated_after_end",
        greedy_eos_after_end,
        "mistake",
        "After a sentence's end I filled its row with EOS instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "kv_cache",
        greedy_with_cache,
        "correct",
        "Uses model.new_cache() and feeds one token per step; restores the training flag.",
    ),
    BlindCase(
        CHECK,
        "sentence_by_sentence",
        greedy_one_by_one,
        "correct",
        "Decodes each sentence alone with Python lists and pads the rows at the end.",
    ),
    BlindCase(
        CHECK,
        "preallocated_log_softmax",
        greedy_log_softmax_buffer,
        "correct",
        "A preallocated PAD buffer, log_softmax before the argmax, an extra temperature "
        "argument defaulting to 1.",
    ),
]
