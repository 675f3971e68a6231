"""What the block checks (blocks.py) say: the mistakes they name and the words of their
messages, kept apart from the probes so that each file reads as one thing."""

from __future__ import annotations

MISTAKES = {
    "block-part-not-called": "with norm_first={norm_first}, your block never calls {part}: the "
    "book's block passes its input through it.",
    "block-part-reads": "with norm_first={norm_first}, the first place your block differs from "
    "the book's is {part}: yours gives it {yours}{where}, where the book's gives it {right}. "
    "Every part before it gets what it gets in the book's block.",
    "block-part-inside": "with norm_first={norm_first}, {part} of your block gets the same "
    "inputs as the book's, and the same weights, but returns something else: the difference is "
    "inside it, in the code of its own class. Every part before it is right.",
    "block-part-mask": "with norm_first={norm_first}, {part} gets {what} Every part before it "
    "gets what it gets in the book's block.",
    "block-output-relu": "with norm_first={norm_first}, every part of your block gets and "
    "returns what the book's does, but the block's output then goes through a ReLU: the block "
    "ends with its last residual sum (and, post-norm, its LayerNorm); the ReLU belongs inside "
    "the feed-forward network only.",
    "block-output-normed": "with norm_first={norm_first}, every part of your block gets and "
    "returns what the book's does, but the block's output then goes through one more "
    "LayerNorm: in a pre-norm Transformer the final LayerNorm belongs to the stack, once after "
    "the last block (the encoder's and decoder's own norm), not to each block.",
    "block-no-residual": "the residual connection is missing: each sub-layer is {want}, but yours "
    "computes {no_residual} (the input x is not added back).",
    "block-no-residual-around": "there is no residual connection around {sublayer}: yours computes "
    "{no_residual} there; each sub-layer is {want}.",
    "block-norm-first-ignored": "norm_first is ignored: your block computes {yours} whatever "
    "norm_first says; norm_first={norm_first} asks for {want}.",
    "block-norm-first-inverted": "the LayerNorm is in the wrong place: norm_first={norm_first} asks "
    "for {want}, but yours computes {other}.",
    "block-normed-residual": "the residual adds the normalised input: yours computes h = "
    "LayerNorm(x), then h + Sublayer(h); norm_first={norm_first} asks for {want}, with x itself "
    "on the residual path.",
    "block-norm-on-sublayer": "the LayerNorm is applied to the sub-layer's output before the "
    "residual: yours computes x + LayerNorm(Sublayer(x)); norm_first={norm_first} asks for "
    "{want}.",
    "block-stale-residual": "each residual adds the block's input x, not the output of the "
    "sub-layer before: the sub-layers are chained, each adding back what it read.",
    "block-stale-input": "each sub-layer reads the block's input x, not the output of the "
    "sub-layer before: the sub-layers are chained, the feed-forward network reads what attention "
    "made.",
    "block-reads-block-input": "{sublayer} reads the block's input x, not the output of "
    "{previous}: the sub-layers are chained, each reading what the one before made.",
    "block-norm-reused": "{sublayer} is normalised by {norm}, the LayerNorm of {owner}: each "
    "sub-layer has its own ({norms}), with its own weights.",
    "block-norms-swapped": "the LayerNorms are swapped: yours normalises {yours}; each "
    "sub-layer has its own, {own}. With the weights each learns the difference matters.",
    "block-normed-twice": "around {sublayer} yours normalises both before the sub-layer and "
    "after the residual, LayerNorm(x + Sublayer(LayerNorm(x))); norm_first={norm_first} asks "
    "for {want}, one LayerNorm.",
    "block-query-unnormalised": "with norm_first=True {sublayer} is asked by the unnormalised x: "
    "pre-norm normalises the sub-layer's whole input, h = LayerNorm(x), and h is the query as "
    "well as the keys and values (self-attention) -- x + Attention(h, ...).",
    "block-residual-from-before": "the residual around {sublayer} adds the input of {previous}, "
    "not its own input (the output of {previous}): each residual adds back what its sub-layer "
    "read. A variable name that was not updated is the usual cause.",
    "block-dropout-fixed": "built with dropout=0.0, your block in training mode gives another "
    "output than in eval mode: a dropout probability is fixed in your code (nn.Dropout(0.1)?) "
    "instead of taken from the `dropout` argument, nn.Dropout(dropout).",
    "block-order": "the sub-layers run in the wrong order: yours runs {yours}; the book's block "
    "runs {book}.",
    "block-mask-polarity": "mask polarity: you masked the keys that may be seen -- {polarity}.",
    "encoder-no-padding-mask": "the padding is not hidden: changing sentence 1 at its padding "
    "positions 3..4 moves the outputs at its real positions 0..2 (by up to {moved:.2f}). Pass "
    "src_mask (B, 1, 1, S), True = a real token, to self-attention as the mask over its keys.",
    "decoder-sees-future": "the decoder sees the future: changing the target at positions 2..3 "
    "moves the outputs at positions 0..1 (by up to {moved:.2f}). Pass tgt_mask (causal: True on "
    "and below the diagonal) to self-attention.",
    "decoder-ignores-memory": "the output does not depend on memory: changing memory moves "
    "nothing. Either memory does not reach cross-attention (its queries come from the decoder, "
    "its keys and values from memory, the encoder's output (B, S, D)), or cross-attention's "
    "result is not used further on (each sub-layer's output, residual included, is the next "
    "one's input).",
    "decoder-cross-reads-target": "cross-attention takes its keys and values from its own input, "
    "the target, instead of from memory (the encoder's output, (B, S, D)): the decoder never "
    "reads the source.",
    "decoder-no-source-mask": "the source padding is not hidden: changing the memory at "
    "sentence 1's padding positions 3..4 moves its outputs (by up to {moved:.2f}). Pass src_mask "
    "(B, 1, 1, S) to cross-attention as the mask over its keys.",
    "decoder-memory-normalised": "with norm_first=True you normalise the memory too (with {norm}): "
    "pre-norm normalises the sub-layer's input, the decoder's x; memory comes from the encoder "
    "and goes into cross-attention as it is.",
    "decoder-cross-through-self-attn": "cross-attention runs through self_attn's weights: it has "
    "its own module, cross_attn, with its own projections.",
}

MESSAGES = {
    "decoder-sees-future-symptom": "the decoder sees the future: changing the target at "
    "positions 2..3 moves the outputs at positions 0..1, where position t may depend only on "
    "positions 0..t (check each attention's queries, keys, values and masks).",
    "encoder-no-padding-mask-symptom": "the padding is not hidden: changing sentence 1 at its "
    "padding positions 3..4 moves the outputs at its real positions 0..2, which padding must not "
    "do (check self-attention's queries, keys, values and mask: src_mask (B, 1, 1, S) masks the "
    "keys).",
    "decoder-no-source-mask-symptom": "the source padding is not hidden: changing the memory "
    "at sentence 1's padding positions 3..4 moves its outputs, which padding must not do (check "
    "cross-attention's queries, keys, values and mask).",
    "block-gradient-differs": "the values are right but the gradient with respect to {name} "
    "differs from the reference (norm_first={norm_first}).",
    "decoder-shapes-hint": "here the target has T = {T} positions and the source S = {S}: "
    "cross-attention takes its queries from x (B, T, D) and its keys and values from memory "
    "(B, S, D), masked with src_mask (B, 1, 1, S).",
    "block-part-differs": "with norm_first={norm_first}, the first place your block differs from "
    "the book's is {part}: the book's gives it {right}{where}, yours something else. Every part "
    "before it gets what it gets in the book's block.",
    "trace-unnamed": "a tensor of its own",
    "trace-part-self_attn": "the self-attention",
    "trace-part-cross_attn": "the cross-attention",
    "trace-part-feed_forward": "the feed-forward network",
    "trace-block-input": "{name} (the block's input)",
    "trace-output": "{part}'s output",
    "trace-slot": " as its {slot}",
    "trace-query": "query",
    "trace-key": "key",
    "trace-value": "value",
    "trace-mask-empty-rows": "a mask under which {n} queries see no key at all, where the book's "
    "lets each see at least one: two masks of opposite polarity combined? In this book True = "
    "may attend, and torch.triu(ones, diagonal=1) marks the future, the keys that may *not* be "
    "attended (the causal mask is its opposite, torch.tril(ones)).",
    "trace-mask-sees-more": "a mask that lets queries see {n} (query, key) pairs the book's "
    "hides, such as key {k} for query {q} of sentence {b}: a part of the mask is missing (the "
    "padding, or the future).",
    "trace-mask-sees-less": "a mask that hides {n} (query, key) pairs the book's lets a query "
    "see, such as key {k} for query {q} of sentence {b}.",
    "trace-mask-none": "no mask, where the book's block passes one.",
    "trace-mask-inverted": "the mask inverted: True where the book's mask is False (in this book "
    "True = may attend).",
    "trace-mask-transposed": "the right mask transposed (queries and keys swapped): "
    "mask.transpose(-2, -1) of the book's.",
    "trace-mask-causal": "a causal mask: it hides later positions, which the book's block lets "
    "every position see here.",
    "trace-mask-other": "another mask than the book's: some queries see other keys.",
    "block-differs": "the output differs from the book's block with norm_first={norm_first}, most "
    "at sentence {b}, position {t} ({shapes}).",
    "post-norm": "post-norm LayerNorm(x + Sublayer(x)) (the paper)",
    "pre-norm": "pre-norm x + Sublayer(LayerNorm(x))",
    "post-norm-no-residual": "LayerNorm(Sublayer(x))",
    "pre-norm-no-residual": "Sublayer(LayerNorm(x))",
    "self-attention": "self-attention",
    "cross-attention": "cross-attention",
    "feed-forward": "the feed-forward network",
    "then": ", then ",
    "every-sublayer": "every sub-layer",
    "your-block": "your block's output",
}
