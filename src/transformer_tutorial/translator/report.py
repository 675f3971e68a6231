"""The end of a training run: the test BLEU and the files that record the run.

``results.json`` (the score with its sacreBLEU signature and everything needed to reproduce it),
``samples.json`` (the first test translations) and ``attention.json`` (attention maps of the
first test sentences, from ``Transformer.attention_weights``); see ``translator/__init__.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer

from ..data import LanguagePair
from ..decoding import corpus_bleu, translate
from ..runtime import Runtime, git_commit, hardware
from ..sequences import BOS_ID, EOS_ID
from ..tokens import encode
from ..training import LoopPosition
from ..transformer import Transformer, count_parameters
from .checkpoint import write_text_atomic
from .options import jsonable
from .vocab import TokenizerPair, source_tokenizer, target_tokenizer


@dataclasses.dataclass
class RunSummary:
    """What the training part of a run hands to the report."""

    position: LoopPosition
    epochs: float  # passes over the training set, fractional
    val_bleu: list[float]  # after each pass
    val_loss: float  # of the final model
    start: float  # time.perf_counter() when the run started


def report(
    args: argparse.Namespace,
    rt: Runtime,
    model: Transformer,
    tokenizer: Tokenizer | TokenizerPair,
    pair: LanguagePair,
    test_pairs: list[tuple[str, str]],
    summary: RunSummary,
) -> dict[str, Any]:
    """Translate the test set with beam search, score it, and write the run's records."""
    sources, references = [s for s, _ in test_pairs], [t for _, t in test_pairs]
    with rt.autocast():
        hypotheses = translate(
            model, tokenizer, sources, beam_size=args.beam_size, length_penalty=args.length_penalty
        )
    bleu, signature = score(pair, hypotheses, references)
    wall = time.perf_counter() - summary.start
    examples = list(zip(sources, references, hypotheses, strict=True))
    samples = [{"source": s, "reference": r, "hypothesis": h} for s, r, h in examples]
    write_json(args.run_dir / "samples.json", samples[: args.samples], indent=2)
    maps = [
        attention_record(model, tokenizer, s, h, rt.device)
        for s, _, h in examples[: args.attention_samples]
    ]
    write_json(args.run_dir / "attention.json", maps)
    results = {
        "test_bleu": bleu.score,
        "sacrebleu_signature": signature,
        "bleu_detail": str(bleu),
        "beam_size": args.beam_size,
        "length_penalty": args.length_penalty,
        "pair": pair.name,
        "test_set": pair.test_set,
        "references": f"Unicode {pair.normalization}",
        "test_sentences": len(test_pairs),
        "val_bleu": summary.val_bleu,
        "val_loss": summary.val_loss,
        "steps": summary.position.step,
        "epochs": summary.epochs,
        "train_tokens": summary.position.train_tokens,
        "parameters": count_parameters(model),
        "wall_time_s": wall,
        "command": command_line(rt),
        "git_commit": git_commit(),
        "hardware": hardware(rt.device, rt.world_size),
        "torch_version": torch.__version__,
        "precision": str(rt.amp_dtype or "fp32"),
        "config": dataclasses.asdict(model.config),
        "args": jsonable(args),
        "resumed": bool(args.resume),
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    write_json(args.run_dir / "results.json", results, indent=2)
    print(
        f"test BLEU {bleu.score:.2f} (beam {args.beam_size}, {signature}); {summary.position.step}"
        f" steps in {wall / 60:.1f} min; results in {args.run_dir / 'results.json'}",
        file=sys.stderr,
    )
    return results


def attention_record(
    model: Transformer,
    tokenizer: Tokenizer | TokenizerPair,
    source: str,
    hypothesis: str,
    device: torch.device,
) -> dict[str, Any]:
    """Encoder self-attention and cross-attention of one sentence and its translation."""
    src_tokenizer, tgt_tokenizer = source_tokenizer(tokenizer), target_tokenizer(tokenizer)
    (src_ids,) = encode(src_tokenizer, [source])
    (hyp_ids,) = encode(tgt_tokenizer, [hypothesis])
    max_len = model.config.max_len
    src_ids, tgt_ids = src_ids[: max_len - 1] + [EOS_ID], [BOS_ID] + hyp_ids[: max_len - 1]
    maps = model.attention_weights(
        torch.tensor([src_ids], device=device), torch.tensor([tgt_ids], device=device)
    )

    def rounded(per_block: list[torch.Tensor]) -> list:  # L x (1, H, Tq, Tk) -> (L, H, Tq, Tk)
        return torch.cat(per_block).float().cpu().round(decimals=4).tolist()

    return {
        "source": source,
        "hypothesis": hypothesis,
        "source_tokens": [src_tokenizer.id_to_token(i) for i in src_ids],
        "target_tokens": [tgt_tokenizer.id_to_token(i) for i in tgt_ids],
        "encoder_self_attention": rounded(maps.encoder_self),
        "decoder_cross_attention": rounded(maps.cross),
    }


def score(pair: LanguagePair, hypotheses: list[str], references: list[str]) -> tuple:
    """sacreBLEU of detokenized translations against the raw references (in the tokenizer's
    normal form), with the target language's tokenizer: ``zh`` or ``13a``."""
    references = [pair.reference(r) for r in references]
    return corpus_bleu(hypotheses, references, tokenize=pair.bleu_tokenize)


def command_line(rt: Runtime) -> str:
    """The command that started this run, as a person would type it."""
    module = "-m transformer_tutorial.train"
    launcher = (
        f"torchrun --nproc_per_node={rt.world_size} {module}"
        if rt.distributed
        else (f"python {module}")
    )
    return " ".join([launcher, *map(shlex.quote, sys.argv[1:])])


def write_json(path: Path, data: Any, indent: int | None = None) -> None:
    write_text_atomic(path, json.dumps(data, indent=indent, ensure_ascii=False))
