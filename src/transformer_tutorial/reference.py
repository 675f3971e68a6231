"""PyTorch's own modules holding our weights: the references the book checks its code against.

Every chapter that builds a block compares it with PyTorch's: the same weights in both, the same
inputs, equal outputs and gradients. The weight copying for those comparisons lives here, once,
for the chapters, the tests and the benchmarks.

* ``recurrent_from_torch``: a ``torch.nn.RNN`` or ``torch.nn.LSTM``'s weights into our ``RNN`` or
  ``LSTM`` (chapters 2 and 3);
* ``copy_attention_weights`` / ``to_torch_multihead``: our ``MultiHeadAttention`` into
  ``torch.nn.MultiheadAttention`` (chapters 9, 11, 12);
* ``to_torch_transformer``, ``matching_parameters``, ``TorchTransformer``: our ``Transformer``'s
  stacks into ``torch.nn.Transformer``, and a whole model computed with them (chapter 13, the
  benchmarks);
* ``to_torch_encoder_layer``: any of the book's self-attention blocks (chapter 11's
  ``EncoderBlock``, chapter 13's ``EncoderLayer`` as in chapter 17's BERT, chapter 18's
  ``GPTBlock``, which ``to_torch_block`` names) into ``torch.nn.TransformerEncoderLayer``.

No other module, chapter or test copies the book's weights into PyTorch's modules.

PyTorch's boolean attention masks mean the opposite of ours: True = *blocked*. Pass ``~mask``.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import torch
from torch import Tensor, nn

from .lstm import LSTM
from .masks import causal_mask
from .multihead import MultiHeadAttention
from .rnn import RNN
from .transformer import Transformer

if TYPE_CHECKING:  # gpt imports this module; import it only for the annotation
    from .gpt import GPTBlock


@torch.no_grad()
def recurrent_from_torch(ours: RNN | LSTM, reference: nn.RNN | nn.LSTM) -> RNN | LSTM:
    """Copy a ``torch.nn.RNN`` or ``torch.nn.LSTM`` into our ``RNN`` or ``LSTM``; return ours.

    The matrices copy as they are (an LSTM's gate blocks are in the same order, i, f, g, o).
    PyTorch has two biases per layer (``b_ih`` and ``b_hh``), always added together, so our
    single ``b`` is their sum.
    """
    kind = type(reference).__name__
    if reference.bidirectional or getattr(reference, "proj_size", 0):
        raise ValueError(f"Only one-directional nn.{kind} without projections has a counterpart.")
    if (kind, type(ours).__name__) not in (("RNN", "RNN"), ("LSTM", "LSTM")):
        raise ValueError(f"Copy an nn.{kind} into our {kind}, not into {type(ours).__name__}.")
    theirs = (reference.input_size, reference.hidden_size, reference.num_layers, reference.bias)
    mine = (
        ours.input_size,
        ours.hidden_size,
        ours.num_layers,
        ours.cells[0].in_proj.bias is not None,
    )
    if theirs != mine:
        raise ValueError(
            f"Sizes differ: nn.{kind} has (input_size, hidden_size, num_layers, bias) = {theirs}, "
            f"ours {mine}; build {kind}(...) with the same values."
        )
    if kind == "RNN" and reference.nonlinearity != ours.cells[0].nonlinearity:
        raise ValueError(
            f"nn.RNN uses {reference.nonlinearity!r}; build RNN with the same nonlinearity."
        )
    for layer, cell in enumerate(ours.cells):
        cell.in_proj.weight.copy_(getattr(reference, f"weight_ih_l{layer}"))
        cell.state_proj.weight.copy_(getattr(reference, f"weight_hh_l{layer}"))
        if reference.bias:
            b = getattr(reference, f"bias_ih_l{layer}") + getattr(reference, f"bias_hh_l{layer}")
            cell.in_proj.bias.copy_(b)
    return ours


def attention_pairs(
    ours: MultiHeadAttention, theirs: nn.MultiheadAttention, name: str = ""
) -> list[tuple[str, list[Tensor], Tensor]]:
    """``(name, [our tensors], their tensor)``: ``torch.cat`` of ours equals theirs.

    Ours has separate ``q_proj``, ``k_proj``, ``v_proj``; PyTorch stacks ``W^Q, W^K, W^V`` into
    one ``in_proj_weight`` of shape ``(3D, D)`` (and the biases into ``in_proj_bias``).
    """
    q, k, v, o = ours.q_proj, ours.k_proj, ours.v_proj, ours.out_proj
    pairs = [(f"{name}in_proj_weight", [q.weight, k.weight, v.weight], theirs.in_proj_weight)]
    pairs.append((f"{name}out_proj.weight", [o.weight], theirs.out_proj.weight))
    if q.bias is not None:
        pairs.append((f"{name}in_proj_bias", [q.bias, k.bias, v.bias], theirs.in_proj_bias))
        pairs.append((f"{name}out_proj.bias", [o.bias], theirs.out_proj.bias))
    return pairs


@torch.no_grad()
def copy_attention_weights(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """Put our attention's weights into ``theirs`` (which must have the same sizes)."""
    for _, mine, target in attention_pairs(ours, theirs):
        target.copy_(torch.cat(mine))


def to_torch_multihead(ours: MultiHeadAttention) -> nn.MultiheadAttention:
    """A ``torch.nn.MultiheadAttention`` (batch first) with our weights, dtype and device."""
    bias = ours.q_proj.bias is not None
    weight = ours.q_proj.weight
    theirs = nn.MultiheadAttention(
        ours.d_model, ours.num_heads, dropout=ours.dropout, bias=bias, batch_first=True
    ).to(dtype=weight.dtype, device=weight.device)
    copy_attention_weights(ours, theirs)
    return theirs.train(ours.training)


def to_torch_transformer(model: Transformer) -> nn.Transformer:
    """A ``torch.nn.Transformer`` (batch first) holding a copy of ``model``'s stack weights.

    ``nn.Transformer`` has no embeddings and no output projection, so it covers the two stacks
    only; ``TorchTransformer`` wraps it with ``model``'s embeddings and projection. It always
    ends each stack with one more LayerNorm, also in post-norm mode. Our post-norm model has
    none (every block already ends with one), so there they become ``nn.Identity``; in pre-norm
    mode they receive our final norms.
    """
    c = model.config
    with warnings.catch_warnings():
        # In pre-norm mode torch warns that its nested-tensor fast path is off; it is, below.
        warnings.simplefilter("ignore", UserWarning)
        ref = nn.Transformer(
            d_model=c.d_model,
            nhead=c.num_heads,
            num_encoder_layers=c.num_encoder_layers,
            num_decoder_layers=c.num_decoder_layers,
            dim_feedforward=c.d_ff,
            dropout=c.dropout,
            batch_first=True,
            norm_first=c.norm_first,
        )
    if not c.norm_first:
        ref.encoder.norm = nn.Identity()
        ref.decoder.norm = nn.Identity()
    # Its inference fast path packs padded batches into nested tensors and returns zeros at
    # padded positions; we compare every position, so keep the ordinary path.
    ref.encoder.use_nested_tensor = False
    weight = model.output.weight
    ref = ref.to(dtype=weight.dtype, device=weight.device)
    with torch.no_grad():
        for _, ours, theirs in matching_parameters(model, ref):
            theirs.copy_(torch.cat([p.detach() for p in ours]))
    return ref


def matching_parameters(
    model: Transformer, ref: nn.Transformer
) -> list[tuple[str, list[Tensor], Tensor]]:
    """Pairs ``(name, [our tensors], their tensor)`` over both stacks: ``torch.cat`` of ours
    equals theirs once ``to_torch_transformer`` has copied them."""

    def plain(name: str, ours: nn.Module, theirs: nn.Module) -> list:
        return [(f"{name}.{n}", [p], getattr(theirs, n)) for n, p in ours.named_parameters()]

    def feed_forward_and_norms(name: str, ours: nn.Module, theirs: nn.Module, norms) -> list:
        pairs = plain(f"{name}.linear1", ours.feed_forward.linear1, theirs.linear1)
        pairs += plain(f"{name}.linear2", ours.feed_forward.linear2, theirs.linear2)
        for n in norms:
            pairs += plain(f"{name}.{n}", getattr(ours, n), getattr(theirs, n))
        return pairs

    pairs = []
    for i, (ours, theirs) in enumerate(zip(model.encoder.layers, ref.encoder.layers, strict=True)):
        name = f"encoder.layers.{i}"
        pairs += attention_pairs(ours.self_attn, theirs.self_attn, f"{name}.self_attn.")
        pairs += feed_forward_and_norms(name, ours, theirs, ("norm1", "norm2"))
    for i, (ours, theirs) in enumerate(zip(model.decoder.layers, ref.decoder.layers, strict=True)):
        name = f"decoder.layers.{i}"
        pairs += attention_pairs(ours.self_attn, theirs.self_attn, f"{name}.self_attn.")
        pairs += attention_pairs(ours.cross_attn, theirs.multihead_attn, f"{name}.multihead_attn.")
        pairs += feed_forward_and_norms(name, ours, theirs, ("norm1", "norm2", "norm3"))
    if model.config.norm_first:
        pairs += plain("encoder.norm", model.encoder.norm, ref.encoder.norm)
        pairs += plain("decoder.norm", model.decoder.norm, ref.decoder.norm)
    return pairs


class TorchTransformer(nn.Module):
    """``model``'s embeddings, positions and output projection around ``torch.nn.Transformer``'s
    stacks (a copy of ``model``'s): the same function, computed by PyTorch's modules.

    The embeddings and the output layer are ``model``'s own modules (shared, not copied); the
    stacks are PyTorch's, so training one does not train the other's stacks.

    Shape:
        src ``(B, S)``, tgt ``(B, T)``; returns logits ``(B, T, V)``, like ``model(src, tgt)``.
    """

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.pad_id = model.config.pad_id
        self.src_embed, self.tgt_embed = model.src_embed, model.tgt_embed
        self.src_positions, self.tgt_positions = model.src_positions, model.tgt_positions
        self.dropout, self.output = model.dropout, model.output
        self.stacks = to_torch_transformer(model)

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        pad = self.pad_id
        h = self.stacks(
            self.dropout(self.src_positions(self.src_embed(src))),  # (B, S, D)
            self.dropout(self.tgt_positions(self.tgt_embed(tgt))),  # (B, T, D)
            tgt_mask=~causal_mask(tgt.shape[1], device=tgt.device),  # (T, T), True = blocked
            src_key_padding_mask=src == pad,  # (B, S), True = blocked
            tgt_key_padding_mask=tgt == pad,  # (B, T)
            memory_key_padding_mask=src == pad,  # (B, S)
        )  # (B, T, D)
        return self.output(h)  # (B, T, V)


@torch.no_grad()
def to_torch_encoder_layer(layer: nn.Module) -> nn.TransformerEncoderLayer:
    """PyTorch's ``nn.TransformerEncoderLayer`` (batch first) holding a copy of ``layer``'s
    weights: the reference a block of the book is checked against.

    ``layer`` is any of the book's self-attention blocks with ``self_attn`` (our
    ``MultiHeadAttention``), ``feed_forward`` (``linear1``, ``linear2``), ``norm1``, ``norm2``
    and ``norm_first``: chapter 11's ``EncoderBlock``, chapter 13's ``EncoderLayer`` (the stack
    of chapter 17's BERT) and chapter 18's ``GPTBlock``. Its dropout (``layer.dropout.p``, 0 when
    it has none) and train/eval mode carry over. For a causal block call the result with
    ``src_mask=~causal_mask(T)`` (PyTorch's masks say True = *blocked*).
    """
    attn, ffn = layer.self_attn, layer.feed_forward
    weight = attn.q_proj.weight
    dropout = layer.dropout.p if isinstance(getattr(layer, "dropout", None), nn.Dropout) else 0.0
    ref = nn.TransformerEncoderLayer(
        d_model=attn.d_model,
        nhead=attn.num_heads,
        dim_feedforward=ffn.linear1.out_features,
        dropout=dropout,
        batch_first=True,
        norm_first=layer.norm_first,
    ).to(dtype=weight.dtype, device=weight.device)
    copy_attention_weights(attn, ref.self_attn)  # W^Q, W^K, W^V stacked, W^O
    for name in ("linear1", "linear2"):
        getattr(ref, name).load_state_dict(getattr(ffn, name).state_dict())
    for name in ("norm1", "norm2"):
        getattr(ref, name).load_state_dict(getattr(layer, name).state_dict())
    return ref.train(layer.training)


def to_torch_block(block: GPTBlock) -> nn.TransformerEncoderLayer:
    """Chapter 18's name for :func:`to_torch_encoder_layer` of a decoder-only ``GPTBlock``."""
    return to_torch_encoder_layer(block)
