"""The proofs' diagnostics, one module per stage of the book's proof walk, on shared tools:

* :mod:`mmcl.proofs.preactivations` -- the preactivations and sign sets every stage tracks;

* :mod:`mmcl.proofs.single_stage1` -- single-modal stage 1 (Sec. 5.1, Lemmas 5.1-5.2, App. C.1);
* :mod:`mmcl.proofs.single_stage2` -- single-modal stage 2 (Lemmas C.14-C.18: the comparator, convergence);
* :mod:`mmcl.proofs.multi_stage1` -- multi-modal stage 1 (Sec. 5.2, Lemmas 5.3-5.4, App. D.1);
* :mod:`mmcl.proofs.multi_stage2` -- multi-modal stage 2 (Lemmas D.11-D.15: the comparators, convergence);
* :mod:`mmcl.proofs.scales` -- what stage 2 leaves: signal and noise after training, both modes;
* :mod:`mmcl.proofs.assumptions` -- Assumption 4.1 written out, Lemmas B.1-B.2;
* :mod:`mmcl.proofs.blueprint` -- the paper's statements as a dependency graph, the premises each
  proof uses and our audit of each proof, from which the claims register computes its verdicts;
* :mod:`mmcl.proofs.predictions` -- the closed-form predictions of the lemmas (growth rates, T1) and
  the stage-1 race of signal against noise at uniform loss derivatives.

The stage modules import the shared tools and the closed forms, never each other's internals
(``tests/test_layout.py`` fails on an import cycle).  Public: every name in a module's ``__all__``;
a leading underscore marks what is internal to its module.
"""
