"""Blind set B20, check_greedy_decode (chapter 15): greedy search as readers write it."""

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
    mask_pad: bool = True,
    keep_eos: bool = True,
    with_bos: bool = False,
    stop_per_row: bool = True,
    stop_on_any: bool = False,
    steps: int | None = None,
    last_only_fed: bool = False,
    first_position: bool = False,
    eval_mode: bool = True,
) -> Tensor:
    """A right greedy search (no cache, all rows kept) with one switch per mistake."""
    if eval_mode:
        model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len if steps is None else steps):
        fed = tokens[:, -1:] if last_only_fed else tokens
        logits = model.decode(fed, memory, src)[:, 0 if first_position else -1]  # (B, V)
        if mask_pad:
            logits = logits.clone()
            logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        is_eos = nxt == eos_id
        if stop_per_row:
            nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        if not keep_eos:
            nxt = torch.where(is_eos & ~done, torch.full_like(nxt, pad), nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done = done | is_eos
        if stop_on_any and is_eos.any():
            break
        if done.all():
            break
    return tokens if with_bos else tokens[:, 1:]


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def greedy_pad_allowed(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, mask_pad=False)  # argmax over all V


@torch.no_grad()
def greedy_eos_dropped(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_eos=False)  # EOS written as PAD


@torch.no_grad()
def greedy_keeps_bos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, with_bos=True)  # returned BOS too


@torch.no_grad()
def greedy_no_pad_after_eos(model, src, max_len, bos_id, eos_id):
    # rows that ended keep receiving argmax tokens until the whole batch has ended
    return _greedy(model, src, max_len, bos_id, eos_id, stop_per_row=False)


@torch.no_grad()
def greedy_stop_on_first_eos(model, src, max_len, bos_id, eos_id):
    # break as soon as any sentence says EOS
    return _greedy(model, src, max_len, bos_id, eos_id, stop_on_any=True)


@torch.no_grad()
def greedy_one_step_short(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, steps=max_len - 1)  # range(1, max_len)


@torch.no_grad()
def greedy_feeds_last_token_only(model, src, max_len, bos_id, eos_id):
    # fed only the newest token, as with a cache, but passed no cache
    return _greedy(model, src, max_len, bos_id, eos_id, last_only_fed=True)


@torch.no_grad()
def greedy_first_position_logits(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, first_position=True)  # logits[:, 0]


@torch.no_grad()
def greedy_no_eval(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, eval_mode=False)  # dropout left on


@torch.no_grad()
def greedy_config_max_len(model, src, max_len, bos_id, eos_id):
    # the model's position limit instead of the max_len argument
    return _greedy(model, src, model.config.max_len, bos_id, eos_id)


@torch.no_grad()
def greedy_extra_token_after_eos(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        done = (tokens[:, :-1] == eos_id).any(1)  # looked at the tokens before the last one
        if done.all():
            break
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], 1)
    return tokens[:, 1:]


@torch.no_grad()
def greedy_decode_args_swapped(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, src, memory)[:, -1]  # (tgt, src, memory)
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


# ---------------------------------------------------------------- correct


@torch.no_grad()
def greedy_forward_each_step(model, src, max_len, bos_id, eos_id):
    """The whole forward pass (encoder too) at every step, a list of finished flags."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    finished = [False] * src.shape[0]
    for _ in range(max_len):
        logits = model(src, ys)[:, -1, :]  # (B, V)
        logits[:, pad] = -float("inf")
        nxt = logits.argmax(dim=-1)
        for b in range(len(finished)):
            if finished[b]:
                nxt[b] = pad
            elif nxt[b].item() == eos_id:
                finished[b] = True
        ys = torch.cat([ys, nxt.unsqueeze(1)], dim=1)
        if all(finished):
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_one_sentence_at_a_time(model, src, max_len, bos_id, eos_id):
    """Each sentence decoded alone, then padded to the longest output."""
    model.eval()
    pad = model.config.pad_id
    outputs = []
    for b in range(src.shape[0]):
        row = src[b : b + 1]
        memory = model.encode(row)
        out = [bos_id]
        for _ in range(max_len):
            logits = model.decode(torch.tensor([out], device=src.device), memory, row)[0, -1]
            logits = logits.index_fill(0, torch.tensor([pad], device=src.device), float("-inf"))
            out.append(int(logits.argmax()))
            if out[-1] == eos_id:
                break
        outputs.append(out[1:])
    width = max(len(o) for o in outputs)
    return torch.tensor([o + [pad] * (width - len(o)) for o in outputs], device=src.device)


@torch.no_grad()
def greedy_with_cache(model, src, max_len, bos_id, eos_id):
    """The model's key/value cache, one new token per step, every row kept to the end; the
    tokens after each row's EOS are overwritten with PAD at the end."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    cache = model.new_cache()
    last = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    steps = []
    ended = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(last, memory, src, cache=cache, last_only=True)[:, -1]
        logits = logits.masked_fill(
            torch.arange(logits.shape[-1], device=src.device) == pad, float("-inf")
        )
        last = logits.argmax(-1, keepdim=True)
        steps.append(last)
        ended |= last[:, 0] == eos_id
        if bool(ended.all()):
            break
    out = torch.cat(steps, dim=1)  # (B, T')
    after_eos = (out == eos_id).long().cumsum(1) - (out == eos_id).long()  # EOS seen before
    return out.masked_fill(after_eos > 0, pad)


@torch.no_grad()
def greedy_preallocated(model, src, max_len, bos_id, eos_id):
    """A (B, max_len + 1) buffer filled in place; trimmed to the steps taken."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    buf = torch.full((B, max_len + 1), pad, dtype=torch.long, device=src.device)
    buf[:, 0] = bos_id
    alive = torch.ones(B, dtype=torch.bool, device=src.device)
    memory = model.encode(src)
    t = 0
    for t in range(1, max_len + 1):
        logits = model.decode(buf[:, :t], memory, src)[:, t - 1]
        logits[:, pad] = float("-inf")
        buf[:, t] = torch.where(alive, logits.argmax(-1), pad)
        alive &= buf[:, t] != eos_id
        if not alive.any():
            break
    return buf[:, 1 : t + 1]


CASES = [
    BlindCase(
        CHECK, "pad_allowed", greedy_pad_allowed, "mistake", "argmax over all tokens, PAD too"
    ),
    BlindCase(
        CHECK,
        "eos_dropped",
        greedy_eos_dropped,
        "mistake",
        "wrote PAD where the EOS was produced (EOS not kept)",
    ),
    BlindCase(CHECK, "keeps_bos", greedy_keeps_bos, "mistake", "returned the BOS column too"),
    BlindCase(
        CHECK,
        "no_pad_after_eos",
        greedy_no_pad_after_eos,
        "mistake",
        "finished rows keep getting argmax tokens instead of PAD",
    ),
    BlindCase(
        CHECK,
        "stop_on_first_eos",
        greedy_stop_on_first_eos,
        "mistake",
        "stopped the loop when any sentence produced EOS",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        greedy_one_step_short,
        "mistake",
        "range(1, max_len): at most max_len - 1 tokens",
    ),
    BlindCase(
        CHECK,
        "feeds_last_token_only",
        greedy_feeds_last_token_only,
        "mistake",
        "fed only the last token to decode, without a cache",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position_logits,
        "mistake",
        "took logits[:, 0] instead of logits[:, -1]",
    ),
    BlindCase(CHECK, "no_eval", greedy_no_eval, "mistake", "forgot model.eval(): dropout on"),
    BlindCase(
        CHECK,
        "config_max_len",
        greedy_config_max_len,
        "mistake",
        "looped up to model.config.max_len, ignoring max_len",
    ),
    BlindCase(
        CHECK,
        "extra_token_after_eos",
        greedy_extra_token_after_eos,
        "mistake",
        "checked for EOS one token late, so each sentence gets one more token after its EOS",
    ),
    BlindCase(
        CHECK,
        "decode_args_swapped",
        greedy_decode_args_swapped,
        "mistake",
        "called model.decode(tokens, src, memory)",
    ),
    BlindCase(
        CHECK,
        "forward_each_step",
        greedy_forward_each_step,
        "correct",
        "model(src, ys) every step, python list of finished flags",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_sentence_at_a_time,
        "correct",
        "each sentence decoded alone, padded at the end",
    ),
    BlindCase(
        CHECK,
        "with_cache",
        greedy_with_cache,
        "correct",
        "the model's KV cache, no rows dropped, tokens after EOS overwritten with PAD",
    ),
    BlindCase(
        CHECK,
        "preallocated",
        greedy_preallocated,
        "correct",
        "preallocated output buffer filled in place",
    ),
]
