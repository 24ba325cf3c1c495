"""ColoredMNIST methods: augmentations, losses, probes, zero-shot scoring, training (small and fast)."""
import math

import pytest
import torch
from torch import nn

from mmcl.experiments.coloredmnist.augment import (LUMA, AugmentConfig, augment, color_jitter, hue_rotation,
                                       random_grayscale, random_resized_crop_flip)
from mmcl.experiments.coloredmnist.data import ColoredMNISTConfig, make_colored_mnist
from mmcl.experiments.coloredmnist.evaluate import colour_only_classifier, features, fit_probe, zero_shot_predict
from mmcl.experiments.coloredmnist.losses import multi_positive_infonce, nt_xent
from mmcl.experiments.coloredmnist.models import CaptionEncoder, ConvEncoder, caption_ids, caption_vectors
from mmcl.experiments.coloredmnist.train import TrainConfig, TrainedModel, train_model


@pytest.fixture(scope="module")
def tiny():
    return make_colored_mnist(ColoredMNISTConfig(n_images=400, image_size=14), seed=1)


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


# --- augmentations ---------------------------------------------------------------------------

def test_full_crop_without_flip_is_the_identity():
    x = torch.rand(4, 3, 14, 14, dtype=torch.float64)
    y = random_resized_crop_flip(x, (1.0, 1.0), (1.0, 1.0), p_flip=0.0, g=_gen())
    torch.testing.assert_close(y, x, atol=1e-12, rtol=0)


def test_full_crop_with_certain_flip_is_a_horizontal_flip():
    x = torch.rand(4, 3, 14, 14, dtype=torch.float64)
    y = random_resized_crop_flip(x, (1.0, 1.0), (1.0, 1.0), p_flip=1.0, g=_gen())
    torch.testing.assert_close(y, torch.flip(x, [-1]), atol=1e-12, rtol=0)


def test_crop_keeps_the_colour_of_a_tinted_digit(tiny):
    x = tiny.train.images(torch.arange(16))
    y = random_resized_crop_flip(x, (0.4, 1.0), g=_gen())
    # every pixel stays a multiple of the image's colour: the chromaticity is unchanged
    rgb = tiny.train.palette[tiny.train.colour[:16]]
    cross = y - y.amax(1, keepdim=True) / rgb.amax(1)[:, None, None, None] * rgb[:, :, None, None]
    assert cross.abs().max() < 1e-5


def test_hue_rotation_is_a_rotation_about_the_grey_axis():
    R = hue_rotation(torch.tensor([0.3, 2.0], dtype=torch.float64))
    torch.testing.assert_close(R @ R.transpose(-1, -2), torch.eye(3, dtype=torch.float64).expand(2, 3, 3))
    torch.testing.assert_close(R @ torch.ones(3, dtype=torch.float64), torch.ones(2, 3, dtype=torch.float64))
    assert torch.allclose(torch.linalg.det(R), torch.ones(2, dtype=torch.float64))
    # a third of a turn cycles the axes: red -> green -> blue
    C = hue_rotation(torch.tensor([2 * math.pi / 3], dtype=torch.float64))[0]
    torch.testing.assert_close(C, torch.tensor([[0., 0, 1], [1, 0, 0], [0, 1, 0]], dtype=torch.float64), atol=1e-12, rtol=0)


def test_colour_jitter_of_strength_zero_is_the_identity_and_stays_in_range():
    x = torch.rand(8, 3, 6, 6)
    torch.testing.assert_close(color_jitter(x, 0.0, 1.0, _gen()), x, atol=1e-6, rtol=0)
    y = color_jitter(x, 1.0, 1.0, _gen())
    assert y.min() >= 0 and y.max() <= 1 and not torch.allclose(x, y)


def test_certain_grayscale_gives_equal_channels_of_luma():
    x = torch.rand(5, 3, 4, 4, dtype=torch.float64)
    y = random_grayscale(x, 1.0, _gen())
    luma = sum(w * x[:, c] for c, w in enumerate(LUMA))
    for c in range(3):
        torch.testing.assert_close(y[:, c], luma)
    torch.testing.assert_close(random_grayscale(x, 0.0, _gen()), x)


def test_simclr_recipe_changes_colour_and_crop_flip_does_not(tiny):
    x = tiny.train.images(torch.arange(64))
    hue = lambda z: z.sum((2, 3)) / z.sum((1, 2, 3))[:, None]  # mean chromaticity per image
    same = augment(x, AugmentConfig("crop_flip"), _gen())
    jit = augment(x, AugmentConfig("simclr"), _gen())
    assert (hue(same) - hue(x)).abs().max() < 1e-4
    assert (hue(jit) - hue(x)).abs().amax(1).median() > 0.02


@pytest.mark.parametrize("kwargs, field", [({"recipe": "rotate"}, "recipe"), ({"p_jitter": 1.5}, "p_jitter"),
                                           ({"p_grayscale": -0.1}, "p_grayscale"), ({"crop_scale": (0.5, 1.2)}, "crop_scale"),
                                           ({"jitter_strength": 2.0}, "jitter_strength")])
def test_bad_augmentation_settings_raise(kwargs, field):
    with pytest.raises(ValueError, match=field):
        AugmentConfig(**kwargs)


# --- losses ----------------------------------------------------------------------------------

def test_nt_xent_equals_a_loop_over_anchors():
    g = _gen(3)
    z1, z2 = torch.randn(5, 4, generator=g, dtype=torch.float64), torch.randn(5, 4, generator=g, dtype=torch.float64)
    tau = 0.3
    z = torch.cat([z1, z2])
    z = z / z.norm(dim=1, keepdim=True)
    total = 0.0
    for i in range(10):
        pos = (i + 5) % 10
        num = math.exp(float(z[i] @ z[pos]) / tau)
        den = sum(math.exp(float(z[i] @ z[k]) / tau) for k in range(10) if k != i)
        total += -math.log(num / den)
    assert float(nt_xent(z1, z2, tau)) == pytest.approx(total / 10, rel=1e-12)


def test_multi_positive_infonce_equals_a_loop_with_duplicate_captions():
    g = _gen(4)
    img, txt = torch.randn(6, 3, generator=g, dtype=torch.float64), torch.randn(6, 3, generator=g, dtype=torch.float64)
    ids = torch.tensor([7, 2, 7, 5, 2, 7])
    tau = 0.5
    a, b = img / img.norm(dim=1, keepdim=True), txt / txt.norm(dim=1, keepdim=True)
    S = (a @ b.T).numpy() / tau

    def side(M):
        out = 0.0
        for i in range(6):
            p = sum(math.exp(M[i, j]) for j in range(6) if ids[i] == ids[j])
            out += -math.log(p / sum(math.exp(M[i, j]) for j in range(6)))
        return out / 6

    expected = 0.5 * (side(S) + side(S.T))
    assert float(multi_positive_infonce(img, txt, ids, tau)) == pytest.approx(expected, rel=1e-12)


def test_multi_positive_infonce_is_clip_when_captions_are_distinct():
    g = _gen(5)
    img, txt = torch.randn(8, 4, generator=g, dtype=torch.float64), torch.randn(8, 4, generator=g, dtype=torch.float64)
    logits = nn.functional.normalize(img, dim=1) @ nn.functional.normalize(txt, dim=1).T / 0.1
    clip = 0.5 * (nn.functional.cross_entropy(logits, torch.arange(8)) + nn.functional.cross_entropy(logits.T, torch.arange(8)))
    torch.testing.assert_close(multi_positive_infonce(img, txt, torch.arange(8), 0.1), clip)


def test_losses_reject_a_non_positive_temperature():
    x = torch.randn(4, 3)
    with pytest.raises(ValueError, match="temperature"):
        nt_xent(x, x, 0.0)
    with pytest.raises(ValueError, match="temperature"):
        multi_positive_infonce(x, x, torch.arange(4), -1.0)


def test_captions_are_digit_then_colour_one_hots():
    c = caption_vectors(torch.tensor([3]), torch.tensor([8]))
    assert c.shape == (1, 20) and c[0, 3] == 1 and c[0, 18] == 1 and c.sum() == 2
    assert caption_vectors(torch.tensor([3]))[0, 10:].sum() == 0
    assert caption_ids(torch.tensor([3]), torch.tensor([8])).item() == 38
    assert caption_ids(torch.tensor([3])).item() == 30  # digit-only caption, as caption_vectors(digit)


# --- evaluation ------------------------------------------------------------------------------

def test_probe_solution_is_a_stationary_point_of_its_objective():
    g = _gen(6)
    X = torch.randn(300, 5, generator=g, dtype=torch.float64) * torch.tensor([1.0, 3.0, 0.5, 2.0, 1.0], dtype=torch.float64)
    y = (X[:, :3].argmax(1) + (torch.rand(300, generator=g) < 0.2).long()) % 3
    l2 = 1e-2
    p = fit_probe(X, y, n_classes=3, l2=l2)
    # independent check: autograd of the objective at the returned parameters vanishes
    W = p.weight.clone().requires_grad_(True)
    b = p.bias.clone().requires_grad_(True)
    Xs = (X - X.mean(0)) / X.std(0, correction=0)
    loss = nn.functional.cross_entropy(Xs @ W + b, y) + 0.5 * l2 * (W * W).sum()
    gW, gb = torch.autograd.grad(loss, (W, b))
    assert max(gW.abs().max(), gb.abs().max()) < 1e-5
    assert p.accuracy(X, y) > 0.6


def test_probe_rejects_bad_labels_and_penalty():
    X = torch.randn(10, 2)
    with pytest.raises(ValueError, match="labels"):
        fit_probe(X, torch.full((10,), 11))
    with pytest.raises(ValueError, match="l2"):
        fit_probe(X, torch.zeros(10, dtype=torch.long), l2=0.0)


def test_zero_shot_picks_the_digit_caption_nearest_the_image_embedding():
    enc = ConvEncoder(14, (2, 2), 10)
    text = CaptionEncoder(10)
    with torch.no_grad():
        text.proj.weight.zero_()
        text.proj.weight[:, :10] = torch.eye(10)  # digit d -> e_d, colours -> 0
    head = nn.Identity()
    model = TrainedModel("multi", enc, head, text)
    feats = torch.eye(10)[[4, 2, 9]] * 3 + 0.1
    assert zero_shot_predict(model, feats).tolist() == [4, 2, 9]
    with pytest.raises(ValueError, match="multi-modal"):
        zero_shot_predict(TrainedModel("simclr", enc, head, None), feats)


def test_colour_only_reference_maps_each_colour_to_its_commonest_label(tiny):
    table = colour_only_classifier(tiny.train)
    tr = tiny.train
    for c in range(10):
        labels = tr.label[tr.colour == c]
        if len(labels):
            assert torch.bincount(labels, minlength=10)[table[c]] == torch.bincount(labels, minlength=10).max()


# --- training ----------------------------------------------------------------------------------

@pytest.mark.parametrize("method, recipe", [("multi", "none"), ("simclr", "crop_flip"), ("simclr", "simclr"),
                                            ("supervised", "none")])
def test_training_is_reproducible_and_lowers_the_loss(tiny, method, recipe):
    cfg = TrainConfig(epochs=3, batch_size=64, channels=(4, 8), feature_dim=16, embed_dim=8)
    a = train_model(tiny.train, method, cfg=cfg, aug=AugmentConfig(recipe), seed=2, progress=False)
    b = train_model(tiny.train, method, cfg=cfg, aug=AugmentConfig(recipe), seed=2, progress=False)
    assert a.loss == b.loss and all(math.isfinite(v) for v in a.loss)
    assert a.loss[-1] < a.loss[0]
    f = features(a, tiny.test)
    assert f.shape == (len(tiny.test), 16) and torch.isfinite(f).all()


def test_training_rejects_bad_input(tiny):
    with pytest.raises(ValueError, match="method"):
        train_model(tiny.train, "byol", progress=False)
    with pytest.raises(ValueError, match="recipe"):
        train_model(tiny.train, "simclr", aug=AugmentConfig("none"), progress=False)
    with pytest.raises(ValueError, match="batch_size"):
        train_model(tiny.train, "multi", cfg=TrainConfig(batch_size=10_000), progress=False)
    with pytest.raises(ValueError, match="device"):
        train_model(tiny.train, "multi", device="tpu", progress=False)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            train_model(tiny.train, "multi", device="cuda", progress=False)


@pytest.mark.parametrize("kwargs, field", [({"epochs": 0}, "epochs"), ({"lr": -1.0}, "lr"),
                                           ({"temperature_multi": 0.0}, "temperature_multi"),
                                           ({"channels": (8,)}, "channels"), ({"batch_size": 1}, "batch_size")])
def test_bad_training_settings_raise(kwargs, field):
    with pytest.raises(ValueError, match=field):
        TrainConfig(**kwargs)


def test_the_cache_key_carries_the_cpu_thread_count(monkeypatch):
    """Runs on one and on two CPU threads differ in their last digits, so they are cached apart."""
    import torch

    from mmcl.experiments.coloredmnist import runs as runs_mod

    seen = []
    monkeypatch.setattr(runs_mod, "load_or_compute", lambda ns, params, compute: seen.append(params))
    before = torch.get_num_threads()
    try:
        for k in (1, 2):
            torch.set_num_threads(k)
            runs_mod.run_one("multi", 0)
    finally:
        torch.set_num_threads(before)
    assert [p["threads"] for p in seen] == [1, 2]
    assert {k: v for k, v in seen[0].items() if k != "threads"} == {k: v for k, v in seen[1].items() if k != "threads"}
