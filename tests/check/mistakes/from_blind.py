"""Mistakes first met in the blind sets (tests/check/blind/), each the example of the mistake id the
checker learnt to name from it: the blind sets join the catalogue, as their own cases, so that the
code a learner wrote (not a rewrite of it) is what must be named."""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial import check
from transformer_tutorial.seq2seq import last_hidden
from transformer_tutorial.sequences import BOS_ID, PAD_ID

from . import Mistake

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/check, for blind/
from blind import load  # noqa: E402

# the mistake id, the blind set, the check, the case's name, words the verdict must contain
_FROM_BLIND = [
    ("average-weights", "b4", "check_average_checkpoints", "first_counted_twice",
     "Checkpoint 0 is counted twice"),
    ("bahdanau-logits-order", "b4", "check_bahdanau_step", "context_first_in_logits",
     "out([c_t; s'_t]), the context first"),
    ("bahdanau-projected-values", "b4", "check_bahdanau_step", "projected_keys_as_values",
     "the size of the projected keys"),
    ("bahdanau-state-order", "b4", "check_bahdanau_step", "context_before_embedding",
     "fed [c_t; y_{t-1}], the context first"),
    ("bahdanau-weights-query-axis", "b4", "check_bahdanau_step", "weights_not_squeezed",
     "keep a query axis of size 1"),
    ("banded-causal-no-window", "b6", "check_banded_attention", "causal_without_window",
     "the causal band has no window"),
    ("banded-no-abs", "b6", "check_banded_attention", "abs_forgotten",
     "take abs() of the offset"),
    ("banded-scaled-by-keys", "b6", "check_banded_attention", "scaled_by_window_size",
     "the number of keys a frame sees"),
    ("banded-padding-outputs-zeroed", "b5", "check_banded_attention", "padding_outputs_zeroed",
     "the outputs of the padding frames are set to zero"),
    ("banded-padding-zeroed", "b5", "check_banded_attention", "padding_keys_zeroed",
     "set to zero instead of masked"),
    ("banded-scaled-by-dh", "b5", "check_banded_attention", "scaled_by_dh",
     "divided by Dh = 8"),
    ("banded-slice-end", "b4", "check_banded_attention", "range_end_left_out",
     "a slice band[t, lo:hi] leaves out hi"),
    ("beam-penalty-precedence", "b6", "check_beam_search", "penalty_brackets_lost",
     "the power applies to 6 alone"),
    ("beam-best-finished", "b4", "check_beam_search", "stop_when_best_finishes",
     "as soon as its best-ranked hypothesis is finished"),
    ("beam-no-offset", "b4", "check_beam_search", "rows_without_offset",
     "row b * beam_size + k"),
    ("bert-mask-labels-only-on-mask", "b4", "check_mask_tokens", "labels_only_where_masked",
     "you set labels only where the token became [MASK]"),
    ("block-dropout-fixed", "b5", "check_encoder_layer", "dropout_hard_coded",
     "a dropout probability is fixed in your code"),
    ("block-normed-twice", "b4", "check_encoder_layer", "prenorm_also_norms_after",
     "normalises both before the sub-layer and after the residual"),
    ("block-norms-swapped", "b4", "check_encoder_layer", "norms_swapped",
     "the LayerNorms are swapped"),
    ("block-query-unnormalised", "b4", "check_encoder_layer", "prenorm_query_unnormalized",
     "is asked by the unnormalised x"),
    ("block-residual-from-before", "b4", "check_decoder_layer", "stale_variable_in_feed_forward",
     "adds the input of cross-attention"),
    ("flattened-positions", "b4", "check_feed_forward", "flattened_positions",
     "the leading axes are flattened into one"),
    ("kv-cache-fixed-length", "b5", "check_kv_cache", "fixed_buffer_of_16",
     "the cache stops growing"),
    ("kv-cache-reorder-fewer-rows", "b5", "check_kv_cache", "reorder_copy_into_old",
     "keeping 2 of the 3 rows"),
    ("loss-smoothing-fixed", "b6", "check_label_smoothing", "hard_coded_epsilon",
     "the smoothing is fixed in your code"),
    ("self-attn-dv-default", "b6", "check_self_attention", "d_v_defaults_to_d_in",
     "d_v defaults to d_k = 4"),
    ("kv-cache-join-not-kept", "b6", "check_kv_cache", "concatenation_not_stored",
     "the joined tensor is returned but not kept"),
    ("kv-cache-new-first", "b4", "check_kv_cache", "new_positions_first",
     "put before the cached ones"),
    ("kv-cache-reorder-rows-lost", "b4", "check_kv_cache", "reorder_with_boolean_mask",
     "a boolean mask keeps each row at most once"),
    ("kv-cache-returns-before-adding", "b4", "check_kv_cache", "returns_before_adding",
     "before the new positions were added"),
    ("lengths-mixed", "b4", "check_multihead", "split_with_query_length",
     "a length taken from the queries"),
    ("loss-log-softmax-axis", "b4", "check_label_smoothing", "log_softmax_over_time",
     "the log-softmax runs over axis 1"),
    ("loss-pad-in-sum", "b4", "check_label_smoothing", "mask_after_normalizing",
     "the padding positions' losses are in the sum"),
    ("loss-spread-without-pad", "b4", "check_label_smoothing", "annotated_transformer_kl",
     "as the Annotated Transformer does"),
    ("mask-one-short", "b4", "check_padding_mask", "positions_from_one",
     "each row hides its last real token"),
    ("match-box-weight-dropped", "b4", "check_hungarian_matching", "box_weight_forgotten",
     "the box cost has weight 1"),
    ("match-list-of-pairs", "b3", "check_hungarian_matching", "returns_list_of_pairs",
     "(query, object) pairs"),
    ("match-log-prob", "b4", "check_hungarian_matching", "log_prob_class_cost",
     "the class cost is -log p_query(class)"),
    ("match-softmax-over-queries", "b4", "check_hungarian_matching", "softmax_over_queries",
     "the softmax runs over the queries"),
    ("match-weights-swapped", "b2", "check_hungarian_matching", "weight_on_class_cost",
     "the weights are swapped"),
    ("nw-not-normalised", "b4", "check_nadaraya_watson", "gaussian_density_weights",
     "not divided by their row's sum"),
    ("patch-extra-token", "b5", "check_patch_embedding", "cls_token_prepended",
     "one token too many"),
    ("pad-changed-input", "b5", "check_pad_sequences", "extends_the_callers_lists",
     "your function changed the lists it was given"),
    ("pad-lengths-counted", "b4", "check_pad_sequences", "lengths_by_counting_non_pad",
     "they count the entries that differ from pad_value"),
    ("rnn-tanh-on-state-only", "b4", "check_rnn_cell", "tanh_only_on_state",
     "the tanh covers only state_proj(s_prev)"),
    ("scale-power-precedence", "b4", "check_attention", "power_precedence",
     "`** 1/2` is not a square root"),
    ("self-attn-weights-unmasked", "b4", "check_self_attention", "weights_before_mask",
     "the weights you return are the softmax before the mask"),
    ("squeezed-size-one", "b4", "check_additive_attention", "squeeze_everything",
     "an axis of size 1 is gone"),
    ("loss-smoothed-prediction", "b6", "check_label_smoothing", "smoothing_on_probabilities",
     "you smooth the model's distribution"),
    ("loss-uniform-on-logits", "b6", "check_label_smoothing", "uniform_term_on_logits",
     "the smoothing term averages the raw logits"),
    ("loss-smoothing-swapped", "b5", "check_label_smoothing", "weights_swapped",
     "the two weights are swapped"),
    ("loss-target-share-overwritten", "b5", "check_label_smoothing",
     "scatter_overwrites_eps_over_v", "without its share ε / V"),
    ("loss-pad-column-dropped", "b5", "check_label_smoothing", "pad_column_left_out",
     "the padding column is left out of the uniform part"),
    ("loss-other-pad-id", "b5", "check_label_smoothing", "pad_id_one",
     "you leave out the targets equal to 1"),
    ("match-argmax-class", "b5", "check_hungarian_matching", "argmax_class_hit",
     "the class cost is 0 or -1"),
    ("match-increasing-queries", "b5", "check_hungarian_matching",
     "combinations_not_permutations", "itertools.combinations"),
    ("match-l1-mean", "b5", "check_hungarian_matching", "box_cost_mean",
     "the mean of the four |differences|"),
    ("match-no-object-dropped", "b5", "check_hungarian_matching", "softmax_without_no_object",
     "leaves out the last class, 'no object'"),
    ("match-objects-in-order", "b5", "check_hungarian_matching", "targets_assumed_in_order",
     "the object indices are dropped"),
    ("multihead-keys-from-query", "b5", "check_multihead", "keys_from_the_query",
     "projected from the query"),
    ("random-output", "b5", "check_multihead", "dropout_on_weights",
     "changes from one call to the next"),
    ("self-attn-mask-transposed", "b5", "check_self_attention", "mask_transposed",
     "the mask is read transposed"),
    ("self-attn-softmax-batch", "b5", "check_self_attention", "softmax_over_batch",
     "over the batch (axis 0)"),
    ("pad-lengths-minus-one", "b6", "check_pad_sequences", "lengths_minus_one",
     "each length is one less than its sequence's"),
    ("pad-sorted", "b5", "check_pad_sequences", "sorted_longest_first",
     "your lengths are the right ones sorted, longest first"),
    ("pad-width-of-max-list", "b6", "check_pad_sequences", "width_from_max_of_lists",
     "the length of max(seqs)"),
    ("mask-one-too-wide", "b6", "check_padding_mask", "width_longest_plus_one",
     "one more than the longest length (5)"),
    ("mask-attention-shape", "b6", "check_padding_mask", "shape_b11t",
     "the shape attention broadcasts"),
    ("mask-rows-sorted", "b6", "check_padding_mask", "rows_sorted",
     "the right rows in another order"),
    ("patch-normalised", "b5", "check_patch_embedding", "layernorm_on_patches",
     "your patches are layer-normalised (before the projection)"),
    ("patch-scaled", "b5", "check_patch_embedding", "scaled_by_sqrt_d",
     "times sqrt(D) = 2.828"),
    ("softmax-log", "b5", "check_masked_softmax", "log_softmax_used",
     "log-probabilities"),
    ("softmax-sigmoid", "b5", "check_additive_attention", "sigmoid_scores",
     "is sigmoid(score), on its own"),
    ("table-power-precedence", "b4", "check_sinusoidal_encoding", "precedence_in_exponent",
     "raises 10000 to -2 alone"),
    ("tf-label-smoothing", "b6", "check_teacher_forcing_loss", "label_smoothing",
     "your loss is label-smoothed"),
    ("tf-targets-by-column", "b6", "check_teacher_forcing_loss", "targets_flattened_by_column",
     "the targets are flattened column by column"),
    ("tf-context-last-column", "b4", "check_teacher_forcing_loss", "context_from_last_column",
     "the context is outputs[:, -1]"),
    ("top-p-no-softmax", "b5", "check_top_p", "cumsum_of_raw_logits",
     "summed over the sorted logits"),
    ("top-p-as-top-k", "b6", "check_top_p", "fraction_of_vocabulary",
     "you keep the ceil(p * V) most likely tokens"),
    ("top-p-dim-one", "b6", "check_top_p", "dim_one_hard_coded",
     "the filter runs along dim 1"),
    ("top-p-minus-1e9", "b6", "check_top_p", "minus_1e9",
     "get -1e9 instead of -inf"),
    ("top-p-gather-unsort", "b5", "check_top_p", "gather_with_sort_order",
     "applies the sort's permutation once more"),
    ("top-p-min-two", "b5", "check_top_p", "always_two_tokens",
     "you always keep at least two tokens"),
    ("top-p-softmax-axis", "b4", "check_top_p", "softmax_over_dim0",
     "the softmax runs over dim 0"),
    ("gradient-detached", "b6", "check_decoder_layer", "memory_detached",
     "no gradient reaches memory"),
    ("match-background-first", "b6", "check_hungarian_matching", "background_class_first",
     "class 0 as background"),
    ("match-giou-term", "b6", "check_hungarian_matching", "detr_giou_term",
     "generalised-IoU term"),
    ("norm-other-eps", "b6", "check_layer_norm", "bert_eps_1e-12", "your eps is 1e-12"),
    ("norm-rms", "b6", "check_layer_norm", "rms_without_mean", "which is RMSNorm"),
    ("rnn-detaches-state", "b6", "check_rnn_cell", "previous_state_detached",
     "no gradient reaches s_prev"),
    ("rnn-tanh-each-term", "b6", "check_rnn_cell", "tanh_of_each_term",
     "you squash each term by itself"),
    ("shared-submodule", "b6", "check_encoder_layer", "one_shared_norm",
     "are one module, not two"),
    ("top-p-batch-count", "b6", "check_top_p", "batch_max_count",
     "the row of the batch that needs the most"),
    ("top-p-overflow", "b6", "check_top_p", "naive_softmax", "overflows to inf"),
    ("top-p-relative", "b6", "check_top_p", "relative_to_best",
     "a threshold relative to the maximum"),
]  # fmt: skip


def _case(set_name: str, check_name: str, name: str) -> object:
    return next(c.code for c in load(set_name) if (c.check, c.name) == (check_name, name))


def context_mean(model, src, src_lengths, tgt_out: Tensor) -> Tensor:
    """The teacher-forcing loss with the mean of the encoder's outputs as the context."""
    outputs, state = model.encoder(src, src_lengths)  # (B, S, D)
    bos = torch.full((tgt_out.shape[0], 1), BOS_ID, dtype=tgt_out.dtype)
    tgt_in = torch.cat([bos, tgt_out[:, :-1]], dim=1)  # (B, T)
    logits, _ = model.decoder(tgt_in, outputs.mean(1), state)  # (B, T, V)
    assert last_hidden(state).shape == outputs.mean(1).shape
    return F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD_ID)


def top_p_times_mask(logits: Tensor, p: float) -> Tensor:
    """The right nucleus, removed by multiplying the logits by the mask (0 outside)."""
    probs, order = logits.softmax(-1).sort(dim=-1, descending=True)
    keep_sorted = probs.cumsum(-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits * keep


MISTAKES = [
    Mistake(getattr(check, check_name), key, _case(set_name, check_name, name), words)
    for key, set_name, check_name, name, words in _FROM_BLIND
] + [
    Mistake(check.check_teacher_forcing_loss, "tf-context-mean", context_mean,
            "the mean of the encoder's outputs"),
    Mistake(check.check_top_p, "top-p-times-mask", top_p_times_mask, "-inf * 0 is NaN"),
]  # fmt: skip
