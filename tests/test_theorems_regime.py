"""The chapter "Inside the theorems' regime": the scalings do what their docstrings say, the fits
recover known slopes, the sweep and the verdicts run (tiny sizes), and bad input is refused."""
import dataclasses
import math

import pytest
import torch

from mmcl.experiments import theorems_regime as tr
from mmcl.experiments.theorems_regime.scalings import _build
from mmcl.proofs import single_stage2 as cv
from mmcl.proofs.assumptions import check_assumption41, lemma_b2_min_d
from mmcl.dynamics import simulate
from mmcl.model.data import sample_synthetic

S = tr.RegimeScaling()


@pytest.fixture(autouse=True)
def _one_thread():
    """These runs are small (m x n x n): one thread is several times faster than two on a shared
    2-core machine, as in the book (``chapter_setup``)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _cond(cfg):
    return {c.key: c for c in check_assumption41(cfg)}


# --------------------------------------------------------------------------------------------
# The scalings
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [20, 100, 178, 316, 1000])
def test_scaling_values(n):
    cfg = tr.regime_config(n)
    assert cfg.d == cfg.d_tilde == math.ceil(n * n * math.log(6 * n * n / 0.1))  # d = n^2 log(6n^2/delta)
    assert cfg.d >= n * n
    assert cfg.n_snr2 == pytest.approx(1.75, rel=1e-12)
    assert cfg.c_mu == pytest.approx(3.0, rel=1e-12) and cfg.nu_norm == pytest.approx(0.4 * cfg.mu_norm)
    assert cfg.lr * cfg.d / n == pytest.approx(0.2, rel=1e-12)
    assert cfg.lr * cfg.sigma_xi ** 2 * cfg.d / (n * cfg.m * cfg.tau) == pytest.approx(S.noise_step) == pytest.approx(0.04)
    assert cfg.M == n // 2 and cfg.m == 50 and cfg.n_epochs == 200
    c = _cond(cfg)
    assert c["3a"].lhs / c["3a"].rhs == pytest.approx(0.9, rel=1e-12)  # sigma0 at 0.9 of (3a)'s bound
    assert c["1a"].holds and c["1a"].lhs - c["1a"].rhs < 1  # (1a) holds, at its bound (the ceiling)
    for key in ("2a", "2b", "3a", "3b", "3c", "5a", "5b", "6a", "6a'", "6b", "7a", "7b", "7c"):
        assert c[key].holds, key
    assert not c["1b"].holds and not c["4b"].holds
    assert c["4c"].holds == (n >= 200)


def test_failing_conditions_by_n():
    fails = tr.failing_by_n(tr.conditions_by_n([100, 178, 316, 1000]))
    assert fails[100] == ["1b", "1b~", "4a", "4b", "4c"] and fails[178] == fails[100]
    assert fails[316] == ["1b", "1b~", "4a", "4b"] and fails[1000] == fails[316]
    at_1d = tr.failing_by_n(tr.conditions_by_n([100, 1000], delta="1/d"))
    assert all({"1b", "3a"} <= set(v) for v in at_1d.values())  # never both at delta = 1/d


def test_b2_dimension_is_the_smallest_that_satisfies_lemma_b2():
    sc = tr.RegimeScaling(d_rule="b2")
    for n in (20, 100):
        d = tr.b2_dimension(n)
        cfg = tr.regime_config(n, sc)
        assert cfg.d == d
        assert lemma_b2_min_d(cfg, 0.1) <= d  # 1b holds at d ...
        below = _build(n, int(d * 0.98), S)
        assert lemma_b2_min_d(below, 0.1) > below.d  # ... and not 2 % below it
        c = _cond(cfg)
        assert c["1b"].holds and c["1b~"].holds and c["1a"].holds
    assert tr.b2_dimension(100) == pytest.approx(2.82e17, rel=0.01)


def test_b2_refused_only_where_span_draws_cannot_go():
    from mmcl.model.span import SPAN_D_MAX

    sc = tr.RegimeScaling(d_rule="b2")
    assert tr.regime_config(10000, sc).d > tr.D_MAX  # past the former int64 limit: drawn now
    n = 100000
    with pytest.raises(ValueError, match="2\\^78"):
        tr.regime_config(n, sc)
    cfg = tr.regime_config(n, sc, for_span=False)  # evaluated only
    assert cfg.d > SPAN_D_MAX


def test_n_thresholds():
    assert tr.n_threshold("4a") == pytest.approx(2500 * math.log(40))
    assert tr.n_threshold("4b") == pytest.approx(1.28e6 * math.log(40))
    assert tr.n_threshold("4c") == pytest.approx(200.0)
    n = 2 * math.ceil(tr.n_threshold("4b") / 2)
    conds = tr.conditions_by_n([n], tr.RegimeScaling(d_rule="b2"))[n]
    assert all(c.holds for c in conds)  # every condition at delta = 0.1, n ~ 4.7 million
    with pytest.raises(ValueError, match="key"):
        tr.n_threshold("4d")


@pytest.mark.parametrize("kw, name", [({"d_rule": "n2"}, "d_rule"), ({"init_fraction": 1.5}, "init_fraction"),
                                      ({"delta": 0.0}, "delta"), ({"M_fraction": 0.7}, "M_fraction"),
                                      ({"m": 0}, "m"), ({"step": float("nan")}, "step"),
                                      ({"n_epochs": True}, "n_epochs")])
def test_scaling_bad_input(kw, name):
    with pytest.raises(ValueError, match=name):
        tr.RegimeScaling(**kw)


@pytest.mark.parametrize("n", [101, 0, True, 100.0])
def test_config_bad_n(n):
    with pytest.raises(ValueError, match="n "):
        tr.regime_config(n)


def test_config_bad_arguments():
    with pytest.raises(ValueError, match="scaling"):
        tr.regime_config(100, "b2")
    with pytest.raises(ValueError, match="for_span"):
        tr.regime_config(100, for_span=1)


# --------------------------------------------------------------------------------------------
# The fits
# --------------------------------------------------------------------------------------------
def test_fit_recovers_a_known_slope():
    gen = torch.Generator().manual_seed(1)
    x = [100, 178, 316, 562, 1000]
    vals = [3.0 * n ** -0.5 * torch.exp(0.05 * torch.randn(10, generator=gen, dtype=torch.float64)) for n in x]
    f = tr.loglog_fit(x, vals, n_boot=500)
    assert abs(f.slope + 0.5) < 4 * f.stderr + 0.01
    assert f.boot_low < -0.5 < f.boot_high and f.boot_high - f.boot_low < 0.1
    assert float(f.predict(100)) == pytest.approx(f.y[0], rel=0.05)
    exact = tr.loglog_fit(x, [[2.0 * n ** 1.25] for n in x])
    assert exact.slope == pytest.approx(1.25, abs=1e-12) and exact.stderr < 1e-10
    assert exact.intercept == pytest.approx(math.log(2.0), abs=1e-10)
    assert exact.boot_low == pytest.approx(1.25, abs=1e-12)  # one seed per size: nothing to resample
    two = tr.loglog_fit([10, 20], [[1.0], [2.0]])
    assert two.slope == pytest.approx(1.0) and math.isnan(two.stderr)


def test_fit_ignores_nan_and_uses_floor():
    f = tr.loglog_fit([10, 100], [[1.0, float("nan")], [0.1, 0.1]])
    assert f.slope == pytest.approx(-1.0)
    g = tr.loglog_fit([10, 100], [[0.0, 0.0], [0.1, 0.1]], floor=1e-3)
    assert g.slope == pytest.approx(2.0) and g.floor == 1e-3


@pytest.mark.parametrize("x, vals, kw, name", [
    ([10], [[1.0]], {}, "x"), ([10, 10], [[1.0], [2.0]], {}, "x"), ([10, -1], [[1.0], [2.0]], {}, "x"),
    ([10, 20], [[1.0]], {}, "values"), ([10, 20], [[1.0], [0.0]], {}, "values"),
    ([10, 20], [[1.0], [float("nan")]], {}, "values"), ([10, 20], [[1.0], [float("inf")]], {}, "values"),
    ([10, 20], [[1.0], [2.0]], {"n_boot": 0}, "n_boot"), ([10, 20], [[1.0], [2.0]], {"floor": -1.0}, "floor"),
])
def test_fit_bad_input(x, vals, kw, name):
    with pytest.raises(ValueError, match=name):
        tr.loglog_fit(x, vals, **kw)


# --------------------------------------------------------------------------------------------
# The sweep and the verdicts, at tiny sizes
# --------------------------------------------------------------------------------------------
TINY = tr.RegimeScaling(n_epochs=140)  # past both T1 at n = 20 (133 single-modal)


def test_sweep_runs_and_float32_agrees_with_float64():
    sw = tr.run_regime_sweep([20, 40], {20: 2, 40: 2}, TINY)
    sw64 = tr.run_regime_sweep([20, 40], {20: 2, 40: 2}, TINY, dtype="float64")
    for mode in tr.MODES:
        for q in tr.QUANTITIES:
            for a, b in zip(sw.values(mode, q), sw64.values(mode, q)):
                assert a.shape == (2,)
                if q.startswith("err"):
                    assert bool(((a - b).abs() <= 0.01).all()), (mode, q)
                elif q == "t1":
                    assert bool(((a - b).abs() <= 1).all() | (a.isnan() & b.isnan()).all()), (mode, q)
                else:
                    assert torch.allclose(a, b, rtol=1e-3, atol=1e-5), (mode, q, a, b)
    assert sw.by_n[40].cfg == tr.regime_config(40, TINY)
    assert sw.by_n[20].t1_formula["multi"] == pytest.approx(
        math.log(20 / (sw.by_n[20].cfg.sigma0 * sw.by_n[20].cfg.mu_norm)) / math.log1p(
            0.48 * 3 * TINY.step * 1.75 / (50 * 0.1)))  # Lemma 5.4's T1, held by eta = 0.2 n/d
    f = sw.fit("multi", "gamma_T1")
    assert math.isfinite(f.slope)
    assert [float(v.mean()) for v in sw.scaled("single", "gamma_T1", 0.5)] == pytest.approx(
        [m * n ** 0.5 for m, n in zip(sw.mean("single", "gamma_T1"), sw.sizes)])
    with pytest.raises(ValueError, match="q="):
        sw.values("single", "gamma")
    with pytest.raises(ValueError, match="mode"):
        sw.values("both", "loss")


@pytest.mark.parametrize("sizes, seeds, name", [([20], {20: 1}, "sizes"), ([20, 20], {20: 1}, "sizes"),
                                                ([20, 40], {20: 1}, "seeds"), ([20, 40], {20: 1, 40: 0}, "seeds"),
                                                ([20, 41], {20: 1, 41: 1}, "n ")])
def test_sweep_bad_input(sizes, seeds, name):
    with pytest.raises(ValueError, match=name):
        tr.run_regime_sweep(sizes, seeds, TINY)


def test_stage_slice_and_the_chain_on_it():
    cfg = tr.regime_config(20, TINY)
    data = sample_synthetic(cfg, 0, span=True, dtype=torch.float64)
    traj = simulate(cfg, data, "single", "recursion", record_derivatives=True)
    part = tr.stage_slice(traj, 60)
    T = TINY.n_epochs
    assert part.steps.tolist() == list(range(60, T + 1)) and part.rho.shape[0] == T - 59
    assert part.loss.shape == traj.loss.shape
    assert torch.equal(part.lprime[0], traj.lprime[60])
    ccfg = cv.ComparatorConfig(epsilon=0.05)
    whole = cv.comparator_chain(traj, data, cfg, ccfg, 60)
    cut = cv.comparator_chain(part, data, cfg, ccfg, 60)
    assert cut.feasible16 == pytest.approx(whole.feasible16) and cut.factor17 == pytest.approx(whole.factor17)
    assert torch.allclose(cut.slack, whole.slack[60:])
    with pytest.raises(ValueError, match="fewer than 2"):
        tr.stage_slice(traj, T)
    with pytest.raises(ValueError, match="traj"):
        tr.stage_slice(data, 0)


def test_verdicts_tiny_and_without_cross_terms():
    v = tr.revisit_verdicts([20], {20: 1}, TINY)[20]
    assert math.isfinite(v.factor17) and v.rate_ratio.shape == (1,) and v.cases.shape == (1, 4)
    assert bool((v.cases[:, 3] == 1.0).all())  # Lemma D.9 case (4) holds
    assert bool((v.rho_T1 <= v.noise_bound).all())
    no_chain = tr.revisit_verdicts([20], {20: 1}, TINY, chain_sizes=())[20]
    assert math.isnan(no_chain.factor17) and torch.equal(no_chain.rate_ratio, v.rate_ratio)
    # at Lemma B.2's dimension the cross terms are ~1e-8: Lemmas C.3 / C.7 hold (almost) exactly,
    # where at d = n^2 log(6n^2/delta) they break by cross-term-sized amounts
    big = tr.revisit_verdicts([20], {20: 1}, dataclasses.replace(TINY, d_rule="b2"), chain_sizes=())[20]
    assert int(big.flipped.sum()) == 0 and float(big.neg_init_ratio.max()) < 1e-5
    assert float(big.neg_init_ratio.max()) < 0.01 * float(v.neg_init_ratio.max())
    with pytest.raises(ValueError, match="seeds"):
        tr.revisit_verdicts([20], {40: 1}, TINY)
    with pytest.raises(ValueError, match="scaling"):
        tr.revisit_verdicts([20], {20: 1}, None)


def test_verdicts_refuse_a_run_that_ends_before_t1():
    """A T1 past the run used to fail deep inside with an IndexError (and the single-modal stage-2 start
    was silently moved to the last step); now it is refused up front, naming the parameter."""
    short = dataclasses.replace(TINY, n_epochs=5)
    with pytest.raises(ValueError, match=r"T1 of the paper's formula is .* beyond RegimeScaling.n_epochs = 5"):
        tr.revisit_verdicts([20], {20: 1}, short)


# --------------------------------------------------------------------------------------------
# The chapter's sizes and cached runs (mmcl.experiments.theorems_regime.chapter)
# --------------------------------------------------------------------------------------------
def test_sizes():
    from mmcl.experiments.sizes import SIZES
    from mmcl.figures import theorems_regime as figs

    assert set(tr.BY_SIZE) == set(SIZES)
    assert tr.sizes("default").sweep_seeds == {100: 10, 178: 10, 316: 10, 562: 4, 1000: 2}
    for size in SIZES:
        s = tr.sizes(size)
        assert set(s.chain_sizes) <= set(s.verdict_seeds) <= set(s.sweep_seeds)
        assert set(s.control_seeds) <= set(s.sweep_seeds) and max(s.control_seeds) <= 316  # span draws: d < 2^63
    assert tr.sizes("default").n_epochs == tr.sizes("full").n_epochs == tr.SCALING.n_epochs == 200
    assert tr.sizes("tiny").n_epochs == 150 and tr.CONTROL_SCALING == dataclasses.replace(tr.SCALING, d_rule="b2")
    conditions = tr.regime_conditions("tiny")
    expected = tr.conditions_by_n([20, 40, 60], dataclasses.replace(tr.SCALING, n_epochs=150))
    assert {n: [(c.key, c.holds) for c in cs] for n, cs in conditions.items()} == \
        {n: [(c.key, c.holds) for c in cs] for n, cs in expected.items()}
    with pytest.raises(ValueError, match="size='medium' is unknown; valid: 'tiny', 'default', 'full'"):
        tr.regime_sweep("medium")
    # the figure module only draws: no table per size left there
    assert not [k for k, v in vars(figs).items() if isinstance(v, dict) and set(v) == set(SIZES)]
