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
* ``chapter`` -- the chapter's experiment: its sizes (:func:`sizes`, :class:`RegimeSizes`,
  ``BY_SIZE``), its scalings (``SCALING``, ``CONTROL_SCALING``) and its cached runs
  (:func:`regime_conditions`, :func:`regime_sweep`, :func:`regime_control`,
  :func:`regime_verdicts`).

The log-log fits with the slope's standard error and a bootstrap over seeds
(:func:`mmcl.fits.loglog_fit`, :class:`mmcl.fits.LogLogFit`) are importable from here too.

The decisive runs (``d`` at Lemma B.2's bound, Sec. 3.3's ``nu``) are the package
:mod:`mmcl.experiments.decisive_runs`; their names stay importable from here (``DecisiveRun``,
``run_decisive``, ...), loaded on first use.

Computation only: the chapter's figures are drawn by :mod:`mmcl.figures.theorems_regime`.

Public: every name re-exported here; the modules' leading-underscore names are internal.
"""
from __future__ import annotations

from mmcl.experiments.theorems_regime.chapter import (BY_SIZE, CONTROL_SCALING, SCALING, RegimeSizes, regime_conditions,
                                                      regime_control, regime_sweep, regime_verdicts, sizes)
from mmcl.fits import LogLogFit, loglog_fit  # noqa: F401 (the chapter's fits, documented in mmcl.fits)
from mmcl.experiments.theorems_regime.scalings import (D_MAX, RegimeScaling, b2_dimension, conditions_by_n,
                                                       failing_by_n, n_threshold, regime_config, regime_dimension)
from mmcl.experiments.theorems_regime.sweep import MODES, QUANTITIES, RegimeSize, RegimeSweep, run_regime_sweep
from mmcl.experiments.theorems_regime.verdicts import SizeVerdicts, revisit_verdicts, stage_slice

__all__ = ["RegimeScaling", "regime_dimension", "b2_dimension", "regime_config", "conditions_by_n",
           "failing_by_n", "n_threshold", "D_MAX", "MODES", "RegimeSize", "RegimeSweep",
           "run_regime_sweep", "QUANTITIES", "SizeVerdicts", "revisit_verdicts", "stage_slice",
           "RegimeSizes", "BY_SIZE", "sizes", "SCALING", "CONTROL_SCALING", "regime_conditions", "regime_sweep",
           "regime_control", "regime_verdicts"]

#: The names of the decisive runs once defined here, now in :mod:`mmcl.experiments.decisive_runs.runs`.
_MOVED = ("DECISIVE_SCALING", "SEC33_RATIO", "NUS", "N_DECISIVE", "decisive_config", "parallel_ood",
          "decisive_conditions", "mode_premises", "ModeResult", "DecisiveRun", "run_decisive", "DecisiveSweep",
          "run_decisive_sweep", "error_trend", "ErrorTrend", "DecisiveChains", "decisive_chains")


def __getattr__(name: str):
    """The decisive runs' names, from their package (on first use: that package builds on this one)."""
    if name in _MOVED:
        from mmcl.experiments.decisive_runs import runs

        return getattr(runs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
