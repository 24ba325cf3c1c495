"""mmcl: single-modal vs multi-modal contrastive learning, after Huang et al. (NeurIPS 2024).

The public API: :class:`SyntheticConfig`, :class:`SyntheticData`, :func:`sample_synthetic`,
:func:`simulate` and its :class:`Trajectory`, :func:`decompose`, the downstream :func:`evaluate`,
and the batched :func:`sweep` over grids of configurations.  ``sweep`` is loaded on first use, so
that ``import mmcl`` (and so every ``import mmcl.<module>``) loads the model, the dynamics and the
downstream evaluation only, never the experiments layer.
"""
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import OODData, SyntheticData, sample_ood, sample_synthetic
from mmcl.model.decomposition import Decomposition, decompose
from mmcl.dynamics import DivergenceError, Trajectory, UpdateTerms, preactivations, simulate, update_terms
from mmcl.downstream.evaluation import evaluate

__version__ = "0.1.0"

__all__ = ["SyntheticConfig", "SyntheticData", "OODData", "sample_synthetic", "sample_ood", "simulate",
           "Trajectory", "UpdateTerms", "update_terms", "preactivations", "DivergenceError", "decompose",
           "Decomposition", "evaluate", "sweep", "__version__"]


def __getattr__(name):
    """``mmcl.sweep``, the function of :mod:`mmcl.experiments.sweep`, imported when first asked for
    (the module stays importable as ``import mmcl.experiments.sweep``)."""
    if name == "sweep":
        from mmcl.experiments.sweep import sweep

        return sweep
    raise AttributeError(f"module 'mmcl' has no attribute {name!r}")
