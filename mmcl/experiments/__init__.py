"""The experiments: the paper's Figure 1 (:mod:`mmcl.experiments.figure1`), batched sweeps over
configurations (:mod:`mmcl.experiments.sweep`) and ColoredMNIST, Table 1
(:mod:`mmcl.experiments.coloredmnist`)."""
