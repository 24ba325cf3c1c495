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


def _step_from_zero(data, cfg, mode):
    """The reference step from the initial weights (every coefficient 0), where every loss derivative
    is exactly 1/(M + 1): the zero state of each network and the step's terms."""
    m, n = cfg.m, cfg.n
    zeros = dict(gamma=torch.zeros(m, dtype=F64), rho=torch.zeros(m, n, dtype=F64))
    tilde = dict(gamma_tilde=torch.zeros(m, dtype=F64), rho_tilde=torch.zeros(m, n, dtype=F64)) if mode == "multi" \
        else {}
    t = reference_step(data, cfg, mode, **zeros, **tilde)
    assert torch.allclose(t.lprime, torch.full_like(t.lprime, 1 / (cfg.M + 1)), rtol=1e-9, atol=0)
    return zeros, tilde, t


def _one_step(cfg, mode, seed=0):
    data = _orthogonal(sample_synthetic(cfg, seed, dtype=F64, with_ood=False))
    data = SyntheticData(**dict({k: getattr(data, k) for k in SyntheticData._SPEC}, eps=torch.zeros_like(data.eps)))
    m, n = cfg.m, cfg.n
    zeros, tilde, t = _step_from_zero(data, cfg, mode)
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
        pd.draw_cmu(None, overlay={"both": {}})


# --------------------------------------------------------------------------------------------
# The noise's similarity margin under the iterated linearised map (the race's heuristic, measured)
# --------------------------------------------------------------------------------------------
from mmcl.proofs.predictions import NoiseMargin, linearised_noise_margin, linearised_noise_step, noise_margins


def _normalised(data: SyntheticData, cfg) -> SyntheticData:
    """``data`` with every noise patch rescaled to ``||xi_i||^2 = sigma_xi^2 d`` (and ``xi~`` likewise) and
    eps = 0: the setting in which the linearised map is exact at uniform derivatives."""
    f = {k: getattr(data, k) for k in SyntheticData._SPEC}
    f["xi"] = f["xi"] / f["xi"].norm(dim=1, keepdim=True) * cfg.sigma_xi * math.sqrt(cfg.d)
    f["xi_tilde"] = f["xi_tilde"] / f["xi_tilde"].norm(dim=1, keepdim=True) * cfg.sigma_xi_tilde * math.sqrt(cfg.d_tilde)
    f["eps"] = torch.zeros_like(f["eps"])
    return SyntheticData(**f)


@pytest.mark.parametrize("mode", ["single", "multi"])
def test_linearised_noise_step_is_one_step_of_the_update_at_uniform_derivatives(mode):
    cfg = STEP
    data = _normalised(_orthogonal(sample_synthetic(cfg, 0, dtype=F64, with_ood=False)), cfg)
    m, n = cfg.m, cfg.n
    zeros, tilde, t = _step_from_zero(data, cfg, mode)
    g1 = t.dgamma_pos - t.dgamma_neg
    P = preactivations(data, zeros["gamma"], zeros["rho"], data.xi)
    P1 = preactivations(data, g1, t.drho, data.xi)
    Pt = Pt1 = None
    if mode == "multi":
        Pt = preactivations(data, tilde["gamma_tilde"], tilde["rho_tilde"], data.xi_tilde, tilde=True)
        Pt1 = preactivations(data, t.dgamma_pos_tilde - t.dgamma_neg_tilde, t.drho_tilde, data.xi_tilde, tilde=True)
    Q, Qt = linearised_noise_step(cfg, mode, P, Pt, data.negatives)
    assert torch.allclose(Q, P1, rtol=1e-8, atol=1e-20)
    assert not torch.allclose(Q, P, rtol=1e-3, atol=0)  # the step moves the active pairs
    if mode == "multi":
        assert torch.allclose(Qt, Pt1, rtol=1e-8, atol=1e-20)
    else:
        assert Qt is None


def _plain_margins(P, Pt, N):
    """The noise margins by loops over samples and neurons (plain floats)."""
    m, n = len(P), len(P[0])
    relu = lambda x: max(x, 0.0)
    out = []
    for i in range(n):
        tot = 0.0
        for r in range(m):
            partner = Pt if Pt is not None else P
            neg = sum(relu(partner[r][j]) for j in N[i]) / len(N[i])
            tot += relu(P[r][i]) * (relu(partner[r][i]) - neg)
        out.append(tot / m)
    return out


def _plain_map(cfg, mode, P, Pt, N, steps):
    """The linearised map iterated by loops (plain floats): every pair's rule written out."""
    a = cfg.M / (cfg.M + 1)
    s = cfg.lr * cfg.sigma_xi ** 2 * cfg.d / (cfg.n * cfg.m * cfg.tau)
    st = cfg.lr * cfg.sigma_xi_tilde ** 2 * cfg.d_tilde / (cfg.n * cfg.m * cfg.tau)
    relu = lambda x: max(x, 0.0)
    hist = [_plain_margins(P, Pt, N)]
    for _ in range(steps):
        newP = [row[:] for row in P]
        newPt = [row[:] for row in Pt] if Pt is not None else None
        for r in range(len(P)):
            for i in range(len(P[0])):
                if mode == "single":
                    if P[r][i] > 0:
                        newP[r][i] = P[r][i] + a * s * (P[r][i] - sum(relu(P[r][j]) for j in N[i]) / len(N[i]))
                else:
                    if P[r][i] > 0:
                        newP[r][i] = P[r][i] + a * s * (relu(Pt[r][i]) - sum(relu(Pt[r][j]) for j in N[i]) / len(N[i]))
                    if Pt[r][i] > 0:
                        newPt[r][i] = Pt[r][i] + a * st * (relu(P[r][i]) - sum(relu(P[r][j]) for j in N[i]) / len(N[i]))
        P, Pt = newP, newPt
        hist.append(_plain_margins(P, Pt, N))
    return hist


SMALL = mmcl.SyntheticConfig(d=60, d_tilde=50, n=8, m=5, M=3, sigma0=0.05, lr=0.05, tau=0.5, sigma_xi_tilde=1.2)


@pytest.mark.parametrize("mode", ["single", "multi"])
def test_linearised_noise_margin_is_the_plain_iteration(mode):
    cfg = SMALL
    data = sample_synthetic(cfg, 3, dtype=F64, with_ood=False)
    nm = linearised_noise_margin(cfg, mode, data)
    assert isinstance(nm, NoiseMargin) and nm.mode == mode and nm.level == pytest.approx(cfg.tau * math.log(cfg.M))
    assert nm.margins.dtype == F64 and nm.margins.shape == (nm.step + 1, cfg.n) and nm.step >= 4
    P = (data.W0 @ data.xi.T).tolist()
    Pt = (data.W0_tilde @ data.xi_tilde.T).tolist() if mode == "multi" else None
    plain = torch.tensor(_plain_map(cfg, mode, P, Pt, data.negatives.tolist(), nm.step), dtype=F64)
    assert torch.allclose(nm.margins, plain, rtol=1e-10, atol=1e-14)
    # the step is the first at which the mean margin reaches tau log M
    means = plain.mean(1)
    assert float(means[-1]) >= nm.level and bool((means[:-1] < nm.level).all())
    if float(means[0]) > 0:
        assert nm.rate() == pytest.approx(float(means[-1] / means[0]) ** (1 / (2 * nm.step)) - 1, rel=1e-12)
    k = nm.step // 2
    assert nm.rate(k) == pytest.approx(float(means[-1] / means[k]) ** (1 / (2 * (nm.step - k))) - 1, rel=1e-12)


def test_the_margin_grows_on_the_deviations_mode_not_the_races_at_figure_1():
    # the finding the chapter states: at Figure 1 the single-modal margin grows at ~0.031 per step, between the
    # race's balanced-mode (a - b) s = 0.0196 and the deviations' a s = 0.039, and above the signal's 0.0245
    cfg = mmcl.SyntheticConfig()
    race = stage1_race(cfg, "single")
    a, _ = b_dynamics_prediction(cfg)
    nm = linearised_noise_margin(cfg, "single", sample_synthetic(cfg, 0, with_ood=False))
    assert race.noise_rate == pytest.approx(0.0196, abs=1e-4) and race.signal_rate == pytest.approx(0.0245, abs=1e-4)
    assert nm.rate() == pytest.approx(0.0317, abs=1e-3)
    assert race.signal_rate < nm.rate() < a * noise_step_scale(cfg)
    assert nm.step < race.noise_step  # the noise finishes earlier than the closed form says
    # its initial margin is (1 - 1/pi) x0^2/2: the negatives' term E sigma(Psi)^2/pi is subtracted
    assert float(nm.margins[0].mean()) / (cfg.init_noise ** 2 / 2) == pytest.approx(1 - 1 / math.pi, abs=0.03)


def test_linearised_noise_margin_rejects_bad_input():
    cfg = SMALL
    data = sample_synthetic(cfg, 0, with_ood=False)
    with pytest.raises(ValueError, match="mode"):
        linearised_noise_margin(cfg, "both", data)
    with pytest.raises(ValueError, match="max_steps"):
        linearised_noise_margin(cfg, "single", data, max_steps=0)
    with pytest.raises(ValueError, match="max_steps"):
        linearised_noise_margin(cfg, "single", data, max_steps=1)  # the level is not reached in one step
    with pytest.raises(ValueError, match="data"):
        linearised_noise_margin(cfg.replace(n=10), "single", data)
    with pytest.raises(ValueError, match="data"):
        linearised_noise_margin(cfg, "single", {"xi": 1})
    with pytest.raises(ValueError, match="M >= 2"):
        linearised_noise_margin(cfg.replace(M=1), "single", sample_synthetic(cfg.replace(M=1), 0, with_ood=False))
    single_only = SyntheticData(**dict({k: getattr(data, k) for k in SyntheticData._SPEC}, mu_tilde=None,
                                       xi_tilde=None, W0_tilde=None))
    with pytest.raises(ValueError, match="xi_tilde"):
        linearised_noise_margin(cfg, "multi", single_only)
    nm = linearised_noise_margin(cfg, "single", data)
    for bad in (-1, nm.step, 1.5, True):
        with pytest.raises(ValueError, match="start"):
            nm.rate(bad)
    big = cfg.replace(sigma0=1.0)
    started = linearised_noise_margin(big, "single", sample_synthetic(big, 0, with_ood=False))  # past the line at step 0
    assert started.step == 0 and started.margins.shape == (1, cfg.n)
    with pytest.raises(ValueError, match="start"):
        started.rate()
    multi = linearised_noise_margin(cfg, "multi", data)
    nonpos = [k for k in range(multi.step) if float(multi.margins[k].mean()) <= 0]
    if nonpos:
        with pytest.raises(ValueError, match="start"):
            multi.rate(nonpos[0])


def test_noise_margins_batch_over_leading_dimensions():
    g = torch.Generator().manual_seed(1)
    P, Pt = torch.randn(3, 4, 6, generator=g, dtype=F64), torch.randn(3, 4, 6, generator=g, dtype=F64)
    N = torch.tensor([[1, 2], [0, 3], [4, 5], [0, 1], [2, 3], [4, 0]])
    out = noise_margins(P, Pt, N)
    assert out.shape == (3, 6)
    for k in range(3):
        assert out[k].tolist() == pytest.approx(_plain_margins(P[k].tolist(), Pt[k].tolist(), N.tolist()), rel=1e-12)
        assert noise_margins(P[k], None, N).tolist() == pytest.approx(_plain_margins(P[k].tolist(), None, N.tolist()),
                                                                       rel=1e-12)


def test_the_margin_race_on_the_studies_grids():
    from mmcl.experiments import phase_diagrams as ex

    c = ex.race_config("n_snr", 50, 1.0)
    # the noise map never sees the signal: the same step at any ||mu||, and the draw's own step
    step = ex.margin_race_noise_step(c, "single", 1)
    assert step == ex.margin_race_noise_step(ex.race_config("n_snr", 50, 7.0), "single", 1)
    assert step == linearised_noise_margin(c, "single", sample_synthetic(c, 1, with_ood=False)).step
    for study, mode, n in (("n_snr", "single", 50), ("cmu", "multi", 24)):
        v = ex.margin_race_boundary(study, n, mode)
        noise = ex.margin_race_noise_step(ex.race_config(study, n, v), mode)
        assert stage1_race(ex.race_config(study, n, v * 1.01), mode).signal_step < noise
        assert stage1_race(ex.race_config(study, n, v / 1.01), mode).signal_step >= noise
        # on the margin's modes the noise is faster: the boundary moves up against the closed form's
        assert v > ex.race_boundary(study, n, mode)
    with pytest.raises(ValueError, match="study"):
        ex.margin_race_boundary("d_n", 50, "single")
    with pytest.raises(ValueError, match="tol"):
        ex.margin_race_boundary("n_snr", 50, "single", tol=0)


@pytest.mark.parametrize("mode", ["single", "multi"])
def test_linearised_noise_margin_fast_path_is_the_plain_step_iterated(mode):
    # the loop's fast path (an averaging matrix, shared negative means) against linearised_noise_step and
    # noise_margins, the plain definitions, iterated
    cfg = mmcl.SyntheticConfig(n=40, M=15, m=12, d=300, d_tilde=300)
    data = sample_synthetic(cfg, 2, dtype=F64, with_ood=False)
    nm = linearised_noise_margin(cfg, mode, data)
    P = data.W0 @ data.xi.T
    Pt = data.W0_tilde @ data.xi_tilde.T if mode == "multi" else None
    ref = [noise_margins(P, Pt, data.negatives)]
    for _ in range(nm.step):
        P, Pt = linearised_noise_step(cfg, mode, P, Pt, data.negatives)
        ref.append(noise_margins(P, Pt, data.negatives))
    assert nm.step > 5
    assert torch.allclose(nm.margins, torch.stack(ref), rtol=1e-12, atol=1e-15)
