"""Blind set B23, check_greedy_decode (chapter 15): greedy search as readers write it."""

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
    exclude_pad: bool = True,
    eval_mode: bool = True,
    keep_bos: bool = False,
    stop_rows: bool = True,
    stop_when_any: bool = False,
    steps_off: int = 0,
    keep_eos: bool = True,
    fill_value: int | None = None,
    last_token_only: bool = False,
    first_position: bool = False,
) -> Tensor:
    """A reader's greedy search (the whole prefix fed at every step, all rows kept in the
    batch); the keyword arguments switch on one slip each."""
    pad = model.config.pad_id
    fill = pad if fill_value is None else fill_value
    was_training = model.training
    if eval_mode:
        model.eval()
    memory = model.encode(src)
    B = src.shape[0]
    tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len + steps_off):
        fed = tokens[:, -1:] if last_token_only else tokens
        logits = model.decode(fed, memory, src)
        logits = logits[:, 0] if first_position else logits[:, -1]  # (B, V)
        if exclude_pad:
            logits = logits.clone()
            logits[:, pad] = float("-inf")
        nxt = logits.argmax(dim=-1)
        if stop_rows:
            nxt = torch.where(finished, torch.full_like(nxt, fill), nxt)
        just_ended = (nxt == eos_id) & ~finished
        if not keep_eos:
            nxt = torch.where(just_ended, torch.full_like(nxt, pad), nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        finished |= just_ended
        if (stop_when_any and finished.any()) or finished.all():
            break
    model.train(was_training)
    return tokens if keep_bos else tokens[:, 1:]


# ---------------------------------------------------------------- mistakes


def greedy_pad_allowed(model, src, max_len, bos_id, eos_id):
    # I took the plain argmax over the whole vocabulary, PAD included
    return _greedy(model, src, max_len, bos_id, eos_id, exclude_pad=False)


def greedy_no_eval(model, src, max_len, bos_id, eos_id):
    # I wrapped it in torch.no_grad() and thought that was enough: no model.eval()
    return _greedy(model, src, max_len, bos_id, eos_id, eval_mode=False)


def greedy_keeps_bos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_bos=True)  # BOS left in column 0


def greedy_rows_never_stop(model, src, max_len, bos_id, eos_id):
    # a sentence that produced EOS keeps receiving the model's argmax, not PAD
    return _greedy(model, src, max_len, bos_id, eos_id, stop_rows=False)


def greedy_stops_at_first_eos(model, src, max_len, bos_id, eos_id):
    # the loop stops as soon as any sentence has produced EOS (any() instead of all())
    return _greedy(model, src, max_len, bos_id, eos_id, stop_when_any=True)


def greedy_one_step_short(model, src, max_len, bos_id, eos_id):
    # range(max_len - 1): I counted BOS as one of the max_len tokens
    return _greedy(model, src, max_len, bos_id, eos_id, steps_off=-1)


def greedy_drops_eos(model, src, max_len, bos_id, eos_id):
    # a sentence's EOS is written as PAD: the output ends without it
    return _greedy(model, src, max_len, bos_id, eos_id, keep_eos=False)


def greedy_fills_with_eos(model, src, max_len, bos_id, eos_id):
    # after its end a row is filled with EOS instead of PAD
    return _greedy(model, src, max_len, bos_id, eos_id, fill_value=eos_id)


def greedy_last_token_no_cache(model, src, max_len, bos_id, eos_id):
    # I fed only the newest token, but without a cache the decoder forgets the prefix
    return _greedy(model, src, max_len, bos_id, eos_id, last_token_only=True)


def greedy_first_position_logits(model, src, max_len, bos_id, eos_id):
    # logits[:, 0]: the prediction after BOS, at every step
    return _greedy(model, src, max_len, bos_id, eos_id, first_position=True)


@torch.no_grad()
def greedy_cache_not_reordered(model, src, max_len, bos_id, eos_id):
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    out = torch.full((B, max_len), pad, dtype=torch.long)
    rows = torch.arange(B)
    memory = model.encode(src)
    cache = model.new_cache()
    last = torch.full((B, 1), bos_id, dtype=torch.long)
    t = 0
    for t in range(max_len):
        logits = model.decode(last, memory, src, cache)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        out[rows, t] = nxt
        going = nxt != eos_id
        if not going.any():
            break
        # drop finished sentences from the batch (but I forgot cache.reorder)
        rows, memory, src, last = rows[going], memory[going], src[going], nxt[going][:, None]
    model.train(was_training)
    return out[:, : t + 1]


def greedy_returns_lists(model, src, max_len, bos_id, eos_id):
    out = _greedy(model, src, max_len, bos_id, eos_id)
    return [row.tolist() for row in out]  # a list of token lists, not a tensor


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_cached_batch(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """One new token per step with the model's cache; finished rows are fed PAD."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    cache = model.new_cache()
    B = src.shape[0]
    last = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    out = []
    for _ in range(max_len):
        logits = model.decode(last, memory, src, cache=cache, last_only=True)[:, -1]
        logits = logits.masked_fill(
            torch.arange(logits.shape[-1], device=logits.device) == pad, float("-inf")
        )
        nxt = logits.argmax(-1).masked_fill(done, pad)
        out.append(nxt)
        done = done | (nxt == eos_id)
        if done.all():
            break
        last = nxt[:, None]
    model.train(was_training)
    return torch.stack(out, dim=1)


@torch.no_grad()
def greedy_sentence_by_sentence(model, src: Tensor, max_len: int, bos_id: int, eos_id: int):
    """Each sentence decoded alone, recomputing the prefix; then padded to one width."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    rows = []
    for b in range(src.shape[0]):
        s = src[b : b + 1]
        memory = model.encode(s)
        ys = [bos_id]
        for _ in range(max_len):
            logits = model.decode(torch.tensor([ys], device=src.device), memory, s)[0, -1]
            top2 = logits.topk(2).indices.tolist()
            ys.append(top2[1] if top2[0] == pad else top2[0])  # PAD is not a word
            if ys[-1] == eos_id:
                break
        rows.append(ys[1:])
    width = max(len(r) for r in rows)
    out = torch.full((len(rows), width), pad, dtype=torch.long, device=src.device)
    for b, r in enumerate(rows):
        out[b, : len(r)] = torch.tensor(r, dtype=torch.long)
    model.train(was_training)
    return out


@torch.no_grad()
def greedy_preallocated(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """A preallocated (B, max_len + 1) buffer, whole prefix at each step, cut at the end."""
    mode = model.training
    model.train(False)
    pad = model.config.pad_id
    B = src.size(0)
    buf = src.new_full((B, max_len + 1), pad)
    buf[:, 0] = bos_id
    memory = model.encode(src)
    alive = torch.ones(B, dtype=torch.bool, device=src.device)
    used = 0
    for t in range(1, max_len + 1):
        probs = model.decode(buf[:, :t], memory, src)[:, -1].softmax(-1)
        probs[:, pad] = -1.0  # below every probability
        buf[:, t] = torch.where(alive, probs.argmax(-1), pad)
        alive &= buf[:, t] != eos_id
        used = t
        if not alive.any():
            break
    model.train(mode)
    return buf[:, 1 : used + 1]


CASES = [
    BlindCase(
        CHECK,
        "pad_can_be_chosen",
        greedy_pad_allowed,
        "mistake",
        "I took argmax over the whole vocabulary and never excluded PAD",
    ),
    BlindCase(
        CHECK,
        "no_eval_mode",
        greedy_no_eval,
        "mistake",
        "I used torch.no_grad() but never called model.eval(), so dropout stays on",
    ),
    BlindCase(
        CHECK,
        "bos_in_output",
        greedy_keeps_bos,
        "mistake",
        "I returned the token buffer with BOS still in its first column",
    ),
    BlindCase(
        CHECK,
        "finished_rows_keep_generating",
        greedy_rows_never_stop,
        "mistake",
        "after a sentence's EOS I kept appending the model's argmax instead of PAD",
    ),
    BlindCase(
        CHECK,
        "stop_at_first_eos",
        greedy_stops_at_first_eos,
        "mistake",
        "the loop breaks when any sentence has ended (any() where all() was needed)",
    ),
    BlindCase(
        CHECK,
        "one_token_short",
        greedy_one_step_short,
        "mistake",
        "range(max_len - 1): I counted BOS among the max_len tokens",
    ),
    BlindCase(
        CHECK,
        "eos_not_kept",
        greedy_drops_eos,
        "mistake",
        "when a sentence produced EOS I wrote PAD in its place",
    ),
    BlindCase(
        CHECK,
        "filled_with_eos",
        greedy_fills_with_eos,
        "mistake",
        "after a sentence's end I filled its row with EOS instead of PAD",
    ),
    BlindCase(
        CHECK,
        "last_token_without_cache",
        greedy_last_token_no_cache,
        "mistake",
        "I fed only tokens[:, -1:] to decode without a cache, so it sees one token",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position_logits,
        "mistake",
        "I read logits[:, 0] instead of logits[:, -1] after feeding the whole prefix",
    ),
    BlindCase(
        CHECK,
        "cache_rows_not_dropped",
        greedy_cache_not_reordered,
        "mistake",
        "I dropped finished sentences from memory and src but forgot cache.reorder",
    ),
    BlindCase(
        CHECK,
        "returns_lists",
        greedy_returns_lists,
        "mistake",
        "I returned a list of token lists instead of a (B, T') tensor",
    ),
    BlindCase(
        CHECK,
        "cached_batch",
        greedy_cached_batch,
        "correct",
        "model.new_cache() and one new token per step; finished rows fed PAD, all rows kept",
    ),
    BlindCase(
        CHECK,
        "sentence_by_sentence_topk",
        greedy_sentence_by_sentence,
        "correct",
        "each sentence decoded alone in Python lists; the second best token when PAD is first",
    ),
    BlindCase(
        CHECK,
        "preallocated_buffer",
        greedy_preallocated,
        "correct",
        "a preallocated buffer with BOS, argmax of the probabilities with PAD set to -1",
    ),
]
