"""The preactivations and sign sets that every stage of the proofs tracks (Sec. 5.1, 5.2).

Shared by the stage modules (:mod:`~mmcl.proofs.single_stage1`, :mod:`~mmcl.proofs.single_stage2`,
:mod:`~mmcl.proofs.multi_stage1`, :mod:`~mmcl.proofs.multi_stage2`), which import from here:

* :func:`preactivation_history` -- ``<w_r(t), mu>``, ``<w_r(t), xi_i>`` (and ``<w_r(t), xi_i + eps_i>``)
  at every recorded step, from the coefficients of Eq. (11);
* :func:`sign_sets` -- ``U_+(t) = {r : <w_r(t), mu> > 0}``, ``U_-(t)``, and the noise index sets
  ``I_{r,+}(t) = {i : <w_r(t), xi_i> > 0}``, ``I_{r,-}(t)`` (Sec. 5.1; Lemmas C.3 and C.7 claim they
  never change); :func:`count_changes`, :func:`ever_changed` to test that claim;
  :func:`signal_sign_agreement` for the two networks of the multi-modal model (Sec. 5.2);
* :func:`without_cross_terms` -- a copy of a draw with the noise vectors made orthogonal to each
  other and to ``mu`` (norms kept): the idealisation under which the appendix's cross terms
  ``<xi_i, xi_k>``, ``<xi_i, mu>`` vanish, to separate finite-``d`` effects from the lemmas' logic;
* :func:`check_run`, :func:`time_first`, :func:`batch_first` -- the argument check and the axis
  moves the stage modules share.

Shapes: for one draw, quantities over time carry ``K`` (the recorded steps) first; a batched
trajectory adds a leading ``B``.  ``tilde=True`` uses the second network of a multi-modal run.
Public: every name in ``__all__``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch

from mmcl.dynamics import Trajectory, preactivations
from mmcl.model.data import SyntheticData

__all__ = ["check_run", "time_first", "batch_first", "without_cross_terms", "PreactivationHistory",
           "preactivation_history", "SignSets", "sign_sets", "count_changes", "ever_changed",
           "signal_sign_agreement"]


# --------------------------------------------------------------------------------------------
# Argument handling
# --------------------------------------------------------------------------------------------
def check_run(traj: Trajectory, data: SyntheticData, tilde: bool):
    """``(gamma, rho, batched)`` of ``traj`` (the second network's with ``tilde=True``), after
    checking that ``traj`` was made from ``data``; a ValueError names what does not match."""
    if not isinstance(traj, Trajectory):
        raise ValueError(f"traj must be a Trajectory, got {type(traj).__name__}")
    if not isinstance(data, SyntheticData):
        raise ValueError(f"data must be a SyntheticData, got {type(data).__name__}")
    if tilde and (traj.gamma_tilde is None or not data.has_tilde):
        raise ValueError("tilde=True needs a multi-modal trajectory (gamma_tilde, rho_tilde) and data with "
                         "the second modality")
    gamma = traj.gamma_tilde if tilde else traj.gamma
    rho = traj.rho_tilde if tilde else traj.rho
    return gamma, rho, traj.check_data(data)


def time_first(x: torch.Tensor, batched: bool) -> torch.Tensor:
    """(B, K, ...) -> (K, B, ...) so that time precedes the batch dims of ``data``."""
    return x.transpose(0, 1) if batched else x


def batch_first(x: torch.Tensor, batched: bool) -> torch.Tensor:
    """(K, B, ...) -> (B, K, ...): the inverse of :func:`time_first`."""
    return x.transpose(0, 1) if batched else x


def without_cross_terms(data: SyntheticData) -> SyntheticData:
    """A copy of ``data`` whose noise vectors ``xi_i (n, d)`` are replaced by orthogonal ones of the
    same norms, all orthogonal to ``mu`` (Gram-Schmidt, in float64, of ``[mu, xi_1, ..., xi_n]``, in
    that order, so each ``xi_i`` keeps its component outside ``span{mu, xi_1..xi_{i-1}}``).  The
    appendix bounds ``|<xi_i, xi_k>|/||xi_k||^2`` and ``|<xi_i, mu>|/||xi_i||^2`` by ``O~(d^{-1/2})``
    and then treats them as negligible; on this copy they are exactly 0, so e.g. Lemmas C.3 and C.7
    must hold exactly.  Everything else (labels, eps, negatives, W0, the second modality, OOD set)
    is kept.  Needs ``n + 1 <= d``; batched data is handled draw by draw."""
    if not isinstance(data, SyntheticData):
        raise ValueError(f"data must be a SyntheticData, got {type(data).__name__}")
    if data.n + 1 > data.width:
        raise ValueError(f"without_cross_terms needs n + 1 <= d, got n={data.n} and tensors of width {data.width}")
    if data.batched:
        return SyntheticData.stack([without_cross_terms(data[b]) for b in range(data.batch_size)])
    f64 = torch.float64
    A = torch.cat([data.mu[None], data.xi], 0).to(f64).T  # (d, n+1)
    Qm, R = torch.linalg.qr(A)  # A = Q R, column k of Q spans the new direction of column k
    norms = data.xi.to(f64).norm(dim=-1)  # (n,)
    sign = torch.sign(torch.diagonal(R)[1:])
    sign = torch.where(sign == 0, torch.ones_like(sign), sign)
    xi = (Qm[:, 1:] * (sign * norms)).T.to(data.dtype)  # (n, d)
    fields = {name: getattr(data, name) for name in SyntheticData._SPEC}
    fields["xi"] = xi
    return SyntheticData(**fields, ood=data.ood, **data._nominal())


# --------------------------------------------------------------------------------------------
# Preactivations and sign sets
# --------------------------------------------------------------------------------------------
@dataclass
class PreactivationHistory:
    """Inner products of the weights with the training vectors at every recorded step.

    ``steps (K,)``; ``signal (..., K, m)`` = ``<w_r(t), mu>``; ``noise (..., K, m, n)`` =
    ``<w_r(t), xi_i>``; ``noise_aug (..., K, m, n)`` = ``<w_r(t), xi_i + eps_i>`` (single modality
    only, when asked for, else None); ``tilde`` tells which network.  ``...`` is the batch ``B``
    of a batched run (absent for one draw).
    """

    steps: torch.Tensor
    signal: torch.Tensor
    noise: torch.Tensor
    noise_aug: Optional[torch.Tensor] = None
    tilde: bool = False


def preactivation_history(traj: Trajectory, data: SyntheticData, *, tilde: bool = False,
                          with_augmented: bool = False) -> PreactivationHistory:
    """``<w_r(t), mu>`` and ``<w_r(t), xi_i>`` along ``traj`` from the coefficients of Eq. (11),
    via :func:`mmcl.dynamics.forward.preactivations` (exact for every engine).

    ``with_augmented=True`` adds ``<w_r(t), xi_i + eps_i>`` (the augmented positive's noise patch,
    Eq. 5), which only exists for the first modality.  Computed in the trajectory's dtype.
    """
    gamma, rho, batched = check_run(traj, data, tilde)
    if with_augmented and tilde:
        raise ValueError("with_augmented=True is for the first modality only (eps exists only there)")
    data = data.to(device=gamma.device, dtype=gamma.dtype)
    g, r = time_first(gamma, batched), time_first(rho, batched)
    mu, xi = (data.mu_tilde, data.xi_tilde) if tilde else (data.mu, data.xi)
    signal = preactivations(data, g, r, mu[..., None, :], tilde=tilde)[..., 0]  # (K, B.., m)
    noise = preactivations(data, g, r, xi, tilde=tilde)  # (K, B.., m, n)
    aug = preactivations(data, g, r, xi + data.eps) if with_augmented else None
    return PreactivationHistory(steps=traj.steps, signal=batch_first(signal, batched),
                                noise=batch_first(noise, batched),
                                noise_aug=None if aug is None else batch_first(aug, batched), tilde=tilde)


@dataclass
class SignSets:
    """The sign sets of Sec. 5.1 as boolean masks over the recorded steps.

    ``U_plus (..., K, m)``: ``r in U_+(t)``, i.e. ``<w_r(t), mu> > 0``; ``U_minus``: ``< 0``.
    ``I_plus (..., K, m, n)``: ``i in I_{r,+}(t)``, i.e. ``<w_r(t), xi_i> > 0``; ``I_minus``: ``< 0``.
    (An exact zero belongs to neither set.)  ``steps (K,)``.
    """

    steps: torch.Tensor
    U_plus: torch.Tensor
    U_minus: torch.Tensor
    I_plus: torch.Tensor
    I_minus: torch.Tensor


def sign_sets(traj: Trajectory, data: SyntheticData, *, tilde: bool = False,
              history: Optional[PreactivationHistory] = None) -> SignSets:
    """``U_+(t)``, ``U_-(t)`` and ``I_{r,+}(t)``, ``I_{r,-}(t)`` (Sec. 5.1, Lemmas C.3, C.7) at every
    recorded step.  Pass ``history`` (from :func:`preactivation_history`) to reuse it."""
    h = history if history is not None else preactivation_history(traj, data, tilde=tilde)
    return SignSets(steps=h.steps, U_plus=h.signal > 0, U_minus=h.signal < 0,
                    I_plus=h.noise > 0, I_minus=h.noise < 0)


def _check_mask(mask: torch.Tensor, time_dim: int) -> None:
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError("mask must be a boolean tensor (e.g. SignSets.U_plus)")
    if mask.dim() < 1 or not -mask.dim() <= time_dim < mask.dim():
        raise ValueError(f"time_dim={time_dim} is out of range for a mask of shape {tuple(mask.shape)}")


def count_changes(mask: torch.Tensor, time_dim: int) -> torch.Tensor:
    """How many entries of ``mask`` differ from their value at the first recorded step, at each
    step: ``mask (..., K, *E)`` with time at ``time_dim`` -> ``(..., K)`` int64 (the entries ``E``
    summed out).  Lemma C.3 (``U_+``, ``U_-``) and Lemma C.7 (``I_{r,-}``) say: all zeros.

    Use ``time_dim=-2`` for ``U_plus (..., K, m)`` and ``time_dim=-3`` for ``I_plus (..., K, m, n)``.
    """
    _check_mask(mask, time_dim)
    td = time_dim % mask.dim()
    first = mask.narrow(td, 0, 1)
    diff = mask != first
    return diff.flatten(td + 1).sum(-1) if td + 1 < mask.dim() else diff.to(torch.int64)


def ever_changed(mask: torch.Tensor, time_dim: int) -> torch.Tensor:
    """``(..., *E)`` bool: whether each entry of ``mask`` ever differs from its first recorded value
    (``time_dim`` as in :func:`count_changes`)."""
    _check_mask(mask, time_dim)
    td = time_dim % mask.dim()
    return (mask != mask.narrow(td, 0, 1)).any(td)


def signal_sign_agreement(traj: Trajectory, data: SyntheticData) -> torch.Tensor:
    """Multi-modal runs (Sec. 5.2): ``(..., K, m)`` bool, True where neuron ``r`` is *synchronised*,
    i.e. ``r in (U_+(t) & U~_+(t)) | (U_-(t) & U~_-(t))`` (``<w_r, mu>`` and ``<w~_r, mu~>`` share a
    strict sign)."""
    a = preactivation_history(traj, data).signal
    b = preactivation_history(traj, data, tilde=True).signal
    return ((a > 0) & (b > 0)) | ((a < 0) & (b < 0))
