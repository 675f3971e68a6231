"""Decoding checks: greedy search, beam search and the key/value cache (chapter 15)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import torch
from torch import Tensor

from ..decoding import beam_search, greedy_decode
from ..sequences import BOS_ID
from ..transformer import (
    KVCache,
    Transformer,
    TransformerConfig,
)
from .verdict import (
    Verdict,
    Wrong,
    _close,
    _random,
    _run,
)

# --- greedy search and beam search ------------------------------------------------------------


@dataclass
class _Case:
    """A small random translator and sources on which decoding shows the usual mistakes."""

    model: Transformer
    src: Tensor  # (B, S) source ids, four of the six sentences padded
    max_len: int  # tokens to generate at most
    eos: int  # a token the model produces: sentences end at different steps, two never

    @property
    def pad(self) -> int:
        return self.model.config.pad_id


def _decoding_case() -> _Case:
    """Made afresh for each check, so that nothing a reader's code does to it carries over."""
    torch.manual_seed(3)
    config = TransformerConfig(
        src_vocab_size=17,
        tgt_vocab_size=19,
        d_model=16,
        num_heads=4,
        num_encoder_layers=1,
        num_decoder_layers=1,
        d_ff=32,
        dropout=0.0,
        max_len=20,
        tie_output=False,
    )
    model = Transformer(config).eval()
    pad, max_len = config.pad_id, 10
    src = torch.randint(3, 17, (6, 7), generator=torch.Generator().manual_seed(1))  # (B, S)
    for b, real in ((1, 3), (3, 5), (4, 2), (5, 6)):
        src[b, real:] = pad
    with torch.no_grad():
        model.output.weight.mul_(4.0)  # wide margins between the best and the second token
        free = greedy_decode(model, src, max_len, BOS_ID, None)  # (B, max_len): no EOS yet
        eos = int(free[0, 3])  # sentence 0 ends by step 3, the others later or never
        ended = greedy_decode(model, src, max_len, BOS_ID, eos)  # (B, T')
        word = int(ended[(ended != pad) & (ended != eos)].mode().values)
        # PAD scores 1.5 times the commonest word: where that word wins, PAD would beat it if
        # it were allowed, which shows a search that forgets to exclude padding
        model.output.weight[pad] = 1.5 * model.output.weight[word]
    return _Case(model, src, max_len, eos)


def _sentences(result: object, rows: int, pad: int) -> list[list[int]]:
    """Token ids ``(rows, T')`` as one list per sentence, trailing padding dropped."""
    if not (isinstance(result, Tensor) and result.dim() == 2 and result.shape[0] == rows):
        got = tuple(result.shape) if isinstance(result, Tensor) else type(result).__name__
        raise Wrong(f"return token ids of shape (B, T') = ({rows}, T'), not {got}.")
    if result.is_floating_point():
        raise Wrong(f"return token ids as integers (torch.long), not {result.dtype}.")
    sentences = result.tolist()
    for tokens in sentences:
        while tokens and tokens[-1] == pad:
            tokens.pop()
    return sentences


def _common_mistake(got: list, want: list, case: _Case) -> str | None:
    """A mistake of greedy and beam search alike, seen in the sentences ``got``."""
    pad, eos, L = case.pad, case.eos, case.max_len
    if all(s[:1] == [BOS_ID] for s in got) and [s[1:] for s in got] == want:
        return (f"your output starts with BOS (id {BOS_ID}): return only the generated tokens, "
                "(B, T') without BOS.")  # fmt: skip
    for i, s in enumerate(got):
        if pad in s:
            return (f"sentence {i} has PAD (id {pad}) at step {s.index(pad)}, inside the "
                    "sentence: padding is not a word. Give it the score -inf before choosing "
                    "a token; PAD only fills a row after its EOS.")  # fmt: skip
    for i, s in enumerate(got):
        if eos in s[:-1]:
            t = s.index(eos)
            return (f"sentence {i} goes on after its EOS at step {t} (then {s[t + 1 : t + 4]}"
                    f"...): a sentence (a hypothesis) that has produced EOS (id {eos}) is "
                    "finished; only PAD may follow.")  # fmt: skip
    for i, (s, right) in enumerate(zip(got, want, strict=True)):
        if eos not in right + s and abs(len(s) - L) == 1 and s[: L - 1] == right[: L - 1]:
            return (f"off by one: sentence {i} never produces EOS, so it stops after "
                    f"max_len = {L} tokens; yours has {len(s)}.")  # fmt: skip
    return None


def _first_difference(got: list, want: list, what: str, case: _Case) -> str:
    for i, (s, right) in enumerate(zip(got, want, strict=True)):
        if s != right:
            pairs = enumerate(zip(s, right, strict=False))
            t = next((t for t, (a, b) in pairs if a != b), min(len(s), len(right)))
            return (f"sentence {i} differs from {what} from step {t} on: {right} expected, "
                    f"yours {s} (src {tuple(case.src.shape)}, max_len = {case.max_len}, "
                    f"EOS = {case.eos}).")  # fmt: skip
    return f"the output differs from {what}."


def check_greedy_decode(fn: Callable[..., Tensor]) -> Verdict:
    """``fn(model, src, max_len, bos_id, eos_id) -> (B, T')``: at each step the most probable
    token that is not PAD; a sentence ends with its EOS (kept) or after ``max_len`` tokens, and
    its row is padded with PAD after its end; BOS is not returned."""

    def probes() -> str:
        case = _decoding_case()
        model, src, L, eos, pad = case.model, case.src, case.max_len, case.eos, case.pad
        want = _sentences(greedy_decode(model, src, L, BOS_ID, eos), len(src), pad)
        got = _sentences(fn(model, src, L, BOS_ID, eos), len(src), pad)
        words = _common_mistake(got, want, case) if got != want else None
        if words:
            raise Wrong(words)
        for i, n in enumerate((src != pad).sum(dim=1).tolist()):
            alone = _sentences(fn(model, src[i : i + 1, :n], L, BOS_ID, eos), 1, pad)[0]
            if alone != got[i]:
                early = len(got[i]) < len(alone) and eos not in got[i]
                raise Wrong(
                    f"sentence {i} comes out differently in the batch ({got[i]}) than alone "
                    f"({alone}): each sentence must be decoded as if it were alone."
                    + (" Does your loop stop when the first sentence ends, instead of when "
                       "every sentence has?" if early else "")
                )  # fmt: skip
        if got != want:
            raise Wrong(_first_difference(got, want, "the book's greedy search", case))
        return "tokens, the stop at EOS, max_len, padding, and each sentence alone are right."

    return _run("greedy decoding", probes)


def _beam_mistake(got: list, want: list, K: int, case: _Case, greedy: list, no_penalty) -> str:
    """The likeliest mistake of a beam search with ``K`` beams that gave ``got``."""
    words = _common_mistake(got, want, case)
    if words:
        return words
    if K > 1 and got == greedy:
        return (f"with beam_size = {K} your output is exactly greedy search's: the beams are "
                f"{K} copies of one hypothesis. At the first step there is only BOS: let one "
                f"hypothesis grow from it (the other {K - 1} start at log-probability -inf), "
                f"so that the first step keeps {K} different tokens.")  # fmt: skip
    if K > 1 and got == no_penalty():
        return ("the length penalty is not applied: your output is what ranking by log P alone "
                "gives (length_penalty = 0). Rank each hypothesis by log P(Y) / lp(Y), lp(Y) = "
                "((5 + |Y|) / 6) ** length_penalty, |Y| its length with EOS.")  # fmt: skip
    ended = [i for i, right in enumerate(want) if case.eos in right]
    if ended and not any(case.eos in s for s in got):
        i = ended[0]
        return (f"no sentence of yours ends with EOS, but the best hypothesis of sentence {i} "
                f"is {want[i]} (yours {got[i]}): a finished hypothesis must stay in the beam "
                "and compete by its score, not be dropped (or EOS be forbidden).")  # fmt: skip
    if K == 1:
        return "with beam_size = 1 beam search is greedy search, but " + _first_difference(
            got, want, "greedy search", case
        )
    return _first_difference(got, want, f"the book's beam search with beam_size = {K}", case)


def check_beam_search(fn: Callable[..., Tensor]) -> Verdict:
    """``fn(model, src, beam_size, max_len, bos_id=..., eos_id=..., length_penalty=0.6) ->
    (B, T')``: the ``beam_size`` best hypotheses of each sentence, ranked by
    ``log P(Y) / ((5 + |Y|) / 6) ** length_penalty``; a hypothesis that has produced EOS is
    finished and keeps competing; the best one, without BOS, padded after its EOS."""

    def probes() -> str:
        case = _decoding_case()
        model, src, L, eos, B = case.model, case.src, case.max_len, case.eos, len(case.src)
        K, alpha = 3, 0.6

        def ours(K: int, alpha: float) -> list:
            out = beam_search(model, src, K, L, bos_id=BOS_ID, eos_id=eos, length_penalty=alpha)
            return _sentences(out, B, case.pad)

        greedy = _sentences(greedy_decode(model, src, L, BOS_ID, eos), B, case.pad)
        for k, want in ((1, greedy), (K, ours(K, alpha))):
            out = fn(model, src, k, L, bos_id=BOS_ID, eos_id=eos, length_penalty=alpha)
            got = _sentences(out, B, case.pad)
            if got != want:
                raise Wrong(_beam_mistake(got, want, k, case, greedy, partial(ours, K, 0.0)))
        return (
            f"beam_size = 1 is greedy search; beam_size = {K} with the length penalty, "
            "finished hypotheses and padding is right."
        )

    return _run("beam search", probes)


# --- the key/value cache ------------------------------------------------------------------------

_AXES = {0: "batch", 1: "heads", 2: "positions", 3: "feature"}


def _history_mistake(name: str, got: object, parts: list[Tensor]) -> str:
    """Why ``got`` is not ``parts`` joined along the positions axis (dim 2)."""
    want = torch.cat(parts, dim=2)
    shapes = " then ".join(str(tuple(p.shape)) for p in parts)
    if not isinstance(got, Tensor):
        return f"append_self should return tensors, got {type(got).__name__} for the {name}."
    if len(parts) > 1 and _close(got, parts[-1]):
        return (f"append_self returns only the new {name}, not the history: after appending "
                f"{shapes} it must return all of them, {tuple(want.shape)} -- attention at "
                "step t reads the keys and values of every position 0..t.")  # fmt: skip
    for d in (0, 1, 3):
        if _close(got, torch.cat(parts, dim=d)):
            return (f"the {name} are appended along the {_AXES[d]} axis (dim {d}): after "
                    f"appending {shapes} yours are {tuple(got.shape)}; new positions go on "
                    f"dim 2 of (B, H, T, Dh), giving {tuple(want.shape)}.")  # fmt: skip
    return (f"after appending {shapes} the {name} returned should be all of them in order "
            f"along dim 2, {tuple(want.shape)}; yours differ.")  # fmt: skip


_NAMES = ("keys", "values")


def _append(cache, new: tuple, pieces: tuple, explain=_history_mistake) -> None:
    """Call the reader's ``append_self(k, v)``: each of its two results must be the pieces so
    far and the new one joined along the positions; otherwise ``explain`` says why not."""
    result = cache.append_self(*new)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise Wrong("append_self should return a pair (all keys, all values) so far.")
    for name, got, parts, latest in zip(_NAMES, result, pieces, new, strict=True):
        parts.append(latest)
        if not (isinstance(got, Tensor) and _close(got, torch.cat(parts, dim=2))):
            raise Wrong(explain(name, got, parts))


def _reorder_mistake(name: str, got: object, parts: list, before: dict, index: Tensor) -> str:
    """Why the {name} returned by the first ``append_self`` after ``reorder(index)`` are
    ``got``; ``before[name]`` are all of them before the reorder, ``parts[-1]`` the new ones."""
    order, old, new = index.tolist(), before[name], parts[-1]
    if not isinstance(got, Tensor):
        return f"append_self should return tensors, got {type(got).__name__} for the {name}."
    if _close(got, torch.cat([old, new], dim=2)):
        return (f"reorder({order}) left the cached {name} as they were: row 0 must now hold "
                f"what row {order[0]} held. In beam search a hypothesis that continues another "
                "one would attend to the wrong history, and its next step would differ from "
                "recomputing its prefix.")  # fmt: skip
    for d in (1, 2):
        if _close(got, torch.cat([old.index_select(d, index), new], dim=2)):
            return (f"reorder picks the {name} along the {_AXES[d]} axis (dim {d}), but it "
                    f"must keep batch rows, dim 0 of (B, H, T, Dh): after reorder({order}) row "
                    f"0 holds what row {order[0]} held.")  # fmt: skip
    return f"after reorder({order}) and one more append_self the {name} are not the right rows."


class _InDecoder:
    """The reader's cache as one decoder block's ``LayerCache``; the projected memory of
    cross-attention, which the reader does not write, is kept here."""

    def __init__(self, theirs) -> None:
        self.theirs = theirs
        self.cross_k: Tensor | None = None
        self.cross_v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        return self.theirs.append_self(k, v)

    def reorder(self, index: Tensor, cross: bool = True) -> None:
        self.theirs.reorder(index)
        if cross and self.cross_k is not None:
            self.cross_k = self.cross_k.index_select(0, index)
            self.cross_v = self.cross_v.index_select(0, index)


def _decoder_mistake(cls: type) -> str | None:
    """Decode with the reader's cache in the book's decoder, one token a step, then reorder
    the rows; compare every step's logits with recomputing the whole prefix."""
    case = _decoding_case()
    model, src = case.model, case.src
    B, V = src.shape[0], model.config.tgt_vocab_size
    g = torch.Generator().manual_seed(4)
    tokens = torch.randint(3, V, (B, 8), generator=g)  # (B, T): what the decoder is fed
    tokens[:, 0] = BOS_ID
    index, when = torch.arange(B).flip(0) // 2 * 2, 4  # (B,): rows repeat, as in beam search
    with torch.no_grad():
        memory = model.encode(src)  # (B, S, D)
        cache = KVCache(layers=[_InDecoder(cls()) for _ in model.decoder.layers])
        for t in range(tokens.shape[1]):
            if t == when:  # reorder, as beam search does: rows take another row's history
                cache.reorder(index)
                tokens, memory, src = tokens[index], memory[index], src[index]
            step = model.decode(tokens[:, t : t + 1], memory, src, cache)[:, -1]  # (B, V)
            again = model.decode(tokens[:, : t + 1], memory, src)[:, -1]  # (B, V)
            if not _close(step, again, 1e-4):
                moved = f", after cache.reorder({index.tolist()}) at step {when}" * (t >= when)
                return (f"in the book's decoder with your cache, the logits of step {t} (the "
                        f"token at position {t}) differ from recomputing the whole prefix by up "
                        f"to {float((step - again).abs().max()):.3g}{moved}: the cache must keep "
                        "the keys and values of every position for the whole output.")  # fmt: skip
    return None


def check_kv_cache(cls: type) -> Verdict:
    """``cls()``: an empty cache of one decoder block's self-attention keys and values.
    ``cache.append_self(k, v)`` takes the new positions' keys and values ``(B, H, T_new, Dh)``
    and returns all of them so far, ``(B, H, T_past + T_new, Dh)`` each; ``cache.reorder(index)``
    keeps batch rows ``index`` (a 1-D long tensor, rows may repeat), as beam search needs."""

    def probes() -> str:
        B, H, Dh = 3, 3, 4  # B = H: a reorder along the wrong axis still runs

        def new(T_new: int, seed: int) -> tuple[Tensor, Tensor]:
            """New keys and values ``(B, H, T_new, Dh)`` each, float32 as in the model."""
            k, v = _random(2, B, H, T_new, Dh, seed=seed).float()
            return k, v

        cache, pieces = cls(), ([], [])
        for step, T_new in enumerate((1, 1, 2)):  # 4 positions: (B, H, 4, Dh)
            _append(cache, new(T_new, step), pieces)
        index = torch.tensor([2, 0, 0])  # beam 2 goes on in row 0, beam 0 in rows 1 and 2
        cache.reorder(index)
        before = {name: torch.cat(parts, dim=2) for name, parts in zip(_NAMES, pieces, strict=True)}
        pieces = tuple([old.index_select(0, index)] for old in before.values())
        _append(cache, new(1, 30), pieces, partial(_reorder_mistake, before=before, index=index))
        words = _decoder_mistake(cls)
        if words:
            raise Wrong(words)
        return (
            "append_self keeps every position's keys and values, reorder follows the batch "
            "rows, and the book's decoder with your cache gives the logits of recomputing."
        )

    return _run("key/value cache", probes)
