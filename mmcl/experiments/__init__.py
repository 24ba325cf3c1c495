"""The experiments: the paper's Figure 1 (:mod:`mmcl.experiments.figure1`), batched sweeps over
configurations (:mod:`mmcl.experiments.sweep`), ColoredMNIST, Table 1
(:mod:`mmcl.experiments.coloredmnist`), and the sweep over n inside Assumption 4.1
(:mod:`mmcl.experiments.theorems_regime`).  Computation only: the figures are drawn in
:mod:`mmcl.figures`."""
