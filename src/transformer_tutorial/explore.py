"""Attention views a reader can point at: a heatmap that lights a token's row and links.

Hand-written (not generated from a notebook).

:func:`attention_view` (one kind of attention: self-attention, or a decoder's cross-attention)
and :func:`seq2seq_view` (an encoder-decoder's encoder, decoder and cross-attention together)
return an :class:`AttentionView`. In a notebook it shows itself as one output with three forms:

- ``text/html``: a heatmap table (rows = queries, columns = keys) whose cell colours are in the
  HTML itself, so it shows with JavaScript off or blocked; the weights of every layer and head
  are inline as data, and a few KB of plain inline JavaScript light the row and the links of the
  token under the pointer or the keyboard focus, and switch layer, head and kind of attention.
  Nothing is loaded from anywhere (no CDN, no widgets, no kernel): it works in the built book,
  in a page opened as a file, in JupyterLab and in Colab;
- ``image/png``: the same heatmaps drawn by matplotlib, for PDF and plain viewers;
- ``text/plain``: the shapes and, for each query token, the key it attends to most.

The output is the same, byte for byte, for the same weights: the element id is a hash of the
content and the weights are quantised to multiples of 1/256. The grid is a power of two on
purpose: a weight ``j/k`` with ``k < 512`` (uniform attention over ``k`` keys, as masks make) is
never halfway between two levels, so float noise cannot round it to a different level.
:attr:`AttentionView.margin` says how far the least stable weight lies from a rounding boundary;
a stored output compares equal on another machine when the weights there differ by less.
Tokens and every other text are escaped, never parsed as HTML.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["LEVELS", "AttentionView", "Panel", "attention_view", "seq2seq_view", "translation_view"]

LEVELS = 256  # weights are shown as multiples of 1/LEVELS
# A row of weights sums to 1 (or to 0: a query with no visible key), up to the rounding of weights
# stored to a few decimals (the recorded runs keep 4: a row of 30 is off by at most 0.0015).
ROW_SUM_TOLERANCE = 5e-3
# White -> light blue -> dark blue: a weight of 0 is the page, 1 the darkest (readable in grey).
RAMP = ((255, 255, 255), (107, 174, 214), (8, 48, 107))


def colour(level: int) -> str:
    """The cell colour of a quantised weight (``0..LEVELS``); the page's script uses the same
    formula, so a heatmap looks the same before and after the script runs."""
    t = min(max(level, 0), LEVELS) / LEVELS * (len(RAMP) - 1)
    i = min(int(t), len(RAMP) - 2)
    f = t - i
    rgb = (int(a + (b - a) * f + 0.5) for a, b in zip(RAMP[i], RAMP[i + 1], strict=True))
    return "#" + "".join(f"{c:02x}" for c in rgb)


def quantise(weights: np.ndarray) -> np.ndarray:
    """Weights in ``[0, 1]`` as integers ``0..LEVELS`` (round half up)."""
    return np.floor(np.asarray(weights, dtype=np.float64) * LEVELS + 0.5).astype(np.int64)


def rounding_margin(weights: np.ndarray) -> float:
    """The smallest change of any weight that would change its quantised level."""
    scaled = np.asarray(weights, dtype=np.float64) * LEVELS
    if scaled.size == 0:
        return float("inf")
    return float(np.min(np.abs(scaled - np.floor(scaled) - 0.5))) / LEVELS


@dataclass(frozen=True)
class Panel:
    """One kind of attention: its name, weights ``(L, H, T_q, T_k)`` and the tokens of both sides."""

    name: str
    weights: np.ndarray  # (L, H, Tq, Tk) float64, rows sum to 1 or 0
    queries: tuple[str, ...]
    keys: tuple[str, ...]


def _as_array(weights, name: str) -> np.ndarray:
    """A tensor, an array, or a list of per-layer tensors -> float64 (L, H, Tq, Tk)."""
    if isinstance(weights, (list, tuple)) and weights and not np.isscalar(weights[0]):
        first = np.asarray(_to_numpy(weights[0]))
        if first.ndim >= 2 and all(np.ndim(_to_numpy(w)) == first.ndim for w in weights):
            layers = [_layer(_to_numpy(w), name, i) for i, w in enumerate(weights)]
            shapes = {a.shape for a in layers}
            if len(shapes) > 1:
                raise ValueError(
                    f"{name}: the layers' weights have different shapes {sorted(shapes)}; every "
                    "layer of one view must have the same heads, queries and keys"
                )
            return np.stack(layers)
    a = _to_numpy(weights)
    if a.ndim == 2:  # (Tq, Tk): one layer, one head
        return a[None, None]
    if a.ndim == 3:  # (H, Tq, Tk): one layer
        return a[None]
    if a.ndim == 4:
        return a
    raise ValueError(
        f"{name}: weights of shape {tuple(a.shape)}; expected (T_q, T_k) for one head, "
        "(H, T_q, T_k) for the heads of one layer, (L, H, T_q, T_k), or a list with one "
        "(H, T_q, T_k) per layer. For one sentence of a batch (B, H, T_q, T_k) pass weights[b]"
    )


def _layer(a: np.ndarray, name: str, i: int) -> np.ndarray:
    if a.ndim == 4 and a.shape[0] == 1:  # (1, H, Tq, Tk): a batch of one sentence
        a = a[0]
    if a.ndim == 2:
        a = a[None]
    if a.ndim != 3:
        raise ValueError(
            f"{name}: layer {i + 1}'s weights have shape {tuple(a.shape)}; each layer must be "
            "(H, T_q, T_k), or (1, H, T_q, T_k) for a batch of one sentence (pass weights[b])"
        )
    return a


def _to_numpy(x) -> np.ndarray:
    if hasattr(x, "detach"):  # a torch tensor, possibly on a GPU, possibly requiring grad
        x = x.detach().float().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def _tokens(tokens: Sequence[str] | str, n: int, side: str, name: str) -> tuple[str, ...]:
    if isinstance(tokens, str):
        raise TypeError(
            f"{name}: {side} tokens must be a list of strings, one per position, not one string "
            f"(use {tokens.split()!r} for whitespace-split words)"
        )
    tokens = tuple(str(t) for t in tokens)
    if len(tokens) != n:
        what = "query (row)" if side == "query" else "key (column)"
        plural = "queries" if side == "query" else "keys"
        raise ValueError(
            f"{name}: the weights have {n} {plural} but {len(tokens)} {side} tokens were "
            f"given; pass one token per {what}"
        )
    return tokens


def _panel(name: str, weights, queries: Sequence[str], keys: Sequence[str]) -> Panel:
    w = _as_array(weights, name)
    L, H, Tq, Tk = w.shape
    if 0 in w.shape:
        raise ValueError(f"{name}: weights of shape {w.shape} are empty")
    if not np.isfinite(w).all():
        raise ValueError(
            f"{name}: the weights contain NaN or infinity; a row with no visible key should "
            "give zeros (transformer_tutorial.attention.masked_softmax does)"
        )
    if w.min() < 0 or w.max() > 1 + ROW_SUM_TOLERANCE:
        raise ValueError(
            f"{name}: weights range from {w.min():.3g} to {w.max():.3g}; attention weights lie "
            "in [0, 1]: pass the softmax's output, not the scores"
        )
    sums = w.sum(-1)
    bad = ~((np.abs(sums - 1) <= ROW_SUM_TOLERANCE) | (sums <= ROW_SUM_TOLERANCE))
    if bad.any():
        layer, head, query = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{name}: the weights of layer {layer + 1}, head {head + 1}, query {query + 1} sum "
            f"to {sums[layer, head, query]:.4g}; each row (one query over all keys) must sum to "
            "1, or 0 for a query with no visible key. Are rows queries and columns keys "
            "(T_q, T_k)? Was the softmax taken over the last axis?"
        )
    return Panel(
        name=name,
        weights=np.clip(w, 0.0, 1.0),
        queries=_tokens(queries, Tq, "query", name),
        keys=_tokens(keys, Tk, "key", name),
    )


def attention_view(
    weights,
    tokens: Sequence[str],
    key_tokens: Sequence[str] | None = None,
    *,
    name: str = "self-attention",
    title: str | None = None,
) -> AttentionView:
    """A view of one kind of attention, for every layer and head it is given.

    Args:
        weights: attention weights, row = query, each row summing to 1 (or 0 where a query sees
            no key): ``(T_q, T_k)``, ``(H, T_q, T_k)``, ``(L, H, T_q, T_k)``, or a list with one
            ``(H, T_q, T_k)`` (or ``(1, H, T_q, T_k)``) per layer. A tensor or an array. A dict
            ``{name: weights}`` gives several kinds over the same tokens, with a selector.
        tokens: the query tokens, one string per row.
        key_tokens: the key tokens, one per column (default: ``tokens``, as in self-attention).
        name: what the weights are, e.g. ``"decoder self-attention"``.
        title: a line above the view.
    """
    keys = tokens if key_tokens is None else key_tokens
    if isinstance(weights, Mapping):  # several kinds over the same tokens, e.g. two masks
        if not weights:
            raise ValueError("weights is an empty dict: give at least one {name: weights}")
        panels = [_panel(str(n), w, tokens, keys) for n, w in weights.items()]
        return AttentionView(panels, title=title)
    return AttentionView([_panel(name, weights, tokens, keys)], title=title)


def seq2seq_view(
    source_tokens: Sequence[str],
    target_tokens: Sequence[str],
    *,
    encoder=None,
    decoder=None,
    cross=None,
    title: str | None = None,
) -> AttentionView:
    """A view of an encoder-decoder's attention, with a selector for its kinds.

    Args:
        source_tokens: the ``S`` source tokens.
        target_tokens: the ``T`` target tokens the decoder read (its input, e.g. ``<bos> a b``).
        encoder: encoder self-attention weights, ``(S, S)`` per head, per layer (as in
            :func:`attention_view`).
        decoder: decoder (masked) self-attention weights, ``(T, T)`` per head, per layer.
        cross: cross-attention weights, ``(T, S)`` per head, per layer: row = target query.
        title: a line above the view.
    """
    panels = []
    if encoder is not None:
        panels.append(_panel("encoder self-attention", encoder, source_tokens, source_tokens))
    if decoder is not None:
        panels.append(_panel("decoder self-attention", decoder, target_tokens, target_tokens))
    if cross is not None:
        panels.append(_panel("cross-attention", cross, target_tokens, source_tokens))
    if not panels:
        raise ValueError("give at least one of encoder=, decoder= or cross= weights")
    return AttentionView(panels, title=title)


def translation_view(
    model,
    src,
    tgt,
    source_tokens: Sequence[str],
    target_tokens: Sequence[str],
    *,
    title: str | None = None,
) -> AttentionView:
    """Every attention of one teacher-forced pass of an encoder-decoder, as one view.

    Args:
        model: a model with ``attention_weights(src, tgt)`` returning encoder self-, decoder
            self- and cross-attention per block, like chapter 13's ``Transformer``.
        src: source ids ``(1, S)`` (one sentence).
        tgt: the decoder's input ids ``(1, T)``: ``<bos>`` and the translation so far.
        source_tokens: ``S`` strings for the source ids.
        target_tokens: ``T`` strings for the decoder's input ids.
        title: a line above the view.
    """
    if src.dim() != 2 or tgt.dim() != 2 or src.shape[0] != 1 or tgt.shape[0] != 1:
        raise ValueError(
            f"src {tuple(src.shape)} and tgt {tuple(tgt.shape)}: pass one sentence, (1, S) and "
            "(1, T); for sentence b of a batch, src[b:b + 1] and tgt[b:b + 1]"
        )
    maps = model.attention_weights(src, tgt)
    return seq2seq_view(
        source_tokens,
        target_tokens,
        encoder=[w[0] for w in maps.encoder_self],  # one (H, S, S) per block
        decoder=[w[0] for w in maps.decoder_self],  # (H, T, T)
        cross=[w[0] for w in maps.cross],  # (H, T, S)
        title=title,
    )


class AttentionView:
    """The attention view: an HTML heatmap a reader can point at, a PNG, and a text summary.

    Build it with :func:`attention_view` or :func:`seq2seq_view`; in a notebook it displays
    itself. :meth:`to_html`, :meth:`to_png` and ``repr()`` give its three forms.
    """

    def __init__(self, panels: Sequence[Panel], title: str | None = None) -> None:
        if not panels:
            raise ValueError("an attention view needs at least one panel of weights")
        self.panels = tuple(panels)
        self.title = title
        self.levels = [quantise(p.weights) for p in self.panels]  # (L, H, Tq, Tk) ints

    @property
    def margin(self) -> float:
        """How far the least stable weight lies from a rounding boundary of the 1/256 grid: on a
        machine whose weights differ from these by less, the HTML is byte-identical."""
        return min(rounding_margin(p.weights) for p in self.panels)

    # -- text -------------------------------------------------------------------------------

    def __repr__(self) -> str:
        lines = [f"AttentionView: {self.title}" if self.title else "AttentionView"]
        for p, q in zip(self.panels, self.levels, strict=True):
            L, H, Tq, Tk = q.shape
            lines.append(
                f"{p.name}: {L} layer{'s' * (L > 1)} x {H} head{'s' * (H > 1)}, "
                f"{Tq} queries x {Tk} keys; top key per query (layer 1, head 1):"
            )
            width = min(max(len(t) for t in p.queries), 12)
            for i, token in enumerate(p.queries):
                row = q[0, 0, i]
                if row.sum() == 0:
                    lines.append(f"  {token[:12]:<{width}} -> (no visible key)")
                    continue
                j = int(np.argmax(row))  # the first of equal maxima
                lines.append(f"  {token[:12]:<{width}} -> {p.keys[j][:12]} {row[j] / LEVELS:.2f}")
        return "\n".join(lines)

    # -- HTML -------------------------------------------------------------------------------

    def _body(self) -> str:
        e = html.escape
        parts = []
        if self.title:
            parts.append(f'<div class="tta-title">{e(self.title)}</div>')
        shapes = [q.shape for q in self.levels]
        selects = []
        if len(self.panels) > 1:
            opts = "".join(
                f'<option value="{i}">{e(p.name)}</option>' for i, p in enumerate(self.panels)
            )
            selects.append(f'<label>attention <select data-k="p">{opts}</select></label>')
        for key, label, axis in (("l", "layer", 0), ("h", "head", 1)):
            n = max(s[axis] for s in shapes)
            if n > 1:
                opts = "".join(f'<option value="{i}">{i + 1}</option>' for i in range(n))
                selects.append(f'<label>{label} <select data-k="{key}">{opts}</select></label>')
        if selects:
            parts.append(f'<div class="tta-controls" hidden>{" ".join(selects)}</div>')
        parts.append('<div class="tta-box">')
        for n, (p, q) in enumerate(zip(self.panels, self.levels, strict=True)):
            L, H = q.shape[:2]
            caption = p.name + (f" · layer 1 of {L}" if L > 1 else "")
            caption += f" · head 1 of {H}" if H > 1 else ""
            head = "".join(
                f'<th class="tta-k" data-j="{j}" tabindex="0">{e(t)}</th>'
                for j, t in enumerate(p.keys)
            )
            rows = []
            for i, t in enumerate(p.queries):
                cells = "".join(
                    f'<td style="background-color:{colour(v)}"></td>' for v in q[0, 0, i]
                )
                rows.append(
                    f'<tr data-i="{i}"><th class="tta-q" data-i="{i}" tabindex="0">{e(t)}</th>'
                    f"{cells}</tr>"
                )
            parts.append(
                f'<div class="tta-panel" data-p="{n}"><table class="tta-map">'
                f'<caption>{e(caption)}</caption><tr><th class="tta-corner">query \\ key</th>'
                f"{head}</tr>{''.join(rows)}</table>"
                '<svg class="tta-links" aria-hidden="true"></svg></div>'
            )
        parts.append("</div>")
        parts.append(
            '<div class="tta-readout" aria-live="polite">Darker = more weight (white 0, dark '
            "blue 1). Point at or tab to a token to see where it attends.</div>"
        )
        data = {"s": [list(s) for s in shapes], "w": [q.ravel().tolist() for q in self.levels]}
        # Only integers and lists: nothing in it can close the script element.
        payload = json.dumps(data, separators=(",", ":"))
        return "".join(parts), payload

    def to_html(self) -> str:
        """The view as one HTML fragment: markup, a scoped style sheet, the data and the script."""
        body, payload = self._body()
        uid = "tta-" + hashlib.sha256((body + payload).encode()).hexdigest()[:12]
        return (
            f'<div class="tta" id="{uid}">{_CSS}{body}'
            f"<script>(function(D,ID){{{_JS}}})({payload},{json.dumps(uid)});</script></div>"
        )

    def save_html(self, path) -> None:
        """Write the view as a page of its own (opens in any browser, from a file)."""
        page = (
            '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(self.title or 'Attention')}</title></head>"
            f"<body>{self.to_html()}</body></html>\n"
        )
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)

    # -- PNG --------------------------------------------------------------------------------

    def to_png(self) -> bytes:
        """Heatmaps of layer 1's heads (every kind of attention), drawn by matplotlib."""
        import matplotlib
        from matplotlib.figure import Figure

        heads = [min(q.shape[1], 4) for q in self.levels]
        cols = max(heads)
        rows = len(self.panels)
        cjk = _cjk_family()
        rc = {"font.size": 9, **({"font.family": ["DejaVu Sans", cjk]} if cjk else {})}
        with matplotlib.rc_context(rc):
            fig = Figure(figsize=(min(2.2 * cols + 1.2, 7.0), 2.6 * rows + 0.4), dpi=100)
            fig.set_layout_engine("constrained")
            axes = fig.subplots(rows, cols, squeeze=False)
            for r, (p, q) in enumerate(zip(self.panels, self.levels, strict=True)):
                for c in range(cols):
                    ax = axes[r][c]
                    if c >= heads[r]:
                        ax.set_visible(False)
                        continue
                    img = ax.imshow(q[0, c] / LEVELS, cmap="Blues", vmin=0, vmax=1)
                    ax.set_title(f"head {c + 1}" if q.shape[1] > 1 else "")
                    ax.set_xticks(range(len(p.keys)), [t[:10] for t in p.keys], rotation=90)
                    ax.set_yticks(range(len(p.queries)), [t[:10] for t in p.queries])
                    ax.set_xlabel("key")
                    if c == 0:
                        ax.set_ylabel(f"{p.name}\nquery")
            fig.colorbar(img, ax=axes, shrink=0.8, label="attention weight")
            if self.title:
                fig.suptitle(self.title)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=200, metadata={"Software": None})
        return buf.getvalue()

    def _repr_mimebundle_(self, include=None, exclude=None):
        png = self.to_png()
        width = int.from_bytes(png[16:20], "big") // 2  # a 2x ("retina") image
        data = {
            "text/html": self.to_html(),
            "image/png": base64.b64encode(png).decode("ascii"),
            "text/plain": repr(self),
        }
        return data, {"image/png": {"width": width}}


def _cjk_family() -> str | None:
    try:
        from .plotting import find_cjk_font
    except ImportError:  # pragma: no cover
        return None
    return find_cjk_font()


# The style sheet is scoped by the class ``tta`` and written once per view. It keeps the page's
# font family (the book serves one with Chinese glyphs; a family named here would draw boxes for
# Chinese tokens on a machine without a CJK font). (a page may hold one
# view or ten; each is a few hundred bytes). The box scrolls sideways inside itself when the
# table is wider than the text column (a phone), never the page.
_CSS = (
    "<style>"
    ".tta{margin:.5em 0;font-size:13px;line-height:1.3;max-width:100%}"
    ".tta-title{font-weight:600;margin-bottom:.3em}"
    ".tta-controls{margin:.2em 0 .4em}.tta-controls label{margin-right:1em;white-space:nowrap}"
    ".tta-controls select{font:inherit}"
    ".tta-box{overflow-x:auto;max-width:100%;display:flex;flex-direction:column;gap:.6em}"
    ".tta-panel{display:flex;flex-wrap:wrap;align-items:flex-end;gap:1em}"
    ".tta .tta-map{border-collapse:collapse;margin:0;width:auto;border:0}"
    ".tta .tta-map caption{caption-side:top;text-align:left;color:#555;padding:0 0 .2em}"
    ".tta .tta-map td{width:20px;min-width:20px;height:20px;padding:0;border:1px solid #fff}"
    ".tta .tta-map th{font-weight:normal;padding:0 4px;border:0;background:none;"
    "white-space:nowrap;cursor:pointer}"
    ".tta .tta-q{text-align:right}"
    ".tta .tta-k{writing-mode:vertical-rl;transform:rotate(180deg);vertical-align:bottom;"
    "text-align:left;padding:4px 0;max-height:9em;overflow:hidden}"
    ".tta .tta-corner{font-size:11px;color:#777;vertical-align:bottom;cursor:default}"
    ".tta tr.tta-on td{border-color:#d55e00}.tta tr.tta-on th,.tta th.tta-on{color:#d55e00;"
    "font-weight:600}"
    ".tta td.tta-col{border-left-color:#d55e00;border-right-color:#d55e00}"
    ".tta th:focus{outline:2px solid #d55e00}"
    ".tta-links text{font-size:12px;fill:currentColor}"
    ".tta-links line{stroke:#2171b5}"
    ".tta-readout{min-height:1.3em;margin-top:.3em;color:#333}"
    "</style>"
)

# The script: plain JavaScript, no library. It finds its view by id, shows the selectors,
# recolours the table for the chosen kind, layer and head, draws the links, and lights the row of
# the token under the pointer or the keyboard focus. Tokens are read from the page's text and
# written with textContent only.
_JS = r"""
var root=document.getElementById(ID);if(!root||root.dataset.ready)return;root.dataset.ready=1;
var N=256,R=[[255,255,255],[107,174,214],[8,48,107]],S=D.s,W=D.w,st={p:0,l:0,h:0};
function col(v){var t=Math.min(Math.max(v,0),N)/N*(R.length-1),i=Math.min(Math.floor(t),R.length-2),
f=t-i,s="#";for(var c=0;c<3;c++){var x=Math.floor(R[i][c]+(R[i+1][c]-R[i][c])*f+0.5);
s+=(x<16?"0":"")+x.toString(16);}return s;}
function w(p,l,h,i,j){var s=S[p];return W[p][((l*s[1]+h)*s[2]+i)*s[3]+j];}
var panels=root.querySelectorAll(".tta-panel"),out=root.querySelector(".tta-readout");
var ctl=root.querySelector(".tta-controls");if(ctl)ctl.hidden=false;
var zh=/^zh/i.test(document.documentElement.lang||""),NM={"self-attention":"\u81ea\u6ce8\u610f\u529b",
"encoder self-attention":"\u7f16\u7801\u5668\u81ea\u6ce8\u610f\u529b","decoder self-attention":"\u89e3\u7801\u5668\u81ea\u6ce8\u610f\u529b",
"cross-attention":"\u4ea4\u53c9\u6ce8\u610f\u529b"};
function loc(n){return zh&&NM[n]?NM[n]:n;}
if(zh){var lb={"attention":"\u6ce8\u610f\u529b","layer":"\u5c42","head":"\u5934"},ls=root.querySelectorAll(".tta-controls label");
 for(var i=0;i<ls.length;i++){var f=ls[i].firstChild;f.nodeValue=(lb[f.nodeValue.trim()]||f.nodeValue)+" ";}
 var os=root.querySelectorAll("option");for(var i=0;i<os.length;i++)os[i].textContent=loc(os[i].textContent);
 var cs=root.querySelectorAll(".tta-corner");for(var i=0;i<cs.length;i++)cs[i].textContent="\u67e5\u8be2 \\ \u952e";
 out.textContent="\u989c\u8272\u8d8a\u6df1\uff0c\u6743\u91cd\u8d8a\u5927\uff08\u767d\u8272\u4e3a 0\uff0c\u6df1\u84dd\u4e3a 1\uff09\u3002\u628a\u9f20\u6807\u6307\u5411\u4e00\u4e2a\u8bcd\u5143\uff08\u6216\u7528 Tab \u952e\u79fb\u5230\u5b83\u4e0a\u9762\uff09\uff0c\u770b\u5b83\u5173\u6ce8\u54ea\u91cc\u3002";}
var NS="http://www.w3.org/2000/svg";
function txt(a){return a.textContent;}
function draw(){
 for(var p=0;p<panels.length;p++){var P=panels[p],s=S[p];
  P.style.display=(panels.length>1&&p!=st.p)?"none":"";
  var l=Math.min(st.l,s[0]-1),h=Math.min(st.h,s[1]-1),rows=P.querySelectorAll("tr[data-i]");
  for(var i=0;i<rows.length;i++){var tds=rows[i].querySelectorAll("td");
   for(var j=0;j<tds.length;j++)tds[j].style.backgroundColor=col(w(p,l,h,i,j));}
  var cap=P.querySelector("caption");if(!cap.dataset.n)cap.dataset.n=cap.textContent.split(" \u00b7 ")[0];
  cap.textContent=loc(cap.dataset.n)+(s[0]>1?(zh?" \u00b7 \u7b2c "+(l+1)+" \u5c42\uff08\u5171 "+s[0]+" \u5c42\uff09":" \u00b7 layer "+(l+1)+" of "+s[0]):"")
   +(s[1]>1?(zh?" \u00b7 \u7b2c "+(h+1)+" \u4e2a\u5934\uff08\u5171 "+s[1]+" \u4e2a\uff09":" \u00b7 head "+(h+1)+" of "+s[1]):"");
  links(P,p,l,h,-1);}
}
function links(P,p,l,h,on){var s=S[p],svg=P.querySelector("svg"),q=P.querySelectorAll(".tta-q"),
 k=P.querySelectorAll(".tta-k"),dy=21,wd=290,n=Math.max(s[2],s[3]);
 while(svg.firstChild)svg.removeChild(svg.firstChild);
 svg.setAttribute("width",wd);svg.setAttribute("height",n*dy+4);
 function t(x,y,a,str,i,c){var e=document.createElementNS(NS,"text");e.setAttribute("x",x);
  e.setAttribute("y",y);e.setAttribute("text-anchor",a);e.textContent=str.slice(0,14);
  if(i==on&&c)e.setAttribute("font-weight","bold");svg.appendChild(e);}
 var top=1;if(on>=0)for(var j=0;j<s[3];j++)top=Math.max(top,w(p,l,h,on,j));
 for(var i=0;i<s[2];i++)for(var j=0;j<s[3];j++){var v=w(p,l,h,i,j);if(!v||(on>=0&&i!=on))continue;
  var e=document.createElementNS(NS,"line");e.setAttribute("x1",105);e.setAttribute("x2",175);
  e.setAttribute("y1",i*dy+dy/2+2);e.setAttribute("y2",j*dy+dy/2+2);
  e.setAttribute("stroke-width",on>=0?1+4*v/N:1);e.setAttribute("stroke-opacity",on>=0?0.15+0.85*v/top:0.6*v/N);
  svg.appendChild(e);}
 for(var i=0;i<s[2];i++)t(100,i*dy+dy/2+6,"end",txt(q[i]),i,1);
 for(var j=0;j<s[3];j++)t(180,j*dy+dy/2+6,"start",txt(k[j]),-2,0);}
function clear(P){var on=P.querySelectorAll(".tta-on,.tta-col");
 for(var i=0;i<on.length;i++)on[i].classList.remove("tta-on","tta-col");}
function light(P,i){var p=+P.dataset.p,s=S[p],l=Math.min(st.l,s[0]-1),h=Math.min(st.h,s[1]-1);
 clear(P);var row=P.querySelector('tr[data-i="'+i+'"]');row.classList.add("tta-on");
 links(P,p,l,h,i);var k=P.querySelectorAll(".tta-k"),best=[];
 for(var j=0;j<s[3];j++)best.push([w(p,l,h,i,j),j]);best.sort(function(a,b){return b[0]-a[0]||a[1]-b[1];});
 var q=txt(P.querySelectorAll(".tta-q")[i]),m=[];
 for(var n=0;n<Math.min(3,best.length);n++)if(best[n][0])m.push("\u201c"+txt(k[best[n][1]])+"\u201d "+(best[n][0]/N).toFixed(2));
 out.textContent=zh?"\u201c"+q+"\u201d\uff08\u7b2c "+(i+1)+" \u4e2a\u67e5\u8be2\uff09\u5173\u6ce8 "+(m.length?m.join("\u3001"):"\u2014\u2014\u6ca1\u6709\u53ef\u89c1\u7684\u952e\uff08\u5168\u90e8\u88ab\u63a9\u7801\uff09")
 :"\u201c"+q+"\u201d (query "+(i+1)+") attends to "+(m.length?m.join(", "):"no key (all masked)");}
function lightCol(P,j){var p=+P.dataset.p,s=S[p],l=Math.min(st.l,s[0]-1),h=Math.min(st.h,s[1]-1);
 clear(P);var k=P.querySelectorAll(".tta-k")[j];k.classList.add("tta-on");
 var rows=P.querySelectorAll("tr[data-i]"),tot=0;for(var i=0;i<rows.length;i++){
 rows[i].querySelectorAll("td")[j].classList.add("tta-col");tot+=w(p,l,h,i,j);}
 out.textContent=zh?"\u952e \u201c"+txt(k)+"\u201d\uff08\u7b2c "+(j+1)+" \u4e2a\u952e\uff09\u4ece "+s[2]+" \u4e2a\u67e5\u8be2\u5171\u5f97\u5230 "+(tot/N).toFixed(2)+" \u7684\u6743\u91cd"
 :"key \u201c"+txt(k)+"\u201d (key "+(j+1)+") receives "+(tot/N).toFixed(2)+" of the "+s[2]+" queries' weight";}
function on(e){var t=e.target.closest?e.target.closest("th.tta-q,th.tta-k,td"):null;if(!t)return;
 var P=t.closest(".tta-panel");if(!P)return;
 if(t.classList.contains("tta-q"))light(P,+t.dataset.i);
 else if(t.classList.contains("tta-k"))lightCol(P,+t.dataset.j);
 else light(P,+t.parentNode.dataset.i);}
root.addEventListener("mouseover",on);root.addEventListener("focusin",on);
root.addEventListener("click",on);
if(ctl)ctl.addEventListener("change",function(e){var k=e.target.dataset.k;if(k){st[k]=+e.target.value;draw();}});
draw();
"""
