"""Blind set B19, check_greedy_decode (chapter 15): greedy search as readers write it."""

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
    eval_mode: bool = True,
    forbid_pad: bool = True,
    keep_eos: bool = True,
    pad_after_end: bool = True,
    fill_after_end: int | None = None,
    steps: int | None = None,
    keep_bos: bool = False,
    first_position: bool = False,
    last_token_only: bool = False,
    stop_at_first_end: bool = False,
) -> Tensor:
    """Greedy search that recomputes the prefix each step; the flags make the mistakes."""
    if eval_mode:
        model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len if steps is None else steps):
        fed = tokens[:, -1:] if last_token_only else tokens
        logits = model.decode(fed, memory, src)[:, 0 if first_position else -1]  # (B, V)
        if forbid_pad:
            logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        ended = done | (nxt == eos_id)
        if pad_after_end:
            fill = pad if fill_after_end is None else fill_after_end
            nxt = torch.where(done, torch.full_like(nxt, fill), nxt)
            if not keep_eos:
                nxt = torch.where(nxt == eos_id, torch.full_like(nxt, pad), nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done = ended
        if done.all() or (stop_at_first_end and done.any()):
            break
    return tokens if keep_bos else tokens[:, 1:]


# ---------------------------------------------------------------- mistakes


def greedy_pad_allowed(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, forbid_pad=False)


def greedy_eos_dropped(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_eos=False)


def greedy_no_padding_after_end(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, pad_after_end=False)


def greedy_eos_after_end(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, fill_after_end=eos_id)


def greedy_keeps_bos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_bos=True)


def greedy_one_step_short(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, steps=max_len - 1)


def greedy_first_position(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, first_position=True)


def greedy_last_token_without_cache(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, last_token_only=True)


def greedy_stops_at_first_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_at_first_end=True)


def greedy_train_mode(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, eval_mode=False)


@torch.no_grad()
def greedy_softmax_over_batch(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        probs = model.decode(tokens, memory, src)[:, -1].softmax(0)  # (B, V)
        probs[:, pad] = 0.0
        nxt = probs.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


# ---------------------------------------------------------------- correct variants


def greedy_recompute(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id)


@torch.no_grad()
def greedy_cache_drop_finished(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int, return_steps: bool = False
) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    out = torch.full((B, max_len), pad, dtype=torch.long)
    rows = torch.arange(B)
    memory, cache = model.encode(src), model.new_cache()
    last = torch.full((B, 1), bos_id, dtype=torch.long)
    sub_src = src
    t = 0
    for t in range(max_len):
        logits = model.decode(last, memory, sub_src, cache)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        out[rows, t] = nxt
        go_on = (nxt != eos_id).nonzero().flatten()
        if len(go_on) == 0:
            break
        if len(go_on) < len(rows):
            rows, memory, sub_src = rows[go_on], memory[go_on], sub_src[go_on]
            cache.reorder(go_on)
        last = nxt[go_on, None]
    model.train(was_training)
    return out[:, : t + 1]


@torch.no_grad()
def greedy_one_sentence_at_a_time(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    outs = []
    for b in range(src.shape[0]):
        s = src[b : b + 1]
        s = s[:, : int((s != pad).sum())]  # its own length, without padding
        memory = model.encode(s)
        seq = [bos_id]
        while len(seq) - 1 < max_len:
            logits = model.decode(torch.tensor([seq]), memory, s)[0, -1]
            logits[pad] = float("-inf")
            seq.append(int(logits.argmax()))
            if seq[-1] == eos_id:
                break
        outs.append(seq[1:])
    width = max(map(len, outs))
    return torch.tensor([o + [pad] * (width - len(o)) for o in outs], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "pad_not_excluded",
        greedy_pad_allowed,
        "mistake",
        "I took the argmax over every token, PAD included.",
    ),
    BlindCase(
        CHECK,
        "eos_dropped",
        greedy_eos_dropped,
        "mistake",
        "I stop at EOS but write PAD instead of the EOS itself.",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_end",
        greedy_no_padding_after_end,
        "mistake",
        "A finished sentence keeps getting the model's tokens after its EOS.",
    ),
    BlindCase(
        CHECK,
        "eos_after_end",
        greedy_eos_after_end,
        "mistake",
        "After a sentence's end I fill its row with EOS instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "bos_kept",
        greedy_keeps_bos,
        "mistake",
        "I returned the tokens with the BOS column in front.",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        greedy_one_step_short,
        "mistake",
        "My loop ran range(max_len - 1), counting BOS as one of the max_len tokens.",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position,
        "mistake",
        "I read the logits at position 0, [:, 0], instead of the last one.",
    ),
    BlindCase(
        CHECK,
        "last_token_without_cache",
        greedy_last_token_without_cache,
        "mistake",
        "I fed only the last token to model.decode, without a cache, so it forgets the prefix.",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_eos",
        greedy_stops_at_first_eos,
        "mistake",
        "I stopped the loop as soon as any sentence produced EOS.",
    ),
    BlindCase(
        CHECK,
        "no_eval_mode",
        greedy_train_mode,
        "mistake",
        "I never called model.eval(), so dropout is on while decoding.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        greedy_softmax_over_batch,
        "mistake",
        "I took the softmax over dim 0 (the batch) before the argmax.",
    ),
    BlindCase(
        CHECK,
        "recompute_prefix",
        greedy_recompute,
        "correct",
        "No cache: the whole prefix is decoded again at every step, every sentence stays "
        "in the batch, finished rows get PAD.",
    ),
    BlindCase(
        CHECK,
        "cache_drop_finished",
        greedy_cache_drop_finished,
        "correct",
        "model.new_cache() with one token per step; finished sentences dropped from "
        "memory, src and cache; an extra unused keyword argument.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_sentence_at_a_time,
        "correct",
        "Each sentence decoded alone (its padding cut) with Python lists, then padded.",
    ),
]
