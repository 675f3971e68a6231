"""Blind set B33, check_greedy_decode (chapter 15): greedy search as readers write it."""

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
    eval_mode: bool = True,
    keep_bos: bool = False,
    stop_at_eos: bool = True,
    block_pad: bool = True,
    steps: int | None = None,
    trim: bool = True,
    keep_eos: bool = True,
    position: int = -1,
    fill_after_end: int | None = None,
    stop_when_any: bool = False,
):
    """One reader's greedy loop (recomputing the prefix each step); the mistakes below are
    single changes to it, named by its keyword arguments."""
    if eval_mode:
        model.eval()
    pad = model.config.pad_id
    after_end = pad if fill_after_end is None else fill_after_end
    B = src.shape[0]
    with torch.no_grad():
        memory = model.encode(src)
        tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(B, dtype=torch.bool, device=src.device)
        for _ in range(max_len if steps is None else steps):
            logits = model.decode(tokens, memory, src)[:, position]  # (B, V)
            if block_pad:
                logits[:, pad] = float("-inf")
            next_token = logits.argmax(dim=-1)
            just_ended = ~done & (next_token == eos_id) if stop_at_eos else torch.zeros_like(done)
            next_token = torch.where(done, torch.full_like(next_token, after_end), next_token)
            if not keep_eos:
                next_token = torch.where(just_ended, torch.full_like(next_token, pad), next_token)
            tokens = torch.cat([tokens, next_token[:, None]], dim=1)
            done = done | just_ended
            if trim and (done.any() if stop_when_any else done.all()):
                break
    return tokens if keep_bos else tokens[:, 1:]


# ---------------------------------------------------------------- mistakes


def greedy_keeps_bos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_bos=True)


def greedy_ignores_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_at_eos=False)


def greedy_pad_allowed(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, block_pad=False)


def greedy_no_eval(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, eval_mode=False)


def greedy_one_step_short(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, steps=max_len - 1)


def greedy_never_trims(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, trim=False)


def greedy_eos_replaced_by_pad(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_eos=False)


def greedy_first_position(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, position=0)


def greedy_eos_repeated(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, fill_after_end=eos_id)


def greedy_model_max_len(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, model.config.max_len, bos_id, eos_id)


def greedy_stops_at_first_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_when_any=True)


def greedy_cache_with_whole_prefix(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    cache = model.new_cache()
    out = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    with torch.no_grad():
        for _ in range(max_len):
            logits = model.decode(out, memory, src, cache)[:, -1]  # the cache makes it fast
            logits[:, pad] = float("-inf")
            nxt = torch.where(done, pad, logits.argmax(-1))
            out = torch.cat([out, nxt[:, None]], dim=1)
            done |= nxt == eos_id
            if done.all():
                break
    return out[:, 1:]


def greedy_float_output(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    out = torch.zeros(B, max_len)  # filled with PAD (id 0)
    memory = model.encode(src)
    prefix = torch.full((B, 1), bos_id)
    finished = torch.zeros(B, dtype=torch.bool)
    t = 0
    with torch.no_grad():
        for t in range(max_len):
            logits = model.decode(prefix, memory, src)[:, -1]
            logits[:, pad] = -1e9
            nxt = logits.argmax(-1).masked_fill(finished, pad)
            out[:, t] = nxt
            prefix = torch.cat([prefix, nxt[:, None]], 1)
            finished |= nxt == eos_id
            if finished.all():
                break
    return out[:, : t + 1]


def greedy_log_softmax_over_batch(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    with torch.no_grad():
        for _ in range(max_len):
            logits = model.decode(tokens, memory, src)[:, -1]
            log_probs = logits.log_softmax(dim=0)  # probabilities of the next token
            log_probs[:, pad] = float("-inf")
            nxt = torch.where(done, pad, log_probs.argmax(-1))
            tokens = torch.cat([tokens, nxt[:, None]], dim=1)
            done |= nxt == eos_id
            if done.all():
                break
    return tokens[:, 1:]


# ---------------------------------------------------------------- correct variants


def greedy_forward_each_step(model, src, max_len, bos_id, eos_id):
    """Calls the whole model (encoder included) on the prefix at every step."""
    model.eval()
    pad = model.config.pad_id
    ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long, device=src.device)
    ended = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    with torch.no_grad():
        for _ in range(max_len):
            log_probs = model(src, ys)[:, -1].log_softmax(-1)
            log_probs[:, pad] = float("-inf")
            nxt = log_probs.argmax(-1)
            nxt[ended] = pad
            ys = torch.cat([ys, nxt.unsqueeze(1)], dim=1)
            ended |= nxt == eos_id
            if bool(ended.all()):
                break
    return ys[:, 1:]


def greedy_with_cache(model, src, max_len, bos_id, eos_id):
    """One new token per step through the model's key/value cache; all rows stay in the batch."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    cache = model.new_cache()
    last = torch.full((B, 1), bos_id, dtype=torch.long)
    outputs = []
    finished = torch.zeros(B, dtype=torch.bool)
    with torch.inference_mode():
        for _ in range(max_len):
            logits = model.decode(last, memory, src, cache=cache)[:, -1]  # (B, V)
            logits = logits.index_fill(1, torch.tensor([pad]), float("-inf"))
            nxt = torch.where(finished, torch.full_like(logits[:, 0], pad).long(), logits.argmax(1))
            outputs.append(nxt)
            finished = finished | (nxt == eos_id)
            last = nxt[:, None]
            if finished.all():
                break
    return torch.stack(outputs, dim=1)


def greedy_sentence_by_sentence(model, src, max_len, bos_id, eos_id):
    """Each sentence decoded alone, then padded to the longest."""
    model.eval()
    pad = model.config.pad_id
    results = []
    with torch.no_grad():
        for row in src:
            one = row[None]  # (1, S)
            memory = model.encode(one)
            ids = [bos_id]
            for _ in range(max_len):
                logits = model.decode(torch.tensor([ids]), memory, one)[0, -1]
                logits[pad] = float("-inf")
                ids.append(int(logits.argmax()))
                if ids[-1] == eos_id:
                    break
            results.append(ids[1:])
    width = max(len(r) for r in results)
    return torch.tensor([r + [pad] * (width - len(r)) for r in results], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "bos_in_output",
        greedy_keeps_bos,
        "mistake",
        "I returned the whole sequence, BOS included.",
    ),
    BlindCase(
        CHECK,
        "eos_ignored",
        greedy_ignores_eos,
        "mistake",
        "I never checked for EOS, so every sentence runs to max_len and goes on after its EOS.",
    ),
    BlindCase(
        CHECK,
        "pad_can_be_generated",
        greedy_pad_allowed,
        "mistake",
        "I took the argmax over the whole vocabulary, PAD included.",
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
        "one_step_short",
        greedy_one_step_short,
        "mistake",
        "My loop runs max_len - 1 times, since BOS already takes a position.",
    ),
    BlindCase(
        CHECK,
        "never_stops_early",
        greedy_never_trims,
        "mistake",
        "I pad the finished rows but keep looping to max_len, so trailing columns hold only PAD.",
    ),
    BlindCase(
        CHECK,
        "eos_not_kept",
        greedy_eos_replaced_by_pad,
        "mistake",
        "When a sentence produces EOS I write PAD in its place.",
    ),
    BlindCase(
        CHECK,
        "logits_of_first_position",
        greedy_first_position,
        "mistake",
        "I took the logits at position 0, logits[:, 0], instead of the last position.",
    ),
    BlindCase(
        CHECK,
        "eos_repeated_after_end",
        greedy_eos_repeated,
        "mistake",
        "After a sentence ends I keep appending EOS instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "model_max_len_used",
        greedy_model_max_len,
        "mistake",
        "I looped up to model.config.max_len instead of the max_len argument.",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_finished",
        greedy_stops_at_first_eos,
        "mistake",
        "I stop the loop when any sentence has finished (done.any()) instead of all.",
    ),
    BlindCase(
        CHECK,
        "cache_fed_whole_prefix",
        greedy_cache_with_whole_prefix,
        "mistake",
        "I passed model.new_cache() to decode but kept feeding the whole prefix every step.",
    ),
    BlindCase(
        CHECK,
        "float_token_tensor",
        greedy_float_output,
        "mistake",
        "I made the output with torch.zeros(B, max_len), which is a float tensor.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_batch",
        greedy_log_softmax_over_batch,
        "mistake",
        "I took log_softmax(dim=0) of the (B, V) logits before the argmax.",
    ),
    BlindCase(
        CHECK,
        "full_forward_each_step",
        greedy_forward_each_step,
        "correct",
        "model(src, ys) on the whole prefix at every step (the encoder runs again each time); "
        "log_softmax before the argmax.",
    ),
    BlindCase(
        CHECK,
        "cache_one_token_all_rows",
        greedy_with_cache,
        "correct",
        "The model's key/value cache, one token per step; finished rows stay in the batch and "
        "get PAD.",
    ),
    BlindCase(
        CHECK,
        "sentence_by_sentence",
        greedy_sentence_by_sentence,
        "correct",
        "Each sentence decoded alone with Python lists, then padded to the longest.",
    ),
]
