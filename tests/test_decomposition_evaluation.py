"""Eq. (11) decomposition, the logistic head, and the downstream protocols."""
from unittest import mock

import numpy as np
import pytest
import torch
from scipy.optimize import minimize

import mmcl
from mmcl.downstream.evaluation import embeddings, evaluate, evaluate_all, fit_logistic

from helpers import f64


def test_eq11_decomposition_recovers_known_coefficients():
    g = torch.Generator().manual_seed(0)
    d, n, m = 80, 12, 5
    mu = torch.randn(d, generator=g, dtype=torch.float64)
    xi = torch.randn(n, d, generator=g, dtype=torch.float64)
    gamma = torch.randn(m, generator=g, dtype=torch.float64)
    rho = torch.randn(m, n, generator=g, dtype=torch.float64)
    dW = gamma[:, None] * mu / mu.dot(mu) + rho @ (xi / (xi * xi).sum(-1, keepdim=True))
    dec = mmcl.decompose(dW, mu, xi)
    assert (dec.gamma - gamma).abs().max() < 1e-12
    assert (dec.rho - rho).abs().max() < 1e-12
    assert dec.residual.max() < 1e-12
    # a component outside the span shows up in the residual, not in the coefficients
    out = torch.randn(d, generator=g, dtype=torch.float64)
    out -= torch.linalg.lstsq(torch.cat([mu[None], xi]).T, out).solution @ torch.cat([mu[None], xi])
    dec2 = mmcl.decompose(dW + out, mu, xi)
    assert (dec2.gamma - gamma).abs().max() < 1e-10
    assert torch.allclose(dec2.residual, out.norm().expand(m))


def test_decompose_needs_n_below_d():
    with pytest.raises(ValueError, match="n \\+ 1 <= d"):
        mmcl.decompose(torch.zeros(2, 5), torch.ones(5), torch.ones(6, 5))


def test_preactivations_match_weights(small_cfg):
    data = f64(small_cfg)
    tr = mmcl.simulate(small_cfg, data, "single", "gd")
    v = torch.randn(7, small_cfg.d, dtype=torch.float64)
    pre = mmcl.preactivations(data, tr.gamma[-1], tr.rho[-1], v)
    assert torch.allclose(pre, tr.W @ v.T, atol=1e-10)


@pytest.mark.parametrize("k", [1, 400])
def test_preactivations_both_orders_match_weights(small_cfg, k):
    """Both orders of the products (through the data's inner products, or through W(t)) are
    exact: one state with many vectors takes the second, many states with one vector the first."""
    data = f64(small_cfg)
    tr = mmcl.simulate(small_cfg, data, "multi", "gd", keep_weights=True, record_every=5)
    v = torch.randn(k, small_cfg.d, dtype=torch.float64)
    for g, r, W in ((tr.gamma[-1], tr.rho[-1], tr.W), (tr.gamma, tr.rho, tr.weights)):
        assert torch.allclose(mmcl.preactivations(data, g, r, v), W @ v.T, atol=1e-10)
    assert torch.allclose(mmcl.preactivations(data, tr.gamma_tilde, tr.rho_tilde, v[:, :small_cfg.d_tilde], tilde=True),
                          tr.weights_tilde @ v[:, :small_cfg.d_tilde].T, atol=1e-10)


def test_preactivations_of_vectors_shared_by_a_batch(small_cfg):
    """Vectors shared by every draw of a batch (a leading dimension of 1, as an OOD set scored
    against many runs) give what the same vectors repeated per draw give, and what each draw's
    own weights give, in both orders of the products."""
    data = mmcl.SyntheticData.stack([f64(small_cfg, s) for s in range(3)])
    tr = mmcl.simulate(small_cfg, data, "single", "gd")
    for k in (1, 400):
        v = torch.randn(1, k, small_cfg.d, dtype=torch.float64, generator=torch.Generator().manual_seed(k))
        shared = mmcl.preactivations(data, tr.gamma[:, -1], tr.rho[:, -1], v)
        repeated = mmcl.preactivations(data, tr.gamma[:, -1], tr.rho[:, -1], v.expand(3, k, small_cfg.d).contiguous())
        assert shared.shape == (3, small_cfg.m, k)
        assert torch.allclose(shared, repeated, atol=1e-10, rtol=0)
        assert torch.allclose(shared, tr.W @ v[0].T, atol=1e-10, rtol=0)


@pytest.mark.parametrize("k", [1, 400])
def test_preactivations_of_many_states_of_a_batch(small_cfg, k):
    """States with a leading time dimension before the batch's (as ``evaluate_all`` passes them)
    give each step's ``W(t) v^T`` of each draw, in both orders of the products (the time
    dimension is folded into the rows of one product, not broadcast over the draws' vectors)."""
    data = mmcl.SyntheticData.stack([f64(small_cfg, s) for s in range(3)])
    tr = mmcl.simulate(small_cfg, data, "single", "gd", keep_weights=True, record_every=4)
    v = torch.randn(3, k, small_cfg.d, dtype=torch.float64, generator=torch.Generator().manual_seed(k))
    gamma, rho = tr.gamma.transpose(0, 1), tr.rho.transpose(0, 1)  # (T, B, m), (T, B, m, n)
    expected = (tr.weights @ v[:, None].transpose(-1, -2)).transpose(0, 1)  # (T, B, m, k)
    for order in (False, True):  # through the data's inner products, then through W(t)
        with mock.patch("mmcl.dynamics.forward.weights_cheaper", return_value=order):
            pre = mmcl.preactivations(data, gamma, rho, v)
        assert pre.shape == expected.shape
        assert torch.allclose(pre, expected, atol=1e-10, rtol=0)


@pytest.mark.parametrize("k", [1, 400])
def test_preactivations_of_many_runs_of_one_shared_draw(small_cfg, k):
    """Runs that share one draw (a sweep's runs of one seed that differ in, e.g., tau), scored
    against that draw given once (batch dimension 1): each run's ``W v^T``, in both orders of the
    products, with and without a leading time dimension before the runs'."""
    draw = f64(small_cfg)
    cfgs = [small_cfg.replace(tau=t) for t in (0.1, 0.2, 0.4)]
    data = mmcl.SyntheticData.stack([draw] * 3)
    tr = mmcl.simulate(cfgs, data, "single", "gd", keep_weights=True, record_every=6)
    one = mmcl.SyntheticData.stack([draw])  # batch of one: the shared draw
    v = torch.randn(1, k, small_cfg.d, dtype=torch.float64, generator=torch.Generator().manual_seed(k))
    for order in (False, True):
        with mock.patch("mmcl.dynamics.forward.weights_cheaper", return_value=order):
            last = mmcl.preactivations(one, tr.gamma[:, -1], tr.rho[:, -1], v)  # (runs, m, k)
            every = mmcl.preactivations(one, tr.gamma.transpose(0, 1), tr.rho.transpose(0, 1), v)  # (T, runs, m, k)
        assert last.shape == (3, small_cfg.m, k) and every.shape == (tr.steps.shape[0], 3, small_cfg.m, k)
        assert torch.allclose(last, tr.W @ v[0].T, atol=1e-10, rtol=0)
        assert torch.allclose(every, (tr.weights @ v[0].T).transpose(0, 1), atol=1e-10, rtol=0)
    assert not torch.allclose(tr.W[0], tr.W[2])  # the runs differ: the check is not of one run thrice


def test_evaluate_all_on_a_shared_draw_equals_each_run_on_its_own(small_cfg):
    """``evaluate_all`` of a batch of runs against the one draw they share (batch dimension 1) gives
    each run's accuracies as scoring it alone does."""
    draw = f64(small_cfg)
    cfgs = [small_cfg.replace(tau=t) for t in (0.1, 0.3)]
    tr = mmcl.simulate(cfgs, mmcl.SyntheticData.stack([draw] * 2), "single", "recursion")
    shared = evaluate_all(tr, mmcl.SyntheticData.stack([draw]), every=20)
    for b, cfg in enumerate(cfgs):
        alone = evaluate_all(mmcl.simulate(cfg, draw, "single", "recursion"), draw, every=20)
        for p, ev in alone.items():
            assert torch.allclose(shared[p].accuracy[b], ev.accuracy, atol=1.0 / small_cfg.n_heldout + 1e-12, rtol=0)
            assert torch.allclose(shared[p].fit_accuracy[b], ev.fit_accuracy, atol=1.0 / small_cfg.n_test + 1e-12,
                                  rtol=0)


def test_logistic_head_matches_scipy():
    g = torch.Generator().manual_seed(1)
    X = torch.randn(3, 60, 4, generator=g, dtype=torch.float64) * torch.tensor([1.0, 3.0, 0.5, 2.0])
    y = torch.sign(X[..., 0] + 0.5 * torch.randn(3, 60, generator=g, dtype=torch.float64))
    l2 = 0.05
    head = fit_logistic(X, y, l2=l2)
    for b in range(3):
        Xs = ((X[b] - head.mean[b]) / head.scale[b]).numpy()
        yb = y[b].numpy()

        def f(th):
            z = Xs @ th[:-1] + th[-1]
            return np.mean(np.logaddexp(0, -yb * z)) + 0.5 * l2 * th[:-1] @ th[:-1]

        ref = minimize(f, np.zeros(5), method="BFGS", options={"gtol": 1e-12}).x
        assert np.allclose(head.weight[b].numpy(), ref[:-1], atol=1e-6)
        assert np.allclose(head.bias[b].numpy(), ref[-1], atol=1e-6)


def test_embeddings_are_sum_of_patch_relus(small_cfg):
    data = f64(small_cfg)
    tr = mmcl.simulate(small_cfg, data, "single", "gd")
    ood = data.ood
    h = embeddings(data, tr.gamma[-1], tr.rho[-1], ood.nu, ood.y_eval, ood.zeta_eval)
    direct = torch.relu(ood.y_eval[:, None] * (tr.W @ ood.nu)[None]) + torch.relu(ood.zeta_eval @ tr.W.T)
    assert torch.allclose(h, direct, atol=1e-10)


def test_evaluate_protocols_shapes_and_errors(small_cfg):
    data = f64(small_cfg)
    tr = mmcl.simulate(small_cfg, data, "multi", "recursion")
    evs = evaluate_all(tr, data, every=50)
    assert set(evs) == {"adapt", "transfer"}
    for ev in evs.values():
        assert ev.steps.tolist() == [0, 50, 100, 150, 200]
        assert ev.accuracy.shape == (5,) and ((ev.accuracy >= 0) & (ev.accuracy <= 1)).all()
    one = evaluate(tr, data, "transfer", every=50)
    assert torch.equal(one.accuracy, evs["transfer"].accuracy)
    with pytest.raises(ValueError, match="protocol='zero'"):
        evaluate(tr, data, "zero")
    data.ood = None
    with pytest.raises(ValueError, match="OOD set"):
        evaluate(tr, data)


def test_trajectory_last_scores_only_the_final_step(small_cfg):
    data = mmcl.SyntheticData.stack([f64(small_cfg, s) for s in range(2)])
    tr = mmcl.simulate(small_cfg, data, "multi", "recursion", record_derivatives=True)
    last = tr.last()
    assert last.steps.tolist() == [small_cfg.n_epochs]
    assert last.gamma.shape == (2, 1, small_cfg.m) and torch.equal(last.rho[:, 0], tr.rho[:, -1])
    assert torch.equal(last.lprime_tilde[:, 0], tr.lprime_tilde[:, -1]) and torch.equal(last.loss, tr.loss)
    full = evaluate_all(tr, data, every=small_cfg.n_epochs)
    one = evaluate_all(last, data)
    for p in ("adapt", "transfer"):
        assert torch.equal(one[p].accuracy[:, 0], full[p].accuracy[:, -1])
