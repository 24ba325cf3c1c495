"""The experiment of the chapter :ref:`The audit, proof by proof <sec-proof-audit>`: the standing of
every proof of the appendix, and the checks behind the steps found to fail
(:mod:`mmcl.proofs.audit_checks`), on draws of the data model at initialisation and one short run.
The drawings are in :mod:`mmcl.figures.proof_audit`.

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here;
* :func:`standing` -- the proofs by the standing of their audit (:func:`mmcl.proofs.blueprint.audit_summary`);
* :func:`measurements` -- every measured check of :mod:`mmcl.proofs.audit_checks` at the size's draws
  (cached): Figure 1's setting for Lemmas C.5, C.7, C.14 and D.9, the decisive point for Lemma D.6;
* :func:`standing_table` -- the standing as text.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Dict, List

from mmcl.experiments.sizes import figure1_config, pick
from mmcl.model.data import sample_synthetic_batch
from mmcl.proofs import audit_checks as ac
from mmcl.proofs import blueprint as bp

__all__ = ["AuditSizes", "BY_SIZE", "sizes", "STANDINGS", "standing", "standing_table", "measurements"]

#: The standings of a proof's audit, in the order the chapter shows them (``audit_summary``'s keys).
STANDINGS = ("root", "inherited", "outside", "valid", "not-audited")


@dataclass(frozen=True)
class AuditSizes:
    """What a size means for this chapter: ``seeds`` draws of Figure 1's setting and ``n_epochs`` steps
    of the one short run (Lemma C.7)."""

    seeds: int
    n_epochs: int = 200


BY_SIZE: Dict[str, AuditSizes] = {"tiny": AuditSizes(seeds=1, n_epochs=20), "default": AuditSizes(seeds=5),
                                  "full": AuditSizes(seeds=20)}


def sizes(size: str = "default") -> AuditSizes:
    """The :class:`AuditSizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


def standing() -> Dict[str, List[str]]:
    """:func:`mmcl.proofs.blueprint.audit_summary`: the proofs of the paper by their audit's standing."""
    return bp.audit_summary()


def standing_table() -> str:
    """The proofs by standing, one line each, with the statements no theorem reaches marked ``*``."""
    st = standing()
    far = set(st["no-theorem"])
    words = {"root": "a step of its own fails inside the premises", "inherited": "valid, resting on a gap",
             "outside": "a gap only where a premise fails", "valid": "valid", "not-audited": "not audited"}
    lines = []
    for k in STANDINGS:
        keys = [f"{x}{'*' if x in far else ''}" for x in st[k]]
        lines.append(f"{len(keys):>3} {words[k]}: {', '.join(keys) or '-'}")
    lines.append("  * cited by no proof on a theorem's path")
    return "\n".join(lines)


@functools.lru_cache(maxsize=3)
def measurements(size: str = "default") -> Dict[str, object]:
    """The measured checks at ``size`` (seeds ``0..seeds-1`` of Figure 1's setting, float64):
    ``c5`` (the share violating Lemma C.5 at ``C = 1`` and ``C = 200``, per seed, with the Cauchy
    law), ``c7`` (the share of initially active pairs inactive after the run), ``c14`` (the median
    of the term Lemma C.14 calls O(1), per seed), ``d9`` (the share of pairs where Lemma D.9's (46)
    holds at ``t = 0``), ``d6`` (Lemma D.6's threshold beside its total's mean at the decisive point)
    and ``cfg``."""
    from mmcl.experiments.decisive_runs import N_DECISIVE, decisive_config

    s = sizes(size)
    cfg = figure1_config(n_epochs=s.n_epochs)
    data = sample_synthetic_batch(cfg, range(s.seeds), dtype="float64")
    return {"cfg": cfg,
            "c5": {C: (ac.lemma_c5_violation(data, C), ac.lemma_c5_law(cfg.sigma_eps, cfg.sigma_xi, C))
                   for C in (1.0, 200.0)},
            "c7": ac.lemma_c7_turned_inactive(data, cfg),
            "c14": ac.lemma_c14_term(data),
            "d9": ac.lemma_d9_46_share(data),
            "d6": ac.lemma_d6_margin(decisive_config(N_DECISIVE)), "d6_cfg": decisive_config(N_DECISIVE)}
