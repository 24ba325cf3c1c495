"""The experiments: what each chapter computes, at each size.

* one module per chapter, named after it (``mmcl.experiments.<chapter>``, the same name as the
  chapter's drawings in ``mmcl.figures.<chapter>``): its sizes (a small dataclass per size, read
  with :func:`mmcl.experiments.sizes.pick`), its configuration and its cached runs;
* the experiments several chapters share: the paper's Figure 1 (:mod:`mmcl.experiments.figure1`),
  batched sweeps over configurations (:mod:`mmcl.experiments.sweep`), ColoredMNIST and Table 1
  (:mod:`mmcl.experiments.coloredmnist`), and the sweep over n inside Assumption 4.1
  (:mod:`mmcl.experiments.theorems_regime`).

Computation only: nothing here draws (the figures are drawn in :mod:`mmcl.figures`).  Public: the
names in each module's ``__all__``; a leading underscore marks what is internal to a module.
"""
