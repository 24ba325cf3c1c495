"""Small formulas of the sweeps and of the book's chapter "Phase diagrams": the ``||mu||`` of an
SNR (Sec. 3), the SNR on a curve ``n SNR^2 = const`` (Assumption 4.1(6)), and the fraction of
the multi- vs single-modal gap that a view closes."""
from __future__ import annotations

import math
import numbers

__all__ = ["mu_norm_for_snr", "snr_on_curve", "gap_closed"]


def mu_norm_for_snr(snr: float, d: int, sigma_xi: float = 1.0) -> float:
    """``||mu||`` giving ``SNR = ||mu|| / (sigma_xi sqrt(d))`` (Sec. 3)."""
    return snr * sigma_xi * math.sqrt(d)


def snr_on_curve(n, n_snr2: float):
    """The SNR on the curve ``n SNR^2 = n_snr2`` of Assumption 4.1(6), for a number or a list of ``n``."""
    if isinstance(n, numbers.Real):
        return math.sqrt(n_snr2 / n)
    return [math.sqrt(n_snr2 / v) for v in n]


def gap_closed(acc_view: float, acc_single: float, acc_multi: float) -> float:
    """Fraction of the multi- vs single-modal accuracy gap that a view closes:
    ``(acc_view - acc_single) / (acc_multi - acc_single)`` (1 = closed, 0 = no help)."""
    den = acc_multi - acc_single
    if den == 0:
        return float("nan")
    return (acc_view - acc_single) / den
