"""Blind set B26, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

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
    ban_pad: bool = True,
    pad_fill: float = float("-inf"),
    keep_bos: bool = False,
    stop_rows: bool = True,
    after_end: str = "pad",
    drop_eos: bool = False,
    steps: int | None = None,
    position: int = -1,
    to_eval: bool = True,
    restore: bool = True,
    stop_on_any: bool = False,
    last_token_only: bool = False,
) -> Tensor:
    """Greedy search without a cache, every row kept to the end; the flags are the slips."""
    was_training = model.training
    if to_eval:
        model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    B = src.shape[0]
    tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len if steps is None else steps):
        fed = tokens[:, -1:] if last_token_only else tokens
        logits = model.decode(fed, memory, src)[:, position].clone()
        if ban_pad:
            logits[:, pad] = pad_fill
        nxt = logits.argmax(dim=-1)
        if stop_rows and after_end == "pad":
            nxt = torch.where(done, pad, nxt)
        elif stop_rows and after_end == "eos":
            nxt = torch.where(done, eos_id, nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        if eos_id is not None:
            done |= nxt == eos_id
        if stop_on_any and done.any():
            break
        if stop_rows and done.all():
            break
    if restore:
        model.train(was_training)
    out = tokens if keep_bos else tokens[:, 1:]
    if drop_eos:
        out = out.masked_fill(out == eos_id, pad)
    return out


# ---------------------------------------------------------------- mistakes


def greedy_pad_allowed(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, ban_pad=False)


def greedy_pad_logit_zero(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, pad_fill=0.0)


def greedy_keeps_bos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_bos=True)


def greedy_never_stops(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_rows=False)


def greedy_no_pad_after_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, after_end="keep")


def greedy_repeats_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, after_end="eos")


def greedy_drops_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, drop_eos=True)


def greedy_one_step_short(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, steps=max_len - 1)


def greedy_first_position(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, position=0)


def greedy_no_eval(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, to_eval=False)


def greedy_left_in_eval(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, restore=False)


def greedy_stops_at_first_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_on_any=True)


def greedy_last_token_no_cache(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, last_token_only=True)


@torch.no_grad()
def greedy_single_eos_check(model, src, max_len, bos_id, eos_id):
    was_training = model.training
    model.eval()
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, model.config.pad_id] = float("-inf")
        nxt = logits.argmax(-1, keepdim=True)
        ys = torch.cat([ys, nxt], dim=1)
        if nxt[0].item() == eos_id:  # the Annotated Transformer's test, for one sentence
            break
    model.train(was_training)
    return ys[:, 1:]


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_cached(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int, use_cache: bool = True
) -> Tensor:
    """The key/value cache, one token fed per step; finished rows are fed PAD and stay."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.size(0)
    memory = model.encode(src)
    cache = model.new_cache() if use_cache else None
    out = torch.full((B, max_len + 1), pad, dtype=torch.long, device=src.device)
    out[:, 0] = bos_id
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    t = 0
    for t in range(1, max_len + 1):
        fed = out[:, t - 1 : t] if use_cache else out[:, :t]
        logits = model.decode(fed, memory, src, cache)[:, -1]
        logits = logits.masked_fill(
            torch.arange(logits.size(-1), device=src.device) == pad, float("-inf")
        )
        step = logits.argmax(-1).masked_fill(finished, pad)
        out[:, t] = step
        finished = finished | (step == eos_id)
        if bool(finished.all()):
            break
    model.train(was_training)
    return out[:, 1 : t + 1]


@torch.no_grad()
def greedy_one_by_one(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """Each sentence decoded alone in a Python loop, then the outputs padded to one width."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    outputs = []
    for row in src:
        row = row[None]  # (1, S), padding kept: the mask hides it
        memory = model.encode(row)
        ys = [bos_id]
        for _ in range(max_len):
            logits = model.decode(torch.tensor([ys], device=src.device), memory, row)[0, -1]
            logits[pad] = -float("inf")
            ys.append(int(logits.argmax()))
            if ys[-1] == eos_id:
                break
        outputs.append(torch.tensor(ys[1:], dtype=torch.long, device=src.device))
    model.train(was_training)
    return pad_sequence(outputs, batch_first=True, padding_value=pad)


@torch.no_grad()
def greedy_topk_lists(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """topk(2) and the second choice when the first is PAD; lists of finished flags."""
    mode = model.training
    model.train(False)
    pad = model.config.pad_id
    ys = torch.full((len(src), 1), bos_id, dtype=torch.long, device=src.device)
    ended = [False] * len(src)
    for _ in range(max_len):
        top = model(src, ys)[:, -1].topk(2, dim=-1).indices  # forward encodes again
        choice = torch.where(top[:, 0] == pad, top[:, 1], top[:, 0])
        for b in range(len(src)):
            if ended[b]:
                choice[b] = pad
            elif choice[b] == eos_id:
                ended[b] = True
        ys = torch.cat([ys, choice[:, None]], dim=1)
        if all(ended):
            break
    model.train(mode)
    return ys[:, 1:]


CASES = [
    BlindCase(
        CHECK,
        "pad_not_banned",
        greedy_pad_allowed,
        "mistake",
        "I took the argmax over the whole vocabulary, PAD included.",
    ),
    BlindCase(
        CHECK,
        "pad_logit_set_to_zero",
        greedy_pad_logit_zero,
        "mistake",
        "To ban PAD I set its logit to 0, not to -inf.",
    ),
    BlindCase(
        CHECK,
        "bos_kept",
        greedy_keeps_bos,
        "mistake",
        "I returned the token buffer with BOS still in the first column.",
    ),
    BlindCase(
        CHECK,
        "never_stops",
        greedy_never_stops,
        "mistake",
        "I generate max_len tokens for every sentence and never look for EOS.",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_eos",
        greedy_no_pad_after_eos,
        "mistake",
        "The loop stops when every sentence has its EOS, but a finished sentence keeps getting "
        "new tokens instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "eos_repeated_after_end",
        greedy_repeats_eos,
        "mistake",
        "After a sentence's EOS I keep writing EOS in its row, not PAD.",
    ),
    BlindCase(
        CHECK,
        "eos_removed",
        greedy_drops_eos,
        "mistake",
        "I replaced EOS by PAD in the output, since EOS is not a word.",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        greedy_one_step_short,
        "mistake",
        "range(max_len - 1), counting BOS as one of the max_len tokens.",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position,
        "mistake",
        "I read the next token from logits[:, 0] instead of the last position.",
    ),
    BlindCase(
        CHECK,
        "no_eval_mode",
        greedy_no_eval,
        "mistake",
        "I forgot model.eval(), so dropout stays on while decoding.",
    ),
    BlindCase(
        CHECK,
        "model_left_in_eval",
        greedy_left_in_eval,
        "mistake",
        "I switch the model to eval mode but never switch it back to training afterwards.",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_eos",
        greedy_stops_at_first_eos,
        "mistake",
        "I break out of the loop as soon as any sentence has produced EOS.",
    ),
    BlindCase(
        CHECK,
        "last_token_without_cache",
        greedy_last_token_no_cache,
        "mistake",
        "I feed only the newest token at each step, as the chapter says, but without a cache.",
    ),
    BlindCase(
        CHECK,
        "eos_test_on_first_row",
        greedy_single_eos_check,
        "mistake",
        "I stop when the first sentence produces EOS (nxt[0] == eos_id); no PAD after an end.",
    ),
    BlindCase(
        CHECK,
        "kv_cache_all_rows",
        greedy_cached,
        "correct",
        "With model.new_cache() and one token per step; finished rows are fed PAD instead of "
        "leaving the batch; an extra use_cache argument.",
    ),
    BlindCase(
        CHECK,
        "sentence_by_sentence",
        greedy_one_by_one,
        "correct",
        "Each sentence decoded alone with Python lists, then pad_sequence with PAD.",
    ),
    BlindCase(
        CHECK,
        "forward_topk_second_choice",
        greedy_topk_lists,
        "correct",
        "model(src, ys) at every step, top-2 and the second token when the first is PAD; a "
        "Python list of finished flags.",
    ),
]
