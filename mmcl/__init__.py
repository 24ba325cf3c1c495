"""mmcl: single-modal vs multi-modal contrastive learning, after Huang et al. (NeurIPS 2024).

The public API: :class:`SyntheticConfig`, :class:`SyntheticData`, :func:`sample_synthetic`,
:func:`simulate` and its :class:`Trajectory`, :func:`decompose`, and the downstream
:func:`evaluate`, and the batched :func:`sweep` over grids of configurations.
"""
from .config import SyntheticConfig
from .data import OODData, SyntheticData, sample_ood, sample_synthetic
from .decomposition import Decomposition, decompose
from .dynamics import DivergenceError, Trajectory, UpdateTerms, preactivations, simulate, update_terms
from .sweep import sweep  # the function; the module stays importable as `import mmcl.sweep`

__version__ = "0.1.0"

__all__ = ["SyntheticConfig", "SyntheticData", "OODData", "sample_synthetic", "sample_ood", "simulate",
           "Trajectory", "UpdateTerms", "update_terms", "preactivations", "DivergenceError", "decompose",
           "Decomposition", "sweep", "__version__"]
