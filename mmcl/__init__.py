"""mmcl: single-modal vs multi-modal contrastive learning, after Huang et al. (NeurIPS 2024).

The public API: :class:`SyntheticConfig`, :class:`SyntheticData`, :func:`sample_synthetic`,
:func:`simulate` and its :class:`Trajectory`, :func:`decompose`, and the downstream
:func:`evaluate`, and the batched :func:`sweep` over grids of configurations.
"""
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import OODData, SyntheticData, sample_ood, sample_synthetic
from mmcl.model.decomposition import Decomposition, decompose
from mmcl.dynamics import DivergenceError, Trajectory, UpdateTerms, preactivations, simulate, update_terms
from mmcl.experiments.sweep import sweep  # the function; the module stays importable as `import mmcl.experiments.sweep`

__version__ = "0.1.0"

__all__ = ["SyntheticConfig", "SyntheticData", "OODData", "sample_synthetic", "sample_ood", "simulate",
           "Trajectory", "UpdateTerms", "update_terms", "preactivations", "DivergenceError", "decompose",
           "Decomposition", "sweep", "__version__"]
