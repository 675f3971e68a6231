"""Blind set B6, check_greedy_decode (chapter 15): greedy searches as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_greedy_decode"


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def greedy_no_eval(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    pad = model.config.pad_id
    memory = model.encode(src)  # the model stays in whatever mode it was given in
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_pad_allowed(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        nxt = model.decode(ys, memory, src)[:, -1].argmax(-1)  # any token, PAD included
        nxt = nxt.masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_eos_not_kept(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        done |= nxt == eos_id
        nxt = nxt.masked_fill(done, pad)  # EOS is the end, not a word: PAD from EOS on
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        if done.all():
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_no_pad_after_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    seen_eos = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)  # a finished row keeps writing whatever comes next
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        seen_eos |= nxt == eos_id
        if seen_eos.all():
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_one_short(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    while ys.shape[1] < max_len:  # max_len counted with BOS
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_first_position(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, 0]  # position 0 instead of the last one
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_with_bos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return ys  # BOS left at the front


@torch.no_grad()
def greedy_annotated_first_row(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    B = src.shape[0]
    ys = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        prob = model.decode(ys, memory, src)[:, -1]
        prob[:, pad] = float("-inf")
        _, next_word = torch.max(prob, dim=1)
        next_word = next_word[0].item()  # as in the Annotated Transformer's greedy_decode
        nxt = torch.full((B,), next_word, dtype=torch.long, device=src.device).masked_fill(
            done, pad
        )
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_stops_at_first_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        if (nxt == eos_id).any():  # "the sentence is finished"
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_precedence(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    finished = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(finished, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        finished = finished | nxt == eos_id  # reads as (finished | nxt) == eos_id
        if finished.all():
            break
    model.train(was_training)
    return ys[:, 1:]


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_full_prefix(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """The whole prefix fed at every step, finished rows kept in the batch and fed PAD."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]  # (B, V)
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)  # (B,)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done = done | (nxt == eos_id)
        if done.all():
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_one_sentence_at_a_time(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    """Each sentence decoded alone with Python lists, then the outputs padded to one width."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    outputs = []
    for row in src:
        one = row[None]  # (1, S)
        memory = model.encode(one)
        tokens = [bos_id]
        while len(tokens) - 1 < max_len:
            fed = torch.tensor([tokens], device=src.device)
            logits = model.decode(fed, memory, one)[0, -1].clone()
            logits[pad] = float("-inf")
            tokens.append(int(logits.argmax()))
            if tokens[-1] == eos_id:
                break
        outputs.append(tokens[1:])
    width = max(len(o) for o in outputs)
    out = torch.full((len(outputs), width), pad, dtype=torch.long, device=src.device)
    for i, o in enumerate(outputs):
        out[i, : len(o)] = torch.tensor(o, device=src.device)
    model.train(was_training)
    return out


@torch.no_grad()
def greedy_with_cache(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """The model's key/value cache: one new token fed per step, all rows kept."""
    was_training = model.training
    model.eval()
    try:
        pad = model.config.pad_id
        B = src.shape[0]
        memory = model.encode(src)
        cache = model.new_cache()
        out = torch.full((B, max_len), pad, dtype=torch.long, device=src.device)
        last = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
        alive = torch.ones(B, dtype=torch.bool, device=src.device)
        steps = 0
        for t in range(max_len):
            logits = model.decode(last, memory, src, cache)[:, -1]
            logits[:, pad] = float("-inf")
            nxt = torch.where(alive, logits.argmax(-1), pad)
            out[:, t] = nxt
            steps = t + 1
            alive &= nxt != eos_id
            if not alive.any():
                break
            last = nxt[:, None]
        return out[:, :steps]
    finally:
        model.train(was_training)


CASES = [
    BlindCase(
        CHECK,
        "no_eval",
        greedy_no_eval,
        "mistake",
        "I never switch the model to eval mode, so dropout stays on while decoding a model "
        "that is in training mode.",
    ),
    BlindCase(
        CHECK,
        "pad_allowed",
        greedy_pad_allowed,
        "mistake",
        "I take the argmax over the whole vocabulary, so PAD can be generated.",
    ),
    BlindCase(
        CHECK,
        "eos_not_kept",
        greedy_eos_not_kept,
        "mistake",
        "When a sentence produces EOS I write PAD in its place: the output holds no EOS.",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_eos",
        greedy_no_pad_after_eos,
        "mistake",
        "A sentence that has produced EOS keeps receiving the model's argmax tokens until "
        "every sentence has finished, instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "one_token_short",
        greedy_one_short,
        "mistake",
        "I loop while the sequence with BOS is shorter than max_len, so at most max_len - 1 "
        "tokens are generated.",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position,
        "mistake",
        "I take the logits of position 0, decode(...)[:, 0], instead of the last position at "
        "every step.",
    ),
    BlindCase(
        CHECK,
        "bos_returned",
        greedy_with_bos,
        "mistake",
        "I return the tokens with the BOS still in column 0.",
    ),
    BlindCase(
        CHECK,
        "annotated_first_row",
        greedy_annotated_first_row,
        "mistake",
        "Like the Annotated Transformer's greedy_decode I take next_word[0], the first "
        "sentence's token, and give it to every sentence of the batch.",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_eos",
        greedy_stops_at_first_eos,
        "mistake",
        "I stop the whole loop as soon as any sentence produces EOS.",
    ),
    BlindCase(
        CHECK,
        "or_precedence",
        greedy_precedence,
        "mistake",
        "I wrote finished = finished | nxt == eos_id without brackets; Python reads "
        "(finished | nxt) == eos_id, so a finished sentence becomes unfinished again.",
    ),
    BlindCase(
        CHECK,
        "full_prefix",
        greedy_full_prefix,
        "correct",
        "No cache: the whole prefix is decoded at every step; finished sentences stay in the "
        "batch and get PAD.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_sentence_at_a_time,
        "correct",
        "Each sentence decoded alone with a Python list of tokens, then the outputs padded "
        "with PAD to the longest one.",
    ),
    BlindCase(
        CHECK,
        "with_model_cache",
        greedy_with_cache,
        "correct",
        "The model's KVCache: one token fed per step, all rows kept until every sentence has "
        "finished, training mode restored in a finally block.",
    ),
]
