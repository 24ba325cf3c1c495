"""mmcl.proofs.single_stage2: the comparator W* of App. C.2 and the quantities of Lemmas C.14-C.18,
computed from the coefficients, equal the same quantities computed from explicit weights and
from autograd on the loss of Eq. (6)."""
import math

import pytest
import torch

import mmcl
from mmcl.proofs import single_stage2 as cv
from mmcl.model import losses
from helpers import f64


@pytest.fixture(scope="module")
def run(small_cfg):
    cfg = small_cfg.replace(n_epochs=40, sigma0=0.05)
    data = f64(cfg, 5)
    gd = mmcl.simulate(cfg, data, "single", "gd", keep_weights=True)
    rec = mmcl.simulate(cfg, data, "single", "recursion")
    return cfg, data, gd, rec


def _w_star(data, lam):
    S = (data.xi / (data.xi * data.xi).sum(-1, keepdim=True)).sum(0)
    return data.W0 + lam * S


def test_distance_and_decrease_equal_explicit_weights(run):
    cfg, data, gd, rec = run
    cc = cv.ComparatorConfig(epsilon=0.2)
    tel = cv.telescoping(rec, data, cfg, cc)
    Ws = _w_star(data, cc.coefficient(cfg))
    dist = ((gd.weights - Ws) ** 2).sum((-1, -2))
    assert (tel.distance_sq - dist).abs().max() < 1e-10 * dist.max()
    assert (tel.decrease - (dist[:-1] - dist[1:])).abs().max() < 1e-9 * dist.max()
    assert cc.coefficient(cfg) == pytest.approx(2 * cfg.tau * math.log(2 * cfg.M / 0.2), rel=1e-15)


def test_grad_norm_and_inner_equal_autograd_on_eq6(run):
    cfg, data, gd, rec = run
    cc = cv.ComparatorConfig(epsilon=0.1)
    tel = cv.telescoping(rec, data, cfg, cc)
    Ws = _w_star(data, cc.coefficient(cfg))
    for k in (0, 7, 25):
        W = gd.weights[k].clone().requires_grad_(True)
        loss = losses.single_modal_loss(W[None], data, cfg.tau).sum()
        (g,) = torch.autograd.grad(loss, W)
        assert float(tel.grad_norm_sq[k]) == pytest.approx(float((g * g).sum()), rel=1e-9)
        assert float(tel.inner[k]) == pytest.approx(float((g * (gd.weights[k] - Ws)).sum()), rel=1e-9, abs=1e-12)
        assert float(tel.loss[k]) == pytest.approx(float(loss.detach()), rel=1e-12)
    # the identity behind Lemma C.17: decrease = 2 eta <grad, W - W*> - eta^2 ||grad||^2
    assert (tel.decrease - (2 * cfg.lr * tel.inner - cfg.lr ** 2 * tel.grad_norm_sq)).abs().max() < 1e-12


def test_lemma_c16_margins_equal_autograd_inner_products(run):
    cfg, data, gd, rec = run
    cc = cv.ComparatorConfig(epsilon=0.3, scale=1.7)
    mg = cv.comparator_margins(rec, data, cfg, cc)
    Ws = _w_star(data, cc.coefficient(cfg))
    assert mg.pos.shape == (cfg.n_epochs + 1, cfg.n) and mg.neg.shape == (cfg.n_epochs + 1, cfg.n, cfg.M)
    for k in (0, 20, cfg.n_epochs):
        W = gd.weights[k].clone().requires_grad_(True)
        F = losses.single_modal_logits(W[None], data, cfg.tau)[0]  # (n, 1+M): F_0, F_j (Sim/tau, stop-gradient)
        for i in (0, 5, cfg.n - 1):
            for j in (0, 3):
                (g,) = torch.autograd.grad(F[i, j], W, retain_graph=True)
                want = float((g * Ws).sum())
                got = float(mg.pos[k, i]) if j == 0 else float(mg.neg[k, i, j - 1])
                assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
                # Eq. (32)-(33): <grad F_j(W), W> = F_j(W) -- the stop-gradient makes F_j 1-homogeneous
                assert float((g * gd.weights[k]).sum()) == pytest.approx(float(F[i, j].detach()), rel=1e-9, abs=1e-12)


def test_affine_helpers_equal_recomputation_at_another_lambda(run):
    cfg, data, gd, rec = run
    c1, c2 = cv.ComparatorConfig(epsilon=0.2), cv.ComparatorConfig(epsilon=0.2, scale=3.1)
    t1, t2 = cv.telescoping(rec, data, cfg, c1), cv.telescoping(rec, data, cfg, c2)
    lam2 = c2.coefficient(cfg)
    assert (t1.distance_sq_at(lam2) - t2.distance_sq).abs().max() < 1e-10
    assert (t1.c17_slack(lam2) - t2.c17_slack()).abs().max() < 1e-12
    assert (t1.averaged_bound(10, lam2) - t2.averaged_bound(10)).abs().max() < 1e-9
    m1, m2 = cv.comparator_margins(rec, data, cfg, c1), cv.comparator_margins(rec, data, cfg, c2)
    p, n = m1.at(lam2)
    assert (p - m2.pos).abs().max() < 1e-10 and (n - m2.neg).abs().max() < 1e-10


def test_feasible_lam_is_the_exact_set_where_lemma_c16_holds(run):
    cfg, data, gd, rec = run
    mg = cv.comparator_margins(rec, data, cfg, cv.ComparatorConfig(epsilon=0.5))
    lo, hi = mg.feasible_lam(k_start=20)

    def holds(lam):
        p, n = mg.at(lam)
        return bool((p[20:] >= 2 * mg.level - 1e-9).all() and (n[20:] <= mg.level + 1e-9).all())

    grid = torch.linspace(0.0, 50.0, 501).tolist()
    inside = [holds(l) for l in grid]
    for lam, ok in zip(grid, inside):
        assert ok == (lo - 1e-9 <= lam <= hi + 1e-9)


def test_lemma_c18_average_follows_from_c17_by_telescoping(run):
    """Where the one-step inequality of Lemma C.17 holds on [T1, t], the averaged bound of Lemma
    C.18 must hold too: a check that both are computed consistently (the sum telescopes)."""
    cfg, data, gd, rec = run
    tel = cv.telescoping(rec, data, cfg, cv.ComparatorConfig(epsilon=0.5))
    slack = tel.c17_slack()
    # T1 := the first step from which C.17 holds to the end (this run's stage 2)
    t1 = int(((slack < 0).nonzero().max() + 1) if bool((slack < 0).any()) else 0)
    assert t1 < cfg.n_epochs - 5
    ok = (tel.c17_slack()[t1:] >= 0).to(torch.int64).cumprod(-1).bool()  # C.17 held on [T1, t]
    avg, bound = tel.averaged_loss(t1), tel.averaged_bound(t1)
    assert ok.any()
    assert bool((avg[:-1][ok] <= bound[:-1][ok] + 1e-12).all())
    # and the telescoped sum itself: sum_s decrease(s) = D(T1) - D(t+1)
    tele = tel.decrease[t1:].cumsum(-1)
    assert (tele - (tel.distance_sq[t1] - tel.distance_sq[t1 + 1:])).abs().max() < 1e-9


def test_batched_equals_per_draw(small_cfg):
    cfg = small_cfg.replace(n_epochs=25)
    draws = [f64(cfg, s) for s in (0, 1)]
    batch = mmcl.SyntheticData.stack(draws)
    rb = mmcl.simulate(cfg, batch, "single", "recursion")
    tb, mb = cv.telescoping(rb, batch, cfg), cv.comparator_margins(rb, batch, cfg)
    for b, dr in enumerate(draws):
        r1 = mmcl.simulate(cfg, dr, "single", "recursion")
        t1, m1 = cv.telescoping(r1, dr, cfg), cv.comparator_margins(r1, dr, cfg)
        assert torch.allclose(tb.distance_sq[b], t1.distance_sq, atol=1e-12)
        assert torch.allclose(tb.c17_slack()[b], t1.c17_slack(), atol=1e-12)
        assert torch.allclose(mb.neg[b], m1.neg, atol=1e-10) and torch.allclose(mb.pos[b], m1.pos, atol=1e-10)


def test_config_and_arguments_are_validated(run):
    cfg, data, gd, rec = run
    for bad in (0.0, -1.0, float("nan"), float("inf"), True, "0.1"):
        with pytest.raises(ValueError, match="ComparatorConfig.epsilon"):
            cv.ComparatorConfig(epsilon=bad)
    with pytest.raises(ValueError, match="ComparatorConfig.scale"):
        cv.ComparatorConfig(scale=0)
    with pytest.raises(ValueError, match="2M"):
        cv.ComparatorConfig(epsilon=2 * cfg.M).level(cfg)
    sparse = mmcl.simulate(cfg, data, "single", "recursion", record_every=2)
    with pytest.raises(ValueError, match="record_every=1"):
        cv.telescoping(sparse, data, cfg)
    multi = mmcl.simulate(cfg, data, "multi", "recursion")
    with pytest.raises(ValueError, match="single-modal"):
        cv.comparator_margins(multi, data, cfg)
    with pytest.raises(ValueError, match="not a recorded step"):
        cv.telescoping(rec, data, cfg).averaged_loss(10_000)


def test_c17_feasible_lam_is_the_exact_set_where_lemma_c17_holds(run):
    cfg, data, gd, rec = run
    tel = cv.telescoping(rec, data, cfg, cv.ComparatorConfig(epsilon=0.5))
    lo, hi = tel.c17_feasible_lam(k_start=25)
    for lam in torch.linspace(0.0, 20.0, 401).tolist():
        holds = bool((tel.c17_slack(lam)[25:] >= -1e-12).all())
        assert holds == (lo - 1e-9 <= lam <= hi + 1e-9)
