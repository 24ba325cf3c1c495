"""Batched parameter sweeps over the synthetic model, and the phase diagrams drawn from them.

The paper (Sec. 6) shows one setting.  :func:`sweep` runs a grid of settings x seeds x modes on
top of :func:`mmcl.dynamics.engines.simulate` and returns a tidy :class:`SweepTable`, one row per run:

* the grid is a dict from parameter names to lists of values; its cartesian product is run.  A
  name is a :class:`~mmcl.model.config.SyntheticConfig` field or one of the *derived* parameters of
  :data:`~mmcl.experiments.sweep.grid.DERIVED` (``snr``, ``n_snr2``, ``c_mu``, ``nu_ratio``, ``neg_frac``, ``dim``,
  ``view_noise_scale``), which set config fields from the others (e.g. ``c_mu`` sets
  ``mu_tilde_norm = c_mu * mu_norm``), so that ``C_mu`` or ``n SNR^2`` can be held fixed while
  ``n`` or ``d`` move;
* runs whose tensors have equal shapes (``n, d, d~, m, M, n_epochs, n_test, n_heldout``) are
  grouped, and each group is cut into batches that :func:`mmcl.dynamics.engines.simulate` runs as *one* tensor
  computation with a leading batch dimension (``cfg`` may differ per batch element in everything
  that is not a shape);
* every run is cached on disk (:func:`mmcl.cache.load_or_compute`) under a hash of its full
  configuration, seed, mode, engine, precision and the code version, so a rerun is instant and a
  changed parameter reruns only the runs it changes;
* a grid is validated completely (names, empty lists, values the config rejects) before any
  run starts; errors name the parameter;
* ``client=`` (a ``dask.distributed.Client``, optional extra ``mmcl[dask]``) submits the batches
  to a cluster instead of running them here.

Draws.  Every run uses exactly the draw ``sample_synthetic(cfg, seed)`` (a test checks this bit
for bit), but draws are made by rescaling one *unit* draw per shape and seed
(:func:`make_draw`): every random tensor of the data model is a standard normal times a scale
(``xi = sigma_xi * g``, ``W0 = sigma0 * g``, ...), and the hard negatives for ``M`` are the first
``M`` of those for ``n/2``.  Sampling is the most expensive part of a small run, and a sweep over
``mu_norm``, ``sigma_eps``, ``tau``, ``C_mu``, ... then samples once per seed.

The rebuttal's "view of higher SNR".  ``view_noise_scale`` (lambda) gives single-modal learning a
positive whose noise patch is shrunk, ``x+ = [y mu, lambda (xi + eps)]``: its SNR is that of
``x`` divided by lambda.  ``lambda = 1`` is the paper's augmentation (Eq. 5); ``lambda < 1`` is a
partly denoised view (its noise patch shrunk towards zero, as a denoiser would), ``lambda = 0`` a
view with its noise removed.  It needs no change of the
dynamics: the positive's noise patch is ``xi + eps``, so the view is the draw with
``eps' = lambda (xi + eps) - xi`` (:func:`denoised_view`).  Multi-modal runs never use ``eps``.

Table columns: the grid's parameters, ``mode``, ``seed``, the derived ``snr``, ``n_snr2`` and
``c_mu`` of each run's config, then the results at the last step: ``loss`` (training loss,
Eq. 6 or 9), ``acc_<protocol>`` (OOD accuracy of :func:`mmcl.downstream.evaluation.evaluate_all`),
``max_gamma`` (``max_r gamma_r``), ``max_rho`` (``max_{r,i} rho_{r,i}``), with
``score_init=True`` also ``acc_<protocol>_init`` (the initial, untrained features), ``t1``
(:func:`mmcl.proofs.predictions.measured_t1`, first step at which stage 1 has ended, ``nan`` if never),
``t1_formula`` (:func:`mmcl.proofs.predictions.t1_formula`, Lemma 5.2 or 5.4) and ``diverged``.

Modules: ``options`` (:class:`SweepConfig`), ``table`` (:class:`SweepTable`), ``grid``
(:data:`~mmcl.experiments.sweep.grid.DERIVED`, :func:`expand_grid`), ``draws`` (:func:`make_draw`, :func:`denoised_view`),
``runner`` (:func:`sweep` and its cache glue), ``agreement`` (:func:`engine_agreement`),
``formulas`` (:func:`mu_norm_for_snr`, :func:`snr_on_curve`, :func:`gap_closed`), ``phase``
(:class:`PhaseGrid`, :func:`phase_grid`) and ``studies`` (the sweeps of the book's chapter "Phase
diagrams", per size); every public name is importable from (and documented under) this package.  The chapter runs them,
cached, through ``mmcl.experiments.phase_diagrams``; the drawings of the phase diagrams are in
``mmcl.figures.phase_diagrams``, the command ``mmcl sweep CONFIG.toml`` in ``mmcl.commands.sweep``.

Public: every name re-exported here; the modules' leading-underscore names are internal.
"""
from __future__ import annotations

from mmcl.experiments.sweep.agreement import engine_agreement
from mmcl.experiments.sweep.draws import denoised_view, make_draw
from mmcl.experiments.sweep.formulas import gap_closed, mu_norm_for_snr, snr_on_curve
from mmcl.experiments.sweep.grid import DERIVED, expand_grid, speed_grid
from mmcl.experiments.sweep.options import SweepConfig
from mmcl.experiments.sweep.phase import PhaseGrid, phase_grid
from mmcl.experiments.sweep.runner import sweep
from mmcl.experiments.sweep.table import SweepTable

__all__ = ["DERIVED", "SweepConfig", "SweepTable", "PhaseGrid", "sweep", "expand_grid", "make_draw",
           "denoised_view", "engine_agreement", "speed_grid", "phase_grid", "mu_norm_for_snr", "snr_on_curve", "gap_closed"]
