"""ColoredMNIST: the paper's real-data experiment (Sec. 6, Table 1), with every choice a setting.

Modules: ``data`` (IDX reader, shipped digits, the seeded coloured dataset), ``augment``
(SimCLR's augmentations in plain torch), ``models`` (CNN backbone, heads, ideal caption
encoder), ``losses`` (NT-Xent, multi-positive InfoNCE), ``train``, ``evaluate``
(linear probes, zero-shot, references), ``experiment`` (all variants over seeds, cached,
figures) and ``cli`` (``mmcl coloredmnist``).
"""
from mmcl.experiments.coloredmnist.augment import AugmentConfig
from mmcl.experiments.coloredmnist.data import (PALETTE, PALETTE_NAMES, ColoredMNIST, ColoredMNISTConfig, Split, load_mnist, load_mnist_idx,
                   make_colored_mnist, read_idx)
from mmcl.experiments.coloredmnist.evaluate import LinearProbe, feature_probes, features, fit_probe, zero_shot_predict
from mmcl.experiments.coloredmnist.experiment import (ABLATIONS, PAPER, RUNS, VARIANTS, RunResult, Table1Result, format_table, plot_feature_probes,
                         plot_samples, plot_table1, run_one, run_table1)
from mmcl.experiments.coloredmnist.train import TrainConfig, TrainedModel, train_model

__all__ = ["AugmentConfig", "PALETTE", "PALETTE_NAMES", "ColoredMNIST", "ColoredMNISTConfig", "Split",
           "load_mnist", "load_mnist_idx", "make_colored_mnist", "read_idx", "LinearProbe", "feature_probes",
           "features", "fit_probe", "zero_shot_predict", "ABLATIONS", "PAPER", "RUNS", "VARIANTS", "RunResult",
           "Table1Result", "format_table", "plot_feature_probes", "plot_samples", "plot_table1", "run_one",
           "run_table1", "TrainConfig", "TrainedModel", "train_model"]
