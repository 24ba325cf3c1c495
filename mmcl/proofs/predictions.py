"""Closed-form predictions of the paper's lemmas, for comparison with simulations.

Each function names the lemma it evaluates; the constants (0.96, 0.48, 20, 2.66, ...) are the
paper's.  ``cfg`` is a :class:`~mmcl.model.config.SyntheticConfig`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from mmcl._utils import check_number
from mmcl.model.config import SyntheticConfig, check_config
from mmcl.dynamics.trajectory import Trajectory
from mmcl.dynamics.engines import t1_statistic

__all__ = ["b_dynamics_prediction", "pairing_rate", "pairing_rate_of", "noise_step_scale", "signal_step_scale", "single_growth_rate", "multi_growth_rate", "t1_single", "t1_multi", "t1_formula",
           "measured_t1", "C_MU_THRESHOLD", "Stage1Race", "stage1_race",
           "linearised_noise_step", "noise_margins", "NoiseMargin", "linearised_noise_margin",
           "cross_term_bound", "b_minus_upper_rate", "signal_upper_rate_single", "lemma_c9_bound", "b_init_mean"]

C_MU_THRESHOLD = 2.66  # Assumption 4.1(7): C_mu = ||mu~||/||mu|| >= 2.66 (our reading of the extracted text)


def noise_step_scale(cfg: SyntheticConfig) -> float:
    """``s = eta sigma_xi^2 d / (n m tau)``: the factor of the ``rho`` update (13) once ``||xi_i||^2``
    is replaced by its mean ``sigma_xi^2 d`` (Sec. 5.1, the ``B`` dynamics).  Every noise rate of the
    appendix is a constant times ``s``."""
    check_config(cfg)
    return cfg.lr * cfg.sigma_xi ** 2 * cfg.d / (cfg.n * cfg.m * cfg.tau)


def signal_step_scale(cfg: SyntheticConfig) -> float:
    """``eta ||mu||^2 / (m tau)``: the factor of the ``gamma`` update (12); every signal rate of the
    appendix is a constant times it (``0.52`` single-modal, ``0.48 C_mu`` multi-modal)."""
    check_config(cfg)
    return cfg.lr * cfg.mu_norm ** 2 / (cfg.m * cfg.tau)


def single_growth_rate(cfg: SyntheticConfig) -> float:
    """Sec. 5.1 / Lemma 5.2: noise memorisation grows at least like ``(1 + r)^t`` with
    ``r = 0.96 eta sigma_xi^2 d / (n m tau)``; returns ``r``."""
    return 0.96 * noise_step_scale(cfg)


def multi_growth_rate(cfg: SyntheticConfig) -> float:
    """Lemma 5.4: signal learning grows like ``(1 + r)^t`` with ``r = 0.48 C_mu eta ||mu||^2 / (m tau)``."""
    return 0.48 * cfg.c_mu * signal_step_scale(cfg)


def t1_single(cfg: SyntheticConfig) -> float:
    """Lemma 5.2: ``T1 = log(20/(sigma0 sigma_xi sqrt d)) / log(1 + 0.96 eta sigma_xi^2 d/(n m tau))``."""
    return math.log(20.0 / cfg.init_noise) / math.log1p(single_growth_rate(cfg))


def t1_multi(cfg: SyntheticConfig) -> float:
    """Lemma 5.4: ``T1 = log(20/(sigma0 ||mu||)) / log(1 + 0.48 C_mu eta ||mu||^2/(m tau))``."""
    return math.log(20.0 / (cfg.sigma0 * cfg.mu_norm)) / math.log1p(multi_growth_rate(cfg))


def t1_formula(cfg: SyntheticConfig, mode: str) -> float:
    """:func:`t1_single` or :func:`t1_multi` by ``mode``."""
    if mode == "single":
        return t1_single(cfg)
    if mode == "multi":
        return t1_multi(cfg)
    raise ValueError(f"mode={mode!r} is unknown; valid: 'single', 'multi'")


def measured_t1(traj: Trajectory, level: float = 1.0) -> torch.Tensor:
    """The first recorded step at which stage 1 has ended, by our operational definition of the
    lemmas' ``Omega(1)``: single mode (Lemma 5.2), ``min_i max_r rho_{r,i} >= level``; multi mode
    (Lemma 5.4), ``max_r gamma_r >= level``.  ``nan`` where the level is never reached.

    From ``traj.t1_stat`` at ``traj.t1_steps`` where the run recorded it
    (``simulate(..., t1_every=k)``), else from the recorded states at ``traj.steps``.

    Returns a 0-d tensor for one draw, ``(B,)`` for a batch."""
    if not level > 0:
        raise ValueError(f"level must be > 0, got {level!r}")
    if traj.t1_stat is not None:
        stat, at = traj.t1_stat, traj.t1_steps
    else:
        stat, at = t1_statistic(traj.mode, traj.gamma, traj.rho), traj.steps  # (..., K)
    reached = stat >= level
    first = reached.to(torch.int64).argmax(-1)
    steps = at.to(stat.device)[first].to(torch.float64)
    return torch.where(reached.any(-1), steps, torch.full_like(steps, float("nan")))


def b_dynamics_prediction(cfg: SyntheticConfig) -> tuple:
    """``(a, b)`` predicted for ``B_same(t+1) - B_same(t) ~ s (a B_same(t) - b B_other(t))`` when
    every loss derivative sits at its uniform value ``l'_i = l'_{i,j} = 1/(M+1)`` (stage 1, Lemma C.2):

    * ``a = M/(M+1)``: the weight ``1 - l'_i`` of the positive term of (13);
    * ``b = M/(2(M+1))``: a sample ``i`` of label ``+1`` meets ``M`` of the ``n/2`` opposite-label
      samples as negatives, each with weight ``1/(M+1)``; summing over the about ``n/4`` samples of
      its class that are active for ``r`` (the random sign of the initialisation: the ``1/2`` of
      Sec. 5.1) gives ``(n/4) (2M/n) / (M+1) = M/(2(M+1))``.

    Sec. 5.1 writes ``(1, 1/2)``, the ``M -> infinity`` limit.  (Assumes balanced labels.)"""
    check_config(cfg)
    return cfg.M / (cfg.M + 1), cfg.M / (2 * (cfg.M + 1))


def pairing_rate(cfg: SyntheticConfig) -> float:
    """``kappa = eta M ||mu|| ||mu~|| / (2 m tau (M + 1))``: the per-step rate of the linear stage-1
    map of the normalised signal preactivations (:mod:`mmcl.proofs.multi_stage1`; ours).

    It is Lemma 5.4's rate ``0.48 C_mu eta ||mu||^2/(m tau)`` with the lemma's lower constant 0.48
    replaced by its exact value ``M/(2(M+1))`` at uniform loss derivatives and balanced labels."""
    check_config(cfg)
    return pairing_rate_of(cfg.lr, cfg.tau, cfg.M, cfg.m, cfg.mu_norm, cfg.mu_tilde_norm)


def pairing_rate_of(lr, tau, M: int, m: int, mu_norm, mu_tilde_norm):
    """:func:`pairing_rate` from its ingredients (numbers, or tensors of one shape)."""
    return lr * M * mu_norm * mu_tilde_norm / (2.0 * m * tau * (M + 1))


# --------------------------------------------------------------------------------------------
# The race of stage 1 in closed form (ours, from Lemmas 5.1 and 5.3 at uniform loss derivatives)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Stage1Race:
    """The closed-form race of stage 1 (:func:`stage1_race`) for one configuration and mode.

    ``signal_rate``, ``noise_rate``: the per-step growth rates ``r`` of the signal and of the noise
    preactivations (each grows like ``x0 (1 + r)^t``); ``signal_init``, ``noise_init``: their initial
    sizes ``x0``; ``level``: the preactivation at which the loss saturates; ``signal_step``,
    ``noise_step``: the steps at which each reaches ``level``; ``winner``: ``"signal"`` or
    ``"noise"``, the one that reaches it first (``"noise"`` on a tie)."""

    mode: str
    signal_rate: float
    noise_rate: float
    signal_init: float
    noise_init: float
    level: float
    signal_step: float
    noise_step: float
    winner: str

    @property
    def rate_ratio(self) -> float:
        """``signal_rate / noise_rate``: ``n SNR^2`` (single), ``C_mu n SNR^2`` (multi, equal noise in both modalities)."""
        return self.signal_rate / self.noise_rate

    @property
    def head_start(self) -> float:
        """``noise_init / signal_init``: ``1/SNR`` (single), ``1/(sqrt(C_mu) SNR)`` (multi, equal noise)."""
        return self.noise_init / self.signal_init


def _crossing(level: float, x0: float, rate: float) -> float:
    return 0.0 if x0 >= level else math.log(level / x0) / math.log1p(rate)


def stage1_race(cfg: SyntheticConfig, mode: str) -> Stage1Race:
    r"""Which feature wins stage 1, in closed form: the signal ``mu`` or the noise ``xi_i``.

    Ours, from the updates of Lemma 5.1 (``mode="single"``, Eqs. 12-13) and Lemma 5.3
    (``mode="multi"``) under four simplifications of stage 1: every loss derivative sits at its
    initial value ``l'_i = l'_{i,j} = 1/(M+1)`` (Lemmas C.2, D.1 with ``C_l = 1``), the cross terms
    ``<xi_i, xi_k>``, ``<xi_i, mu>`` are dropped
    (:func:`mmcl.proofs.preactivations.without_cross_terms`), the labels are balanced, and
    ``||xi_i||^2`` is replaced by its mean ``sigma_xi^2 d``.  Write ``a = M/(M+1)`` (the weight
    ``1 - l'_i`` of the positive term, :func:`mmcl.proofs.predictions.b_dynamics_prediction`).

    *Signal.*  With hard negatives the negative term of Eq. (12) vanishes, and a neuron's signal
    preactivation is pushed by the ``n/2`` samples of its sign:
    ``<w_r, mu>(t+1) = <w_r, mu>(t) (1 + kappa)`` with ``kappa = a eta ||mu||^2/(2 m tau)``, the rate of
    :func:`mmcl.proofs.predictions.pairing_rate` with the network paired with itself.  Multi-modal
    (Lemma 5.3), the normalised preactivations ``u = <w_r, mu>/||mu||``, ``v = <w~_r, mu~>/||mu~||``
    follow ``u + kappa v``, ``v + kappa u`` with ``kappa = a eta ||mu|| ||mu~||/(2 m tau)``
    (:func:`~mmcl.proofs.multi_stage1.stage1_signal_prediction`): their sum grows at ``kappa``.

    *Noise.*  For an active pair (``<w_r, xi_i> > 0``) Eq. (13) reads exactly
    ``Psi_{r,i}(t+1) = Psi_{r,i}(t) + a s (Psi_{r,i}(t) - mean_{j in N_i} sigma(Psi_{r,j}(t)))``
    with ``s = eta sigma_xi^2 d/(n m tau)`` (:func:`mmcl.proofs.predictions.noise_step_scale`) and
    ``sigma_eps`` neglected.  A pair far above the mean of its negatives grows at ``a s`` (the
    ``0.96 s`` of Lemma 5.2 with its exact constant), but the similarity margin is carried by all
    of a sample's active pairs; summed over a class they follow the class totals of Sec. 5.1,
    ``B_c -> B_c + s (a B_c - b B_c')`` with ``b = M/(2(M+1))``, whose balanced mode
    ``B_+ + B_-`` grows at ``(a - b) s``: the noise rate.  (The mode ``B_+ - B_-`` grows at
    ``(a + b) s`` but starts about ``sqrt(n)`` times smaller.)  Multi-modal, a pair is driven by
    the partner's ``<w~_r, xi~_i>`` and grows only where both are active; the normalised totals
    grow at ``(a - b) sqrt(s s~)`` (``s~`` with ``sigma_xi~``, ``d~``).  Since ``a - b = b``, the
    rate ratio is ``n SNR^2`` exactly (single) and ``C_mu n SNR^2`` (multi, equal noise).
    This noise rate is a heuristic, of the wrong mode: the margin of one sample is carried by its
    own active pairs, whose deviations from their class mean grow at ``a s``, and iterating the map
    (:func:`linearised_noise_margin`) gives a margin rate of about ``1.6 (a - b) s`` at Figure 1
    (0.031 against 0.0196, above the signal's 0.0245), from an initial margin ``1 - 1/pi`` times
    the one assumed here.  The boundaries this race predicts nevertheless agree with the sweeps'
    (the chapter "Phase diagrams", section "The race in closed form").

    *Sizes and the finish line.*  The initial sizes are the root-mean-square initial
    preactivations: ``sigma0 ||mu||`` and ``sigma0 sigma_xi sqrt(d)`` (single; the noise starts
    ahead by ``1/SNR``), and in multi mode the geometric means over the two networks of the growing
    mode ``(u + v)/2``, ``sigma0 sqrt(||mu|| ||mu~||/2)`` and ``sigma0 sqrt(sigma_xi sqrt(d) sigma_xi~
    sqrt(d~)/2)``.  The loss leaves its uniform stage when a similarity margin reaches
    ``tau log M`` (then ``l'_i`` has risen from ``1/(M+1)`` to 1/2); with half of the neurons
    active at preactivation ``x`` a feature puts ``x^2/2`` into the similarity, so the level is
    ``L = sqrt(2 tau log M)``.  Each feature reaches it at
    ``T = log(L/x0) / log(1 + r)`` (0 if ``x0 >= L``), as in Lemmas 5.2/5.4 (``t1_single``,
    ``t1_multi``) with their constants 20, 0.96, 0.48 replaced by these; the winner is the earlier.

    In the small-rate limit the signal wins iff ``r_signal/r_noise > log(L/x0_signal)/log(L/x0_noise)``:
    single-modal, ``n SNR^2 > 1 + log(1/SNR)/log(L/(sigma0 sigma_xi sqrt d))``; multi-modal (equal
    noise in both modalities), ``C_mu n SNR^2 > 1 + log(1/(sqrt(C_mu) SNR))/log(L/x0_noise)``, a
    function of the product ``C_mu n SNR^2`` alone at fixed ``n``.  Checked against one step of
    :func:`mmcl.dynamics.reference.reference_step` and against simulated races in
    ``tests/test_predictions_race.py``; the book's section "The race in closed form" (chapter
    "Phase diagrams") compares it with the sweeps.

    Returns a :class:`Stage1Race`.  Needs rates in ``(0, 1)`` (else the linear stage overshoots in
    one step) and ``M >= 2`` (a positive level)."""
    check_config(cfg)
    if mode not in ("single", "multi"):
        raise ValueError(f"mode={mode!r} is unknown; valid: 'single', 'multi'")
    if cfg.M < 2:
        raise ValueError(f"stage1_race needs M >= 2 for a positive level sqrt(2 tau log M), got M={cfg.M}")
    a, b = b_dynamics_prediction(cfg)
    s = noise_step_scale(cfg)
    if mode == "single":
        signal_rate = pairing_rate(cfg.replace(mu_tilde_norm=cfg.mu_norm))  # the network is its own partner
        noise_rate = (a - b) * s
        signal_init = cfg.sigma0 * cfg.mu_norm
        noise_init = cfg.init_noise
    else:
        s_tilde = noise_step_scale(cfg.second_modality_noise())
        signal_rate = pairing_rate(cfg)
        noise_rate = (a - b) * math.sqrt(s * s_tilde)
        signal_init = cfg.sigma0 * math.sqrt(cfg.mu_norm * cfg.mu_tilde_norm / 2)
        noise_init = math.sqrt(cfg.init_noise * cfg.sigma0 * cfg.sigma_xi_tilde * math.sqrt(cfg.d_tilde) / 2)
    for name, r in (("signal", signal_rate), ("noise", noise_rate)):
        if not 0 < r < 1:
            raise ValueError(f"the {name} rate {r:.3g} must lie in (0, 1) for the linear stage 1; lower lr or "
                             f"raise tau")
    level = math.sqrt(2 * cfg.tau * math.log(cfg.M))
    t_sig, t_noise = _crossing(level, signal_init, signal_rate), _crossing(level, noise_init, noise_rate)
    return Stage1Race(mode=mode, signal_rate=signal_rate, noise_rate=noise_rate, signal_init=signal_init,
                      noise_init=noise_init, level=level, signal_step=t_sig, noise_step=t_noise,
                      winner="signal" if t_sig < t_noise else "noise")


# --------------------------------------------------------------------------------------------
# The noise's similarity margin under the linearised map of stage 1 (ours): which mode carries it
# --------------------------------------------------------------------------------------------
def linearised_noise_step(cfg: SyntheticConfig, mode: str, P: torch.Tensor, P_tilde, negatives: torch.Tensor):
    r"""One step of the linearised noise map of stage 1 (the section "The race in closed form" of
    the chapter "Phase diagrams"): for every active pair (``P[r, i] > 0``)

    ``P[r, i] <- P[r, i] + a s (Q[r, i] - mean_{j in N_i} relu(Q[r, j]))``,

    with ``Q = P`` (``mode="single"``) or ``Q = relu(P_tilde)`` (``"multi"``, the partner's
    preactivations, which move by the same rule with ``s~`` and ``P`` as their partner), ``a = M/(M+1)``
    and ``s`` = :func:`noise_step_scale`.  Inactive pairs do not move.  It is Eq. (13) (Lemma 5.3's
    noise update, multi-modal) at uniform loss derivatives, without cross terms, with ``||xi_i||^2``
    replaced by ``sigma_xi^2 d``.  ``P``, ``P_tilde``: ``(m, n)`` preactivations ``<w_r, xi_i>``,
    ``<w~_r, xi~_i>`` (``P_tilde`` is ``None`` in single mode); ``negatives``: ``(n, M)`` indices.
    Returns ``(P, P_tilde)`` after the step (``P_tilde`` ``None`` in single mode)."""
    a, _ = b_dynamics_prediction(cfg)
    s = noise_step_scale(cfg)
    if mode == "single":
        return torch.where(P > 0, P + a * s * (P - torch.relu(P)[:, negatives].mean(-1)), P), None
    s_t = noise_step_scale(cfg.second_modality_noise())
    Q, Qt = torch.relu(P), torch.relu(P_tilde)
    return (torch.where(P > 0, P + a * s * (Qt - Qt[:, negatives].mean(-1)), P),
            torch.where(P_tilde > 0, P_tilde + a * s_t * (Q - Q[:, negatives].mean(-1)), P_tilde))


def noise_margins(P: torch.Tensor, P_tilde, negatives: torch.Tensor) -> torch.Tensor:
    """The noise's part of every sample's similarity margin, ``(n,)``: the similarity of sample
    ``i`` with its positive minus the mean similarity with its negatives ``N_i``, both over the
    ``m`` neurons (the similarity of Sec. 3 is a mean over neurons), from the noise patches alone:
    ``mean_r relu(P[r, i]) (relu(Q[r, i]) - mean_{j in N_i} relu(Q[r, j]))`` with ``Q = P``
    (single-modal, the positive's augmentation neglected) or ``Q = P_tilde`` (multi-modal, the
    partner's preactivations).  Batched over leading dimensions of ``P`` (``(..., m, n)``)."""
    Q = torch.relu(P)
    Qt = Q if P_tilde is None else torch.relu(P_tilde)
    return (Q * (Qt - Qt[..., negatives].mean(-1))).mean(-2)


@dataclass(frozen=True)
class NoiseMargin:
    """The noise's similarity margin under the linearised map of stage 1
    (:func:`linearised_noise_margin`).

    ``margins``: ``(T + 1, n)`` float64, every sample's noise margin (:func:`noise_margins`) at steps
    ``0..T``; ``level``: the finish line ``tau log M``; ``step``: the first step ``T`` at which the
    mean margin over the samples reaches ``level`` (the last row of ``margins``; 0 where the noise
    starts past it, and then :meth:`rate` has no stage to measure)."""

    mode: str
    margins: torch.Tensor
    level: float
    step: int

    def rate(self, start: int = 0) -> float:
        """The growth rate per step *of a preactivation* that carries the mean margin from step
        ``start`` to the finish: ``(mean margin(T) / mean margin(start))^(1/(2 (T - start))) - 1``
        (the margin is quadratic in the preactivations, so half its log-rate; directly comparable
        with ``Stage1Race.noise_rate``).  ``start`` in ``[0, T)``; the initial mean margin must be
        positive (multi-modal it starts near 0: measure from a later ``start``)."""
        if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start < self.step:
            raise ValueError(f"start must be an integer in [0, {self.step}), got {start!r}")
        m0, m1 = float(self.margins[start].mean()), float(self.margins[-1].mean())
        if m0 <= 0:
            raise ValueError(f"start={start}: the mean margin there is {m0:.3g} <= 0, it has no log-rate; "
                             "valid: a later start")
        return (m1 / m0) ** (1.0 / (2 * (self.step - start))) - 1.0


def linearised_noise_margin(cfg: SyntheticConfig, mode: str, data, *, max_steps: int = 10_000) -> NoiseMargin:
    r"""The noise's similarity margin of stage 1, measured by iterating the linearised noise map
    (:func:`linearised_noise_step`) from a draw's initial preactivations ``<w_r(0), xi_i>``
    (and ``<w~_r(0), xi~_i>``) until the mean over the samples of the per-sample margin
    (:func:`noise_margins`) reaches ``tau log M``: the finish line of :func:`stage1_race`, whose noise
    rate is the rate of the balanced mode ``B_+ + B_-`` of the class totals.

    The margin of one sample is carried by its own active pairs.  Decomposed over a neuron's active
    pairs, the map has three kinds of modes: the balanced class totals (rate ``(a - b) s``), their
    difference (``(a + b) s``), and the within-class deviations, which the mean over the negatives
    (samples of the other class) does not see, growing at ``a s``.  The deviations are as large as the
    class means at initialisation (a half-normal's spread against its mean), and the negatives' mean
    cancels part of the class means in the margin, so the margin grows at a rate between ``(a - b) s``
    and ``a s``, set by the draw: :meth:`NoiseMargin.rate` measures it.

    ``data``: a :class:`~mmcl.model.data.SyntheticData` drawn for ``cfg`` (computed in float64; its
    cross terms play no part, the map acts on the preactivations).  ``max_steps``: a ValueError if the
    level is not reached within it.  Checked against a plain loop over neurons and samples and against
    one step of :func:`mmcl.dynamics.reference.reference_step` in ``tests/test_predictions_race.py``."""
    check_config(cfg)
    if mode not in ("single", "multi"):
        raise ValueError(f"mode={mode!r} is unknown; valid: 'single', 'multi'")
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
    if cfg.M < 2:
        raise ValueError(f"linearised_noise_margin needs M >= 2 for a positive level tau log M, got M={cfg.M}")
    xi = getattr(data, "xi", None)
    if not isinstance(xi, torch.Tensor) or xi.dim() != 2 or tuple(data.negatives.shape) != (cfg.n, cfg.M) \
            or tuple(data.W0.shape) != (cfg.m, xi.shape[1]) or xi.shape[0] != cfg.n:
        raise ValueError(f"data must be one SyntheticData draw for cfg (n={cfg.n}, m={cfg.m}, M={cfg.M})")
    if mode == "multi" and data.xi_tilde is None:
        raise ValueError("data has no second modality (xi_tilde), which mode='multi' needs")
    f64 = torch.float64
    P = data.W0.to(f64) @ xi.to(f64).T
    Pt = data.W0_tilde.to(f64) @ data.xi_tilde.to(f64).T if mode == "multi" else None
    level = cfg.tau * math.log(cfg.M)
    # fast path of linearised_noise_step + noise_margins (tested equal to them): the mean over the negatives as
    # one product with the (n, n) averaging matrix, each modality's computed once per step and shared
    n = cfg.n
    avg = torch.zeros(n, n, dtype=f64)
    avg[torch.arange(n)[:, None], data.negatives.cpu()] = 1.0 / cfg.M
    a, _ = b_dynamics_prediction(cfg)
    s = noise_step_scale(cfg)
    s_t = noise_step_scale(cfg.second_modality_noise()) if mode == "multi" else s
    margins = []
    for t in range(max_steps + 1):
        Q = torch.relu(P)
        Qt = Q if Pt is None else torch.relu(Pt)
        neg_t = Qt @ avg.T  # mean_{j in N_i} relu(partner's P[r, j])
        margins.append((Q * (Qt - neg_t)).mean(0))
        if float(margins[-1].mean()) >= level:  # step 0: the noise starts past the finish line (the race's 0)
            return NoiseMargin(mode=mode, margins=torch.stack(margins), level=level, step=t)
        if Pt is None:
            P = torch.where(P > 0, P + a * s * (P - neg_t), P)
        else:
            P, Pt = (torch.where(P > 0, P + a * s * (Qt - neg_t), P),
                     torch.where(Pt > 0, Pt + a * s_t * (Q - Q @ avg.T), Pt))
    raise ValueError(f"the mean noise margin did not reach tau log M = {level:.3g} within max_steps={max_steps}; "
                     "valid: a larger max_steps")


# --------------------------------------------------------------------------------------------
# Rates and bounds of the appendix (Lemmas C.1, C.9, C.11 and the proof of Lemma 5.2)
# --------------------------------------------------------------------------------------------
def _cfg(cfg) -> SyntheticConfig:
    check_config(cfg)
    return cfg


def cross_term_bound(cfg: SyntheticConfig, delta: float) -> float:
    """Lemma C.1 (and its multi-modal twin, Lemma D.2): with probability ``1 - delta`` the cross
    terms ``sum_{k != i} rho_{r,k} <xi_k, xi_i>/||xi_k||^2`` (and ``<xi_i, mu>``'s) differ from the
    coefficient they perturb by at most ``5 sqrt(log(6 n^2/delta)/d) n`` times the coefficients'
    size, ``O~(n/sqrt(d))``; returns that factor."""
    cfg = _cfg(cfg)
    check_number("delta", delta, 0, 1)
    return 5 * math.sqrt(math.log(6 * cfg.n ** 2 / delta) / cfg.d) * cfg.n


def b_minus_upper_rate(cfg: SyntheticConfig) -> float:
    """Proof of Lemma C.11: ``B_{r,-}(t) <= (1 + 1.05 s)^t B_{r,-}(0)``; returns ``1.05 s``."""
    return 1.05 * noise_step_scale(cfg)


def signal_upper_rate_single(cfg: SyntheticConfig) -> float:
    """Proof of Lemma 5.2 (App. C.1.3): ``max_r A_r(t) <= (1 + 0.52 eta ||mu||^2/(m tau))^t max_r A_r(0)``
    with ``A_r = gamma_r + <w_r(0), mu>`` on ``U_+(0)``; returns ``0.52 eta ||mu||^2/(m tau)``."""
    return 0.52 * signal_step_scale(_cfg(cfg))


def lemma_c9_bound(cfg: SyntheticConfig, delta: float) -> float:
    """Lemma C.9's bound on ``B_{r,+}(0)`` and ``B_{r,-}(0)``:
    ``sigma0 sigma_xi sqrt(d n) (1 + sqrt(log(1/delta)/2))`` (``delta`` in ``(0, 1)``)."""
    cfg = _cfg(cfg)
    check_number("delta", delta, 0, 1)
    return cfg.sigma0 * cfg.sigma_xi * math.sqrt(cfg.d * cfg.n) * (1 + math.sqrt(math.log(1 / delta) / 2))


def b_init_mean(cfg: SyntheticConfig) -> float:
    """The mean of ``B_{r,+}(0) = sum_{i: y_i = 1} relu(<w_r(0), xi_i>)`` (and of ``B_{r,-}(0)``) with
    balanced labels: ``n/2`` terms, each the mean ``sigma0 sigma_xi sqrt(d)/sqrt(2 pi)`` of the positive
    part of an ``N(0, (sigma0 sigma_xi sqrt d)^2)`` variable.  It grows like ``n``; Lemma C.9's bound
    (:func:`lemma_c9_bound`) like ``sqrt(n)``, so the bound fails in mean from ``n`` of about
    ``8 pi (1 + sqrt(log(1/delta)/2))^2`` (108 at ``delta = 0.1``) on."""
    cfg = _cfg(cfg)
    if not cfg.balanced:
        raise ValueError("b_init_mean needs cfg.balanced=True (n/2 samples of each label)")
    return cfg.n / 2 * cfg.init_noise / math.sqrt(2 * math.pi)
