"""Inside the theorems' regime: scalings in which Assumption 4.1 holds as ``n`` grows, a sweep over
``n`` with span draws, the paper's asymptotic claims measured with fitted log-log slopes, and the
verdicts of the stage chapters re-taken there (the book's chapter
:ref:`Inside the theorems' regime <sec-theorems-regime>`).

One module per idea; every public name is importable from (and documented under) this package:

* ``scalings`` -- the scalings (:class:`RegimeScaling`, :func:`regime_config`,
  :func:`regime_dimension`, :func:`b2_dimension`) and Assumption 4.1 along them
  (:func:`conditions_by_n`, :func:`failing_by_n`, :func:`n_threshold`);
* ``sweep`` -- the sweep over ``n`` (:func:`run_regime_sweep`, :class:`RegimeSweep`,
  :class:`RegimeSize`, ``QUANTITIES``);
* ``verdicts`` -- the stage chapters' verdicts re-taken (:func:`revisit_verdicts`,
  :class:`SizeVerdicts`, :func:`stage_slice`);
* ``decisive`` -- the decisive runs (the chapter "The decisive runs"): the scaling with ``d`` at
  Lemma B.2's bound and Sec. 3.3's ``nu`` (:func:`decisive_config`, ``DECISIVE_SCALING``,
  ``SEC33_RATIO``, ``N_DECISIVE``, :func:`parallel_ood`), the conditions (:func:`decisive_conditions`,
  :func:`mode_premises`), the runs (:func:`run_decisive`, :class:`DecisiveRun`, :class:`ModeResult`,
  :func:`run_decisive_sweep`, :class:`DecisiveSweep`, :func:`error_trend`, :class:`ErrorTrend`) and
  App. C.2/D.2 re-taken (:func:`decisive_chains`, :class:`DecisiveChains`);
* ``chapter`` -- the chapter's experiment: its sizes (:func:`sizes`, :class:`RegimeSizes`,
  ``BY_SIZE``), its scalings (``SCALING``, ``CONTROL_SCALING``) and its cached runs
  (:func:`regime_conditions`, :func:`regime_sweep`, :func:`regime_control`,
  :func:`regime_verdicts`).

The log-log fits with the slope's standard error and a bootstrap over seeds
(:func:`mmcl.fits.loglog_fit`, :class:`mmcl.fits.LogLogFit`) are importable from here too.

Computation only: the chapter's figures are drawn by :mod:`mmcl.figures.theorems_regime`.

Public: every name re-exported here; the modules' leading-underscore names are internal.
"""
from __future__ import annotations

from mmcl.experiments.theorems_regime.chapter import (BY_SIZE, CONTROL_SCALING, SCALING, RegimeSizes, regime_conditions,
                                                      regime_control, regime_sweep, regime_verdicts, sizes)
from mmcl.experiments.theorems_regime.decisive import (DECISIVE_SCALING, N_DECISIVE, NUS, SEC33_RATIO, DecisiveChains,
                                                       DecisiveRun, DecisiveSweep, ErrorTrend, ModeResult,
                                                       decisive_chains, decisive_conditions, decisive_config,
                                                       error_trend, mode_premises, parallel_ood, run_decisive,
                                                       run_decisive_sweep)
from mmcl.fits import LogLogFit, loglog_fit  # noqa: F401 (the chapter's fits, documented in mmcl.fits)
from mmcl.experiments.theorems_regime.scalings import (D_MAX, RegimeScaling, b2_dimension, conditions_by_n,
                                                       failing_by_n, n_threshold, regime_config, regime_dimension)
from mmcl.experiments.theorems_regime.sweep import MODES, QUANTITIES, RegimeSize, RegimeSweep, run_regime_sweep
from mmcl.experiments.theorems_regime.verdicts import SizeVerdicts, revisit_verdicts, stage_slice

__all__ = ["RegimeScaling", "regime_dimension", "b2_dimension", "regime_config", "conditions_by_n",
           "failing_by_n", "n_threshold", "D_MAX", "MODES", "RegimeSize", "RegimeSweep",
           "run_regime_sweep", "QUANTITIES", "SizeVerdicts", "revisit_verdicts", "stage_slice",
           "RegimeSizes", "BY_SIZE", "sizes", "SCALING", "CONTROL_SCALING", "regime_conditions", "regime_sweep",
           "regime_control", "regime_verdicts", "DECISIVE_SCALING", "SEC33_RATIO", "NUS", "N_DECISIVE",
           "decisive_config", "parallel_ood", "decisive_conditions", "mode_premises", "ModeResult", "DecisiveRun",
           "run_decisive", "DecisiveSweep", "run_decisive_sweep", "error_trend", "ErrorTrend", "DecisiveChains",
           "decisive_chains"]
