"""Blind set B17, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.transformer import Transformer

from .. import BlindCase

CHECK = "check_greedy_decode"


def _next_logits(model: Transformer, tokens: Tensor, memory: Tensor, src: Tensor) -> Tensor:
    """The logits of the next token after each row of ``tokens`` (the whole prefix fed)."""
    return model.decode(tokens, memory, src)[:, -1]  # (B, V)


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def greedy_pad_allowed(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        nxt = _next_logits(model, tokens, memory, src).argmax(-1)  # PAD may win
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_eos_dropped(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        logits = _next_logits(model, tokens, memory, src)
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        ends = nxt == eos_id
        nxt = torch.where(done | ends, torch.full_like(nxt, pad), nxt)  # EOS is not a word
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= ends
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_no_pad_after_end(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        logits = _next_logits(model, tokens, memory, src)
        logits[:, model.config.pad_id] = float("-inf")
        nxt = logits.argmax(-1)  # finished rows keep writing
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_stop_at_first_eos(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        logits = _next_logits(model, tokens, memory, src)
        logits[:, model.config.pad_id] = float("-inf")
        nxt = logits.argmax(-1)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        if (nxt == eos_id).any():  # a sentence has ended: stop
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_train_mode(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    # no model.eval(): torch.no_grad() is enough, I thought
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        logits = _next_logits(model, tokens, memory, src)
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, torch.full_like(done, pad, dtype=torch.long), logits.argmax(-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_with_bos(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        logits = _next_logits(model, tokens, memory, src)
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens  # BOS first, as the decoder sees it


@torch.no_grad()
def greedy_one_step_short(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    while tokens.shape[1] < max_len:  # max_len counted with BOS
        logits = _next_logits(model, tokens, memory, src)
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_last_token_only(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        # only the newest token: the earlier ones were already seen (but there is no cache)
        logits = model.decode(tokens[:, -1:], memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_first_position_logits(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, 0]  # (B, V)
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_pad_slice_offset(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        logits = _next_logits(model, tokens, memory, src)
        nxt = logits[:, pad + 1 :].argmax(-1)  # skip PAD (id 0) by slicing it off
        nxt = nxt.masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_softmax_over_batch(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len):
        logits = _next_logits(model, tokens, memory, src)
        logits[:, pad] = float("-inf")
        probs = torch.softmax(logits, dim=0)  # the probabilities of the next token
        nxt = probs.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_recompute_whole_batch(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    """No cache and no shrinking batch: the whole prefix of every row at every step, with
    finished rows fed PAD; log_softmax before the argmax; the model's mode restored."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long, device=src.device)
    finished = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        log_probs = model.decode(ys, memory, src)[:, -1].log_softmax(-1)
        log_probs[:, pad] = float("-inf")
        best = log_probs.argmax(-1)
        best = torch.where(finished, torch.full_like(best, pad), best)
        ys = torch.cat([ys, best.unsqueeze(1)], dim=1)
        finished = finished | (best == eos_id)
        if bool(finished.all()):
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_with_cache(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    """The package's KVCache, one token fed per step; all rows kept to the end (finished ones
    fed PAD, which the cache's padding mask hides); output preallocated."""
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
        logits = model.decode(last, memory, src, cache=cache, last_only=True)[:, -1]
        logits = logits.index_fill(1, torch.tensor([pad]), float("-inf"))
        token = logits.argmax(dim=-1)
        out[alive, t] = token[alive]
        alive &= token != eos_id
        last = out[:, t : t + 1]
        steps = t + 1
        if not alive.any():
            break
    return out[:, :steps]


@torch.no_grad()
def greedy_one_sentence_at_a_time(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    """Each sentence decoded alone in a Python loop (its own padding stripped from the source),
    then the rows padded to the longest with torch.nn.utils.rnn.pad_sequence."""
    model.eval()
    pad = model.config.pad_id
    rows = []
    for sentence in src:
        s = sentence[sentence != pad][None]  # (1, S_b)
        memory = model.encode(s)
        ys = [bos_id]
        for _ in range(max_len):
            logits = model.decode(torch.tensor([ys]), memory, s)[0, -1].clone()
            logits[pad] = float("-inf")
            ys.append(int(logits.argmax()))
            if ys[-1] == eos_id:
                break
        rows.append(torch.tensor(ys[1:], dtype=torch.long))
    return torch.nn.utils.rnn.pad_sequence(rows, batch_first=True, padding_value=pad)


CASES = [
    BlindCase(
        CHECK,
        "pad_not_masked",
        greedy_pad_allowed,
        "mistake",
        "I took the argmax over every token, so PAD can be generated.",
    ),
    BlindCase(
        CHECK,
        "eos_dropped",
        greedy_eos_dropped,
        "mistake",
        "When a sentence produced EOS I wrote PAD instead, so EOS is not in the output.",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_end",
        greedy_no_pad_after_end,
        "mistake",
        "I stop the loop when every sentence has produced EOS, but a finished sentence keeps "
        "writing tokens after its EOS instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "stop_at_first_eos",
        greedy_stop_at_first_eos,
        "mistake",
        "I break out of the loop as soon as any sentence of the batch produces EOS.",
    ),
    BlindCase(
        CHECK,
        "dropout_left_on",
        greedy_train_mode,
        "mistake",
        "I decorated it with torch.no_grad() but never called model.eval(), so dropout stays on.",
    ),
    BlindCase(
        CHECK,
        "bos_returned",
        greedy_with_bos,
        "mistake",
        "I returned the decoder's whole sequence, BOS included.",
    ),
    BlindCase(
        CHECK,
        "max_len_counts_bos",
        greedy_one_step_short,
        "mistake",
        "I looped while the sequence (with BOS) is shorter than max_len, so one token fewer is "
        "generated.",
    ),
    BlindCase(
        CHECK,
        "feeds_last_token_only",
        greedy_last_token_only,
        "mistake",
        "I fed only the newest token to model.decode at every step, without a cache, so the "
        "decoder forgets the prefix and always sees position 0.",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position_logits,
        "mistake",
        "I read the logits at position 0 ([:, 0]) instead of the last position.",
    ),
    BlindCase(
        CHECK,
        "pad_sliced_off_no_offset",
        greedy_pad_slice_offset,
        "mistake",
        "I removed PAD by taking the argmax of logits[:, 1:] and forgot to add 1 back to the "
        "index.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        greedy_softmax_over_batch,
        "mistake",
        "I applied softmax(logits, dim=0) before the argmax, normalising over the batch.",
    ),
    BlindCase(
        CHECK,
        "recompute_whole_batch",
        greedy_recompute_whole_batch,
        "correct",
        "No cache, no shrinking batch: the whole prefix every step, finished rows fed PAD, "
        "log_softmax before argmax, the model's mode restored.",
    ),
    BlindCase(
        CHECK,
        "cache_all_rows",
        greedy_with_cache,
        "correct",
        "The package's KVCache with one token per step, all rows kept to the end, output "
        "preallocated and cut to the steps taken.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_sentence_at_a_time,
        "correct",
        "Each sentence decoded alone (its padding stripped), rows padded with pad_sequence.",
    ),
]
