"""One vocabulary for both languages, or one for each.

Chapter 14 learns one byte-pair vocabulary from both sides of the training pairs: the two
languages share their embedding table, and words they share (names, numbers) get one entry.
With ``--separate-vocabularies`` the translator learns one for the source language and one for
the target language instead. The target's then holds English pieces only, so it can be smaller
for the same pieces per sentence, and the output layer, one of the largest costs of a small
model's step, shrinks with it (``benchmarks/README.md``).

``TokenizerPair`` stands in for the shared tokenizer wherever translation needs one: it encodes
with the source vocabulary and decodes with the target's, which is all that
``decoding.translate`` and ``tokens.encode`` ask of a tokenizer. A checkpoint stores the source
(or shared) tokenizer as ``tokenizer.json`` and a separate target one as
``target_tokenizer.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tokenizers import Tokenizer

from ..tokens import encode, encode_pairs

__all__ = ["TokenizerPair", "source_tokenizer", "target_tokenizer", "encode_translation_pairs"]


@dataclass(frozen=True)
class TokenizerPair:
    """A source and a target tokenizer, used as one: encode with the source's, decode with the
    target's. Ids 0-3 are ``<pad> <unk> <bos> <eos>`` in both."""

    source: Tokenizer
    target: Tokenizer

    def encode_batch(self, texts: list[str], add_special_tokens: bool = True) -> list:
        return self.source.encode_batch(texts, add_special_tokens=add_special_tokens)

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return self.target.decode(ids, skip_special_tokens=skip_special_tokens)


def source_tokenizer(tokenizer: Tokenizer | TokenizerPair) -> Tokenizer:
    """The tokenizer of the source side (the shared one when there is only one)."""
    return tokenizer.source if isinstance(tokenizer, TokenizerPair) else tokenizer


def target_tokenizer(tokenizer: Tokenizer | TokenizerPair) -> Tokenizer:
    """The tokenizer of the target side (the shared one when there is only one)."""
    return tokenizer.target if isinstance(tokenizer, TokenizerPair) else tokenizer


def encode_translation_pairs(
    tokenizer: Tokenizer | TokenizerPair,
    pairs: Sequence[tuple[str, str]],
    max_len: int | None = None,
) -> list[tuple[list[int], list[int]]]:
    """``tokens.encode_pairs`` with each side in its own vocabulary when there are two."""
    if not isinstance(tokenizer, TokenizerPair):
        return encode_pairs(tokenizer, pairs, max_len=max_len)
    src = encode(tokenizer.source, [s for s, _ in pairs])
    tgt = encode(tokenizer.target, [t for _, t in pairs])
    if max_len is not None:  # one position is kept for EOS or BOS, as encode_pairs does
        src = [s[: max_len - 1] for s in src]
        tgt = [t[: max_len - 1] for t in tgt]
    return list(zip(src, tgt, strict=True))
