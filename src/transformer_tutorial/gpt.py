import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .masks import causal_mask, decoder_self_mask
from .positional import LearnedPositionalEmbedding
from .reference import copy_attention_weights
from .rnn import lm_batch, lm_loss
from .sequences import EOS_ID, PAD_ID, length_sorted_batches
from .transformer import (
    AttentionWeights,
    EncoderLayer,
    KVCache,
    LayerCache,
    TokenEmbedding,
    residual,
)


@dataclass
class GPTConfig:
    """Every hyperparameter of the decoder-only language model, in one place."""

    vocab_size: int  # V: token ids 0 .. V - 1, and as many output logits
    d_model: int = 128  # D: width of embeddings and of the residual stream
    num_heads: int = 4  # H: heads per block; each works in Dh = D / H dimensions
    num_layers: int = 4  # N: blocks in the stack
    d_ff: int = 512  # hidden width of each feed-forward network (4 D, as GPT-2)
    dropout: float = 0.1  # on embeddings, attention weights and every sub-layer output
    max_len: int = 128  # longest sequence: the learned position table has this many rows
    pad_id: int = PAD_ID  # padding id: never attended to, never a target
    fused_attention: bool = False  # attention through F.scaled_dot_product_attention

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "num_heads", "num_layers", "d_ff", "max_len"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive integer, got {getattr(self, name)}")
        if self.d_model % self.num_heads != 0:
            raise ValueError(
                f"d_model ({self.d_model}) must be divisible by num_heads ({self.num_heads}): "
                f"each head gets d_model / num_heads dimensions."
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if not 0 <= self.pad_id < self.vocab_size:
            raise ValueError(f"pad_id ({self.pad_id}) must be an id below vocab_size")


class GPTBlock(EncoderLayer):
    """One GPT block: the encoder block of chapter 13, pre-norm, under a causal mask.

    A decoder block without cross-attention is an encoder block whose self-attention may not
    look ahead, so this class *is* ``EncoderLayer`` (same sub-layers, same weights, same
    forward pass when no cache is given); it only adds what generation needs: a ``LayerCache``
    that keeps the keys and values of earlier positions, as ``DecoderLayer`` does.

    Args:
        d_model, num_heads, d_ff, dropout, fused_attention: as for ``EncoderLayer``.
        norm_first: pre-norm (GPT-2) if True, the paper's post-norm if False.

    Shape:
        x ``(B, T, D)``; ``mask`` boolean ``(B, 1, T, T_past + T)`` or ``(T, T_past + T)``,
        True = may attend (causal, and padding if any); returns ``(B, T, D)``. With a
        ``cache``, ``x`` holds only the new positions.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.1,
        norm_first: bool = True,
        fused_attention: bool = False,
    ) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first, fused_attention)

    def forward(
        self,
        x: Tensor,
        mask: Tensor | None = None,
        cache: LayerCache | None = None,
        weights: AttentionWeights | None = None,
    ) -> Tensor:
        if cache is None:  # exactly EncoderLayer's pass: the mask makes it causal
            return super().forward(x, mask, weights)  # (B, T, D)
        x = residual(
            x,
            lambda h: self._cached_attention(h, mask, cache),
            self.norm1,
            self.dropout,
            self.norm_first,
        )
        return residual(x, self.feed_forward, self.norm2, self.dropout, self.norm_first)

    def _cached_attention(self, h: Tensor, mask: Tensor | None, cache: LayerCache) -> Tensor:
        k, v = self.self_attn.project_kv(h, h)  # (B, H, T, Dh) each
        k, v = cache.append_self(k, v)  # (B, H, T_past + T, Dh): earlier positions too
        out, _ = self.self_attn.attend(h, k, v, mask=mask, fused=self.fused_attention)
        return out  # (B, T, D)


@torch.no_grad()
def to_torch_block(block: GPTBlock) -> nn.TransformerEncoderLayer:
    """PyTorch's ``nn.TransformerEncoderLayer`` (batch first) holding a copy of ``block``'s
    weights: the reference the block is checked against. Call it with
    ``src_mask=~causal_mask(T)`` (PyTorch's masks say True = *blocked*)."""
    attn, ffn = block.self_attn, block.feed_forward
    weight = attn.q_proj.weight
    ref = nn.TransformerEncoderLayer(
        d_model=attn.d_model,
        nhead=attn.num_heads,
        dim_feedforward=ffn.linear1.out_features,
        dropout=block.dropout.p,
        batch_first=True,
        norm_first=block.norm_first,
    ).to(dtype=weight.dtype, device=weight.device)
    copy_attention_weights(attn, ref.self_attn)
    for name in ("linear1", "linear2"):
        getattr(ref, name).load_state_dict(getattr(ffn, name).state_dict())
    for name in ("norm1", "norm2"):
        getattr(ref, name).load_state_dict(getattr(block, name).state_dict())
    return ref.train(block.training)


class GPT(nn.Module):
    """A decoder-only Transformer language model (GPT-2's layout, at any size).

    Token embedding + learned position embedding, ``num_layers`` pre-norm ``GPTBlock``s under
    a causal mask, a final LayerNorm, and an output projection that *is* the token embedding
    matrix (tied, as in GPT-2): logit ``v`` at a position is the dot product of the final
    state with token ``v``'s embedding.

    Shape:
        tokens ``(B, T)`` ids; returns logits ``(B, T, V)``, where position ``t`` scores the
        token that follows ``tokens[:, :t + 1]``.
    """

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        c = self.config = config
        self.embed = TokenEmbedding(c.vocab_size, c.d_model)
        self.positions = LearnedPositionalEmbedding(max_len=c.max_len, d_model=c.d_model)
        self.dropout = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(
            GPTBlock(c.d_model, c.num_heads, c.d_ff, c.dropout, True, c.fused_attention)
            for _ in range(c.num_layers)
        )
        self.norm = nn.LayerNorm(c.d_model)  # pre-norm never normalizes the stream; this does
        self.output = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.output.weight = self.embed.embedding.weight  # one (V, D) tensor, two uses
        for p in self.blocks.parameters():  # Glorot for the blocks' matrices, as chapter 13
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def new_cache(self, capacity: int = 16) -> KVCache:
        """An empty key/value cache for ``forward(..., cache=...)`` (one per generated batch)."""
        return KVCache.empty(len(self.blocks), capacity)

    def forward(
        self,
        tokens: Tensor,
        cache: KVCache | None = None,
        last_only: bool = False,
        weights: AttentionWeights | None = None,
    ) -> Tensor:
        """Next-token logits at every position.

        Args:
            tokens: token ids. With a ``cache``, only the tokens not fed before; their
                positions continue after the cache's.
            cache: a ``KVCache`` from ``new_cache()``, updated in place; ``None`` recomputes
                every position.
            last_only: project only the last position to the vocabulary (``T = 1`` out).
            weights: if given (and no cache), every block appends its attention weights to
                ``weights.encoder_self``, ``(B, H, T, T)`` each.

        Shape:
            tokens ``(B, T)``; returns ``(B, T, V)``.
        """
        offset = 0 if cache is None else cache.length
        _check_tokens(self.config, tokens, offset)
        B, T = tokens.shape
        x = self.dropout(self.positions(self.embed(tokens), offset=offset))  # (B, T, D)
        if cache is None:
            mask = decoder_self_mask(tokens, self.config.pad_id)  # (B, 1, T, T)
        else:
            padding = cache.append_tokens(tokens, self.config.pad_id)  # (B, 1, 1, L) or None
            L = offset + T
            # One new token may see every earlier one; T new ones need the causal rows.
            mask = None if T == 1 else causal_mask(L, device=tokens.device)[offset:]  # (T, L)
            if padding is not None:
                mask = padding if mask is None else mask & padding  # (B, 1, T, L)
        for i, block in enumerate(self.blocks):
            layer_cache = None if cache is None else cache.layers[i]
            x = block(x, mask, layer_cache, weights)  # (B, T, D)
        x = self.norm(x)
        if last_only:
            x = x[:, -1:]  # (B, 1, D)
        return self.output(x)  # (B, T, V)


def _check_tokens(config: GPTConfig, tokens: Tensor, offset: int = 0) -> None:
    """Raise a readable error unless ``tokens`` are ``(B, T)`` ids within ``max_len``."""
    if tokens.dim() != 2 or tokens.dtype not in (torch.int32, torch.int64):
        raise ValueError(
            f"tokens must be integer ids of shape (B, T), got {tuple(tokens.shape)} "
            f"{tokens.dtype}; add a batch dimension with .unsqueeze(0) for one sequence."
        )
    if offset + tokens.shape[1] > config.max_len:
        raise ValueError(
            f"tokens reach position {offset + tokens.shape[1] - 1}, but the model has "
            f"positions 0..{config.max_len - 1} (config.max_len={config.max_len}); "
            f"shorten the sequence or build the model with a larger max_len."
        )


def top_k_filter(logits: Tensor, k: int) -> Tensor:
    """Keep the ``k`` highest logits of each row and set the others to ``-inf``.

    Exactly ``k`` survive in every row, also when logits tie (``torch.topk`` picks among equals).

    Shape:
        logits ``(..., V)``; returns ``(..., V)``.
    """
    V = logits.shape[-1]
    if not 1 <= k <= V:
        raise ValueError(f"top_k must be between 1 and the vocabulary size {V}, got {k}")
    kept = torch.zeros_like(logits, dtype=torch.bool)  # (..., V)
    kept.scatter_(-1, logits.topk(k, dim=-1).indices, True)
    return logits.masked_fill(~kept, float("-inf"))


def top_p_filter(logits: Tensor, p: float) -> Tensor:
    """Nucleus filtering: keep the smallest set of most likely tokens whose probability is at
    least ``p``, and set the others to ``-inf``.

    Tokens are taken in order of decreasing probability; a token is kept when the tokens
    before it hold less than ``p``. So the most likely token is always kept, and ``p = 1``
    keeps every token with a probability above zero.

    Shape:
        logits ``(..., V)``; returns ``(..., V)``.
    """
    if not 0.0 < p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {p}")
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)  # (..., V) each
    before = probs.cumsum(dim=-1) - probs  # (..., V): mass of the more likely tokens
    keep_sorted = before < p  # (..., V)
    keep_sorted[..., 0] = True
    kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)  # (..., V)
    return logits.masked_fill(~kept, float("-inf"))


def sample_next(
    logits: Tensor,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
) -> Tensor:
    """Draw one token id per row from next-token logits.

    The logits are divided by ``temperature`` (below 1 sharpens the distribution, above 1
    flattens it), then filtered by ``top_k`` and ``top_p`` if given, then sampled.
    ``temperature=0`` is the limit: the most likely token (greedy decoding), no randomness.

    Shape:
        logits ``(B, V)``; returns ``(B,)`` long.
    """
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0 (0 = greedy), got {temperature}")
    if temperature == 0:
        return logits.argmax(dim=-1)  # (B,)
    logits = logits / temperature
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    probs = logits.float().softmax(dim=-1)  # (B, V)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)  # (B,)


@torch.no_grad()
def generate(
    model: GPT,
    prompt: Tensor,
    max_new_tokens: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
    use_cache: bool = True,
    eos_id: int = EOS_ID,
) -> Tensor:
    """Continue ``prompt`` one token at a time, drawing each from ``sample_next``.

    With ``use_cache`` every step feeds only the newest token and reuses the keys and values
    of the earlier ones (chapter 15's cache); without it every step recomputes the whole
    prefix. Both give the same tokens. A row that has produced ``eos_id`` is padded from then
    on; generation stops when every row has, or after ``max_new_tokens``.

    Shape:
        prompt ``(B, T0)`` ids (start with ``<bos>``); returns ``(B, T0 + n)``,
        ``n <= max_new_tokens``.
    """
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    out = prompt
    cache = model.new_cache(prompt.shape[1] + max_new_tokens) if use_cache else None
    fed = prompt  # what the next forward pass reads
    done = torch.zeros(prompt.shape[0], dtype=torch.bool, device=prompt.device)  # (B,)
    try:
        for _ in range(max_new_tokens):
            logits = model(fed if use_cache else out, cache=cache, last_only=True)  # (B, 1, V)
            nxt = sample_next(logits[:, -1], temperature, top_k, top_p, generator)  # (B,)
            nxt = nxt.masked_fill(done, pad)
            out = torch.cat([out, nxt[:, None]], dim=1)  # (B, T + 1)
            done = done | (nxt == eos_id)
            if bool(done.all()):
                break
            fed = nxt[:, None]  # (B, 1)
    finally:
        model.train(was_training)
    return out


def lm_logits(model: nn.Module, inputs: Tensor) -> Tensor:
    """Next-token logits ``(B, T, V)`` of a GPT or of chapter 2's ``CharRNNLM`` (which also
    returns its last state: dropped here)."""
    out = model(inputs)
    return out[0] if isinstance(out, tuple) else out


@torch.no_grad()
def total_nats(model: nn.Module, seqs: Sequence[Sequence[int]], batch_size: int = 256) -> float:
    """The summed cross-entropy (nats) of every next token of ``seqs`` (``<bos> ... <eos>``):
    minus the log-probability the model gives the whole text, each target counted once."""
    was_training = model.training
    model.eval()
    total = 0.0
    for start in range(0, len(seqs), batch_size):
        inputs, targets, mask = lm_batch(seqs[start : start + batch_size])  # (B, T) each
        total += lm_loss(lm_logits(model, inputs), targets, mask).item() * mask.sum().item()
    model.train(was_training)
    return total


def bits_per_character(nats: float, num_characters: int) -> float:
    """Bits per character: total nats over a text / its number of characters / ln 2.

    The same text measured the same way for any tokenization: a model that splits it into
    fewer, larger tokens pays more nats per token and fewer tokens.
    """
    if num_characters < 1:
        raise ValueError(f"num_characters must be >= 1, got {num_characters}")
    return nats / num_characters / math.log(2)


def train_for(
    model: nn.Module,
    train_seqs: Sequence[Sequence[int]],
    seconds: float,
    batch_size: int = 64,
    lr: float = 3e-3,
    clip: float = 1.0,
    generator: torch.Generator | None = None,
    evaluate: Callable[[nn.Module], float] | None = None,
    eval_every: float = 10.0,
) -> dict[str, list[float]]:
    """Train a language model with Adam for ``seconds`` of this process's CPU time.

    The loop of chapter 2's ``train_lm`` (batches of similar length, clipped gradients), with a
    clock instead of a step count, so that models of different speeds get the same budget. The
    time spent in ``evaluate`` is not counted.

    Returns:
        ``{"seconds": [...], "step": [...], "train": [...], "val": [...]}``: every
        ``eval_every`` seconds and at the end, the training time so far, the steps so far, the
        mean training loss since the last record (nats per token) and ``evaluate(model)``.
    """
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    lengths = torch.tensor([len(s) for s in train_seqs])
    history: dict[str, list[float]] = {"seconds": [], "step": [], "train": [], "val": []}
    batches: list[Tensor] = []
    running: list[float] = []
    used, step, next_record = 0.0, 0, eval_every
    while used < seconds:
        start = time.process_time()
        if not batches:
            batches = length_sorted_batches(lengths, batch_size, generator=generator)
        inputs, targets, mask = lm_batch([train_seqs[i] for i in batches.pop().tolist()])
        model.train()
        loss = lm_loss(lm_logits(model, inputs), targets, mask)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        used += time.process_time() - start
        step += 1
        running.append(loss.item())
        if used >= next_record or used >= seconds:
            history["seconds"].append(used)
            history["step"].append(step)
            history["train"].append(sum(running) / len(running))
            history["val"].append(evaluate(model) if evaluate is not None else float("nan"))
            running, next_record = [], used + eval_every
    return history
