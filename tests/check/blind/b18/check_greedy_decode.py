"""Blind set B18, check_greedy_decode (chapter 15): greedy search as readers write it."""

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
    exclude_pad: bool = True,
    keep_eos: bool = True,
    pad_after_end: bool = True,
    stop_on_any: bool = False,
    keep_bos: bool = False,
    steps_offset: int = 0,
    position: int = -1,
    switch_to_eval: bool = True,
    fill_finished_with_eos: bool = False,
) -> Tensor:
    """A plain greedy search (the whole prefix again at every step) with one switch per slip;
    the defaults are right."""
    was_training = model.training
    if switch_to_eval:
        model.eval()
    pad = model.config.pad_id
    with torch.no_grad():
        memory = model.encode(src)
        tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
        for _ in range(max_len + steps_offset):
            logits = model.decode(tokens, memory, src)[:, position]  # (B, V)
            if exclude_pad:
                logits = logits.clone()
                logits[:, pad] = float("-inf")
            nxt = logits.argmax(-1)  # (B,)
            if pad_after_end:
                nxt = nxt.masked_fill(done, eos_id if fill_finished_with_eos else pad)
            ends = nxt == eos_id
            if not keep_eos:
                nxt = nxt.masked_fill(ends, pad)
            tokens = torch.cat([tokens, nxt[:, None]], dim=1)
            done = done | ends
            if (stop_on_any and bool(ends.any())) or bool(done.all()):
                break
    model.train(was_training)
    return tokens if keep_bos else tokens[:, 1:]


# ---------------------------------------------------------------- mistakes


def greedy_pad_allowed(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, exclude_pad=False)


def greedy_eos_dropped(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, keep_eos=False)


def greedy_no_pad_after_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, pad_after_end=False)


def greedy_stop_on_first_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, stop_on_any=True)


def greedy_keeps_bos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, keep_bos=True)


def greedy_one_step_short(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, steps_offset=-1)


def greedy_first_position(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, position=0)


def greedy_no_eval(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, switch_to_eval=False)


def greedy_eos_after_end(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id, fill_finished_with_eos=True)


def greedy_last_token_only(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    with torch.no_grad():
        memory = model.encode(src)
        out = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
        finished = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_len):
            # the decoder only needs the newest token, I thought
            logits = model.decode(out[:, -1:], memory, src)[:, -1]
            logits[:, pad] = float("-inf")
            nxt = torch.where(
                finished, torch.full_like(finished, pad, dtype=torch.long), logits.argmax(-1)
            )
            out = torch.cat([out, nxt[:, None]], 1)
            finished |= nxt == eos_id
            if finished.all():
                break
    return out[:, 1:]


def greedy_model_max_len(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    # the limit is the model's: its position table
    return _greedy(model, src, model.config.max_len, bos_id, eos_id)


# ---------------------------------------------------------------- correct variants


def greedy_cache_all_rows(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """With the key/value cache, one new token per step; finished rows stay in the batch and
    are fed PAD, which the masks hide."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.size(0)
    out = []
    with torch.no_grad():
        memory = model.encode(src)
        cache = model.new_cache()
        fed = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
        alive = torch.ones(B, dtype=torch.bool, device=src.device)
        for _ in range(max_len):
            logits = model.decode(fed, memory, src, cache, last_only=True)[:, -1]
            logits[:, pad] = -float("inf")  # logits is this step's own tensor
            token = torch.where(alive, logits.argmax(dim=-1), pad)
            out.append(token)
            alive &= token != eos_id
            if not alive.any():
                break
            fed = token.unsqueeze(1)
    model.train(was_training)
    return torch.stack(out, dim=1)


def greedy_one_by_one(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """Each sentence decoded alone, as a batch of one, then the rows padded to the longest."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    rows = []
    with torch.no_grad():
        for sentence in src:
            one = sentence[None, :]
            memory = model.encode(one)
            ys = [bos_id]
            for _ in range(max_len):
                logits = model.decode(torch.tensor([ys], device=src.device), memory, one)
                scores = logits[0, -1].clone()
                scores[pad] = float("-inf")
                ys.append(int(scores.argmax()))
                if ys[-1] == eos_id:
                    break
            rows.append(ys[1:])
    model.train(was_training)
    width = max(len(r) for r in rows)
    return torch.tensor([r + [pad] * (width - len(r)) for r in rows], device=src.device)


def greedy_zero_pad_probability(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    """Softmax first, PAD's probability set to 0; a preallocated output filled in place."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    out = torch.full((B, max_len + 1), pad, dtype=torch.long)
    out[:, 0] = bos_id
    finished = torch.zeros(B, dtype=torch.bool)
    with torch.no_grad():
        memory = model.encode(src)
        t = 0
        for t in range(1, max_len + 1):
            probs = model.decode(out[:, :t], memory, src).softmax(dim=-1)[:, -1]
            probs[:, pad] = 0.0
            choice = probs.argmax(dim=-1)
            out[~finished, t] = choice[~finished]
            finished |= choice == eos_id
            if finished.all():
                break
    model.train(was_training)
    return out[:, 1 : t + 1]


CASES = [
    BlindCase(
        CHECK,
        "pad_not_excluded",
        greedy_pad_allowed,
        "mistake",
        "I take the argmax over the whole vocabulary, PAD included.",
    ),
    BlindCase(
        CHECK,
        "eos_not_kept",
        greedy_eos_dropped,
        "mistake",
        "When a sentence produces EOS I write PAD in its place, so EOS is not in the output.",
    ),
    BlindCase(
        CHECK,
        "no_padding_after_eos",
        greedy_no_pad_after_eos,
        "mistake",
        "A finished sentence keeps getting argmax tokens until the whole batch is done.",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_eos",
        greedy_stop_on_first_eos,
        "mistake",
        "The loop stops as soon as any sentence of the batch produces EOS.",
    ),
    BlindCase(
        CHECK,
        "returns_bos",
        greedy_keeps_bos,
        "mistake",
        "I return the token tensor with BOS still in its first column.",
    ),
    BlindCase(
        CHECK,
        "one_token_short",
        greedy_one_step_short,
        "mistake",
        "I loop range(max_len - 1), counting BOS as one of the max_len tokens.",
    ),
    BlindCase(
        CHECK,
        "logits_of_first_position",
        greedy_first_position,
        "mistake",
        "I took logits[:, 0] instead of logits[:, -1], the prediction after BOS at every step.",
    ),
    BlindCase(
        CHECK,
        "no_eval",
        greedy_no_eval,
        "mistake",
        "I forgot model.eval(), so dropout stays on while decoding a model in training mode.",
    ),
    BlindCase(
        CHECK,
        "eos_repeated_after_end",
        greedy_eos_after_end,
        "mistake",
        "After a sentence's end I keep writing EOS into its row instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "feeds_last_token_only",
        greedy_last_token_only,
        "mistake",
        "Without a cache I fed only the newest token to decode, so the decoder never sees the "
        "prefix and every token sits at position 0.",
    ),
    BlindCase(
        CHECK,
        "limit_from_config",
        greedy_model_max_len,
        "mistake",
        "I used model.config.max_len as the limit and ignored the max_len argument.",
    ),
    BlindCase(
        CHECK,
        "cache_all_rows",
        greedy_cache_all_rows,
        "correct",
        "Uses model.new_cache() and feeds one token per step; finished rows are not dropped "
        "but fed PAD; tokens collected in a list and stacked.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_by_one,
        "correct",
        "Decodes each sentence alone with Python lists, then pads the rows to the longest.",
    ),
    BlindCase(
        CHECK,
        "zero_pad_probability",
        greedy_zero_pad_probability,
        "correct",
        "Argmax of the softmax with PAD's probability set to 0, written into a preallocated "
        "output in place; the whole prefix is recomputed each step.",
    ),
]
