"""The checks behind the audit (mmcl.proofs.audit_checks), each against an independent computation:
the exact laws they rest on, Monte Carlo, or a direct reading of the data."""
import math

import pytest
import sympy as sp
import torch

import mmcl
from mmcl.model.data import sample_synthetic_batch
from mmcl.proofs import audit_checks as ac
from mmcl.proofs.assumptions import premise_conditions


def test_c5_share_follows_the_cauchy_law_whatever_d():
    for d in (400, 3000):
        cfg = mmcl.SyntheticConfig(d=d, d_tilde=d, n=40, m=40, M=20, n_test=20, n_heldout=20)
        data = sample_synthetic_batch(cfg, range(4), dtype="float64")
        for C in (1.0, 20.0):
            law = ac.lemma_c5_law(cfg.sigma_eps, cfg.sigma_xi, C)
            # 4 x 40 x 40 pairs: the share's standard error is at most 0.5/80
            assert float(ac.lemma_c5_violation(data, C).mean()) == pytest.approx(law, abs=0.03)
    assert ac.lemma_c5_law(0.1, 1.0, 200) > 0.96  # Lemma C.11's C_xi = 200


def test_c6_constants_and_the_probability_at_the_printed_threshold():
    k = ac.lemma_c6_constants()
    assert k["sqrt(150 L/d)"] == 300 and k["150 sqrt(L/d)"] == 45000
    # Monte Carlo of one pair at the printed threshold: |N(0, 1)| below c/s = sqrt(75 pi l)
    n, delta = 100, 0.1
    ell = -math.log1p(-delta ** 2 / (4 * n ** 2))
    z = torch.randn(4_000_000, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    mc = float((z.abs() <= math.sqrt(75 * math.pi * ell)).double().mean()) * n / delta
    assert ac.lemma_c6_pair_probability(n, delta) == pytest.approx(mc, rel=0.05)
    assert 6.0 < ac.lemma_c6_pair_probability(n, delta) < 6.2  # not the proof's 1


def test_c7_share_counts_pairs_that_left_the_active_set(small_cfg):
    data = sample_synthetic_batch(small_cfg, range(2), dtype="float64")
    cfg = small_cfg.replace(n_epochs=60)
    share = ac.lemma_c7_turned_inactive(data, cfg)
    # independent: gradient descent with kept weights, then the signs read off W(0) and W(T)
    traj = mmcl.simulate(cfg, data, "single", "gd", keep_weights=True, dtype="float64")
    W0, W1 = traj.weights[:, 0], traj.weights[:, -1]
    before = (W0 @ data.xi.transpose(-1, -2)) > 0
    after = (W1 @ data.xi.transpose(-1, -2)) > 0
    expect = (before & ~after).double().sum((-1, -2)) / before.double().sum((-1, -2))
    assert torch.allclose(share, expect)
    assert float(share.mean()) > 0.05  # the inactive set does change, against Lemma C.7


def test_c14_term_is_of_order_m_squared_at_initialisation():
    cfg = mmcl.SyntheticConfig()
    data = sample_synthetic_batch(cfg, range(2), dtype="float64")
    term = ac.lemma_c14_term(data)
    assert bool((term > 10).all())  # the proof's O(1)
    # the same quantity for every anchor of one draw, summed by hand, and its median
    d = data[0]

    def A(v):  # (1/m) sum_r relu(<w_r, v>)
        return torch.relu(d.W0 @ v).mean()

    M = d.negatives.shape[-1]
    vals = []
    for i in range(cfg.n):
        Z = A(d.y[i] * d.mu) + A(d.xi[i] + d.eps[i])
        Z = Z + sum(A(d.y[j] * d.mu) + A(d.xi[j]) for j in d.negatives[i].tolist())
        vals.append(float(2 * (1 - 1 / (M + 1)) * Z * Z))
    assert float(term[0]) == pytest.approx(float(torch.tensor(vals, dtype=torch.float64).median()), rel=1e-9)


def test_d6_threshold_and_mean_at_the_decisive_point():
    from mmcl.experiments.decisive_runs import decisive_config

    cfg = decisive_config(9224)
    m = ac.lemma_d6_margin(cfg)
    assert m["threshold"] < 1 < m["mean"] and (m["mean"] - m["threshold"]) / m["sd"] > 20
    rows = {c.key: c for c in premise_conditions(cfg)}
    assert not rows["D.6"].holds and rows["D.6"].rhs > 50 * cfg.d  # the printed condition fails there


def test_d9_46_at_initialisation():
    assert sp.simplify(ac.lemma_d9_46_limit() - 101 / sp.sqrt(2 * sp.pi)) == 0
    cfg = mmcl.SyntheticConfig(n=100, M=50)
    data = sample_synthetic_batch(cfg, range(2), dtype="float64")
    assert float(ac.lemma_d9_46_share(data).max()) == 0.0
    assert float(ac.lemma_d9_46_share(data, c_ell=1e-4).min()) > 0.3  # the check can see pairs that hold


def test_lemma54_last_line():
    out = ac.lemma54_last_line()
    assert out["c_squared"] == 80
    n, k, u, lg = sp.symbols("n k u lg", positive=True)
    assert sp.simplify(out["in_n"] - 4 * sp.sqrt(5) * sp.sqrt(lg) * n ** sp.Rational(1, 4) * sp.sqrt(u)
                       / k ** sp.Rational(1, 4)) == 0
    assert sp.simplify(out["u_max"] - sp.sqrt(k) / (80 * lg * n ** sp.Rational(3, 2))) == 0
