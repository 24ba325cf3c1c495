"""ColoredMNIST: the paper's real-data experiment (Sec. 6, Table 1), with every choice a setting.

Modules: ``data`` (IDX reader, shipped digits, the seeded coloured dataset), ``augment``
(SimCLR's augmentations in plain torch), ``models`` (CNN backbone, heads, ideal caption
encoder), ``losses`` (NT-Xent, multi-positive InfoNCE), ``train``, ``evaluate``
(linear probes, zero-shot, references), ``runs`` (the runs and variants of Table 1, one cached
run), ``table1`` (all runs over seeds, summarised), ``sensitivity`` (one-at-a-time changes of the
settings), ``tables`` (markdown and HTML tables) and ``chapter`` (the book chapter's sizes,
settings per size and cached runs: :func:`~mmcl.experiments.coloredmnist.chapter.sizes`, :func:`~mmcl.experiments.coloredmnist.chapter.data_config`, :func:`~mmcl.experiments.coloredmnist.chapter.train_config`,
:func:`~mmcl.experiments.coloredmnist.chapter.samples_data`, :func:`~mmcl.experiments.coloredmnist.chapter.table1_result`).  The figures are drawn by
:mod:`mmcl.figures.coloredmnist`, the command ``mmcl coloredmnist`` is :mod:`mmcl.commands.coloredmnist`.

Public: every name re-exported here; the modules' leading-underscore names are internal.
"""
from mmcl.experiments.coloredmnist.augment import AugmentConfig
from mmcl.experiments.coloredmnist.chapter import (BY_SIZE, ColoredMNISTSizes, data_config, samples_data, sizes,
                                                   table1_result, train_config)
from mmcl.experiments.coloredmnist.data import (PALETTE, PALETTE_NAMES, ColoredMNIST, ColoredMNISTConfig, Split,
                                                load_mnist, load_mnist_idx, make_colored_mnist, read_idx)
from mmcl.experiments.coloredmnist.evaluate import LinearProbe, feature_probes, features, fit_probe, zero_shot_predict
from mmcl.experiments.coloredmnist.runs import (ABLATIONS, PROBE_L2_GRID, RUNS, VARIANTS, RunResult, RunSpec,
                                                caption_geometry, run_one)
from mmcl.experiments.coloredmnist.sensitivity import SENSITIVITY, run_sensitivity
from mmcl.experiments.coloredmnist.table1 import PAPER, Table1Result, run_table1
from mmcl.experiments.coloredmnist.tables import format_sensitivity, format_table, format_table_html
from mmcl.experiments.coloredmnist.train import TrainConfig, TrainedModel, train_model

__all__ = ["AugmentConfig", "PALETTE", "PALETTE_NAMES", "ColoredMNIST", "ColoredMNISTConfig", "Split",
           "load_mnist", "load_mnist_idx", "make_colored_mnist", "read_idx", "LinearProbe", "feature_probes",
           "features", "fit_probe", "zero_shot_predict", "ABLATIONS", "PAPER", "RUNS", "VARIANTS", "RunResult",
           "RunSpec", "PROBE_L2_GRID", "caption_geometry", "SENSITIVITY", "run_sensitivity",
           "Table1Result", "format_table", "format_table_html", "format_sensitivity", "run_one",
           "run_table1", "TrainConfig", "TrainedModel", "train_model", "ColoredMNISTSizes", "BY_SIZE", "sizes",
           "data_config", "train_config", "samples_data", "table1_result"]

