"""The decisive runs: both theorems measured where every premise a computer can reach holds, with
the test distribution of Sec. 3.3 (the book's chapter :ref:`The decisive runs <sec-decisive-runs>`).

Modules: ``runs`` (the computation: the scaling with ``d`` at Lemma B.2's bound and Sec. 3.3's
``nu``, :func:`~mmcl.experiments.decisive_runs.decisive_config`; the conditions; the runs,
:func:`~mmcl.experiments.decisive_runs.run_decisive` and
:func:`~mmcl.experiments.decisive_runs.run_decisive_sweep`; the error trends; App. C.2/D.2
re-taken, :func:`~mmcl.experiments.decisive_runs.decisive_chains`) and ``chapter`` (the
chapter's sizes, :func:`~mmcl.experiments.decisive_runs.sizes`, its cached runs and the
tables it prints).  The scalings they build on are those of :mod:`mmcl.experiments.theorems_regime`;
the figures are drawn by :mod:`mmcl.figures.decisive_runs`, the command ``mmcl regime`` is
:mod:`mmcl.commands.regime`.

Public: every name re-exported here, importable from (and documented under) this package; the
modules' leading-underscore names are internal.
"""
from mmcl.experiments.decisive_runs.chapter import (BY_SIZE, PARTS_SHOWN, PREMISE_SIZES, DecisiveSizes, ablation_table,
                                                    chains_table, decisive_chains_by_n, decisive_point,
                                                    decisive_sweep, error_table, init_table, parts_table,
                                                    point_summary, premise_comparison, premises_by_n,
                                                    sec33_agreement, sizes)
from mmcl.experiments.decisive_runs.runs import (DECISIVE_SCALING, N_DECISIVE, NUS, SEC33_RATIO, DecisiveChains,
                                                 DecisiveRun, DecisiveSweep, ErrorTrend, ModeResult, decisive_chains,
                                                 decisive_conditions, decisive_config, error_trend, mode_premises,
                                                 parallel_ood, run_decisive, run_decisive_sweep)

__all__ = ["DECISIVE_SCALING", "SEC33_RATIO", "NUS", "N_DECISIVE", "decisive_config", "parallel_ood",
           "decisive_conditions", "mode_premises", "ModeResult", "DecisiveRun", "run_decisive", "DecisiveSweep",
           "run_decisive_sweep", "error_trend", "ErrorTrend", "DecisiveChains", "decisive_chains",
           "DecisiveSizes", "BY_SIZE", "sizes", "decisive_sweep", "decisive_chains_by_n", "decisive_point",
           "premises_by_n", "error_table", "point_summary", "parts_table", "ablation_table",
           "chains_table", "init_table", "PREMISE_SIZES", "PARTS_SHOWN", "premise_comparison", "sec33_agreement"]
