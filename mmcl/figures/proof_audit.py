"""Figures of the chapter :ref:`The audit, proof by proof <sec-proof-audit>`: drawing only.

* :func:`draw_standing` -- every proof of the appendix by the standing of its audit (the chapter's
  takeaway): the errors themselves, the valid proofs that rest on them, the valid ones.
"""
from __future__ import annotations

from mmcl.experiments import proof_audit as experiment
from mmcl.figures import palette
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import style

__all__ = ["draw_standing", "FIGURES"]

CHAPTER = chapter_of(__name__)
#: Fill per standing (the Blueprint's audit fills: red a gap, hatched a proof resting on one).
_FILL = palette.STANDING
_WORDS = {"root": "a step of its own fails", "inherited": "valid, resting on a gap",
          "outside": "fails only where a premise fails", "valid": "valid", "not-audited": "not audited"}


def draw_standing(standing):
    """One bar per standing of :func:`mmcl.experiments.proof_audit.standing` (the number of proofs),
    the proofs named on the bar, those no theorem reaches in grey."""
    import matplotlib.pyplot as plt

    keys = [k for k in experiment.STANDINGS if standing[k]]
    far = set(standing["no-theorem"])
    with style():
        fig, ax = plt.subplots(figsize=(8.0, 0.9 + 0.75 * len(keys)), layout="constrained")
        for y, k in enumerate(keys):
            n = len(standing[k])
            ax.barh(y, n, color=_FILL[k], edgecolor=palette.DARK, lw=0.6)
            ax.text(n + 0.4, y, f"{n}", va="center", fontsize="small")
        ax.set_yticks(range(len(keys)), [_WORDS[k] for k in keys])
        ax.invert_yaxis()
        ax.set_xlabel("proofs of the appendix (statements no theorem reaches included)")
        ax.set_xlim(0, max(len(standing[k]) for k in keys) + 3)
        far_roots = far & set(standing["root"])
        ax.set_title(f"{len(standing['root'])} proofs fail at a step of their own; "
                     f"{len(far_roots)} of those reach no theorem", fontsize="medium")
    return fig


FIGURES = [
    FigureSpec("audit-standing", "Every proof of the appendix by the standing of its audit: the steps that "
               "fail inside the premises, the valid proofs that rest on them, the valid ones",
               CHAPTER, "sec-proof-audit", lambda size, device: draw_standing(experiment.standing()),
               takeaway=True),
]
