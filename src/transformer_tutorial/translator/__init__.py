"""The translator application: the commands around the book's model.

The modules one level up are the ones the chapters teach (each generated from its notebook);
this package is the application built from them, and they never import it (a test checks):

``train``
    ``python -m transformer_tutorial.train``: tokenizer, model, chapter 14's ``train_loop`` with
    callbacks for metrics, checkpoints and the time budget, evaluation, the run's records.
``translate``
    ``python -m transformer_tutorial.translate``: a checkpoint, sentences in, translations out.
``options``
    The command line: presets, options, and how ``--resume`` restores a run's own options.
``callbacks``, ``report``
    What a long run adds to the loop (metrics, checkpoints, time budget, validation), and the
    test evaluation with the records it writes.
``checkpoint``
    Atomic, self-contained checkpoints (safetensors weights, config, tokenizer, training state),
    and checkpoint averaging (the mean of the weights of a run's last few checkpoints).
``rundir``
    The run directory: created, locked against a second training, checked before a run starts
    or continues.
``schedule``
    The learning-rate schedules after the warm-up (the paper's inverse square root, or linear
    to the end of the budget).
``dropout``
    Dropout masks drawn four from each 64-bit random number on a CPU (``--dropout-masks``).
``vocab``
    A vocabulary for each language (``--target-vocab-size``): the two tokenizers as one.

Device, precision, processes (``torchrun``) and the provenance of a measured result come from
the support module ``transformer_tutorial.runtime``, which the environment check and the
benchmarks share.

Files in a run directory (chapter 16 and ``benchmarks/quality.py`` read them; keep this list in
sync):

``args.json``
    The resolved arguments (preset values filled in).
``tokenizer.json``
    The tokenizer, trained on the training split only (the source language's, with
    ``--target-vocab-size``).
``target_tokenizer.json``
    With ``--target-vocab-size`` only: the target language's own tokenizer.
``metrics.jsonl``
    One JSON object per line, appended as training goes; ``"kind"`` says which:

    - ``{"kind": "train", "step", "epoch", "loss", "lr", "grad_norm", "tokens", "tokens_per_s",
      "elapsed_s"}`` every ``--log-every`` steps (``loss``: label-smoothed, per target token,
      of that step's global batch on process 0's shard; ``tokens_per_s``: target tokens of all
      processes per second since the previous record);
    - ``{"kind": "val", "step", "epoch", "val_loss", "val_bleu", "elapsed_s"}`` after every epoch
      and for the final model (``epoch``: the passes completed, fractional for a run that ends
      within a pass; ``val_loss``: cross-entropy per target token; ``val_bleu``: sacrebleu BLEU
      of greedy translations of the validation set; ``elapsed_s``: when training paused for
      it);
    - ``{"kind": "test", "step", "test_bleu", "beam_size", "elapsed_s"}`` once at the end.
``checkpoints/``
    ``step-NNNNNN/`` directories and a ``latest`` pointer (see ``checkpoint.py``); the last one
    is the final model, usable with ``python -m transformer_tutorial.translate --checkpoint RUN``.
``results.json``
    ``{"test_bleu", "sacrebleu_signature", "beam_size", "length_penalty", "pair", "test_set",
    "references", "test_sentences", "val_bleu", "val_loss", "steps", "epochs", "train_tokens",
    "wall_time_s",
    "command", "git_commit", "hardware": {"device", "cpu", "cpu_cores", "gpu", "world_size"},
    "torch_version", "precision", "config", "args", "finished_at"}``.
``samples.json``
    ``[{"source", "reference", "hypothesis"}, ...]``: the first ``--samples`` test sentences.
``attention.json``
    ``[{"source", "hypothesis", "source_tokens", "target_tokens",
    "encoder_self_attention", "decoder_cross_attention"}, ...]`` for the first
    ``--attention-samples`` test sentences. ``source_tokens`` are the encoder's input pieces
    (ending in ``<eos>``), ``target_tokens`` the decoder's input (``<bos>`` and the model's own
    beam-search output). ``encoder_self_attention[l][h][i][j]`` is the weight with which source
    position ``i`` attends to source position ``j`` in head ``h`` of encoder layer ``l``;
    ``decoder_cross_attention[l][h][t][j]`` the weight with which target position ``t``
    attends to source position ``j``. Weights are rounded to 4 decimals; each row sums to 1.
"""
