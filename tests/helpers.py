"""Helpers shared by the library's tests (imported as `from helpers import ...`; fixtures live in conftest.py)."""
import torch

import mmcl


def f64(cfg, seed=0):
    """A float64 draw of ``cfg``."""
    return mmcl.sample_synthetic(cfg, seed, dtype=torch.float64)
