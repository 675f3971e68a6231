"""Blind set B9, check_greedy_decode (chapter 15): greedy search as readers write it."""

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
    mask_pad: bool = True,
    keep_bos: bool = False,
    stop_on_any: bool = False,
    stop_on_first_row: bool = False,
    pad_after_end: bool = True,
    eval_mode: bool = True,
    steps: int | None = None,
    keep_eos: bool = True,
    position: int = -1,
    feed_last_only: bool = False,
) -> Tensor:
    """A plain greedy search that re-runs the decoder over the whole prefix at every step; the
    keyword arguments switch on one slip each."""
    was_training = model.training
    if eval_mode:
        model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    B = src.shape[0]
    tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len if steps is None else steps):
        fed = tokens[:, -1:] if feed_last_only else tokens
        logits = model.decode(fed, memory, src)[:, position]  # (B, V)
        if mask_pad:
            logits[:, pad] = float("-inf")
        next_token = logits.argmax(dim=-1)
        if pad_after_end:
            next_token = next_token.masked_fill(done, pad)
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)
        done |= next_token == eos_id
        if stop_on_any and (next_token == eos_id).any():
            break
        if stop_on_first_row and done[0]:
            break
        if done.all():
            break
    model.train(was_training)
    out = tokens if keep_bos else tokens[:, 1:]
    if not keep_eos:
        out = out.masked_fill(out == eos_id, pad)
    return out


# ---------------------------------------------------------------- mistakes


def greedy_pad_not_masked(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, mask_pad=False)


def greedy_keeps_bos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, keep_bos=True)


def greedy_stops_at_first_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, stop_on_any=True)


def greedy_no_pad_after_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, pad_after_end=False)


def greedy_no_eval(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, eval_mode=False)


def greedy_bos_counted_in_len(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, steps=max_len - 1)


def greedy_eos_dropped(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, keep_eos=False)


def greedy_first_position(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, position=0)


def greedy_feeds_last_token(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, feed_last_only=True)


def greedy_stop_when_row0_ends(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, stop_on_first_row=True)


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_forward_each_step(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    finished = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model(src, ys)[:, -1]  # forward = encode + decode, every step
        logits = logits.masked_fill(torch.arange(logits.shape[-1]) == pad, float("-inf"))
        nxt = torch.where(
            finished, torch.full_like(finished, pad, dtype=torch.long), logits.argmax(-1)
        )
        ys = torch.cat([ys, nxt.unsqueeze(1)], dim=1)
        finished = finished | (nxt == eos_id)
        if finished.all():
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_with_cache(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    cache = model.new_cache()
    last = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    finished = torch.zeros(src.shape[0], dtype=torch.bool)
    out = []
    for _ in range(max_len):
        logp = model.decode(last, memory, src, cache, last_only=True)[:, -1].log_softmax(-1)
        logp[:, pad] = float("-inf")
        nxt = logp.argmax(-1)
        nxt[finished] = pad
        out.append(nxt)
        finished |= nxt == eos_id
        last = nxt[:, None]
        if bool(finished.all()):
            break
    model.train(was_training)
    return torch.stack(out, dim=1)


@torch.no_grad()
def greedy_one_sentence_at_a_time(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    rows = []
    for b in range(src.shape[0]):
        s = src[b : b + 1]
        memory = model.encode(s)
        seq = [bos_id]
        for _ in range(max_len):
            logits = model.decode(torch.tensor([seq]), memory, s)[0, -1]
            logits[pad] = float("-inf")
            seq.append(int(logits.argmax()))
            if seq[-1] == eos_id:
                break
        rows.append(seq[1:])
    model.train(was_training)
    width = max(len(r) for r in rows)
    return torch.tensor([r + [pad] * (width - len(r)) for r in rows], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "pad_not_masked",
        greedy_pad_not_masked,
        "mistake",
        "I take the argmax over the whole vocabulary, so PAD can be generated",
    ),
    BlindCase(
        CHECK, "keeps_bos", greedy_keeps_bos, "mistake", "I return the tokens with the BOS column"
    ),
    BlindCase(
        CHECK,
        "stops_at_first_eos",
        greedy_stops_at_first_eos,
        "mistake",
        "I break out of the loop as soon as any sentence of the batch produces EOS",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_eos",
        greedy_no_pad_after_eos,
        "mistake",
        "a finished sentence keeps getting argmax tokens after its EOS instead of PAD",
    ),
    BlindCase(
        CHECK,
        "no_eval_mode",
        greedy_no_eval,
        "mistake",
        "I never call model.eval(), so dropout is active while decoding",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_max_len",
        greedy_bos_counted_in_len,
        "mistake",
        "I count BOS as one of the max_len tokens, so a sentence without EOS gets max_len - 1",
    ),
    BlindCase(
        CHECK,
        "eos_dropped",
        greedy_eos_dropped,
        "mistake",
        "I replace EOS by PAD in the output, thinking the output should not contain EOS",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position,
        "mistake",
        "I read the logits at position 0 (logits[:, 0]) instead of the last position",
    ),
    BlindCase(
        CHECK,
        "feeds_last_token_without_cache",
        greedy_feeds_last_token,
        "mistake",
        "I feed only the last token to model.decode at each step without a cache, so the "
        "decoder never sees the prefix",
    ),
    BlindCase(
        CHECK,
        "stops_when_row0_ends",
        greedy_stop_when_row0_ends,
        "mistake",
        "my stop test looks at the first sentence only (if done[0]: break): right for a batch "
        "of one",
    ),
    BlindCase(
        CHECK,
        "forward_each_step",
        greedy_forward_each_step,
        "correct",
        "I call model(src, ys) (encode + decode) at every step, torch.where for the finished rows",
    ),
    BlindCase(
        CHECK,
        "with_kv_cache",
        greedy_with_cache,
        "correct",
        "a KVCache from model.new_cache(), one token fed per step, argmax of log-softmax",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_sentence_at_a_time,
        "correct",
        "a Python loop over the sentences, each decoded alone, then padded to a common width",
    ),
]
