"""Blind set B30, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.transformer import Transformer

from .. import BlindCase

CHECK = "check_greedy_decode"


def _greedy(
    model: Transformer,
    src: Tensor,
    max_len: int,
    bos_id: int,
    eos_id: int,
    *,
    eval_mode: bool = True,
    mask_pad: bool = True,
    keep_bos: bool = False,
    keep_eos: bool = True,
    pad_after_end: bool = True,
    sticky_done: bool = True,
    stop_on_any: bool = False,
    steps: int | None = None,
    position: int = -1,
    argmax_dim: int = -1,
    last_token_only: bool = False,
) -> Tensor:
    """Greedy search over the whole prefix at every step; each keyword is one reader's choice
    (the defaults are right)."""
    was_training = model.training
    if eval_mode:
        model.eval()
    pad = model.config.pad_id
    with torch.no_grad():
        memory = model.encode(src)
        tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
        for _ in range(max_len if steps is None else steps):
            fed = tokens[:, -1:] if last_token_only else tokens
            logits = model.decode(fed, memory, src)[:, position]  # (B, V)
            if mask_pad:
                logits[:, pad] = float("-inf")
            next_token = logits.argmax(dim=argmax_dim)
            if argmax_dim == 0:  # (V,): one index per vocabulary entry, cut to the batch
                next_token = next_token[: src.shape[0]]
            ended = next_token == eos_id
            if pad_after_end:
                next_token = next_token.masked_fill(done, pad)
            if not keep_eos:
                next_token = next_token.masked_fill(ended, pad)
            tokens = torch.cat([tokens, next_token[:, None]], dim=1)
            done = (done | ended) if sticky_done else (next_token == eos_id)
            if (stop_on_any and ended.any()) or done.all():
                break
    model.train(was_training)
    return tokens if keep_bos else tokens[:, 1:]


# ---------------------------------------------------------------- mistakes


def greedy_keeps_bos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_bos=True)


def greedy_drops_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, keep_eos=False)


def greedy_pad_allowed(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, mask_pad=False)


def greedy_train_mode(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, eval_mode=False)


def greedy_no_padding_after_end(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, pad_after_end=False)


def greedy_done_not_sticky(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, sticky_done=False)


def greedy_stops_at_first_eos(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, stop_on_any=True)


def greedy_one_step_short(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, steps=max_len - 1)


def greedy_first_position(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, position=0)


def greedy_argmax_batch_axis(model, src, max_len, bos_id, eos_id):
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    with torch.no_grad():
        memory = model.encode(src)
        tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_len):
            logits = model.decode(tokens, memory, src)[:, -1]
            logits[:, pad] = float("-inf")
            probs = torch.softmax(logits, dim=0)  # the softmax over the wrong axis
            next_token = probs.argmax(dim=-1).masked_fill(done, pad)
            tokens = torch.cat([tokens, next_token[:, None]], dim=1)
            done |= next_token == eos_id
            if done.all():
                break
    model.train(was_training)
    return tokens[:, 1:]


def greedy_last_token_no_cache(model, src, max_len, bos_id, eos_id):
    return _greedy(model, src, max_len, bos_id, eos_id, last_token_only=True)


def greedy_returns_scores(model, src, max_len, bos_id, eos_id):
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    with torch.no_grad():
        memory = model.encode(src)
        tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
        total = torch.zeros(src.shape[0])
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_len):
            log_probs = model.decode(tokens, memory, src)[:, -1].log_softmax(-1)
            log_probs[:, pad] = float("-inf")
            best, next_token = log_probs.max(dim=-1)
            total += best.masked_fill(done, 0.0)
            next_token = next_token.masked_fill(done, pad)
            tokens = torch.cat([tokens, next_token[:, None]], dim=1)
            done |= next_token == eos_id
            if done.all():
                break
    model.train(was_training)
    return tokens[:, 1:], total  # the log-probability too, handy for comparing with beams


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_full_prefix(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    return _greedy(model, src, max_len, bos_id, eos_id)


@torch.no_grad()
def greedy_one_sentence_at_a_time(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    outputs = []
    for b in range(src.shape[0]):
        one = src[b : b + 1]
        memory = model.encode(one)
        cache = model.new_cache()
        out, last = [], bos_id
        while len(out) < max_len:
            logits = model.decode(torch.tensor([[last]]), memory, one, cache)[0, -1]
            logits[pad] = float("-inf")
            last = int(logits.argmax())
            out.append(last)
            if last == eos_id:
                break
        outputs.append(out)
    model.train(was_training)
    width = max(len(o) for o in outputs)
    result = torch.full((len(outputs), width), pad, dtype=torch.long, device=src.device)
    for b, out in enumerate(outputs):
        result[b, : len(out)] = torch.tensor(out)
    return result


def greedy_cache_all_rows(
    model: Transformer,
    src: Tensor,
    max_len: int,
    bos_id: int,
    eos_id: int,
    use_cache: bool = True,
) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    with torch.inference_mode():
        memory = model.encode(src)
        cache = model.new_cache() if use_cache else None
        generated = [torch.full((B,), bos_id, dtype=torch.long, device=src.device)]
        finished = torch.zeros(B, dtype=torch.bool, device=src.device)
        while len(generated) <= max_len and not finished.all():
            if use_cache:
                fed = generated[-1][:, None]
            else:
                fed = torch.stack(generated, dim=1)
            logits = model.decode(fed, memory, src, cache)[:, -1]
            logits = logits.index_fill(-1, torch.tensor([pad], device=src.device), -torch.inf)
            choice = logits.argmax(-1)
            generated.append(torch.where(finished, torch.full_like(choice, pad), choice))
            finished = finished | (choice == eos_id)
    model.train(was_training)
    return torch.stack(generated[1:], dim=1).clone()


CASES = [
    BlindCase(
        CHECK,
        "keeps_bos",
        greedy_keeps_bos,
        "mistake",
        "I returned the whole token tensor, BOS in column 0 included.",
    ),
    BlindCase(
        CHECK,
        "eos_replaced_by_pad",
        greedy_drops_eos,
        "mistake",
        "When a sentence produces EOS I write PAD there, so the EOS is not kept.",
    ),
    BlindCase(
        CHECK,
        "pad_not_excluded",
        greedy_pad_allowed,
        "mistake",
        "I took the argmax over every token, PAD included.",
    ),
    BlindCase(
        CHECK,
        "dropout_left_on",
        greedy_train_mode,
        "mistake",
        "I used torch.no_grad() but never called model.eval(), so dropout stays on.",
    ),
    BlindCase(
        CHECK,
        "no_padding_after_end",
        greedy_no_padding_after_end,
        "mistake",
        "A finished sentence keeps getting new tokens until every sentence is done; I never "
        "write PAD after its EOS.",
    ),
    BlindCase(
        CHECK,
        "done_recomputed",
        greedy_done_not_sticky,
        "mistake",
        "I wrote done = next_token == eos_id instead of done |= ..., so a sentence that ended "
        "starts again at the next step.",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_eos",
        greedy_stops_at_first_eos,
        "mistake",
        "I break out of the loop as soon as any sentence produces EOS.",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        greedy_one_step_short,
        "mistake",
        "I looped range(max_len - 1), counting BOS as one of the max_len tokens.",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position,
        "mistake",
        "I read the next token from logits[:, 0] instead of the last position.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_batch",
        greedy_argmax_batch_axis,
        "mistake",
        "I took the softmax with dim=0 before the argmax, so each row's probabilities are "
        "normalised over the batch.",
    ),
    BlindCase(
        CHECK,
        "last_token_without_cache",
        greedy_last_token_no_cache,
        "mistake",
        "I fed only the last token to model.decode at each step, without a cache.",
    ),
    BlindCase(
        CHECK,
        "returns_tokens_and_scores",
        greedy_returns_scores,
        "mistake",
        "I return (tokens, total log-probability) instead of the tokens alone.",
    ),
    BlindCase(
        CHECK,
        "full_prefix_every_step",
        greedy_full_prefix,
        "correct",
        "No cache: the whole prefix is decoded again at every step; finished rows stay in the "
        "batch and get PAD.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_sentence_at_a_time,
        "correct",
        "Each sentence decoded alone with the model's cache, in Python lists, then padded "
        "into one tensor.",
    ),
    BlindCase(
        CHECK,
        "cache_all_rows",
        greedy_cache_all_rows,
        "correct",
        "A cache for the whole batch, no row ever dropped, a list of columns stacked at the "
        "end; torch.inference_mode and an extra use_cache argument.",
    ),
]
