"""Assumption 4.1 with its constants written out, and the anti-concentration bound of Lemmas B.1-B.2.

Assumption 4.1 of the paper states seven conditions with ``O~``/``Omega~`` (constants and log factors
hidden).  The appendix's proofs use explicit versions of most of them; :func:`check_assumption41`
evaluates each explicit version for a :class:`~mmcl.model.config.SyntheticConfig` and says where it comes
from (the lemma whose proof states it) or that the constant is *ours* (where the appendix gives
none).  The failure probability ``delta`` of the high-probability statements is a parameter
(:class:`AssumptionConfig`).

Lemma B.1 (anti-concentration): for ``x ~ N(0, sigma^2)``, ``P(|x| <= c) = erf(c/(sqrt(2) sigma))``
(:func:`anticoncentration_probability`) and, by Polya's inequality ``erf(z) <= sqrt(1 - exp(-4 z^2/pi))``,
``P(|x| <= c) <= sqrt(1 - exp(-2 c^2/(pi sigma^2)))`` (:func:`anticoncentration_bound`).  The paper
prints ``P = 2 erf(...)`` and the bound with a factor 2; the book's chapter on the assumptions shows
with sympy that the factor is not needed (``factor=2`` reproduces the printed bound).

Lemma B.2 turns the bound into a lower bound on ``|<w_r(0), mu>|`` for all ``m`` neurons;
:func:`lemma_b2_margin`, :func:`lemma_b2_min_d` and :func:`lemma_b2_probability` evaluate it.
"""
from __future__ import annotations

import math
import html
from dataclasses import dataclass
from typing import List, Optional, Union

import torch

from mmcl._utils import check_number
from mmcl.model.config import SyntheticConfig, check_config
from mmcl.proofs.predictions import (C_MU_THRESHOLD, multi_growth_rate, noise_step_scale, signal_step_scale,
                                     single_growth_rate)

__all__ = ["AssumptionConfig", "Condition", "anticoncentration_probability", "anticoncentration_bound",
           "anticoncentration_vacuous_from",
           "lemma_b2_margin", "lemma_b2_min_d", "lemma_b2_failure_bound", "lemma_b2_probability",
           "proof_exponent_single", "proof_exponent_multi", "c_mu_threshold", "check_assumption41",
           "conditions_markdown", "conditions_html", "premises", "premises_hold", "premise_conditions",
           "EXTRA_PREMISES", "NU_CONDITION_MAX", "C10_CONSTANT", "C_MU_PAPER", "N_SNR2_SINGLE_MAX", "N_SNR2_MULTI_MIN"]

C_MU_PAPER = C_MU_THRESHOLD  # Assumption 4.1(7), under the name of this module's tables
N_SNR2_SINGLE_MAX = 1.8  # proof of Lemma 5.2: n SNR^2 <= 1.8
N_SNR2_MULTI_MIN = 1.7  # proof of Lemma 5.4: n SNR^2 >= 1.7
_RATIO = 1.06 / 0.48  # the "2.21" of the proof of Lemma 5.4: noise rate 1.06 over signal rate 0.48

Number = Union[float, torch.Tensor]


@dataclass(frozen=True)
class AssumptionConfig:
    """Parameters of the explicit conditions that the paper leaves free."""

    # failure probability delta of the high-probability lemmas (ours: a generous 0.1; the theorems'
    # own 1 - 1/d means delta = 1/d, which makes conditions (1b) and (3a) incompatible, see the book)
    delta: float = 0.1
    c_ell: float = 1.01  # C_l of Lemma D.1, the value the proof of Lemma D.8 picks (the paper's)
    slack: float = 0.01  # allowance for O(eta^2) terms in the proofs of Lemmas 5.2/5.4 (the paper's 0.01)

    def __post_init__(self) -> None:
        for name, lo, hi in (("delta", 0.0, 1.0), ("slack", 0.0, 0.5)):
            v = getattr(self, name)
            check_number(f"AssumptionConfig.{name}", v, lo, hi)
        check_number("AssumptionConfig.c_ell", self.c_ell, 1.0, low_closed=True)


@dataclass
class Condition:
    """One explicit condition: ``key`` (e.g. ``"1a"``; the digit is the item of Assumption 4.1),
    ``paper`` (the item as the paper states it), ``explicit`` (the inequality evaluated), ``source``
    (the lemma whose proof states it, or ``"ours"``), ``lhs`` ``relation`` ``rhs`` with
    ``relation`` in ``{"<=", "<", ">=", ">"}``, and ``holds``."""

    key: str
    paper: str
    explicit: str
    source: str
    lhs: float
    relation: str
    rhs: float
    holds: bool

    @property
    def factor(self) -> float:
        """The margin ``rhs/lhs`` (for ``<=``) or ``lhs/rhs`` (for ``>=``), which is at least 1 exactly when
        the condition holds (for positive sides)."""
        if self.relation in ("<=", "<"):
            return self.rhs / self.lhs if self.lhs != 0 else math.inf
        return self.lhs / self.rhs if self.rhs != 0 else math.inf


# --------------------------------------------------------------------------------------------
# Lemma B.1: anti-concentration of a centred Gaussian
# --------------------------------------------------------------------------------------------
def _check_c_sigma(c, sigma) -> None:
    for name, v, strict in (("c", c, False), ("sigma", sigma, True)):
        if isinstance(v, torch.Tensor):
            ok = bool((v > 0).all()) if strict else bool((v >= 0).all())
            ok = ok and bool(torch.isfinite(v).all())
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"{name} must be a number or a tensor, got {type(v).__name__}")
        else:
            ok = (v > 0 if strict else v >= 0) and math.isfinite(v)
        if not ok:
            raise ValueError(f"{name} must be finite and {'> 0' if strict else '>= 0'}, got {v!r}")


def _as64(v) -> torch.Tensor:
    return torch.as_tensor(v, dtype=torch.float64)


def anticoncentration_probability(c: Number, sigma: Number) -> torch.Tensor:
    """Lemma B.1 (corrected): ``P(|x| <= c) = erf(c / (sqrt(2) sigma))`` for ``x ~ N(0, sigma^2)``.
    ``c`` and ``sigma`` are numbers or tensors (broadcast); the result is a float64 tensor."""
    _check_c_sigma(c, sigma)
    return torch.special.erf(_as64(c) / (math.sqrt(2) * _as64(sigma)))


def anticoncentration_bound(c: Number, sigma: Number, factor: float = 1.0) -> torch.Tensor:
    """Lemma B.1's upper bound ``factor * sqrt(1 - exp(-2 c^2 / (pi sigma^2)))`` on ``P(|x| <= c)``, a
    float64 tensor.  ``factor=1`` is the bound that follows from Polya's inequality; ``factor=2`` is
    the paper's print."""
    _check_c_sigma(c, sigma)
    check_number("factor", factor, 0)
    return factor * torch.sqrt(-torch.expm1(-2 * _as64(c) ** 2 / (math.pi * _as64(sigma) ** 2)))


def anticoncentration_vacuous_from(sigma: float = 1.0, factor: float = 2.0) -> float:
    """The ``c`` from which Lemma B.1's bound :func:`anticoncentration_bound` (with ``factor``)
    reaches 1 and says nothing: ``factor * sqrt(1 - exp(-2 c^2/(pi sigma^2))) = 1``, i.e.
    ``c = sigma sqrt(-(pi/2) log(1 - 1/factor^2))``.  For the paper's print (``factor=2``) that is
    ``0.672 sigma``; for ``factor <= 1`` the bound stays below 1 and the answer is ``inf``."""
    _check_c_sigma(0.0, sigma)
    check_number("factor", factor, 0)
    if factor <= 1:
        return math.inf
    return float(sigma) * math.sqrt(-(math.pi / 2) * math.log1p(-1 / factor ** 2))


# --------------------------------------------------------------------------------------------
# Lemma B.2: every neuron's initial signal preactivation is bounded away from 0
# --------------------------------------------------------------------------------------------
def _check_delta(delta) -> float:
    return check_number("delta", delta, 0, 1)


def _modality(cfg: SyntheticConfig, tilde: bool):
    """``(d, sigma_xi, ||mu||)`` of the modality."""
    if tilde:
        return cfg.d_tilde, cfg.sigma_xi_tilde, cfg.mu_tilde_norm
    return cfg.d, cfg.sigma_xi, cfg.mu_norm


def lemma_b2_margin(cfg: SyntheticConfig, delta: float, tilde: bool = False) -> float:
    """The margin ``c = 100 SNR sqrt(8 log(6n/delta)/d) n`` that Lemma B.2 puts under every
    ``|<w_r(0), mu>|`` (``tilde=True``: the second modality's ``SNR~``, ``d~``)."""
    cfg = _cfg(cfg)
    delta = _check_delta(delta)
    d, s, mu = _modality(cfg, tilde)
    snr = mu / (s * math.sqrt(d))
    return 100 * snr * math.sqrt(8 * math.log(6 * cfg.n / delta) / d) * cfg.n


def lemma_b2_failure_bound(cfg: SyntheticConfig, delta: float, factor: float = 2.0, tilde: bool = False) -> float:
    """The union bound of the proof of Lemma B.2 on ``P(some r has |<w_r(0), mu>| <= c)``:
    ``m * anticoncentration_bound(c, sigma0 ||mu||, factor)``; the lemma needs it ``<= delta``.
    ``factor=2`` is the paper's, ``factor=1`` the corrected bound."""
    cfg = _cfg(cfg)
    _, _, mu = _modality(cfg, tilde)
    return cfg.m * float(anticoncentration_bound(lemma_b2_margin(cfg, delta, tilde), cfg.sigma0 * mu, factor))


def lemma_b2_min_d(cfg: SyntheticConfig, delta: float, factor: float = 2.0, tilde: bool = False) -> float:
    """The smallest ``d`` for which :func:`lemma_b2_failure_bound` is ``<= delta``, i.e. Lemma B.2's
    condition ``d >= 400 n/(sigma0 sigma_xi) sqrt(log(6n/delta) / (-pi log(1 - delta^2/(factor^2 m^2))))``
    (``factor=2`` gives the paper's ``4 m^2``).  The other parameters are those of ``cfg``."""
    cfg = _cfg(cfg)
    delta = _check_delta(delta)
    check_number("factor", factor, 0)
    _, s, _ = _modality(cfg, tilde)
    q = (delta / (factor * cfg.m)) ** 2
    if q >= 1:
        return 0.0  # the union bound holds for any d
    return 400 * cfg.n / (cfg.sigma0 * s) * math.sqrt(math.log(6 * cfg.n / delta) / (-math.pi * math.log1p(-q)))


def lemma_b2_probability(cfg: SyntheticConfig, delta: float, tilde: bool = False, log10: bool = False) -> float:
    """The exact probability of Lemma B.2's conclusion, ``P(|<w_r(0), mu>| >= c for all r)`` =
    ``erfc(c / (sqrt(2) sigma0 ||mu||))^m`` (the ``m`` neurons are independent).

    ``log10=True`` returns its base-10 logarithm ``m log10 erfc(...)`` instead, finite where float64
    rounds the probability itself to 0 (at the Figure 1 settings it is about ``-1.9e8``): computed to
    40 significant digits before the one rounding to float (``_log10_erfc_power``)."""
    cfg = _cfg(cfg)
    _, _, mu = _modality(cfg, tilde)
    c = lemma_b2_margin(cfg, delta, tilde)
    x = c / (math.sqrt(2) * cfg.sigma0 * mu)
    if log10:
        return _log10_erfc_power(x, cfg.m)
    return math.erfc(x) ** cfg.m


# 60 digits of pi, for the 40-digit evaluation of log erfc
_PI = "3.14159265358979323846264338327950288419716939937510582097494"


def _log10_erfc_power(x: float, m: int, digits: int = 40) -> float:
    """``m * log10(erfc(x))`` for ``x >= 0`` without underflow.  Below ``x = 20`` (``erfc(20) ~ 5e-176``)
    in float64; from there on ``decimal`` arithmetic with ``digits`` significant digits (and 10 guard
    digits) on the asymptotic series ``log erfc(x) = -x^2 - log(x sqrt(pi)) + log(sum_k (-1)^k
    (2k-1)!! / (2x^2)^k)``, whose smallest term (near ``k = x^2``) is below ``exp(-x^2) < 1e-170``:
    the series is summed until its terms fall below the working precision.  The result is rounded
    to float once."""
    from decimal import Decimal, localcontext

    if not x >= 0:
        raise ValueError(f"x must be >= 0, got {x!r}")
    if x < 20.0:
        log_erfc = math.log1p(-math.erf(x)) if x < 0.5 else math.log(math.erfc(x))
        return m * log_erfc / math.log(10)
    with localcontext() as ctx:
        ctx.prec = digits + 10
        X = Decimal(x)  # exact: a float is a finite binary fraction
        t = 1 / (2 * X * X)
        total, term, k = Decimal(1), Decimal(1), 0
        eps = Decimal(10) ** -(ctx.prec + 2)
        while True:
            k += 1
            term *= -(2 * k - 1) * t
            if abs(term) < eps:
                break
            total += term
        ln = -X * X - X.ln() - Decimal(_PI).ln() / 2 + total.ln()
        return float(m * ln / Decimal(10).ln())


# --------------------------------------------------------------------------------------------
# The scale gap at the end of stage 1 (proofs of Lemmas 5.2 and 5.4)
# --------------------------------------------------------------------------------------------
def _cfg(cfg) -> SyntheticConfig:
    check_config(cfg)
    return cfg


def proof_exponent_single(cfg: SyntheticConfig) -> float:
    """``log(1 + 0.52 eta ||mu||^2/(m tau)) / log(1 + 0.96 eta sigma_xi^2 d/(n m tau))``: the power of
    ``1/(sigma0 sigma_xi sqrt d)`` by which signal learning can grow while noise memorisation
    reaches ``Omega(1)`` (proof of Lemma 5.2).  The proof needs it ``<= 1``; to first order in
    ``eta`` it is ``0.54 n SNR^2``, whence the paper's ``n SNR^2 <= 1.8``."""
    cfg = _cfg(cfg)
    return math.log1p(0.52 * signal_step_scale(cfg)) / math.log1p(single_growth_rate(cfg))


def proof_exponent_multi(cfg: SyntheticConfig) -> float:
    """``log(1 + 1.06 eta sigma_xi^2 d/(n m tau)) / log(1 + 0.48 C_mu eta ||mu||^2/(m tau))``: the
    power of ``20/(sigma0 ||mu||)`` by which noise memorisation can grow while signal learning
    reaches ``Omega(1)`` (proof of Lemma 5.4).  The proof needs it ``<= 1/2`` (so that ``max Psi(T1)
    = O~(1/sqrt n)``); to first order in ``eta`` it is ``2.21/(C_mu n SNR^2)``."""
    cfg = _cfg(cfg)
    return math.log1p(1.06 * noise_step_scale(cfg)) / math.log1p(multi_growth_rate(cfg))


def c_mu_threshold(n_snr2: float, exponent: float = 0.5, slack: float = 0.01) -> float:
    """The smallest ``C_mu`` with ``2.21/(C_mu n SNR^2) + slack <= exponent`` (proof of Lemma 5.4, first
    order in ``eta``, ``2.21 = 1.06/0.48``).  At ``n SNR^2 = 1.7`` it is 2.65, the paper's "2.66"."""
    for name, v in (("n_snr2", n_snr2), ("exponent", exponent)):
        check_number(name, v, 0)
    check_number("slack (below exponent)", slack, 0, exponent, low_closed=True)
    return _RATIO / ((exponent - slack) * n_snr2)


# --------------------------------------------------------------------------------------------
# Assumption 4.1, item by item
# --------------------------------------------------------------------------------------------
def _cond(key, paper, explicit, source, lhs, relation, rhs) -> Condition:
    holds = {"<=": lhs <= rhs, "<": lhs < rhs, ">=": lhs >= rhs, ">": lhs > rhs}[relation]
    return Condition(key=key, paper=paper, explicit=explicit, source=source, lhs=float(lhs), relation=relation,
                     rhs=float(rhs), holds=bool(holds))


def check_assumption41(cfg: SyntheticConfig, acfg: AssumptionConfig = AssumptionConfig()) -> List[Condition]:
    """Every condition of Assumption 4.1 in the explicit form its proofs use, evaluated for ``cfg``.

    Items and sources (``delta`` from ``acfg``; "ours" where the appendix gives no constant):

    * (1) ``d >= Omega~(max{n^2, n/(sigma0 sigma_xi), 1/(sigma0^2 ||mu||^2)})``: 1a ``d > n^2 log(6n^2/delta)``
      (proof of Lemma C.2); 1b Lemma B.2's bound (:func:`lemma_b2_min_d`, paper's factor 2), and 1b~
      for the second modality; 1c ``d >= 1/(sigma0^2 ||mu||^2)`` (ours: constant 1, no log);
      1d ``d > 10000 log(6n^2/delta)`` (proof of Lemma D.8);
    * (2) ``eta <= O(min{m/||mu||^2, n m/(sigma_xi^2 d)})``: 2a ``eta <= n m tau/(12 sigma_xi^2 d)``
      (proof of Proposition C.13); 2b ``eta <= m tau/||mu||^2`` (ours: constant 1, with the ``tau``
      that 2a carries);
    * (3) ``sigma0 <= O~(1/max{sigma_xi sqrt d, ||mu||})``: 3a ``sigma0 <= 1/(2 sqrt(log(8mn/delta))
      sigma_xi sqrt d)`` (proof of Lemma C.2); 3b ``sigma0 <= 1/(2 sqrt(2 log(8m/delta)) ||mu||)``
      (proof of Lemma D.4); 3c ``sigma0 <= 1/(2 sqrt(log(8mn/delta)) sigma_eps sqrt d)`` (Lemma C.2);
    * (4) ``m, n >= Omega~(1)``: 4a ``n >= 2500 log(4/delta)`` (Lemmas C.4, D.4); 4b ``n >= 1.28e6
      log(4/delta)`` (proof of Lemma D.8); 4c ``M >= 100 C_l - 1`` (proofs of Lemmas C.11, D.8);
      4d ``m >= log(1/delta)`` (ours: Lemma B.4's ``Omega(log(1/delta))`` with constant 1);
    * (5) ``sigma_eps <= min{Theta~(||mu||), sigma_xi/Omega~(1)}``: 5a ``sigma_eps <= ||mu||/sqrt(2
      log(6n/delta))`` and 5b ``sigma_eps < sigma_xi`` (proof of Lemma C.2);
    * (6) ``n SNR^2 = Theta(1)``: 6a ``n SNR^2 <= 1.8`` (proof of Lemma 5.2) and 6a' its exact form
      :func:`proof_exponent_single` ``<= 1``; 6b ``n SNR^2 >= 1.7`` (proof of Lemma 5.4);
    * (7) ``C_mu >= 2.66``: 7a as stated; 7b ``C_mu >= c_mu_threshold(n SNR^2)`` (the proof's
      condition at this ``n SNR^2``); 7c its exact form :func:`proof_exponent_multi` ``<= 1/2``.
    """
    cfg = _cfg(cfg)
    if not isinstance(acfg, AssumptionConfig):
        raise ValueError(f"acfg must be an AssumptionConfig, got {type(acfg).__name__}")
    dl = acfg.delta
    n, m, d, M = cfg.n, cfg.m, cfg.d, cfg.M
    s, s0, eta, tau = cfg.sigma_xi, cfg.sigma0, cfg.lr, cfg.tau
    mu = cfg.mu_norm
    nsnr2 = cfg.n_snr2
    L = math.log
    P1 = "d ≥ Ω~(max{n², n/(σ₀σ_ξ), 1/(σ₀²‖μ‖²)})"
    P2 = "η ≤ O(min{m/‖μ‖², nm/(σ_ξ²d)})"
    P3 = "σ₀ ≤ O~(1/max{σ_ξ√d, ‖μ‖})"
    P4 = "m, n ≥ Ω~(1)"
    P5 = "σ_ε ≤ min{Θ~(‖μ‖), σ_ξ/Ω~(1)}"
    P6 = "n·SNR² = Θ(1)"
    P7 = "C_μ ≥ 2.66"
    return [
        _cond("1a", P1, "d > n² log(6n²/δ)", "proof of Lemma C.2", d, ">", n ** 2 * L(6 * n ** 2 / dl)),
        _cond("1b", P1, "d ≥ 400n/(σ₀σ_ξ)·√(log(6n/δ)/(−π log(1−δ²/4m²)))",
              "Lemma B.2", d, ">=", lemma_b2_min_d(cfg, dl)),
        _cond("1b~", P1, "1b for modality 2 (d~, σ_ξ~)", "Lemma B.2", cfg.d_tilde, ">=",
              lemma_b2_min_d(cfg, dl, tilde=True)),
        _cond("1c", P1, "d ≥ 1/(σ₀²‖μ‖²)", "ours", d, ">=", 1 / (s0 * mu) ** 2),
        _cond("1d", P1, "d > 10⁴ log(6n²/δ)", "proof of Lemma D.8", d, ">", 1e4 * L(6 * n ** 2 / dl)),
        _cond("2a", P2, "η ≤ nmτ/(12σ_ξ²d)", "proof of Prop. C.13", eta, "<=",
              n * m * tau / (12 * s ** 2 * d)),
        _cond("2b", P2, "η ≤ mτ/‖μ‖²", "ours", eta, "<=", m * tau / mu ** 2),
        _cond("3a", P3, "σ₀ ≤ 1/(2√log(8mn/δ)·σ_ξ√d)", "proof of Lemma C.2", s0, "<=",
              1 / (2 * math.sqrt(L(8 * m * n / dl)) * s * math.sqrt(d))),
        _cond("3b", P3, "σ₀ ≤ 1/(2√(2 log(8m/δ))·‖μ‖)", "proof of Lemma D.4", s0, "<=",
              1 / (2 * math.sqrt(2 * L(8 * m / dl)) * mu)),
        _cond("3c", P3, "σ₀ ≤ 1/(2√log(8mn/δ)·σ_ε√d)", "proof of Lemma C.2", s0, "<=",
              1 / (2 * math.sqrt(L(8 * m * n / dl)) * cfg.sigma_eps * math.sqrt(d))),
        _cond("4a", P4, "n ≥ 2500 log(4/δ)", "Lemmas C.4, D.4", n, ">=", 2500 * L(4 / dl)),
        _cond("4b", P4, "n ≥ 1.28·10⁶ log(4/δ)", "proof of Lemma D.8", n, ">=", 1.28e6 * L(4 / dl)),
        _cond("4c", P4, "M ≥ 100 C_ℓ − 1", "proofs of Lemmas C.11, D.8", M, ">=", 100 * acfg.c_ell - 1),
        _cond("4d", P4, "m ≥ log(1/δ)", "ours", m, ">=", L(1 / dl)),
        _cond("5a", P5, "σ_ε ≤ ‖μ‖/√(2 log(6n/δ))", "proof of Lemma C.2", cfg.sigma_eps, "<=",
              mu / math.sqrt(2 * L(6 * n / dl))),
        _cond("5b", P5, "σ_ε < σ_ξ", "proof of Lemma C.2", cfg.sigma_eps, "<", s),
        _cond("6a", P6, "n·SNR² ≤ 1.8", "proof of Lemma 5.2", nsnr2, "<=", N_SNR2_SINGLE_MAX),
        _cond("6a'", P6, "log(1+0.52η‖μ‖²/(mτ)) / log(1+0.96ησ_ξ²d/(nmτ)) ≤ 1",
              "proof of Lemma 5.2", proof_exponent_single(cfg), "<=", 1.0),
        _cond("6b", P6, "n·SNR² ≥ 1.7", "proof of Lemma 5.4", nsnr2, ">=", N_SNR2_MULTI_MIN),
        _cond("7a", P7, "C_μ ≥ 2.66", "Assumption 4.1(7)", cfg.c_mu, ">=", C_MU_PAPER),
        _cond("7b", P7, "C_μ ≥ 2.21/((0.5 − 0.01)·n·SNR²)", "proof of Lemma 5.4", cfg.c_mu, ">=",
              c_mu_threshold(nsnr2, 0.5, acfg.slack)),
        _cond("7c", P7, "log(1+1.06ησ_ξ²d/(nmτ)) / log(1+0.48C_μη‖μ‖²/(mτ)) ≤ 1/2",
              "proof of Lemma 5.4", proof_exponent_multi(cfg), "<=", 0.5),
    ]


#: The premises that proofs use besides Assumption 4.1's 22 conditions (:func:`premise_conditions`).
EXTRA_PREMISES = ("3.3", "C.6", "C.10", "D.4", "D.6")
#: The constant of Sec. 3.3's ``<nu, mu> = O(||mu||^2/sqrt(d))``, which the paper does not give (ours: 1).
NU_CONDITION_MAX = 1.0
#: The constant ``C`` of Lemma C.10 that the proof of Lemma C.11 needs, in units of ``C_l``: ``C = 202 C_l``.
C10_CONSTANT = 202.0


def premise_conditions(cfg: SyntheticConfig, acfg: AssumptionConfig = AssumptionConfig()) -> List[Condition]:
    """The premises that proofs use besides Assumption 4.1, as :class:`Condition` rows:

    * ``"3.3"`` -- Sec. 3.3's condition on the OOD signal, ``|<nu, mu>| <= C ||mu||^2/sqrt(d)``
      (``cfg.nu_condition <= NU_CONDITION_MAX``; the constant ``C = 1`` is ours).  It is not an item
      of Assumption 4.1, but the downstream halves of Theorems 4.2 and 4.3 use it (Appendices C.3, D.3);
    * ``"C.6"`` -- Lemma C.6's condition ``d >= sqrt(300 log(6n^2/delta) / (-log(1 - delta^2/(4n^2))
      pi sigma0^2 sigma_xi^2))`` (every ``|<w_r(0), xi_i>|`` bounded away from 0);
    * ``"C.10"`` -- Lemma C.10's condition ``n >= 8 C^2 log(1/delta) / (-log(1 - (delta/m)^2))`` with the
      ``C = 202 C_l`` that the proof of Lemma C.11 takes (about ``2e11`` at ``m = 50``, ``delta = 0.1``);
    * ``"D.4"`` -- what the proof of Lemma D.4 needs of the loss derivatives over stage 1,
      ``1 - C_l/(M+1) >= 0.96``, that is ``M + 1 >= 25 C_l`` (``acfg.c_ell``: the paper's 1.01 by default,
      or the ``C_l`` a run measured at ``T1``);
    * ``"D.6"`` -- Lemma D.6's condition ``d >= 300 sqrt(2 n^3 log(6n^2/delta)) / (sigma0 sigma_xi
      sqrt(pi log(1/(1 - (delta/m)^2))))``, which the proof of Lemma D.8 uses through D.6 (about
      ``3.3e23`` at the decisive point, ``n = 9,224``: past what a span draw reaches).
    """
    cfg = _cfg(cfg)
    dl, n, m = acfg.delta, cfg.n, cfg.m
    L = math.log
    c6 = math.sqrt(300 * L(6 * n ** 2 / dl) / (-math.log1p(-dl ** 2 / (4 * n ** 2)) * math.pi
                                               * (cfg.sigma0 * cfg.sigma_xi) ** 2))
    C = C10_CONSTANT * acfg.c_ell
    c10 = 8 * C ** 2 * L(1 / dl) / -math.log1p(-(dl / m) ** 2)
    c_d6 = 300 * math.sqrt(2 * n ** 3 * L(6 * n ** 2 / dl)) / (
        cfg.sigma0 * cfg.sigma_xi * math.sqrt(math.pi * -math.log1p(-(dl / m) ** 2)))
    return [
        _cond("3.3", "<ν, μ> = O(‖μ‖²/√d)", "|<ν, μ>| ≤ ‖μ‖²/√d (constant 1: ours)", "Sec. 3.3",
              cfg.nu_condition, "<=", NU_CONDITION_MAX),
        _cond("C.6", "d ≥ √(300 log(6n²/δ)/(−log(1−δ²/4n²) π σ₀²σ_ξ²))", "as stated", "Lemma C.6", cfg.d, ">=", c6),
        _cond("C.10", "n ≥ 8C² log(1/δ)/(−log(1−(δ/m)²))", f"with C = {C10_CONSTANT:g} C_ℓ (proof of Lemma C.11)",
              "Lemma C.10", n, ">=", c10),
        _cond("D.4", "M + 1 ≥ 25 C_ℓ", f"1 − C_ℓ/(M+1) ≥ 0.96 over stage 1, C_ℓ = {acfg.c_ell:g}", "proof of Lemma D.4",
              cfg.M + 1, ">=", 25 * acfg.c_ell),
        _cond("D.6", "d ≥ 300√(2n³ log(6n²/δ))/(σ₀σ_ξ √(π log(1/(1−(δ/m)²))))", "as stated", "Lemma D.6",
              cfg.d, ">=", c_d6),
    ]


def _conditions(cfg: SyntheticConfig, keys, acfg: AssumptionConfig) -> List[Condition]:
    conds = check_assumption41(cfg, acfg)
    if keys is None:
        return conds
    if isinstance(keys, str):
        keys = (keys,)
    if any(k in EXTRA_PREMISES for k in keys):
        conds = conds + premise_conditions(cfg, acfg)
    valid = [c.key for c in conds] + [k for k in EXTRA_PREMISES if k not in [c.key for c in conds]]
    unknown = [k for k in keys if k not in valid]
    if unknown:
        raise ValueError(f"keys={list(keys)!r}: {unknown} are not conditions of Assumption 4.1; valid: {valid}")
    return [c for c in conds if c.key in keys]


def premises_hold(cfg: SyntheticConfig, keys=None, acfg: AssumptionConfig = AssumptionConfig()) -> bool:
    """Whether every condition of Assumption 4.1 (or of ``keys``, those a proof uses) holds at ``cfg``:
    what decides between the claims register's verdicts "fails" and "outside"."""
    return all(c.holds for c in _conditions(cfg, keys, acfg))


def premises(cfg: SyntheticConfig, keys=None, acfg: AssumptionConfig = AssumptionConfig()) -> str:
    """Which conditions of Assumption 4.1 fail at ``cfg``, in words, for the claims register.

    ``keys`` restricts the answer to the conditions a statement's proof uses (e.g. ``("1a", "3a",
    "4c")``), which may include the premises beyond Assumption 4.1 (``EXTRA_PREMISES``:
    :func:`premise_conditions`); an unknown key is a ValueError.  Returns e.g. ``"Assumption 4.1 fails at this setting
    in 11 of 22 conditions: 1a, 1b, ..."`` or ``"the conditions 2a, 6a of Assumption 4.1 hold at this
    setting (delta = 0.1)"``.
    """
    conds = _conditions(cfg, keys, acfg)
    bad = [c.key for c in conds if not c.holds]
    where = f"(delta = {acfg.delta:g})"
    if not bad:
        return f"the conditions {', '.join(c.key for c in conds)} of Assumption 4.1 hold at this setting {where}"
    return (f"Assumption 4.1 fails at this setting in {len(bad)} of {len(conds)} conditions"
            f"{' its proof uses' if keys is not None else ''}: {', '.join(bad)} {where}")


def _fmt(x: float) -> str:
    if x == 0 or (1e-3 <= abs(x) < 1e5):
        return f"{x:.4g}"
    return f"{x:.2e}"


_HEADER = ("item", "explicit condition", "source", "left", "right", "holds", "factor")


def _check_conditions(conditions) -> None:
    if not isinstance(conditions, (list, tuple)) or not all(isinstance(c, Condition) for c in conditions):
        raise ValueError("conditions must be a list of Condition")


def _cells(c: Condition) -> tuple:
    return (c.key, c.explicit, c.source, _fmt(c.lhs), f"{ {'<=': '≤', '<': '<', '>=': '≥', '>': '>'}[c.relation]} {_fmt(c.rhs)}",
            "yes" if c.holds else "no", _fmt(c.factor))


def conditions_html(conditions: List[Condition]) -> str:
    """An HTML table of :func:`check_assumption41`'s conditions, failing rows in bold (for a
    notebook's or the book's display: HTML renders in both, where a markdown table in an output
    may not)."""
    _check_conditions(conditions)
    head = "".join(f"<th>{h}</th>" for h in _HEADER)
    rows = []
    for c in conditions:
        cells = [html.escape(x) for x in _cells(c)]
        if not c.holds:
            cells[5] = f"<strong>{cells[5]}</strong>"
        rows.append("<tr>" + "".join(f"<td>{x}</td>" for x in cells) + "</tr>")
    return f'<table class="table" style="font-size: 85%"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def conditions_markdown(conditions: List[Condition]) -> str:
    """A markdown table of :func:`check_assumption41`'s conditions, failing rows in bold."""
    _check_conditions(conditions)
    rows = ["| " + " | ".join(_HEADER) + " |", "|" + "---|" * len(_HEADER)]
    for c in conditions:
        cells = [x.replace("|", "\\|") for x in _cells(c)]
        if not c.holds:
            cells[5] = f"**{cells[5]}**"
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)
