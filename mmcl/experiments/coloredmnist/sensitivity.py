"""How the ColoredMNIST gap depends on the training settings: one-at-a-time departures from the defaults.

:data:`SENSITIVITY` names each change; :func:`run_sensitivity` reruns
:func:`~mmcl.experiments.coloredmnist.table1.run_table1` for the runs of the main comparison under
each; :func:`~mmcl.experiments.coloredmnist.tables.format_sensitivity` tabulates the test accuracies.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, Optional, Sequence

from mmcl.experiments.coloredmnist.data import ColoredMNISTConfig
from mmcl.experiments.coloredmnist.table1 import Table1Result, run_table1
from mmcl.experiments.coloredmnist.train import TrainConfig

__all__ = ["SENSITIVITY", "run_sensitivity"]

#: One-at-a-time departures from the defaults, by name, each a dict with keys ``"data"``
#: (ColoredMNISTConfig fields) and ``"train"`` (TrainConfig fields);
#: :func:`run_sensitivity` reruns the main comparison under each.
SENSITIVITY: Dict[str, Dict[str, dict]] = {
    "default": {},
    "epochs=3": {"train": {"epochs": 3}},
    "epochs=20": {"train": {"epochs": 20}},
    "image_size=28": {"data": {"image_size": 28}},
    "tau_single=0.5": {"train": {"temperature_single": 0.5}},
    "tau_multi=0.5": {"train": {"temperature_multi": 0.5}},
    "feature_dim=256": {"train": {"feature_dim": 256}},
    "p_own_colour=0.5": {"data": {"p_own_colour": 0.5}},
}


def run_sensitivity(seeds: Sequence[int] = (0,), settings: Optional[Dict[str, Dict[str, dict]]] = None,
                    runs: Sequence[str] = ("multi", "single_crop_flip"), *,
                    data_cfg: ColoredMNISTConfig = ColoredMNISTConfig(), train_cfg: TrainConfig = TrainConfig(),
                    **kwargs) -> Dict[str, Table1Result]:
    """:func:`~mmcl.experiments.coloredmnist.table1.run_table1` of ``runs`` under each entry of
    ``settings`` (default :data:`SENSITIVITY`): ``{"data": {...}, "train": {...}}`` replaces fields
    of ``data_cfg`` / ``train_cfg``."""
    settings = SENSITIVITY if settings is None else settings
    if not isinstance(settings, dict) or not settings:
        raise ValueError(f"settings must be a non-empty dict of name -> change, got {settings!r}")
    out = {}
    for name, change in settings.items():
        if not isinstance(change, dict):
            raise ValueError(f"settings[{name!r}] must be a dict with keys 'data' and/or 'train', got {change!r}")
        bad = set(change) - {"data", "train"}
        if bad:
            raise ValueError(f"settings[{name!r}] has keys {sorted(bad)}; valid: 'data', 'train'")
        out[name] = run_table1(seeds, runs, data_cfg=replace(data_cfg, **change.get("data", {})),
                               train_cfg=replace(train_cfg, **change.get("train", {})), **kwargs)
    return out
