"""Chapter 17's experiment: what masked-language-model pre-training buys a small BERT.

Pre-trains one small BERT (``transformer_tutorial.bert``) on the English captions of the Multi30k
training split, then fine-tunes it, and a fresh model of the same shape, on the word-order task
(is a caption intact, or were its inner words shuffled?) with several seeds, and records the
accuracy on the validation and the test split. The learning rates and step counts were chosen on
the validation split; the test split is only reported.

    python benchmarks/bert_finetune.py --json results/bert/finetune.json
    python benchmarks/bert_finetune.py --pretrain-steps 200 \
        --save-pretrained results/bert/pretrain_200.safetensors \
        --json results/bert/pretrain_200.json

The second run is the chapter's live pre-training (200 steps) followed by the recorded
fine-tuning, so that the two records differ in the length of pre-training only. Each records
the validation loss over all chosen positions and where [MASK] is shown (a model cannot copy the
token it sees there), with the unigram loss of the same positions.

Runs on one CPU thread (``--threads``); a few minutes on a quiet core. The defaults are the
recorded run's settings.
"""

from __future__ import annotations

import argparse
import copy
import math
import random
import time
from collections import Counter

import torch
from common import command_line, environment, markdown_table, write_json
from safetensors.torch import load_model, save_model

from transformer_tutorial.bert import (
    Bert,
    BertConfig,
    accuracy,
    add_bert_tokens,
    bert_inputs,
    finetune,
    mlm_eval_loss,
    mlm_eval_losses,
    pretrain_mlm,
    shuffle_words,
    swap_neighbours,
    word_order_examples,
)
from transformer_tutorial.data import load_multi30k
from transformer_tutorial.reproducibility import seed_everything
from transformer_tutorial.tokens import train_tokenizer


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--vocab-size", type=int, default=2000, help="BPE vocabulary (before [CLS] ...)")
    p.add_argument("--pretrain-steps", type=int, default=600, help="MLM steps of 128 sentences")
    p.add_argument("--pretrain-lr", type=float, default=3e-3)
    p.add_argument("--finetune-steps", type=int, default=400, help="steps of 32 examples")
    p.add_argument("--finetune-lr", type=float, default=1e-3)
    p.add_argument("--labelled", type=int, nargs="+", default=[2000], help="labelled captions")
    p.add_argument(
        "--task",
        choices=["shuffle", "swap"],
        default="shuffle",
        help="label 1: inner words shuffled, or two neighbouring words swapped (harder)",
    )
    p.add_argument("--mask-prob", type=float, default=0.8, help="chosen tokens put to [MASK]")
    p.add_argument("--random-prob", type=float, default=0.1, help="chosen tokens made random")
    p.add_argument("--seeds", type=int, default=5, help="fine-tuning seeds per start and size")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--json", default=None, help="write the results here")
    p.add_argument(
        "--save-pretrained", default=None, help="save the pre-trained weights here (safetensors)"
    )
    p.add_argument("--load-pretrained", default=None, help="skip pre-training; load these")
    return p.parse_args(argv)


def unigram_loss(
    train_ids: list[list[int]],
    val_ids: list[list[int]],
    vocab,
    seed: int = 0,
    at_mask_only: bool = False,
) -> float:
    """Cross-entropy of the add-one unigram distribution at the validation positions that
    ``mlm_eval_loss`` hides (the same seed): the loss of a model that ignores the context.
    With ``at_mask_only``, at the hidden positions that show [MASK] only, where a model cannot
    copy the token it sees."""
    from transformer_tutorial.bert import IGNORE_INDEX, mask_tokens
    from transformer_tutorial.sequences import pad_sequences

    counts = Counter(i for s in train_ids for i in s[1:-1])
    total = sum(counts.values())
    batch, _ = pad_sequences(val_ids, vocab.pad_id)
    inputs, labels = mask_tokens(batch, vocab, torch.Generator().manual_seed(seed))
    asked = labels != IGNORE_INDEX
    if at_mask_only:
        asked &= inputs == vocab.mask_id
    targets = labels[asked].tolist()
    return -sum(math.log((counts[t] + 1) / (total + vocab.vocab_size)) for t in targets) / len(
        targets
    )


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    start_time = time.perf_counter()
    seed_everything(0, threads=args.threads)
    train_en = [en for _, en in load_multi30k("train")]
    val_en = [en for _, en in load_multi30k("val")]
    test_en = [en for _, en in load_multi30k("test")]
    tokenizer = train_tokenizer(train_en, vocab_size=args.vocab_size)
    vocab = add_bert_tokens(tokenizer)
    train_ids = bert_inputs(tokenizer, vocab, train_en)
    val_ids = bert_inputs(tokenizer, vocab, val_en)

    seed_everything(0)
    pretrained = Bert(BertConfig(vocab_size=vocab.vocab_size))
    curve = []

    def log(step: int, loss: float) -> None:
        if (step + 1) % 100 == 0 or step + 1 == args.pretrain_steps:
            val = mlm_eval_loss(pretrained, val_ids, vocab)
            at_mask = mlm_eval_losses(pretrained, val_ids, vocab)["[MASK]"].mean().item()
            curve.append(
                {"step": step + 1, "train_loss": loss, "val_loss": val, "val_loss_at_mask": at_mask}
            )
            print(
                f"pre-training step {step + 1}: train {loss:.3f}, validation {val:.3f} "
                f"({at_mask:.3f} where [MASK] is shown)",
                flush=True,
            )

    before = mlm_eval_loss(pretrained, val_ids, vocab)
    if args.load_pretrained:
        load_model(pretrained, args.load_pretrained)  # restores the tie as well
        val = mlm_eval_loss(pretrained, val_ids, vocab)
        at_mask = mlm_eval_losses(pretrained, val_ids, vocab)["[MASK]"].mean().item()
        curve.append({"step": None, "val_loss": val, "val_loss_at_mask": at_mask})
    else:
        pretrain_mlm(
            pretrained,
            train_ids,
            vocab,
            steps=args.pretrain_steps,
            lr=args.pretrain_lr,
            on_step=log,
            mask_prob=args.mask_prob,
            random_prob=args.random_prob,
        )
    if args.save_pretrained:
        # The output head's matrix *is* the embedding's (tied): save_model stores it once.
        save_model(pretrained, args.save_pretrained)
    pretrain_seconds = time.perf_counter() - start_time

    def as_ids(examples):
        ids = bert_inputs(tokenizer, vocab, [text for text, _ in examples])
        return [(i, y) for i, (_, y) in zip(ids, examples, strict=True)]

    order = list(range(len(train_en)))
    random.Random(0).shuffle(order)
    corrupt = {"shuffle": shuffle_words, "swap": swap_neighbours}[args.task]
    val_set = as_ids(word_order_examples(val_en, seed=1, corrupt=corrupt))
    test_set = as_ids(word_order_examples(test_en, seed=2, corrupt=corrupt))
    results = []
    for n in args.labelled:
        labelled = [train_en[i] for i in order[:n]]
        train_set = as_ids(word_order_examples(labelled, seed=0, corrupt=corrupt))
        for start in ("pre-trained", "from scratch"):
            row = {
                "labelled": n,
                "start": start,
                "seeds": [],
                "val_accuracy": [],
                "test_accuracy": [],
            }
            for seed in range(1, args.seeds + 1):
                seed_everything(seed)
                model = (
                    copy.deepcopy(pretrained) if start == "pre-trained" else Bert(pretrained.config)
                )
                finetune(
                    model, train_set, steps=args.finetune_steps, lr=args.finetune_lr, seed=seed
                )
                row["seeds"].append(seed)
                row["val_accuracy"].append(round(accuracy(model, val_set), 4))
                row["test_accuracy"].append(round(accuracy(model, test_set), 4))
                print(
                    f"{n} labelled, {start}, seed {seed}: validation "
                    f"{row['val_accuracy'][-1]:.3f}, test {row['test_accuracy'][-1]:.3f}",
                    flush=True,
                )
            results.append(row)

    table = [
        [
            r["labelled"],
            r["start"],
            f"{sum(r['test_accuracy']) / len(r['test_accuracy']):.3f}",
            f"{min(r['test_accuracy']):.3f}-{max(r['test_accuracy']):.3f}",
        ]
        for r in results
    ]
    print(markdown_table(["labelled", "start", "test accuracy (mean)", "range"], table))
    payload = {
        "command": command_line("bert_finetune", argv),
        "environment": environment(torch.device("cpu")),
        "wall_seconds": round(time.perf_counter() - start_time, 1),
        "pretrain_seconds": round(pretrain_seconds, 1),
        "settings": {k: v for k, v in vars(args).items() if k != "json"},
        "model": {
            "config": vars(pretrained.config),
            "parameters": sum(p.numel() for p in pretrained.parameters()),
        },
        "pretraining": {
            "val_loss_before": before,
            "unigram_val_loss": unigram_loss(train_ids, val_ids, vocab),
            "unigram_val_loss_at_mask": unigram_loss(train_ids, val_ids, vocab, at_mask_only=True),
            "curve": curve,
        },
        "results": results,
    }
    write_json(args.json, payload)
    return payload


if __name__ == "__main__":
    main()
