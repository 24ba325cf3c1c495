"""The record of a run (:class:`Trajectory`), the parts of one step (:class:`UpdateTerms`), and the
error a diverging run raises.  Shared by every engine of :mod:`mmcl.dynamics`."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

import torch

__all__ = ["Trajectory", "UpdateTerms", "DivergenceError", "MODES", "ENGINES", "check_mode"]

MODES = ("single", "multi")
ENGINES = ("gd", "recursion", "autograd")


def check_mode(mode: str, engine: str = None) -> None:
    """A ValueError naming ``mode`` (or ``engine``) unless it is one of ``MODES`` (``ENGINES``)."""
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} is unknown; valid: {', '.join(map(repr, MODES))}")
    if engine is not None and engine not in ENGINES:
        raise ValueError(f"engine={engine!r} is unknown; valid: {', '.join(map(repr, ENGINES))}")


class DivergenceError(FloatingPointError):
    """Raised when the loss or the coefficients stop being finite during a run."""


@dataclass
class Trajectory:
    """A run of :func:`~mmcl.dynamics.engines.simulate`.  Shapes are for one draw; a batched run adds a leading ``B``.

    ``steps (K,)`` are the recorded steps (every step by default, so ``K = T + 1``):

    * ``loss (T+1,)`` -- the training loss at every step ``0..T``;
    * ``gamma (K, m)``, ``rho (K, m, n)`` -- signal learning and noise memorisation of Eq. (11);
    * ``gamma_tilde``, ``rho_tilde`` -- the same for the second network (multi mode), else None;
    * ``lprime (K, n)``, ``lprime_neg (K, n, M)`` -- the loss derivatives of Eq. (8) (positive and
      negatives' softmax weights), ``lprime_tilde``/``lprime_tilde_neg`` for the second network,
      when ``record_derivatives=True``;
    * ``W (m, d)``, ``W_tilde`` -- final weights (``gd`` and ``autograd`` only), and
      ``weights (K, m, d)``/``weights_tilde`` when ``keep_weights=True``;
    * ``t1_steps (S,)``, ``t1_stat (S,)`` -- with ``simulate(..., t1_every=k)``, the statistic whose
      crossing :func:`mmcl.proofs.predictions.measured_t1` finds, at every ``k``-th step and the last, whatever
      ``record_every``: ``min_i max_r rho_{r,i}`` (single mode) or ``max_r gamma_r`` (multi mode).
    """

    mode: str
    engine: str
    steps: torch.Tensor
    loss: torch.Tensor
    gamma: torch.Tensor
    rho: torch.Tensor
    gamma_tilde: Optional[torch.Tensor] = None
    rho_tilde: Optional[torch.Tensor] = None
    lprime: Optional[torch.Tensor] = None
    lprime_neg: Optional[torch.Tensor] = None
    lprime_tilde: Optional[torch.Tensor] = None
    lprime_tilde_neg: Optional[torch.Tensor] = None
    W: Optional[torch.Tensor] = None
    W_tilde: Optional[torch.Tensor] = None
    weights: Optional[torch.Tensor] = None
    weights_tilde: Optional[torch.Tensor] = None
    lr: Optional[torch.Tensor] = None
    tau: Optional[torch.Tensor] = None
    t1_steps: Optional[torch.Tensor] = None
    t1_stat: Optional[torch.Tensor] = None

    @property
    def n_steps(self) -> int:
        return self.loss.shape[-1] - 1

    _PER_RECORD = ("gamma", "rho", "gamma_tilde", "rho_tilde", "lprime", "lprime_neg", "lprime_tilde",
                   "lprime_tilde_neg", "weights", "weights_tilde")

    def check_data(self, data) -> bool:
        """That this run was made from ``data`` (a ``SyntheticData``): both batched or both not, and the
        same ``m`` and ``n``; returns whether the run is batched.  A ValueError says what differs.
        The one consistency check of every function that takes a run and its data."""
        batched = self.gamma.dim() == 3
        if batched != data.batched:
            raise ValueError(f"traj and data must both be batched or both unbatched (traj is "
                             f"{'batched' if batched else 'unbatched'}, data is "
                             f"{'batched' if data.batched else 'unbatched'}: pass the run's own data)")
        if self.rho.shape[-1] != data.n or self.gamma.shape[-1] != data.m:
            raise ValueError(f"traj has m={self.gamma.shape[-1]}, n={self.rho.shape[-1]} but data has "
                             f"m={data.m}, n={data.n} (pass the run's own data)")
        return batched

    def records(self, start: int, stop: Optional[int] = None) -> "Trajectory":
        """The same run narrowed to its recorded states ``start <= k < stop`` (indices into
        ``steps``; ``stop`` default: the end): every per-record field and ``steps`` narrowed,
        ``loss`` kept whole (functions index it by step).  The one way to slice a run:
        :meth:`last`, :meth:`between` and the stage-2 chains use it."""
        K = self.steps.shape[0]
        stop = K if stop is None else stop
        if not (isinstance(start, int) and isinstance(stop, int) and 0 <= start < stop <= K):
            raise ValueError(f"records({start!r}, {stop!r}): need 0 <= start < stop <= {K} (the recorded states)")
        axis = 1 if self.loss.dim() == 2 else 0
        fields = {name: (None if getattr(self, name) is None else getattr(self, name).narrow(axis, start, stop - start))
                  for name in self._PER_RECORD}
        return dataclasses.replace(self, steps=self.steps[start:stop], **fields)

    def between(self, start: int, stop: Optional[int] = None) -> "Trajectory":
        """The part of the run recorded at steps ``start <= step <= stop`` (``stop``: the end), by
        :meth:`records`; a ValueError when fewer than 2 recorded steps fall inside."""
        steps = self.steps
        stop = int(steps[-1]) if stop is None else stop
        sel = ((steps >= start) & (steps <= stop)).nonzero()[:, 0]
        if sel.numel() < 2:
            raise ValueError(f"fewer than 2 recorded steps in [{start}, {stop}]")
        return self.records(int(sel[0]), int(sel[-1]) + 1)

    def last(self) -> "Trajectory":
        """The same run reduced to its final recorded step (``K = 1``); ``loss`` stays whole.
        Used to score only the end of training with :func:`mmcl.downstream.evaluation.evaluate_all`."""
        return self.records(self.steps.shape[0] - 1)


@dataclass
class UpdateTerms:
    """One step of Lemma 5.1/5.3 at a given state, split into its parts (batched shapes).

    ``dgamma_pos``/``dgamma_neg (B, m)``: the positive and negative terms of the gamma update
    (Eq. 12), so that ``gamma(t+1) = gamma(t) + dgamma_pos - dgamma_neg``; ``drho (B, m, n)``:
    the rho update (Eq. 13); ``loss (B,)``; ``lprime (B, n)``, ``lprime_neg (B, n, M)``.
    The ``*_tilde`` fields are the second network's (multi mode), else None.
    """

    loss: torch.Tensor
    lprime: torch.Tensor
    lprime_neg: torch.Tensor
    dgamma_pos: torch.Tensor
    dgamma_neg: torch.Tensor
    drho: torch.Tensor
    lprime_tilde: Optional[torch.Tensor] = None
    lprime_tilde_neg: Optional[torch.Tensor] = None
    dgamma_pos_tilde: Optional[torch.Tensor] = None
    dgamma_neg_tilde: Optional[torch.Tensor] = None
    drho_tilde: Optional[torch.Tensor] = None
