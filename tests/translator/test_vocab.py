"""One vocabulary per language: the pair used as one tokenizer, and its checkpoint files."""

import pytest
import torch

from transformer_tutorial.decoding import translate
from transformer_tutorial.tokens import decode, encode, encode_pairs, train_tokenizer
from transformer_tutorial.transformer import Transformer, TransformerConfig
from transformer_tutorial.translator.checkpoint import (
    CheckpointError,
    load_checkpoint,
    save_checkpoint,
)
from transformer_tutorial.translator.vocab import (
    TokenizerPair,
    encode_translation_pairs,
    source_tokenizer,
    target_tokenizer,
)

PAIRS = [
    ("Ein Hund läuft über die Wiese.", "A dog runs across the meadow."),
    ("Zwei Männer spielen Fußball.", "Two men are playing soccer."),
    ("Eine Frau liest ein Buch.", "A woman is reading a book."),
] * 4


@pytest.fixture(scope="module")
def pair():
    german = train_tokenizer([de for de, _ in PAIRS], vocab_size=80, min_frequency=1)
    english = train_tokenizer([en for _, en in PAIRS], vocab_size=60, min_frequency=1)
    return TokenizerPair(german, english)


def test_pair_encodes_with_the_source_and_decodes_with_the_target(pair):
    (ids,) = encode(pair, ["Ein Hund läuft."])
    assert ids == encode(pair.source, ["Ein Hund läuft."])[0]
    (english_ids,) = encode(pair.target, ["A dog runs."])
    assert decode(pair, english_ids) == decode(pair.target, english_ids) == "A dog runs."
    assert source_tokenizer(pair) is pair.source and target_tokenizer(pair) is pair.target
    shared = pair.source
    assert source_tokenizer(shared) is shared and target_tokenizer(shared) is shared


def test_translation_pairs_use_each_sides_vocabulary_and_cut_like_encode_pairs(pair):
    ids = encode_translation_pairs(pair, PAIRS[:3], max_len=5)
    for (src, tgt), (de, en) in zip(ids, PAIRS[:3], strict=True):
        assert src == encode(pair.source, [de])[0][:4] and tgt == encode(pair.target, [en])[0][:4]
    shared = pair.source
    assert encode_translation_pairs(shared, PAIRS, 7) == encode_pairs(shared, PAIRS, 7)


def test_checkpoint_round_trip_keeps_both_vocabularies(tmp_path, pair):
    config = TransformerConfig(
        src_vocab_size=pair.source.get_vocab_size(), tgt_vocab_size=pair.target.get_vocab_size(),
        d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=32,
        max_len=32, share_embeddings=False,
    )  # fmt: skip
    torch.manual_seed(0)
    model = Transformer(config).eval()
    ckpt = save_checkpoint(tmp_path, model, config, pair, step=1)
    assert (ckpt / "target_tokenizer.json").is_file()
    loaded, loaded_config, tokenizer, _ = load_checkpoint(tmp_path)
    assert isinstance(tokenizer, TokenizerPair) and loaded_config == config
    assert tokenizer.source.to_str() == pair.source.to_str()
    assert tokenizer.target.to_str() == pair.target.to_str()
    sources = [de for de, _ in PAIRS[:3]]
    assert translate(loaded, tokenizer, sources) == translate(model, pair, sources)


def test_a_target_vocabulary_larger_than_the_model_is_refused(tmp_path, pair):
    small = TokenizerPair(pair.source, pair.source)  # 80 target entries for a 60-entry model
    config = TransformerConfig(
        src_vocab_size=80, tgt_vocab_size=60, d_model=16, num_heads=2, num_encoder_layers=1,
        num_decoder_layers=1, d_ff=32, max_len=32,
    )  # fmt: skip
    save_checkpoint(tmp_path, Transformer(config), config, small, step=1)
    with pytest.raises(CheckpointError, match="target tokenizer .* has 80 tokens .* only 60"):
        load_checkpoint(tmp_path)
