"""Blind set B7, check_greedy_decode (chapter 15): greedy search as readers write it.

Most mistakes share one plain greedy loop (the whole prefix re-fed at every step, every
sentence kept in the batch to the end) with exactly one slip switched on; the correct variants
are written out on their own.
"""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.transformer import Transformer

from .. import BlindCase

CHECK = "check_greedy_decode"


@torch.no_grad()
def _greedy(
    model: Transformer,
    src: Tensor,
    max_len: int,
    bos_id: int,
    eos_id: int,
    slip: str | None = None,
) -> Tensor:
    was_training = model.training
    if slip != "no_eval":
        model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)  # (B, S, D)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    steps = max_len - 1 if slip == "one_short" else max_len
    for _ in range(steps):
        if slip == "last_token_no_cache":
            logits = model.decode(tokens[:, -1:], memory, src)[:, -1]  # (B, V)
        elif slip == "first_position":
            logits = model.decode(tokens, memory, src)[:, 0]
        elif slip == "squeeze":
            logits = model.decode(tokens, memory, src)[:, -1:].squeeze()
        else:
            logits = model.decode(tokens, memory, src)[:, -1]
        if slip != "pad_allowed":
            logits[:, pad] = float("-inf")
        next_token = logits.argmax(dim=-1)  # (B,)
        if slip == "eos_dropped":
            finished |= next_token == eos_id
            next_token = next_token.masked_fill(finished, pad)
        elif slip == "finished_overwritten":
            next_token = next_token.masked_fill(finished, pad)
            finished = next_token == eos_id
        else:
            if slip != "no_pad_after_end":
                next_token = next_token.masked_fill(finished, pad)
            finished |= next_token == eos_id
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)
        if finished.any() if slip == "stop_at_first_eos" else finished.all():
            break
    model.train(was_training)
    return tokens if slip == "keeps_bos" else tokens[:, 1:]


# ---------------------------------------------------------------- mistakes


def greedy_pad_allowed(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "pad_allowed")


def greedy_eos_dropped(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "eos_dropped")


def greedy_no_pad_after_end(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "no_pad_after_end")


def greedy_stop_at_first_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "stop_at_first_eos")


def greedy_one_short(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "one_short")


def greedy_keeps_bos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "keeps_bos")


def greedy_no_eval(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "no_eval")


def greedy_last_token_no_cache(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "last_token_no_cache")


def greedy_first_position(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "first_position")


def greedy_finished_overwritten(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "finished_overwritten")


def greedy_squeeze(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "squeeze")


# ---------------------------------------------------------------- correct variants


def greedy_cached(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    """The key/value cache, one new token per step; PAD removed with index_fill."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    with torch.inference_mode():
        memory = model.encode(src)
        cache = model.new_cache()
        out = [torch.full((src.shape[0],), bos_id, dtype=torch.long)]
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        while len(out) <= max_len and not bool(done.all()):
            logits = model.decode(out[-1][:, None], memory, src, cache)[:, -1]
            logits = logits.index_fill(1, torch.tensor([pad]), float("-inf"))
            nxt = torch.where(done, torch.full_like(out[-1], pad), logits.argmax(-1))
            done = done | (nxt == eos_id)
            out.append(nxt)
    model.train(was_training)
    return torch.stack(out[1:], dim=1)


def greedy_one_sentence_at_a_time(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    """Each sentence decoded alone with Python lists, then padded to the longest output."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    outputs = []
    with torch.no_grad():
        for row in src:
            one = row[None]  # (1, S)
            memory = model.encode(one)
            ids = [bos_id]
            for _ in range(max_len):
                logits = model.decode(torch.tensor([ids]), memory, one)[0, -1].clone()
                logits[pad] = float("-inf")
                ids.append(int(logits.argmax()))
                if ids[-1] == eos_id:
                    break
            outputs.append(ids[1:])
    model.train(was_training)
    width = max(len(o) for o in outputs)
    return torch.tensor([o + [pad] * (width - len(o)) for o in outputs], dtype=torch.long)


def greedy_top2_log_probs(
    model: Transformer,
    src: Tensor,
    max_len: int,
    bos_id: int,
    eos_id: int,
    use_cache: bool = False,
) -> Tensor:
    """log_softmax, then the better of the two best tokens that is not PAD; an extra
    ``use_cache`` argument (off by default: the whole prefix is fed at every step)."""
    return _greedy_top2(model, src, max_len, bos_id, eos_id, use_cache)


@torch.no_grad()
def _greedy_top2(model, src, max_len, bos_id, eos_id, use_cache: bool = False):
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    cache = model.new_cache() if use_cache else None
    seq = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    ended = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        fed = seq[:, -1:] if use_cache else seq
        log_p = model.decode(fed, memory, src, cache)[:, -1].log_softmax(-1)
        top = log_p.topk(2, dim=-1).indices  # (B, 2)
        choice = torch.where(top[:, 0] == pad, top[:, 1], top[:, 0])
        choice[ended] = pad
        ended |= choice == eos_id
        seq = torch.cat([seq, choice[:, None]], 1)
        if ended.all():
            break
    model.train(was_training)
    return seq[:, 1:]


CASES = [
    BlindCase(
        CHECK,
        "pad_not_excluded",
        greedy_pad_allowed,
        "mistake",
        "I take the argmax over every token, PAD included.",
    ),
    BlindCase(
        CHECK,
        "eos_replaced_by_pad",
        greedy_eos_dropped,
        "mistake",
        "I update the finished flags before padding the finished rows, so the EOS itself is "
        "overwritten by PAD and never appears in the output.",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_eos",
        greedy_no_pad_after_end,
        "mistake",
        "I track which sentences finished (to stop the loop) but keep writing the argmax "
        "tokens after their EOS instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "stop_at_first_eos",
        greedy_stop_at_first_eos,
        "mistake",
        "The loop stops as soon as any sentence has produced EOS (finished.any() instead of "
        "finished.all()).",
    ),
    BlindCase(
        CHECK,
        "one_token_short",
        greedy_one_short,
        "mistake",
        "I loop range(max_len - 1), counting BOS as one of the max_len tokens, so an output "
        "that never ends has max_len - 1 tokens.",
    ),
    BlindCase(
        CHECK,
        "returns_bos",
        greedy_keeps_bos,
        "mistake",
        "I return the whole token tensor, BOS column included.",
    ),
    BlindCase(
        CHECK,
        "dropout_left_on",
        greedy_no_eval,
        "mistake",
        "I forgot model.eval(), so dropout is active while decoding a model in training mode.",
    ),
    BlindCase(
        CHECK,
        "feeds_last_token_without_cache",
        greedy_last_token_no_cache,
        "mistake",
        "I feed only the newest token to model.decode, as with a cache, but pass no cache: the "
        "decoder sees one token at position 0 and none of the prefix.",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position,
        "mistake",
        "I take logits[:, 0] (the prediction after BOS) instead of logits[:, -1] at every step.",
    ),
    BlindCase(
        CHECK,
        "finished_flag_overwritten",
        greedy_finished_overwritten,
        "mistake",
        "I wrote finished = next_token == eos_id instead of |=, so a sentence gets one PAD "
        "after its EOS and then starts generating again while others go on.",
    ),
    BlindCase(
        CHECK,
        "squeeze_breaks_batch_of_one",
        greedy_squeeze,
        "mistake",
        "I took logits[:, -1:].squeeze() to drop the time axis; with a single sentence it "
        "also drops the batch axis and indexing logits[:, pad] fails.",
    ),
    BlindCase(
        CHECK,
        "kv_cache_inference_mode",
        greedy_cached,
        "correct",
        "With model.new_cache(), feeding one token per step under torch.inference_mode, "
        "tokens kept in a list and stacked at the end.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_sentence_at_a_time,
        "correct",
        "Each sentence decoded alone with Python lists, then padded with PAD to the longest.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_top2",
        greedy_top2_log_probs,
        "correct",
        "log_softmax, then the best of the top two tokens that is not PAD; whole prefix fed, "
        "an extra use_cache=False argument.",
    ),
]
