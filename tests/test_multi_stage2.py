"""mmcl.proofs.multi_stage2: the comparators of Lemma D.12 and the quantities of Lemmas D.11-D.15,
computed from the coefficients, equal the same quantities computed from explicit weights (the ``gd``
engine keeps them) and from autograd on the loss of Eq. (9), at float64; and bad input is refused."""
import dataclasses
import math

import pytest
import torch

import mmcl
from mmcl.model import losses
from mmcl.model.data import SyntheticData
from mmcl.proofs import multi_stage1 as sync
from mmcl.proofs import multi_stage2 as ms2
from mmcl.proofs import scales
from mmcl.proofs import single_stage2 as cv
from helpers import f64, gd_and_recursion


@pytest.fixture(scope="module")
def run(small_cfg):
    return gd_and_recursion(small_cfg.replace(n_epochs=40, sigma0=0.05), "multi")


def _w_star(data, lam, theta=None, theta_t=None):
    """The comparators of Lemma D.12 as explicit weight matrices."""
    if theta is None:
        theta, theta_t = torch.sign(data.W0 @ data.mu), torch.sign(data.W0_tilde @ data.mu_tilde)
    Ws = data.W0 + lam * theta[:, None] * data.mu[None, :] / (data.mu @ data.mu)
    Wts = data.W0_tilde + lam * theta_t[:, None] * data.mu_tilde[None, :] / (data.mu_tilde @ data.mu_tilde)
    return Ws, Wts


def _losses(W, Wt, data, tau):
    lh, lg = losses.multi_modal_logits(W[None], Wt[None], data, tau)
    return losses.info_nce(lh).mean(), losses.info_nce(lg).mean(), lh[0], lg[0]


def test_distance_and_decrease_equal_explicit_weights(run):
    cfg, data, gd, rec = run
    cc = cv.ComparatorConfig(epsilon=0.2)
    tel = ms2.multi_telescoping(rec, data, cfg, cc)
    Ws, Wts = _w_star(data, cc.coefficient(cfg))
    d1 = ((gd.weights - Ws) ** 2).sum((-1, -2))
    d2 = ((gd.weights_tilde - Wts) ** 2).sum((-1, -2))
    assert (tel.first.distance_sq - d1).abs().max() < 1e-9 * d1.max()
    assert (tel.second.distance_sq - d2).abs().max() < 1e-9 * d2.max()
    assert (tel.combined.distance_sq - (d1 + d2)).abs().max() < 1e-9 * (d1 + d2).max()
    D = d1 + d2
    assert (tel.combined.decrease - (D[:-1] - D[1:])).abs().max() < 1e-8 * D.max()
    # Lemma D.14's slack and D.15's sides from explicit weights and the recorded loss
    L = gd.loss
    eta, eps = cfg.lr, cc.epsilon
    want_slack = (D[:-1] - D[1:]) - eta * (L[:-1] - 2 * eps)
    assert (tel.combined.c17_slack() - want_slack).abs().max() < 1e-8 * D.max()
    t1 = 10
    cnt = torch.arange(1, cfg.n_epochs - t1 + 2, dtype=torch.float64)
    assert torch.allclose(tel.combined.averaged_loss(t1), L[t1:].cumsum(0) / cnt, rtol=1e-9)
    assert torch.allclose(tel.combined.averaged_bound(t1), D[t1] / (eta * cnt) + 2 * eps, rtol=1e-8)
    # the comparator sits at sqrt(m) lam/||mu|| from the initialisation (gamma* = lam theta_r, rho* = 0)
    assert float(tel.first.distance_sq[0]) == pytest.approx(cfg.m * cc.coefficient(cfg) ** 2 / cfg.mu_norm ** 2,
                                                            rel=1e-12)


def test_losses_grad_norms_and_inner_products_equal_autograd_on_eq9(run):
    cfg, data, gd, rec = run
    cc = cv.ComparatorConfig(epsilon=0.1)
    tel = ms2.multi_telescoping(rec, data, cfg, cc)
    Ws, Wts = _w_star(data, cc.coefficient(cfg))
    for k in (0, 9, 33):
        W = gd.weights[k].clone().requires_grad_(True)
        Wt = gd.weights_tilde[k].clone().requires_grad_(True)
        l1, l2, _, _ = _losses(W, Wt, data, cfg.tau)
        (g1,) = torch.autograd.grad(l1, W)  # the stop-gradient: W only sees L_S(W) ...
        (g2,) = torch.autograd.grad(l2, Wt)
        l1b, l2b, _, _ = _losses(W, Wt, data, cfg.tau)
        gW, gWt = torch.autograd.grad(l1b + l2b, (W, Wt))  # ... so the gradient of the sum is the same
        assert torch.allclose(gW, g1, rtol=1e-12, atol=1e-15) and torch.allclose(gWt, g2, rtol=1e-12, atol=1e-15)
        assert float(tel.first.loss[k]) == pytest.approx(float(l1.detach()), rel=1e-9)
        assert float(tel.second.loss[k]) == pytest.approx(float(l2.detach()), rel=1e-9)
        assert float(tel.first.grad_norm_sq[k]) == pytest.approx(float((g1 * g1).sum()), rel=1e-7)
        assert float(tel.second.grad_norm_sq[k]) == pytest.approx(float((g2 * g2).sum()), rel=1e-7)
        assert float(tel.first.inner[k]) == pytest.approx(float((g1 * (gd.weights[k] - Ws)).sum()), rel=1e-7, abs=1e-12)
        assert float(tel.second.inner[k]) == pytest.approx(float((g2 * (gd.weights_tilde[k] - Wts)).sum()),
                                                           rel=1e-7, abs=1e-12)
    # the per-direction losses read off the loss derivatives add up to the recorded loss
    assert (tel.combined.loss - rec.loss).abs().max() < 1e-12
    # decrease = 2 eta <grad, W - W*> - eta^2 ||grad||^2, network by network
    for t in (tel.first, tel.second, tel.combined):
        assert (t.decrease - (2 * cfg.lr * t.inner - cfg.lr ** 2 * t.grad_norm_sq)).abs().max() < 1e-12


def test_lemma_d13_margins_equal_autograd_inner_products(run):
    cfg, data, gd, rec = run
    cc = cv.ComparatorConfig(epsilon=0.3, scale=1.7)
    m1, m2 = ms2.multi_comparator_margins(rec, data, cfg, cc)
    Ws, Wts = _w_star(data, cc.coefficient(cfg))
    assert m1.pos.shape == (cfg.n_epochs + 1, cfg.n) and m2.neg.shape == (cfg.n_epochs + 1, cfg.n, cfg.M)
    for k in (0, 15, cfg.n_epochs):
        W = gd.weights[k].clone().requires_grad_(True)
        Wt = gd.weights_tilde[k].clone().requires_grad_(True)
        _, _, F, Ft = _losses(W, Wt, data, cfg.tau)  # (n, 1+M): F_0, F_j and F~_0, F~_j (Sim/tau, stop-gradient)
        for i in (0, 7, cfg.n - 1):
            for j in (0, 2, cfg.M):
                (g,) = torch.autograd.grad(F[i, j], W, retain_graph=True)
                (gt,) = torch.autograd.grad(Ft[i, j], Wt, retain_graph=True)
                got1 = float(m1.pos[k, i]) if j == 0 else float(m1.neg[k, i, j - 1])
                got2 = float(m2.pos[k, i]) if j == 0 else float(m2.neg[k, i, j - 1])
                assert got1 == pytest.approx(float((g * Ws).sum()), rel=1e-7, abs=1e-10)
                assert got2 == pytest.approx(float((gt * Wts).sum()), rel=1e-7, abs=1e-10)
                # <grad F_j(W), W> = F_j(W): the stop-gradient makes each F 1-homogeneous in its own network
                assert float((g * gd.weights[k]).sum()) == pytest.approx(float(F[i, j].detach()), rel=1e-9, abs=1e-12)
                assert float((gt * gd.weights_tilde[k]).sum()) == pytest.approx(float(Ft[i, j].detach()), rel=1e-9,
                                                                                abs=1e-12)


def test_signs_other_than_the_papers_equal_explicit_weights(run):
    cfg, data, gd, rec = run
    cc = cv.ComparatorConfig(epsilon=0.2)
    k = 25
    theta, theta_t = torch.sign(gd.weights[k] @ data.mu), torch.sign(gd.weights_tilde[k] @ data.mu_tilde)
    syn = sync.synchronisation(data, rec)
    sg = ms2.comparator_signs(syn, t1=k, step=k)
    assert torch.equal(sg.theta, theta) and torch.equal(sg.theta_tilde, theta_t)
    Ws, Wts = _w_star(data, cc.coefficient(cfg), theta, theta_t)
    for signs in (sg, (theta, theta_t)):
        tel = ms2.multi_telescoping(rec, data, cfg, cc, signs=signs)
        d = ((gd.weights - Ws) ** 2).sum((-1, -2)) + ((gd.weights_tilde - Wts) ** 2).sum((-1, -2))
        assert (tel.combined.distance_sq - d).abs().max() < 1e-9 * d.max()
        m1, _ = ms2.multi_comparator_margins(rec, data, cfg, cc, signs=signs)
        W = gd.weights[k].clone().requires_grad_(True)
        _, _, F, _ = _losses(W, gd.weights_tilde[k], data, cfg.tau)
        (g,) = torch.autograd.grad(F[3, 0], W)
        assert float(m1.pos[k, 3]) == pytest.approx(float((g * Ws).sum()), rel=1e-7, abs=1e-10)


def test_comparator_signs_and_winners_against_explicit_weights(run):
    cfg, data, gd, rec = run
    syn = sync.synchronisation(data, rec)
    t1 = 30
    sg = ms2.comparator_signs(syn, t1)
    a = gd.weights @ data.mu  # (K, m): <w_r(t), mu>
    b = gd.weights_tilde @ data.mu_tilde
    assert torch.equal(sg.theta, torch.sign(data.W0 @ data.mu))
    assert torch.equal(sg.theta_tilde, torch.sign(data.W0_tilde @ data.mu_tilde))
    assert torch.equal(sg.agree_t1, sg.theta == torch.sign(a[t1]))
    assert torch.equal(sg.agree_tilde_t1, sg.theta_tilde == torch.sign(b[t1]))
    # winners: out of step at 0, and the first common sign is the first (second) modality's initial one
    agree = a * b > 0
    for r in range(cfg.m):
        if a[0, r] * b[0, r] > 0 or not bool(agree[:, r].any()):
            assert not bool(sg.won_first[r]) and not bool(sg.won_second[r])
            continue
        k = int(agree[:, r].nonzero()[0])
        assert bool(sg.won_first[r]) == bool(torch.sign(a[k, r]) == torch.sign(a[0, r]))
        assert bool(sg.won_second[r]) == bool(torch.sign(a[k, r]) == torch.sign(b[0, r]))
    assert int(syn.opposite0.sum()) > 0 and int((sg.won_first | sg.won_second).sum()) > 0


def test_lemma54_averages_and_scales_against_explicit_weights(run):
    cfg, data, gd, rec = run
    syn = sync.synchronisation(data, rec)
    t = 20
    av = ms2.lemma54_averages(syn, cfg, t)
    a = gd.weights @ data.mu
    b = gd.weights_tilde @ data.mu_tilde
    for s_i, s in enumerate((1.0, -1.0)):
        same = (torch.sign(a[0]) == s) & (torch.sign(b[0]) == s)
        assert float(av[0, s_i]) == pytest.approx(float((s * a[t])[same].sum() / cfg.m), rel=1e-8, abs=1e-12)
        assert float(av[1, s_i]) == pytest.approx(float((s * b[t])[same].sum() / cfg.m), rel=1e-8, abs=1e-12)
    sc = scales.stage2_scales(rec, cfg, t)
    assert torch.allclose(sc.gamma_max, rec.gamma.amax(-1)) and torch.allclose(sc.rho_tilde_max,
                                                                                rec.rho_tilde.abs().amax((-1, -2)))
    assert float(sc.growth) == pytest.approx(float((rec.gamma.amax(-1)[t:] / rec.gamma.amax(-1)[t]).max()))
    assert sc.rho_bound == pytest.approx(cfg.sigma0 * cfg.sigma_xi * math.sqrt(cfg.d))


def test_chain_is_consistent_and_batched_equals_unbatched(small_cfg):
    cfg = small_cfg.replace(n_epochs=30, sigma0=0.05)
    draws = [f64(cfg, s) for s in (1, 2)]
    cc = cv.ComparatorConfig(epsilon=0.1)
    t1 = 12
    batched = mmcl.simulate(cfg, SyntheticData.stack(draws), "multi", "recursion", record_derivatives=True)
    chb = ms2.multi_comparator_chain(batched, SyntheticData.stack(draws), cfg, cc, t1)
    for b, dd in enumerate(draws):
        tr = mmcl.simulate(cfg, dd, "multi", "recursion", record_derivatives=True)
        ch = ms2.multi_comparator_chain(tr, dd, cfg, cc, t1)
        assert torch.allclose(ch.slack, chb.slack[b], rtol=1e-9, atol=1e-12)
        for k in (0, 1):
            assert torch.allclose(ch.pos_ratio[k], chb.pos_ratio[k][b], rtol=1e-9, atol=1e-12)
            assert torch.allclose(ch.neg_ratio[k], chb.neg_ratio[k][b], rtol=1e-9, atol=1e-12)
        # the margins start at t1; the horizon is floor(D(T1) / (eta eps))
        assert ch.pos_ratio[0].shape == (cfg.n_epochs - t1 + 1, cfg.n)
        D1 = float(ch.telescoping.combined.distance_sq[t1])
        assert ch.horizon == [math.floor(D1 / (cfg.lr * cc.epsilon))] and ch.horizon[0] == chb.horizon[b]
        assert float(ch.distance_t1[0]) ** 2 == pytest.approx(float(ch.telescoping.first.distance_sq[t1]))
        full1, _ = ms2.multi_comparator_margins(tr, dd, cfg, cc)
        assert torch.allclose(ch.pos_ratio[0], full1.pos[t1:] / (2 * ch.level), rtol=1e-12)


def test_per_neuron_direction_reproduces_the_shared_one(small_cfg):
    """The generalised telescoping core of mmcl.proofs.single_stage2: a per-neuron comparator direction
    equal for every neuron gives what the shared direction gives (the single-modal W*)."""
    cfg = small_cfg.replace(n_epochs=15)
    data = f64(cfg, 4)
    tr = mmcl.simulate(cfg, data, "single", "recursion")
    cc = cv.ComparatorConfig(epsilon=0.2, scale=2.5)
    ref = cv.telescoping(tr, data, cfg, cc)
    u = torch.ones(cfg.m, cfg.n + 1, dtype=torch.float64)
    u[:, 0] = 0.0
    loss = tr.loss.index_select(-1, tr.steps)
    per = cv.telescoping_core(tr.gamma, tr.rho, data.mu, data.xi, u, loss, tr, cfg, cc, False)
    for f in ("distance_sq", "distance_sq_slope", "distance_sq_curv", "decrease", "decrease_slope", "grad_norm_sq",
              "inner"):
        assert torch.allclose(getattr(per, f), getattr(ref, f), rtol=1e-12, atol=1e-12), f


def test_bad_input_is_refused(run, small_cfg):
    cfg, data, gd, rec = run
    cc = cv.ComparatorConfig()
    single = mmcl.simulate(cfg, data, "single", "recursion")
    with pytest.raises(ValueError, match="multi-modal"):
        ms2.multi_telescoping(single, data, cfg, cc)
    with pytest.raises(ValueError, match="multi-modal"):
        ms2.multi_comparator_margins(single, data, cfg, cc)
    no_derivs = mmcl.simulate(cfg, data, "multi", "recursion")
    with pytest.raises(ValueError, match="record_derivatives"):
        ms2.multi_telescoping(no_derivs, data, cfg, cc)
    sparse = mmcl.simulate(cfg, data, "multi", "recursion", record_every=5, record_derivatives=True)
    with pytest.raises(ValueError, match="record_every=1"):
        ms2.multi_telescoping(sparse, data, cfg, cc)
    with pytest.raises(ValueError, match="ccfg"):
        ms2.multi_telescoping(rec, data, cfg, "eps")
    with pytest.raises(ValueError, match="cfg must be"):
        ms2.multi_comparator_margins(rec, data, None, cc)
    with pytest.raises(ValueError, match="both be batched"):
        ms2.multi_telescoping(rec, SyntheticData.stack([data]), cfg, cc)
    with pytest.raises(ValueError, match="disagree"):
        ms2.multi_telescoping(rec, data, cfg.replace(M=cfg.M - 1), cc)
    theta = torch.sign(data.W0 @ data.mu)
    with pytest.raises(ValueError, match="theta_tilde must be a tensor of shape"):
        ms2.multi_telescoping(rec, data, cfg, cc, signs=(theta, theta[:-1]))
    with pytest.raises(ValueError, match=r"\+1 or -1"):
        ms2.multi_telescoping(rec, data, cfg, cc, signs=(theta * 0, theta))
    with pytest.raises(ValueError, match="signs must be"):
        ms2.multi_comparator_margins(rec, data, cfg, cc, signs="t1")
    syn = sync.synchronisation(data, rec)
    with pytest.raises(ValueError, match="t1=999 is not a recorded step"):
        ms2.comparator_signs(syn, 999)
    with pytest.raises(ValueError, match="syn must be a Synchronisation"):
        ms2.comparator_signs(rec, 5)
    with pytest.raises(ValueError, match="t1=999"):
        ms2.multi_comparator_chain(rec, data, cfg, cc, 999)
    with pytest.raises(ValueError, match="t=-1"):
        ms2.lemma54_averages(syn, cfg, -1)
    with pytest.raises(ValueError, match="multi-modal Trajectory"):
        scales.stage2_scales(single, cfg, 5)
    with pytest.raises(ValueError, match="must be < 2M"):
        ms2.multi_telescoping(rec, data, cfg, cv.ComparatorConfig(epsilon=2 * cfg.M))
