"""The attention view: its three forms, escaping, determinism, quantisation and its errors."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest
import torch

from transformer_tutorial.explore import (
    LEVELS,
    AttentionView,
    attention_view,
    colour,
    quantise,
    rounding_margin,
    seq2seq_view,
    translation_view,
)

EVIL = "<img src=x onerror=alert(1)>"


def softmax(shape, seed=0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(torch.randn(*shape, generator=g), dim=-1)


def payload(html: str) -> dict:
    """The data the view's script is called with (only integers and lists)."""
    found = re.search(r"\}\)\((\{.*?\}),\"(tta-[0-9a-f]+)\"\);</script>", html)
    assert found, "no data block"
    return json.loads(found.group(1))


def test_the_three_forms_are_there() -> None:
    view = attention_view(softmax((2, 4, 4)), ["I", "saw", "a", "saw"], title="I saw a saw")
    data, meta = view._repr_mimebundle_()
    assert set(data) == {"text/html", "image/png", "text/plain"}
    png = base64.b64decode(data["image/png"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert meta["image/png"]["width"] * 2 == int.from_bytes(png[16:20], "big")
    assert data["text/plain"] == repr(view)
    assert "2 heads, 4 queries x 4 keys" in data["text/plain"]
    html = data["text/html"]
    assert html.count("<script>") == 1 and "src=" not in html.split("<script>")[1]
    for forbidden in ("http://", "https://", "require(", "cdn", "import "):
        assert forbidden not in html.replace("http://www.w3.org/2000/svg", "")


def test_the_heatmap_is_in_the_html_without_javascript() -> None:
    """The table's cells carry their colours: the view reads with the script blocked."""
    w = torch.tensor([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    html = attention_view(w, ["a", "b", "c"]).to_html()
    cells = re.findall(r'<td style="background-color:(#[0-9a-f]{6})"></td>', html)
    assert cells == [colour(v) for v in quantise(w.numpy()).ravel()]
    assert cells[0] == colour(LEVELS) == "#08306b" and cells[1] == colour(0) == "#ffffff"
    assert cells[3] == colour(128) == "#6baed6"
    assert html.count('<tr data-i="') == 3 and html.count('class="tta-k"') == 3


def test_tokens_and_titles_are_escaped_never_parsed() -> None:
    tokens = [EVIL, "</script><script>alert(2)</script>", "a&b", '"quoted"']
    view = attention_view(softmax((4, 4)), tokens, title=EVIL, name=f"self {EVIL}")
    html = view.to_html()
    assert "<img" not in html and "alert(2)</script>" not in html
    assert html.count("<script>") == 1 and html.count("</script>") == 1
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "a&amp;b" in html and "&quot;quoted&quot;" in html
    # the script's data holds numbers only; the script reads tokens with textContent
    data = payload(html)
    assert set(data) == {"s", "w"}
    assert all(isinstance(v, int) for v in data["w"][0])
    assert "innerHTML" not in html and "insertAdjacentHTML" not in html
    assert EVIL in repr(view)  # plain text is plain text


def test_same_input_gives_byte_identical_output_and_ids_follow_the_content() -> None:
    w = softmax((2, 3, 5, 5))
    tokens = list("abcde")
    one, two = attention_view(w, tokens).to_html(), attention_view(w.clone(), tokens).to_html()
    assert one == two
    uid = re.search(r'id="(tta-[0-9a-f]{12})"', one).group(1)
    assert payload(one) and f'"{uid}"' in one
    other = attention_view(w, list("abcdf")).to_html()
    assert re.search(r'id="(tta-[0-9a-f]{12})"', other).group(1) != uid
    assert attention_view(w, tokens).to_png() == attention_view(w, tokens).to_png()


def test_weights_are_quantised_to_256ths() -> None:
    w = softmax((2, 2, 6, 6))
    data = payload(attention_view(w, list("abcdef")).to_html())
    assert data["s"] == [[2, 2, 6, 6]]
    levels = np.array(data["w"][0]).reshape(2, 2, 6, 6)
    assert np.abs(levels / LEVELS - w.numpy()).max() <= 0.5 / LEVELS + 1e-9
    # a change far below the grid's half step leaves the HTML as it was
    view = attention_view(w, list("abcdef"))
    nudged = (w.double() + min(view.margin / 2, 1e-9)).numpy()
    assert attention_view(nudged, list("abcdef")).to_html() == view.to_html()


def test_uniform_rows_are_never_on_a_rounding_boundary() -> None:
    """Masks make weights 1/k; on a grid of 1/256 no j/k with k < 512 lies halfway between two
    levels, so float noise of a reader's CPU cannot flip them."""
    for k in range(1, 65):
        for j in range(k + 1):
            assert rounding_margin(np.array([j / k])) >= 1 / (2 * k * LEVELS) - 1e-15
    causal = torch.tril(torch.ones(8, 8))
    view = attention_view(causal / causal.sum(-1, keepdim=True), list("abcdefgh"))
    assert view.margin > 1e-4
    # a grid of 1/255 would put 1/2 exactly on a boundary (0.5 * 255 = 127.5)
    assert (0.5 * 255) % 1 == 0.5 and rounding_margin(np.array([0.5])) > 1e-3


def test_a_fully_masked_row_is_allowed_and_said() -> None:
    w = torch.tensor([[0.0, 0.0], [0.25, 0.75]])
    text = repr(attention_view(w, ["<pad>", "b"]))
    assert "<pad> -> (no visible key)" in text and "b     -> b 0.75" in text


def test_layers_heads_and_batches_of_one() -> None:
    layers = [softmax((1, 4, 3, 3), seed=s) for s in range(2)]  # as MultiHeadAttention returns
    view = attention_view(layers, list("xyz"))
    assert payload(view.to_html())["s"] == [[2, 4, 3, 3]]
    assert 'data-k="l"' in view.to_html() and 'data-k="h"' in view.to_html()
    one = attention_view(softmax((3, 3)), list("xyz")).to_html()
    assert 'class="tta-controls"' not in one  # nothing to choose


def test_seq2seq_view_has_three_kinds_with_their_own_tokens() -> None:
    src, tgt = ["ein", "Hund", "."], ["<bos>", "a", "dog", "."]
    view = seq2seq_view(
        src,
        tgt,
        encoder=softmax((2, 2, 3, 3)),
        decoder=softmax((2, 2, 4, 4)),
        cross=softmax((2, 2, 4, 3)),
        title="ein Hund .",
    )
    html = view.to_html()
    assert payload(html)["s"] == [[2, 2, 3, 3], [2, 2, 4, 4], [2, 2, 4, 3]]
    for name in ("encoder self-attention", "decoder self-attention", "cross-attention"):
        assert f">{name}</option>" in html
    assert html.count('class="tta-panel"') == 3
    text = repr(view)
    assert "cross-attention: 2 layers x 2 heads, 4 queries x 3 keys" in text
    with pytest.raises(ValueError, match="at least one of encoder"):
        seq2seq_view(src, tgt)


@pytest.mark.parametrize(
    ("weights", "tokens", "message"),
    [
        (softmax((4, 4)), ["a", "b", "c"], "4 queries but 3 query tokens"),
        (torch.randn(3, 3), ["a", "b", "c"], "not the scores|softmax"),
        (torch.full((2, 2), 0.2), ["a", "b"], "sum to 0.4.*must sum to"),
        (torch.tensor([[float("nan"), 1.0], [0.5, 0.5]]), ["a", "b"], "NaN"),
        (softmax((1, 1, 1, 2, 2)), ["a", "b"], "weights\\[b\\]"),
    ],
)
def test_errors_tell_a_person_what_to_do(weights, tokens, message) -> None:
    with pytest.raises(ValueError, match=message):
        attention_view(weights, tokens)


def test_more_errors_for_people() -> None:
    with pytest.raises(TypeError, match="list of strings"):
        attention_view(softmax((3, 3)), "I saw it")
    with pytest.raises(ValueError, match="2 keys but 3 key tokens"):
        attention_view(softmax((3, 2)), ["a", "b", "c"], ["x", "y", "z"])
    with pytest.raises(ValueError, match="different shapes"):
        attention_view([softmax((2, 3, 3)), softmax((1, 3, 3))], list("abc"))
    with pytest.raises(ValueError, match="at least one panel"):
        AttentionView([])


def test_a_tensor_that_requires_grad_is_fine() -> None:
    w = softmax((3, 3)).requires_grad_()
    assert "3 queries x 3 keys" in repr(attention_view(w, list("abc")))


def test_a_dict_gives_several_kinds_over_the_same_tokens() -> None:
    band = torch.tensor([[1.0, 0.0], [0.5, 0.5]])
    view = attention_view({"band": softmax((2, 2)), "causal band": band}, ["a", "b"])
    html = view.to_html()
    assert ">band</option>" in html and ">causal band</option>" in html
    assert payload(html)["s"] == [[1, 1, 2, 2], [1, 1, 2, 2]]
    with pytest.raises(ValueError, match="empty dict"):
        attention_view({}, ["a"])


def test_weights_stored_to_four_decimals_are_accepted() -> None:
    """The recorded runs store weights rounded to 4 decimals: rows sum to 1 within a few 1e-4."""
    w = np.round(softmax((2, 4, 30, 30)).double().numpy(), 4)
    assert np.abs(w.sum(-1) - 1).max() > 1e-4
    assert "30 queries x 30 keys" in repr(attention_view(w, [str(i) for i in range(30)]))


def test_translation_view_shows_every_block_of_a_transformer() -> None:
    from transformer_tutorial.transformer import Transformer, TransformerConfig

    torch.manual_seed(0)
    config = TransformerConfig(
        src_vocab_size=12, tgt_vocab_size=12, d_model=16, num_heads=2,
        num_encoder_layers=2, num_decoder_layers=1, d_ff=32, dropout=0.0, max_len=16,
    )  # fmt: skip
    model = Transformer(config)
    src, tgt = torch.tensor([[3, 4, 5, 2]]), torch.tensor([[1, 6, 7]])
    view = translation_view(model, src, tgt, ["ein", "Hund", ".", "<eos>"], ["<bos>", "a", "dog"])
    assert payload(view.to_html())["s"] == [[2, 2, 4, 4], [1, 2, 3, 3], [1, 2, 3, 4]]
    decoder = view.panels[1].weights  # (L, H, T, T): causal, nothing above the diagonal
    assert (decoder[..., np.triu_indices(3, 1)[0], np.triu_indices(3, 1)[1]] == 0).all()
    with pytest.raises(ValueError, match="one sentence"):
        translation_view(model, src.repeat(2, 1), tgt, ["a"] * 4, ["b"] * 3)
