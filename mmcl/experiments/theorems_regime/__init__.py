"""Inside the theorems' regime: scalings in which Assumption 4.1 holds as ``n`` grows, a sweep over
``n`` with span draws, the paper's asymptotic claims measured with fitted log-log slopes, and the
verdicts of the stage chapters re-taken there (the book's chapter "Inside the theorems' regime",
``book/12_theorems_regime.md``).

One module per idea; every public name is importable from (and documented under) this package:

* ``scalings`` -- the scalings (:class:`RegimeScaling`, :func:`regime_config`,
  :func:`regime_dimension`, :func:`b2_dimension`) and Assumption 4.1 along them
  (:func:`conditions_by_n`, :func:`failing_by_n`, :func:`n_threshold`);
* ``fits`` -- log-log fits with the slope's standard error and a bootstrap over seeds
  (:func:`loglog_fit`, :class:`LogLogFit`);
* ``sweep`` -- the sweep over ``n`` (:func:`run_regime_sweep`, :class:`RegimeSweep`,
  :class:`RegimeSize`, ``QUANTITIES``);
* ``verdicts`` -- the stage chapters' verdicts re-taken (:func:`revisit_verdicts`,
  :class:`SizeVerdicts`, :func:`stage_slice`);
* ``chapter`` -- the chapter's experiment: its sizes (:func:`sizes`, :class:`RegimeSizes`,
  ``BY_SIZE``), its scalings (``SCALING``, ``CONTROL_SCALING``) and its cached runs
  (:func:`regime_conditions`, :func:`regime_sweep`, :func:`regime_control`,
  :func:`regime_verdicts`).

Computation only: the chapter's figures are drawn by :mod:`mmcl.figures.theorems_regime`.

Public: every name re-exported here; the modules' leading-underscore names are internal.
"""
from __future__ import annotations

from mmcl.experiments.theorems_regime.chapter import (BY_SIZE, CONTROL_SCALING, SCALING, RegimeSizes, regime_conditions,
                                                      regime_control, regime_sweep, regime_verdicts, sizes)
from mmcl.experiments.theorems_regime.fits import LogLogFit, loglog_fit
from mmcl.experiments.theorems_regime.scalings import (D_MAX, RegimeScaling, b2_dimension, conditions_by_n,
                                                       failing_by_n, n_threshold, regime_config, regime_dimension)
from mmcl.experiments.theorems_regime.sweep import MODES, QUANTITIES, RegimeSize, RegimeSweep, run_regime_sweep
from mmcl.experiments.theorems_regime.verdicts import SizeVerdicts, revisit_verdicts, stage_slice

__all__ = ["RegimeScaling", "regime_dimension", "b2_dimension", "regime_config", "conditions_by_n",
           "failing_by_n", "n_threshold", "D_MAX", "MODES", "LogLogFit", "loglog_fit", "RegimeSize", "RegimeSweep",
           "run_regime_sweep", "QUANTITIES", "SizeVerdicts", "revisit_verdicts", "stage_slice",
           "RegimeSizes", "BY_SIZE", "sizes", "SCALING", "CONTROL_SCALING", "regime_conditions", "regime_sweep",
           "regime_control", "regime_verdicts"]
