"""Blind set B16, check_greedy_decode (chapter 15): greedy search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.transformer import Transformer

from .. import BlindCase

CHECK = "check_greedy_decode"


# ---------------------------------------------------------------- mistakes


@torch.no_grad()
def greedy_pad_not_excluded(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        next_token = logits.argmax(-1)  # the most probable token, whatever it is
        next_token = next_token.masked_fill(done, pad)
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)
        done |= next_token == eos_id
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_eos_dropped(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        next_token = logits.argmax(-1)
        done |= next_token == eos_id
        next_token = next_token.masked_fill(done, pad)  # EOS is a marker, not a word
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)
        if done.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_bos_kept(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        next_token = logits.argmax(-1).masked_fill(done, pad)
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)
        done |= next_token == eos_id
        if done.all():
            break
    return tokens  # BOS, then the output


@torch.no_grad()
def greedy_tokens_after_eos(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    memory = model.encode(src)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    ended = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(tokens, memory, src)[:, -1]
        logits[:, model.config.pad_id] = float("-inf")
        next_token = logits.argmax(-1)
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)  # ended rows go on writing
        ended |= next_token == eos_id
        if ended.all():
            break
    return tokens[:, 1:]


@torch.no_grad()
def greedy_feeds_last_token(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    out = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(out[:, -1:], memory, src)[:, -1]  # only the newest token, no cache
        logits[:, pad] = float("-inf")
        next_token = logits.argmax(-1).masked_fill(done, pad)
        out = torch.cat([out, next_token[:, None]], dim=1)
        done |= next_token == eos_id
        if done.all():
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_first_position(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    out = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(out, memory, src)[:, 0]  # (B, V) of the position I fed first
        logits[:, pad] = float("-inf")
        next_token = logits.argmax(-1).masked_fill(done, pad)
        out = torch.cat([out, next_token[:, None]], dim=1)
        done |= next_token == eos_id
        if done.all():
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_no_eval(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    pad = model.config.pad_id  # no model.eval(): dropout stays on
    memory = model.encode(src)
    out = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(out, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        next_token = logits.argmax(-1).masked_fill(done, pad)
        out = torch.cat([out, next_token[:, None]], dim=1)
        done |= next_token == eos_id
        if done.all():
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_one_step_short(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    out = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    while out.shape[1] < max_len and not done.all():  # BOS counted in the length
        logits = model.decode(out, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        next_token = logits.argmax(-1).masked_fill(done, pad)
        out = torch.cat([out, next_token[:, None]], dim=1)
        done |= next_token == eos_id
    return out[:, 1:]


@torch.no_grad()
def greedy_stops_at_first_eos(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    out = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for _ in range(max_len):
        logits = model.decode(out, memory, src)[:, -1]
        logits[:, pad] = float("-inf")
        next_token = logits.argmax(-1)
        out = torch.cat([out, next_token[:, None]], dim=1)
        if (next_token == eos_id).any():  # the batch is done
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_fills_with_eos(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    memory = model.encode(src)
    out = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(out, memory, src)[:, -1]
        logits[:, model.config.pad_id] = float("-inf")
        next_token = logits.argmax(-1).masked_fill(done, eos_id)  # finished rows repeat EOS
        out = torch.cat([out, next_token[:, None]], dim=1)
        done |= next_token == eos_id
        if done.all():
            break
    return out[:, 1:]


@torch.no_grad()
def greedy_cache_whole_prefix(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    cache = model.new_cache()
    out = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(out, memory, src, cache)[:, -1]  # the cache, and all tokens again
        logits[:, pad] = float("-inf")
        next_token = logits.argmax(-1).masked_fill(done, pad)
        out = torch.cat([out, next_token[:, None]], dim=1)
        done |= next_token == eos_id
        if done.all():
            break
    return out[:, 1:]


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def greedy_recompute_prefix(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    memory = model.encode(src)
    out = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(out, memory, src)[:, -1].clone()  # (B, V)
        logits[:, pad] = float("-inf")
        next_token = logits.argmax(dim=-1).masked_fill(done, pad)
        out = torch.cat([out, next_token.unsqueeze(1)], dim=1)
        done = done | (next_token == eos_id)
        if bool(done.all()):
            break
    model.train(was_training)
    return out[:, 1:]


@torch.no_grad()
def greedy_cache_full_batch(
    model: Transformer,
    src: Tensor,
    max_len: int,
    bos_id: int,
    eos_id: int,
    use_cache: bool = True,
) -> Tensor:
    """The cache, one token fed per step; finished sentences stay in the batch, fed PAD."""
    model.eval()
    pad = model.config.pad_id
    B = src.shape[0]
    memory = model.encode(src)
    cache = model.new_cache() if use_cache else None
    out = torch.full((B, max_len + 1), pad, dtype=torch.long)
    out[:, 0] = bos_id
    finished = torch.zeros(B, dtype=torch.bool)
    steps = 0
    for t in range(1, max_len + 1):
        fed = out[:, t - 1 : t] if use_cache else out[:, :t]
        log_p = model.decode(fed, memory, src, cache, last_only=True)[:, -1].log_softmax(-1)
        log_p[:, pad] = -float("inf")
        best = log_p.argmax(-1)
        out[:, t] = torch.where(finished, torch.full_like(best, pad), best)
        finished |= best == eos_id
        steps = t
        if finished.all():
            break
    return out[:, 1 : steps + 1]


@torch.no_grad()
def greedy_one_sentence_at_a_time(
    model: Transformer, src: Tensor, max_len: int, bos_id: int, eos_id: int
) -> Tensor:
    """Each sentence decoded alone (its padding removed), then padded to a common width."""
    model.eval()
    pad = model.config.pad_id
    outputs = []
    for row in src:
        s = row[row != pad][None] if (row != pad).any() else row[None]
        memory = model.encode(s)
        cache = model.new_cache()
        token = torch.tensor([[bos_id]])
        words: list[int] = []
        for _ in range(max_len):
            logits = model.decode(token, memory, s, cache)[0, -1]
            probs = logits.softmax(-1)
            probs[pad] = -1.0  # below every probability
            word = int(probs.argmax())
            words.append(word)
            if word == eos_id:
                break
            token = torch.tensor([[word]])
        outputs.append(words)
    width = max(len(w) for w in outputs)
    return torch.tensor([w + [pad] * (width - len(w)) for w in outputs], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "pad_not_excluded",
        greedy_pad_not_excluded,
        "mistake",
        "I took the argmax over all tokens, PAD included.",
    ),
    BlindCase(
        CHECK,
        "eos_dropped",
        greedy_eos_dropped,
        "mistake",
        "I treat EOS as an end marker and write PAD in its place, so no output contains EOS.",
    ),
    BlindCase(
        CHECK,
        "bos_kept",
        greedy_bos_kept,
        "mistake",
        "I return the whole token tensor, BOS in the first column.",
    ),
    BlindCase(
        CHECK,
        "tokens_after_eos",
        greedy_tokens_after_eos,
        "mistake",
        "I stop when every sentence has produced EOS, but sentences that ended earlier keep "
        "their later argmax tokens instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "feeds_last_token_without_cache",
        greedy_feeds_last_token,
        "mistake",
        "I fed only the newest token to decode, as incremental decoding does, but without a "
        "cache, so the decoder never sees the earlier tokens.",
    ),
    BlindCase(
        CHECK,
        "first_position_logits",
        greedy_first_position,
        "mistake",
        "I took logits[:, 0] instead of logits[:, -1], the prediction after BOS at every step.",
    ),
    BlindCase(
        CHECK,
        "no_eval",
        greedy_no_eval,
        "mistake",
        "I forgot model.eval(), so dropout changes the logits during the search.",
    ),
    BlindCase(
        CHECK,
        "one_token_short",
        greedy_one_step_short,
        "mistake",
        "My loop runs while the tensor, BOS included, is shorter than max_len, so a sentence "
        "that never ends gets max_len - 1 tokens.",
    ),
    BlindCase(
        CHECK,
        "stops_at_first_eos",
        greedy_stops_at_first_eos,
        "mistake",
        "I stop the whole batch as soon as one sentence produces EOS.",
    ),
    BlindCase(
        CHECK,
        "fills_with_eos",
        greedy_fills_with_eos,
        "mistake",
        "After a sentence ends I keep writing EOS into its row instead of PAD.",
    ),
    BlindCase(
        CHECK,
        "cache_and_whole_prefix",
        greedy_cache_whole_prefix,
        "mistake",
        "I passed a cache to decode but still fed the whole prefix at every step, so the cache "
        "holds every token several times and the positions run on.",
    ),
    BlindCase(
        CHECK,
        "recompute_prefix",
        greedy_recompute_prefix,
        "correct",
        "No cache: the whole prefix is fed at every step; finished sentences stay in the batch "
        "and get PAD; the model's mode restored.",
    ),
    BlindCase(
        CHECK,
        "cache_full_batch",
        greedy_cache_full_batch,
        "correct",
        "The key/value cache with one token per step, argmax of log_softmax, no sentence ever "
        "leaves the batch; use_cache an extra argument.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        greedy_one_sentence_at_a_time,
        "correct",
        "A Python loop that decodes each sentence alone, its padding cut off, with the cache, "
        "and pads the outputs to one width.",
    ),
]
