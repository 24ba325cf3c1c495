"""The scalings of the chapter "Inside the theorems' regime": configurations in which Assumption
4.1 holds as ``n`` grows, the dimension each rule gives, and the conditions evaluated along them.

**The scalings** (:class:`~mmcl.experiments.theorems_regime.RegimeScaling`,
:func:`~mmcl.experiments.theorems_regime.regime_config`).  For each ``n``, with ``m``, ``tau``,
``sigma_xi = sigma_xi~ = 1``, ``sigma_eps`` and the failure probability ``delta`` held fixed, and
the item of Assumption 4.1 (:func:`mmcl.proofs.assumptions.check_assumption41`) each choice serves:

* (1) ``d = d~ = ceil(n^2 log(6 n^2/delta))`` (item 1a's own bound; ``d_rule="n2log"``, the
  default), at which item 1b (Lemma B.2) fails by a factor that does not depend on ``n``; or
  ``d_rule="b2"``, raised to what 1b asks (with ``sigma0 ~ 1/sqrt(d)`` item 1b reads
  ``d >= c(n) sqrt(d)``, i.e. ``d >= c(n)^2``, :func:`~mmcl.experiments.theorems_regime.b2_dimension`:
  ``2.8e17`` at ``n = 100``, ``5.9e21`` at ``n = 10^4``).  Span draws take ``d`` up to
  ``SPAN_D_MAX = 2^78`` (:mod:`mmcl.model.span`: float64 resolves their chi-square variates to
  ``1e-4`` of a standard deviation there), which ``"b2"`` reaches near ``n = 7 10^4``:
  :func:`~mmcl.experiments.theorems_regime.regime_config` refuses it beyond (the chapter's
  former limit ``D_MAX = 2^63``, from ``n = 562`` on, was the int64 range, which the draw never needed);
* (2) ``eta = step * n/d`` (``step = 0.2``, the Figure 1 value at ``n = 100``, ``d = 2000``):
  the per-step noise growth ``eta sigma_xi^2 d/(n m tau) = step/(m tau)`` and the signal growth
  ``eta ||mu||^2/(m tau) = step n SNR^2/(m tau)`` are held fixed, so the step is as stable at
  ``d = 10^20`` as at Figure 1 (the benchmark ``benchmarks/bench_span.py`` scales the same way);
  2a needs ``step <= m tau/12``;
* (3) ``sigma0 = init_fraction / (2 sqrt(log(8 m n/delta)) sigma_xi sqrt(d))``: a fraction of item 3a's
  bound (3b and 3c follow);
* (4) ``M = n/2`` (every opposite-label sample, as the proofs take it); 4c (``M >= 100 C_l - 1``)
  then holds from ``n = 200``; 4a and 4b (``n >= 2500 log(4/delta)``, ``n >= 1.28e6 log(4/delta)``)
  are conditions on ``n`` alone;
* (6) ``||mu|| = sqrt(n_snr2 sigma_xi^2 d/n)`` with ``n SNR^2 = 1.75``, inside the window
  ``[1.7, 1.8]`` where both proofs' conditions 6a and 6b hold;
* (7) ``||mu~|| = C_mu ||mu||`` with ``C_mu = 3``; the OOD signal ``||nu|| = nu_ratio ||mu||``
  (``0.4``, Figure 1's ``2/5``; parallel to ``mu`` as in Figure 1, so Sec. 3.3's
  ``<nu, mu> = O(||mu||^2/sqrt(d))`` fails as it does there: it is not an item of Assumption 4.1).

Public: every name in ``__all__``, importable from (and documented under) :mod:`mmcl.experiments.theorems_regime`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence

from mmcl._utils import check_bool, check_int, check_number
from mmcl.model.config import SyntheticConfig
from mmcl.model.span import SPAN_D_MAX
from mmcl.proofs.assumptions import AssumptionConfig, Condition, check_assumption41, lemma_b2_min_d

__all__ = ["RegimeScaling", "regime_dimension", "b2_dimension", "regime_config", "conditions_by_n", "failing_by_n",
           "n_threshold", "D_MAX"]

#: ``2^63``, the limit span draws were once held to (the int64 range); the chapter "Inside the theorems'
#: regime" quotes it.  :func:`~mmcl.experiments.theorems_regime.regime_config` refuses only above
#: :data:`mmcl.model.span.SPAN_D_MAX` (``2^78``).
D_MAX = 2 ** 63
_D_RULES = ("b2", "n2log")


@dataclass(frozen=True)
class RegimeScaling:
    """The scalings of the module docstring: everything but ``n`` (and what follows from it).

    ``m`` neurons, temperature ``tau``, augmentation noise ``sigma_eps``, ``n_snr2`` (= ``n SNR^2``,
    Assumption 4.1(6)), ``c_mu`` (4.1(7)), ``nu_ratio`` = ``||nu||/||mu||``, ``init_fraction``
    (``sigma0`` as this fraction of item 3a's bound, in ``(0, 1]``), ``step`` (``eta = step n/d``),
    ``delta`` (the failure probability the conditions are evaluated at), ``d_rule`` (``"b2"`` or
    ``"n2log"``), ``n_epochs`` and ``M_fraction`` (``M = floor(M_fraction n)``, at most ``n/2``)."""

    m: int = 50
    tau: float = 0.1
    sigma_eps: float = 0.1
    n_snr2: float = 1.75
    c_mu: float = 3.0
    nu_ratio: float = 0.4
    init_fraction: float = 0.9
    step: float = 0.2
    delta: float = 0.1
    d_rule: str = "n2log"
    n_epochs: int = 200
    M_fraction: float = 0.5

    def __post_init__(self) -> None:
        check_int("RegimeScaling.m", self.m)
        check_int("RegimeScaling.n_epochs", self.n_epochs)
        for name in ("tau", "sigma_eps", "n_snr2", "c_mu", "nu_ratio", "step"):
            check_number(f"RegimeScaling.{name}", getattr(self, name), 0)
        check_number("RegimeScaling.init_fraction", self.init_fraction, 0, 1, high_closed=True)
        check_number("RegimeScaling.delta", self.delta, 0, 1)
        check_number("RegimeScaling.M_fraction", self.M_fraction, 0, 0.5, high_closed=True)
        if self.d_rule not in _D_RULES:
            raise ValueError(f"RegimeScaling.d_rule={self.d_rule!r} is unknown; valid: {', '.join(map(repr, _D_RULES))}")

    @property
    def noise_step(self) -> float:
        """``eta sigma_xi^2 d/(n m tau) = step/(m tau)``, the per-step noise growth held fixed."""
        return self.step / (self.m * self.tau)


def check_n(n) -> int:
    check_int("n", n, 2)
    if n % 2:
        raise ValueError(f"n must be even (balanced labels), got {n}")
    return n


def _sigma0_sqrt_d(n: int, s: RegimeScaling) -> float:
    """``sigma0 sigma_xi sqrt(d)`` of the scaling (``sigma_xi = 1``): ``init_fraction`` times 3a's bound."""
    return s.init_fraction / (2 * math.sqrt(math.log(8 * s.m * n / s.delta)))


def _build(n: int, d: int, s: RegimeScaling) -> SyntheticConfig:
    mu = math.sqrt(s.n_snr2 * d / n)
    return SyntheticConfig(n=n, d=d, d_tilde=d, m=s.m, M=max(1, int(s.M_fraction * n)), n_epochs=s.n_epochs,
                           lr=s.step * n / d, tau=s.tau, sigma0=_sigma0_sqrt_d(n, s) / math.sqrt(d),
                           mu_norm=mu, mu_tilde_norm=s.c_mu * mu, nu_norm=s.nu_ratio * mu,
                           sigma_eps=s.sigma_eps)


def b2_dimension(n: int, scaling: RegimeScaling = RegimeScaling()) -> int:
    """The smallest ``d`` at which Lemma B.2's condition (item 1b, :func:`mmcl.proofs.assumptions.lemma_b2_min_d`)
    holds under the scaling: with ``sigma0 = c0/sqrt(d)`` its right side is ``c(n) sqrt(d)``, so
    ``d >= c(n)^2`` (about ``2.8e17`` at ``n = 100``, ``4e19`` at ``n = 1000``)."""
    n = check_n(n)
    probe = _build(n, 10 ** 6, scaling)  # any d: the bound's ratio to sqrt(d) does not depend on it
    c = lemma_b2_min_d(probe, scaling.delta) / math.sqrt(probe.d)
    return max(2, math.ceil(c * c * (1 + 1e-9)))


def regime_dimension(n: int, scaling: RegimeScaling = RegimeScaling()) -> int:
    """``d`` of the scaling at ``n``: ``ceil(n^2 log(6 n^2/delta))`` (item 1a), and at least
    :func:`b2_dimension` with ``d_rule="b2"``."""
    n = check_n(n)
    d = math.ceil(n * n * math.log(6 * n * n / scaling.delta) * (1 + 1e-12))
    return max(d, b2_dimension(n, scaling)) if scaling.d_rule == "b2" else d


def regime_config(n: int, scaling: RegimeScaling = RegimeScaling(), *, for_span: bool = True) -> SyntheticConfig:
    """The :class:`~mmcl.model.config.SyntheticConfig` of the scaling at ``n`` (module docstring).
    ``for_span``: refuse a ``d`` that span draws cannot take (``d > 2^78``,
    :data:`mmcl.model.span.SPAN_D_MAX`); ``False`` for a configuration that is only evaluated
    (:func:`conditions_by_n`), never drawn."""
    if not isinstance(scaling, RegimeScaling):
        raise ValueError(f"scaling must be a RegimeScaling, got {type(scaling).__name__}")
    check_bool("for_span", for_span)
    n = check_n(n)
    d = regime_dimension(n, scaling)
    if for_span and d > SPAN_D_MAX:
        raise ValueError(f"d={d:.3e} (d_rule={scaling.d_rule!r} at n={n}) exceeds what span draws take, d <= 2^78; "
                         f"use d_rule='n2log' or a smaller n")
    return _build(n, d, scaling)


def conditions_by_n(sizes: Sequence[int], scaling: RegimeScaling = RegimeScaling(),
                    delta: Optional[float] = None) -> Dict[int, List[Condition]]:
    """:func:`mmcl.proofs.assumptions.check_assumption41` of :func:`regime_config` at each ``n``,
    at failure probability ``delta`` (default: the scaling's; ``"1/d"`` for the theorems' own)."""
    out = {}
    for n in sizes:
        cfg = regime_config(n, scaling, for_span=False)
        dl = scaling.delta if delta is None else (1.0 / cfg.d if delta == "1/d" else delta)
        out[n] = check_assumption41(cfg, AssumptionConfig(delta=dl))
    return out


def failing_by_n(conditions: Mapping[int, List[Condition]]) -> Dict[int, List[str]]:
    """The keys of the failing conditions at each ``n`` of :func:`conditions_by_n`."""
    return {n: [c.key for c in cs if not c.holds] for n, cs in conditions.items()}


def n_threshold(key: str, scaling: RegimeScaling = RegimeScaling()) -> float:
    """The smallest ``n`` at which a sample-size item holds (``"4a"``: ``2500 log(4/delta)``,
    ``"4b"``: ``1.28e6 log(4/delta)``, ``"4c"``: ``n`` with ``M_fraction n >= 100 C_l - 1``,
    ``C_l`` the default of :class:`~mmcl.proofs.assumptions.AssumptionConfig`)."""
    L = math.log(4 / scaling.delta)
    if key == "4a":
        return 2500 * L
    if key == "4b":
        return 1.28e6 * L
    if key == "4c":
        return (100 * AssumptionConfig().c_ell - 1) / scaling.M_fraction
    raise ValueError(f"key={key!r} is unknown; valid: '4a', '4b', '4c'")
