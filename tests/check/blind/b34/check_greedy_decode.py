"""Blind set B34, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_greedy_decode"


def _trim(out: Tensor, pad: int) -> Tensor:
    """Drop the trailing columns that hold only PAD."""
    real = (out != pad).any(dim=0).nonzero()
    return out[:, : int(real.max()) + 1] if len(real) else out[:, :0]


def _greedy(
    model,
    src: Tensor,
    max_len: int,
    bos_id: int,
    eos_id: int,
    *,
    ban_pad: bool = True,
    eval_mode: bool = True,
    keep_bos: bool = False,
    pad_after_eos: bool = True,
    keep_eos: bool = True,
    steps_offset: int = 0,
    position: int = -1,
    trim: bool = True,
    fill: int | None = None,
    stop_on_any: bool = False,
    last_token_only: bool = False,
) -> Tensor:
    """One reader's loop; the flags are the places where the readers below slipped."""
    if eval_mode:
        model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    with torch.no_grad():
        memory = model.encode(src)
        tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(B, dtype=torch.bool, device=src.device)
        for _ in range(max_len + steps_offset):
            fed = tokens[:, -1:] if last_token_only else tokens
            logits = model.decode(fed, memory, src)[:, position]  # (B, V)
            if ban_pad:
                logits[:, pad] = float("-inf")
            nxt = logits.argmax(-1)
            is_eos = nxt == eos_id
            if pad_after_eos:
                nxt = nxt.masked_fill(done, pad if fill is None else fill)
            if not keep_eos:
                nxt = nxt.masked_fill(is_eos, pad)
            tokens = torch.cat([tokens, nxt[:, None]], dim=1)
            done = done | is_eos
            if (stop_on_any and done.any()) or done.all():
                break
    out = tokens if keep_bos else tokens[:, 1:]
    return _trim(out, pad) if trim else out


# ---------------------------------------------------------------- mistakes


def greedy_pad_allowed(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, ban_pad=False)


def greedy_no_eval(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, eval_mode=False)


def greedy_keeps_bos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_bos=True)


def greedy_no_pad_after_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, pad_after_eos=False)


def greedy_drops_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_eos=False)


def greedy_one_step_short(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, steps_offset=-1)


def greedy_first_position(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, position=0)


def greedy_not_trimmed(model, src, max_len, bos_id, eos_id):
    out = _greedy(model, src, max_len, bos_id, eos_id, trim=False)
    pad = model.config.pad_id
    full = torch.full((src.shape[0], max_len), pad, dtype=torch.long)
    full[:, : out.shape[1]] = out  # always max_len columns
    return full


def greedy_fill_with_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, fill=eos_id)


def greedy_stop_on_first_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_on_any=True)


def greedy_feeds_last_token(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, last_token_only=True)


def greedy_argmax_of_softmax_over_batch(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    with torch.no_grad():
        memory = model.encode(src)
        tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_len):
            probs = model.decode(tokens, memory, src)[:, -1].softmax(dim=0)  # (B, V)
            probs[:, pad] = 0.0
            nxt = probs.argmax(-1).masked_fill(done, pad)
            tokens = torch.cat([tokens, nxt[:, None]], dim=1)
            done |= nxt == eos_id
            if done.all():
                break
    return _trim(tokens[:, 1:], pad)


# ---------------------------------------------------------------- correct variants


def greedy_recompute(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id)


def greedy_with_cache(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    out = torch.full((B, max_len), pad, dtype=torch.long, device=src.device)
    with torch.no_grad():
        memory = model.encode(src)
        cache = model.new_cache()
        last = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
        finished = torch.zeros(B, dtype=torch.bool, device=src.device)
        t = 0
        for t in range(max_len):
            logits = model.decode(last, memory, src, cache)[:, -1].clone()
            logits[:, pad] = -float("inf")
            nxt = torch.where(
                finished, torch.full_like(finished, pad, dtype=torch.long), logits.argmax(-1)
            )
            out[:, t] = nxt
            finished = finished | (nxt == eos_id)
            last = nxt[:, None]
            if bool(finished.all()):
                break
    return out[:, : t + 1]


def greedy_one_sentence_at_a_time(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    rows = []
    with torch.no_grad():
        for b in range(src.shape[0]):
            s = src[b : b + 1]
            memory = model.encode(s)
            ys = [bos_id]
            while len(ys) - 1 < max_len:
                logits = model.decode(torch.tensor([ys], device=src.device), memory, s)[0, -1]
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
        "pad_allowed",
        greedy_pad_allowed,
        "mistake",
        "I took the argmax over every token, PAD included",
    ),
    BlindCase(
        CHECK,
        "no_eval",
        greedy_no_eval,
        "mistake",
        "I forgot model.eval(), so dropout was on while decoding",
    ),
    BlindCase(
        CHECK,
        "keeps_bos",
        greedy_keeps_bos,
        "mistake",
        "I returned the tokens with the BOS column still in front",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_eos",
        greedy_no_pad_after_eos,
        "mistake",
        "after a sentence's EOS I kept appending whatever the model predicts",
    ),
    BlindCase(
        CHECK,
        "drops_eos",
        greedy_drops_eos,
        "mistake",
        "I wrote PAD where the EOS was, EOS should not be in the output",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        greedy_one_step_short,
        "mistake",
        "I looped range(max_len - 1) because BOS is already one token",
    ),
    BlindCase(
        CHECK,
        "first_position",
        greedy_first_position,
        "mistake",
        "I took logits[:, 0] instead of the last position's logits",
    ),
    BlindCase(
        CHECK,
        "not_trimmed",
        greedy_not_trimmed,
        "mistake",
        "I always return max_len columns, padded with PAD",
    ),
    BlindCase(
        CHECK,
        "fill_with_eos",
        greedy_fill_with_eos,
        "mistake",
        "after EOS I filled the row with more EOS tokens",
    ),
    BlindCase(
        CHECK,
        "stop_on_first_eos",
        greedy_stop_on_first_eos,
        "mistake",
        "I stop the loop as soon as any sentence has its EOS",
    ),
    BlindCase(
        CHECK,
        "feeds_last_token",
        greedy_feeds_last_token,
        "mistake",
        "I fed only the last token at each step, without a cache",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        greedy_argmax_of_softmax_over_batch,
        "mistake",
        "I took softmax(dim=0) before the argmax",
    ),
    BlindCase(
        CHECK,
        "recompute",
        greedy_recompute,
        "correct",
        "I re-run the decoder on the whole prefix at every step",
    ),
    BlindCase(
        CHECK,
        "with_cache",
        greedy_with_cache,
        "correct",
        "I used model.new_cache() and fed one token per step",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_sentence_at_a_time,
        "correct",
        "I decode each sentence alone with Python lists, then pad",
    ),
]
