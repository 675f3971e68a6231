"""Blind set B22, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_greedy_decode"


def _trim(out: Tensor, pad: int) -> Tensor:
    """Drop the columns after the longest output (every row is PAD there)."""
    width = int((out != pad).any(dim=0).nonzero().max()) + 1 if (out != pad).any() else 1
    return out[:, :width]


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def greedy_no_eval(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
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
    return tokens[:, 1:]


def _greedy(model, src, max_len, bos_id, eos_id, slip=None):
    """A right greedy search (full prefix re-run each step); ``slip`` puts in one mistake."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    with torch.no_grad():
        memory = model.encode(src)
        tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(B, dtype=torch.bool, device=src.device)
        steps = max_len - 1 if slip == "one_short" else max_len
        for _ in range(steps):
            if slip == "last_token_only":
                logits = model.decode(tokens[:, -1:], memory, src)[:, -1]
            elif slip == "first_position":
                logits = model.decode(tokens, memory, src)[:, 0]
            else:
                logits = model.decode(tokens, memory, src)[:, -1]
            if slip != "pad_allowed":
                logits = logits.masked_fill(
                    torch.arange(logits.shape[-1], device=logits.device) == pad, float("-inf")
                )
            nxt = logits.argmax(dim=-1)
            if slip == "eos_check_before_append":
                done_before = done | (tokens[:, -1] == eos_id)
                nxt = torch.where(done_before, pad, nxt)
                done = done_before
            elif slip == "no_pad_after_end":
                pass
            elif slip == "fill_eos_after_end":
                nxt = torch.where(done, eos_id, nxt)
            else:
                nxt = torch.where(done, pad, nxt)
            if slip == "eos_dropped":
                ended = nxt == eos_id
                nxt = torch.where(ended, pad, nxt)
                tokens = torch.cat([tokens, nxt[:, None]], dim=1)
                done = done | ended
            else:
                tokens = torch.cat([tokens, nxt[:, None]], dim=1)
                if slip != "eos_check_before_append":
                    done = done | (nxt == eos_id)
            if slip == "stop_at_first_eos":
                if done.any():
                    break
            elif done.all():
                break
    model.train(was_training)
    if slip == "keeps_bos":
        return tokens
    if slip == "returns_list":
        return [row[1:].tolist() for row in tokens]
    return tokens[:, 1:]


def greedy_pad_allowed(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "pad_allowed")


def greedy_eos_dropped(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "eos_dropped")


def greedy_no_pad_after_end(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "no_pad_after_end")


def greedy_keeps_bos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "keeps_bos")


def greedy_first_position(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "first_position")


def greedy_one_short(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "one_short")


def greedy_stop_at_first_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "stop_at_first_eos")


def greedy_last_token_only(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "last_token_only")


def greedy_eos_check_before_append(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "eos_check_before_append")


def greedy_fill_eos_after_end(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "fill_eos_after_end")


def greedy_returns_list(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "returns_list")


# ---------------------------------------------------------------- correct variants


def greedy_plain(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id)


@torch.no_grad()
def greedy_with_cache(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    cache = model.new_cache()
    last = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    outputs = []
    for _ in range(max_len):
        logits = model.decode(last, memory, src, cache=cache)[:, -1].clone()  # (B, V)
        logits[:, pad] = float("-inf")
        token = logits.argmax(dim=-1)
        token[finished] = pad
        outputs.append(token)
        finished = finished | (token == eos_id)
        # a finished row is fed its own EOS again: what it computes is never used
        last = torch.where(finished, eos_id, token)[:, None]
        if bool(finished.all()):
            break
    model.train(was_training)
    return torch.stack(outputs, dim=1)


def greedy_one_sentence_at_a_time(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    rows = []
    with torch.inference_mode():
        for i in range(src.shape[0]):
            one = src[i : i + 1]
            memory = model.encode(one)
            ys = [bos_id]
            for _ in range(max_len):
                tgt = torch.tensor([ys], device=src.device)
                scores = model.decode(tgt, memory, one)[0, -1]
                scores[pad] = -torch.inf
                ys.append(int(scores.argmax()))
                if ys[-1] == eos_id:
                    break
            rows.append(ys[1:])
    model.train(was_training)
    width = max(len(r) for r in rows)
    out = torch.full((len(rows), width), pad, dtype=torch.long, device=src.device)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.tensor(r)
    return out


@torch.no_grad()
def greedy_fixed_buffer(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    mode = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    buf = torch.full((B, max_len + 1), pad, dtype=torch.long, device=src.device)
    buf[:, 0] = bos_id
    alive = torch.ones(B, dtype=torch.bool, device=src.device)
    for t in range(1, max_len + 1):
        logp = model.decode(buf[:, :t], memory, src)[:, -1].log_softmax(-1)
        logp[:, pad] = -float("inf")
        buf[:, t] = torch.where(alive, logp.argmax(-1), pad)
        alive &= buf[:, t] != eos_id
        if not alive.any():
            break
    model.train(mode)
    return _trim(buf[:, 1:], pad)


CASES = [
    BlindCase(
        CHECK,
        "no_eval_mode",
        greedy_no_eval,
        "mistake",
        "I forgot model.eval(), so dropout stays on while decoding.",
    ),
    BlindCase(
        CHECK,
        "pad_allowed",
        greedy_pad_allowed,
        "mistake",
        "I took the argmax over every token, PAD included.",
    ),
    BlindCase(
        CHECK,
        "eos_dropped",
        greedy_eos_dropped,
        "mistake",
        "When a sentence produces EOS I write PAD in its place: EOS is not kept.",
    ),
    BlindCase(
        CHECK,
        "keeps_generating_after_eos",
        greedy_no_pad_after_end,
        "mistake",
        "I record when a row has ended but keep appending its argmax tokens after EOS.",
    ),
    BlindCase(
        CHECK,
        "returns_bos",
        greedy_keeps_bos,
        "mistake",
        "I return the whole token buffer, BOS in column 0 included.",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position,
        "mistake",
        "I took logits[:, 0] (the prediction after BOS) instead of the last position.",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        greedy_one_short,
        "mistake",
        "My loop runs max_len - 1 times, so a sentence that does not end gets one token too few.",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_eos",
        greedy_stop_at_first_eos,
        "mistake",
        "I stop the loop when any sentence has produced EOS (done.any() instead of done.all()).",
    ),
    BlindCase(
        CHECK,
        "feeds_last_token_without_cache",
        greedy_last_token_only,
        "mistake",
        "I feed only the newest token to decode, as with a cache, but without passing a cache.",
    ),
    BlindCase(
        CHECK,
        "eos_checked_before_append",
        greedy_eos_check_before_append,
        "mistake",
        "I test the previous token for EOS before appending, so every row gets one real token "
        "after its EOS.",
    ),
    BlindCase(
        CHECK,
        "eos_fill_after_end",
        greedy_fill_eos_after_end,
        "mistake",
        "After a sentence ends I keep writing EOS in its row instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "returns_lists",
        greedy_returns_list,
        "mistake",
        "I return a list of token-id lists, one per sentence, not a tensor.",
    ),
    BlindCase(
        CHECK,
        "full_prefix_no_cache",
        greedy_plain,
        "correct",
        "The whole prefix re-run every step, a done mask and torch.where for PAD; "
        "masked_fill for the PAD logit.",
    ),
    BlindCase(
        CHECK,
        "cache_keep_finished_rows",
        greedy_with_cache,
        "correct",
        "A KVCache, one token fed per step; finished rows stay in the batch (fed EOS again) "
        "and their outputs are PAD.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_sentence_at_a_time,
        "correct",
        "Each sentence decoded alone with Python lists under inference_mode, then padded.",
    ),
    BlindCase(
        CHECK,
        "fixed_buffer_log_softmax",
        greedy_fixed_buffer,
        "correct",
        "A (B, max_len + 1) buffer filled column by column, argmax of log_softmax, the PAD "
        "columns after the longest output cut off.",
    ),
]
