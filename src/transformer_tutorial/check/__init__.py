"""Check your own implementation of a building block against the book's reference.

Write the block yourself, then call its check with your function::

    from transformer_tutorial.check import check_attention
    check_attention(my_attention)

The check calls your code (it never reads or runs its text) on random inputs and on inputs
built to expose the usual mistakes, compares values and gradients with the reference the book
itself is tested against, and prints a short verdict. When something is wrong it names the
first problem in the book's terms, with the shapes and a small input that shows it.

Blocks covered so far, each with the signature the book uses:

* ``check_masked_softmax(fn)`` -- ``fn(scores, mask) -> weights`` (chapter 6);
* ``check_attention(fn)`` -- ``fn(q, k, v, mask=None) -> (out, weights)`` (chapter 6);
* ``check_causal_mask(fn)`` -- ``fn(T) -> (T, T)`` bool, True = may attend (chapter 12);
* ``check_sinusoidal_encoding(fn)`` -- ``fn(max_len, d_model) -> (max_len, d_model)`` (chapter 10);
* ``check_layer_norm(fn)`` -- ``fn(x) -> y``, normalising each position of ``(B, T, D)`` over
  its ``D`` features, no learned gain or bias (chapter 11);
* ``check_multihead(cls)`` -- ``cls(d_model, num_heads)`` with the linear layers ``q_proj``,
  ``k_proj``, ``v_proj``, ``out_proj``, called as ``m(query, key, value, mask=None)`` and
  returning ``out`` or ``(out, weights)`` (chapter 9);
* ``check_lstm_cell(cls)`` -- ``cls(input_size, hidden_size)`` with ``in_proj`` (input to the
  four gate blocks i, f, g, o, with the bias) and ``state_proj`` (no bias), called as
  ``cell(x, (h, c)) -> (h, c)`` (chapter 3);
* ``check_rnn_cell(cls)`` -- ``cls(input_size, hidden_size)`` with ``in_proj`` (with the bias)
  and ``state_proj`` (no bias), called as ``cell(x, s_prev) -> s`` (chapter 2);
* ``check_feed_forward(cls)`` -- ``cls(d_model, d_ff)`` with ``linear1`` (D -> d_ff) and
  ``linear2`` (d_ff -> D), called on ``(B, T, D)`` (chapter 11);
* ``check_additive_attention(cls)`` -- ``cls(query_dim, key_dim, hidden_dim)`` with ``W_q``,
  ``W_k`` (no bias) and ``w_v`` (hidden -> 1), called as ``m(queries, keys, values, mask=None)
  -> (out, weights)`` (chapter 6);
* ``check_label_smoothing(cls)`` -- ``cls(smoothing)``, called as ``loss(logits, target)`` with
  logits ``(B, T, V)`` and targets ``(B, T)`` padded with ``PAD_ID``: the mean over the real
  target tokens of the cross-entropy against ``(1 - ε)`` on the right token plus ``ε / V`` on
  every token, as ``nn.CrossEntropyLoss(label_smoothing=ε)`` computes it (chapter 14);
* ``check_encoder_layer(cls)`` -- ``cls(d_model, num_heads, d_ff, dropout=0.0,
  norm_first=False)`` with ``self_attn`` (a multi-head attention with ``q_proj``, ``k_proj``,
  ``v_proj``, ``out_proj``), ``feed_forward`` (``linear1``, ``linear2``), ``norm1`` and
  ``norm2``, called as ``layer(x, src_mask) -> (B, S, D)``, ``src_mask`` ``(B, 1, 1, S)``
  True = a real token; checked post-norm and pre-norm (chapter 13);
* ``check_decoder_layer(cls)`` -- the same arguments, with ``self_attn``, ``cross_attn``,
  ``feed_forward``, ``norm1``, ``norm2``, ``norm3``, called as ``layer(x, memory, tgt_mask,
  src_mask) -> (B, T, D)``, ``tgt_mask`` ``(B, 1, T, T)`` causal and target padding (chapter 13);
* ``check_greedy_decode(fn)`` -- ``fn(model, src, max_len, bos_id, eos_id) -> (B, T')``: the
  generated tokens of each sentence, without BOS, EOS kept, PAD after a sentence's end; the
  check passes four small random ``Transformer`` models, and each sentence alone (chapter 15);
* ``check_beam_search(fn)`` -- ``fn(model, src, beam_size, max_len, bos_id=..., eos_id=...,
  length_penalty=0.6) -> (B, T')``, the best hypothesis of each sentence in the same form, on
  the same four models with beam sizes 1 to 4 and length penalties 0.6 to 2.0; a wrong output
  is matched against the outputs of the usual beam-search mistakes to name the one made
  (chapter 15);
* ``check_kv_cache(cls)`` -- ``cls()`` an empty key/value cache of one decoder block, as the
  book's ``LayerCache``: ``cache.append_self(k, v)`` takes the keys and values of the new
  positions, ``(B, H, T_new, Dh)`` each, and returns those of every position so far,
  ``(B, H, T_past + T_new, Dh)`` each; ``cache.reorder(index)`` keeps the batch rows ``index``
  (a 1-D long tensor, rows may repeat: beam search continues one hypothesis in several rows).
  The check calls the two methods on their own (two caches must not share a history), then
  puts one cache in each block of the book's decoder and compares every step's logits with
  recomputing the whole prefix (chapters 13 and 15).
* ``check_mask_tokens(fn)`` -- ``fn(tokens, vocab, generator=None, select_prob=0.15,
  mask_prob=0.8, random_prob=0.1) -> (inputs, labels)``, BERT's masking rule: 15 % of the real
  tokens chosen (never ``[CLS]``, ``[SEP]`` or padding), 80 / 10 / 10 of them ``[MASK]`` / a
  random ordinary token / unchanged, labels the original token where chosen and ``IGNORE_INDEX``
  elsewhere (chapter 17);

* ``check_average_checkpoints(fn)`` -- ``fn(state_dicts) -> state_dict``: the mean of each
  floating-point weight over a list of state dicts, in its own dtype; an integer buffer kept as
  the newest has it; new tensors, the inputs untouched (chapter 16).
* ``check_banded_attention(fn)`` -- ``fn(q, k, v, window, causal=False, key_padding=None)
  -> out``, q, k ``(B, H, T, Dh)``, v ``(B, H, T, Dv)``: each frame t attends to the keys
  ``|t - s| <= window`` (``s <= t`` when causal), padding frames never seen; equal to full
  attention under ``band_mask(T, window, causal) & key_padding`` (chapter 20).
* ``check_top_p(fn)`` -- ``fn(logits, p) -> filtered``, logits ``(..., V)``: the nucleus (the
  smallest set of most likely tokens whose probability reaches ``p``, so the token that crosses
  ``p`` is in it and a mass of exactly ``p`` ends it) keeps its logits, every other token gets
  -inf, in the vocabulary's order (chapter 18);
* ``check_patch_embedding(cls)`` -- ``cls(in_channels, patch_size, d_model)`` with ``proj``
  (``nn.Linear(C·P·P, D)`` on each patch flattened channel-first, or ``nn.Conv2d(C, D, P,
  stride=P)``), images ``(B, C, H, W)`` -> ``(B, N, D)``, patches in row-major order: equal to
  a strided ``Conv2d`` with the same weights (chapter 19);
* ``check_hungarian_matching(fn)`` -- ``fn(logits, boxes, target_labels, target_boxes) ->
  (query_index, target_index)`` for one image: the one-to-one assignment of the M objects to M
  of the Q queries of least total cost ``-p_query(class) + 5 * L1(boxes)``, as
  ``scipy.optimize.linear_sum_assignment`` finds it; permuting the queries permutes it
  (chapter 19);
* ``check_pad_sequences(fn)`` -- ``fn(seqs, pad_value=0) -> (padded, lengths)``: lists of token
  ids right-padded into a ``(B, T)`` long batch, batch first, as wide as the longest, and their
  real lengths ``(B,)`` (chapter 1).
* ``check_padding_mask(fn)`` -- ``fn(lengths, max_len=None) -> (B, T)`` bool, True at a real
  token, False on padding (chapter 1).
* ``check_teacher_forcing_loss(fn)`` -- ``fn(model, src, src_lengths, tgt_out) -> loss``: the
  training loss of chapter 4's ``Seq2Seq``, the decoder fed ``<bos>`` and the gold targets
  shifted right from the encoder's final state, the mean over the real target tokens (chapter 4).
* ``check_bahdanau_step(fn)`` -- ``fn(decoder, prev, state, memory, src_mask) -> (logits, state,
  weights)``: one step of ``BahdanauDecoder``, the previous state as the query, padding weighted
  0, ``[y_{t-1}; c_t]`` into the recurrent layer, logits from ``[s'_t; c_t]`` (chapter 7).
* ``check_nadaraya_watson(fn)`` -- ``fn(queries, keys, values, width=1.0) -> (predictions,
  weights)``: the Gaussian score ``-(q - k)^2 / (2 width^2)``, its softmax over the keys, the
  weighted sum of the values; keys ``(T_k,)`` shared or ``(T_q, T_k)`` one row per query
  (chapter 5).
* ``check_self_attention(cls)`` -- ``cls(d_in, d_k, d_v=None)`` with the matrices ``W_q``,
  ``W_k`` ``(d_in, d_k)`` and ``W_v`` ``(d_in, d_v)`` (or bias-free linear layers), called as
  ``layer(x, mask=None) -> (out, weights)``: ``softmax(Q K^T / sqrt(d_k)) V`` over ``(B, T,
  d_in)``, mask True = may attend (chapter 8).

Every check returns a ``Verdict`` (``ok``, ``block``, ``message``, and ``mistake``: the id of
the mistake it names, or None when it names none) as well as printing it. ``set_language("zh_CN")``
(or ``TRANSFORMER_TUTORIAL_LANGUAGE=zh_CN``) makes the verdicts Chinese.

Every check runs on one engine, ``engine``: its ``@check`` decorator declares the call the book
documents (``call="fn(q, k, v, mask=None)"``; for a class, ``build="cls(d_model, d_ff)"`` and the
``methods`` the check calls), makes sure the argument fits that call before any probe runs (a
function, a class or an instance; the arguments its signature takes), runs the check's probes,
and turns whatever they raise into one verdict: a mistake the reader made, a slip in how their
code fits the call (said with the call and their signature), their code raising (with its line),
and -- only for an exception whose cause is inside ``check/`` -- the checker's own bug.

The checks live in one family module per group of blocks (listed in ``families.FAMILIES``:
``recurrent``, ``seq2seq``, ``bahdanau``, ``attention``, ``multihead``, ``layers``,
``layer_norm``, ``blocks``, ``decoding``, ``beam_search``, ``kv_cache``, and one for each family
the later chapters add). A family declares the mistakes
its checks can name as message templates keyed by id (``MISTAKES``; an id is the name of the
mistake's entry in the tests' catalogue, ``tests/check/mistakes/``) and its other sentences the
same way (``MESSAGES``); the Chinese catalog translates the templates. What the families share:
``tensors`` (calling and comparing tensors), ``diagnoses`` (masking and loss normalisation,
diagnosed once for every check whose block contains them) and ``verdict`` (``Verdict``, ``Wrong``
and ``say``, which looks a message up by id, translated). Some checks still raise literal
English messages that are in no table yet, so those are not translated. This package re-exports
every check.
"""

from .attention import check_additive_attention, check_attention, check_masked_softmax
from .beam_search import check_beam_search
from .blocks import check_decoder_layer, check_encoder_layer
from .decoding import check_greedy_decode
from .kv_cache import check_kv_cache
from .layer_norm import check_layer_norm
from .layers import check_causal_mask, check_feed_forward, check_sinusoidal_encoding
from .multihead import check_multihead
from .recurrent import check_lstm_cell, check_rnn_cell
from .smoothing import check_label_smoothing
from .verdict import POLARITY, Verdict, Wrong, set_language, wrap_verdict

# isort: split
# The checks of later chapters: one line per family module (keep the lines sorted).
from .bahdanau import check_bahdanau_step
from .bert import check_mask_tokens
from .gpt import check_top_p
from .long_sequences import check_banded_attention

# (new families are added here)
from .pooling import check_nadaraya_watson
from .self_attention import check_self_attention
from .seq2seq import check_teacher_forcing_loss
from .sequences import check_pad_sequences, check_padding_mask
from .translator import check_average_checkpoints
from .vision import check_hungarian_matching, check_patch_embedding

__all__ = [
    "POLARITY",
    "Verdict",
    "Wrong",
    "wrap_verdict",
    "set_language",
    "check_additive_attention",
    "check_attention",
    "check_beam_search",
    "check_causal_mask",
    "check_decoder_layer",
    "check_encoder_layer",
    "check_feed_forward",
    "check_greedy_decode",
    "check_kv_cache",
    "check_label_smoothing",
    "check_layer_norm",
    "check_lstm_cell",
    "check_masked_softmax",
    "check_multihead",
    "check_rnn_cell",
    "check_sinusoidal_encoding",
    # the checks of later chapters (keep sorted within this block)
    "check_average_checkpoints",
    "check_bahdanau_step",
    "check_banded_attention",
    "check_hungarian_matching",
    "check_mask_tokens",
    "check_nadaraya_watson",
    "check_pad_sequences",
    "check_padding_mask",
    "check_patch_embedding",
    "check_self_attention",
    "check_teacher_forcing_loss",
    "check_top_p",
]
