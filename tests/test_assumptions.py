"""Assumption 4.1 made explicit, and the anti-concentration bound of Lemmas B.1-B.2."""
import math

import pytest
import torch
from scipy import integrate, special

import mmcl
from mmcl.proofs import assumptions as A
@pytest.mark.parametrize("c,sigma", [(0.01, 1.0), (0.3, 0.5), (1.0, 1.0), (2.5, 0.7), (10.0, 3.0)])
def test_lemma_b1_probability_equals_gaussian_quadrature(c, sigma):
    pdf = lambda x: math.exp(-x * x / (2 * sigma * sigma)) / (math.sqrt(2 * math.pi) * sigma)
    quad, _ = integrate.quad(pdf, -c, c, epsabs=1e-14, epsrel=1e-13)
    assert A.anticoncentration_probability(c, sigma).item() == pytest.approx(quad, rel=1e-11, abs=1e-14)


def test_lemma_b1_bound_without_factor_two_holds_and_is_tight_at_zero():
    r = torch.logspace(-5, 1, 4000, dtype=torch.float64)  # c / sigma
    exact = torch.as_tensor(special.erf(r.numpy() / math.sqrt(2)))  # scipy's erf, independent of torch's
    bound = A.anticoncentration_bound(r, 1.0, factor=1.0)
    assert bool((bound >= exact * (1 - 1e-14)).all())
    assert (bound[0] / exact[0]).item() == pytest.approx(1.0, abs=1e-8)
    # the printed factor 2 doubles the bound, which then says nothing beyond c = sigma sqrt(pi log(4/3)/2)
    assert torch.allclose(A.anticoncentration_bound(r, 1.0, factor=2.0), 2 * bound, rtol=1e-15)
    c_star = math.sqrt(math.pi * math.log(4 / 3) / 2)
    assert A.anticoncentration_bound(0.999 * c_star, 1.0, factor=2.0) < 1 < A.anticoncentration_bound(1.001 * c_star, 1.0,
                                                                                                    factor=2.0)


def test_lemma_b1_float_and_tensor_inputs_agree_and_broadcast():
    scalar = A.anticoncentration_bound(0.7, 2.0)
    assert scalar.dtype == torch.float64 and scalar.dim() == 0
    assert scalar.item() == pytest.approx(
        A.anticoncentration_bound(torch.tensor(0.7, dtype=torch.float64), 2.0).item(), rel=1e-15)
    grid = A.anticoncentration_probability(torch.tensor([0.7, 1.4], dtype=torch.float64), torch.tensor([[1.0], [2.0]]))
    assert grid.shape == (2, 2)
    assert grid[1, 0].item() == pytest.approx(A.anticoncentration_probability(0.7, 2.0).item(), rel=1e-15)


@pytest.mark.parametrize("factor", [1.0, 2.0])
def test_lemma_b2_min_d_is_where_the_union_bound_meets_delta(factor):
    cfg = mmcl.SyntheticConfig(n=20, m=5, M=10, sigma0=0.01)
    delta = 0.1
    d_min = A.lemma_b2_min_d(cfg, delta, factor=factor)
    above = cfg.replace(d=math.ceil(d_min * 1.0001))
    below = cfg.replace(d=math.floor(d_min * 0.9999))
    assert A.lemma_b2_failure_bound(above, delta, factor) <= delta < A.lemma_b2_failure_bound(below, delta, factor)


def test_lemma_b2_factor_two_doubles_the_dimension_requirement():
    cfg = mmcl.SyntheticConfig()
    for delta in (0.1, 1e-3):
        ratio = A.lemma_b2_min_d(cfg, delta, factor=2) / A.lemma_b2_min_d(cfg, delta, factor=1)
        assert ratio == pytest.approx(2.0, rel=1e-4)


def test_lemma_b2_probability_matches_monte_carlo():
    # a configuration where the margin is comparable to sigma0 ||mu||, so the probability is moderate
    cfg = mmcl.SyntheticConfig(n=10, m=5, M=5, d=3_600_000, d_tilde=2000, sigma0=0.01)
    delta = 0.1
    p = A.lemma_b2_probability(cfg, delta)
    assert 0.1 < p < 0.9
    gen = torch.Generator().manual_seed(0)
    N = 40_000
    a0 = torch.randn(N, cfg.m, generator=gen, dtype=torch.float64) * cfg.sigma0 * cfg.mu_norm
    freq = (a0.abs() >= A.lemma_b2_margin(cfg, delta)).all(-1).double().mean().item()
    se = math.sqrt(p * (1 - p) / N)
    assert abs(freq - p) < 5 * se


def test_lemma_b2_log10_probability_is_mpmaths_40_digit_value():
    """``log10=True``: ``m log10 erfc(x)`` where float64 rounds the probability to 0, equal to the float
    of mpmath's 40-digit value (what the assumptions chapter computed before it called the library)."""
    mpmath = pytest.importorskip("mpmath")
    cfg = mmcl.SyntheticConfig()
    margin = A.lemma_b2_margin(cfg, 0.1)
    with mpmath.workdps(40):
        ref = float(cfg.m * mpmath.log10(mpmath.erfc(margin / (math.sqrt(2) * cfg.sigma0 * cfg.mu_norm))))
        assert A.lemma_b2_probability(cfg, 0.1) == 0.0  # underflows ...
        assert A.lemma_b2_probability(cfg, 0.1, log10=True) == ref  # ... its logarithm does not
        assert -2e8 < ref < -1e8
        for x in (20.0, 20.5, 57.3, 2828.4, 1e4, 3.3e6):  # the 40-digit branch: the same float
            for m in (1, 50):
                assert A._log10_erfc_power(x, m) == float(m * mpmath.log10(mpmath.erfc(x)))
        for x in (0.0, 1e-9, 0.3, 0.5, 2.0, 19.9):  # the float64 branch: float64's accuracy
            assert A._log10_erfc_power(x, 7) == pytest.approx(float(7 * mpmath.log10(mpmath.erfc(x))), rel=1e-14,
                                                              abs=1e-300)
    # where it does not underflow, it is the logarithm of the probability
    small = mmcl.SyntheticConfig(n=10, m=5, M=5, d=3_600_000, d_tilde=2000, sigma0=0.01)
    assert A.lemma_b2_probability(small, 0.1, log10=True) == pytest.approx(
        math.log10(A.lemma_b2_probability(small, 0.1)), rel=1e-13)
    with pytest.raises(ValueError, match="x must be >= 0"):
        A._log10_erfc_power(-1.0, 3)


def test_c_mu_threshold_reproduces_the_papers_266():
    assert math.ceil(A.c_mu_threshold(A.N_SNR2_MULTI_MIN) * 100) / 100 == A.C_MU_PAPER
    # and it scales like 1/(n SNR^2)
    assert A.c_mu_threshold(2 * 1.7) == pytest.approx(A.c_mu_threshold(1.7) / 2, rel=1e-12)


def test_proof_exponents_reduce_to_the_papers_first_order_forms():
    cfg = mmcl.SyntheticConfig(lr=1e-8)
    nsnr2 = cfg.n * cfg.snr ** 2
    assert A.proof_exponent_multi(cfg) == pytest.approx((1.06 / 0.48) / (cfg.c_mu * nsnr2), rel=1e-6)
    assert A.proof_exponent_single(cfg) == pytest.approx((0.52 / 0.96) * nsnr2, rel=1e-6)
    # at the paper's step the exact exponent is larger than its linearisation
    big = mmcl.SyntheticConfig()
    assert A.proof_exponent_multi(big) > (1.06 / 0.48) / (big.c_mu * nsnr2)


def test_conditions_are_unique_cover_all_items_and_agree_with_their_sides():
    conds = A.check_assumption41(mmcl.SyntheticConfig())
    keys = [c.key for c in conds]
    assert len(keys) == len(set(keys))
    assert {k[0] for k in keys} == set("1234567")
    for c in conds:
        sides = {"<=": c.lhs <= c.rhs, "<": c.lhs < c.rhs, ">=": c.lhs >= c.rhs, ">": c.lhs > c.rhs}
        assert c.holds == sides[c.relation]
        assert (c.factor >= 1) == c.holds
        assert c.source


@pytest.mark.parametrize("c_mu", [2.0, 2.65, 2.66, 3.0])
def test_item7_follows_c_mu(c_mu):
    cfg = mmcl.SyntheticConfig(mu_tilde_norm=c_mu * 5.0)
    held = {c.key: c.holds for c in A.check_assumption41(cfg)}
    assert held["7a"] == (cfg.c_mu >= 2.66)


def test_item6_window_for_n_snr2():
    # mu_norm sets n SNR^2 = n ||mu||^2/(sigma^2 d); the two proofs need it in [1.7, 1.8]
    for mu_norm, single_ok, multi_ok in ((5.0, True, False), (5.9, True, True), (6.2, False, True)):
        cfg = mmcl.SyntheticConfig(mu_norm=mu_norm, mu_tilde_norm=3 * mu_norm)
        held = {c.key: c.holds for c in A.check_assumption41(cfg)}
        assert (held["6a"], held["6b"]) == (single_ok, multi_ok), (mu_norm, cfg.n * cfg.snr ** 2)


def test_delta_one_over_d_makes_b2_and_sigma0_conditions_incompatible():
    gen = torch.Generator().manual_seed(0)
    for _ in range(40):
        n = int(torch.randint(2, 200, (1,), generator=gen)) * 2
        m = int(torch.randint(1, 100, (1,), generator=gen))
        d = int(10 ** (2 + 10 * torch.rand(1, generator=gen).item()))
        s0 = 10 ** (-8 + 8 * torch.rand(1, generator=gen).item())
        cfg = mmcl.SyntheticConfig(n=n, m=m, M=1, d=d, d_tilde=d, sigma0=s0)
        held = {c.key: c.holds for c in A.check_assumption41(cfg, A.AssumptionConfig(delta=1 / d))}
        assert not (held["1b"] and held["3a"]), (n, m, d, s0)
    # ... whereas a fixed delta admits configurations satisfying both
    n, m, delta = 2, 1, 0.5
    L = math.log(8 * m * n / delta)
    K = A.lemma_b2_min_d(mmcl.SyntheticConfig(n=n, m=m, M=1, d=2, d_tilde=2, sigma0=1.0), delta)  # K / sigma0
    d = int(4 * K ** 2 * L * 1.1)
    s0 = 0.99 / (2 * math.sqrt(L) * math.sqrt(d))
    cfg = mmcl.SyntheticConfig(n=n, m=m, M=1, d=d, d_tilde=d, sigma0=s0)
    held = {c.key: c.holds for c in A.check_assumption41(cfg, A.AssumptionConfig(delta=delta))}
    assert held["1b"] and held["3a"]


def test_condition_tables_have_one_row_per_condition():
    conds = A.check_assumption41(mmcl.SyntheticConfig())
    lines = A.conditions_markdown(conds).splitlines()
    assert len(lines) == len(conds) + 2
    assert all(line.count(" | ") >= 6 for line in lines[2:])
    table = A.conditions_html(conds)
    assert table.count("<tr>") == len(conds) + 1
    assert table.count("<strong>no</strong>") == sum(not c.holds for c in conds)


@pytest.mark.parametrize("call,match", [
    (lambda: A.AssumptionConfig(delta=0.0), "AssumptionConfig.delta"),
    (lambda: A.AssumptionConfig(delta=1.5), "AssumptionConfig.delta"),
    (lambda: A.AssumptionConfig(c_ell=0.5), "AssumptionConfig.c_ell"),
    (lambda: A.AssumptionConfig(slack=0.7), "AssumptionConfig.slack"),
    (lambda: A.anticoncentration_probability(-1.0, 1.0), "c must be"),
    (lambda: A.anticoncentration_bound(1.0, 0.0), "sigma must be"),
    (lambda: A.anticoncentration_bound(1.0, 1.0, factor=0), "factor"),
    (lambda: A.lemma_b2_margin(mmcl.SyntheticConfig(), 2.0), "delta"),
    (lambda: A.check_assumption41({"d": 2000}), "cfg must be a SyntheticConfig"),
    (lambda: A.c_mu_threshold(1.7, exponent=0.5, slack=0.6), "slack"),
    (lambda: A.conditions_markdown(["1a"]), "list of Condition"),
    (lambda: A.conditions_html("1a"), "list of Condition"),
])
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_strict_conditions_are_strict():
    """5b is sigma_eps < sigma_xi (proof of Lemma C.2): equal noise levels break it (it used to pass
    as <=)."""
    import dataclasses

    from mmcl.experiments import single_stage1 as experiment

    cfg = experiment.config("default")
    at = {c.key: c for c in A.check_assumption41(dataclasses.replace(cfg, sigma_eps=cfg.sigma_xi))}
    assert at["5b"].relation == "<" and not at["5b"].holds
    assert {c.key: c for c in A.check_assumption41(cfg)}["5b"].holds


def test_premises_beyond_assumption41_are_evaluated_from_their_printed_forms():
    """Sec. 3.3, Lemma C.6 and Lemma C.10 as premise rows, against the formulas written out here."""
    import math
    from mmcl.proofs.assumptions import AssumptionConfig, premise_conditions, premises, premises_hold

    cfg = mmcl.SyntheticConfig()
    rows = {c.key: c for c in premise_conditions(cfg)}
    assert set(rows) == {"3.3", "C.6", "C.10", "D.4", "D.6"}
    # Lemma D.4's requirement 1 - C_l/(M+1) >= 0.96, with the paper's C_l and with a measured one
    assert rows["D.4"].lhs == cfg.M + 1 and rows["D.4"].rhs == pytest.approx(25 * 1.01)
    big = {c.key: c for c in premise_conditions(cfg, AssumptionConfig(c_ell=cfg.M))}
    assert rows["D.4"].holds and not big["D.4"].holds
    # Lemma D.6's condition on d, as printed (a square root over 2 n^3 log and over pi log)
    d6_ = 300 * math.sqrt(2 * 100 ** 3 * math.log(6 * 100 ** 2 / 0.1)) / (
        0.01 * math.sqrt(math.pi * -math.log(1 - (0.1 / 50) ** 2)))
    assert rows["D.6"].rhs == pytest.approx(d6_) and not rows["D.6"].holds
    assert rows["3.3"].lhs == pytest.approx(10 / (25 / math.sqrt(2000)))  # Figure 1: <nu, mu> = 10
    assert not rows["3.3"].holds
    tilted = cfg.replace(nu_cos=cfg.mu_norm / (cfg.nu_norm * math.sqrt(cfg.d)))
    assert premise_conditions(tilted)[0].lhs == pytest.approx(1.0) and premise_conditions(tilted)[0].holds
    # Lemma C.10 with C = 202 C_l, C_l = 1.01, m = 50, delta = 0.1: about 1.9e11
    C = 202 * 1.01
    assert rows["C.10"].rhs == pytest.approx(8 * C * C * math.log(10) / -math.log(1 - (0.1 / 50) ** 2))
    assert 1.8e11 < rows["C.10"].rhs < 2.0e11
    d6 = math.sqrt(300 * math.log(6 * 100 ** 2 / 0.1) / (-math.log(1 - 0.01 / (4 * 100 ** 2)) * math.pi * 0.01 ** 2))
    assert rows["C.6"].rhs == pytest.approx(d6) and not rows["C.6"].holds
    assert not premises_hold(cfg, ("3.3",)) and premises_hold(tilted, ("3.3",))
    assert "3.3" in premises(cfg, ("1a", "3.3"))
    with pytest.raises(ValueError, match="C.11"):
        premises(cfg, ("C.11",))
