"""The OOD responses of a feature split by Eq. (11) (mmcl.downstream.response), and the direction of
the OOD signal (SyntheticConfig.nu_cos)."""
import math

import pytest
import torch

import mmcl
from mmcl.downstream.evaluation import evaluate_all
from mmcl.downstream.response import (PARTS, VARIANTS, ablated_accuracy, decisive_part, ood_response,
                                      response_parts, run_downstream)
from mmcl.model.data import sample_ood

F64 = torch.float64
TINY = mmcl.SyntheticConfig(d=60, d_tilde=50, n=10, m=6, M=4, n_epochs=15, n_test=30, n_heldout=40, nu_cos=0.3)


@pytest.mark.parametrize("mode", ["single", "multi"])
def test_parts_add_up_to_the_explicit_weights(mode):
    """Against the weights the gd engine keeps (float64): init = <w_r(0), v>, signal = gamma_r
    <mu, v>/||mu||^2, memorised = <w_r(t) - w_r(0) - gamma_r mu/||mu||^2, v>, and their sum is
    <w_r(t), v>, for v = zeta and v = nu, at the last and at a middle step."""
    data = mmcl.sample_synthetic(TINY, 3, dtype=F64)
    tr = mmcl.simulate(TINY, data, mode, "gd", keep_weights=True)
    ood = data.ood
    mu = data.mu
    for k in (-1, 7):
        W = tr.weights[k]
        gamma = tr.gamma[k]
        resp = ood_response(tr, data, k)
        assert resp.step == int(tr.steps[k])
        for parts, V in ((resp.zeta, ood.zeta_eval), (resp.nu, ood.nu[None])):
            learned_mu = gamma[:, None] * mu[None] / mu.dot(mu)
            assert torch.allclose(parts.total, W @ V.T, atol=1e-12, rtol=0)
            assert torch.allclose(parts.init, data.W0 @ V.T, atol=1e-13, rtol=0)
            assert torch.allclose(parts.signal, learned_mu @ V.T, atol=1e-13, rtol=0)
            assert torch.allclose(parts.memorised, (W - data.W0 - learned_mu) @ V.T, atol=1e-12, rtol=0)
            assert parts.residual.abs().max() < 1e-12
    # the memorised part is not zero, and the signal part of <w_r, nu> is gamma_r ||nu|| nu_cos / ||mu||
    assert float(resp.zeta.memorised.abs().max()) > 1e-3
    assert torch.allclose(resp.nu.signal[:, 0], gamma * TINY.nu_norm * TINY.nu_cos / TINY.mu_norm, atol=1e-13)


def test_parts_of_the_recursion_match_the_gd_engine():
    data = mmcl.sample_synthetic(TINY, 1, dtype=F64)
    gd = mmcl.simulate(TINY, data, "multi", "gd")
    rec = mmcl.simulate(TINY, data, "multi", "recursion")
    a, b = ood_response(gd, data).zeta, ood_response(rec, data).zeta
    for p in PARTS + ("total",):
        assert torch.allclose(getattr(a, p), getattr(b, p), atol=1e-9)


def test_batched_and_keep():
    draws = mmcl.SyntheticData.stack([mmcl.sample_synthetic(TINY, s, dtype=F64) for s in (0, 1)])
    tr = mmcl.simulate(TINY, draws, "single", "recursion")
    resp = ood_response(tr, draws)
    assert resp.zeta.total.shape == (2, TINY.m, TINY.n_heldout) and resp.nu.total.shape == (2, TINY.m, 1)
    one = ood_response(mmcl.simulate(TINY, draws[1], "single", "recursion"), draws[1])
    assert torch.allclose(resp.zeta.memorised[1], one.zeta.memorised, atol=1e-12)
    z = resp.zeta
    assert torch.equal(z.keep(PARTS), z.total)
    assert torch.allclose(z.keep(("init", "memorised")), z.init + z.memorised)
    assert set(resp.spread()) == set(PARTS) | {"total"} and resp.spread()["init"].shape == (2, TINY.m)
    with pytest.raises(ValueError, match="unknown part"):
        z.keep(("noise",))


def test_ablation_trained_is_evaluate_all_and_removal_changes_it():
    data = mmcl.sample_synthetic(TINY.replace(nu_cos=1.0), 0, dtype=F64)
    tr = mmcl.simulate(TINY, data, "multi", "recursion")
    abl = ablated_accuracy(tr, data)
    ev = evaluate_all(tr, data)
    for p in ("adapt", "transfer"):
        assert float(abl["trained"][p]) == float(ev[p].accuracy[-1])
    assert set(abl) == set(VARIANTS)
    # without the signal part of <w_r, nu> the label is (almost) gone from the OOD inputs
    assert float(abl["nu: without signal"]["adapt"]) < float(abl["trained"]["adapt"])
    with pytest.raises(ValueError, match="unknown variant"):
        ablated_accuracy(tr, data, ["zeta: without everything"])
    with pytest.raises(ValueError, match="index"):
        ablated_accuracy(tr, data, index=10 ** 6)


def test_decisive_part():
    t = lambda v: {"adapt": torch.tensor([v]), "transfer": torch.tensor([0.5])}  # noqa: E731
    abl = {"trained": t(0.6), "zeta: without init": t(0.9), "zeta: without signal": t(0.65),
           "zeta: without memorised": t(0.61)}
    assert decisive_part(abl, "adapt") == ("init", pytest.approx(0.3))
    assert decisive_part(abl, "transfer") == (None, pytest.approx(0.0))
    assert decisive_part(abl, "adapt", min_gain=0.4)[0] is None
    with pytest.raises(ValueError, match="protocol"):
        decisive_part(abl, "zero")
    with pytest.raises(ValueError, match="lacks"):
        decisive_part({"trained": t(0.5)}, "adapt")


def test_response_parts_bad_input():
    data = mmcl.sample_synthetic(TINY, 0, dtype=F64)
    with pytest.raises(ValueError, match="disagree"):
        response_parts(data, torch.zeros(TINY.m), torch.zeros(TINY.m + 1, TINY.n), data.ood.zeta_eval)
    with pytest.raises(ValueError, match="tilde"):
        response_parts(data._drop(tilde=True), torch.zeros(TINY.m), torch.zeros(TINY.m, TINY.n), data.xi, tilde=True)
    with pytest.raises(ValueError, match="OOD set"):
        ood_response(mmcl.simulate(TINY, data, "single", "recursion"), data._drop(ood=True))


def test_run_downstream_small():
    cfg = TINY.replace(nu_cos=1.0)
    res = run_downstream(cfg, [0, 1], (1.0, 0.0), eval_every=5)
    assert res.eval_steps.tolist() == [0, 5, 10, 15]
    assert res.accuracy[(1.0, "multi", "adapt")].shape == (2, 4)
    # training does not depend on nu: the two angles share the runs; at nu_cos = 0 nu has no mu part
    assert torch.equal(res.response[(1.0, "single")].zeta.total, res.response[(0.0, "single")].zeta.total)
    assert float(res.response[(0.0, "multi")].nu.signal.abs().max()) < 1e-6
    assert res.condition[1.0] == pytest.approx(cfg.nu_norm * math.sqrt(cfg.d) / cfg.mu_norm)
    # the paper's arm is the Figure 1 run itself
    from mmcl.experiments.figure1 import run_figure1
    fig1 = run_figure1(cfg, [0, 1], eval_every=5)
    for mode in ("single", "multi"):
        for p in ("adapt", "transfer"):
            assert torch.equal(res.accuracy[(1.0, mode, p)], fig1.curves[mode].accuracy[p])
    with pytest.raises(ValueError, match="nu_cos"):
        run_downstream(cfg, [0], (1.5,))
    with pytest.raises(ValueError, match="seeds"):
        run_downstream(cfg, [], (1.0,))


# ------------------------------------------------------------------------------------------
# the direction of nu (SyntheticConfig.nu_cos)
# ------------------------------------------------------------------------------------------
def test_nu_condition_at_figure1():
    cfg = mmcl.SyntheticConfig()
    assert cfg.nu_mu == 10.0 and cfg.nu_sin == 0.0
    assert cfg.mu_norm ** 2 / math.sqrt(cfg.d) == pytest.approx(0.559, abs=1e-3)
    assert cfg.nu_condition == pytest.approx(10 / (25 / math.sqrt(2000)), rel=1e-12)  # 17.9
    tilted = cfg.replace(nu_cos=0.05)
    assert tilted.nu_mu == pytest.approx(0.5) and tilted.nu_condition < 1
    assert cfg.replace(nu_cos=-0.05).nu_condition == tilted.nu_condition


@pytest.mark.parametrize("value", [1.5, -1.01, float("nan"), float("inf"), True, "1"])
def test_nu_cos_rejected(value):
    with pytest.raises(ValueError, match="SyntheticConfig.nu_cos"):
        mmcl.SyntheticConfig(nu_cos=value)


def test_nu_explicit_draw():
    cfg = mmcl.SyntheticConfig(d=50, n=8, m=4, M=3, n_test=10, n_heldout=12)
    base = sample_ood(cfg, 5, dtype=F64)
    assert base.nu[0] == cfg.nu_norm and bool((base.nu[1:] == 0).all())
    for c in (0.3, -0.6, 0.0):
        o = sample_ood(cfg.replace(nu_cos=c), 5, dtype=F64)
        s = math.sqrt(1 - c * c)
        expect = torch.zeros(cfg.d, dtype=F64)
        expect[0], expect[1] = cfg.nu_norm * c, cfg.nu_norm * s
        assert torch.allclose(o.nu, expect, atol=1e-15)
        assert float(o.nu.norm()) == pytest.approx(cfg.nu_norm, rel=1e-14)
        # the random tensors are those of the default: only nu turns
        for name in ("y_fit", "zeta_fit", "y_eval", "zeta_eval"):
            assert torch.equal(getattr(o, name), getattr(base, name))
    # the training draw does not read nu_cos, and e2 of modality 1 is used by nothing else
    a = mmcl.sample_synthetic(cfg, 2, dtype=F64)
    b = mmcl.sample_synthetic(cfg.replace(nu_cos=0.3), 2, dtype=F64)
    for name in ("y", "mu", "xi", "eps", "W0", "mu_tilde", "xi_tilde", "W0_tilde", "negatives"):
        assert torch.equal(getattr(a, name), getattr(b, name))
    assert a.mu[1] == 0


def test_nu_span_draw():
    cfg = mmcl.SyntheticConfig(d=10 ** 6, n=8, m=4, M=3, n_test=10, n_heldout=12, nu_cos=0.25)
    data = mmcl.sample_synthetic(cfg, 0, span=True, dtype=F64)
    nu, mu = data.ood.nu, data.mu
    assert data.width == 2 * cfg.n + cfg.m + 2  # two fixed directions: e1 and nu's part along e2
    assert float(nu.norm()) == pytest.approx(cfg.nu_norm, rel=1e-14)
    assert float(nu @ mu) == pytest.approx(cfg.nu_mu, rel=1e-14)
    # the span draw at the default angle keeps its width (one fixed direction)
    assert mmcl.sample_synthetic(cfg.replace(nu_cos=1.0), 0, span=True).width == 2 * cfg.n + cfg.m + 1
    # in law: <xi_i, nu> ~ N(0, ||nu||^2 sigma_xi^2) over many draws of the basis
    vals = torch.cat([(lambda d: d.xi @ d.ood.nu)(mmcl.sample_synthetic(cfg, s, span=True, dtype=F64))
                      for s in range(150)])
    assert abs(float(vals.std()) / cfg.nu_norm - 1) < 0.1 and abs(float(vals.mean())) < 0.3


# the sweep caches its unit draws by shape and seed: the keys (mmcl/experiments/sweep/draws.py) and the span
# batches' grouping (runner.py) include nu's direction, else a nu_cos grid would reuse the first angle's nu
@pytest.mark.parametrize("span", [False, True])
def test_nu_cos_is_a_sweep_parameter(span):
    """A sweep over nu_cos gives, per value, what the direct run on sample_synthetic(cfg, seed) gives."""
    from mmcl.experiments.sweep import sweep
    from mmcl.experiments.sweep.grid import expand_grid

    base = mmcl.SyntheticConfig(d=120, n=12, m=5, M=4, n_epochs=20, n_test=40, n_heldout=80)
    runs = expand_grid({"nu_cos": [1.0, 0.05]}, [0], ["single"], base)
    assert [r.cfg.nu_cos for r in runs] == [1.0, 0.05]
    table = sweep({"nu_cos": [1.0, 0.05]}, [0], "single", base=base, cache=False, progress=False, span=span)
    for c, acc in zip(table.column("nu_cos"), table.column("acc_adapt")):
        cfg = base.replace(nu_cos=c)
        data = mmcl.sample_synthetic(cfg, 0, span=span)
        ev = evaluate_all(mmcl.simulate(cfg, data, "single", "recursion").last(), data)
        assert acc == pytest.approx(float(ev["adapt"].accuracy[-1]))


def test_signal_reading_error_is_the_normal_tail():
    """Phi(-||nu||/sigma_xi), checked against scipy's normal distribution and by its meaning: the
    sign rule on y ||nu|| + zeta_1 errs with that probability (Monte Carlo, 400,000 draws)."""
    from scipy.stats import norm

    from mmcl.downstream.response import signal_reading_error

    cfg = mmcl.SyntheticConfig()
    for nu_norm, sigma in ((2.0, 1.0), (0.5, 1.0), (2.0, 3.0)):
        c = cfg.replace(nu_norm=nu_norm, sigma_xi=sigma)
        assert abs(signal_reading_error(c) - norm.cdf(-nu_norm / sigma)) <= 1e-15
    c = cfg.replace(nu_norm=1.0, sigma_xi=1.0)
    g = torch.Generator().manual_seed(0)
    z = torch.randn(400_000, generator=g, dtype=torch.float64)
    assert abs(float(((1.0 + z) < 0).double().mean()) - signal_reading_error(c)) <= 3e-3
    with pytest.raises(ValueError, match="cfg must be a SyntheticConfig"):
        signal_reading_error({"nu_norm": 2.0})
