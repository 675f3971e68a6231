"""Tests of chapter 19's module: patch embedding, 2-D positions, ViT, SAGAN block, set prediction."""

import itertools

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from transformer_tutorial.positional import sinusoidal_encoding
from transformer_tutorial.transformer import AttentionWeights, DecoderLayer, EncoderLayer
from transformer_tutorial.vision import (
    AttentionCNN,
    PatchEmbedding,
    SelfAttention2d,
    SetPredictor,
    SetPredictorConfig,
    SmallCNN,
    VisionTransformer,
    ViTConfig,
    accuracy,
    box_iou,
    detection_recall,
    hungarian_match,
    make_shapes,
    matching_cost,
    set_loss,
    sinusoidal_encoding_2d,
    train_classifier,
)


@pytest.mark.parametrize("C, P, D, H, W", [(1, 2, 8, 8, 8), (3, 4, 16, 12, 16)])
def test_patch_embedding_equals_strided_conv2d_values_and_gradients(C, P, D, H, W):
    torch.manual_seed(0)
    ours = PatchEmbedding(C, P, D)
    conv = nn.Conv2d(C, D, kernel_size=P, stride=P)
    with torch.no_grad():
        conv.weight.copy_(ours.proj.weight.view(D, C, P, P))
        conv.bias.copy_(ours.proj.bias)
    x = torch.randn(2, C, H, W, requires_grad=True)
    x2 = x.detach().clone().requires_grad_(True)
    a = ours(x)
    b = conv(x2).flatten(2).transpose(1, 2)
    assert a.shape == (2, (H // P) * (W // P), D)
    torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    g = torch.randn_like(a)
    (a * g).sum().backward()
    (b * g).sum().backward()
    torch.testing.assert_close(ours.proj.weight.grad.view(D, C, P, P), conv.weight.grad)
    torch.testing.assert_close(ours.proj.bias.grad, conv.bias.grad)
    torch.testing.assert_close(x.grad, x2.grad)


def test_patch_embedding_explains_bad_inputs():
    pe = PatchEmbedding(1, 3, 8)
    with pytest.raises(ValueError, match="multiple of 3"):
        pe(torch.randn(1, 1, 8, 8))
    with pytest.raises(ValueError, match="batch axis"):
        pe(torch.randn(1, 9, 9))


def test_2d_sinusoids_are_row_then_column_tables_and_depend_on_offsets_only():
    pe = sinusoidal_encoding_2d(4, 5, 16).view(4, 5, 16)
    torch.testing.assert_close(pe[:, 2, :8], sinusoidal_encoding(4, 8))
    torch.testing.assert_close(pe[3, :, 8:], sinusoidal_encoding(5, 8))
    for (a, b), (c, d) in [
        (((0, 0), (2, 3)), ((1, 1), (3, 4))),
        (((3, 4), (0, 1)), ((3, 3), (0, 0))),
    ]:
        torch.testing.assert_close((pe[a] * pe[b]).sum(), (pe[c] * pe[d]).sum())
    with pytest.raises(ValueError, match="multiple of 4"):
        sinusoidal_encoding_2d(4, 4, 6)


def test_vit_shapes_reuse_encoder_layers_and_collect_attention():
    vit = VisionTransformer(ViTConfig())
    assert all(isinstance(layer, EncoderLayer) for layer in vit.layers)
    weights = AttentionWeights()
    logits = vit(torch.rand(3, 1, 8, 8), weights=weights)
    assert logits.shape == (3, 10)
    assert [w.shape for w in weights.encoder_self] == [(3, 4, 17, 17)] * 2


def test_vit_without_positions_ignores_the_order_of_patches_and_with_positions_does_not():
    torch.manual_seed(0)
    images = torch.rand(2, 1, 8, 8)
    # Swap two 2x2 patches: (0, 0) and (3, 2) on the 4x4 grid of patches.
    swapped = images.clone()
    swapped[..., 0:2, 0:2], swapped[..., 6:8, 4:6] = images[..., 6:8, 4:6], images[..., 0:2, 0:2]
    plain = VisionTransformer(ViTConfig(positions="none")).eval()
    torch.testing.assert_close(plain(images), plain(swapped), atol=1e-5, rtol=1e-5)
    with_pos = VisionTransformer(ViTConfig(positions="sinusoidal")).eval()
    assert not torch.allclose(with_pos(images), with_pos(swapped), atol=1e-4)


def test_vit_config_rejects_bad_settings():
    with pytest.raises(ValueError, match="patch_size"):
        ViTConfig(patch_size=3)
    with pytest.raises(ValueError, match="positions"):
        ViTConfig(positions="relative")


def test_small_cnn_shape_and_training_loop_learns_a_separable_toy_task():
    torch.manual_seed(0)
    images = torch.rand(64, 1, 8, 8)
    labels = (images[:, 0, :, :4].mean((1, 2)) > images[:, 0, :, 4:].mean((1, 2))).long()
    cnn = SmallCNN(num_classes=2)
    assert cnn(images).shape == (64, 2)
    losses = train_classifier(cnn, images, labels, epochs=30, batch_size=16, lr=3e-3)
    assert losses[-1] < 0.5 * losses[0]
    assert accuracy(cnn, images, labels) > 0.9


def test_sagan_block_starts_as_identity_and_rows_sum_to_one():
    block = SelfAttention2d(16)
    x = torch.randn(2, 16, 3, 4)
    y, w = block(x)
    assert torch.equal(y, x)
    assert w.shape == (2, 12, 12)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 12))


def test_sagan_block_matches_the_papers_formula():
    # Zhang et al. (ICML 2019), section 3: beta_ji = softmax_i(f(x_i)^T g(x_j)),
    # o_j = v(sum_i beta_ji h(x_i)), y_j = gamma o_j + x_j; f, g, h to C/8 channels, v back to C.
    torch.manual_seed(0)
    block = SelfAttention2d(8)
    assert block.value.out_channels == 1 and block.out_proj.out_channels == 8  # C/8, then C
    with torch.no_grad():
        block.gamma.fill_(0.5)
    x = torch.randn(1, 8, 3, 3)
    y, _ = block(x)
    flat = x.flatten(2)[0]  # (C, N)

    def conv1x1(conv: nn.Conv2d, z: torch.Tensor) -> torch.Tensor:
        return conv.weight[:, :, 0, 0] @ z + conv.bias[:, None]

    f, g = conv1x1(block.key, flat), conv1x1(block.query, flat)  # (C/8, N) each
    h = conv1x1(block.value, flat)  # (C/8, N)
    s = f.T @ g  # (N, N): s[i, j] = f(x_i)^T g(x_j)
    beta = s.softmax(0).T  # (N, N): beta[j, i], normalised over i, unscaled as in SAGAN
    o = conv1x1(block.out_proj, h @ beta.T)  # (C, N)
    torch.testing.assert_close(y[0].flatten(1), flat + 0.5 * o, atol=1e-5, rtol=1e-5)


def test_attention_cnn_with_gamma_frozen_at_zero_is_the_plain_cnn():
    torch.manual_seed(0)
    model = AttentionCNN()
    images = torch.rand(4, 1, 8, 8)
    logits, weights = model.forward_with_attention(images)
    assert logits.shape == (4, 10) and weights.shape == (4, 64, 64)
    plain = model.head(F.max_pool2d(F.relu(model.conv2(F.relu(model.conv1(images)))), 2).flatten(1))
    torch.testing.assert_close(logits, plain)  # gamma = 0: the block adds nothing


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_sagan_block_is_permutation_equivariant_over_pixels(seed):
    torch.manual_seed(seed)
    block = SelfAttention2d(8)
    with torch.no_grad():
        block.gamma.fill_(1.3)
    x = torch.randn(1, 8, 3, 5)
    perm = torch.randperm(15)
    y, _ = block(x)
    y_perm, _ = block(x.flatten(2)[:, :, perm].view(1, 8, 3, 5))
    torch.testing.assert_close(y_perm.flatten(2), y.flatten(2)[:, :, perm], atol=1e-5, rtol=1e-5)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), Q=st.integers(1, 5), data=st.data())
def test_hungarian_match_is_the_cheapest_assignment_by_brute_force(seed, Q, data):
    M = data.draw(st.integers(0, Q))
    g = torch.Generator().manual_seed(seed)
    logits, boxes = torch.randn(Q, 4, generator=g), torch.rand(Q, 4, generator=g)
    labels, targets = torch.randint(0, 3, (M,), generator=g), torch.rand(M, 4, generator=g)
    rows, cols = hungarian_match(logits, boxes, labels, targets)
    cost = matching_cost(logits, boxes, labels, targets)
    assert sorted(cols.tolist()) == list(range(M)) and len(set(rows.tolist())) == M
    best = min(
        (
            sum(cost[q, j].item() for j, q in enumerate(qs))
            for qs in itertools.permutations(range(Q), M)
        ),
        default=0.0,
    )
    assert abs(cost[rows, cols].sum().item() - best) < 1e-5


def test_hungarian_match_explains_too_many_objects_and_bad_shapes():
    with pytest.raises(ValueError, match="at least as many queries"):
        hungarian_match(
            torch.randn(2, 4), torch.rand(2, 4), torch.tensor([0, 1, 2]), torch.rand(3, 4)
        )
    with pytest.raises(ValueError, match="index the batch"):
        matching_cost(
            torch.randn(1, 2, 4), torch.rand(1, 2, 4), torch.tensor([0]), torch.rand(1, 4)
        )


def test_set_loss_ignores_query_order_and_is_lower_for_the_right_answer():
    torch.manual_seed(0)
    _, targets = make_shapes(3, generator=torch.Generator().manual_seed(0))
    logits, boxes = torch.randn(3, 6, 4), torch.rand(3, 6, 4)
    perm = torch.randperm(6)
    torch.testing.assert_close(
        set_loss(logits, boxes, targets), set_loss(logits[:, perm], boxes[:, perm], targets)
    )
    good_logits = torch.full((3, 6, 4), -8.0)
    good_logits[..., 3] = 8.0
    good_boxes = torch.rand(3, 6, 4)
    for b, (labels, target_boxes) in enumerate(targets):
        good_logits[b, : len(labels), 3] = -8.0
        good_logits[b, torch.arange(len(labels)), labels] = 8.0
        good_boxes[b, : len(labels)] = target_boxes
    assert set_loss(good_logits, good_boxes, targets) < 0.01 < set_loss(logits, boxes, targets)
    assert detection_recall(good_logits, good_boxes, targets) == (1.0, 1.0)
    nothing = torch.zeros(3, 6, 4)
    nothing[..., 3] = 1.0
    assert detection_recall(nothing, good_boxes, targets) == (0.0, 0.0)


def test_box_iou_known_values():
    a = torch.tensor([[0.5, 0.5, 0.2, 0.2]])
    b = torch.tensor([[0.5, 0.5, 0.2, 0.2], [0.6, 0.5, 0.2, 0.2], [0.9, 0.9, 0.1, 0.1]])
    torch.testing.assert_close(box_iou(a, b), torch.tensor([[1.0, 1 / 3, 0.0]]))


def test_make_shapes_draws_what_its_targets_say():
    images, targets = make_shapes(20, canvas=32, generator=torch.Generator().manual_seed(3))
    assert images.shape == (20, 3, 32, 32)
    for image, (labels, boxes) in zip(images, targets, strict=True):
        assert 1 <= len(labels) <= 3 and boxes.shape == (len(labels), 4)
        assert (boxes[:, :2] - boxes[:, 2:] / 2 >= 0).all() and (
            boxes[:, :2] + boxes[:, 2:] / 2 <= 1
        ).all()
        for label, (cx, cy, _, _) in zip(labels, boxes, strict=True):
            centre = image[:, int(cy * 32), int(cx * 32)]
            expected = torch.tensor([[1.0, 0.25, 0.2], [0.2, 0.85, 0.3], [0.3, 0.45, 1.0]])[label]
            torch.testing.assert_close(centre, expected)
    again, _ = make_shapes(20, canvas=32, generator=torch.Generator().manual_seed(3))
    assert torch.equal(images, again)


def test_set_predictor_shapes_and_reuses_decoder_layers():
    model = SetPredictor(SetPredictorConfig(d_model=32, d_ff=64)).eval()
    assert all(isinstance(layer, DecoderLayer) for layer in model.decoder)
    weights = AttentionWeights()
    logits, boxes = model(torch.rand(2, 3, 32, 32), weights=weights)
    assert logits.shape == (2, 6, 4) and boxes.shape == (2, 6, 4)
    assert ((boxes > 0) & (boxes < 1)).all()
    assert weights.cross[-1].shape == (2, 4, 6, 64)
    with pytest.raises(ValueError, match="expected images"):
        model(torch.rand(2, 1, 32, 32))
