"""Configuration of the synthetic experiment (Sec. 3 and Sec. 6 of the paper).

Every default is the Figure 1 setting of Sec. 6, except ``tau``, ``sigma0`` and ``M``, which
the paper does not state: those three are *ours*, chosen so that both losses converge within
the 200 epochs and the Figure 1 picture appears (see the book's chapter "Side by side" for what
changes when they change).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from mmcl._utils import check_bool, check_int, check_number

__all__ = ["SyntheticConfig", "check_config"]


@dataclass(frozen=True)
class SyntheticConfig:
    """All parameters of the synthetic data model, the networks and gradient descent.

    Data (Eqs. 1, 2, 5): ``x = [y mu, xi]``, ``x+ = [y mu, xi + eps]`` and, for the second
    modality, ``x~ = [y mu~, xi~]``; the OOD downstream input is ``[y nu, zeta]``.
    ``mu`` lies along e1 of modality 1, ``mu~`` along e2 of modality 2 (Sec. 6).  ``nu`` is
    ``nu_norm (nu_cos e1 + sqrt(1 - nu_cos^2) e2)`` in modality 1, whose e2 nothing else uses: the
    default ``nu_cos = 1`` is the paper's ``nu = 2 e1``, parallel to ``mu``; a smaller ``nu_cos``
    tilts ``nu`` away from ``mu`` at the same norm (Sec. 3.3 asks ``<nu, mu> = O(||mu||^2/sqrt(d))``,
    see ``nu_condition``).
    """

    # --- dimensions (Sec. 6) ---
    d: int = 2000  # dimension of each patch of modality 1
    d_tilde: int = 2000  # dimension of each patch of modality 2 (not stated; we take d~ = d)
    n: int = 100  # training samples
    n_test: int = 200  # labelled OOD samples the downstream head is fit on (Sec. 6)
    n_heldout: int = 1000  # fresh OOD samples the `adapt` head is scored on (ours)
    m: int = 50  # neurons of each encoder
    # --- optimisation (Sec. 6) ---
    n_epochs: int = 200  # full-batch gradient-descent steps
    lr: float = 0.01  # step eta (paper_fulltext.md, Sec. 6)
    # --- signal and noise (Sec. 6) ---
    mu_norm: float = 5.0  # ||mu||, mu = 5 e1
    mu_tilde_norm: float = 15.0  # ||mu~||, mu~ = 15 e2, so C_mu = 3
    nu_norm: float = 2.0  # ||nu||, nu = 2 e1 (OOD signal)
    nu_cos: float = 1.0  # cos(nu, mu): nu = nu_norm (nu_cos e1 + sqrt(1 - nu_cos^2) e2); 1 = the paper's (ours to vary)
    sigma_xi: float = 1.0  # std of the noise patch xi (and of the OOD noise zeta)
    sigma_xi_tilde: float = 1.0  # std of the noise patch xi~ of modality 2
    sigma_eps: float = 0.1  # std of the augmentation noise eps, i.e. N(0, 0.01 I)
    # --- not given by the paper: ours ---
    tau: float = 0.1  # temperature of both InfoNCE losses (ours)
    sigma0: float = 0.01  # std of the initial weights w_r(0), w~_r(0) (ours)
    M: int = 45  # hard negatives per anchor, all of opposite label (ours; proofs take M ~ n/2)
    balanced: bool = True  # exactly n/2 labels of each sign, so that M <= n/2 always fits (ours)

    def __post_init__(self) -> None:
        for name in ("d", "d_tilde", "n", "n_test", "n_heldout", "m", "n_epochs", "M"):
            check_int(f"SyntheticConfig.{name}", getattr(self, name))
        for name in ("lr", "mu_norm", "mu_tilde_norm", "nu_norm", "sigma_xi", "sigma_xi_tilde",
                     "sigma_eps", "tau", "sigma0"):
            check_number(f"SyntheticConfig.{name}", getattr(self, name), low=0)
        check_number("SyntheticConfig.nu_cos", self.nu_cos, -1, 1, low_closed=True, high_closed=True)
        check_bool("SyntheticConfig.balanced", self.balanced)
        if self.d < 2 or self.d_tilde < 2:
            raise ValueError(
                f"SyntheticConfig.d and d_tilde must be >= 2 (mu~ lies along e2), got d={self.d}, "
                f"d_tilde={self.d_tilde}")
        if self.balanced:
            if self.n % 2:
                raise ValueError(f"SyntheticConfig.n must be even when balanced=True, got {self.n}")
            if self.M > self.n // 2:
                raise ValueError(
                    f"SyntheticConfig.M={self.M} exceeds the opposite-label pool n/2={self.n // 2}; "
                    f"valid: 1 <= M <= {self.n // 2}")
        elif self.M > self.n - 1:
            raise ValueError(f"SyntheticConfig.M={self.M} must be <= n-1={self.n - 1}")

    @property
    def snr(self) -> float:
        """SNR = ||mu|| / (sigma_xi sqrt(d)) (Sec. 3)."""
        return self.mu_norm / (self.sigma_xi * self.d ** 0.5)

    @property
    def n_snr2(self) -> float:
        """n SNR^2, the quantity Assumption 4.1(6) bounds."""
        return self.n * self.snr ** 2

    @property
    def init_noise(self) -> float:
        """``sigma0 sigma_xi sqrt(d)``: the typical size of an initial noise preactivation
        ``<w_r(0), xi_i>``, which Assumption 4.1(3) bounds by ``O~(1)``."""
        return self.sigma0 * self.sigma_xi * math.sqrt(self.d)

    @property
    def nu_sin(self) -> float:
        """``sqrt(1 - nu_cos^2)``: the share of ``nu`` along the direction orthogonal to ``mu``
        (e2 of modality 1), exactly 0 at the default ``nu_cos = 1``."""
        return math.sqrt(1.0 - self.nu_cos * self.nu_cos)

    @property
    def nu_mu(self) -> float:
        """``<nu, mu> = ||nu|| ||mu|| nu_cos`` (10 at Figure 1's ``nu = 2 e1``, ``mu = 5 e1``)."""
        return self.nu_norm * self.mu_norm * self.nu_cos

    @property
    def nu_condition(self) -> float:
        """``|<nu, mu>| / (||mu||^2 / sqrt(d))``: the ratio that the OOD signal's condition of
        Sec. 3.3, ``<nu, mu> = O(||mu||^2 d^(-1/2))``, asks to stay of order 1 (at most a constant,
        as ``d`` grows).  At Figure 1's settings it is ``10 / 0.559 = 17.9``; ``nu_cos`` at most
        ``||mu|| / (||nu|| sqrt(d))`` brings it to 1 or below."""
        return abs(self.nu_mu) / (self.mu_norm ** 2 / math.sqrt(self.d))

    @property
    def c_mu(self) -> float:
        """C_mu = ||mu~|| / ||mu|| (Assumption 4.1(7))."""
        return self.mu_tilde_norm / self.mu_norm

    def replace(self, **changes) -> "SyntheticConfig":
        """A copy with some fields changed (validated again); unknown names raise ValueError."""
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise ValueError(f"unknown SyntheticConfig field(s) {unknown}; valid: {sorted(names)}")
        return dataclasses.replace(self, **changes)

    def second_modality_noise(self) -> "SyntheticConfig":
        """A copy whose noise is the second modality's (``d = d~``, ``sigma_xi = sigma_xi~``): the
        noise rates of the second network are the first network's formulas evaluated on it."""
        return self.replace(d=self.d_tilde, sigma_xi=self.sigma_xi_tilde)


def check_config(cfg, name: str = "cfg") -> SyntheticConfig:
    """``cfg`` if it is a :class:`SyntheticConfig`, else a ValueError naming the parameter and the
    type it got: the one argument check of every function that takes a configuration."""
    if not isinstance(cfg, SyntheticConfig):
        raise ValueError(f"{name} must be a SyntheticConfig, got {type(cfg).__name__}")
    return cfg
