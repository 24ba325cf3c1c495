"""The stage-1 chapter's summaries (mmcl.proofs.single_stage1: recursion_vs_gd, noise_growth,
sign_set_report, b_coefficient_medians) against their definitions computed independently, and the
size table of its experiment module (mmcl.experiments.single_stage1)."""
import math

import numpy as np
import pytest
import torch

import mmcl
from mmcl.experiments import single_stage1 as ex
from mmcl.proofs import preactivations
from mmcl.proofs import single_stage1 as dg
from mmcl.proofs import predictions as theory
from helpers import f64


@pytest.fixture(scope="module")
def cfg(small_cfg):
    return small_cfg.replace(n_epochs=40)


@pytest.fixture(scope="module")
def batch(cfg):
    data = mmcl.SyntheticData.stack([f64(cfg, s) for s in (0, 1)])
    traj = mmcl.simulate(cfg, data, "single", "recursion", record_derivatives=True)
    hist = preactivations.preactivation_history(traj, data, with_augmented=True)
    return data, traj, hist, dg.b_coefficients(traj, data, cfg, history=hist)


def _lower_median(v):
    """torch's (nan)median: the lower of the two middle values, nan ignored."""
    v = np.sort(v[~np.isnan(v)])
    return float(v[(len(v) - 1) // 2])


def test_recursion_vs_gd(cfg):
    data = f64(cfg, 4)
    check = ex.recursion_vs_gd(cfg, data, record_every=5)
    assert check.steps.tolist() == list(range(0, cfg.n_epochs + 1, 5))
    rec = mmcl.simulate(cfg, data, "single", "recursion")
    assert torch.equal(check.rec.gamma, rec.gamma)
    # the errors are the differences between GD's decomposed weights and the recursion ...
    assert check.err_rho == float((check.dec.rho - rec.rho[check.steps]).abs().max())
    assert check.err_loss == float((check.gd.loss - rec.loss).abs().max())
    # ... and GD's weights rebuilt from the recursion's coefficients through Eq. (11) are GD's weights
    xi_n = data.xi / (data.xi * data.xi).sum(-1, keepdim=True)
    W = (data.W0 + rec.gamma[check.steps][..., None] * data.mu / (data.mu @ data.mu)
         + rec.rho[check.steps] @ xi_n)
    torch.testing.assert_close(W, check.gd.weights, rtol=0, atol=1e-10)
    assert max(check.err_gamma, check.err_rho, check.err_loss) < 1e-9
    assert float(rec.rho.abs().max()) > 0.1  # not trivially zero
    with pytest.raises(ValueError, match="batch"):
        ex.recursion_vs_gd(cfg, mmcl.SyntheticData.stack([data, data]))
    with pytest.raises(ValueError, match="cfg"):
        ex.recursion_vs_gd(None, data)


def test_noise_growth(cfg, batch):
    data, traj, hist, bc = batch
    g = dg.noise_growth(traj, data, cfg, coefficients=bc, window=(1, 20))
    s = cfg.lr * cfg.sigma_xi ** 2 * cfg.d / (cfg.n * cfg.m * cfg.tau)
    assert g.step_scale == pytest.approx(s) and g.rate_lemma == pytest.approx(0.96 * s)
    assert g.T1 == pytest.approx(math.log(20 / (cfg.sigma0 * cfg.sigma_xi * math.sqrt(cfg.d))) / math.log1p(0.96 * s))
    # N_i(t) of the proof of Lemma 5.2, by loops over neurons from W0 and rho
    P0 = data.W0 @ data.xi.transpose(-1, -2)  # (S, m, n)
    N = torch.zeros(traj.rho.shape[:2] + (cfg.n,), dtype=torch.float64)
    for r in range(cfg.m):
        on = (P0[:, r] > 0)[:, None, :]
        N += torch.where(on, traj.rho[:, :, r] + P0[:, r][:, None, :], torch.zeros(()))
    torch.testing.assert_close(g.N, N / cfg.m)
    # the fit of the median: numpy's log-linear least squares
    for b in range(2):
        med = g.N_med[b].numpy()
        slope = np.polyfit(np.arange(1, 21), np.log(med[1:21]), 1)[0]
        assert float(g.fit.rate[b]) == pytest.approx(math.expm1(slope), rel=1e-9)
    # the B dynamics' rate, from a and b of the + class at t = 0
    a0 = np.array([_lower_median(v) for v in bc.a_plus[:, 0].numpy()])
    b0 = np.array([_lower_median(v) for v in bc.b_plus[:, 0].numpy()])
    np.testing.assert_allclose(g.rate_ab.numpy(), (a0 - b0) * s, rtol=1e-12)
    # the end of stage 1: first step with min_i max_r rho >= 1, and max_r |gamma|
    stat = traj.rho.amax(-2).amin(-1)
    for b in range(2):
        hit = [int(t) for t, v in zip(traj.steps, stat[b]) if v >= 1]
        assert (float(g.t1_measured[b]) == hit[0]) if hit else math.isnan(float(g.t1_measured[b]))
        assert float(g.gamma_max[b, -1]) == max(abs(float(v)) for v in traj.gamma[b, -1])
    torch.testing.assert_close(g.rho_min_max, stat)
    with pytest.raises(ValueError, match="window"):
        dg.noise_growth(traj, data, cfg, coefficients=bc, window=[1, 20])


def test_sign_set_report(cfg, batch):
    data, traj, hist, _ = batch
    rep = dg.sign_set_report(traj, data, history=hist)
    S, K = traj.gamma.shape[:2]
    # cross terms of <w_r(t), mu> through Eq. (11): sum_k rho_{r,k} <xi_k, mu> / ||xi_k||^2
    cross = traj.rho @ ((data.xi @ data.mu[..., None]) / (data.xi * data.xi).sum(-1, keepdim=True))[:, None]
    torch.testing.assert_close(rep.cross_mu, cross[..., 0], rtol=0, atol=1e-12)
    torch.testing.assert_close(rep.signal0, (data.W0 @ data.mu[..., None])[..., 0])
    # flipped neurons and pairs leaving I_{r,-}(0), by loops over the recorded steps
    sig = rep.signal
    flipped = torch.zeros(S, cfg.m, dtype=torch.bool)
    for t in range(K):
        flipped |= ((sig[:, t] > 0) != (sig[:, 0] > 0)) | ((sig[:, t] < 0) != (sig[:, 0] < 0))
    assert torch.equal(rep.flipped, flipped)
    neg0 = hist.noise[:, 0] < 0
    left = torch.zeros_like(neg0)
    for t in range(K):
        left |= neg0 & ~(hist.noise[:, t] < 0)
    assert torch.equal(rep.left, left.flatten(1).sum(-1))
    assert torch.equal(rep.rho_max, traj.rho.flatten(1).amax(-1))
    assert float(rep.neg_init.max()) > 0  # at finite d the cross terms move I_{r,-}(0) pairs
    # without cross terms Lemmas C.3 and C.7 hold exactly
    clean = preactivations.without_cross_terms(data)
    tc = mmcl.simulate(cfg, clean, "single", "recursion")
    rc = dg.sign_set_report(tc, clean)
    assert int(rc.flipped.sum()) == 0 and float(rc.neg_init.max()) == 0.0 and int(rc.left.sum()) == 0
    assert float(rc.cross_mu.abs().max()) < 1e-12


def test_b_coefficient_medians(batch):
    *_, bc = batch
    med = dg.b_coefficient_medians(bc)
    a = torch.cat([bc.a_plus, bc.a_minus], -1)  # (S, K, 2m)
    b = torch.cat([bc.b_plus, bc.b_minus], -1)
    K = a.shape[1]
    assert med.a.shape == med.b.shape == med.ratio.shape == (K,)
    for k in (0, K // 2, K - 1):
        for got, v in ((med.a, a), (med.b, b), (med.ratio, b / a)):
            assert float(got[k]) == _lower_median(v[:, k].flatten().numpy())
    with pytest.raises(ValueError, match="coefficients"):
        dg.b_coefficient_medians(a)


def test_sizes():
    assert ex.sizes("default").seeds == 5 and ex.sizes("full").seeds == 20 and ex.sizes("tiny").seeds < 5
    assert ex.config("default") == mmcl.SyntheticConfig() == ex.config("full")  # what the chapter runs
    assert ex.config("tiny").n_epochs < ex.config("default").n_epochs
    with pytest.raises(ValueError, match="size='medium' is unknown; valid: 'tiny', 'default', 'full'"):
        ex.config("medium")


def test_stage1_runs_hands_the_chapter_its_runs():
    """The cached runs the chapter reads (data, trajectory, coefficients) are the ones its summaries
    were computed from: recomputing them from the same seeds gives the same numbers."""
    runs = ex.stage1_runs("tiny", "cpu")
    cfg = runs["cfg"]
    assert cfg == ex.config("tiny")
    data = mmcl.SyntheticData.stack([mmcl.sample_synthetic(cfg, s, dtype=torch.float64)
                                     for s in range(ex.sizes("tiny").seeds)])
    assert torch.equal(runs["data"].xi, data.xi) and torch.equal(runs["data"].W0, data.W0)
    traj = mmcl.simulate(cfg, data, "single", "recursion", record_derivatives=True)
    assert torch.equal(runs["traj"].rho, traj.rho) and torch.equal(runs["traj"].loss, traj.loss)
    growth = dg.noise_growth(traj, data, cfg, coefficients=runs["coefficients"], window=(1, 20))
    torch.testing.assert_close(runs["growth"].N, growth.N, rtol=0, atol=0)
    assert torch.equal(runs["growth"].t1_measured, growth.t1_measured)
    assert set(runs["reports"]) == {"Figure 1 data", "orthogonal noise"}
