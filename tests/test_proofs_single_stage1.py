"""mmcl.proofs.single_stage1: the stage-1 quantities of Sec. 5.1 / App. C.1 computed from the coefficients
equal the same quantities computed from explicit weights, and the claims of Lemma C.7 hold
exactly where the proof's assumptions hold exactly (orthogonal noise)."""
import pytest
import torch

import mmcl
from mmcl import fits
from mmcl.proofs import predictions, preactivations
from mmcl.proofs import single_stage1 as dg
from helpers import f64, gd_and_recursion


@pytest.fixture(scope="module")
def run(small_cfg):
    return gd_and_recursion(small_cfg.replace(n_epochs=60, sigma0=0.05), "single")


def _orthogonal_noise(cfg, seed):
    """A draw whose noise vectors are orthogonal to each other and to mu, with eps = 0: the
    cross terms that the appendix bounds by O(sqrt(log n / d)) are then exactly zero."""
    d = f64(cfg, seed)
    xi = torch.zeros_like(d.xi)
    idx = torch.arange(cfg.n)
    xi[idx, 2 + idx] = cfg.sigma_xi * cfg.d ** 0.5
    return mmcl.SyntheticData(y=d.y, mu=d.mu, xi=xi, eps=torch.zeros_like(d.eps), negatives=d.negatives, W0=d.W0)


def test_preactivation_history_equals_explicit_weights(run):
    cfg, data, gd, rec = run
    h = preactivations.preactivation_history(rec, data, with_augmented=True)
    W = gd.weights  # (K, m, d), formed by gradient descent itself
    assert h.signal.shape == (cfg.n_epochs + 1, cfg.m) and h.noise.shape == (cfg.n_epochs + 1, cfg.m, cfg.n)
    assert (h.signal - W @ data.mu).abs().max() < 1e-10
    assert (h.noise - W @ data.xi.T).abs().max() < 1e-10
    assert (h.noise_aug - W @ (data.xi + data.eps).T).abs().max() < 1e-10
    assert (h.noise[-1] - h.noise[0]).abs().max() > 1e-2  # the weights moved


def test_sign_sets_are_the_signs_of_explicit_preactivations(run):
    cfg, data, gd, rec = run
    ss = preactivations.sign_sets(rec, data)
    W = gd.weights
    assert torch.equal(ss.U_plus, W @ data.mu > 0) and torch.equal(ss.U_minus, W @ data.mu < 0)
    assert torch.equal(ss.I_plus, W @ data.xi.T > 0) and torch.equal(ss.I_minus, W @ data.xi.T < 0)


def test_count_changes_and_ever_changed_on_a_hand_made_mask():
    mask = torch.tensor([[True, False, True], [True, True, True], [False, True, True]])  # (K=3, m=3)
    assert count_list(preactivations.count_changes(mask, -2)) == [0, 1, 2]
    assert preactivations.ever_changed(mask, -2).tolist() == [True, True, False]
    cube = mask[:, :, None].expand(3, 3, 2)  # (K, m, n)
    assert count_list(preactivations.count_changes(cube, -3)) == [0, 2, 4]
    with pytest.raises(ValueError, match="boolean"):
        preactivations.count_changes(mask.to(torch.int64), -2)


def count_list(t):
    return [int(v) for v in t]


def test_lemma_c7_rho_stays_zero_on_negative_init_with_orthogonal_noise(small_cfg):
    cfg = small_cfg.replace(n_epochs=120)
    data = _orthogonal_noise(cfg, 1)
    rec = mmcl.simulate(cfg, data, "single", "recursion")
    assert float(rec.rho.abs().max()) > 0.1  # memorisation happened
    assert float(dg.rho_on_negative_init(rec, data).max()) == 0.0
    ss = preactivations.sign_sets(rec, data)
    started_neg = ss.I_minus[0]
    assert bool(ss.I_minus[:, started_neg].all())  # I_{r,-}(0) is contained in every I_{r,-}(t)


def test_rho_on_negative_init_detects_cross_terms(small_cfg):
    """With correlated Gaussian noise (n/d not small) the claim of Lemma C.7 can fail, and the
    diagnostic must see it: it is not identically zero by construction."""
    cfg = small_cfg.replace(d=60, n=24, n_epochs=150, sigma0=0.02)
    data = f64(cfg, 0)
    rec = mmcl.simulate(cfg, data, "single", "recursion")
    assert float(dg.rho_on_negative_init(rec, data).max()) > 0


def test_noise_totals_and_psi_match_direct_sums(run):
    cfg, data, gd, rec = run
    tot = dg.noise_totals(rec, data)
    P = gd.weights @ data.xi.T  # (K, m, n)
    P0 = data.W0 @ data.xi.T
    for k in (0, 20, cfg.n_epochs):
        for r in range(cfg.m):
            for label, B in ((1.0, tot.B_plus), (-1.0, tot.B_minus)):
                want = sum(float(rec.rho[k, r, i] + P0[r, i]) for i in range(cfg.n)
                           if data.y[i] == label and P[k, r, i] > 0)
                assert abs(float(B[k, r]) - want) < 1e-10
    psi = dg.psi(rec, data)
    assert (psi[0] - P0).abs().max() < 1e-14
    N = dg.positive_noise_memorization(rec, data)
    want = torch.where(P0 > 0, psi, torch.zeros_like(psi)).sum(-2) / cfg.m
    assert (N - want).abs().max() < 1e-14


def test_b_coefficients_split_the_summed_update13_exactly(run):
    """s (pos_c - neg_c) must equal the sum over class c of the rho increments of Eq. (13) as
    computed by the dynamics engine (mmcl.update_terms), an independent implementation."""
    cfg, data, gd, rec = run
    bc = dg.b_coefficients(rec, data, cfg)
    s = predictions.noise_step_scale(cfg)
    for k in (0, 10, 40):
        ut = mmcl.update_terms(data, cfg, "single", rec.gamma[k], rec.rho[k])
        for mask, pos, neg in (((data.y > 0), bc.pos_plus, bc.neg_plus), ((data.y < 0), bc.pos_minus, bc.neg_minus)):
            want = (ut.drho * mask).sum(-1)
            assert (s * (pos[k] - neg[k]) - want).abs().max() < 1e-12
            assert float(want.abs().max()) > 0
    with pytest.raises(ValueError, match="record_derivatives"):
        dg.b_coefficients(mmcl.simulate(cfg, data, "single", "recursion"), data, cfg)


def test_b_coefficients_at_init_match_the_uniform_derivative_prediction():
    """With tiny sigma0 the loss derivatives sit at 1/(M+1) and the orthogonal-noise draw removes
    cross terms: the measured a, b then match M/(M+1) and (count of active same-class samples)/(M+1)
    * M/(n/2), whose mean is the M/(2(M+1)) of b_dynamics_prediction."""
    cfg = mmcl.SyntheticConfig(d=300, n=40, m=20, M=20, n_epochs=2, sigma0=1e-4, n_test=8, n_heldout=8)
    data = _orthogonal_noise(cfg, 2)
    rec = mmcl.simulate(cfg, data, "single", "recursion", record_derivatives=True)
    bc = dg.b_coefficients(rec, data, cfg)
    a_pred, b_pred = predictions.b_dynamics_prediction(cfg)
    assert (bc.a_plus[0] - a_pred).abs().max() < 1e-3
    # per neuron, b_plus = sum_{i in class +, active} sum_{j in N_i} sigma(P_rj) / ((M+1) B_minus)
    act = (data.W0 @ data.xi.T > 0)
    n_pos_active = (act & (data.y > 0)).sum(-1).double()
    approx = n_pos_active / (cfg.M + 1) * cfg.M / (cfg.n / 2)
    assert (bc.b_plus[0] - approx).abs().mean() < 0.1 * approx.mean()
    assert abs(float(bc.b_plus[0].nanmean()) - b_pred) < 0.15


def test_fit_growth_rate_recovers_a_known_rate():
    steps = torch.arange(0, 50)
    vals = torch.stack([3.0 * (1 + 0.04) ** steps.double(), 0.5 * (1 + 0.01) ** steps.double()])
    fit = fits.fit_growth_rate(vals, steps, 5, 40)
    assert torch.allclose(fit.rate, torch.tensor([0.04, 0.01], dtype=torch.float64), atol=1e-12)
    assert torch.allclose(fit.log_c.exp(), torch.tensor([3.0, 0.5], dtype=torch.float64), atol=1e-10)
    assert bool((fit.r2 > 1 - 1e-12).all())
    with pytest.raises(ValueError, match="> 0"):
        fits.fit_growth_rate(vals - 1.0, steps, 0, 40)
    with pytest.raises(ValueError, match="t_start < t_stop"):
        fits.fit_growth_rate(vals, steps, 10, 10)


def test_signal_sign_agreement_equals_explicit_weights(small_cfg):
    cfg = small_cfg.replace(n_epochs=40, sigma0=0.05)
    data = f64(cfg, 0)
    gd = mmcl.simulate(cfg, data, "multi", "gd", keep_weights=True)
    rec = mmcl.simulate(cfg, data, "multi", "recursion")
    agree = preactivations.signal_sign_agreement(rec, data)
    a, at = gd.weights @ data.mu, gd.weights_tilde @ data.mu_tilde
    assert torch.equal(agree, a * at > 0)
    h = preactivations.preactivation_history(rec, data, tilde=True)
    assert (h.noise - gd.weights_tilde @ data.xi_tilde.T).abs().max() < 1e-10


def test_batched_diagnostics_equal_per_draw(small_cfg):
    cfg = small_cfg.replace(n_epochs=30)
    draws = [f64(cfg, s) for s in (0, 1)]
    batch = mmcl.SyntheticData.stack(draws)
    rb = mmcl.simulate(cfg, batch, "single", "recursion", record_derivatives=True)
    bcb = dg.b_coefficients(rb, batch, cfg)
    Nb = dg.positive_noise_memorization(rb, batch)
    zb = dg.rho_on_negative_init(rb, batch)
    for b, dr in enumerate(draws):
        r1 = mmcl.simulate(cfg, dr, "single", "recursion", record_derivatives=True)
        bc1 = dg.b_coefficients(r1, dr, cfg)
        assert torch.allclose(bcb.neg_plus[b], bc1.neg_plus, atol=1e-12)
        assert torch.allclose(bcb.B_minus[b], bc1.B_minus, atol=1e-12)
        assert torch.allclose(Nb[b], dg.positive_noise_memorization(r1, dr), atol=1e-12)
        assert torch.allclose(zb[b], dg.rho_on_negative_init(r1, dr), atol=1e-12)


def test_bad_arguments_raise_clear_errors(run, small_cfg):
    cfg, data, gd, rec = run
    with pytest.raises(ValueError, match="multi-modal"):
        preactivations.preactivation_history(rec, data, tilde=True)
    with pytest.raises(ValueError, match="batched"):
        preactivations.sign_sets(rec, mmcl.SyntheticData.stack([data]))
    with pytest.raises(ValueError, match="Trajectory"):
        dg.psi("not a run", data)
    with pytest.raises(ValueError, match="SyntheticConfig"):
        predictions.noise_step_scale({"lr": 0.1})


def test_without_cross_terms_makes_noise_orthogonal_and_keeps_norms(small_cfg):
    data = f64(small_cfg, 4)
    clean = preactivations.without_cross_terms(data)
    G = clean.xi @ clean.xi.T
    assert (G - torch.diag(torch.diagonal(G))).abs().max() < 1e-9
    assert (clean.xi @ clean.mu).abs().max() < 1e-9
    assert torch.allclose(clean.xi.norm(dim=-1), data.xi.norm(dim=-1), atol=1e-12)
    assert torch.equal(clean.W0, data.W0) and torch.equal(clean.y, data.y)
    # Lemma C.3 then holds exactly: U_+ and U_- never change, and gamma moves away from 0
    cfg = small_cfg.replace(n_epochs=150)
    rec = mmcl.simulate(cfg, clean, "single", "recursion")
    ss = preactivations.sign_sets(rec, clean)
    assert int(preactivations.count_changes(ss.U_plus, -2).max()) == 0 and int(preactivations.count_changes(ss.U_minus, -2).max()) == 0
    assert float(dg.rho_on_negative_init(rec, clean).max()) == 0.0
    with pytest.raises(ValueError, match="n \\+ 1 <= d"):
        preactivations.without_cross_terms(f64(small_cfg.replace(d=20), 0))


def test_cross_term_bound_is_lemma_c1s_factor():
    """Lemma C.1: 5 sqrt(log(6 n^2/delta)/d) n; at Figure 1 (n = 100, d = 2000, delta = 0.1) about 40.8,
    O~(n/sqrt d): doubling n doubles it up to the log, quadrupling d halves it."""
    import math

    import pytest

    cfg = mmcl.SyntheticConfig()
    b = predictions.cross_term_bound(cfg, 0.1)
    assert abs(b - 5 * 100 * math.sqrt(math.log(6e5) / 2000)) < 1e-12 and 40.7 < b < 40.9
    assert abs(predictions.cross_term_bound(cfg.replace(d=8000), 0.1) - b / 2) < 1e-12
    assert 2.0 < predictions.cross_term_bound(cfg.replace(n=200, M=90), 0.1) / b < 2.2
    with pytest.raises(ValueError, match="delta"):
        predictions.cross_term_bound(cfg, 1.5)


# --------------------------------------------------------------------------------------------
# Lemmas C.9 and C.10 at initialisation
# --------------------------------------------------------------------------------------------
def test_init_noise_totals_equal_a_loop_over_pairs(small_cfg):
    """B_{r,+-}(0) and Lemma C.10's check against plain loops over (r, i) on the explicit vectors."""
    import math

    data = f64(small_cfg, 3)
    C = 2.5
    out = dg.init_noise_totals(data, C)
    W0, xi, y = data.W0.tolist(), data.xi.tolist(), data.y.tolist()
    for r in range(small_cfg.m):
        p = [sum(a * b for a, b in zip(W0[r], xi[i])) for i in range(small_cfg.n)]
        bp = sum(max(v, 0.0) for v, yi in zip(p, y) if yi > 0)
        bm = sum(max(v, 0.0) for v, yi in zip(p, y) if yi < 0)
        assert float(out.B_plus[r]) == pytest.approx(bp, rel=1e-12)
        assert float(out.B_minus[r]) == pytest.approx(bm, rel=1e-12)
        for i in range(small_cfg.n):
            assert bool(out.c10_holds[r, i]) == (abs(p[i]) > C * bp / small_cfg.n and abs(p[i]) > C * bm / small_cfg.n)
    assert float(out.c10_fraction) == pytest.approx(float(out.c10_holds.double().mean()))
    default = dg.init_noise_totals(data)
    assert default.constant == pytest.approx(202 * 1.01)
    cfg = small_cfg
    assert predictions.lemma_c9_bound(cfg, 0.1) == pytest.approx(
        cfg.sigma0 * cfg.sigma_xi * math.sqrt(cfg.d * cfg.n) * (1 + math.sqrt(math.log(10) / 2)))


def test_b_init_mean_matches_a_monte_carlo_mean(small_cfg):
    """The mean n/2 sigma0 sigma_xi sqrt(d)/sqrt(2 pi) against 200 explicit draws (3 standard errors);
    a mean off by 10 % (e.g. sqrt(pi) for sqrt(2 pi) would be 41 %) is outside."""
    cfg = small_cfg.replace(n=40, M=20, d=200)
    from mmcl.model.data import sample_synthetic_batch

    data = sample_synthetic_batch(cfg, range(200), dtype=torch.float64, with_ood=False)
    b = dg.init_noise_totals(data).B_plus.flatten()
    se = float(b.std()) / b.numel() ** 0.5
    assert abs(float(b.mean()) - predictions.b_init_mean(cfg)) < 3 * se
    assert 3 * se < 0.1 * predictions.b_init_mean(cfg)


def test_init_noise_totals_bad_input(small_cfg):
    data = f64(small_cfg, 0)
    with pytest.raises(ValueError, match="constant"):
        dg.init_noise_totals(data, -1.0)
    with pytest.raises(ValueError, match="data"):
        dg.init_noise_totals("data")
    with pytest.raises(ValueError, match="delta"):
        predictions.lemma_c9_bound(small_cfg, 1.5)
    with pytest.raises(ValueError, match="balanced"):
        predictions.b_init_mean(small_cfg.replace(balanced=False))
