"""The experiment of the chapter :ref:`The downstream theorems <sec-downstream>`: its sizes,
its configuration and its cached run.  The drawings are in :mod:`mmcl.figures.downstream`; the
computation is :func:`mmcl.downstream.response.run_downstream` (both modes trained once per seed,
scored on OOD sets whose signal ``nu`` turns away from ``mu``).

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`DownstreamSizes`: the seeds and the angles of ``nu``);
* :func:`config` -- the chapter's configuration (the Figure 1 setting);
* :data:`PAPER`, :data:`TILTED` -- the two directions of ``nu`` the chapter and its figures show;
* :func:`downstream_result` -- the run the chapter and its four figures share;
* :func:`response_sizes` -- what a feature reads from an OOD input, part by part
  (:class:`ResponseSizes`).

Public: every name in ``__all__``.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Dict, Tuple

from mmcl.downstream.response import PARTS, DownstreamResult, run_downstream
from mmcl.experiments.sizes import figure1_config, pick
from mmcl.model.config import SyntheticConfig

__all__ = ["PAPER", "TILTED", "MODES", "DownstreamSizes", "BY_SIZE", "sizes", "config", "downstream_result",
           "ResponseSizes", "response_sizes"]

#: ``cos(nu, mu)`` of the paper's ``nu = 2 e1`` (Sec. 6): ``<nu, mu> = 10``
PAPER = 1.0
#: ``cos(nu, mu)`` of a ``nu`` of the same norm that meets Sec. 3.3's condition:
#: ``<nu, mu> = 0.5 < ||mu||^2/sqrt(d) = 0.56``
TILTED = 0.05


@dataclass(frozen=True)
class DownstreamSizes:
    """What a size means for this chapter: ``seeds`` draws (0..seeds-1), the ``angles``
    ``cos(nu, mu)`` of the OOD sets, and, for ``"tiny"``, a smaller problem: ``n_epochs`` steps,
    ``d = d~ = d`` and ``n_heldout`` held-out samples (0: Figure 1's ``d = d~ = 2000`` and 1000)."""

    seeds: int
    angles: Tuple[float, ...]
    n_epochs: int = 200
    d: int = 0
    n_heldout: int = 0


_ANGLES = (PAPER, 0.5, 0.2, TILTED, 0.0)
#: The chapter shows 5 seeds (20 with MMCL_BOOK_FULL=1) at five angles; "tiny" is for the tests.
BY_SIZE: Dict[str, DownstreamSizes] = {
    "tiny": DownstreamSizes(seeds=1, angles=(PAPER, TILTED), n_epochs=20, d=500, n_heldout=200),
    "default": DownstreamSizes(seeds=5, angles=_ANGLES), "full": DownstreamSizes(seeds=20, angles=_ANGLES)}


def sizes(size: str = "default") -> DownstreamSizes:
    """The :class:`DownstreamSizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


def config(size: str = "default") -> SyntheticConfig:
    """The Figure 1 setting (``nu_cos`` is set per OOD set by the experiment); ``tiny`` trains 20
    epochs in ``d = d~ = 500`` and scores 200 held-out samples."""
    s = sizes(size)
    return figure1_config(n_epochs=s.n_epochs, d=s.d, n_heldout=s.n_heldout)


@functools.lru_cache(maxsize=2)
def downstream_result(size: str = "default", device: str = "cpu") -> DownstreamResult:
    """:func:`mmcl.downstream.response.run_downstream` at :func:`config` with the seeds and angles
    of ``size`` (cached)."""
    s = sizes(size)
    return run_downstream(config(size), range(s.seeds), s.angles, device=device)


MODES = ("single", "multi")


@dataclass
class ResponseSizes:
    """What a feature reads from an OOD input at the end of training, part by part (Eq. 11), as the
    chapter states it (means over features and seeds): ``spread[mode][part]`` the standard
    deviation over the held-out inputs of the noise response ``<w_r, zeta>`` (the noise patch is
    shared by every angle, so one value per mode), ``signal[(angle, mode)][part]`` the mean
    ``|<w_r, nu>|``, ``best_signal[(angle, mode)]`` the best feature's signal part
    ``max_r |gamma_r <mu, nu>|/||mu||^2`` (mean over seeds), ``max_gamma[mode]`` and
    ``max_rho[mode]`` the largest coefficients at the end of training (mean over seeds), and the
    scales ``inv_d = 1/sqrt(d)``, ``inv_dn = 1/sqrt(dn)`` of App. C.3/D.3 and ``init_noise =
    sigma0 sigma_xi sqrt(d)``.  Parts are ``"init"``, ``"signal"``, ``"memorised"`` and
    ``"total"``."""

    angles: Tuple[float, ...]
    spread: Dict[str, Dict[str, float]]
    signal: Dict[Tuple[float, str], Dict[str, float]]
    best_signal: Dict[Tuple[float, str], float]
    max_gamma: Dict[str, float]
    max_rho: Dict[str, float]
    inv_d: float
    inv_dn: float
    init_noise: float

    def __str__(self) -> str:
        parts = PARTS + ("total",)
        lines = [f"scales: 1/sqrt(d) = {self.inv_d:.4f}, 1/sqrt(dn) = {self.inv_dn:.5f}; "
                 f"sigma0 sigma_xi sqrt(d) = {self.init_noise:.3f}"]
        for m in MODES:
            lines.append(f"{m:>6}: sd of <w_r, zeta> by part "
                         + ", ".join(f"{p} {self.spread[m][p]:.4f}" for p in parts))
        for (c, m), s in self.signal.items():
            lines.append(f"{m:>6}, cos {c:<4g}: |<w_r, nu>| by part "
                         + ", ".join(f"{p} {s[p]:.4f}" for p in parts)
                         + f"; best neuron's signal part {self.best_signal[(c, m)]:.4f}")
        lines.append("end of training, mean over seeds: max_r gamma_r "
                     + ", ".join(f"{m} {self.max_gamma[m]:.2f}" for m in MODES)
                     + "; max_{r,i} rho_{r,i} " + ", ".join(f"{m} {self.max_rho[m]:.2f}" for m in MODES))
        return "\n".join(lines)


def response_sizes(res: DownstreamResult, angles: Tuple[float, ...] = (PAPER, TILTED)) -> ResponseSizes:
    """:class:`ResponseSizes` of ``res`` at the ``angles`` (each an angle of ``res``; the noise
    response is read at the first)."""
    missing = [c for c in angles if c not in res.nu_cos]
    if not angles or missing:
        raise ValueError(f"angles must be angles of res ({', '.join(map(str, res.nu_cos))}), got {angles!r}")
    cfg = res.cfg
    spread = {m: {p: float(v.mean()) for p, v in res.response[(angles[0], m)].spread().items()}
              for m in MODES}
    signal, best = {}, {}
    for c in angles:
        for m in MODES:
            sig = res.response[(c, m)].signal()
            signal[(c, m)] = {p: float(v.abs().mean()) for p, v in sig.items()}
            best[(c, m)] = float(sig["signal"].abs().amax(-1).mean())
    return ResponseSizes(angles=tuple(angles), spread=spread, signal=signal, best_signal=best,
                         max_gamma={m: float(res.max_gamma[m].mean()) for m in MODES},
                         max_rho={m: float(res.max_rho[m].mean()) for m in MODES},
                         inv_d=1 / math.sqrt(cfg.d), inv_dn=1 / math.sqrt(cfg.d * cfg.n),
                         init_noise=cfg.init_noise)
