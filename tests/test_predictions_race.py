"""The closed-form race of stage 1 (mmcl.proofs.predictions.stage1_race): its rates against one step of
the paper's update (mmcl.dynamics.reference.reference_step) at uniform loss derivatives on a draw
without cross terms, its predicted winner against simulated races on both sides of the boundary, its
argument checks, and the boundaries the chapter "Phase diagrams" overlays (mmcl.experiments.phase_diagrams)."""
import math

import pytest
import torch

import mmcl
from mmcl.dynamics import simulate
from mmcl.dynamics.forward import preactivations
from mmcl.dynamics.reference import reference_step
from mmcl.model.data import SyntheticData, sample_synthetic
from mmcl.proofs.predictions import Stage1Race, stage1_race
from mmcl.proofs.predictions import b_dynamics_prediction, noise_step_scale, pairing_rate
from mmcl.proofs.preactivations import without_cross_terms

F64 = torch.float64
# sigma0 tiny: every similarity is ~1e-12, so l'_i = l'_{i,j} = 1/(M+1) to round-off; eps = 0 in _one_step:
# the positive's noise patch is the anchor's; M = n/2: every opposite-label sample is a negative
STEP = mmcl.SyntheticConfig(d=400, d_tilde=400, n=20, m=400, M=10, sigma0=1e-8,
                            mu_norm=3.0, mu_tilde_norm=7.0, sigma_xi_tilde=1.3)


def _orthogonal(data: SyntheticData) -> SyntheticData:
    """Both modalities' noise made orthogonal to each other and to the signal (d = d~ needed)."""
    data = without_cross_terms(data)
    f = {k: getattr(data, k) for k in SyntheticData._SPEC}
    swap = dict(f, mu=f["mu_tilde"], xi=f["xi_tilde"], W0=f["W0_tilde"], mu_tilde=f["mu"], xi_tilde=f["xi"],
                W0_tilde=f["W0"])
    f["xi_tilde"] = without_cross_terms(SyntheticData(**swap)).xi
    return SyntheticData(**f, ood=data.ood)


def _one_step(cfg, mode, seed=0):
    data = _orthogonal(sample_synthetic(cfg, seed, dtype=F64, with_ood=False))
    data = SyntheticData(**dict({k: getattr(data, k) for k in SyntheticData._SPEC}, eps=torch.zeros_like(data.eps)))
    m, n = cfg.m, cfg.n
    zeros = dict(gamma=torch.zeros(m, dtype=F64), rho=torch.zeros(m, n, dtype=F64))
    tilde = dict(gamma_tilde=torch.zeros(m, dtype=F64), rho_tilde=torch.zeros(m, n, dtype=F64)) if mode == "multi" \
        else {}
    t = reference_step(data, cfg, mode, **zeros, **tilde)
    assert torch.allclose(t.lprime, torch.full_like(t.lprime, 1 / (cfg.M + 1)), rtol=1e-9, atol=0)
    assert torch.allclose(t.lprime_neg, torch.full_like(t.lprime_neg, 1 / (cfg.M + 1)), rtol=1e-9, atol=0)
    gamma1 = t.dgamma_pos - t.dgamma_neg
    before = (preactivations(data, zeros["gamma"], zeros["rho"], data.mu[None])[:, 0],
              preactivations(data, zeros["gamma"], zeros["rho"], data.xi))
    after = (preactivations(data, gamma1, t.drho, data.mu[None])[:, 0], preactivations(data, gamma1, t.drho, data.xi))
    out = dict(data=data, terms=t, signal=before[0], signal1=after[0], noise=before[1], noise1=after[1])
    if mode == "multi":
        g1t = t.dgamma_pos_tilde - t.dgamma_neg_tilde
        out["signal_t"] = preactivations(data, tilde["gamma_tilde"], tilde["rho_tilde"], data.mu_tilde[None],
                                         tilde=True)[:, 0]
        out["noise_t"] = preactivations(data, tilde["gamma_tilde"], tilde["rho_tilde"], data.xi_tilde, tilde=True)
        out["noise1_t"] = preactivations(data, g1t, t.drho_tilde, data.xi_tilde, tilde=True)
    return out


def _total_rate(P, P1, scale):
    """The one-step growth of a neuron's active noise total (``B_+ + B_-`` of Sec. 5.1), each pair's
    step divided by its sample's ``||xi_i||^2/(sigma_xi^2 d)``, relative to the total: one per neuron."""
    act = P > 0
    zero = torch.zeros_like(P)
    return torch.where(act, (P1 - P) / scale, zero).sum(1) / torch.where(act, P, zero).sum(1)


def test_single_rates_are_one_step_of_lemma_5_1_at_uniform_derivatives():
    cfg = STEP
    race = stage1_race(cfg, "single")
    s = _one_step(cfg, "single")
    # signal: every neuron's <w_r, mu> grows by exactly the signal rate (balanced labels, hard negatives)
    assert torch.allclose(s["signal1"] / s["signal"] - 1, torch.full_like(s["signal"], race.signal_rate),
                          rtol=1e-9, atol=0)
    # noise, per active pair: exactly a s_i (Psi_i - mean_{j in N_i} sigma(Psi_j)), s_i = eta ||xi_i||^2/(n m tau)
    data, P, P1 = s["data"], s["noise"], s["noise1"]
    a, b = b_dynamics_prediction(cfg)
    s_i = cfg.lr * (data.xi * data.xi).sum(1) / (cfg.n * cfg.m * cfg.tau)
    neg_mean = torch.relu(P)[:, data.negatives].mean(-1)  # (m, n)
    expect = torch.where(P > 0, P + a * s_i * (P - neg_mean), P)
    assert torch.allclose(P1, expect, rtol=1e-10, atol=1e-18)
    # ... so the largest pairs grow at a s (Lemma 5.2's 0.96 s), and the neurons' active totals at (a - b) s
    scale = s_i / (cfg.lr * cfg.sigma_xi ** 2 * cfg.d / (cfg.n * cfg.m * cfg.tau))
    rate = _total_rate(P, P1, scale)
    assert race.noise_rate == pytest.approx((a - b) * noise_step_scale(cfg), rel=1e-12)
    assert float(rate.median()) == pytest.approx(race.noise_rate, rel=0.1)
    assert not float(rate.median()) == pytest.approx(a * noise_step_scale(cfg), rel=0.3)  # not the top pairs' rate
    # the rate ratio is n SNR^2 and the head start 1/SNR, exactly
    assert race.rate_ratio == pytest.approx(cfg.n_snr2, rel=1e-12)
    assert race.head_start == pytest.approx(1 / cfg.snr, rel=1e-12)


def test_multi_rates_are_one_step_of_lemma_5_3_at_uniform_derivatives():
    cfg = STEP
    race = stage1_race(cfg, "multi")
    s = _one_step(cfg, "multi")
    data = s["data"]
    u, v = s["signal"] / cfg.mu_norm, s["signal_t"] / cfg.mu_tilde_norm
    u1 = s["signal1"] / cfg.mu_norm
    # signal: u -> u + kappa v whatever the signs (the pairing map of Lemma D.3's proof)
    assert torch.allclose(u1 - u, race.signal_rate * v, rtol=1e-9, atol=1e-22)
    assert race.signal_rate == pytest.approx(pairing_rate(cfg), rel=1e-12)
    # noise: a pair grows only where both networks are active, driven by the partner's preactivation
    P, P1, Pt = s["noise"], s["noise1"], s["noise_t"]
    a, b = b_dynamics_prediction(cfg)
    s_i = cfg.lr * (data.xi * data.xi).sum(1) / (cfg.n * cfg.m * cfg.tau)
    neg_mean = torch.relu(Pt)[:, data.negatives].mean(-1)
    expect = torch.where(P > 0, P + a * s_i * (torch.relu(Pt) - neg_mean), P)
    assert torch.allclose(P1, expect, rtol=1e-10, atol=1e-18)
    # normalised (p = P/||xi||), the active totals of the pairs grow at (a - b) sqrt(s s~) against the partner's
    xin, xitn = data.xi.norm(dim=1), data.xi_tilde.norm(dim=1)
    both = (P > 0) & (Pt > 0)
    dp = torch.where(both, (P1 - P) / xin, torch.zeros_like(P)).sum()  # over every neuron's both-active pairs
    pt = torch.where(both, Pt / xitn, torch.zeros_like(P)).sum()
    scale = float((xin * xitn).mean()) / (cfg.sigma_xi * cfg.sigma_xi_tilde * cfg.d)
    assert float(dp / pt) / scale == pytest.approx(race.noise_rate, rel=0.1)
    assert not float(dp / pt) / scale == pytest.approx(a / b * race.noise_rate, rel=0.3)  # not the top pairs' a
    s_t = noise_step_scale(cfg.replace(sigma_xi=cfg.sigma_xi_tilde))
    assert race.noise_rate == pytest.approx((a - b) * math.sqrt(noise_step_scale(cfg) * s_t), rel=1e-12)
    assert race.rate_ratio == pytest.approx(cfg.c_mu * cfg.n_snr2 / cfg.sigma_xi_tilde, rel=1e-12)
    assert race.head_start == pytest.approx(math.sqrt(cfg.sigma_xi_tilde) / (math.sqrt(cfg.c_mu) * cfg.snr), rel=1e-12)


def _simulated_winner(cfg, mode, seed=0):
    """Which feature's part of the similarity margin (positive minus mean negative) first reaches
    tau log M in a float64 run without cross terms: the race, measured."""
    data = _orthogonal(sample_synthetic(cfg, seed, dtype=F64, with_ood=False))
    traj = simulate(cfg, data, mode)
    y, N = data.y, data.negatives
    relu = torch.relu
    sig = relu(preactivations(data, traj.gamma, traj.rho, data.mu[None])[..., 0, None] * y)  # (K, m, n)
    noise = relu(preactivations(data, traj.gamma, traj.rho, data.xi))
    if mode == "multi":
        sig_p = relu(preactivations(data, traj.gamma_tilde, traj.rho_tilde, data.mu_tilde[None], tilde=True)[..., 0, None]
                     * y)
        noise_p = relu(preactivations(data, traj.gamma_tilde, traj.rho_tilde, data.xi_tilde, tilde=True))
    else:
        sig_p, noise_p = sig, noise
    margin = {f: ((a * b).mean(1) - (a[..., None] * b[:, :, N]).mean(1).mean(-1)).mean(-1)
              for f, (a, b) in (("signal", (sig, sig_p)), ("noise", (noise, noise_p)))}
    level = cfg.tau * math.log(cfg.M)
    first = {f: int(torch.nonzero(v >= level)[0, 0]) if bool((v >= level).any()) else math.inf
             for f, v in margin.items()}
    assert min(first.values()) < math.inf, "the race ended within the run"
    return ("signal" if first["signal"] < first["noise"] else "noise"), first


RACE = mmcl.SyntheticConfig(d=800, d_tilde=800, n=40, m=20, M=18, n_epochs=120)


def _at(n_snr2, c_mu=3.0):
    mu = math.sqrt(n_snr2 / RACE.n) * RACE.sigma_xi * math.sqrt(RACE.d)
    return RACE.replace(mu_norm=mu, mu_tilde_norm=c_mu * mu)


@pytest.mark.parametrize("mode, cfg, expected", [
    ("single", _at(1.0), "noise"), ("single", _at(10.0), "signal"),  # predicted boundary ~3.5
    ("multi", _at(0.3), "noise"), ("multi", _at(2.5), "signal"),  # ~0.9 at C_mu = 3
    ("multi", _at(1.25, 1.0), "noise"), ("multi", _at(1.25, 4.0), "signal"),  # ~2.1 at n SNR^2 = 1.25
])
def test_predicted_winner_is_the_simulated_one_on_both_sides_of_the_boundary(mode, cfg, expected):
    race = stage1_race(cfg, mode)
    assert race.winner == expected
    winner, first = _simulated_winner(cfg, mode)
    assert winner == race.winner, (first, race)
    won = first[winner]
    predicted = race.signal_step if winner == "signal" else race.noise_step
    assert 0.5 * predicted <= won <= 2.0 * predicted, (won, race)  # and at about the predicted step


def test_the_winner_switches_at_the_overlays_boundary():
    from mmcl.experiments import phase_diagrams as ex

    for study, mode, n in (("n_snr", "single", 100), ("n_snr", "multi", 50), ("cmu", "multi", 24)):
        v = ex.race_boundary(study, n, mode, "default")
        assert 0.05 < v < 20
        assert stage1_race(ex.race_config(study, n, v * 1.01), mode).winner == "signal"
        assert stage1_race(ex.race_config(study, n, v / 1.01), mode).winner == "noise"
    # the small-rate closed form of the docstring: n SNR^2 = 1 + log(1/SNR)/log(L/x0_noise) (single)
    v = ex.race_boundary("n_snr", 100, "single", "default")
    race = stage1_race(ex.race_config("n_snr", 100, v), "single")
    assert v == pytest.approx(1 + math.log(1 / race.signal_init * race.noise_init) / math.log(race.level / race.noise_init),
                              rel=0.05)
    assert math.isnan(ex.race_boundary("cmu", 50, "single"))  # single-modal learning never sees C_mu
    overlay = ex.race_overlay("cmu", "tiny")
    assert list(overlay) == ["multi"] and sorted(overlay["multi"]) == [50, 100]


def test_stage1_race_fields_are_consistent():
    race = stage1_race(mmcl.SyntheticConfig(), "single")
    assert isinstance(race, Stage1Race) and race.mode == "single"
    assert race.level == pytest.approx(math.sqrt(2 * 0.1 * math.log(45)))
    assert race.noise_step == pytest.approx(math.log(race.level / race.noise_init) / math.log1p(race.noise_rate))
    assert race.winner == "noise" and race.noise_step < race.signal_step
    # a noise that starts above the level has already won
    big = stage1_race(mmcl.SyntheticConfig(sigma0=0.05), "single")
    assert big.noise_step == 0.0 and big.winner == "noise"


def test_stage1_race_rejects_bad_input():
    with pytest.raises(ValueError, match="cfg"):
        stage1_race({"n": 100}, "single")
    with pytest.raises(ValueError, match="mode"):
        stage1_race(mmcl.SyntheticConfig(), "both")
    with pytest.raises(ValueError, match="M >= 2"):
        stage1_race(mmcl.SyntheticConfig(M=1), "single")
    with pytest.raises(ValueError, match="signal rate"):
        stage1_race(mmcl.SyntheticConfig(lr=1.0), "multi")
    from mmcl.experiments import phase_diagrams as ex
    from mmcl.figures import phase_diagrams as pd

    with pytest.raises(ValueError, match="study"):
        ex.race_overlay("d_n")
    with pytest.raises(ValueError, match="study"):
        ex.race_config("aug_tau", 100, 1.0)
    with pytest.raises(ValueError, match="tol"):
        ex.race_boundary("n_snr", 100, "single", tol=0)
    with pytest.raises(ValueError, match="overlay"):
        pd.plot_cmu(None, overlay={"both": {}})
