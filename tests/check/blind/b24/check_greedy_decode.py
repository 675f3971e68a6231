"""Blind set B24, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.sequences import pad_sequences

from .. import BlindCase

CHECK = "check_greedy_decode"


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def greedy_pad_allowed(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]  # (B, V)
        nxt = logits.argmax(dim=-1)  # the most probable token
        nxt = nxt.masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_bos_kept(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(dim=-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return ys  # the whole decoded sequence


@torch.no_grad()
def greedy_no_pad_after_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(dim=-1)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        if (ys == eos_id).any(dim=1).all():  # every sentence has its EOS
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_eos_dropped(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(dim=-1)
        done |= nxt == eos_id
        nxt = nxt.masked_fill(done, pad)  # a finished sentence holds PAD
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        if done.all():
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_one_step_short(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    while ys.shape[1] < max_len:  # max_len tokens, BOS included
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(dim=-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_dropout_on(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(dim=-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_first_position(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, 0]  # (B, V) of the position I thought new
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(dim=-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_stop_at_first_eos(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(dim=-1)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        if (nxt == eos_id).any():
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_eos_repeated(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(dim=-1).masked_fill(done, eos_id)  # finished: keep saying EOS
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_feeds_last_token(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys[:, -1:], memory, src)[:, -1]  # only the new token is needed
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(dim=-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_returns_lists(model, src: Tensor, max_len: int, bos_id: int, eos_id: int):
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(dim=-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    model.train(was_training)
    return ys[:, 1:].tolist()  # one list of ids per sentence, easy to detokenize


@torch.no_grad()
def greedy_done_from_last_token(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        done = ys[:, -1] == eos_id  # finished if the last token is EOS
        logits = model.decode(ys, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(dim=-1).masked_fill(done, pad)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        if ((ys == eos_id) | (ys == pad)).any(dim=1).all():
            break
    model.train(was_training)
    return ys[:, 1:]


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_forward_recompute(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """model(src, ys) at every step (encoder rerun too), torch.where for the finished rows."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.size(0)
    ys = src.new_full((B, 1), bos_id)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    step = 0
    while step < max_len and not finished.all():
        logits = model(src, ys)[:, -1, :].clone()
        logits[:, pad] = -torch.inf
        best = logits.argmax(-1)
        best = torch.where(finished, torch.full_like(best, pad), best)
        ys = torch.cat((ys, best.unsqueeze(1)), dim=1)
        finished = finished | (best == eos_id)
        step += 1
    model.train(was_training)
    return ys[:, 1:]


@torch.no_grad()
def greedy_with_cache(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    """The model's KVCache: one new token per step; finished rows are fed PAD and ignored."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    cache = model.new_cache()
    B = src.shape[0]
    last = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    outputs: list[Tensor] = []
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(last, memory, src, cache=cache, last_only=True)[:, -1]
        nxt = logits.masked_fill(
            torch.arange(logits.shape[-1], device=src.device) == pad, float("-inf")
        ).argmax(-1)
        nxt[done] = pad
        outputs.append(nxt)
        done = done | (nxt == eos_id)
        last = nxt[:, None]
        if bool(done.all()):
            break
    model.train(was_training)
    return torch.stack(outputs, dim=1)


@torch.no_grad()
def greedy_one_sentence_at_a_time(
    model, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    """Each sentence alone, as a list of ids, then padded into one tensor."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    rows: list[list[int]] = []
    for i in range(src.shape[0]):
        s = src[i : i + 1]
        memory = model.encode(s)
        ids = [bos_id]
        for _ in range(max_len):
            logits = model.decode(torch.tensor([ids], device=src.device), memory, s)[0, -1]
            logits[pad] = float("-inf")
            ids.append(int(logits.argmax()))
            if ids[-1] == eos_id:
                break
        rows.append(ids[1:])
    model.train(was_training)
    out, _ = pad_sequences(rows, pad_value=pad)
    return out.to(src.device)


CASES = [
    BlindCase(
        CHECK,
        "pad_can_be_generated",
        greedy_pad_allowed,
        "mistake",
        "I took the argmax over the whole vocabulary, PAD included.",
    ),
    BlindCase(
        CHECK,
        "bos_in_output",
        greedy_bos_kept,
        "mistake",
        "I returned ys with the BOS column still in front.",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_eos",
        greedy_no_pad_after_eos,
        "mistake",
        "A sentence that said EOS keeps getting tokens until every sentence has one; "
        "I never put PAD after EOS.",
    ),
    BlindCase(
        CHECK,
        "eos_replaced_by_pad",
        greedy_eos_dropped,
        "mistake",
        "I marked a sentence done before writing the token, so its EOS became PAD too.",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_max_len",
        greedy_one_step_short,
        "mistake",
        "while ys.shape[1] < max_len: BOS counted, so at most max_len - 1 tokens.",
    ),
    BlindCase(
        CHECK,
        "dropout_left_on",
        greedy_dropout_on,
        "mistake",
        "torch.no_grad() but no model.eval(): dropout stays on while decoding.",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position,
        "mistake",
        "I took decode(...)[:, 0], the prediction after BOS, at every step, not [:, -1].",
    ),
    BlindCase(
        CHECK,
        "stop_at_first_eos_in_batch",
        greedy_stop_at_first_eos,
        "mistake",
        "The loop breaks as soon as any sentence of the batch produces EOS.",
    ),
    BlindCase(
        CHECK,
        "eos_repeated_after_end",
        greedy_eos_repeated,
        "mistake",
        "After its EOS a sentence's row is filled with EOS instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "feeds_last_token_without_cache",
        greedy_feeds_last_token,
        "mistake",
        "I fed only the newest token to decode, without a cache, so the decoder forgets the "
        "prefix and puts every token at position 0.",
    ),
    BlindCase(
        CHECK,
        "returns_python_lists",
        greedy_returns_lists,
        "mistake",
        "I return ys[:, 1:].tolist(), a list of id lists, not a tensor.",
    ),
    BlindCase(
        CHECK,
        "finished_means_last_token_is_eos",
        greedy_done_from_last_token,
        "mistake",
        "A row counts as finished when its last token is EOS, so after one PAD a finished "
        "sentence starts generating again.",
    ),
    BlindCase(
        CHECK,
        "forward_recompute",
        greedy_forward_recompute,
        "correct",
        "model(src, ys) at every step (the encoder rerun), a while loop and torch.where.",
    ),
    BlindCase(
        CHECK,
        "kv_cache_all_rows",
        greedy_with_cache,
        "correct",
        "The model's own cache, one token per step; finished rows stay in the batch fed PAD.",
    ),
    BlindCase(
        CHECK,
        "sentence_by_sentence",
        greedy_one_sentence_at_a_time,
        "correct",
        "Each sentence decoded alone with Python lists, then pad_sequences.",
    ),
]
