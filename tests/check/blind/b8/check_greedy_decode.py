"""Blind set B8, check_greedy_decode (chapter 15): greedy search as readers write it."""

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
    slip: str = "",
) -> Tensor:
    """Greedy search over the whole prefix at every step; ``slip`` names one reader's mistake."""
    was_training = model.training
    if slip != "no_eval":
        model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    B = src.shape[0]
    ys = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    steps = max_len - 1 if slip == "one_short" else max_len
    for _ in range(steps):
        fed = ys[:, -1:] if slip == "last_token_only" else ys
        logits = model.decode(fed, memory, src)
        logits = logits[:, 0] if slip == "first_position" else logits[:, -1]
        if slip != "pad_allowed":
            logits = logits.clone()
            logits[:, pad] = float("-inf")
        next_token = logits.argmax(dim=-1)
        if slip != "no_pad_after_eos":
            next_token = next_token.masked_fill(done, pad)
        is_eos = next_token == eos_id
        if slip == "eos_dropped":
            next_token = next_token.masked_fill(is_eos, pad)
        if slip == "squeeze":
            next_token = next_token.squeeze()  # (B,) ... and () when B == 1
        ys = torch.cat([ys, next_token.unsqueeze(1)], dim=1)
        if slip == "done_overwritten":
            done = is_eos
        else:
            done = done | is_eos
        if slip == "stop_at_first_eos" and done.any():
            break
        if done.all():
            break
    model.train(was_training)
    return ys if slip == "bos_kept" else ys[:, 1:]


# ---------------------------------------------------------------- mistakes


def greedy_no_eval(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "no_eval")


def greedy_pad_allowed(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "pad_allowed")


def greedy_eos_dropped(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "eos_dropped")


def greedy_stop_at_first_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "stop_at_first_eos")


def greedy_no_pad_after_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "no_pad_after_eos")


def greedy_one_short(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "one_short")


def greedy_bos_kept(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "bos_kept")


def greedy_last_token_only(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "last_token_only")


def greedy_first_position(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "first_position")


def greedy_squeeze(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "squeeze")


def greedy_done_overwritten(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, "done_overwritten")


# ---------------------------------------------------------------- correct variants


def greedy_plain(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id)


@torch.no_grad()
def greedy_with_cache(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    cache = model.new_cache()
    B = src.shape[0]
    out = torch.full((B, max_len), pad, dtype=torch.long)
    last = torch.full((B, 1), bos_id, dtype=torch.long)
    finished = torch.zeros(B, dtype=torch.bool)
    t = 0
    for t in range(max_len):
        logits = model.decode(last, memory, src, cache)[:, -1]  # only the new token is fed
        logits = logits.index_fill(1, torch.tensor([pad]), float("-inf"))
        token = torch.where(finished, pad, logits.argmax(-1))
        out[:, t] = token
        finished |= token == eos_id
        last = token[:, None]
        if bool(finished.all()):
            break
    model.train(was_training)
    return out[:, : t + 1]


@torch.no_grad()
def greedy_one_sentence_at_a_time(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    outputs = []
    for i in range(src.shape[0]):
        s = src[i : i + 1]
        memory = model.encode(s)
        ys = [bos_id]
        for _ in range(max_len):
            logits = model.decode(torch.tensor([ys]), memory, s)[0, -1]
            logits[pad] = float("-inf")
            token = int(logits.topk(1).indices)
            ys.append(token)
            if token == eos_id:
                break
        outputs.append(ys[1:])
    width = max(len(o) for o in outputs)
    model.train(was_training)
    return torch.tensor([o + [pad] * (width - len(o)) for o in outputs], dtype=torch.long)


def _case(name: str, code, kind: str, what: str) -> BlindCase:
    return BlindCase(check=CHECK, name=name, code=code, kind=kind, what=what)


CASES = [
    _case(
        "dropout_left_on",
        greedy_no_eval,
        "mistake",
        "I never switched the model to eval mode, so dropout is active while decoding and the "
        "tokens are random.",
    ),
    _case(
        "pad_can_be_chosen",
        greedy_pad_allowed,
        "mistake",
        "I take the plain argmax of the logits; PAD is not excluded and can be generated as a "
        "word.",
    ),
    _case(
        "eos_not_kept",
        greedy_eos_dropped,
        "mistake",
        "When a sentence produces EOS I write PAD instead and stop it, so the outputs never "
        "contain their EOS.",
    ),
    _case(
        "stop_batch_at_first_eos",
        greedy_stop_at_first_eos,
        "mistake",
        "The loop breaks as soon as any sentence of the batch has produced EOS, cutting the "
        "others short.",
    ),
    _case(
        "no_padding_after_eos",
        greedy_no_pad_after_eos,
        "mistake",
        "I stop when every sentence has had an EOS, but a finished sentence keeps getting "
        "argmax tokens after its EOS instead of PAD.",
    ),
    _case(
        "one_token_short",
        greedy_one_short,
        "mistake",
        "My loop runs range(max_len - 1) because BOS already takes a place, so a sentence that "
        "never ends gets max_len - 1 tokens.",
    ),
    _case(
        "bos_returned",
        greedy_bos_kept,
        "mistake",
        "I return the whole decoder input, BOS included, instead of dropping the first column.",
    ),
    _case(
        "feeds_last_token_without_cache",
        greedy_last_token_only,
        "mistake",
        "To save time I feed only the last generated token to model.decode, without a cache, "
        "so the decoder never sees the earlier tokens.",
    ),
    _case(
        "logits_of_first_position",
        greedy_first_position,
        "mistake",
        "I take logits[:, 0] (the position after BOS) at every step instead of logits[:, -1].",
    ),
    _case(
        "squeeze_breaks_batch_of_one",
        greedy_squeeze,
        "mistake",
        "I squeeze() the argmax before unsqueeze(1) and cat; with a batch of one sentence it "
        "becomes 0-d and the cat fails.",
    ),
    _case(
        "finished_flag_overwritten",
        greedy_done_overwritten,
        "mistake",
        "I set done = (token == eos) at each step instead of or-ing it in, so a finished "
        "sentence gets one PAD and then starts generating again.",
    ),
    _case(
        "whole_prefix_each_step",
        greedy_plain,
        "correct",
        "Re-feeds the whole prefix every step (no cache), masks PAD with -inf on a clone, keeps "
        "finished rows on PAD, stops when all are done.",
    ),
    _case(
        "kv_cache_preallocated",
        greedy_with_cache,
        "correct",
        "Uses model.new_cache() and feeds one token per step, writing into a preallocated "
        "(B, max_len) tensor cut to the steps taken.",
    ),
    _case(
        "one_sentence_at_a_time",
        greedy_one_sentence_at_a_time,
        "correct",
        "Decodes each sentence alone with Python lists and topk(1), then pads the outputs to the "
        "longest.",
    ),
]
