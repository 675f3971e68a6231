"""Blind cases for check_beam_search (chapter 15), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: Tensor, alpha: float) -> Tensor:
    return ((5.0 + length.float()) / 6.0) ** alpha


@torch.no_grad()
def _beam(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    alpha: float,
    slip: str = "",
) -> Tensor:
    """Beam search over the whole batch, recomputing the prefix; ``slip`` names a mistake."""
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    B, K, dev = src.shape[0], beam_size, src.device
    if slip == "no_length_penalty":
        alpha = 0.0
    memory = model.encode(src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    src_k = src.repeat_interleave(K, dim=0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long, device=dev)
    log_prob = torch.zeros(B, K, device=dev)
    if slip != "all_beams_from_bos":
        log_prob[:, 1:] = float("-inf")
    finished = torch.zeros(B, K, dtype=torch.bool, device=dev)
    lengths = torch.zeros(B, K, dtype=torch.long, device=dev)
    only_pad = torch.full((V,), float("-inf"), device=dev)
    only_pad[pad] = 0.0
    for t in range(1, max_len + 1):
        step = model.decode(tokens, memory, src_k)[:, -1].log_softmax(dim=-1)  # (B*K, V)
        if slip != "pad_allowed":
            step[:, pad] = float("-inf")
        step = step.view(B, K, V)
        if slip != "no_finished_set":
            step = torch.where(finished[..., None], only_pad, step)
        total = log_prob[..., None] + step  # (B, K, V)
        now = t + 1 if slip == "bos_counted" else t
        if slip in ("finished_length_grows", "no_finished_set"):
            new_len = torch.full_like(lengths, now)
        else:
            new_len = torch.where(finished, lengths, now)
        ranked = total / _lp(new_len, alpha)[..., None]
        _, best = ranked.view(B, K * V).topk(K, dim=-1)
        beam, token = best // V, best % V
        if slip == "penalty_compounds":
            log_prob = ranked.view(B, K * V).gather(1, best)
        else:
            log_prob = total.view(B, K * V).gather(1, best)
        lengths = new_len.gather(1, beam)
        finished = finished.gather(1, beam) | (token == eos_id)
        if slip == "rows_without_offset":
            rows = beam.reshape(-1)
        else:
            rows = (torch.arange(B, device=dev)[:, None] * K + beam).reshape(-1)
        tokens = torch.cat([tokens[rows], token.reshape(-1, 1)], dim=1)
        if slip == "stop_when_best_finishes":
            if finished[:, 0].all():
                return tokens.view(B, K, -1)[:, 0, 1:]
        elif slip == "no_finished_set":
            pass  # EOS is just another token
        elif finished.all():
            break
    hyps = tokens.view(B, K, -1)[:, :, 1:]
    if slip == "no_finished_set":
        # cut each hypothesis after its first EOS, then pick by the score at the end
        seen = (hyps == eos_id).cumsum(dim=-1)
        after = (seen - (hyps == eos_id).long()) > 0
        hyps = hyps.masked_fill(after, pad)
    score = log_prob / (_lp(lengths, alpha) if slip != "penalty_compounds" else 1.0)
    best_beam = score.argmax(dim=1)
    return hyps[torch.arange(B, device=dev), best_beam]


def _make(slip: str):
    def search(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
        return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, slip)

    search.__name__ = slip or "batched_recompute"
    return search


@torch.no_grad()
def _one_sentence(model, src1, K, max_len, bos_id, eos_id, alpha):
    """Beam search of one sentence (B = 1) with the model's key/value cache."""
    pad, V, dev = model.config.pad_id, model.config.tgt_vocab_size, src1.device
    memory = model.encode(src1).expand(K, -1, -1)
    src_k = src1.expand(K, -1)
    cache = model.new_cache()
    tokens = torch.full((K, 1), bos_id, dtype=torch.long, device=dev)
    score = torch.tensor([0.0] + [float("-inf")] * (K - 1), device=dev)  # (K,) log P
    length = torch.zeros(K, dtype=torch.long, device=dev)
    done = torch.zeros(K, dtype=torch.bool, device=dev)
    for t in range(1, max_len + 1):
        logp = model.decode(tokens[:, -1:], memory, src_k, cache)[:, -1].log_softmax(-1)
        logp[:, pad] = float("-inf")
        logp[done] = float("-inf")
        logp[done, pad] = 0.0
        cand = score[:, None] + logp  # (K, V)
        cand_len = torch.where(done, length, torch.full_like(length, t))
        norm = cand / _lp(cand_len, alpha)[:, None]
        _, flat = norm.flatten().topk(K)
        beam, token = flat // V, flat % V
        score, length = cand.flatten()[flat], cand_len[beam]
        done = done[beam] | (token == eos_id)
        tokens = torch.cat([tokens[beam], token[:, None]], dim=1)
        cache.reorder(beam)
        if bool(done.all()):
            break
    final = score / _lp(length, alpha)
    return tokens[int(final.argmax()), 1:]


def per_sentence_with_cache(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6, use_cache=True
):
    outs = [
        _one_sentence(model, src[b : b + 1], beam_size, max_len, bos_id, eos_id, length_penalty)
        for b in range(src.shape[0])
    ]
    width = max(len(o) for o in outs)
    result = torch.full((len(outs), width), model.config.pad_id, dtype=torch.long)
    for b, o in enumerate(outs):
        result[b, : len(o)] = o
    return result.to(src.device)


_WHAT = {
    "no_length_penalty": "I ranked by log P alone and never used length_penalty",
    "bos_counted": "I counted BOS in |Y|, so the length is one more than the tokens generated",
    "penalty_compounds": "I stored the length-normalized score as the running score, so the "
    "penalty is divided in again at every step",
    "all_beams_from_bos": "I started all K hypotheses at log P = 0, so at the first step the K "
    "copies of BOS all grow",
    "no_finished_set": "EOS is just another token: hypotheses keep growing after it, and at the "
    "end I cut each one after its first EOS",
    "finished_length_grows": "a finished hypothesis gets only PAD, but I still set its length to "
    "the current step",
    "rows_without_offset": "I reordered the decoder rows with the beam index alone, without "
    "adding b * K for sentence b",
    "pad_allowed": "I did not forbid PAD, so an open hypothesis can choose it",
    "stop_when_best_finishes": "I stopped as soon as the top-ranked hypothesis of every sentence "
    "had finished and returned it",
}

CASES = [BlindCase(CHECK, slip, _make(slip), "mistake", what) for slip, what in _WHAT.items()]
CASES += [
    BlindCase(
        CHECK,
        "batched_recompute",
        _make(""),
        "correct",
        "no cache: the whole prefix fed at every step, finished sentences stay in the "
        "batch until all are done",
    ),
    BlindCase(
        CHECK,
        "per_sentence_with_cache",
        per_sentence_with_cache,
        "correct",
        "each sentence searched alone with model.new_cache() and cache.reorder, outputs "
        "padded to the longest; an unused use_cache argument",
    ),
]
