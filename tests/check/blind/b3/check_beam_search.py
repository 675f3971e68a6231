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
    *,
    one_start: bool = True,
    bos_in_length: bool = False,
    pad_grows_length: bool = False,
    rank_with_penalty: bool = True,
    finish_at_eos: bool = True,
    block_pad: bool = True,
    log_softmax: bool = True,
    lp=_lp,
) -> Tensor:
    """My beam search: B * K decoder rows, the whole prefix fed again at every step; a sentence
    whose hypotheses have all finished stays in the batch (extended by PAD at no cost)."""
    was_training = model.training
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    B = src.shape[0]
    memory = model.encode(src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    src_k = src.repeat_interleave(K, dim=0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long, device=src.device)
    score = torch.zeros(B, K, device=src.device)
    if one_start:
        score[:, 1:] = float("-inf")
    finished = torch.zeros(B, K, dtype=torch.bool, device=src.device)
    length = torch.zeros(B, K, dtype=torch.long, device=src.device)
    only_pad = torch.full((V,), float("-inf"), device=src.device)
    only_pad[pad] = 0.0
    for t in range(1, max_len + 1):
        logits = model.decode(tokens, memory, src_k)[:, -1]  # (B*K, V)
        step = logits.log_softmax(-1) if log_softmax else logits.clone()
        if block_pad:
            step[:, pad] = float("-inf")
        step = step.view(B, K, V)
        step = torch.where(finished[..., None], only_pad, step)
        total = score[..., None] + step  # (B, K, V)
        now = t + 1 if bos_in_length else t
        new_length = torch.full_like(length, now)
        if not pad_grows_length:
            new_length = torch.where(finished, length, new_length)
        ranked = total / lp(new_length, alpha)[..., None] if rank_with_penalty else total
        best = ranked.reshape(B, K * V).topk(K, dim=-1).indices  # (B, K)
        beam, token = best // V, best % V
        score = total.reshape(B, K * V).gather(1, best)
        length = new_length.gather(1, beam)
        finished = finished.gather(1, beam)
        if finish_at_eos:
            finished = finished | (token == eos_id)
        rows = (torch.arange(B, device=src.device)[:, None] * K + beam).reshape(-1)
        tokens = torch.cat([tokens[rows], token.reshape(-1, 1)], dim=1)
        if bool(finished.all()):
            break
    final = score / lp(length, alpha)  # (B, K)
    choice = final.argmax(dim=1)
    model.train(was_training)
    return tokens.view(B, K, -1)[torch.arange(B, device=src.device), choice, 1:]


# ---------------------------------------------------------------- mistakes


def bos_counted_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, bos_in_length=True)


def penalty_only_at_the_end(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, rank_with_penalty=False
    )


def every_beam_starts_from_bos(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, one_start=False)


def padding_counted_in_length(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pad_grows_length=True
    )


def eos_does_not_finish(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finish_at_eos=False
    )


def pad_can_be_generated(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, block_pad=False)


def logits_summed_not_log_probs(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, log_softmax=False)


def penalty_precedence_slip(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    def lp(length, alpha):
        return (5.0 + length.float() / 6.0) ** alpha  # (5 + |Y| / 6), not (5 + |Y|) / 6

    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, lp=lp)


@torch.no_grad()
def each_beam_greedy(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """The K best first tokens, then each hypothesis continued by its own best token."""
    was_training = model.training
    model.eval()
    pad, K = model.config.pad_id, beam_size
    B = src.shape[0]
    memory = model.encode(src).repeat_interleave(K, 0)
    src_k = src.repeat_interleave(K, 0)
    dev = src.device
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long, device=dev)
    score = torch.zeros(B * K, device=dev)
    length = torch.zeros(B * K, dtype=torch.long, device=dev)
    done = torch.zeros(B * K, dtype=torch.bool, device=dev)
    for t in range(1, max_len + 1):
        logp = model.decode(tokens, memory, src_k)[:, -1].log_softmax(-1)
        logp[:, pad] = float("-inf")
        if t == 1:  # K different first tokens from the one BOS
            top = logp.view(B, K, -1)[:, 0].topk(K, dim=-1)
            tok, gain = top.indices.reshape(-1), top.values.reshape(-1)
        else:
            gain, tok = logp.max(-1)
        tok = torch.where(done, torch.full_like(tok, pad), tok)
        score = score + torch.where(done, torch.zeros_like(gain), gain)
        length = torch.where(done, length, torch.full_like(length, t))
        done = done | (tok == eos_id)
        tokens = torch.cat([tokens, tok[:, None]], 1)
        if done.all():
            break
    final = (score / _lp(length, length_penalty)).view(B, K)
    choice = final.argmax(1)
    model.train(was_training)
    return tokens.view(B, K, -1)[torch.arange(B, device=dev), choice, 1:]


def alpha_keyword(model, src, beam_size, max_len, *, bos_id, eos_id, alpha=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, alpha)


# ---------------------------------------------------------------- correct variants


def batched_recompute(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


@torch.no_grad()
def per_sentence_cached(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """One sentence at a time, K rows, the model's key/value cache reordered after each step;
    the answer is the first of the K after the last top-k (top-k sorts, so it is the best)."""
    was_training = model.training
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    results = []
    for s in src:
        dev = s.device
        s_k = s[None].expand(K, -1).contiguous()  # (K, S)
        memory = model.encode(s_k)
        cache = model.new_cache()
        fed = torch.full((K, 1), bos_id, dtype=torch.long, device=dev)
        history = torch.empty((K, 0), dtype=torch.long, device=dev)
        logp = torch.tensor([0.0] + [float("-inf")] * (K - 1), device=dev)
        ended = torch.zeros(K, dtype=torch.bool, device=dev)
        n = torch.zeros(K, device=dev)  # |Y|, EOS included
        for t in range(1, max_len + 1):
            step = model.decode(fed, memory, s_k, cache)[:, -1].log_softmax(-1)  # (K, V)
            step[:, pad] = float("-inf")
            step[ended] = float("-inf")
            step[ended, pad] = 0.0  # a finished hypothesis: PAD only, free, no longer
            cand = logp[:, None] + step  # (K, V)
            cand_len = torch.where(ended, n, torch.full_like(n, t))
            ranked = cand / (((5 + cand_len) / 6) ** length_penalty)[:, None]
            _, flat = ranked.flatten().topk(K)
            parent, tok = flat // V, flat % V
            logp, n, ended = cand.flatten()[flat], cand_len[parent], ended[parent] | (tok == eos_id)
            history = torch.cat([history[parent], tok[:, None]], 1)
            cache.reorder(parent)
            fed = tok[:, None]
            if ended.all():
                break
        results.append(history[0])
    width = max(len(r) for r in results)
    out = torch.full((len(results), width), pad, dtype=torch.long, device=src.device)
    for i, r in enumerate(results):
        out[i, : len(r)] = r
    model.train(was_training)
    return out


CASES = [
    BlindCase(
        CHECK,
        "bos_counted_in_length",
        bos_counted_in_length,
        "mistake",
        "I counted BOS in |Y| of the length penalty (the length is the number of fed tokens, "
        "one more than the output tokens)",
    ),
    BlindCase(
        CHECK,
        "penalty_only_at_the_end",
        penalty_only_at_the_end,
        "mistake",
        "I rank the candidates at each step by log P alone and divide by the length penalty "
        "only to choose the final hypothesis",
    ),
    BlindCase(
        CHECK,
        "every_beam_starts_from_bos",
        every_beam_starts_from_bos,
        "mistake",
        "I started all K hypotheses at score 0, so the first step keeps K copies of the same "
        "token instead of K different ones",
    ),
    BlindCase(
        CHECK,
        "padding_counted_in_length",
        padding_counted_in_length,
        "mistake",
        "a finished hypothesis keeps its log P but its length grows with every PAD after its "
        "EOS, so its penalty changes",
    ),
    BlindCase(
        CHECK,
        "eos_does_not_finish",
        eos_does_not_finish,
        "mistake",
        "I keep no finished state: a hypothesis that produced EOS is extended by real tokens "
        "like any other, and the search runs to max_len",
    ),
    BlindCase(
        CHECK,
        "pad_can_be_generated",
        pad_can_be_generated,
        "mistake",
        "I did not set PAD's log-probability to -inf, so a hypothesis can be extended by PAD",
    ),
    BlindCase(
        CHECK,
        "logits_summed_not_log_probs",
        logits_summed_not_log_probs,
        "mistake",
        "I added up the raw logits instead of log_softmax of the logits",
    ),
    BlindCase(
        CHECK,
        "penalty_precedence_slip",
        penalty_precedence_slip,
        "mistake",
        "I forgot the brackets in the length penalty: (5 + |Y| / 6) ** alpha instead of "
        "((5 + |Y|) / 6) ** alpha",
    ),
    BlindCase(
        CHECK,
        "each_beam_greedy",
        each_beam_greedy,
        "mistake",
        "I take the K best first tokens, then extend each hypothesis by its own best token: K "
        "greedy searches instead of the best K of all K * V extensions",
    ),
    BlindCase(
        CHECK,
        "alpha_keyword",
        alpha_keyword,
        "mistake",
        "I named the keyword argument alpha instead of length_penalty",
    ),
    BlindCase(
        CHECK,
        "batched_recompute",
        batched_recompute,
        "correct",
        "all sentences as B * K rows, the prefix recomputed at every step, finished sentences "
        "kept in the batch until the last one finishes",
    ),
    BlindCase(
        CHECK,
        "per_sentence_cached",
        per_sentence_cached,
        "correct",
        "one sentence at a time with the model's key/value cache reordered after each step; "
        "the answer is the first hypothesis after the last top-k",
    ),
]
