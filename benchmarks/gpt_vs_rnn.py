"""A small GPT against recurrent language models: tokens and architecture, separated.

Chapter 18 first races a GPT on subwords against chapter 2's character RNN. That race mixes
two things: the GPT reads subwords (3.25 characters each), the RNN characters. This script
separates them with a grid of language models of about the same number of parameters, each
trained for the same CPU time on one thread, over several seeds:

* ``gpt-subword``: the chapter's GPT (3 pre-norm blocks, D = 64) on 1,000 byte-pair subwords;
* ``lstm-subword``: an LSTM (chapter 3's cell, run by ``torch.nn.LSTM``, which chapter 3 shows
  computes the same function) on the same subwords;
* ``gpt-char``: the same kind of GPT (3 blocks, D = 72) on characters;
* ``lstm-char``: the LSTM on characters;
* ``rnn-char``: chapter 2's tanh ``CharRNNLM`` (our own time loop in Python) on characters.

All are scored on the same validation captions in bits per character (total nats over the text /
its number of characters / ln 2), so models of subwords and of characters share one scale. Every
model uses the same Adam learning rate, tuned for none of them. Chapter 18 loads the JSON.

    python benchmarks/gpt_vs_rnn.py --seconds 20 --eval-every 10 --seeds 0 1 2 \\
        --json results/gpt/tokens_vs_architecture.json

Each model and seed can also run as a process of its own (``--models gpt-char --seeds 1 --json
gpt-char_1.json`` and so on, side by side), and the records be merged into one afterwards:

    python benchmarks/gpt_vs_rnn.py --merge gpt-subword_0.json ... rnn-char_2.json \\
        --json results/gpt/tokens_vs_architecture.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from common import command_line, environment, write_json
from torch import Tensor, nn

from transformer_tutorial.data import load_multi30k
from transformer_tutorial.gpt import GPT, GPTConfig, bits_per_character, total_nats, train_for
from transformer_tutorial.rnn import CharRNNLM
from transformer_tutorial.sequences import BOS_ID, EOS_ID, Vocab
from transformer_tutorial.tokens import encode, train_tokenizer
from transformer_tutorial.transformer import count_parameters

MODELS = ("gpt-subword", "lstm-subword", "gpt-char", "lstm-char", "rnn-char")


class LSTMLM(nn.Module):
    """Embedding -> one-layer LSTM -> linear to the vocabulary; returns ``(logits, state)``
    like chapter 2's ``CharRNNLM``. The LSTM is ``torch.nn.LSTM``: the cell of chapter 3
    (which equals it), with the time loop in C++ rather than Python."""

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, vocab_size)

    def forward(self, tokens: Tensor) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        states, last = self.lstm(self.embedding(tokens))  # (B, T, H)
        return self.head(states), last  # (B, T, V)


def build(name: str, vocab: int, args: argparse.Namespace) -> nn.Module:
    """One model of the grid, about 210,000 parameters at the default sizes."""
    if name == "rnn-char":
        return CharRNNLM(vocab, embed_dim=32, hidden_size=args.hidden_size)
    if name == "lstm-char":
        return LSTMLM(vocab, embed_dim=32, hidden_size=args.lstm_char_size)
    if name == "lstm-subword":
        return LSTMLM(vocab, embed_dim=args.d_model, hidden_size=args.lstm_subword_size)
    d_model, max_len = (args.d_model, 128) if name == "gpt-subword" else (args.d_model_char, 208)
    config = GPTConfig(
        vocab_size=vocab,
        d_model=d_model,
        num_heads=4,
        num_layers=args.layers,
        d_ff=4 * d_model,
        dropout=0.0,
        max_len=max_len,
    )
    return GPT(config)


def merge(paths: list[str], out: str | None) -> dict:
    """One record from records of the same settings that ran other seeds or other models (as
    separate processes, side by side): their runs together, in the order of ``MODELS`` and of
    the seeds, each process's command and environment kept, CPU time summed, and the wall time
    of the longest."""
    parts = [json.loads(Path(p).read_text()) for p in paths]
    first = parts[0]
    ignore = ("seeds", "models", "json")
    common = {k: v for k, v in first["settings"].items() if k not in ignore}
    for path, part in zip(paths, parts, strict=True):
        if {k: v for k, v in part["settings"].items() if k not in ignore} != common:
            raise SystemExit(f"{path} was made with other settings than {paths[0]}")
    runs = sorted(
        (run for part in parts for run in part["runs"]),
        key=lambda r: (r["seed"], MODELS.index(r["model"])),
    )
    models = {name: info for part in parts for name, info in part["models"].items()}
    result = {
        "command": " & ".join(part["command"] for part in parts),
        "merged_from": [str(p) for p in paths],
        "environment": first["environment"],
        "environments": [part["environment"] for part in parts],
        "wall_seconds": max(part["wall_seconds"] for part in parts),
        "cpu_seconds": round(sum(part["cpu_seconds"] for part in parts), 1),
        "val_captions": first["val_captions"],
        "val_characters": first["val_characters"],
        "settings": {
            **common,
            "seeds": sorted({r["seed"] for r in runs}),
            "models": [m for m in MODELS if m in models],
        },
        "models": {m: models[m] for m in MODELS if m in models},
        "runs": runs,
    }
    write_json(out, result)
    return result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="CPU seconds per model")
    parser.add_argument("--eval-every", type=float, default=10.0, help="CPU seconds")
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--lr", type=float, default=3e-3, help="Adam, the same for every model")
    parser.add_argument("--vocab-size", type=int, default=1000, help="subword vocabulary")
    parser.add_argument("--hidden-size", type=int, default=400, help="the tanh RNN's state")
    parser.add_argument("--lstm-char-size", type=int, default=200, help="LSTM state, characters")
    parser.add_argument("--lstm-subword-size", type=int, default=90, help="LSTM state, subwords")
    parser.add_argument("--d-model", type=int, default=64, help="the subword GPT's width")
    parser.add_argument("--d-model-char", type=int, default=72, help="the character GPT's width")
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--limit", type=int, default=None, help="use the first N captions")
    parser.add_argument("--json", default=None, help="write the results here")
    parser.add_argument("--merge", nargs="+", default=None, help="records to merge, no training")
    args = parser.parse_args(argv)
    if args.merge:
        return merge(args.merge, args.json)
    torch.set_num_threads(1)
    wall_start, cpu_start = time.perf_counter(), time.process_time()

    train = [en for _, en in load_multi30k("train")][: args.limit]
    val = [en for _, en in load_multi30k("val")][: args.limit]
    num_characters = sum(len(s) + 1 for s in val)  # every character and each caption's end

    tokenizer = train_tokenizer(train, vocab_size=args.vocab_size)
    chars = Vocab.build([list(s) for s in train])
    data = {
        "subword": (
            [[BOS_ID, *ids, EOS_ID] for ids in encode(tokenizer, train)],
            [[BOS_ID, *ids, EOS_ID] for ids in encode(tokenizer, val)],
            tokenizer.get_vocab_size(),
        ),
        "char": (
            [chars.encode(list(s), add_bos=True, add_eos=True) for s in train],
            [chars.encode(list(s), add_bos=True, add_eos=True) for s in val],
            len(chars),
        ),
    }

    models, runs = {}, []
    for seed in args.seeds:
        for name in args.models:
            train_seqs, val_seqs, vocab = data[name.split("-")[1]]
            torch.manual_seed(seed)
            model = build(name, vocab, args)
            models[name] = {
                "parameters": count_parameters(model),
                "tokens": name.split("-")[1],
                "vocab_size": vocab,
                "val_tokens": sum(len(s) - 1 for s in val_seqs),
            }
            start = time.perf_counter()
            history = train_for(
                model,
                train_seqs,
                seconds=args.seconds,
                batch_size=64,
                lr=args.lr,
                generator=torch.Generator().manual_seed(seed),
                evaluate=lambda m, v=val_seqs: bits_per_character(total_nats(m, v), num_characters),
                eval_every=args.eval_every,
            )
            runs.append(
                {
                    "model": name,
                    "seed": seed,
                    "wall_seconds": round(time.perf_counter() - start, 1),
                    "history": {
                        "cpu_seconds": [round(s, 2) for s in history["seconds"]],
                        "step": history["step"],
                        "train_nats_per_token": [round(v, 4) for v in history["train"]],
                        "val_bits_per_character": [round(v, 4) for v in history["val"]],
                    },
                }
            )
            print(
                f"seed {seed} {name:>12}: {models[name]['parameters']:,} parameters, "
                f"{history['step'][-1]:4d} steps, val {history['val'][-1]:.3f} bits/char",
                flush=True,
            )
    result = {
        "command": command_line("gpt_vs_rnn", argv),
        "environment": environment(torch.device("cpu")),
        "wall_seconds": round(time.perf_counter() - wall_start, 1),
        "cpu_seconds": round(time.process_time() - cpu_start, 1),
        "val_captions": len(val),
        "val_characters": num_characters,
        "settings": vars(args),
        "models": models,
        "runs": runs,
    }
    write_json(args.json, result)
    return result


if __name__ == "__main__":
    main()
