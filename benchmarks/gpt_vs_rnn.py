"""A small GPT against chapter 2's character RNN: bits per character on Multi30k English val.

Both language models get about the same number of parameters and the same CPU time on one
thread; both are scored on the same validation captions in bits per character (total nats over
the text / its number of characters / ln 2), so that a model of subwords and a model of
characters are measured on one scale. Chapter 18 loads the JSON and plots it.

    python benchmarks/gpt_vs_rnn.py --seconds 240 --json results/gpt/gpt_vs_rnn.json
"""

from __future__ import annotations

import argparse
import time

import torch
from common import command_line, environment, write_json

from transformer_tutorial.data import load_multi30k
from transformer_tutorial.gpt import (
    GPT,
    GPTConfig,
    bits_per_character,
    total_nats,
    train_for,
)
from transformer_tutorial.rnn import CharRNNLM
from transformer_tutorial.sequences import BOS_ID, EOS_ID, Vocab
from transformer_tutorial.tokens import encode, train_tokenizer
from transformer_tutorial.transformer import count_parameters


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=240.0, help="CPU seconds per model")
    parser.add_argument("--eval-every", type=float, default=20.0, help="CPU seconds")
    parser.add_argument("--vocab-size", type=int, default=1000, help="subword vocabulary")
    parser.add_argument("--hidden-size", type=int, default=400, help="the RNN's state")
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None, help="use the first N captions")
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    wall_start = time.perf_counter()

    train = [en for _, en in load_multi30k("train")][: args.limit]
    val = [en for _, en in load_multi30k("val")][: args.limit]
    num_characters = sum(len(s) + 1 for s in val)  # every character and each caption's end

    tokenizer = train_tokenizer(train, vocab_size=args.vocab_size)
    gpt_train = [[BOS_ID, *ids, EOS_ID] for ids in encode(tokenizer, train)]
    gpt_val = [[BOS_ID, *ids, EOS_ID] for ids in encode(tokenizer, val)]
    chars = Vocab.build([list(s) for s in train])
    rnn_train = [chars.encode(list(s), add_bos=True, add_eos=True) for s in train]
    rnn_val = [chars.encode(list(s), add_bos=True, add_eos=True) for s in val]

    torch.manual_seed(args.seed)
    gpt = GPT(
        GPTConfig(
            vocab_size=tokenizer.get_vocab_size(),
            d_model=args.d_model,
            num_heads=4,
            num_layers=args.layers,
            d_ff=4 * args.d_model,
            dropout=0.0,
            max_len=128,
        )
    )
    torch.manual_seed(args.seed)
    rnn = CharRNNLM(len(chars), embed_dim=32, hidden_size=args.hidden_size)

    models = {
        "gpt": (gpt, gpt_train, gpt_val, 1e-3 * 3),
        "rnn": (rnn, rnn_train, rnn_val, 3e-3),
    }
    runs = {}
    for name, (model, train_seqs, val_seqs, lr) in models.items():
        start = time.perf_counter()
        history = train_for(
            model,
            train_seqs,
            seconds=args.seconds,
            batch_size=64,
            lr=lr,
            generator=torch.Generator().manual_seed(args.seed),
            evaluate=lambda m, v=val_seqs: bits_per_character(total_nats(m, v), num_characters),
            eval_every=args.eval_every,
        )
        runs[name] = {
            "parameters": count_parameters(model),
            "lr": lr,
            "val_tokens": sum(len(s) - 1 for s in val_seqs),
            "wall_seconds": round(time.perf_counter() - start, 1),
            "history": {
                "cpu_seconds": [round(s, 2) for s in history["seconds"]],
                "step": history["step"],
                "train_nats_per_token": [round(v, 4) for v in history["train"]],
                "val_bits_per_character": [round(v, 4) for v in history["val"]],
            },
        }
        print(
            f"{name}: {runs[name]['parameters']:,} parameters, {history['step'][-1]} steps, "
            f"val {history['val'][-1]:.3f} bits/char"
        )
    result = {
        "command": command_line("gpt_vs_rnn", argv),
        "environment": environment(torch.device("cpu")),
        "wall_seconds": round(time.perf_counter() - wall_start, 1),
        "val_captions": len(val),
        "val_characters": num_characters,
        "settings": vars(args),
        "runs": runs,
    }
    write_json(args.json, result)
    return result


if __name__ == "__main__":
    main()
