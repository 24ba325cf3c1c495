"""Falsification test of one check of the chapter "Phase diagrams": the closed-form race of stage 1.

The chapter (section "The race in closed form") states through its claims register that at Figure 1's
setting the single-modal noise reaches the level at step 34, long before the signal (118), and that
sympy's signal rate, derived from Eq. (12) at uniform loss derivatives, is the one
:func:`mmcl.proofs.predictions.stage1_race` uses.  Here the same claims are made again: at the true
setting and with the true formulas they pass; at a perturbed setting (n SNR^2 = 5 instead of 1.25) or
with a deliberately wrong formula (the per-pair noise rate a s in place of the class totals' (a - b) s,
or a signal rate without the positive's weight a = M/(M+1)) they must raise ClaimFailed.
"""
import math

import pytest

from mmcl.booksupport.claims import ClaimFailed, Claims
from mmcl.experiments import phase_diagrams as experiment
from mmcl.proofs.predictions import stage1_race
from mmcl.proofs.predictions import b_dynamics_prediction, noise_step_scale

from mmcl.model.config import SyntheticConfig as _Config

FIG1 = _Config()  # the setting the chapters' checks measure (Figure 1), where the register judges premises

BASE = experiment.config("default")  # the chapter's BASE: Figure 1's setting


def claim_fig1_steps(c: Claims, noise_step: float, signal_step: float) -> None:
    """The chapter's claim, word for word."""
    c.near("single-modal at Figure 1: the noise reaches the level at step 34, long before the signal (118)",
           paper="Lemma 5.2", verdict="observation", observed=[noise_step, signal_step], target=[34, 118], tol=0.5)


def claim_noise_first(c: Claims, noise_step: float, signal_step: float) -> None:
    c.upper("single-modal: the noise reaches the level before the signal (Lemma 5.2's story)", paper="Lemma 5.2",
            verdict="observation", observed=noise_step, bound=signal_step, strict=True)


def claim_signal_rate(c: Claims, derived: float, library: float) -> None:
    c.roundoff("sympy's single-modal signal rate, from Eq. (12) at uniform derivatives, is stage1_race's",
               paper="Lemma 5.1", verdict="observation", observed=abs(derived / library - 1), tol=1e-12)


def at_n_snr2(cfg, value: float):
    """cfg with ||mu|| (and ||mu~|| = C_mu ||mu||) set so that n SNR^2 = value."""
    mu = math.sqrt(value / cfg.n) * cfg.sigma_xi * math.sqrt(cfg.d)
    return cfg.replace(mu_norm=mu, mu_tilde_norm=cfg.c_mu * mu)


def signal_rate(cfg, with_a: bool = True) -> float:
    """kappa = a eta ||mu||^2/(2 m tau), a = M/(M+1): the chapter's sympy result, typed by hand."""
    a = cfg.M / (cfg.M + 1) if with_a else 1.0
    return a * cfg.lr * cfg.mu_norm ** 2 / (2 * cfg.m * cfg.tau)


def test_control_true_setting_and_formulas_pass():
    c = Claims("phase_diagrams", display=False).setting(FIG1)
    race = stage1_race(BASE, "single")
    claim_fig1_steps(c, race.noise_step, race.signal_step)
    claim_noise_first(c, race.noise_step, race.signal_step)
    claim_signal_rate(c, signal_rate(BASE), race.signal_rate)
    assert len(c.rows) == 3 and math.isclose(BASE.n_snr2, 1.25)


def test_perturbed_setting_fails():
    cfg = at_n_snr2(BASE, 5.0)  # beyond the single-modal boundary (about 3.6 at n = 100): the signal wins
    race = stage1_race(cfg, "single")
    assert race.winner == "signal"
    c = Claims("phase_diagrams", display=False).setting(FIG1)
    with pytest.raises(ClaimFailed):
        claim_fig1_steps(c, race.noise_step, race.signal_step)
    with pytest.raises(ClaimFailed):
        claim_noise_first(c, race.noise_step, race.signal_step)
    assert not c.rows  # a failed claim records nothing


def test_wrong_noise_formula_fails():
    # the per-pair rate a s (Lemma 5.2's 0.96 s with its exact constant) instead of the class totals' (a - b) s
    race = stage1_race(BASE, "single")
    a, _ = b_dynamics_prediction(BASE)
    wrong_rate = a * noise_step_scale(BASE)
    assert wrong_rate > 1.9 * race.noise_rate
    wrong_step = math.log(race.level / race.noise_init) / math.log1p(wrong_rate)
    c = Claims("phase_diagrams", display=False).setting(FIG1)
    with pytest.raises(ClaimFailed):
        claim_fig1_steps(c, wrong_step, race.signal_step)


def test_wrong_signal_formula_fails():
    race = stage1_race(BASE, "single")
    c = Claims("phase_diagrams", display=False).setting(FIG1)
    with pytest.raises(ClaimFailed):
        claim_signal_rate(c, signal_rate(BASE, with_a=False), race.signal_rate)  # without a = M/(M+1)


def claim_margin_outgrows_signal(c: Claims, margin_rate: float, signal_rate_: float) -> None:
    """The chapter's claim that the race is a heuristic: the noise margin outgrows the signal at Figure 1."""
    c.lower("... and above the signal's 0.0245: the noise outgrows the signal at Figure 1 without its head start",
            paper="Lemma 5.2", verdict="observation", observed=[margin_rate], bound=signal_rate_, strict=True, scale=0.001)


def test_margin_rate_claim_holds_measured_and_fails_on_the_races_mode():
    from mmcl.model.data import sample_synthetic
    from mmcl.proofs.predictions import linearised_noise_margin

    race = stage1_race(BASE, "single")
    measured = linearised_noise_margin(BASE, "single", sample_synthetic(BASE, 0, with_ood=False)).rate()
    c = Claims("phase_diagrams", display=False).setting(FIG1)
    claim_margin_outgrows_signal(c, measured, race.signal_rate)
    assert len(c.rows) == 1
    with pytest.raises(ClaimFailed):  # the balanced mode of the class totals, the race's rate
        claim_margin_outgrows_signal(c, race.noise_rate, race.signal_rate)
    with pytest.raises(ClaimFailed):  # the measured rate, past the boundary (n SNR^2 = 5: the signal is faster)
        claim_margin_outgrows_signal(c, measured, stage1_race(at_n_snr2(BASE, 5.0), "single").signal_rate)
