"""Blind set B10, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.decoding import output_limit

from .. import BlindCase

CHECK = "check_greedy_decode"


def _limit(model, src: Tensor, max_len: int | None) -> int:
    """The number of steps (the paper's source length + 50 when max_len is None)."""
    if max_len is None:
        longest = int((src != model.config.pad_id).sum(dim=1).max())
        return min(longest + 50, model.config.max_len)
    return max_len


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def greedy_pad_allowed(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(_limit(model, src, max_len)):
        logits = model.decode(tokens, memory, src)[:, -1]  # (B, V)
        nxt = logits.argmax(dim=-1)  # PAD can win the argmax
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_eos_not_kept(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(_limit(model, src, max_len)):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(dim=-1)
        done |= nxt == eos_id
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)  # EOS itself becomes PAD too
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_no_pad_after_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    seen_eos = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(_limit(model, src, max_len)):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, model.config.pad_id] = float("-inf")
        nxt = logits.argmax(dim=-1)  # finished rows keep writing whatever comes next
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        seen_eos |= nxt == eos_id
        if seen_eos.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_stop_at_first_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(_limit(model, src, max_len)):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, model.config.pad_id] = float("-inf")
        nxt = logits.argmax(dim=-1)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        if (nxt == eos_id).any():  # any instead of all
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_one_short(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    while tokens.shape[1] < _limit(model, src, max_len):  # counts BOS as one of the tokens
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, pad, logits.argmax(dim=-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_one_extra(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(_limit(model, src, max_len) + 1):  # "up to and including max_len"
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, pad, logits.argmax(dim=-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_returns_bos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(_limit(model, src, max_len)):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, pad, logits.argmax(dim=-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens  # BOS still in column 0


@torch.no_grad()
def greedy_no_eval(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    pad = model.config.pad_id  # no model.eval(): dropout stays on if the model is training
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(_limit(model, src, max_len)):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, pad, logits.argmax(dim=-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_last_token_only(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    out = [torch.full((src.shape[0],), bos_id, dtype=torch.long)]
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(_limit(model, src, max_len)):
        # only the newest token is fed, but without a cache the earlier ones are forgotten
        logits = model.decode(out[-1][:, None], memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, pad, logits.argmax(dim=-1))
        out.append(nxt)
        done |= nxt == eos_id
        if done.all():
            break
    return torch.stack(out[1:], dim=1)


@torch.no_grad()
def greedy_first_position(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(_limit(model, src, max_len)):
        logits = model.decode(tokens, memory, src)[:, 0]  # position 0, not the newest one
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, pad, logits.argmax(dim=-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_done_not_accumulated(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(_limit(model, src, max_len)):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, pad, logits.argmax(dim=-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done = nxt == eos_id  # = instead of |=: a row is "done" only at the step of its EOS
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_ignores_max_len(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    steps = min(src.shape[1] + 50, model.config.max_len)  # the paper's rule: source + 50
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(steps):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, pad, logits.argmax(dim=-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_forward_each_step(
    model, src: Tensor, max_len: int | None, bos_id: int, eos_id: int | None
) -> Tensor:
    """Calls model(src, prefix) at every step (re-encodes the source each time, no cache),
    keeps every row in the batch and writes PAD into finished rows; the limits from the
    chapter's output_limit; restores the mode."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    limits = output_limit(model, src, max_len)  # (B,): each sentence's own limit
    prefix = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    for step in range(1, int(limits.max()) + 1):
        scores = model(src, prefix)[:, -1, :].clone()  # (B, V)
        scores[:, pad] = -float("inf")
        best = scores.argmax(-1).masked_fill(finished, pad)
        prefix = torch.cat((prefix, best.unsqueeze(1)), dim=1)
        if eos_id is not None:
            finished = finished | (best == eos_id)
        finished = finished | (limits <= step)
        if bool(finished.all()):
            break
    model.train(was_training)
    return prefix[:, 1:]


@torch.no_grad()
def greedy_cached_all_rows(
    model, src: Tensor, max_len: int | None, bos_id: int, eos_id: int | None
) -> Tensor:
    """The package's KVCache, one token per step, every row kept (finished rows are fed PAD,
    which the cache masks); tokens preallocated and cut at the end."""
    mode = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    if max_len is None:  # each sentence's own length + 50, within the position table
        limits = ((src != pad).sum(dim=1) + 50).clamp(max=model.config.max_len)
    else:
        limits = torch.full((B,), max_len, device=src.device)
    steps = int(limits.max())
    out = torch.full((B, steps), pad, dtype=torch.long, device=src.device)
    memory = model.encode(src)
    cache = model.new_cache()
    last = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    alive = torch.ones(B, dtype=torch.bool, device=src.device)
    used = 0
    for t in range(steps):
        logits = model.decode(last, memory, src, cache)[:, -1]  # (B, V)
        logits = logits.masked_fill(
            torch.arange(logits.shape[-1], device=logits.device) == pad, float("-inf")
        )
        nxt = torch.where(alive, logits.argmax(dim=-1), pad)
        out[:, t] = nxt
        used = t + 1
        if eos_id is not None:
            alive &= nxt != eos_id
        alive &= limits > t + 1
        if not alive.any():
            break
        last = nxt[:, None]
    model.train(mode)
    return out[:, :used]


@torch.no_grad()
def greedy_one_sentence_at_a_time(
    model, src: Tensor, max_len: int | None, bos_id: int, eos_id: int | None
) -> Tensor:
    """Each sentence decoded alone with Python lists, then padded to the longest output."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    outputs = []
    for row in src:
        one = row.unsqueeze(0)  # (1, S)
        memory = model.encode(one)
        ids = [bos_id]
        for _ in range(_limit(model, one, max_len)):
            logits = model.decode(torch.tensor([ids], device=src.device), memory, one)[0, -1]
            logits[pad] = float("-inf")
            ids.append(int(logits.argmax()))
            if ids[-1] == eos_id:
                break
        outputs.append(ids[1:])
    model.train(was_training)
    width = max(len(o) for o in outputs)
    return torch.tensor([o + [pad] * (width - len(o)) for o in outputs], device=src.device)


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
        "eos_not_kept",
        greedy_eos_not_kept,
        "mistake",
        "A sentence stops at EOS, but I marked it done before writing, so its EOS is replaced "
        "by PAD.",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_eos",
        greedy_no_pad_after_eos,
        "mistake",
        "Finished sentences keep generating tokens after their EOS until every sentence has "
        "finished; I never wrote PAD.",
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
        "one_token_short",
        greedy_one_short,
        "mistake",
        "My loop runs while the token tensor (BOS included) is shorter than max_len, so a "
        "sentence without EOS gets max_len - 1 tokens.",
    ),
    BlindCase(
        CHECK,
        "one_token_extra",
        greedy_one_extra,
        "mistake",
        "I ran max_len + 1 steps, so a sentence without EOS gets one token too many.",
    ),
    BlindCase(
        CHECK,
        "returns_bos",
        greedy_returns_bos,
        "mistake",
        "I return the token tensor with BOS still in the first column.",
    ),
    BlindCase(
        CHECK,
        "no_eval",
        greedy_no_eval,
        "mistake",
        "I never called model.eval(), so dropout is on while decoding a model in training mode.",
    ),
    BlindCase(
        CHECK,
        "last_token_only_no_cache",
        greedy_last_token_only,
        "mistake",
        "I feed only the newest token at each step, as with a cache, but without a cache, so "
        "the decoder never sees the earlier tokens.",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position,
        "mistake",
        "I read logits[:, 0] (the prediction after BOS) at every step instead of logits[:, -1].",
    ),
    BlindCase(
        CHECK,
        "done_not_accumulated",
        greedy_done_not_accumulated,
        "mistake",
        "I wrote done = next == eos instead of done |= ..., so a finished sentence starts "
        "generating again one step later.",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        greedy_ignores_max_len,
        "mistake",
        "I ignored max_len and used the paper's rule, the batch's source width + 50.",
    ),
    BlindCase(
        CHECK,
        "forward_each_step",
        greedy_forward_each_step,
        "correct",
        "Calls model(src, prefix) at every step (re-encoding the source each time), keeps all "
        "rows, PAD in finished ones; restores the training mode.",
    ),
    BlindCase(
        CHECK,
        "cached_all_rows",
        greedy_cached_all_rows,
        "correct",
        "Uses model.new_cache() and feeds one token per step; finished rows stay in the batch "
        "and are fed PAD; output preallocated and cut at the last step.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_sentence_at_a_time,
        "correct",
        "Decodes each sentence alone with Python lists, then pads to the longest output.",
    ),
]
