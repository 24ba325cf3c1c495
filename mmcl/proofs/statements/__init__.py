"""The paper's statements as data: every numbered statement the book discusses, what it and its
proof use, the premises its proof uses, and our audit of its proof (one :class:`~mmcl.proofs.statements.schema.Statement` each).

This module holds data only; the graph queries and the verdict rules are in
:mod:`mmcl.proofs.blueprint`.  A newcomer who re-audits a proof edits one entry of
:data:`STATEMENTS`: its :class:`~mmcl.proofs.statements.schema.Audit` (status, the step, the analytic reason, the other route).

* a :class:`~mmcl.proofs.statements.schema.Statement` is one node: its ``key`` is the paper's name for it (``"Lemma C.10"``,
  ``"Theorem 4.3 (2)"``, ``"Sec. 3.3"``, ``"Assumption 4.1 (6)"``), the name the claims register's
  ``paper=`` uses; ``uses`` are the statements its *statement* refers to (solid edges), ``proof_uses``
  those only its *proof* uses (dotted edges); ``premises`` are the keys of the explicit conditions its
  own proof uses, evaluable at a configuration; statements of kind ``"ours"`` are the book's own
  (not the paper's), with ``relates`` naming the paper's statements they refute or repair;
* an :class:`~mmcl.proofs.statements.schema.Audit` is our reading of the proof: ``"valid"`` as written, ``"gap-inside"`` (a step
  that fails although every premise holds: no premise can repair it), ``"gap-outside"`` (a step that
  needs more than the premises give only where a premise fails), or ``"not-audited"``; with the step,
  the analytic reason (a formula the reader can check) and whether the conclusion may still hold by
  another route, with the measurement that says so.

Conventions of the data: an edge is drawn where a proof uses a statement by number, by one of its
numbered equations (the proof of Lemma 5.2 uses "(21)" of Lemma C.4) or by the quantity it defines (the
stage-2 lemmas' ``T*`` is Proposition C.13's); "Under Assumption 4.1" in a statement's header is not an edge:
the premises a statement carries are the explicit conditions its own proof uses, so that a single-modal
lemma is not judged by a multi-modal condition.  An audit is of the statement's own steps, given the
statements it uses: a proof whose own steps hold is ``"valid"`` even where a statement it uses has a gap
(what it inherits is :func:`mmcl.proofs.blueprint.rests_on`).

One import point: the types are in :mod:`~mmcl.proofs.statements.schema`, the data by part of the paper in ``_setting``
(definitions, premises, Appendix B), ``_appendix_c``, ``_appendix_d`` and ``_ours`` (the book's
statements); this package assembles :data:`STATEMENTS` from them.

Public: every name in ``__all__``; its private modules are internal.
"""
from __future__ import annotations

from typing import Tuple

from mmcl.proofs.statements._appendix_c import APPENDIX_C
from mmcl.proofs.statements._appendix_d import APPENDIX_D
from mmcl.proofs.statements._ours import OURS
from mmcl.proofs.statements.schema import AUDIT_TEXT, AUDITS, KINDS, RELATIONS, Audit, Statement, condition_keys
from mmcl.proofs.statements._setting import SETTING

__all__ = ["KINDS", "AUDITS", "AUDIT_TEXT", "RELATIONS", "Audit", "Statement", "STATEMENTS", "condition_keys"]

#: Every statement of the blueprint, in the paper's order within each stage.
STATEMENTS: Tuple[Statement, ...] = SETTING + APPENDIX_C + APPENDIX_D + OURS
