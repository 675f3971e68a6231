"""Blind set B18, check_beam_search (chapter 15): beam search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: Tensor, alpha: float) -> Tensor:
    return ((5.0 + length.float()) / 6.0) ** alpha


def _beam(
    model,
    src: Tensor,
    K: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    alpha: float,
    *,
    all_beams_open: bool = False,
    bos_in_length: bool = False,
    penalty_every_step: bool = False,
    final_by_log_prob: bool = False,
    finished_grow: bool = False,
    finished_extended: bool = False,
    pad_allowed: bool = False,
    length_without_eos: bool = False,
    no_history_reorder: bool = False,
    beam_from_modulo: bool = False,
    raw_logits: bool = False,
    penalty_precedence: bool = False,
    stop_when_best_finished: bool = False,
) -> Tensor:
    """A beam search over all sentences at once, the whole prefix again at every step and no
    sentence leaving the batch, with one switch per slip; the defaults are right."""
    was_training = model.training
    model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    B = src.shape[0]

    def lp(length: Tensor) -> Tensor:
        if penalty_precedence:
            return (5.0 + length.float()) / 6.0**alpha
        return _lp(length + 1 if bos_in_length else length, alpha)

    with torch.no_grad():
        memory = model.encode(src).repeat_interleave(K, 0)
        rsrc = src.repeat_interleave(K, 0)
        tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
        log_prob = torch.zeros(B, K)
        if not all_beams_open:
            log_prob[:, 1:] = float("-inf")
        finished = torch.zeros(B, K, dtype=torch.bool)
        lengths = torch.zeros(B, K, dtype=torch.long)
        only_pad = torch.full((V,), float("-inf"))
        only_pad[pad] = 0.0
        stopped = torch.zeros(B, dtype=torch.bool)
        chosen = torch.zeros(B, dtype=torch.long)
        t = 0
        for t in range(1, max_len + 1):
            logits = model.decode(tokens, memory, rsrc)[:, -1]
            step = logits if raw_logits else logits.log_softmax(-1)
            if not pad_allowed:
                step = step.index_fill(1, torch.tensor([pad]), float("-inf"))
            step = step.view(B, K, V)
            if not finished_extended:
                step = torch.where(finished[..., None], only_pad, step)
            total = log_prob[..., None] + step
            if finished_grow or finished_extended:
                new_length = torch.full_like(lengths, t)
            else:
                new_length = torch.where(finished, lengths, t)
            new_length = new_length[..., None].expand(B, K, V).clone()  # per candidate
            if length_without_eos:
                new_length[..., eos_id] -= (~finished).long()
            if penalty_every_step:
                total = total / lp(new_length)  # stored already divided
                ranked = total
            else:
                ranked = total / lp(new_length)
            _, best = ranked.view(B, K * V).topk(K, dim=-1)
            if beam_from_modulo:
                beam, token = best % K, best // K
            else:
                beam, token = best // V, best % V
            log_prob = total.view(B, K * V).gather(1, best)
            lengths = new_length.view(B, K * V).gather(1, best)
            finished = finished.gather(1, beam) | (token == eos_id)
            if t >= max_len:
                finished[:] = True
            rows = (torch.arange(B)[:, None] * K + beam).view(-1)
            if no_history_reorder:
                tokens = torch.cat([tokens, token.view(-1, 1)], dim=1)
            else:
                tokens = torch.cat([tokens[rows], token.view(-1, 1)], dim=1)
            if stop_when_best_finished:
                newly = finished[:, 0] & ~stopped
                chosen[newly] = 0
                stopped |= newly
                finished[stopped] = True
            if finished.all():
                break
        hyps = tokens.view(B, K, -1)[:, :, 1:]
        if penalty_every_step:
            scores = log_prob
        elif final_by_log_prob:
            scores = log_prob
        else:
            scores = log_prob / lp(lengths)
        best_beam = torch.where(stopped, chosen, scores.argmax(-1))
        out = hyps[torch.arange(B), best_beam]
        if finished_extended:  # cut each output after its first EOS
            after = (out == eos_id).long().cumsum(1) - (out == eos_id).long()
            out = out.masked_fill(after > 0, pad)
    model.train(was_training)
    return out


# ---------------------------------------------------------------- mistakes


def beam_all_open(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6) -> Tensor:
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, all_beams_open=True
    )


def beam_bos_counted(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, bos_in_length=True)


def beam_penalty_every_step(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, penalty_every_step=True
    )


def beam_final_by_log_prob(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, final_by_log_prob=True
    )


def beam_finished_grow(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finished_grow=True)


def beam_no_finished_state(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finished_extended=True
    )


def beam_pad_allowed(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pad_allowed=True)


def beam_length_without_eos(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, length_without_eos=True
    )


def beam_no_reorder(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, no_history_reorder=True
    )


def beam_index_modulo(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, beam_from_modulo=True
    )


def beam_raw_logits(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, raw_logits=True)


def beam_penalty_precedence(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, penalty_precedence=True
    )


def beam_stop_when_best_finished(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, stop_when_best_finished=True
    )


def beam_probabilities_multiplied(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    """Scores kept as probabilities, multiplied, and divided by the penalty."""
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    results = []
    with torch.no_grad():
        for b in range(src.shape[0]):
            one = src[b : b + 1]
            memory = model.encode(one)
            beams = [([bos_id], 1.0, False)]
            for _ in range(max_len):
                candidates = []
                for seq, p, done in beams:
                    if done:
                        candidates.append((seq + [pad], p, True))
                        continue
                    probs = model.decode(torch.tensor([seq]), memory, one)[0, -1].softmax(-1)
                    probs[pad] = 0.0
                    for tok in range(V):
                        candidates.append((seq + [tok], p * float(probs[tok]), tok == eos_id))

                def score(c):
                    n = sum(1 for x in c[0][1:] if x != pad)
                    return c[1] / ((5 + n) / 6) ** length_penalty

                candidates.sort(key=score, reverse=True)
                beams = candidates[:K]
                if all(done for _, _, done in beams):
                    break
            results.append(beams[0][0][1:])
    width = max(len(r) for r in results)
    return torch.tensor([r + [pad] * (width - len(r)) for r in results])


# ---------------------------------------------------------------- correct variants


def beam_batched_no_dropping(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    """All sentences stay in the batch to the end (a finished one only grows PAD at no cost);
    the whole prefix is recomputed at every step."""
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


def beam_python_lists(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    """One sentence at a time, hypotheses as (tokens, log P, length, finished) tuples, ranked
    with Python's sort; each output padded to the step at which its search ended."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id

    def lp(n: int) -> float:
        return ((5 + n) / 6) ** length_penalty

    outputs, widths = [], []
    with torch.no_grad():
        for b in range(src.shape[0]):
            one = src[b : b + 1]
            memory = model.encode(one)
            beams = [([bos_id], 0.0, 0, False)]
            step = 0
            for step in range(1, max_len + 1):
                open_ = [h for h in beams if not h[3]]
                candidates = [h for h in beams if h[3]]  # finished: kept as they are
                if open_:
                    fed = torch.tensor([h[0] for h in open_])
                    log_p = model.decode(
                        fed, memory.expand(len(open_), -1, -1), one.expand(len(open_), -1)
                    )
                    log_p = log_p[:, -1].log_softmax(-1)
                    log_p[:, pad] = float("-inf")
                    for h, row in zip(open_, log_p):
                        values, ids = row.topk(beam_size)
                        for value, tok in zip(values.tolist(), ids.tolist()):
                            done = tok == eos_id or step >= max_len
                            candidates.append((h[0] + [tok], h[1] + value, step, done))
                candidates.sort(key=lambda h: h[1] / lp(h[2]), reverse=True)
                beams = candidates[:beam_size]
                if all(h[3] for h in beams):
                    break
            best = max(beams, key=lambda h: h[1] / lp(h[2]))
            outputs.append(best[0][1:])
            widths.append(step)
    model.train(was_training)
    width = max(widths)
    return torch.tensor([o + [pad] * (width - len(o)) for o in outputs], dtype=torch.long)


def beam_with_cache(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6, use_cache=True
) -> Tensor:
    """With the key/value cache reordered after every step; scores as a (B*K,) vector."""
    was_training = model.training
    model.eval()
    K, V, pad = beam_size, model.config.tgt_vocab_size, model.config.pad_id
    B = len(src)
    with torch.no_grad():
        memory = torch.repeat_interleave(model.encode(src), K, dim=0)
        srcs = torch.repeat_interleave(src, K, dim=0)
        cache = model.new_cache() if use_cache else None
        seqs = torch.full((B * K, 1), bos_id)
        score = torch.tensor([0.0] + [-float("inf")] * (K - 1)).repeat(B)  # (B*K,)
        length = torch.zeros(B * K)
        done = torch.zeros(B * K, dtype=torch.bool)
        for t in range(1, max_len + 1):
            fed = seqs[:, -1:] if use_cache else seqs
            logp = model.decode(fed, memory, srcs, cache, last_only=True)[:, -1].log_softmax(-1)
            logp[:, pad] = -float("inf")
            logp[done] = -float("inf")
            logp[done, pad] = 0.0
            cand = score[:, None] + logp  # (B*K, V)
            cand_len = torch.where(done, length, torch.full_like(length, t))
            penalty = ((5 + cand_len) / 6) ** length_penalty
            flat = (cand / penalty[:, None]).view(B, K * V)
            idx = flat.topk(K, dim=1).indices  # (B, K)
            parent = (idx // V + torch.arange(B)[:, None] * K).flatten()
            tok = (idx % V).flatten()
            score = cand.view(B, K * V).gather(1, idx).flatten()
            length = cand_len[parent]
            done = done[parent] | (tok == eos_id) | (t >= max_len)
            seqs = torch.cat([seqs[parent], tok[:, None]], dim=1)
            if cache is not None:
                cache.reorder(parent)
            if done.all():
                break
        final = (score / ((5 + length) / 6) ** length_penalty).view(B, K)
        pick = final.argmax(dim=1) + torch.arange(B) * K
    model.train(was_training)
    return seqs[pick, 1:]


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start_open",
        beam_all_open,
        "mistake",
        "All K hypotheses start from BOS with score 0, so the first step fills the beam with K "
        "copies of the same token.",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_length",
        beam_bos_counted,
        "mistake",
        "My length for the penalty counts BOS as well.",
    ),
    BlindCase(
        CHECK,
        "penalty_at_every_step",
        beam_penalty_every_step,
        "mistake",
        "I store the score already divided by the length penalty and add the next log-prob "
        "to it, so the penalty is applied again at every step.",
    ),
    BlindCase(
        CHECK,
        "final_pick_by_log_prob",
        beam_final_by_log_prob,
        "mistake",
        "The beam is ranked with the penalty, but at the end I return the hypothesis with the "
        "highest log P, without it.",
    ),
    BlindCase(
        CHECK,
        "finished_length_grows",
        beam_finished_grow,
        "mistake",
        "A finished hypothesis gets PAD at no cost, but its length keeps growing with the steps.",
    ),
    BlindCase(
        CHECK,
        "no_finished_state",
        beam_no_finished_state,
        "mistake",
        "I treat EOS like any token: hypotheses go on after it, at a cost, until every "
        "hypothesis contains an EOS, and I cut the returned one after its first EOS.",
    ),
    BlindCase(
        CHECK,
        "pad_can_be_generated",
        beam_pad_allowed,
        "mistake",
        "I did not remove PAD from the candidates.",
    ),
    BlindCase(
        CHECK,
        "length_without_eos",
        beam_length_without_eos,
        "mistake",
        "My length |Y| for the penalty does not count the EOS token.",
    ),
    BlindCase(
        CHECK,
        "history_not_reordered",
        beam_no_reorder,
        "mistake",
        "I append each new token to row k without first taking the token history of its "
        "parent hypothesis.",
    ),
    BlindCase(
        CHECK,
        "beam_index_modulo",
        beam_index_modulo,
        "mistake",
        "I split the flat index into beam = index % K and token = index // K.",
    ),
    BlindCase(
        CHECK,
        "raw_logits_summed",
        beam_raw_logits,
        "mistake",
        "I summed the raw logits instead of log_softmax.",
    ),
    BlindCase(
        CHECK,
        "penalty_operator_precedence",
        beam_penalty_precedence,
        "mistake",
        "I wrote the penalty as (5 + length) / 6 ** alpha, so only 6 is raised to alpha.",
    ),
    BlindCase(
        CHECK,
        "stop_when_best_finished",
        beam_stop_when_best_finished,
        "mistake",
        "A sentence stops as soon as its best-ranked hypothesis has produced EOS, and I return "
        "that one, even though open hypotheses could still overtake it.",
    ),
    BlindCase(
        CHECK,
        "probabilities_multiplied",
        beam_probabilities_multiplied,
        "mistake",
        "I multiply probabilities instead of adding log-probabilities, and divide that product "
        "by the length penalty.",
    ),
    BlindCase(
        CHECK,
        "batched_no_dropping",
        beam_batched_no_dropping,
        "correct",
        "No cache and no sentence leaves the batch: a finished sentence's hypotheses just grow "
        "PAD at no cost until every sentence has finished.",
    ),
    BlindCase(
        CHECK,
        "python_lists",
        beam_python_lists,
        "correct",
        "One sentence at a time with lists of (tokens, log P, length, finished) tuples sorted "
        "by the penalized score; only the top K tokens of each open hypothesis are candidates.",
    ),
    BlindCase(
        CHECK,
        "flat_scores_with_cache",
        beam_with_cache,
        "correct",
        "Scores as one (B*K,) vector, the key/value cache reordered by parent rows after every "
        "step, and an extra use_cache argument with a default.",
    ),
]
