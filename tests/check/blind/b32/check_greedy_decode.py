"""Blind set B32, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

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
    eval_mode: bool = True,
    exclude_pad: bool = True,
    keep_eos: bool = True,
    pad_after_end: bool = True,
    fill_id: int | None = None,
    steps: int | None = None,
    position: int = -1,
    stop_on_first: bool = False,
    keep_bos: bool = False,
) -> Tensor:
    """Greedy search recomputing the prefix, with switches for the mistakes below."""
    was_training = model.training
    if eval_mode:
        model.eval()
    pad = model.config.pad_id
    fill = pad if fill_id is None else fill_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    for _ in range(max_len if steps is None else steps):
        logits = model.decode(tokens, memory, src)[:, position]  # (B, V)
        if exclude_pad:
            logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        if pad_after_end:
            nxt = torch.where(done, torch.full_like(nxt, fill), nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done = done | (nxt == eos_id)
        if stop_on_first and done.any():
            break
        if done.all():
            break
    out = tokens if keep_bos else tokens[:, 1:]
    if not keep_eos:
        out = out.masked_fill(out == eos_id, pad)
    model.train(was_training)
    return out


# ---------------------------------------------------------------- mistakes


def greedy_pad_not_excluded(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, exclude_pad=False)


def greedy_eos_dropped(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_eos=False)


def greedy_no_pad_after_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, pad_after_end=False)


def greedy_eos_repeated(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, fill_id=eos_id)


def greedy_bos_returned(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_bos=True)


def greedy_one_step_short(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, steps=max_len - 1)  # BOS counted


def greedy_first_position(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, position=0)


def greedy_stops_at_first_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_on_first=True)


def greedy_dropout_on(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, eval_mode=False)


@torch.no_grad()
def greedy_full_width(model, src, max_len, bos_id, eos_id):
    """Runs all max_len steps, even after every sentence has ended."""
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, torch.full_like(done, pad, dtype=torch.long), logits.argmax(-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
    return tokens[:, 1:]


@torch.no_grad()
def greedy_drops_finished_rows_misaligned(model, src, max_len, bos_id, eos_id):
    """Drops finished sentences from the batch but keeps writing into rows 0 .. n - 1."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    out = torch.full((B, max_len), pad, dtype=torch.long, device=src.device)
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    t = 0
    for t in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        out[: len(nxt), t] = nxt  # the open sentences, in order
        keep = nxt != eos_id
        if not keep.any():
            break
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)[keep]
        memory, src = memory[keep], src[keep]
    return out[:, : t + 1]


@torch.no_grad()
def greedy_memory_recomputed_with_tokens(model, src, max_len, bos_id, eos_id):
    """Feeds the output so far as the source mask too (src replaced by the tokens)."""
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        fake_src = torch.ones_like(src)  # "src is only used for its mask": no padding then
        logits = model.decode(tokens, memory, fake_src)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = torch.where(done, torch.full_like(done, pad, dtype=torch.long), logits.argmax(-1))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


# ---------------------------------------------------------------- correct variants


def greedy_recompute(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id)


@torch.no_grad()
def greedy_with_cache(model, src, max_len, bos_id, eos_id):
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    cache = model.new_cache()
    last = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    out = []
    for _ in range(max_len):
        logits = model.decode(last, memory, src, cache=cache)[:, -1].clone()  # (B, V)
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(dim=-1).masked_fill(finished, pad)
        out.append(nxt)
        finished = finished | (nxt == eos_id)
        last = nxt[:, None]
        if bool(finished.all()):
            break
    model.train(was_training)
    return torch.stack(out, dim=1)


@torch.no_grad()
def greedy_one_sentence_at_a_time(model, src, max_len, bos_id, eos_id, pad_id=None):
    model.eval()
    pad = model.config.pad_id if pad_id is None else pad_id
    outputs = []
    for b in range(src.shape[0]):
        s = src[b : b + 1]
        memory = model.encode(s)
        ys = [bos_id]
        for _ in range(max_len):
            logits = model.decode(torch.tensor([ys], device=src.device), memory, s)[0, -1]
            logits = logits.log_softmax(-1)
            logits[pad] = float("-inf")
            ys.append(int(logits.argmax()))
            if ys[-1] == eos_id:
                break
        outputs.append(torch.tensor(ys[1:], dtype=torch.long))
    width = max(len(o) for o in outputs)
    result = torch.full((len(outputs), width), pad, dtype=torch.long)
    for b, o in enumerate(outputs):
        result[b, : len(o)] = o
    return result.to(src.device)


CASES = [
    BlindCase(
        CHECK,
        "pad_not_excluded",
        greedy_pad_not_excluded,
        "mistake",
        "I took logits.argmax(-1) directly, so PAD can be generated.",
    ),
    BlindCase(
        CHECK,
        "eos_dropped",
        greedy_eos_dropped,
        "mistake",
        "I replaced the EOS by PAD in the output, thinking EOS is not part of the sentence.",
    ),
    BlindCase(
        CHECK,
        "no_pad_after_eos",
        greedy_no_pad_after_eos,
        "mistake",
        "I stop when every sentence has produced EOS, but a sentence that ended early keeps "
        "getting argmax tokens after its EOS instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "eos_repeated_after_end",
        greedy_eos_repeated,
        "mistake",
        "After its end I fill a sentence's row with EOS instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "bos_returned",
        greedy_bos_returned,
        "mistake",
        "I returned the whole token tensor, BOS in column 0 included.",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        greedy_one_step_short,
        "mistake",
        "I counted BOS in max_len, so at most max_len - 1 tokens are generated.",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position,
        "mistake",
        "I took the logits at position 0 (logits[:, 0]) instead of the last position.",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_eos",
        greedy_stops_at_first_eos,
        "mistake",
        "I break out of the loop as soon as any sentence of the batch produces EOS.",
    ),
    BlindCase(
        CHECK,
        "dropout_left_on",
        greedy_dropout_on,
        "mistake",
        "I forgot model.eval(), so dropout stays on while decoding.",
    ),
    BlindCase(
        CHECK,
        "always_max_len_columns",
        greedy_full_width,
        "mistake",
        "I ran all max_len steps even after every sentence had ended, so the output always "
        "has max_len columns.",
    ),
    BlindCase(
        CHECK,
        "finished_rows_misaligned",
        greedy_drops_finished_rows_misaligned,
        "mistake",
        "I drop finished sentences from the batch, but write the next tokens into rows "
        "0 .. n - 1 of the output, so they land in the wrong sentences.",
    ),
    BlindCase(
        CHECK,
        "source_mask_ignored",
        greedy_memory_recomputed_with_tokens,
        "mistake",
        "I passed a tensor of ones as src to decode (it is 'only for the mask'), so the "
        "source padding is attended to.",
    ),
    BlindCase(
        CHECK,
        "recompute_prefix",
        greedy_recompute,
        "correct",
        "Recomputes the whole prefix at every step, no cache; a finished mask; stops when "
        "all have ended; restores the training mode.",
    ),
    BlindCase(
        CHECK,
        "kv_cache_all_rows",
        greedy_with_cache,
        "correct",
        "Uses model.new_cache() and feeds one token per step, keeping every row until the "
        "end; restores the training mode.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_sentence_at_a_time,
        "correct",
        "Decodes each sentence alone with log_softmax before argmax, then pads the outputs to "
        "a common width; pad_id as an optional argument; leaves the model in eval mode.",
    ),
]
