"""Blind set B20, check_beam_search (chapter 15): beam search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _beam(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    length_penalty: float,
    *,
    finished_set: bool = True,
    bos_in_length: bool = False,
    normalized_running_score: bool = False,
    raw_final: bool = False,
    all_beams_start: bool = False,
    mask_pad: bool = True,
    lp_parens: bool = False,
    per_beam_best: bool = False,
    stop_when_top_finished: bool = False,
    extend_with_eos: bool = False,
    use_cache: bool = False,
) -> Tensor:
    """A right beam search over the whole batch (sentences stay until all have finished),
    with one switch per mistake."""
    model.eval()
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    B, K, dev = src.shape[0], beam_size, src.device

    def lp(length: Tensor) -> Tensor:
        length = length.float()
        if lp_parens:
            return (5.0 + length / 6.0) ** length_penalty
        return ((5.0 + length) / 6.0) ** length_penalty

    memory = model.encode(src).repeat_interleave(K, dim=0)
    src_k = src.repeat_interleave(K, dim=0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long, device=dev)
    score = torch.zeros(B, K, device=dev)
    if not all_beams_start:
        score[:, 1:] = float("-inf")
    finished = torch.zeros(B, K, dtype=torch.bool, device=dev)
    lengths = torch.zeros(B, K, dtype=torch.long, device=dev)
    frozen_tok = eos_id if extend_with_eos else pad
    only_frozen = torch.full((V,), float("-inf"), device=dev)
    only_frozen[frozen_tok] = 0.0
    early: dict[int, Tensor] = {}
    cache = model.new_cache() if use_cache else None
    for t in range(1, max_len + 1):
        fed = tokens[:, -1:] if use_cache else tokens
        logits = model.decode(fed, memory, src_k, cache=cache)[:, -1]
        logp = logits.log_softmax(-1)
        if mask_pad:
            logp[:, pad] = float("-inf")
        logp = logp.view(B, K, V)
        if finished_set:
            logp = torch.where(finished[..., None], only_frozen, logp)
            new_len = torch.where(finished, lengths, torch.full_like(lengths, t))
        else:
            new_len = torch.full_like(lengths, t)
        if bos_in_length:  # the open hypotheses' length counts BOS as well
            new_len = torch.where(finished, lengths, torch.full_like(lengths, t + 1))
        total = score[..., None] + logp
        ranked = total / lp(new_len)[..., None]
        if per_beam_best:
            best_tok = ranked.argmax(-1)  # (B, K): one extension per hypothesis
            cand = torch.arange(K, device=dev) * V + best_tok
            order = ranked.view(B, K * V).gather(1, cand).argsort(-1, descending=True)
            top = cand.gather(1, order)
        else:
            top = ranked.view(B, K * V).topk(K, dim=-1).indices
        beam, tok = top // V, top % V
        if normalized_running_score:
            score = ranked.view(B, K * V).gather(1, top)
        else:
            score = total.view(B, K * V).gather(1, top)
        lengths = new_len.gather(1, beam)
        finished = finished.gather(1, beam) | (tok == eos_id)
        rows = (torch.arange(B, device=dev)[:, None] * K + beam).view(-1)
        tokens = torch.cat([tokens[rows], tok.view(-1, 1)], dim=1)
        if cache is not None:
            cache.reorder(rows, cross=False)
        if stop_when_top_finished:
            for b in range(B):
                if b not in early and bool(finished[b, 0]):
                    early[b] = tokens.view(B, K, -1)[b, 0, 1:].clone()
            if len(early) == B:
                break
        elif bool(finished.all()):
            break
    if normalized_running_score:
        final = score
    elif raw_final:
        final = score
    else:
        final = score / lp(lengths)
    best = final.argmax(-1)
    out = tokens.view(B, K, -1)[torch.arange(B, device=dev), best, 1:]
    for b, row in early.items():
        out[b] = pad
        out[b, : len(row)] = row
    return out


def _search(**flags):
    @torch.no_grad()
    def beam_search(
        model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
    ) -> Tensor:
        return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, **flags)

    return beam_search


# ---------------------------------------------------------------- mistakes

beam_no_finished_set = _search(finished_set=False)
beam_bos_in_length = _search(bos_in_length=True)
beam_penalty_every_step = _search(normalized_running_score=True)
beam_raw_logp_final = _search(raw_final=True)
beam_all_beams_start = _search(all_beams_start=True)
beam_pad_allowed = _search(mask_pad=False)
beam_lp_parens = _search(lp_parens=True)
beam_per_beam_best = _search(per_beam_best=True)
beam_stop_when_top_finished = _search(stop_when_top_finished=True)
beam_extend_with_eos = _search(extend_with_eos=True)


@torch.no_grad()
def beam_alpha_ignored(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    # used the paper's 0.6 everywhere instead of the argument
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, 0.6)


@torch.no_grad()
def beam_max_len_off_by_one(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    # max_len counted with BOS: one output token fewer
    return _beam(model, src, beam_size, max_len - 1, bos_id, eos_id, length_penalty)


# ---------------------------------------------------------------- correct

beam_whole_batch = _search()
beam_whole_batch_cache = _search(use_cache=True)


@torch.no_grad()
def beam_per_sentence_lists(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    """One sentence at a time, hypotheses as Python lists, every candidate ranked by a sort."""
    model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size

    def rank(logp: Tensor, n: int) -> Tensor:
        return logp / ((5.0 + torch.tensor(float(n))) / 6.0) ** length_penalty

    results = []
    for b in range(src.shape[0]):
        row = src[b : b + 1]
        memory = model.encode(row)
        # (tokens after BOS, log P, length counted with EOS, finished)
        hyps = [([], torch.tensor(0.0), 0, False)]
        for t in range(1, max_len + 1):
            cands = []
            for toks, logp, n, done in hyps:
                if done:
                    cands.append((toks + [pad], logp, n, True))
                    continue
                fed = torch.tensor([[bos_id, *toks]], device=src.device)
                step = model.decode(fed, memory, row)[0, -1].log_softmax(-1)
                for v in range(V):
                    if v != pad:
                        cands.append((toks + [v], logp + step[v], t, v == eos_id))
            order = sorted(range(len(cands)), key=lambda i: -float(rank(cands[i][1], cands[i][2])))
            hyps = [cands[i] for i in order[:beam_size]]
            if all(h[3] for h in hyps):
                break
        best = max(hyps, key=lambda h: float(rank(h[1], h[2])))
        results.append(best[0])
    width = max(len(r) for r in results)
    return torch.tensor([r + [pad] * (width - len(r)) for r in results], device=src.device)


CASES = [
    BlindCase(
        CHECK,
        "no_finished_set",
        beam_no_finished_set,
        "mistake",
        "hypotheses that produced EOS are extended like the others",
    ),
    BlindCase(CHECK, "bos_in_length", beam_bos_in_length, "mistake", "|Y| counted with BOS"),
    BlindCase(
        CHECK,
        "penalty_every_step",
        beam_penalty_every_step,
        "mistake",
        "kept the length-normalized score as the running score and added the next log-probs",
    ),
    BlindCase(
        CHECK,
        "raw_logp_final",
        beam_raw_logp_final,
        "mistake",
        "picked the final hypothesis by log P, without the length penalty",
    ),
    BlindCase(
        CHECK,
        "all_beams_start",
        beam_all_beams_start,
        "mistake",
        "all K start hypotheses at score 0, so the first step gives K copies",
    ),
    BlindCase(CHECK, "pad_allowed", beam_pad_allowed, "mistake", "PAD not excluded"),
    BlindCase(
        CHECK,
        "lp_parens",
        beam_lp_parens,
        "mistake",
        "length penalty written (5 + |Y| / 6) ** alpha",
    ),
    BlindCase(
        CHECK,
        "per_beam_best",
        beam_per_beam_best,
        "mistake",
        "each hypothesis keeps only its own best next token (K greedy searches)",
    ),
    BlindCase(
        CHECK,
        "stop_when_top_finished",
        beam_stop_when_top_finished,
        "mistake",
        "a sentence stops as soon as its top-ranked hypothesis has produced EOS",
    ),
    BlindCase(
        CHECK,
        "extend_with_eos",
        beam_extend_with_eos,
        "mistake",
        "finished hypotheses are extended with EOS instead of PAD",
    ),
    BlindCase(
        CHECK,
        "alpha_ignored",
        beam_alpha_ignored,
        "mistake",
        "length_penalty argument ignored, always 0.6",
    ),
    BlindCase(
        CHECK,
        "max_len_off_by_one",
        beam_max_len_off_by_one,
        "mistake",
        "looped max_len - 1 steps (counted BOS in max_len)",
    ),
    BlindCase(
        CHECK,
        "whole_batch",
        beam_whole_batch,
        "correct",
        "no cache, finished sentences stay in the batch (PAD at no cost) until all are done",
    ),
    BlindCase(
        CHECK,
        "whole_batch_cache",
        beam_whole_batch_cache,
        "correct",
        "the model's KV cache reordered with the surviving rows, no sentence dropped",
    ),
    BlindCase(
        CHECK,
        "per_sentence_lists",
        beam_per_sentence_lists,
        "correct",
        "one sentence at a time with Python lists of hypotheses and a sort",
    ),
]
