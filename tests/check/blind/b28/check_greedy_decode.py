"""Blind set B28, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.sequences import pad_sequences

from .. import BlindCase

CHECK = "check_greedy_decode"


def _no_pad(logits: Tensor, pad: int) -> Tensor:
    logits = logits.clone()
    logits[:, pad] = float("-inf")
    return logits


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def greedy_pad_allowed(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        nxt = logits.argmax(dim=-1)  # the most probable token, whatever it is
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_bos_kept(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = _no_pad(model.decode(ys, memory, src)[:, -1], pad).argmax(dim=-1)
        nxt = nxt.masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys  # the sentences, starting with BOS


@torch.no_grad()
def greedy_eos_dropped(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = _no_pad(model.decode(ys, memory, src)[:, -1], pad).argmax(dim=-1)
        done |= nxt == eos_id
        nxt = nxt.masked_fill(done, pad)  # a finished sentence gets padding from now on
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_no_pad_after_end(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        nxt = _no_pad(model.decode(ys, memory, src)[:, -1], pad).argmax(dim=-1)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        if (ys == eos_id).any(dim=1).all():  # every sentence has its EOS somewhere
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_bos_counted(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    while ys.shape[1] < max_len:  # the sequence may grow to max_len
        nxt = _no_pad(model.decode(ys, memory, src)[:, -1], pad).argmax(dim=-1)
        nxt = nxt.masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_stop_at_first_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        nxt = _no_pad(model.decode(ys, memory, src)[:, -1], pad).argmax(dim=-1)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        if (nxt == eos_id).any():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_first_position(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, 0]  # (B, V): the prediction
        nxt = _no_pad(logits, pad).argmax(dim=-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_train_mode(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    pad = model.config.pad_id  # the model is used in whatever mode it comes in
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = _no_pad(model.decode(ys, memory, src)[:, -1], pad).argmax(dim=-1)
        nxt = nxt.masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_last_token_only(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        # only the newest token is new, so only it is fed (but no cache is passed)
        logits = model.decode(ys[:, -1:], memory, src)[:, -1]
        nxt = _no_pad(logits, pad).argmax(dim=-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_eos_fill(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = _no_pad(model.decode(ys, memory, src)[:, -1], pad).argmax(dim=-1)
        nxt = nxt.masked_fill(done, eos_id)  # a finished sentence keeps saying EOS
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_returns_lists(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> list:
    model.eval()
    pad = model.config.pad_id
    outputs = []
    for row in src:
        row = row[None]
        memory = model.encode(row)
        ys = [bos_id]
        for _ in range(max_len):
            logits = model.decode(torch.tensor([ys]), memory, row)[0, -1]
            logits[pad] = float("-inf")
            ys.append(int(logits.argmax()))
            if ys[-1] == eos_id:
                break
        outputs.append(ys[1:])  # one list of ids per sentence
    return outputs


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_reencode(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """The whole model called on the prefix at every step (no cache, memory recomputed)."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    ys = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model(src, ys)[:, -1, :]  # (B, V)
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        nxt[finished] = pad
        ys = torch.cat([ys, nxt.unsqueeze(1)], dim=1)
        finished = finished | (nxt == eos_id)
        if bool(finished.all()):
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_cached_all_rows(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int | None
) -> Tensor:
    """The key/value cache, one token fed per step; finished rows stay and are fed padding."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    cache = model.new_cache()
    out = torch.full((B, max_len), pad, dtype=torch.long)
    last = torch.full((B, 1), bos_id, dtype=torch.long)
    alive = torch.ones(B, dtype=torch.bool)
    steps = 0
    for t in range(max_len):
        logits = model.decode(last, memory, src, cache, last_only=True)[:, -1]
        logits = logits.masked_fill(
            torch.arange(logits.shape[-1]) == pad, float("-inf")
        )  # PAD is not a word
        nxt = torch.where(alive, logits.argmax(-1), torch.full((B,), pad))
        out[:, t] = nxt
        steps = t + 1
        if eos_id is not None:
            alive &= nxt != eos_id
        if not alive.any():
            break
        last = nxt[:, None]
    return out[:, :steps]


@torch.no_grad()
def greedy_one_by_one(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """Each sentence decoded alone, in a Python loop; then padded to the longest."""
    model.eval()
    pad = model.config.pad_id
    outputs = []
    for b in range(src.shape[0]):
        row = src[b : b + 1]
        memory = model.encode(row)
        tokens = [bos_id]
        while len(tokens) - 1 < max_len:
            logits = model.decode(torch.tensor([tokens]), memory, row)[0, -1].clone()
            logits[pad] = -float("inf")
            tokens.append(logits.argmax().item())
            if tokens[-1] == eos_id:
                break
        outputs.append(tokens[1:])
    padded, _ = pad_sequences(outputs, pad_value=pad)
    return padded


CASES = [
    BlindCase(
        CHECK,
        "pad_allowed",
        greedy_pad_allowed,
        "mistake",
        "I took the argmax over the whole vocabulary, so PAD can be generated.",
    ),
    BlindCase(
        CHECK,
        "bos_kept",
        greedy_bos_kept,
        "mistake",
        "I return the sequence with its BOS in front.",
    ),
    BlindCase(
        CHECK,
        "eos_dropped",
        greedy_eos_dropped,
        "mistake",
        "I marked the sentence finished before writing the token, so its EOS becomes PAD.",
    ),
    BlindCase(
        CHECK,
        "no_padding_after_end",
        greedy_no_pad_after_end,
        "mistake",
        "I stop when every row holds an EOS, but a finished sentence goes on generating "
        "tokens after its EOS instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_max_len",
        greedy_bos_counted,
        "mistake",
        "I loop while the sequence, BOS included, is shorter than max_len, so I generate one "
        "token fewer than allowed.",
    ),
    BlindCase(
        CHECK,
        "stop_at_first_eos",
        greedy_stop_at_first_eos,
        "mistake",
        "I stop the whole batch as soon as any sentence produces EOS.",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position,
        "mistake",
        "I took the logits at position 0, [:, 0], instead of the last position.",
    ),
    BlindCase(
        CHECK,
        "no_eval_mode",
        greedy_train_mode,
        "mistake",
        "I never switched the model to eval mode, so dropout stays on while decoding.",
    ),
    BlindCase(
        CHECK,
        "last_token_without_cache",
        greedy_last_token_only,
        "mistake",
        "I fed only the newest token to decode, but without a cache, so the decoder forgets "
        "the prefix.",
    ),
    BlindCase(
        CHECK,
        "eos_after_end",
        greedy_eos_fill,
        "mistake",
        "After a sentence's EOS I fill its row with EOS instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "returns_lists",
        greedy_returns_lists,
        "mistake",
        "I decode sentence by sentence and return a list of id lists, not a tensor.",
    ),
    BlindCase(
        CHECK,
        "reencode_every_step",
        greedy_reencode,
        "correct",
        "model(src, ys) on the whole prefix at every step (the source encoded again each time); "
        "the training mode restored at the end.",
    ),
    BlindCase(
        CHECK,
        "cache_keep_all_rows",
        greedy_cached_all_rows,
        "correct",
        "model.new_cache() with one token fed per step; finished rows stay in the batch and "
        "are fed PAD.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_by_one,
        "correct",
        "Each sentence decoded alone with Python lists, then padded with pad_sequences.",
    ),
]
