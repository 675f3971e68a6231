"""Write the "Try the translator" page's assets into a built book: the model of each pair as one
script (weights in fp16, base64), the page's script and its style sheet.

Usage::

    python tools/web_translator.py _build/html                      # the shipped models
    python tools/web_translator.py _build/html --de-en runs/ship-de-en --zh-en runs/ship-zh-en

A checkpoint is a run directory, its checkpoints/ folder or one step-* folder (as the translate
command takes). Without one, the model shipped in the package (src/transformer_tutorial/
pretrained/<pair>/) is used; a pair with neither is left out, and the page says so to its reader.

The files go to ``<html>/_static/translator/`` and, when the Chinese edition is built, to
``<html>/zh/_static/translator/``. They are loaded with ``<script src>`` (a page opened as a file
may not fetch() other files), and only by the translator page, only when the reader first
translates: the book's other pages load none of it. Generated: never committed.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "tools" / "web_translator_assets"  # the hand-written page script and styles
PAIRS = ("de-en", "zh-en")
SOURCE_LANGUAGE = {"de-en": "German", "zh-en": "Chinese"}


def tensor_names(config) -> list[str]:
    """The weights the page's forward pass reads, in the order they are written."""
    names = ["src_embed.embedding.weight", "tgt_embed.embedding.weight"]
    attn = [f"{p}_proj.{w}" for p in "qkvo" for w in ("weight", "bias")]
    attn = [a.replace("o_proj", "out_proj") for a in attn]
    ffn = [f"feed_forward.linear{i}.{w}" for i in (1, 2) for w in ("weight", "bias")]
    for i in range(config.num_encoder_layers):
        pre = f"encoder.layers.{i}."
        names += [pre + "self_attn." + a for a in attn] + [pre + f for f in ffn]
        names += [pre + f"norm{n}.{w}" for n in (1, 2) for w in ("weight", "bias")]
    for i in range(config.num_decoder_layers):
        pre = f"decoder.layers.{i}."
        names += [pre + k + "." + a for k in ("self_attn", "cross_attn") for a in attn]
        names += [pre + f for f in ffn]
        names += [pre + f"norm{n}.{w}" for n in (1, 2, 3) for w in ("weight", "bias")]
    if config.norm_first:
        names += [f"{s}.norm.{w}" for s in ("encoder", "decoder") for w in ("weight", "bias")]
    if not config.tie_output:
        names.append("output.weight")
    return names


def supported(config) -> str | None:
    """Why the page cannot run this model, or None when it can."""
    if config.learned_positions:
        return "learned positions (the page computes sinusoidal ones)"
    if config.share_embeddings:
        return "a shared vocabulary (the page reads a source and a target tokenizer)"
    return None


def tokenizer_data(path: Path) -> dict:
    """What the page's tokenizer port needs from a tokenizer.json: the vocabulary by id, the
    merges, and a check that the pipeline is the one it implements."""
    t = json.loads(path.read_text(encoding="utf-8"))
    model, pre = t["model"], t.get("pre_tokenizer") or {}
    steps = [p.get("type") for p in pre.get("pretokenizers", [pre])]
    ok = (
        model["type"] == "BPE"
        and not model.get("continuing_subword_prefix")
        and not model.get("end_of_word_suffix")
        and not model.get("byte_fallback")
        and not model.get("fuse_unk")
        and model.get("dropout") is None
        and (t.get("normalizer") or {}).get("type") in ("NFC", "NFKC")
        and steps == ["Metaspace", "Punctuation"]
        and (t.get("decoder") or {}).get("type") == "Metaspace"
    )
    if not ok:
        raise SystemExit(f"error: {path} uses a tokenizer pipeline the page does not implement.")
    vocab = [""] * len(model["vocab"])
    for token, i in model["vocab"].items():
        vocab[i] = token
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    return {
        "normalizer": t["normalizer"]["type"],
        "vocab": vocab,
        "merges": merges,
        "special": [a["content"] for a in t["added_tokens"] if a.get("special")],
        "unk": model["unk_token"],
    }


def model_script(pair: str, checkpoint: Path) -> tuple[str, dict]:
    """The script that defines one pair's model for the page, and what it was made from."""
    import torch

    from transformer_tutorial.translator.checkpoint import load_checkpoint, resolve_checkpoint

    ckpt = resolve_checkpoint(checkpoint)
    model, config, tokenizer, meta = load_checkpoint(ckpt)
    reason = supported(config)
    if reason:
        raise SystemExit(f"error: {ckpt} has {reason}; the page cannot run it.")
    target_file = ckpt / "target_tokenizer.json"
    source = tokenizer_data(ckpt / "tokenizer.json")
    target = tokenizer_data(target_file if target_file.is_file() else ckpt / "tokenizer.json")
    state = model.state_dict()
    index, chunks, offset = {}, [], 0
    for name in tensor_names(config):
        t = state[name].detach().to(torch.float16).contiguous()
        raw = t.numpy().astype("<f2").tobytes()
        index[name] = [offset // 2, list(t.shape)]
        chunks.append(raw)
        offset += len(raw)
    length_penalty = meta.get("length_penalty", 0.6)
    info = {
        "pair": pair,
        "checkpoint": str(ckpt),
        "step": meta.get("step"),
        "length_penalty": length_penalty,
        "weights": "fp16",
        "max_len": config.max_len,
        "parameters": sum(int(v.numel()) for k, v in state.items() if k in index),
    }
    data = {
        "info": info,
        "config": {
            "d_model": config.d_model,
            "num_heads": config.num_heads,
            "num_encoder_layers": config.num_encoder_layers,
            "num_decoder_layers": config.num_decoder_layers,
            "d_ff": config.d_ff,
            "max_len": config.max_len,
            "norm_first": config.norm_first,
            "tie_output": config.tie_output,
            "pad_id": config.pad_id,
            "src_vocab_size": config.src_vocab_size,
            "tgt_vocab_size": config.tgt_vocab_size,
        },
        "source": source,
        "target": {k: target[k] for k in ("vocab", "special")},
        "tensors": index,
    }
    # ASCII only, and nothing that could end the script element early.
    head = json.dumps(data, ensure_ascii=True, separators=(",", ":")).replace("</", "<\\/")
    weights = base64.b64encode(b"".join(chunks)).decode("ascii")
    script = (
        "(window.TT_MODELS=window.TT_MODELS||{})[" + json.dumps(pair) + "]="
        f'{head[:-1]},"weights":"{weights}"}};\n'
    )
    return script, info


def find_checkpoint(pair: str, given: str | None) -> Path | None:
    if given:
        return Path(given)
    shipped = ROOT / "src" / "transformer_tutorial" / "pretrained" / pair
    return shipped if (shipped / "model.safetensors").is_file() else None


def explore_css() -> str:
    """The attention view's style sheet, as transformer_tutorial.explore writes it."""
    from transformer_tutorial import explore

    return re.sub(r"</?style>", "", explore._CSS)


def write_assets(html: Path, checkpoints: dict[str, Path | None]) -> dict:
    """Write every asset into ``html`` (and its Chinese edition); return the manifest."""
    scripts, manifest = {}, {"models": {}, "missing": []}
    for pair, ckpt in checkpoints.items():
        if ckpt is None:
            manifest["missing"].append(pair)
            continue
        scripts[pair], manifest["models"][pair] = model_script(pair, ckpt)
    css = explore_css() + "\n" + (ASSETS / "translator.css").read_text(encoding="utf-8")
    js = (ASSETS / "translator.js").read_text(encoding="utf-8")
    avail = json.dumps(sorted(scripts))
    js = js.replace("/*AVAILABLE*/[]", avail)
    targets = [html] + ([html / "zh"] if (html / "zh").is_dir() else [])
    for root in targets:
        out = root / "_static" / "translator"
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        for pair, script in scripts.items():
            (out / f"{pair}.js").write_text(script, encoding="ascii")
            manifest["models"][pair]["bytes"] = len(script)
        (out / "page.js").write_text(js, encoding="utf-8")
        (out / "page.css").write_text(css, encoding="utf-8")
        (out / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return manifest


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("html", type=Path, help="the built book, e.g. _build/html")
    for pair in PAIRS:
        p.add_argument(f"--{pair}", dest=pair.replace("-", "_"), metavar="CHECKPOINT",
                       help=f"the {pair} checkpoint (default: the shipped model)")  # fmt: skip
    args = p.parse_args(argv)
    if not args.html.is_dir():
        print(f"error: {args.html} is not a built book; run `make book` first.", file=sys.stderr)
        return 2
    checkpoints = {
        pair: find_checkpoint(pair, getattr(args, pair.replace("-", "_"))) for pair in PAIRS
    }
    manifest = write_assets(args.html, checkpoints)
    for pair, info in manifest["models"].items():
        print(f"translator page: {pair} from {info['checkpoint']} ({info['bytes'] / 1e6:.1f} MB)")
    for pair in manifest["missing"]:
        print(
            f"translator page: no {pair} model. Ship one (src/transformer_tutorial/pretrained/"
            f"{pair}/) or give a checkpoint: python tools/web_translator.py {args.html} "
            f"--{pair} runs/<run>; the page tells its readers that {pair} is not in this build."
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())


def reference_greedy(
    checkpoint: str | Path, sentences: list[str], beam_size: int = 1
) -> tuple[list[list[int]], list[str]]:
    """What the Python translator writes for ``sentences`` with greedy search (or beam search
    with ``beam_size`` beams and the checkpoint's length penalty), on the weights
    rounded to fp16 as the page reads them: the output ids (up to EOS, included) and the texts.
    For an fp16 checkpoint (the shipped models) this is exactly
    ``python -m transformer_tutorial.translate --checkpoint <checkpoint>``."""
    import torch

    from transformer_tutorial.decoding import beam_search, greedy_decode
    from transformer_tutorial.sequences import BOS_ID, EOS_ID, pad_sequences
    from transformer_tutorial.tokens import decode, encode
    from transformer_tutorial.translator.checkpoint import load_checkpoint

    model, config, tokenizer, meta = load_checkpoint(checkpoint)
    alpha = meta.get("length_penalty", 0.6)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.half().float())
    ids = [s[: config.max_len - 1] + [EOS_ID] for s in encode(tokenizer, sentences)]
    out = []
    for start in range(0, len(ids), 64):
        src, _ = pad_sequences(ids[start : start + 64], pad_value=config.pad_id)
        if beam_size == 1:
            hyp = greedy_decode(model, src, None, BOS_ID, EOS_ID)
        else:
            hyp = beam_search(
                model, src, beam_size, bos_id=BOS_ID, eos_id=EOS_ID, length_penalty=alpha
            )
        for row in hyp.tolist():
            # up to EOS; a sentence that reached its limit has padding after it (never a token)
            out.append(
                row[: row.index(EOS_ID) + 1]
                if EOS_ID in row
                else [t for t in row if t != config.pad_id]
            )
    return out, [decode(tokenizer, row) for row in out]
