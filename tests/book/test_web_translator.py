"""tools/web_translator.py, without a browser: what it writes for the translator page from a
checkpoint (the weights in fp16, the tokenizers, the page's script and styles, both editions),
and what it says when a model is missing. The page itself is tested in Chromium
(test_translator_page.py)."""

from __future__ import annotations

import base64
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_tool():
    """tools/web_translator.py, under a name of its own (benchmarks/ has a script of the same
    name)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "tools_web_translator", ROOT / "tools" / "web_translator.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["tools_web_translator"] = module
    spec.loader.exec_module(module)
    return module


web_translator = sys.modules.get("tools_web_translator") or _load_tool()


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    import torch

    from transformer_tutorial.tokens import train_tokenizer
    from transformer_tutorial.transformer import Transformer, TransformerConfig
    from transformer_tutorial.translator.checkpoint import save_checkpoint
    from transformer_tutorial.translator.vocab import TokenizerPair

    torch.manual_seed(0)
    de = ["Ein Hund läuft.", "Zwei Männer </script> spielen."] * 5
    en = ["A dog runs.", "Two men play."] * 5
    pair = TokenizerPair(train_tokenizer(de, 60, 1), train_tokenizer(en, 50, 1))
    config = TransformerConfig(
        src_vocab_size=pair.source.get_vocab_size(),
        tgt_vocab_size=pair.target.get_vocab_size(),
        d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=2, d_ff=32,
        max_len=32, norm_first=True,
    )  # fmt: skip
    model = Transformer(config)
    run = tmp_path_factory.mktemp("run") / "checkpoints"
    return save_checkpoint(run, model, config, pair, step=7, meta={"length_penalty": 1.4})


def read_model_script(path: Path) -> dict:
    text = path.read_text(encoding="ascii")
    prefix = '(window.TT_MODELS=window.TT_MODELS||{})["de-en"]='
    assert text.startswith(prefix) and text.endswith(";\n")
    assert "</" not in text  # nothing in it can end the script element
    return json.loads(text[len(prefix) : -2])


def test_the_assets_hold_the_checkpoint_in_fp16_for_both_editions(tmp_path, checkpoint):
    from transformer_tutorial.translator.checkpoint import load_checkpoint

    html = tmp_path / "html"
    (html / "zh").mkdir(parents=True)
    manifest = web_translator.write_assets(html, {"de-en": checkpoint, "zh-en": None})
    assert manifest["missing"] == ["zh-en"]
    info = manifest["models"]["de-en"]
    assert info["step"] == 7 and info["length_penalty"] == 1.4 and info["max_len"] == 32
    for root in (html, html / "zh"):
        out = root / "_static" / "translator"
        assert sorted(p.name for p in out.iterdir()) == [
            "de-en.js", "manifest.json", "page.css", "page.js",
        ]  # fmt: skip
    out = html / "_static" / "translator"
    data = read_model_script(out / "de-en.js")
    weights = np.frombuffer(base64.b64decode(data["weights"]), dtype="<f2")
    model, config, tokenizer, _ = load_checkpoint(checkpoint)
    state = model.state_dict()
    assert set(data["tensors"]) == set(web_translator.tensor_names(config))
    assert "output.weight" not in data["tensors"]  # tied: the target embedding is the output
    for name, (offset, shape) in data["tensors"].items():
        expected = state[name].half().numpy()
        got = weights[offset : offset + expected.size].reshape(shape)
        assert np.array_equal(got, expected), name
    assert info["parameters"] == weights.size
    # the tokenizers: every id's piece, the merges in order, the special tokens
    vocab = tokenizer.source.get_vocab()
    assert [data["source"]["vocab"][i] for i in vocab.values()] == list(vocab)
    merges = json.loads(tokenizer.source.to_str())["model"]["merges"]
    assert data["source"]["merges"] == [" ".join(m) for m in merges]
    assert data["source"]["special"] == ["<pad>", "<unk>", "<bos>", "<eos>"]
    assert len(data["target"]["vocab"]) == config.tgt_vocab_size
    # the page's script knows which pairs this build has; the styles are the attention view's
    assert 'var AVAILABLE = ["de-en"];' in (out / "page.js").read_text()
    css = (out / "page.css").read_text()
    assert ".tta .tta-map td" in css and ".tt-input" in css and "<style>" not in css


def test_a_missing_model_is_explained_and_the_page_still_built(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(web_translator, "ROOT", tmp_path)  # no shipped model there
    html = tmp_path / "html"
    html.mkdir()
    assert web_translator.main([str(html)]) == 0
    said = capsys.readouterr().out
    assert said.count("translator page: no ") == 2
    assert "--de-en runs/<run>" in said and "pretrained/zh-en/" in said
    js = (html / "_static" / "translator" / "page.js").read_text()
    assert "var AVAILABLE = [];" in js
    assert web_translator.main([str(tmp_path / "nowhere")]) == 2
    assert "make book" in capsys.readouterr().err


def test_a_tokenizer_the_page_cannot_read_is_refused(tmp_path):
    from tokenizers import Tokenizer, models

    t = Tokenizer(models.WordLevel({"<unk>": 0, "a": 1}, unk_token="<unk>"))
    path = tmp_path / "tokenizer.json"
    t.save(str(path))
    data = json.loads(path.read_text())
    data["normalizer"] = {"type": "NFC"}
    path.write_text(json.dumps(data))
    with pytest.raises(SystemExit, match="does not implement"):
        web_translator.tokenizer_data(path)


def test_the_page_script_inserts_text_never_markup():
    """What the reader typed and every token reach the page through textContent only."""
    js = (ROOT / "tools" / "web_translator_assets" / "translator.js").read_text()
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(", js)
    assert "new Function" not in js
