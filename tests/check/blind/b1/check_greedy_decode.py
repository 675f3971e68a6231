"""Blind cases for check_greedy_decode (chapter 15)."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_greedy_decode"


def _greedy(
    model,
    src,
    max_len,
    bos_id,
    eos_id,
    *,
    keep_bos=False,
    block_pad=True,
    keep_eos=True,
    pad_after_end=True,
    steps_delta=0,
    stop_at_first_eos=False,
    first_position=False,
    eval_mode=True,
):
    """The learner's greedy search without a cache, with switches for the mistakes."""
    if eval_mode:
        model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    tokens = torch.full((B, 1), bos_id, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_len + steps_delta):
        logits = model.decode(tokens, memory, src)  # (B, T, V)
        last = logits[:, 0] if first_position else logits[:, -1]
        if block_pad:
            last = last.clone()
            last[:, pad] = float("-inf")
        nxt = last.argmax(-1)
        if pad_after_end:
            nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        is_eos = nxt == eos_id
        if not keep_eos:
            nxt = torch.where(is_eos, torch.full_like(nxt, pad), nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done = done | is_eos
        if done.all() or (stop_at_first_eos and done.any()):
            break
    return tokens if keep_bos else tokens[:, 1:]


def gd_keeps_bos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_bos=True)


def gd_pad_allowed(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, block_pad=False)


def gd_eos_dropped(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_eos=False)


def gd_continues_after_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, pad_after_end=False)


def gd_one_step_short(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, steps_delta=-1)


def gd_batch_stops_at_first_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_at_first_eos=True)


def gd_logits_of_first_position(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, first_position=True)


def gd_no_eval(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, eval_mode=False)


def gd_softmax_sample(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    gen = torch.Generator().manual_seed(0)
    for _ in range(max_len):
        probs = model.decode(tokens, memory, src)[:, -1].softmax(-1)
        probs[:, pad] = 0
        nxt = torch.multinomial(probs, 1, generator=gen).squeeze(1)  # samples instead of argmax
        nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
        tokens = torch.cat([tokens, nxt[:, None]], 1)
        done |= nxt == eos_id
        if done.all():
            break
    return tokens[:, 1:]


class GreedyDecoder:
    """Wraps the search in a class; the reader passes the class itself."""

    def __init__(self, model, src, max_len, bos_id, eos_id):
        self.model, self.src, self.max_len, self.bos_id, self.eos_id = (
            model,
            src,
            max_len,
            bos_id,
            eos_id,
        )

    def run(self) -> Tensor:
        return _greedy(self.model, self.src, self.max_len, self.bos_id, self.eos_id)


@torch.no_grad()
def gd_cached_shrinking_batch(model, src: Tensor, max_len: int, bos_id: int, eos_id: int) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    out = torch.full((B, max_len), pad, dtype=torch.long)
    alive = torch.arange(B)
    memory = model.encode(src)
    cache = model.new_cache()
    prev = torch.full((B, 1), bos_id, dtype=torch.long)
    steps = 0
    for t in range(max_len):
        logits = model.decode(prev, memory, src, cache)[:, -1]
        logits[:, pad] = float("-inf")
        nxt = logits.argmax(-1)
        out[alive, t] = nxt
        steps = t + 1
        cont = (nxt != eos_id).nonzero().squeeze(1)
        if len(cont) == 0:
            break
        if len(cont) < len(alive):
            alive, memory, src = alive[cont], memory[cont], src[cont]
            cache.reorder(cont)
            nxt = nxt[cont]
        prev = nxt[:, None]
    return out[:, :steps]


def gd_python_lists(model, src, max_len, bos_id, eos_id, pad_id=None):
    model.eval()
    pad = model.config.pad_id if pad_id is None else pad_id
    results = []
    with torch.no_grad():
        for b in range(src.shape[0]):  # one sentence at a time
            s = src[b : b + 1]
            memory = model.encode(s)
            seq = [bos_id]
            while len(seq) - 1 < max_len:
                logits = model.decode(torch.tensor([seq]), memory, s)[0, -1]
                logits[pad] = float("-inf")
                seq.append(int(logits.argmax()))
                if seq[-1] == eos_id:
                    break
            results.append(seq[1:])
    width = max(len(r) for r in results)
    return torch.tensor([r + [pad] * (width - len(r)) for r in results], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "keeps_bos",
        gd_keeps_bos,
        "mistake",
        "returns the tokens with the BOS column still in front",
    ),
    BlindCase(
        CHECK,
        "pad_can_be_chosen",
        gd_pad_allowed,
        "mistake",
        "takes the argmax over the whole vocabulary, so PAD can be generated",
    ),
    BlindCase(
        CHECK,
        "eos_not_kept",
        gd_eos_dropped,
        "mistake",
        "writes PAD instead of the EOS token when a sentence ends",
    ),
    BlindCase(
        CHECK,
        "no_padding_after_end",
        gd_continues_after_eos,
        "mistake",
        "keeps appending argmax tokens to a sentence after its EOS instead of PAD",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        gd_one_step_short,
        "mistake",
        "loops range(max_len - 1), so at most max_len - 1 tokens are generated",
    ),
    BlindCase(
        CHECK,
        "batch_stops_at_first_eos",
        gd_batch_stops_at_first_eos,
        "mistake",
        "stops the whole batch as soon as any sentence produces EOS",
    ),
    BlindCase(
        CHECK,
        "logits_of_first_position",
        gd_logits_of_first_position,
        "mistake",
        "takes the logits at position 0 ([:, 0]) instead of the last position",
    ),
    BlindCase(
        CHECK,
        "no_eval_mode",
        gd_no_eval,
        "mistake",
        "never calls model.eval(), so dropout stays on while decoding",
    ),
    BlindCase(
        CHECK,
        "samples_instead_of_argmax",
        gd_softmax_sample,
        "mistake",
        "samples the next token from the softmax instead of taking the argmax",
    ),
    BlindCase(
        CHECK,
        "slip_class_instead_of_function",
        GreedyDecoder,
        "mistake",
        "passes a GreedyDecoder class whose run() method does the search, instead of a function",
    ),
    BlindCase(
        CHECK,
        "kv_cache_shrinking_batch",
        gd_cached_shrinking_batch,
        "correct",
        "uses model.new_cache(), feeds one token per step and drops finished sentences with cache.reorder",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time_lists",
        gd_python_lists,
        "correct",
        "decodes each sentence alone with Python lists and pads the results at the end, with an optional pad_id",
    ),
]
