"""Blind set B31, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_greedy_decode"


def _no_pad(logits: Tensor, pad: int) -> Tensor:
    logits = logits.clone()
    logits[:, pad] = float("-inf")
    return logits


def _finish(out: Tensor, steps: int) -> Tensor:
    return out[:, 1 : steps + 1]


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def greedy_eos_dropped(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """EOS ends the sentence but is written as PAD."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    out = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(out, memory, src)[:, -1]
        nxt = _no_pad(logits, pad).argmax(-1)
        ended = done | (nxt == eos_id)
        nxt = torch.where(ended, torch.full_like(nxt, pad), nxt)
        out = torch.cat([out, nxt[:, None]], dim=1)
        done = ended
        if done.all():
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_pad_allowed(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    out = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        nxt = model.decode(out, memory, src)[:, -1].argmax(-1)  # PAD may win
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        out = torch.cat([out, nxt[:, None]], dim=1)
        done = done | (nxt == eos_id)
        if done.all():
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_no_pad_after_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """Finished rows keep receiving the model's argmax instead of PAD."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    out = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        nxt = _no_pad(model.decode(out, memory, src)[:, -1], pad).argmax(-1)
        out = torch.cat([out, nxt[:, None]], dim=1)
        done = done | (nxt == eos_id)
        if done.all():
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_keeps_bos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    out = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        nxt = _no_pad(model.decode(out, memory, src)[:, -1], pad).argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        out = torch.cat([out, nxt[:, None]], dim=1)
        done = done | (nxt == eos_id)
        if done.all():
            break
    return out  # BOS included


@torch.no_grad()
def greedy_stops_at_first_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """The loop stops as soon as any sentence has finished."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    out = torch.full((B, 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        nxt = _no_pad(model.decode(out, memory, src)[:, -1], pad).argmax(-1)
        out = torch.cat([out, nxt[:, None]], dim=1)
        if (nxt == eos_id).any():
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_one_short(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """range(1, max_len): one token fewer than allowed."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    out = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(1, max_len):
        nxt = _no_pad(model.decode(out, memory, src)[:, -1], pad).argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        out = torch.cat([out, nxt[:, None]], dim=1)
        done = done | (nxt == eos_id)
        if done.all():
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_first_position(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """Took the logits of position 0 instead of the last position."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    out = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        nxt = _no_pad(model.decode(out, memory, src)[:, 0], pad).argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        out = torch.cat([out, nxt[:, None]], dim=1)
        done = done | (nxt == eos_id)
        if done.all():
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_no_eval(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """Forgot model.eval(): dropout stays on while decoding."""
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    out = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        nxt = _no_pad(model.decode(out, memory, src)[:, -1], pad).argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        out = torch.cat([out, nxt[:, None]], dim=1)
        done = done | (nxt == eos_id)
        if done.all():
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_fill_with_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """After its EOS a row is filled with EOS, not PAD."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    out = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        nxt = _no_pad(model.decode(out, memory, src)[:, -1], pad).argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, eos_id), nxt)
        out = torch.cat([out, nxt[:, None]], dim=1)
        done = done | (nxt == eos_id)
        if done.all():
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_source_plus_50(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """The paper's limit, source length + 50, used instead of the max_len argument."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    limit = min(src.shape[1] + 50, model.config.max_len)
    memory = model.encode(src)
    out = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(limit):
        nxt = _no_pad(model.decode(out, memory, src)[:, -1], pad).argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        out = torch.cat([out, nxt[:, None]], dim=1)
        done = done | (nxt == eos_id)
        if done.all():
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_feeds_last_token_only(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    """Fed only the newest token each step, but without a cache."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    out = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        nxt = _no_pad(model.decode(out[:, -1:], memory, src)[:, -1], pad).argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        out = torch.cat([out, nxt[:, None]], dim=1)
        done = done | (nxt == eos_id)
        if done.all():
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_time_major(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """The steps collected in a list and stacked along dim 0: (T', B)."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    fed = torch.full((B, 1), bos_id, dtype=torch.long)
    steps = []
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        nxt = _no_pad(model.decode(fed, memory, src)[:, -1], pad).argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        steps.append(nxt)
        fed = torch.cat([fed, nxt[:, None]], dim=1)
        done = done | (nxt == eos_id)
        if done.all():
            break
    return torch.stack(steps)


@torch.no_grad()
def greedy_sampled(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """Drew the next token from the softmax instead of taking the argmax."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    out = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        probs = _no_pad(model.decode(out, memory, src)[:, -1], pad).softmax(-1)
        nxt = torch.multinomial(probs, 1).squeeze(1)
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        out = torch.cat([out, nxt[:, None]], dim=1)
        done = done | (nxt == eos_id)
        if done.all():
            break
    return out[:, 1:]


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_recompute_prefix(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """No cache: the whole prefix fed again at every step; restores the training mode."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    out = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        nxt = _no_pad(model.decode(out, memory, src)[:, -1], pad).argmax(-1)
        nxt = nxt.masked_fill(done, pad)
        out = torch.cat([out, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return out[:, 1:]


@torch.no_grad()
def greedy_with_cache(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """Incremental decoding with model.new_cache(); all rows stay in the batch to the end."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    cache = model.new_cache()
    out = torch.full((B, max_len + 1), pad, dtype=torch.long)
    out[:, 0] = bos_id
    done = torch.zeros(B, dtype=torch.bool)
    t = 0
    for t in range(1, max_len + 1):
        logits = model.decode(out[:, t - 1 : t], memory, src, cache)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        out[:, t] = torch.where(done, pad, nxt)
        done = done | (nxt == eos_id)
        if done.all():
            break
    return _finish(out, t)


@torch.no_grad()
def greedy_one_sentence_at_a_time(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    """Each sentence decoded alone (its padding cut off), then the rows padded to one width."""
    model.eval()
    pad = model.config.pad_id
    rows = []
    for sentence in src:
        s = sentence[sentence != pad][None]  # (1, S_i)
        memory = model.encode(s)
        ys = [bos_id]
        for _ in range(max_len):
            logits = model.decode(torch.tensor([ys]), memory, s)[0, -1]
            logits[pad] = float("-inf")
            ys.append(int(logits.argmax()))
            if ys[-1] == eos_id:
                break
        rows.append(ys[1:])
    width = max(len(r) for r in rows)
    return torch.tensor([r + [pad] * (width - len(r)) for r in rows], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "eos_not_kept",
        greedy_eos_dropped,
        "mistake",
        "When a row produced EOS I wrote PAD in its place, so EOS never appears in the output.",
    ),
    BlindCase(
        CHECK,
        "pad_not_excluded",
        greedy_pad_allowed,
        "mistake",
        "I took the plain argmax, so PAD can be generated.",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_eos",
        greedy_no_pad_after_eos,
        "mistake",
        "A finished row keeps getting the model's argmax instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "bos_in_output",
        greedy_keeps_bos,
        "mistake",
        "I returned the whole buffer, BOS in column 0 included.",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_finished",
        greedy_stops_at_first_eos,
        "mistake",
        "The loop breaks as soon as any sentence produces EOS (any instead of all).",
    ),
    BlindCase(
        CHECK,
        "one_token_short",
        greedy_one_short,
        "mistake",
        "for _ in range(1, max_len): at most max_len - 1 tokens.",
    ),
    BlindCase(
        CHECK,
        "logits_of_first_position",
        greedy_first_position,
        "mistake",
        "I read logits[:, 0] (the position after BOS) instead of logits[:, -1].",
    ),
    BlindCase(
        CHECK,
        "dropout_on",
        greedy_no_eval,
        "mistake",
        "I forgot model.eval(), so dropout is active while decoding.",
    ),
    BlindCase(
        CHECK,
        "eos_repeated_after_end",
        greedy_fill_with_eos,
        "mistake",
        "After its EOS a row is filled with EOS instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "source_length_plus_50",
        greedy_source_plus_50,
        "mistake",
        "I used the paper's limit, source width + 50, and ignored max_len.",
    ),
    BlindCase(
        CHECK,
        "last_token_without_cache",
        greedy_feeds_last_token_only,
        "mistake",
        "I fed only the newest token to decode, without a cache, so it forgets the prefix.",
    ),
    BlindCase(
        CHECK,
        "time_major_output",
        greedy_time_major,
        "mistake",
        "I stacked the per-step tokens with torch.stack(steps): shape (T', B) instead of (B, T').",
    ),
    BlindCase(
        CHECK,
        "sampled_not_argmax",
        greedy_sampled,
        "mistake",
        "I drew the next token with torch.multinomial from the softmax instead of the argmax.",
    ),
    BlindCase(
        CHECK,
        "recompute_prefix",
        greedy_recompute_prefix,
        "correct",
        "No cache: the whole prefix re-fed each step; the training mode restored at the end.",
    ),
    BlindCase(
        CHECK,
        "kv_cache_fixed_buffer",
        greedy_with_cache,
        "correct",
        "A (B, max_len + 1) buffer and model.new_cache(); finished rows stay in the batch.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_sentence_at_a_time,
        "correct",
        "Each sentence decoded alone with Python lists, then padded to the longest output.",
    ),
]
