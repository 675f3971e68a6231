"""The beam search check (chapter 15): the book's search and its usual mistakes, decoded side
by side on the same small translators, name the mistake that gives the reader's outputs."""

from __future__ import annotations

from collections.abc import Callable, Generator

import torch
from torch import Tensor

from ..decoding import beam_search
from ..sequences import BOS_ID
from .decoding import (
    BEAM_PROBES,
    BOOK_OUTPUTS,
    SEEDS,
    Case,
    alone_mistake,
    common_mistake,
    decoding_case,
    decoding_cases,
    first_difference,
    in_training_mode,
    sentences,
)
from .engine import check
from .verdict import Verdict, Wrong, say


def _beam_steps(case: Case, K: int, alpha: float, mistake: str | None) -> Generator:
    """Beam search as the book's (``mistake=None``, with no cache), or with one typical
    ``mistake`` (one of ``_BEAM_MISTAKES``), as a generator: it yields the tokens ``(B*K,
    t)`` it feeds the decoder and is sent the logits of their last position ``(B*K, V)``
    (``_beam_variants`` decodes all the variants together); it returns the best hypothesis
    of each sentence."""
    if mistake == "finished-list":
        return (yield from _finished_list_steps(case, K, alpha))
    src, L, eos, pad = case.src, case.max_len, case.eos, case.pad
    B, V, inf = src.shape[0], case.model.config.tgt_vocab_size, float("inf")
    hyps = torch.full((B, K, 1), BOS_ID)  # (B, K, t)
    fed = fed_before = hyps.view(B * K, 1)  # (B*K, t): what each decoder row has read
    score = torch.zeros(B, K)  # log P of each hypothesis
    if mistake != "copies":
        score[:, 1:] = -inf
    length = torch.zeros(B, K)  # tokens, EOS included
    ended = torch.zeros(B, K, dtype=torch.bool)
    alpha = 0.6 if mistake == "alpha-fixed" else alpha  # the argument unused, 0.6 written in
    a_rank = 0.0 if mistake in ("no-penalty", "penalty-at-end") else alpha
    a_end = 0.0 if mistake in ("no-penalty", "pick-by-log-p") else alpha
    bos = 1.0 if mistake == "bos-in-length" else 0.0

    def lp(n: Tensor, a: float) -> Tensor:
        if mistake == "penalty-precedence":  # (5 + |Y|) / 6 ** a: the power binds first
            return (5 + n + bos) / 6**a
        if mistake == "lp-bracket":  # (5 + |Y| / 6) ** a: hardly changes with |Y|
            return (5 + n / 6) ** a
        return n.clamp(min=1) ** a if mistake == "plain-power" else ((5 + n + bos) / 6) ** a

    first = [None] * B  # first-finished: the first hypothesis of each sentence to finish
    for t in range(1, L + 1):
        logits = yield fed  # (B*K, V)
        logp = _token_scores(logits.view(B, K, V), ended, eos, pad, mistake)  # (B, K, V)
        grows = torch.ones_like(ended) if mistake in (*_NO_FINISHED, "pad-in-length") else ~ended
        new_len = torch.where(grows, torch.tensor(float(t)), length)  # (B, K)
        cand_len = new_len[..., None].expand(B, K, V).clone()  # (B, K, V)
        if mistake == "eos-not-in-length":
            cand_len[..., eos] = torch.where(ended, length, torch.tensor(t - 1.0))
        total = score[..., None] + logp  # (B, K, V)
        ranked = total / lp(cand_len, a_rank)
        score, length, was, prev, token = _select(ranked, total, cand_len, ended, hyps, mistake)
        ended = was | (token == eos)
        hyps = torch.cat([prev, token[..., None]], dim=2)
        fed = hyps.view(B * K, -1)
        if mistake == "no-cache-reorder":  # a cache that is not reordered: each row goes on
            fed = torch.cat([fed_before, token.view(B * K, 1)], dim=1)  # with its own history
        fed_before = fed
        if mistake in ("first-finished", "no-finished", "best-finished"):  # each sentence
            if _stop_each(first, hyps, ended, score, mistake):  # stops by itself
                break
        if mistake == "best-finished-all" and ended[:, 0].all():  # the whole batch stops
            break
        if ended.all() and mistake != "no-finished-to-max-len":
            break
    final = score if mistake == "penalty-carried" else score / lp(length, a_end)  # (B, K)
    pick = torch.full((B,), K - 1) if mistake == "last-beam" else final.argmax(dim=1)  # (B,)
    out = hyps[torch.arange(B), pick, 1:].tolist()
    if mistake in ("first-finished", "no-finished", "best-finished"):
        out = [f if f is not None else o for f, o in zip(first, out, strict=True)]
    return _sentences(out, eos, pad, mistake)


def _token_scores(logits: Tensor, ended: Tensor, eos: int, pad: int, mistake: str | None) -> Tensor:
    """``(B, K, V)``: what each next token adds to a hypothesis's score -- its log-probability,
    padding never, and a finished hypothesis only padding, at no cost (or a mistake's)."""
    B, K, V = logits.shape
    logp = _log_probs(logits, mistake)
    pad_cost = logp[..., pad].clone()  # (B, K)
    if mistake != "pad-allowed":
        logp[..., pad] = -float("inf")
    if mistake == "drop-finished":
        logp[..., eos] = -float("inf")
    finished_row = torch.full((B, K, V), -float("inf"))
    finished_row[..., pad] = pad_cost if mistake == "pad-costs" else 0.0
    if mistake not in _NO_FINISHED:
        logp = torch.where(ended[..., None], finished_row, logp)
    return logp


def _log_probs(logits: Tensor, mistake: str | None) -> Tensor:
    """What the search scores each token by, ``(B, K, V)``: log-softmax, or a mistake's."""
    if mistake == "raw-logits":
        return logits.clone()
    if mistake == "probabilities":
        return logits.softmax(-1)
    if mistake == "softmax-over-batch":  # over the B*K rows of the batch
        return logits.reshape(-1, logits.shape[-1]).log_softmax(0).view(logits.shape)
    return logits.log_softmax(-1)


def _select(ranked: Tensor, total: Tensor, cand_len: Tensor, ended: Tensor, hyps: Tensor,
            mistake: str | None) -> tuple[Tensor, ...]:  # fmt: skip
    """The K best of the ``(B, K, V)`` candidates: their scores, lengths, ended flags, parent
    hypotheses and new tokens (or a whole batch's best, for ``topk-over-batch``)."""
    B, K, V = ranked.shape
    if mistake == "topk-over-batch":
        best = ranked.reshape(-1).topk(B * K).indices  # (B*K,): the whole batch's best
        rows, token = best // V, (best % V).view(B, K)
        score, length = total.reshape(-1)[best].view(B, K), cand_len.reshape(-1)[best]
        length, was = length.view(B, K), ended.reshape(-1)[rows].view(B, K)
        return score, length, was, hyps.view(B * K, -1)[rows].view(B, K, -1), token
    best = ranked.view(B, K * V).topk(K, dim=-1).indices  # (B, K)
    beam, token = best // V, best % V
    carried = ranked if mistake == "penalty-carried" else total
    score = carried.view(B, K * V).gather(1, best)
    length = cand_len.view(B, K * V).gather(1, best)
    was = ended.gather(1, beam)
    prev = hyps if mistake == "no-parent" else hyps.gather(1, beam[..., None].expand_as(hyps))
    if mistake == "no-offset":  # the flat rows of sentence 0: beam k without b * K
        prev = hyps.view(B * K, -1)[beam.reshape(-1)].view(B, K, -1)
    return score, length, was, prev, token


def _stop_each(
    first: list, hyps: Tensor, ended: Tensor, score: Tensor, mistake: str | None
) -> bool:
    """For a search where each sentence stops by itself: note each sentence's result when it
    stops (in ``first``); True when all have."""
    for b in range(hyps.shape[0]):
        if first[b] is None and mistake == "first-finished" and ended[b].any():
            first[b] = hyps[b, int(ended[b].nonzero()[0]), 1:].tolist()
        if first[b] is None and mistake == "best-finished" and ended[b, 0]:  # the top one
            first[b] = hyps[b, 0, 1:].tolist()
        if first[b] is None and mistake == "no-finished" and ended[b].all():
            first[b] = hyps[b, int(score[b].argmax()), 1:].tolist()
    return all(f is not None for f in first)


def _sentences(out: list[list[int]], eos: int, pad: int, mistake: str | None) -> list[list[int]]:
    """The hypotheses picked, without their trailing padding (cut at EOS where a search has no
    finished state)."""
    sentences = []
    for s in out:
        if mistake in _NO_FINISHED and eos in s:
            s = s[: s.index(eos) + 1]  # a search with no finished state cuts its output
        while s and s[-1] == pad:
            s.pop()
        sentences.append(s)
    return sentences


def _finished_list_steps(case: Case, K: int, alpha: float) -> Generator:
    """The search of ``_beam_steps`` as several libraries write it: a hypothesis that ends
    with EOS leaves the beam for a list of finished ones (when it ranks among the best K),
    ``K`` open hypotheses always go on, and a sentence is done with ``K`` finished ones."""
    src, L, eos, pad = case.src, case.max_len, case.eos, case.pad
    B, V = src.shape[0], case.model.config.tgt_vocab_size
    hyps = torch.full((B, K, 1), BOS_ID)  # (B, K, t)
    score = torch.full((B, K), float("-inf"))
    score[:, 0] = 0.0
    finished: list[list] = [[] for _ in range(B)]  # (score / lp, tokens) of each sentence
    for t in range(1, L + 1):
        logits = yield hyps.view(B * K, -1)  # (B*K, V)
        logp = logits.log_softmax(-1).view(B, K, V)
        logp[..., pad] = float("-inf")
        total = (score[..., None] + logp).view(B, K * V)
        best = total.topk(2 * K, dim=-1).indices.tolist()  # (B, 2K): lp(t) is the same for all
        rows, tokens, scores = [], [], []
        for b in range(B):
            kept = []
            for rank, i in enumerate(best[b]):
                if len(kept) == K:
                    break
                if i % V == eos:
                    if rank < K and len(finished[b]) < K:
                        seq = hyps[b, i // V, 1:].tolist() + [eos]
                        finished[b].append((float(total[b, i]) / ((5 + t) / 6) ** alpha, seq))
                else:
                    kept.append(i)
            rows += [b * K + i // V for i in kept]
            tokens += [i % V for i in kept]
            scores += [float(total[b, i]) for i in kept]
        hyps = torch.cat([hyps.view(B * K, -1)[rows], torch.tensor(tokens)[:, None]], dim=1)
        hyps, score = hyps.view(B, K, -1), torch.tensor(scores).view(B, K)
        if all(len(f) >= K for f in finished):
            break
    out = []
    for b in range(B):
        lp = ((5 + hyps.shape[2] - 1) / 6) ** alpha
        open_ = [(float(score[b, k]) / lp, hyps[b, k, 1:].tolist()) for k in range(K)]
        pool = finished[b] if len(finished[b]) >= K else finished[b] + open_
        out.append(max(pool, key=lambda c: c[0])[1])
    return out


@torch.no_grad()
def _beam_variants(case: Case, K: int, alpha: float, mistakes: list) -> dict:
    """The output of beam search with each of ``mistakes`` (``None``: none) on ``case``: all
    the searches run side by side, one decoder call per step for all of them."""
    model, B = case.model, case.src.shape[0]
    memory = model.encode(case.src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    src_k = case.src.repeat_interleave(K, dim=0)  # (B*K, S)
    running, done = {m: _beam_steps(case, K, alpha, m) for m in mistakes}, {}
    fed = {m: next(steps) for m, steps in running.items()}  # (B*K, t) each, t = 1
    while running:
        n = len(running)
        logits = model.decode(torch.cat(list(fed.values())), memory.repeat(n, 1, 1),
                              src_k.repeat(n, 1))[:, -1]  # (n*B*K, V)  # fmt: skip
        for m, rows in zip(list(running), logits.split(B * K), strict=True):
            try:
                fed[m] = running[m].send(rows)
            except StopIteration as stop:
                done[m] = stop.value
                del running[m], fed[m]
    return done


# mistakes that give the same output as another one on every probe, or that are one mistake
# written another way: the sentence of the mistake they stand for is said
_ALIASES = {"pad-in-length": "no-penalty", "no-finished-to-max-len": "no-finished",
            "best-finished-all": "best-finished"}  # fmt: skip
_NO_FINISHED = ("no-finished", "no-finished-to-max-len")  # the loop stops: by sentence, at L
_VARIANTS: dict[int, dict] = {}  # the outputs of the mistakes of _BEAM_MISTAKES on each probe
_LP = "lp(Y) = ((5 + |Y|) / 6) ** length_penalty"  # the field {lp} of the templates
MISTAKES = {  # beam-<mistake>: the sentence of each mistake of _beam_steps (but no-eval)
    "beam-no-eval": "handed a model in training mode, your search keeps dropout on: the "
    "hypotheses change from call to call. Call model.eval() before decoding (the book's "
    "beam_search does), so that every dropout layer lets everything through.",
    "beam-copies": "your output is exactly greedy search's on every probe: the beam adds nothing. "
    "Two mistakes give this. Either the beams start as copies of one hypothesis -- at the first "
    "step there is only BOS: let one hypothesis grow from it (the others start at log-probability "
    "-inf), so that the first step keeps beam_size different tokens. Or each hypothesis keeps only "
    "its own best next token (a top-1, or a top-k within each beam): choose the beam_size best "
    "of all beam_size * V candidates of a sentence together, scores.view(B, K * V).topk(K).",
    "beam-no-penalty": "the length penalty has no effect: your output is what ranking by log P "
    "alone gives (length_penalty = 0). The score is log P(Y) / lp(Y), {lp}, |Y| its length with "
    "EOS. Either the penalty is not applied; or it divides a probability, a product of "
    "probabilities where log P sums log-probabilities (so dividing by lp barely reorders); or "
    "lp hardly changes with |Y| (a bracket misplaced: 5 + |Y| / 6 where (5 + |Y|) / 6 belongs); or "
    "|Y| keeps growing after a hypothesis's EOS (the PAD that follows must not count), and when "
    "every hypothesis has the same length the penalty changes nothing.",
    "beam-penalty-at-end": "during the search yours ranks as log P alone does, so short "
    "hypotheses push the long ones out of the beam early: the length penalty is not used there "
    "(at most it is applied only to choose among the final hypotheses), or it is applied with one "
    "|Y| for every candidate (the step number, not each hypothesis's own length, frozen after its "
    "EOS), or it multiplies log P instead of dividing it. Rank every step's candidates by log "
    "P(Y) / lp(Y).",
    "beam-pick-by-log-p": "the search ranks by log P / lp, but the final choice ranks as log P "
    "alone does: it takes the highest log P, or divides every hypothesis by one lp (|Y| taken "
    "from the output's width, the PAD after EOS counted). The best hypothesis is the one with the "
    "highest log P(Y) / lp(Y), each with its own length, the same score as during the search.",
    "beam-penalty-carried": "the length penalty compounds: yours keeps log P / lp as the running "
    "score and adds the next log-probability to it, dividing again at every step. Keep each "
    "hypothesis's log P (a plain sum of log-probabilities) and divide by lp(Y) only to rank.",
    "beam-bos-in-length": "the length penalty counts BOS: |Y| in lp(Y) is the number of generated "
    "tokens, EOS included and BOS not ({lp}).",
    "beam-eos-not-in-length": "the length penalty does not count EOS: the |Y| of a hypothesis that "
    "ends with EOS includes its EOS ({lp}).",
    "beam-alpha-fixed": "your output is the book's beam search with length_penalty = 0.6 "
    "whatever length_penalty it is given: the argument is not used (a 0.6 written into the "
    "penalty?). Raise the fraction to length_penalty: {lp}.",
    "beam-plain-power": "the length penalty is |Y| ** length_penalty; the book's (GNMT's) is {lp}.",
    "beam-lp-bracket": "the length penalty is (5 + |Y| / 6) ** length_penalty, a bracket "
    "misplaced: it hardly changes with |Y|, so your search ranks almost as by log P alone. The "
    "book's (GNMT's) is {lp}.",
    "beam-penalty-precedence": "your search ranks by log P / (5 + |Y|) times a constant: the "
    "length penalty grows linearly with |Y|, not as a power. (5 + |Y|) / 6 ** length_penalty "
    "does this (** binds before /, so the power applies to 6 alone), and so do ((5 + |Y|) / 6) "
    "* length_penalty (a product for the power) and an exponent fixed at 1 (the argument "
    "unused). Bracket the fraction and raise it to length_penalty: {lp}.",
    "beam-raw-logits": "yours adds up raw logits: log P(Y) is the sum of log-probabilities, "
    "logits.log_softmax(-1) at each step (the logits of two steps are not on one scale).",
    "beam-probabilities": "yours adds up probabilities (softmax): log P(Y) is the sum of "
    "log-probabilities, logits.log_softmax(-1) at each step.",
    "beam-softmax-over-batch": "the log-softmax runs over the wrong axis (the batch of "
    "hypotheses): each row's next-token distribution is over the vocabulary, "
    "logits.log_softmax(dim=-1).",
    "beam-pad-allowed": "padding is not a word: give PAD the score -inf before choosing tokens; "
    "PAD only extends a finished hypothesis.",
    "beam-drop-finished": "a finished hypothesis must stay in the beam and compete by its score, "
    "not be dropped (or EOS be forbidden).",
    "beam-pad-costs": "a finished hypothesis pays for its padding: yours adds log P(PAD) each "
    "step, so finished hypotheses sink below open ones. Extend a finished hypothesis by PAD at no "
    "cost (log P + 0) and no change of length.",
    "beam-no-finished": "your hypotheses go on growing after their EOS (no finished state), and "
    "the output is cut at the first EOS: a hypothesis that has produced EOS is finished. Keep it "
    "in the beam with its score and length frozen (extend it only by PAD, at no cost), so that it "
    "competes with the open ones as the sentence it is.",
    "beam-topk-over-batch": "the best hypotheses are chosen over the whole batch, so one "
    "sentence's hypotheses take the places of another's: choose the beam_size best of each "
    "sentence's beam_size * V candidates, scores.view(B, K * V).topk(K, dim=-1).",
    "beam-no-parent": "each new token is appended to the hypothesis in its own row, not to the one "
    "it extends: after topk, take the hypotheses (and their scores, lengths and finished flags) of "
    "the chosen beams, best // V, then append the tokens, best % V.",
    "beam-no-offset": "each sentence's hypotheses continue the rows of sentence 0: with the "
    "(B * beam_size, t) tokens flat, beam k of sentence b is row b * beam_size + k. Index the "
    "rows (and the cache) with that, not with k alone.",
    "beam-no-cache-reorder": "the key/value cache does not follow the hypotheses: after choosing "
    "the best candidates, cache.reorder(rows) so that each row's cache holds the history of the "
    "hypothesis that row now continues.",
    "beam-last-beam": "yours returns the last of the beam_size hypotheses, the worst ranked: "
    "return the best, the one with the highest log P(Y) / lp(Y).",
    "beam-finished-list": "your finished hypotheses leave the beam for a list of their own while "
    "beam_size open ones go on (as several libraries do): in this book a finished hypothesis keeps "
    "its place in the beam and competes there, extended by PAD at no cost, and a sentence is done "
    "when all its beam_size hypotheses are finished.",
    "beam-first-finished": "a sentence stops at its first finished hypothesis: the others go on "
    "and may end better. Stop when all of a sentence's hypotheses are finished (or at max_len), "
    "then return the best.",
    "beam-best-finished": "your outputs are what a search gives that stops a sentence as soon as "
    "its best-ranked hypothesis is finished (an open hypothesis ranked below it may still "
    "overtake it: each step it grows, its log P falls but its lp(Y) grows too), or one that ranks "
    "the candidates with the lengths from before this step's token (|Y| updated after the topk, "
    "not before). Stop when all of a sentence's hypotheses are finished (or at max_len), then "
    "return the best; |Y| counts the new token.",
}
_BEAM_MISTAKES = tuple(key.removeprefix("beam-") for key in MISTAKES if key != "beam-no-eval")

MESSAGES = {
    "book-beam": "the book's beam search with beam_size = {beam_size}",
    "greedy-search": "greedy search",
    "greedy-differs": "with beam_size = 1 beam search is greedy search, but {difference}",
}


def _beam_mistake(fn: Callable, got: list, want: list, probe: int, cases: list) -> Wrong:
    """The mistake of a beam search that gave ``got`` on ``BEAM_PROBES[probe]``: the variant
    that gives the reader's output on every probe, else a description of the first difference."""
    case = cases[BEAM_PROBES[probe][0]]
    wrong = common_mistake(got, want, case)
    if wrong is not None:
        return wrong
    candidates = [*_BEAM_MISTAKES, *_ALIASES]  # the mistakes that give the reader's output
    for i in [probe] + [i for i in range(len(BEAM_PROBES)) if i != probe]:
        c, K, alpha = BEAM_PROBES[i]
        if i == probe:
            theirs = got
        else:  # the reader's code first: a crash is theirs
            out = fn(cases[c].model, cases[c].src, K, cases[c].max_len, bos_id=BOS_ID,
                     eos_id=cases[c].eos, length_penalty=alpha)  # fmt: skip
            theirs = sentences(out, len(cases[c].src), cases[c].pad)
        known = _VARIANTS.setdefault(i, {})  # the same on every call: computed once
        missing = [m for m in candidates if m not in known]
        if missing:  # on a fresh copy of the case: the reader's code has run on cases[c]
            known |= _beam_variants(decoding_case(*SEEDS[c]), K, alpha, missing)
        candidates = [m for m in candidates if known[m] == theirs]
        if not candidates:
            break
    named = {_ALIASES.get(m, m) for m in candidates}
    if len(named) == 1:  # one mistake, and only one, gives the reader's output everywhere
        return Wrong.named(MISTAKES, "beam-" + named.pop(), lp=_LP)
    c, K, alpha = BEAM_PROBES[probe]
    wrong = alone_mistake(fn, got, case, beam_size=K, length_penalty=alpha)
    if wrong is not None:
        return wrong
    if K == 1:
        difference = first_difference(got, want, say(MESSAGES, "greedy-search"), case)
        return Wrong.differs(MESSAGES, "greedy-differs", difference=str(difference))
    return first_difference(got, want, say(MESSAGES, "book-beam", beam_size=K), case)


@check(
    "beam search",
    call="fn(model, src, beam_size, max_len, bos_id=BOS_ID, eos_id=EOS_ID, length_penalty=0.6)",
)
def check_beam_search(fn: Callable[..., Tensor]) -> Verdict:
    """``fn(model, src, beam_size, max_len, bos_id=..., eos_id=..., length_penalty=0.6) ->
    (B, T')``: the ``beam_size`` best hypotheses of each sentence, ranked by
    ``log P(Y) / ((5 + |Y|) / 6) ** length_penalty``; a hypothesis that has produced EOS is
    finished and keeps competing; the best one, without BOS, padded after its EOS. Tried on
    four small random translators with beam sizes 1 to 4 and length penalties 0.6 to 2.0, and
    with each sentence alone, and on a model handed over in training mode (dropout must be off
    while decoding); a wrong output is compared with the usual mistakes' outputs."""
    cases, outputs = decoding_cases(), []
    for i, (c, K, alpha) in enumerate(BEAM_PROBES):
        case = cases[c]
        model, src, L, eos = case.model, case.src, case.max_len, case.eos
        out = fn(model, src, K, L, bos_id=BOS_ID, eos_id=eos, length_penalty=alpha)
        got = sentences(out, len(src), case.pad)
        if ("beam", i) not in BOOK_OUTPUTS:  # the book's output, the same on every call
            ours = beam_search(model, src, K, L, bos_id=BOS_ID, eos_id=eos, length_penalty=alpha)
            BOOK_OUTPUTS["beam", i] = sentences(ours, len(src), case.pad)
        want = BOOK_OUTPUTS["beam", i]
        outputs.append(got)
        if got != want:
            raise _beam_mistake(fn, got, want, i, cases)
    c, K, alpha = BEAM_PROBES[0]
    wrong = alone_mistake(fn, outputs[0], cases[c], beam_size=K, length_penalty=alpha)
    if wrong is not None:
        raise wrong
    _expect_eval_mode(fn, cases[c], K, alpha, outputs[0])
    return (  # the words chapter 15's stored run shows
        "beam_size = 1 is greedy search; beam_size = 3 with the length penalty, "
        "finished hypotheses and padding is right."
    )


@torch.no_grad()
def _expect_eval_mode(fn: Callable, case: Case, K: int, alpha: float, want: list) -> None:
    """The search on a model handed over in training mode must equal the search in eval mode."""
    model = in_training_mode(case.model)
    out = fn(model, case.src, K, case.max_len, bos_id=BOS_ID, eos_id=case.eos,
             length_penalty=alpha)  # fmt: skip
    if sentences(out, len(case.src), case.pad) != want and model.training:
        raise Wrong.named(MISTAKES, "beam-no-eval")
