"""Multi-modal stage 1 (Sec. 5.2): synchronisation of the paired neurons (Lemma D.3), our linear
stage-1 map and its prediction of the synchronisation step, the loss-derivative band of Lemma D.1
and the noise cases of Lemma D.9."""
import dataclasses
import math

import pytest
import torch

import mmcl
from mmcl.proofs import multi_stage1 as sync
from mmcl.proofs import predictions as theory
from mmcl.model.data import sample_synthetic_batch
def f64(cfg, seed=0):
    """A float64 draw (defined here rather than imported from conftest, whose module name another
    conftest.py under tests/ can shadow)."""
    return mmcl.sample_synthetic(cfg, seed, dtype=torch.float64)


def _orthogonal_draw(cfg, seed):
    """A draw whose noise patches are orthogonal to the signal (mu lies along e1, mu~ along e2), so
    that no noise coefficient leaks into <w_r, mu> or <w~_r, mu~>."""
    d = f64(cfg, seed)
    xi, xit = d.xi.clone(), d.xi_tilde.clone()
    xi[:, 0] = 0.0
    xit[:, 1] = 0.0
    return dataclasses.replace(d, xi=xi, xi_tilde=xit)


@pytest.fixture(scope="module")
def linear_regime():
    """Tiny initial weights (uniform loss derivatives) and orthogonal noise: the premises of the map."""
    cfg = mmcl.SyntheticConfig(d=300, d_tilde=250, n=24, m=40, M=10, n_epochs=80, n_test=60, n_heldout=200,
                               sigma0=1e-5)
    out = []
    for seed in range(3):
        data = _orthogonal_draw(cfg, seed)
        traj = mmcl.simulate(cfg, data, "multi", "recursion", record_derivatives=True)
        out.append((cfg, data, traj))
    return out


@pytest.fixture(scope="module")
def small_run(small_cfg):
    cfg = small_cfg.replace(sigma0=0.05)
    data = mmcl.SyntheticData.stack([f64(cfg, s) for s in range(3)])
    return cfg, data, mmcl.simulate(cfg, data, "multi", "recursion", record_derivatives=True)


def test_stage1_closed_form_equals_iterated_linear_map():
    gen = torch.Generator().manual_seed(0)
    u0 = torch.randn(4, 7, generator=gen, dtype=torch.float64)
    v0 = torch.randn(4, 7, generator=gen, dtype=torch.float64)
    kappa = torch.tensor([0.01, 0.07, 0.3, 0.9], dtype=torch.float64)
    steps = torch.arange(31)
    u, v = sync.stage1_signal_prediction(u0, v0, kappa, steps)
    assert u.shape == (4, 31, 7) and v.shape == (4, 31, 7)
    uu, vv = u0.clone(), v0.clone()
    for t in range(31):  # iterate (u, v) -> (u + kappa v, v + kappa u) directly
        assert torch.allclose(u[:, t], uu, rtol=1e-12, atol=1e-12)
        assert torch.allclose(v[:, t], vv, rtol=1e-12, atol=1e-12)
        uu, vv = uu + kappa[:, None] * vv, vv + kappa[:, None] * uu


def test_predicted_sync_step_is_first_agreement_of_the_linear_map():
    gen = torch.Generator().manual_seed(1)
    u0 = torch.randn(200, generator=gen, dtype=torch.float64)
    v0 = torch.randn(200, generator=gen, dtype=torch.float64)
    kappa = 0.05
    pred = sync.predicted_sync_step(u0, v0, kappa)
    u, v = sync.stage1_signal_prediction(u0, v0, kappa, torch.arange(400))
    agree = u * v > 0
    first = torch.where(agree.any(0), agree.to(torch.int64).argmax(0).to(torch.float64),
                        torch.full((200,), math.inf, dtype=torch.float64))
    assert torch.equal(pred, first)
    assert bool((pred[u0 * v0 > 0] == 0).all())
    assert bool(((pred > 0) == (u0 * v0 < 0)).all())


def test_pairing_rate_is_lemma54_rate_with_exact_constant():
    cfg = mmcl.SyntheticConfig()
    ratio = theory.pairing_rate(cfg) / theory.multi_growth_rate(cfg)
    assert ratio == pytest.approx((cfg.M / (2 * (cfg.M + 1))) / 0.48, rel=1e-12)


def test_linear_stage1_map_is_exact_with_uniform_derivatives_and_orthogonal_noise(linear_regime):
    for cfg, data, traj in linear_regime:
        syn = sync.synchronisation(data, traj)
        T = 50
        spread = sync.loss_derivative_spread(traj)
        assert bool((spread[:T + 1] < 1 + 1e-3).all())  # the premise: Lemma D.1 with C_l ~ 1
        u, v = sync.stage1_signal_prediction(syn.u[0], syn.v[0], syn.kappa, syn.steps[:T + 1])
        assert (syn.u[:T + 1] - u).abs().max() <= 1e-3 * u.abs().max()
        assert (syn.v[:T + 1] - v).abs().max() <= 1e-3 * v.abs().max()
        opp = syn.opposite0
        assert int(opp.sum()) > 0
        assert torch.equal(syn.sync_step[opp], syn.predicted_step[opp])
        assert torch.equal(syn.sign[opp], syn.predicted_sign[opp])


def test_prediction_misses_with_a_wrong_kappa(linear_regime):
    """The exactness above is not automatic: a 20 % error in kappa shifts the predicted steps."""
    cfg, data, traj = linear_regime[0]
    syn = sync.synchronisation(data, traj)
    opp = syn.opposite0
    wrong = sync.predicted_sync_step(syn.u[0], syn.v[0], 1.2 * syn.kappa)
    assert not torch.equal(wrong[opp], syn.sync_step[opp])


def test_synchronisation_sets_match_initial_signs(small_run):
    cfg, data, traj = small_run
    syn = sync.synchronisation(data, traj)
    a0 = torch.einsum("bmd,bd->bm", data.W0, data.mu)
    b0 = torch.einsum("bmd,bd->bm", data.W0_tilde, data.mu_tilde)
    assert torch.equal(syn.opposite0, a0 * b0 < 0)
    assert torch.equal(syn.n_opposite, (a0 * b0 < 0).sum(-1))
    assert bool((syn.sync_step[~syn.opposite0] == 0).all())
    assert torch.allclose(syn.u[:, 0], a0 / data.mu.norm(dim=-1, keepdim=True), rtol=1e-10)
    # per batch element kappa from the run's own lr and tau
    assert torch.allclose(syn.kappa, torch.full((3,), theory.pairing_rate(cfg), dtype=torch.float64))


def test_lemma_d3_every_neuron_synchronises_and_stays(small_run):
    cfg, data, traj = small_run
    syn = sync.synchronisation(data, traj)
    assert int(syn.opposite0.sum()) > 0
    assert bool(syn.all_synchronised().all())
    assert bool(syn.kept.all())


def test_synchronisation_of_unbatched_run_matches_batched(small_run):
    cfg, data, traj = small_run
    one = mmcl.simulate(cfg, data[1], "multi", "recursion")
    s1 = sync.synchronisation(data[1], one)
    sb = sync.synchronisation(data, traj)
    assert torch.allclose(s1.u, sb.u[1], rtol=1e-10, atol=1e-14)
    assert torch.equal(s1.sync_step, sb.sync_step[1])


def test_loss_derivative_spread_is_one_for_uniform_softmax_and_grows(linear_regime, small_run):
    _, _, traj = linear_regime[0]
    spread = sync.loss_derivative_spread(traj)
    assert spread[0] == pytest.approx(1.0, abs=1e-6)
    _, _, traj = small_run
    spread = sync.loss_derivative_spread(traj)
    assert bool((spread >= 1).all())
    assert bool((spread[:, -1] > spread[:, 0]).all())  # the positives win the softmax as the loss falls
    # independent computation at one step: l'(M+1) over both networks
    M = traj.lprime_neg.shape[-1]
    k = 17
    x = torch.cat([traj.lprime[0, k].flatten(), traj.lprime_neg[0, k].flatten(),
                   traj.lprime_tilde[0, k].flatten(), traj.lprime_tilde_neg[0, k].flatten()]) * (M + 1)
    assert spread[0, k].item() == pytest.approx(max(x.max().item(), 1 / x.min().item()), rel=1e-12)


def test_noise_case1_holds_exactly_when_both_preactivations_stay_inactive(small_cfg):
    """Lemma D.9 (1) checked against preactivations computed from gradient descent's own weights."""
    cfg = small_cfg.replace(sigma0=0.05, n_epochs=60)
    data = f64(cfg, 4)
    traj = mmcl.simulate(cfg, data, "multi", "gd", keep_weights=True)
    t_max = 40
    cases = sync.noise_cases(data, traj, cfg, t_max=t_max)
    P = traj.weights[:t_max] @ data.xi.T  # <w_r(s), xi_i> for s < t_max, (t_max, m, n)
    Pt = traj.weights_tilde[:t_max] @ data.xi_tilde.T
    inactive = ((P <= 0) & (Pt <= 0)).all(0)
    c1 = cases.case == 1
    assert int(c1.sum()) > 0
    assert torch.equal(cases.holds[c1], inactive[c1])
    assert torch.equal(c1, (data.W0 @ data.xi.T <= 0) & (data.W0_tilde @ data.xi_tilde.T <= 0))


def test_noise_cases_partition_pairs_and_case4_detects_violation(small_run):
    cfg, data, traj = small_run
    cases = sync.noise_cases(data, traj, cfg, t_max=30)
    counts = sum(cases.count(c) for c in (1, 2, 3, 4))
    assert bool((counts == cfg.m * cfg.n).all())
    assert cases.psi_ratio.shape == (3, 31)
    # inflate the first network's noise memorisation tenfold: the growth bound (45) must fail somewhere
    fast = dataclasses.replace(traj, rho=10 * traj.rho)
    broken = sync.noise_cases(data, fast, cfg, t_max=30)
    assert bool((broken.fraction(4) < cases.fraction(4)).all())
    assert bool((broken.psi_ratio.amax(-1) > 1).all())


def test_lemma_d4_bound_is_nan_for_opposite_neurons():
    cfg = mmcl.SyntheticConfig()
    a0 = torch.tensor([0.1, -0.2, 0.3], dtype=torch.float64)
    b0 = torch.tensor([0.5, 0.4, -0.1], dtype=torch.float64)
    bound = sync.lemma_d4_lower_bound(cfg, a0, b0, torch.arange(5))
    assert bound.shape == (5, 3)
    assert torch.isnan(bound[:, 1:]).all() and not torch.isnan(bound[:, 0]).any()
    rate = 0.48 * cfg.c_mu * cfg.lr * cfg.mu_norm ** 2 / (cfg.m * cfg.tau)
    assert bound[3, 0].item() == pytest.approx((1 + rate) ** 3 * (0.1 + 0.5 / cfg.c_mu) - 1, rel=1e-12)


def test_lemma54_noise_bound_grows_as_delta_shrinks():
    cfg = mmcl.SyntheticConfig()
    assert sync.lemma54_noise_bound(cfg, 0.01) > sync.lemma54_noise_bound(cfg, 0.1) > 0


@pytest.mark.parametrize("call,match", [
    (lambda: theory.pairing_rate("cfg"), "cfg must be a SyntheticConfig"),
    (lambda: sync.predicted_sync_step(torch.ones(3), -torch.ones(3), 1.5), "kappa must lie in"),
    (lambda: sync.stage1_signal_prediction(torch.ones(3), torch.ones(2), 0.1, torch.arange(3)), "same shape"),
    (lambda: sync.lemma54_noise_bound(mmcl.SyntheticConfig(), 1.5), "delta"),
    (lambda: sync.noise_growth_rate(None), "cfg must be a SyntheticConfig"),
])
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_synchronisation_rejects_single_modal_and_mismatched_input(small_cfg):
    data = f64(small_cfg)
    single = mmcl.simulate(small_cfg.replace(n_epochs=3), data, "single", "recursion")
    with pytest.raises(ValueError, match="multi-modal trajectory"):
        sync.synchronisation(data, single)
    multi = mmcl.simulate(small_cfg.replace(n_epochs=3), data, "multi", "recursion")
    with pytest.raises(ValueError, match="both be batched"):
        sync.synchronisation(mmcl.SyntheticData.stack([data]), multi)
    with pytest.raises(ValueError, match="record_derivatives=True"):
        sync.loss_derivative_spread(multi)
    with pytest.raises(ValueError, match="t_max"):
        sync.noise_cases(data, multi, small_cfg, t_max=-1)
    cases = sync.noise_cases(data, multi, small_cfg, t_max=2)
    with pytest.raises(ValueError, match="case must be one of"):
        cases.fraction(5)


def test_stalled_and_final_size_of_a_hand_built_record():
    """``stalled`` marks the neurons that start out of step and never agree; ``synchronised`` those
    that agree at some recorded step; ``final_size`` is max(|u|, |v|) at the last step."""
    u = torch.tensor([[0.5, 0.2, -0.1], [0.6, -0.1, -0.2], [0.7, 0.3, -0.3]], dtype=torch.float64)  # (K=3, m=3)
    v = torch.tensor([[0.4, -0.3, 0.2], [0.5, 0.1, 0.1], [0.6, 0.2, 0.05]], dtype=torch.float64)
    agree = u * v > 0
    nan = float("nan")
    syn = sync.Synchronisation(steps=torch.arange(3), u=u, v=v, agree=agree, opposite0=~agree[0],
                               sync_step=torch.tensor([0.0, 2.0, nan], dtype=torch.float64),
                               sign=torch.tensor([1.0, 1.0, 0.0]), kept=torch.tensor([True, True, False]),
                               kappa=torch.tensor(0.1), predicted_step=torch.zeros(3), predicted_sign=torch.ones(3))
    assert syn.synchronised.tolist() == [True, True, False]
    assert syn.stalled.tolist() == [False, False, True]
    assert torch.allclose(syn.final_size, torch.tensor([0.7, 0.3, 0.3], dtype=torch.float64))
    assert not bool(syn.all_synchronised())


@pytest.mark.parametrize("mode", ["single", "multi"])
def test_spread_from_the_state_equals_the_recorded_derivatives(small_cfg, mode):
    """loss_derivative_spread_at (similarities from the coefficients) against loss_derivative_spread on
    the derivatives the engine's kernel recorded, at every recorded step, float64."""
    cfg = small_cfg.replace(n_epochs=40)
    data = sample_synthetic_batch(cfg, range(2), dtype="float64")
    traj = mmcl.simulate(cfg, data, mode, "recursion", record_derivatives=True, record_every=10)
    rec = sync.loss_derivative_spread(traj)  # (B, K)
    # the derivatives recorded at a step are those of that step's state
    for k in range(traj.steps.shape[0]):
        args = [traj.gamma[:, k], traj.rho[:, k]]
        if mode == "multi":
            args += [traj.gamma_tilde[:, k], traj.rho_tilde[:, k]]
        got = sync.loss_derivative_spread_at(data, mode, cfg.tau, *args)
        assert torch.allclose(got, rec[:, k], rtol=1e-9), (k, got, rec[:, k])
    assert float(rec[:, -1].min()) > 1.5  # the softmax has moved away from uniform: not a trivial 1 = 1
