"""Blind set B25, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_greedy_decode"


def _finish(out: Tensor, steps: int) -> Tensor:
    """The generated columns (BOS dropped) of the steps taken."""
    return out[:, 1 : steps + 1]


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def greedy_keeps_bos(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, pad, logits.argmax(-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens  # the output sentence


@torch.no_grad()
def greedy_pad_not_masked(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = model.decode(tokens, memory, src)[:, -1].argmax(-1)
        nxt = torch.where(done, pad, nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_pad_logit_zero(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = 0.0  # switch padding off
        nxt = torch.where(done, pad, logits.argmax(-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_train_mode(model, src, max_len, bos_id, eos_id):
    pad = model.config.pad_id
    memory = model.encode(src)  # torch.no_grad is enough for decoding
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, pad, logits.argmax(-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_no_pad_after_eos(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)  # every row keeps going; the loop ends when all have ended
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_eos_dropped(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        done |= nxt == eos_id
        nxt = torch.where(done, pad, nxt)  # an ended sentence gets padding
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_one_step_short(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    while tokens.shape[1] < max_len:  # max_len tokens in all
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, pad, logits.argmax(-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_first_position(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, 0]  # (B, V)
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, pad, logits.argmax(-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_last_token_only(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens[:, -1:], memory, src)[:, -1]  # only the new token
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, pad, logits.argmax(-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_stop_at_first_eos(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        if (nxt == eos_id).any():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_eos_repeated(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, eos_id, logits.argmax(-1))  # an ended row keeps its EOS
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_argmax_batch_axis(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)  # (B, T, V)
        logits[..., pad] = float("-inf")
        nxt = logits.argmax(1)[:, -1]  # the best token at the last position
        nxt = torch.where(done, pad, nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_always_max_len(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, pad, logits.argmax(-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
    return tokens[:, 1:].tolist()  # one list of ids per sentence


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_recompute_all_rows(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    out = torch.full((src.shape[0], max_len + 1), pad, dtype=torch.long, device=src.device)
    out[:, 0] = bos_id
    finished = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    step = 0
    for step in range(1, max_len + 1):
        logits = model.decode(out[:, :step], memory, src)[:, -1]
        logits = logits.masked_fill(
            torch.arange(logits.shape[-1], device=src.device) == pad, float("-inf")
        )
        nxt = logits.argmax(dim=-1)
        out[:, step] = torch.where(finished, torch.full_like(nxt, pad), nxt)
        finished |= nxt == eos_id
        if bool(finished.all()):
            break
    model.train(was_training)
    return _finish(out, step)


@torch.no_grad()
def greedy_with_cache(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int, use_cache: bool = True
) -> Tensor:
    """Feeds one token per step through model.new_cache(); all rows stay in the batch."""
    was_training = model.training
    model.eval()
    B, pad = src.shape[0], model.config.pad_id
    memory = model.encode(src)
    cache = model.new_cache() if use_cache else None
    fed = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    generated = []
    alive = torch.ones(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        inp = fed[:, -1:] if cache is not None else fed
        logits = model.decode(inp, memory, src, cache, last_only=True)[:, -1].clone()
        logits[:, pad] = -float("inf")
        best = logits.argmax(-1)
        generated.append(torch.where(alive, best, torch.full_like(best, pad)))
        alive &= best != eos_id
        # an ended row is fed its own best token, not padding: padding fed to the cache
        # would only change the rows whose output is padding anyway
        fed = torch.cat([fed, best[:, None]], dim=1)
        if not alive.any():
            break
    model.train(was_training)
    return torch.stack(generated, dim=1)


@torch.no_grad()
def greedy_sentence_by_sentence(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    outputs = []
    for i in range(src.shape[0]):
        one = src[i : i + 1]
        memory = model.encode(one)
        ids = [bos_id]
        for _ in range(max_len):
            logits = model.decode(torch.tensor([ids], device=src.device), memory, one)[0, -1]
            logits[pad] = float("-inf")
            ids.append(int(logits.argmax()))
            if ids[-1] == eos_id:
                break
        outputs.append(ids[1:])
    width = max(len(o) for o in outputs)
    return torch.tensor([o + [pad] * (width - len(o)) for o in outputs], device=src.device)


CASES = [
    BlindCase(
        CHECK,
        "bos_in_output",
        greedy_keeps_bos,
        "mistake",
        "I returned the whole token tensor, BOS in the first column included.",
    ),
    BlindCase(
        CHECK,
        "pad_can_be_chosen",
        greedy_pad_not_masked,
        "mistake",
        "I took the argmax of the logits as they are, so PAD can be generated.",
    ),
    BlindCase(
        CHECK,
        "pad_logit_set_to_zero",
        greedy_pad_logit_zero,
        "mistake",
        "To rule PAD out I set its logit to 0, which can still be the largest.",
    ),
    BlindCase(
        CHECK,
        "dropout_left_on",
        greedy_train_mode,
        "mistake",
        "I used torch.no_grad but never called model.eval(), so dropout stays on.",
    ),
    BlindCase(
        CHECK,
        "no_padding_after_eos",
        greedy_no_pad_after_eos,
        "mistake",
        "I kept appending the argmax to a sentence after its EOS; I only used EOS to know when "
        "to stop the loop.",
    ),
    BlindCase(
        CHECK,
        "eos_replaced_by_pad",
        greedy_eos_dropped,
        "mistake",
        "I marked a row done before writing the token, so its EOS is written as PAD.",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_max_len",
        greedy_one_step_short,
        "mistake",
        "I looped while the token tensor, BOS included, is shorter than max_len, so one token "
        "fewer is generated.",
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
        "only_last_token_fed",
        greedy_last_token_only,
        "mistake",
        "I fed only the last token to model.decode at each step, without a cache.",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_eos_in_batch",
        greedy_stop_at_first_eos,
        "mistake",
        "I stopped the loop as soon as any sentence produced EOS.",
    ),
    BlindCase(
        CHECK,
        "eos_repeated_after_end",
        greedy_eos_repeated,
        "mistake",
        "After its end a row repeats EOS instead of holding PAD.",
    ),
    BlindCase(
        CHECK,
        "argmax_over_positions",
        greedy_argmax_batch_axis,
        "mistake",
        "I took argmax(1) of the (B, T, V) logits and then the last entry.",
    ),
    BlindCase(
        CHECK,
        "returns_python_lists",
        greedy_always_max_len,
        "mistake",
        "I returned tokens.tolist(), a list of ids per sentence, always max_len long.",
    ),
    BlindCase(
        CHECK,
        "recompute_all_rows",
        greedy_recompute_all_rows,
        "correct",
        "Every row stays in the batch; the prefix recomputed at each step; PAD written after "
        "EOS; the training mode restored.",
    ),
    BlindCase(
        CHECK,
        "kv_cache_all_rows",
        greedy_with_cache,
        "correct",
        "One new token per step through model.new_cache(); an extra use_cache argument.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_sentence_by_sentence,
        "correct",
        "Each sentence decoded alone with Python lists, then padded to the longest.",
    ),
]
