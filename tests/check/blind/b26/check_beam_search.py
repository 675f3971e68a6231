"""Blind set B26, check_beam_search (chapter 15): beam search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

from .. import BlindCase

CHECK = "check_beam_search"

NEG = float("-inf")


def _lp(length: Tensor, alpha: float) -> Tensor:
    return ((5.0 + length.float()) / 6.0) ** alpha


@torch.no_grad()
def _beam(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
    one_start: bool = True,
    bos_counted: bool = False,
    penalty: str = "power",
    rank_raw: bool = False,
    ban_pad: bool = True,
    log_softmax: bool = True,
    split: str = "right",
    reorder_history: bool = True,
    final: str = "argmax",
    per_beam: int | None = None,
    keep_bos: bool = False,
) -> Tensor:
    """Beam search one sentence at a time, the whole prefix fed again at every step (no
    cache); the keyword flags are the slips."""
    was_training = model.training
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    dev = src.device

    def lp(length: Tensor) -> Tensor:
        if penalty == "none":
            return torch.ones_like(length, dtype=torch.float)
        if penalty == "times":
            return (5.0 + length.float()) / 6.0 * length_penalty
        return _lp(length, length_penalty)

    outputs = []
    for b in range(src.shape[0]):
        row = src[b : b + 1]
        memory = model.encode(row).expand(K, -1, -1)
        rows = row.expand(K, -1)
        tokens = torch.full((K, 1), bos_id, dtype=torch.long, device=dev)
        log_prob = torch.zeros(K, device=dev)
        if one_start:
            log_prob[1:] = NEG
        finished = torch.zeros(K, dtype=torch.bool, device=dev)
        lengths = torch.zeros(K, dtype=torch.long, device=dev)
        only_pad = torch.full((V,), NEG, device=dev)
        only_pad[pad] = 0.0
        for t in range(1, max_len + 1):
            logits = model.decode(tokens, memory, rows)[:, -1]  # (K, V)
            step = logits.log_softmax(-1) if log_softmax else logits.clone()
            if ban_pad:
                step[:, pad] = NEG
            if per_beam is not None:  # keep only each hypothesis's best tokens
                cut = step.topk(per_beam, dim=-1).values[:, -1:]
                step = step.masked_fill(step < cut, NEG)
            step = torch.where(finished[:, None], only_pad, step)
            total = log_prob[:, None] + step  # (K, V)
            new_len = torch.where(finished, lengths, t + 1 if bos_counted else t)
            ranked = total if rank_raw else total / lp(new_len)[:, None]
            best = ranked.reshape(-1).topk(K).indices
            if split == "right":
                beam, token = best // V, best % V
            else:
                beam, token = best % K, best // K
            log_prob = total.reshape(-1)[best]
            lengths = new_len[beam]
            finished = finished[beam] | (token == eos_id)
            if t >= max_len:
                finished[:] = True
            history = tokens[beam] if reorder_history else tokens
            tokens = torch.cat([history, token[:, None]], dim=1)
            if finished.all():
                break
        if final == "raw":
            pick = int(log_prob.argmax())
        elif final == "first":
            pick = 0
        else:
            pick = int((log_prob / lp(lengths)).argmax())
        outputs.append(tokens[pick] if keep_bos else tokens[pick, 1:])
    model.train(was_training)
    return pad_sequence(outputs, batch_first=True, padding_value=pad)


# ---------------------------------------------------------------- mistakes


def beam_all_start(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id=bos_id, eos_id=eos_id,
        length_penalty=length_penalty, one_start=False,
    )  # fmt: skip


def beam_bos_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id=bos_id, eos_id=eos_id,
        length_penalty=length_penalty, bos_counted=True,
    )  # fmt: skip


def beam_penalty_ignored(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id=bos_id, eos_id=eos_id,
        length_penalty=length_penalty, penalty="none",
    )  # fmt: skip


def beam_penalty_times(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id=bos_id, eos_id=eos_id,
        length_penalty=length_penalty, penalty="times",
    )  # fmt: skip


def beam_penalty_at_end(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id=bos_id, eos_id=eos_id,
        length_penalty=length_penalty, rank_raw=True,
    )  # fmt: skip


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id=bos_id, eos_id=eos_id,
        length_penalty=length_penalty, ban_pad=False,
    )  # fmt: skip


def beam_raw_logits(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id=bos_id, eos_id=eos_id,
        length_penalty=length_penalty, log_softmax=False,
    )  # fmt: skip


def beam_divmod_swapped(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id=bos_id, eos_id=eos_id,
        length_penalty=length_penalty, split="wrong",
    )  # fmt: skip


def beam_history_fixed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id=bos_id, eos_id=eos_id,
        length_penalty=length_penalty, reorder_history=False,
    )  # fmt: skip


def beam_best_raw_logprob(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id=bos_id, eos_id=eos_id,
        length_penalty=length_penalty, final="raw",
    )  # fmt: skip


def beam_top1_per_beam(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id=bos_id, eos_id=eos_id,
        length_penalty=length_penalty, per_beam=1,
    )  # fmt: skip


def beam_keeps_bos(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id=bos_id, eos_id=eos_id,
        length_penalty=length_penalty, keep_bos=True,
    )  # fmt: skip


@torch.no_grad()
def beam_finished_list(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """A finished hypothesis leaves the beam for a list; the beam is refilled with open ones."""
    was_training = model.training
    model.eval()
    pad, K = model.config.pad_id, beam_size
    outputs = []
    for b in range(len(src)):
        row = src[b : b + 1]
        memory = model.encode(row)
        beams = [([bos_id], 0.0)]
        done = []
        for t in range(1, max_len + 1):
            ys = torch.tensor([y for y, _ in beams], device=src.device)
            logp = model.decode(ys, memory.expand(len(beams), -1, -1), row.expand(len(beams), -1))
            logp = logp[:, -1].log_softmax(-1)
            logp[:, pad] = NEG
            candidates = []
            for (y, score), row_logp in zip(beams, logp, strict=True):
                values, ids = row_logp.topk(min(2 * K, len(row_logp)))
                candidates += [(y + [int(i)], score + float(v)) for v, i in zip(values, ids)]
            candidates.sort(key=lambda c: c[1] / _lp(torch.tensor(t), length_penalty), reverse=True)
            beams = []
            for y, score in candidates:
                if y[-1] == eos_id or t == max_len:
                    done.append((y, score))
                else:
                    beams.append((y, score))
                if len(beams) == K:
                    break
            if len(done) >= K or not beams:
                break
        y, _ = max(done, key=lambda c: c[1] / _lp(torch.tensor(len(c[0]) - 1), length_penalty))
        outputs.append(torch.tensor(y[1:], device=src.device))
    model.train(was_training)
    return pad_sequence(outputs, batch_first=True, padding_value=pad)


# ---------------------------------------------------------------- correct variants


def beam_per_sentence(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    """One sentence at a time, the whole prefix fed again at every step (no cache)."""
    return _beam(
        model, src, beam_size, max_len, bos_id=bos_id, eos_id=eos_id, length_penalty=length_penalty
    )


def beam_return_first(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    """The same search, but the answer is hypothesis 0 of the last beam: topk sorts by the
    same penalized score, so it is the best."""
    return _beam(
        model, src, beam_size, max_len, bos_id=bos_id, eos_id=eos_id,
        length_penalty=length_penalty, final="first",
    )  # fmt: skip


def beam_two_stage_topk(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    """The K best tokens of each hypothesis first, then the K best of those K * K."""
    return _beam(
        model, src, beam_size, max_len, bos_id=bos_id, eos_id=eos_id,
        length_penalty=length_penalty, per_beam=beam_size,
    )  # fmt: skip


@torch.no_grad()
def beam_batched(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
    use_cache: bool = False,
) -> Tensor:
    """All sentences together as (B, K) hypotheses; a finished sentence stays in the batch and
    its hypotheses grow by PAD at no cost until every sentence is finished."""
    was_training = model.training
    model.eval()
    B, K = src.shape[0], beam_size
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    memory = model.encode(src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    src_k = src.repeat_interleave(K, dim=0)
    cache = model.new_cache() if use_cache else None
    seqs = torch.full((B, K, 1), bos_id, dtype=torch.long, device=src.device)
    score = torch.full((B, K), NEG, device=src.device)
    score[:, 0] = 0.0
    ended = torch.zeros(B, K, dtype=torch.bool, device=src.device)
    length = torch.zeros(B, K, dtype=torch.long, device=src.device)
    pad_only = torch.full((V,), NEG, device=src.device).index_fill(0, torch.tensor([pad]), 0.0)
    for t in range(1, max_len + 1):
        fed = seqs[:, :, -1:] if use_cache else seqs
        logits = model.decode(fed.reshape(B * K, -1), memory, src_k, cache)[:, -1]
        logp = logits.log_softmax(-1).index_fill(1, torch.tensor([pad]), NEG).view(B, K, V)
        logp = torch.where(ended.unsqueeze(-1), pad_only, logp)
        cand = score.unsqueeze(-1) + logp  # (B, K, V)
        cand_len = torch.where(ended, length, torch.full_like(length, t))
        key = cand / _lp(cand_len, length_penalty).unsqueeze(-1)
        idx = key.flatten(1).topk(K, dim=1).indices  # (B, K)
        parent, tok = idx.div(V, rounding_mode="floor"), idx.remainder(V)
        score = cand.flatten(1).gather(1, idx)
        length = cand_len.gather(1, parent)
        ended = ended.gather(1, parent) | tok.eq(eos_id) | (t >= max_len)
        seqs = torch.cat([seqs.gather(1, parent[..., None].expand_as(seqs)), tok[..., None]], -1)
        if cache is not None:
            cache.reorder((torch.arange(B, device=src.device)[:, None] * K + parent).flatten())
        if ended.all():
            break
    best = (score / _lp(length, length_penalty)).argmax(dim=1)  # (B,)
    model.train(was_training)
    return seqs[torch.arange(B), best, 1:]


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start_at_zero",
        beam_all_start,
        "mistake",
        "All K hypotheses start from BOS with log P = 0, so the first step fills the beam with "
        "copies.",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_length",
        beam_bos_in_length,
        "mistake",
        "|Y| in the penalty is the length of the token row, BOS included.",
    ),
    BlindCase(
        CHECK,
        "length_penalty_ignored",
        beam_penalty_ignored,
        "mistake",
        "I ranked by log P alone; the length_penalty argument is accepted but never used.",
    ),
    BlindCase(
        CHECK,
        "penalty_multiplied_by_alpha",
        beam_penalty_times,
        "mistake",
        "I read the penalty as ((5 + |Y|) / 6) * alpha instead of to the power alpha.",
    ),
    BlindCase(
        CHECK,
        "penalty_only_for_final_choice",
        beam_penalty_at_end,
        "mistake",
        "The beam keeps the K best by raw log P; the penalty only picks the answer at the end.",
    ),
    BlindCase(
        CHECK,
        "pad_generated",
        beam_pad_allowed,
        "mistake",
        "I did not set PAD's log-probability to -inf for open hypotheses.",
    ),
    BlindCase(
        CHECK,
        "logits_not_log_probs",
        beam_raw_logits,
        "mistake",
        "I added up the raw logits as the hypothesis score, without log_softmax.",
    ),
    BlindCase(
        CHECK,
        "beam_and_token_index_swapped",
        beam_divmod_swapped,
        "mistake",
        "From the flat topk index I took beam = i % K and token = i // K.",
    ),
    BlindCase(
        CHECK,
        "history_not_reordered",
        beam_history_fixed,
        "mistake",
        "I append each new token to the row it lands in, without first taking the token history "
        "of the hypothesis it came from.",
    ),
    BlindCase(
        CHECK,
        "answer_by_raw_log_prob",
        beam_best_raw_logprob,
        "mistake",
        "At the end I return the hypothesis with the highest log P, without the length penalty.",
    ),
    BlindCase(
        CHECK,
        "top1_per_hypothesis",
        beam_top1_per_beam,
        "mistake",
        "Each hypothesis is extended only by its own best token, then the K are re-ranked.",
    ),
    BlindCase(
        CHECK,
        "bos_returned",
        beam_keeps_bos,
        "mistake",
        "I return the best hypothesis with its BOS in front.",
    ),
    BlindCase(
        CHECK,
        "finished_moved_out_of_beam",
        beam_finished_list,
        "mistake",
        "A hypothesis that ends moves to a list of finished ones and the beam is refilled with "
        "K open ones; I stop with K finished and rank the open ones by the current step.",
    ),
    BlindCase(
        CHECK,
        "sentence_by_sentence",
        beam_per_sentence,
        "correct",
        "One sentence at a time, the whole prefix decoded again at every step, no cache.",
    ),
    BlindCase(
        CHECK,
        "first_of_sorted_beam",
        beam_return_first,
        "correct",
        "I return hypothesis 0 of the last beam, since topk sorts by the penalized score.",
    ),
    BlindCase(
        CHECK,
        "two_stage_topk",
        beam_two_stage_topk,
        "correct",
        "The K best tokens of each hypothesis first, then the K best of the K * K candidates.",
    ),
    BlindCase(
        CHECK,
        "batched_finished_stay",
        beam_batched,
        "correct",
        "All sentences as (B, K) with gather; finished sentences stay in the batch and grow by "
        "PAD at no cost; an optional use_cache argument, off by default.",
    ),
]
