"""The proposition on what a linear head can read from an OOD input (mmcl.downstream.window), each
formula against an independent computation: Monte Carlo over the test noise at float64, a Schur
complement, a simulated plug-in fit."""
import math

import pytest
import torch

from mmcl.downstream import window as w

F64 = torch.float64


def _weights(m=5, d=9, seed=0, common=0.0):
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(m, d, generator=g, dtype=F64)
    if common:  # a shared direction, as the learned part gamma_r mu/||mu||^2 adds
        W = W + common * torch.randn(m, 1, generator=g, dtype=F64) * torch.randn(1, d, generator=g, dtype=F64)
    return W


def _sample(W, a, sigma_xi, N, seed):
    """OOD embeddings h = relu(y a) + relu(W zeta) and labels, N samples."""
    g = torch.Generator().manual_seed(seed)
    y = torch.where(torch.rand(N, generator=g, dtype=F64) < 0.5, -1.0, 1.0).to(F64)
    zeta = sigma_xi * torch.randn(N, W.shape[1], generator=g, dtype=F64)
    return torch.relu(y[:, None] * a[None, :]) + torch.relu(zeta @ W.T), y


def _error(u, b, h, y):
    return float(((h @ u + b) * y <= 0).to(F64).mean())


def test_relu_moments_match_monte_carlo():
    W = _weights(common=1.0)
    cov = 0.7 ** 2 * W @ W.T
    mean, C = w.relu_moments(cov)
    z = torch.distributions.MultivariateNormal(torch.zeros(5, dtype=F64), cov).sample((400_000,))
    r = torch.relu(z)
    se = r.std(0) / math.sqrt(z.shape[0])
    assert torch.all((r.mean(0) - mean).abs() < 5 * se)
    emp = torch.cov(r.T)
    assert torch.allclose(emp, C, atol=0.02 * float(C.diagonal().max()))
    assert torch.allclose(C.diagonal(), w.RELU_VARIANCE * cov.diagonal())


def test_private_noise_is_the_conditional_standard_deviation():
    W = _weights(m=6, d=10, common=2.0)
    sigma = 1.3
    ell = w.private_noise(W, sigma)
    S = sigma ** 2 * W @ W.T
    for r in range(6):
        o = [s for s in range(6) if s != r]
        cond = S[r, r] - S[r, o] @ torch.linalg.solve(S[o][:, o], S[o, r])
        assert float(ell[r]) == pytest.approx(math.sqrt(float(cond)), rel=1e-9)
    dep = torch.cat([W[:3], W[:1] + W[1:2]])  # a row in the span of the others: no private part
    assert float(w.private_noise(dep, 1.0)[3]) == 0.0


@pytest.mark.parametrize("seed", [0, 1])
def test_no_linear_head_beats_the_floor_and_the_atom_head_reaches_a_quarter(seed):
    W = _weights(m=4, d=8, seed=seed)
    sigma = 1.0
    a = 0.01 * torch.randn(4, generator=torch.Generator().manual_seed(seed + 7), dtype=F64)
    floor = float(w.head_error_floor(a, W, sigma))
    assert 0.2 < floor < 0.25
    h, y = _sample(W, a, sigma, 200_000, seed)
    se = 0.5 / math.sqrt(h.shape[0])
    g = torch.Generator().manual_seed(seed + 11)
    for _ in range(30):  # random heads, with thresholds anywhere in the scores' range
        u = torch.randn(4, generator=g, dtype=F64)
        score = h @ u
        b = -float(score.quantile(float(torch.rand(1, generator=g))))
        assert _error(u, b, h, y) >= floor - 4 * se
    u, b = w.atom_head(a, sigma * W.norm(dim=-1))
    err = _error(u, float(b), h, y)
    assert err >= floor - 4 * se
    assert err == pytest.approx(float(w.atom_head_error(a, sigma * W.norm(dim=-1))), abs=4 * se)
    assert err < 0.26  # the 1/4 is reached: no larger constant could stand in the floor


def test_the_discriminability_of_every_head_stays_below_the_bound():
    W = _weights(m=5, d=9, common=0.5)
    sigma = 0.8
    a = 0.05 * torch.randn(5, generator=torch.Generator().manual_seed(3), dtype=F64)
    bound = float(w.discriminability_bound(a, W, sigma))
    _, cov = w.relu_moments(sigma ** 2 * W @ W.T)
    lda = torch.linalg.solve(cov, a)
    D = float(w.lda_dprime(a[None], W, sigma)[0])
    assert D == pytest.approx(float(lda @ a) / math.sqrt(float(lda @ cov @ lda)), rel=1e-9)
    assert D <= bound * (1 + 1e-12)
    g = torch.Generator().manual_seed(5)
    for _ in range(50):
        u = torch.randn(5, generator=g, dtype=F64)
        assert abs(float(u @ a)) / math.sqrt(float(u @ cov @ u)) <= D * (1 + 1e-12)


def test_the_gaussian_equivalent_error_matches_monte_carlo_for_a_spread_head():
    m = 120
    W = _weights(m=m, d=300, seed=2)
    sigma = 1.0
    a = 0.05 * torch.ones(m, dtype=F64)
    h, y = _sample(W, a, sigma, 100_000, 4)
    _, cov = w.relu_moments(sigma ** 2 * W @ W.T)
    mean, _ = w.relu_moments(sigma ** 2 * W @ W.T)
    u = torch.linalg.solve(cov, a)
    b = -float(u @ (mean + a.clamp_min(0) / 2 + (-a).clamp_min(0) / 2))
    pred = float(w.head_error_gaussian(u, torch.tensor(b), a[None], W, sigma)[0])
    assert _error(u, b, h, y) == pytest.approx(pred, abs=0.01)
    D = float(w.lda_dprime(a[None], W, sigma)[0])
    assert pred == pytest.approx(float(w.normal_cdf(torch.tensor(-D / 2))), abs=1e-9)


def test_fitted_dprime_matches_a_simulated_plug_in_fit():
    p, n_fit, D = 20, 100, 2.0
    K = torch.eye(p, dtype=F64)
    a = torch.zeros(p, dtype=F64)
    a[0] = D
    g = torch.Generator().manual_seed(0)
    vals = []
    for _ in range(2000):  # class means estimated from n_fit/2 samples each, K known
        e = torch.randn(p, generator=g, dtype=F64) * math.sqrt(4 / n_fit)
        u = a + e
        vals.append(float(u @ a) / float(u.norm()))
    assert sum(vals) / len(vals) == pytest.approx(float(w.fitted_dprime(torch.tensor(D), p, n_fit)), rel=0.03)


def test_the_window_threshold_solves_its_closed_form():
    kw = dict(gamma_sq=50 * 0.8 ** 2, m=50, kappa=0.4, snr=0.074, s0=0.12, d=3.5e18, n_fit=200)
    c = w.window_threshold(**kw)
    assert 0.01 < c < 0.2
    err = w.normal_cdf(-w.window_dprime(c, **kw) / 2)
    assert float(err) == pytest.approx(w.ERROR_TARGET, abs=1e-9)
    weak = dict(kw, gamma_sq=50 * 0.005 ** 2)  # a signal too small for any cos <= 1
    assert w.window_threshold(**weak) is None
    strong_init = dict(kw, kappa=40.0)  # the untrained features classify: no learned signal needed
    assert w.window_threshold(**strong_init) == 0.0
    # the common-mode noise caps the learned channel at 2 cos ||nu|| / sigma_xi
    capped = dict(kw, s0=1e-12)
    D = float(w.window_dprime(0.3, **dict(capped, n_fit=None)))
    init = float(w.window_dprime(0.0, **dict(capped, n_fit=None)))
    assert math.sqrt(D ** 2 - init ** 2) == pytest.approx(2 * 0.3 * 0.4 * 0.074 * math.sqrt(3.5e18), rel=1e-6)


def test_threshold_on_grid():
    cos = torch.tensor([1e-3, 1e-2, 1e-1, 1.0], dtype=F64)
    assert w.threshold_on_grid(cos, torch.tensor([0.5, 0.5, 0.0, 0.0])) == pytest.approx(10 ** -1.5)
    assert w.threshold_on_grid(cos, torch.tensor([0.5, 0.4, 0.3, 0.26])) is None
    assert w.threshold_on_grid(cos, torch.tensor([0.1, 0.0, 0.0, 0.0])) == pytest.approx(1e-3)
    with pytest.raises(ValueError, match="ascending"):
        w.threshold_on_grid(cos.flip(0), torch.zeros(4))


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="sigma_xi"):
        w.private_noise(_weights(), -1.0)
    with pytest.raises(ValueError, match="m"):
        w.window_dprime(0.1, gamma_sq=1, m=0, kappa=0.4, snr=0.1, s0=0.1, d=1e6)
    with pytest.raises(ValueError, match="W must be"):
        w.head_error_floor(torch.zeros(3), torch.zeros(3), 1.0)


@pytest.mark.parametrize("common", [0.0, 1.5])
def test_the_best_heads_error_stays_below_the_cantelli_bound_and_dprime_above_its_lower_bound(common):
    m = 6
    W = _weights(m=m, d=12, seed=4, common=common)
    sigma = 0.9
    g = torch.Generator().manual_seed(9)
    a = 0.4 * torch.randn(3, m, generator=g, dtype=F64)  # three signals against one W
    D = w.lda_dprime(a, W, sigma)
    low = w.dprime_lower(a, W, sigma)
    assert torch.all(low <= D * (1 + 1e-12))
    if not common:  # nearly orthogonal rows, as the initial weights are: a bound, not a triviality
        assert torch.all(low > 0.2 * D)
    upper = w.head_error_upper(a, W, sigma)
    mean, cov = w.relu_moments(sigma ** 2 * W @ W.T)
    for k in range(3):  # the LDA head with its threshold halfway, simulated
        h, y = _sample(W, a[k], sigma, 200_000, 20 + k)
        u = torch.linalg.solve(cov, a[k])
        mid = mean + (a[k].clamp_min(0) + (-a[k]).clamp_min(0)) / 2
        err = _error(u, -float(u @ mid), h, y)
        assert err <= float(upper[k]) + 4 * 0.5 / math.sqrt(h.shape[0])


def test_the_accuracy_standard_error_is_the_binomial_one_at_one_half():
    import random

    from mmcl.downstream.evaluation import accuracy_standard_error

    rng = random.Random(0)
    n, reps = 500, 4000
    accs = [sum(rng.random() < 0.5 for _ in range(n)) / n for _ in range(reps)]
    mean = sum(accs) / reps
    sd = (sum((a - mean) ** 2 for a in accs) / (reps - 1)) ** 0.5
    assert abs(sd - accuracy_standard_error(n)) < 0.05 * accuracy_standard_error(n)
    with pytest.raises(ValueError, match="n_scored"):
        accuracy_standard_error(0)
