"""mmcl.experiments.setting: the similarity matrices of the chapter "The setting" equal Eq. (4) (and
its two-modality version) written out neuron by neuron, in the label order the figure uses; and its
size table."""
import pytest
import torch

import mmcl
from mmcl.experiments import setting


@pytest.fixture(scope="module")
def result(small_cfg):
    return setting.trained_similarities(small_cfg.replace(n_epochs=5), seed=2)


def _sim(W, Wp, a_patches, b_patches):
    """(1/m) sum_r sum_p relu(<w_r, a_i^(p)>) relu(<w'_r, b_j^(p)>) for every pair (i, j): one outer
    product per neuron and patch."""
    m = W.shape[0]
    return sum(torch.outer(torch.relu(a @ W[r]), torch.relu(b @ Wp[r]))
               for r in range(m) for a, b in zip(a_patches, b_patches)) / m


def test_order_and_labels(result):
    y = result.data.y[result.order]
    assert result.n_pos == int((result.data.y > 0).sum())
    assert bool((y[: result.n_pos] > 0).all()) and bool((y[result.n_pos:] < 0).all())
    for block in (result.order[: result.n_pos], result.order[result.n_pos:]):  # stable: indices increase
        assert bool((block[1:] > block[:-1]).all())


@pytest.mark.parametrize("mode", ["single", "multi"])
def test_similarities_are_eq4(result, mode):
    d, cfg = result.data, result.cfg
    x = [d.y[:, None] * d.mu, d.xi]
    for epoch, (W, Wt) in {0: (d.W0, d.W0_tilde),
                           cfg.n_epochs: (result.runs[mode].W, result.runs[mode].W_tilde)}.items():
        if mode == "single":
            expected = _sim(W, W, x, x)
        else:
            expected = _sim(W, Wt, x, [d.y[:, None] * d.mu_tilde, d.xi_tilde])
        expected = expected[result.order][:, result.order]
        got = result.sims[mode, epoch]
        assert got.shape == (cfg.n, cfg.n)
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-6)
    assert not torch.equal(result.sims[mode, 0], result.sims[mode, cfg.n_epochs])  # training moved them


def test_runs_are_the_gd_engine(result):
    run = mmcl.simulate(result.cfg, result.data, "single", "gd", record_every=result.cfg.n_epochs)
    assert torch.equal(run.W, result.runs["single"].W)


def test_bad_arguments(small_cfg):
    with pytest.raises(ValueError, match="seed"):
        setting.trained_similarities(small_cfg, seed=-1)
    with pytest.raises(ValueError, match="cfg"):
        setting.trained_similarities({"n": 3})
    with pytest.raises(ValueError, match="size='huge' is unknown; valid: 'tiny', 'default', 'full'"):
        setting.config("huge")


def test_sizes():
    assert setting.sizes("default").n_epochs == setting.sizes("full").n_epochs == 200
    assert setting.sizes("tiny") == setting.SettingSizes(n_epochs=20, n_ood=20)  # seconds: 20 epochs, 20 OOD samples
    assert setting.config("default") == mmcl.SyntheticConfig()  # what the chapter trains
    assert setting.config("full") == mmcl.SyntheticConfig()
    assert setting.config("tiny").n_epochs < mmcl.SyntheticConfig().n_epochs


def test_block_contrast_and_diagonal_excess(result):
    """The two summaries of a similarity matrix against loops over its entries."""
    y = result.data.y[result.order].tolist()
    for key, S in result.sims.items():
        n = S.shape[0]
        same = [float(S[i, j]) for i in range(n) for j in range(n) if i != j and y[i] == y[j]]
        diff = [float(S[i, j]) for i in range(n) for j in range(n) if y[i] != y[j]]
        off = [float(S[i, j]) for i in range(n) for j in range(n) if i != j]
        diag = [float(S[i, i]) for i in range(n)]
        mean = lambda v: sum(v) / len(v)
        assert result.block_contrast(*key) == pytest.approx(mean(same) - mean(diff), rel=1e-5)
        assert result.diagonal_excess(*key) == pytest.approx(mean(diag) - mean(off), rel=1e-5)
    text = str(result)
    assert text.count("\n") == 1 and "single:" in text and "multi:" in text
    assert f"{result.block_contrast('multi', result.cfg.n_epochs):.3f}" in text


def test_the_model_schematic_is_patches_and_arrows_naming_every_part():
    """The model diagram draws with patches and arrows only (no data: no lines, images or
    collections) and names each part: both inputs' patches, the shared and the two encoders,
    InfoNCE for each mode, and the two downstream heads under the book's names."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch

    from mmcl.figures import setting as figs

    fig = figs.draw_model()
    try:
        (ax,) = fig.axes
        assert not ax.lines and not ax.images and not ax.collections
        arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
        assert len(arrows) >= 8 and len(ax.patches) - len(arrows) >= 14
        text = " ".join(t.get_text() for t in ax.texts)
        for part in ("yμ", "ξ+ε", "yμ̃", "encoder h", "encoder g", "transfer head", "adapt head", "augment"):
            assert part in text, part
        assert text.count("InfoNCE") == 2
    finally:
        plt.close(fig)
