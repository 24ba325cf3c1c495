"""The wider theory (the book's part "The wider theory"), one module per idea:

* :mod:`mmcl.wider.factorisation` -- multi-modal spectral contrastive learning as an asymmetric
  matrix factorisation (Zhang, Wang & Wang 2023) and the caption-induced image graph;
* :mod:`mmcl.wider.graphs` -- positive-pair graphs and their scores (HaoChen et al. 2021), the
  discrete image-caption world, and the comparison of caption and augmentation graphs;
* :mod:`mmcl.wider.agd` -- alternating gradient descent on the factorisation (Ward & Kolda 2023).

Public: every name in a module's ``__all__``; ``_checks`` is internal.
"""
