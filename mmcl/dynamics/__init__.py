"""Gradient descent on the InfoNCE losses and the coefficient recursions (Sec. 3, Sec. 5).

One entry point, :func:`~mmcl.dynamics.engines.simulate`, three engines that must agree:

* ``"gd"`` -- the closed-form updates of Eq. (7) (single-modal) and Eq. (10) (multi-modal) on
  the weight matrices ``W (m, d)``; the coefficients ``gamma``/``rho`` are the components of
  each update along ``mu`` and the ``xi_i`` (Eq. 11).
* ``"autograd"`` -- ``loss.backward()`` on Eqs. (6)/(9) (:mod:`mmcl.model.losses`) with ``detach()``
  as the stop-gradient; ``gamma``/``rho`` by :func:`mmcl.model.decomposition.decompose`.
* ``"recursion"`` -- Lemma 5.1 (single) and Lemma 5.3 (multi): the coefficients alone, on Gram
  matrices, never forming ``W``: every inner product the updates need is linear in the
  coefficients, so a step costs ``O(m n^2)`` instead of ``O(m n d)``.

All engines accept a batch of draws (a leading ``B`` in :class:`~mmcl.model.data.SyntheticData`) and
run it as one tensor computation.

Public: ``simulate``, ``Trajectory``, ``update_terms``, ``preactivations`` and every name in a
module's ``__all__``; ``kernel`` and ``grams`` are internal (the fast path, tested equal to
``reference``).
"""
from mmcl.dynamics.trajectory import ENGINES, MODES, DivergenceError, Trajectory, UpdateTerms
from mmcl.dynamics.forward import preactivations
from mmcl.dynamics.engines import simulate
from mmcl.dynamics.reference import update_terms

__all__ = ["Trajectory", "UpdateTerms", "DivergenceError", "simulate", "update_terms", "preactivations",
           "MODES", "ENGINES"]
