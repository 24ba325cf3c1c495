"""The computations behind the figures of the chapter sec-single-stage2 (mmcl.proofs.single_stage2: comparator_chain,
scale_gap, scaled_config, ood_feature_snr; mmcl.experiments.single_stage2: scale_gap_sweep): each
equals an independent computation from explicit weights (the ``gd`` engine) or from separate runs,
and rejects bad input by name; and the size table of the experiment module."""
import math

import numpy as np
import pytest
import torch

import mmcl
from mmcl.experiments import single_stage2 as ex
from mmcl.proofs import scales
from mmcl.proofs import single_stage2 as cv


@pytest.fixture(scope="module")
def run(small_cfg):
    cfg = small_cfg.replace(n_epochs=30, sigma0=0.05)
    data = mmcl.SyntheticData.stack([mmcl.sample_synthetic(cfg, s, dtype=torch.float64) for s in (3, 4)])
    gd = mmcl.simulate(cfg, data, "single", "gd", keep_weights=True)  # (B, K, m, d)
    return cfg, data, gd


def test_comparator_chain_equals_explicit_weights_and_its_parts(run):
    cfg, data, gd = run
    t1 = 10
    ccfg = cv.ComparatorConfig(epsilon=0.1)
    ch = cv.comparator_chain(gd, data, cfg, ccfg, t1)
    W = gd.weights  # (B, K, m, d)
    P = W @ data.xi[:, None].transpose(-1, -2)  # <w_r(t), xi_i>, (B, K, m, n)
    Q = W @ (data.xi + data.eps)[:, None].transpose(-1, -2)
    act = (torch.relu(Q) * (P > 0)).mean(-2)
    assert torch.allclose(ch.act_pos, act, rtol=1e-9, atol=1e-12)
    L = math.log(2 * cfg.M / 0.1)
    assert ch.level == pytest.approx(L) and ch.epsilon == 0.1
    assert torch.allclose(ch.pos_ratio * 2 * L, ch.margins.pos.cpu(), rtol=1e-12)
    assert torch.allclose(ch.neg_ratio * L, ch.margins.neg.cpu(), rtol=1e-12)
    lo, hi = ch.feasible17
    assert ch.factor17 == pytest.approx(lo / (cfg.tau * L))
    # at 1.001 lo the one-step inequality holds from t1 on (when the interval is not empty)
    if lo <= hi and math.isfinite(lo):
        assert bool((ch.slack_at[:, t1:] >= 0).all())
    assert ch.init_share == pytest.approx(cfg.init_noise / (2 * cfg.tau * L))
    # Lemma C.18's two sides from explicit weights
    Ws = data.W0 + ch.telescoping.lam * (data.xi / (data.xi ** 2).sum(-1, keepdim=True)).sum(-2)[:, None]
    dist = ((W - Ws[:, None]) ** 2).sum((-1, -2))  # (B, K)
    loss = gd.loss[:, t1:]
    count = torch.arange(1, loss.shape[-1] + 1, dtype=torch.float64)
    assert torch.allclose(ch.avg_loss, loss.cumsum(-1) / count, rtol=1e-12)
    assert torch.allclose(ch.avg_bound, dist[:, t1:t1 + 1] / (cfg.lr * count) + 0.1, rtol=1e-9)
    assert ch.horizon == [math.floor(float(d) / (cfg.lr * 0.1)) for d in dist[:, t1]]
    assert torch.allclose(ch.c14, cfg.lr * ch.telescoping.c14_ratio().cpu())


def test_comparator_chain_rejects_an_unrecorded_t1(run):
    cfg, data, gd = run
    with pytest.raises(ValueError, match="t1=999"):
        cv.comparator_chain(gd, data, cfg, cv.ComparatorConfig(), 999)


def test_scale_gap_equals_explicit_maxima(run):
    cfg, data, gd = run
    g = scales.scale_gap(gd, 10)
    for b in range(2):
        for k in (0, 10, 30):
            assert float(g.gamma_max[b, k]) == max(abs(float(x)) for x in gd.gamma[b, k])
            assert float(g.rho_minmax[b, k]) == min(float(gd.rho[b, k, :, i].max()) for i in range(cfg.n))
        assert float(g.growth[b]) == pytest.approx(max(float(g.gamma_max[b, k] / g.gamma_max[b, 10]) for k in range(10, 31)))
    assert torch.equal(g.gap[:, 1:], g.rho_minmax[:, 1:] / g.gamma_max[:, 1:])  # 0/0 at t = 0
    with pytest.raises(ValueError, match="t1=31"):
        scales.scale_gap(gd, 31)
    with pytest.raises(ValueError, match="traj"):
        scales.scale_gap("not a run", 0)


def test_scaled_config_keeps_figure1_ratios():
    cfg = mmcl.SyntheticConfig()
    for n in (50, 200, 800):
        c = scales.scaled_config(cfg, n)
        assert (c.n, c.d, c.M) == (n, 20 * n, int(0.45 * n))
        assert c.init_noise == pytest.approx(cfg.init_noise, rel=1e-12)
        assert c.n_snr2 == pytest.approx(cfg.n_snr2, rel=1e-12)
        assert c.sigma0 == cfg.init_noise / (cfg.sigma_xi * math.sqrt(20 * n))  # the chapter's formula, bit for bit
    assert scales.scaled_config(cfg, 100) == cfg.replace(sigma0=cfg.init_noise / (cfg.sigma_xi * math.sqrt(2000)))
    for bad in (1, 2.5, "50"):
        with pytest.raises(ValueError, match="n"):
            scales.scaled_config(cfg, bad)


def test_scale_gap_sweep_equals_separate_runs_and_a_numpy_fit(small_cfg):
    cfg = small_cfg.replace(n_epochs=25)
    sizes, seeds = (12, 24), (0, 1)
    sw = ex.scale_gap_sweep(cfg, sizes, seeds)
    assert sw.sizes == sizes
    c = scales.scaled_config(cfg, 12)
    tr = mmcl.simulate(c, mmcl.sample_synthetic(c, 1, dtype=torch.float64, with_ood=False), "single", "recursion")
    assert float(sw.by_n[12]["gamma"][1]) == pytest.approx(float(tr.gamma[-1].abs().max()), rel=1e-12)
    assert float(sw.by_n[12]["rho"][1]) == pytest.approx(float(tr.rho[-1].amax(0).min()), rel=1e-12)
    assert float(sw.by_n[12]["loss"][1]) == pytest.approx(float(tr.loss[-1]), rel=1e-12)
    g = np.array([float(sw.by_n[n]["gamma"].mean()) for n in sizes])
    assert sw.slope == pytest.approx(np.polyfit(np.log(sizes), np.log(g), 1)[0], rel=1e-9)
    with pytest.raises(ValueError, match="sizes"):
        ex.scale_gap_sweep(cfg, (12,), seeds)


def test_ood_feature_snr_equals_explicit_weights(run):
    cfg, data, gd = run
    W = gd.weights[:, -1]  # (B, m, d)
    sig = (W @ data.ood.nu[:, :, None])[..., 0].abs()  # (B, m)
    noi = (W @ data.ood.zeta_eval.transpose(-1, -2)).std(-1)
    expect = (sig / noi).amax(-1)
    assert torch.allclose(scales.ood_feature_snr(gd, data), expect, rtol=1e-9)
    no_ood = mmcl.SyntheticData.stack([mmcl.sample_synthetic(cfg, 3, dtype=torch.float64, with_ood=False)])
    with pytest.raises(ValueError, match="OOD"):
        scales.ood_feature_snr(gd, no_ood)


def test_sizes():
    assert [ex.sizes(k).seeds for k in ("tiny", "default", "full")] == [1, 5, 20]
    assert [ex.sizes(k).sweep_n for k in ("tiny", "default", "full")] == [(20, 40), (50, 100, 200),
                                                                          (50, 100, 200, 400, 800)]
    assert [ex.sizes(k).sweep_seeds for k in ("tiny", "default", "full")] == [1, 2, 5]
    assert ex.config("default") == mmcl.SyntheticConfig() == ex.config("full")  # what the chapter runs
    assert ex.config("tiny") == mmcl.SyntheticConfig().replace(n_epochs=150)  # stage 2 starts at T1 = 101
    assert ex.EPSILON == 0.05
    with pytest.raises(ValueError, match="size='medium' is unknown; valid: 'tiny', 'default', 'full'"):
        ex.config("medium")


def test_chain_summary_reads_the_chain_on_stage_2_and_prints_itself(run):
    cfg, data, gd = run
    t1 = 10
    ch = cv.comparator_chain(gd, data, cfg, cv.ComparatorConfig(epsilon=0.1), t1)
    s = ex.chain_summary(ch, cfg)
    # every number from the chain's own tensors, restricted to [T1, T] by explicit slicing
    pos = [float(ch.pos_ratio[b, k, i]) for b in range(2) for k in range(t1, 31) for i in range(cfg.n)]
    assert s.pos_ratio == (min(pos), max(pos))
    assert s.pos_held == pytest.approx(sum(p >= 1 for p in pos) / len(pos))
    assert s.neg_max == float(ch.neg_ratio[:, t1:].max())
    assert s.dist_sq == (float(ch.telescoping.distance_sq[:, t1].min()),
                         float(ch.telescoping.distance_sq[:, t1].max()))
    assert s.factor == pytest.approx(ch.factor17)
    assert s.avg_held == bool((ch.avg_loss <= ch.avg_bound).all())
    text = str(s)
    assert f"lambda = 2 tau L = {ch.telescoping.lam:.3f}" in text
    assert f"a factor >= {ch.factor17:.2f}" in text
    assert all(len(line) <= 88 for line in text.splitlines())
    with pytest.raises(ValueError, match="chain must be a ComparatorChain"):
        ex.chain_summary("not a chain", cfg)
