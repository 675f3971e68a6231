"""Tests of transformer_tutorial.tokens (chapter 14): the subword tokenizer and the text <-> id
conversions."""

from __future__ import annotations

import unicodedata

import pytest
import torch

from transformer_tutorial.sequences import BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS, UNK_ID
from transformer_tutorial.tokens import decode, decode_batch, encode, encode_pairs, train_tokenizer
from transformer_tutorial.training import collate

SENTENCES = [
    "Ein Mann fährt Fahrrad.",
    "A man rides a bike.",
    "Zwei Hunde spielen im Schnee.",
    "Two dogs play in the snow.",
    "Eine Frau liest ein Buch, während es regnet.",
    "A woman reads a book while it rains.",
] * 20


@pytest.fixture(scope="module")
def tokenizer():
    return train_tokenizer(SENTENCES, vocab_size=120, min_frequency=1)


def test_special_tokens_have_fixed_ids(tokenizer):
    assert [tokenizer.token_to_id(t) for t in SPECIAL_TOKENS] == [PAD_ID, UNK_ID, BOS_ID, EOS_ID]
    assert (PAD_ID, UNK_ID, BOS_ID, EOS_ID) == (0, 1, 2, 3)
    assert tokenizer.get_vocab_size() <= 120


def test_decode_restores_the_raw_text(tokenizer):
    for s in set(SENTENCES):
        (ids,) = encode(tokenizer, [s])
        assert UNK_ID not in ids
        assert decode(tokenizer, ids) == s
        # BOS, EOS and padding are markers, not text; decoding stops at the first EOS.
        assert decode(tokenizer, [BOS_ID, *ids, EOS_ID, 5, 6, PAD_ID]) == s
        assert decode(tokenizer, torch.tensor([BOS_ID, *ids, EOS_ID])) == s


def test_unseen_characters_become_unk(tokenizer):
    encoding = tokenizer.encode("你好世界", add_special_tokens=False)
    assert UNK_ID in encoding.ids
    # Only the word-start marker is known; every Chinese character maps to <unk>.
    assert {t for t in encoding.tokens if t != "▁"} == {"<unk>"}


def test_encode_rejects_a_bare_string(tokenizer):
    with pytest.raises(TypeError, match="list of texts"):
        encode(tokenizer, "Ein Mann")


def test_vocab_size_must_exceed_the_specials():
    with pytest.raises(ValueError, match="vocab_size"):
        train_tokenizer(["a b"], vocab_size=4)


def test_encode_pairs_truncates_to_max_len(tokenizer):
    pairs = encode_pairs(tokenizer, [(SENTENCES[4], SENTENCES[5])], max_len=4)
    src, tgt = pairs[0]
    assert len(src) == 3 and len(tgt) == 3
    batch = collate(pairs)
    assert batch.src.shape[1] == 4 and batch.tgt_in.shape[1] == 4


def test_tokenizer_on_multi30k_train_subset():
    from transformer_tutorial.data import load_multi30k

    pairs = load_multi30k("train")[:2000]
    tok = train_tokenizer([s for p in pairs for s in p], vocab_size=1000)
    val = load_multi30k("val")[:200]
    texts = [s for p in val for s in p]
    ids = encode(tok, texts)
    known = [(i, t) for i, t in zip(ids, texts, strict=True) if UNK_ID not in i]
    assert len(known) > 0.95 * len(texts)
    # Without unknown characters the decoder is the exact inverse of the encoder.
    assert decode_batch(tok, [i for i, _ in known]) == [t for _, t in known]
    # German and English share the one vocabulary: both sides use ids from it.
    assert tok.get_vocab_size() == 1000


def test_tokenizer_for_chinese_round_trips_and_folds_width_variants():
    texts = ["我爱你。", "你好，世界！", "他们在公园里玩。", "I love you.", "Hello, world!"] * 20
    tokenizer = train_tokenizer(texts, vocab_size=200, min_frequency=1, normalization="NFKC")
    for text in ["我爱你。", "你好，世界！", "Hello, world!", "他们在公园里。"]:
        (ids,) = encode(tokenizer, [text])
        assert decode(tokenizer, ids) == unicodedata.normalize("NFKC", text)  # no spaces added
    (full,) = encode(tokenizer, ["你好？"])  # full-width question mark
    (half,) = encode(tokenizer, ["你好?"])
    assert full == half
    with pytest.raises(ValueError, match="normalization"):
        train_tokenizer(texts, vocab_size=200, normalization="NFD")
