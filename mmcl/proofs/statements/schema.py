"""The types of the blueprint's data: :class:`Statement`, :class:`Audit`, their kinds and statuses,
and the premise keys a statement may name; :mod:`mmcl.proofs.statements` holds the data and
re-exports them.

Public: every name in ``__all__``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

from mmcl.model.config import SyntheticConfig
from mmcl.proofs.assumptions import EXTRA_PREMISES, check_assumption41

__all__ = ["KINDS", "AUDITS", "AUDIT_TEXT", "RELATIONS", "Audit", "Statement", "condition_keys"]

KINDS = ("definition", "assumption", "lemma", "proposition", "theorem", "step", "ours")
AUDITS = ("valid", "gap-inside", "gap-outside", "not-audited")
AUDIT_TEXT = {"valid": "valid as written", "gap-inside": "gap inside the premises",
              "gap-outside": "gap only where a premise fails", "not-audited": "not audited"}
#: How a statement of ours bears on the paper's: it ``"refutes"`` a conclusion or ``"repairs"`` it.
RELATIONS = ("refutes", "repairs")

_ALL_KEYS = None


def condition_keys() -> Tuple[str, ...]:
    """Every premise key a :class:`Statement` may name: the 22 conditions of Assumption 4.1 and the
    premises beyond it (:data:`mmcl.proofs.assumptions.EXTRA_PREMISES`)."""
    global _ALL_KEYS
    if _ALL_KEYS is None:
        _ALL_KEYS = tuple(c.key for c in check_assumption41(SyntheticConfig())) + EXTRA_PREMISES
    return _ALL_KEYS


@dataclass(frozen=True)
class Audit:
    """Our reading of a statement's proof (module docstring): ``status`` in ``AUDITS``, the ``step``
    it concerns, the analytic ``reason`` and the other ``route`` by which the conclusion may still
    hold (with the measurement that says so), ``""`` where there is none to give."""

    status: str
    step: str = ""
    reason: str = ""
    route: str = ""

    def __post_init__(self) -> None:
        if self.status not in AUDITS:
            raise ValueError(f"Audit.status={self.status!r} is not one of {', '.join(map(repr, AUDITS))}")
        if self.status in ("gap-inside", "gap-outside") and not (self.step and self.reason):
            raise ValueError(f"Audit.status={self.status!r} needs the step and the reason")


@dataclass(frozen=True)
class Statement:
    """One node of the blueprint (module docstring).  ``section`` is the MyST label of the book's
    section that discusses it (``""``: none yet); ``summary`` the statement in a line of our words;
    ``relates`` (kind ``"ours"`` only): ``(relation, key)`` pairs, the paper's statements it refutes or
    repairs."""

    key: str
    kind: str
    summary: str
    audit: Audit
    uses: Tuple[str, ...] = ()
    proof_uses: Tuple[str, ...] = ()
    premises: Tuple[str, ...] = ()
    section: str = ""
    relates: Tuple[Tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Statement {self.key!r}: kind={self.kind!r} is not one of {KINDS}")
        bad = [k for k in self.premises if k not in condition_keys()]
        if bad:
            raise ValueError(f"Statement {self.key!r}: premises {bad} are not condition keys; valid: {condition_keys()}")
        for rel in self.relates:
            if not (isinstance(rel, tuple) and len(rel) == 2 and rel[0] in RELATIONS):
                raise ValueError(f"Statement {self.key!r}: relates entries must be (relation, key) with a relation "
                                 f"in {RELATIONS}, got {rel!r}")
        if self.relates and self.kind != "ours":
            raise ValueError(f"Statement {self.key!r}: only a statement of kind 'ours' relates to the paper's")
