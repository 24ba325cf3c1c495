"""The drawing side of the paper's blueprint (:mod:`mmcl.proofs.blueprint`): where each node sits and
what it says.  Shared by the Blueprint page (:mod:`mmcl.booksupport.blueprint_page`) and the reading
guide's figure (:mod:`mmcl.figures.reading_guide`).

* :func:`layout` -- layered coordinates, premises on the left and the theorems on the right;
* :func:`short_label` -- the text of a node.

Public: every name in ``__all__``.
"""
from __future__ import annotations

from typing import Dict, Sequence, Tuple

from mmcl.proofs import blueprint as bp
from mmcl.proofs.blueprint import Statement

__all__ = ["layout", "short_label"]


def layout(statements: Sequence[Statement] = None, sweeps: int = 8) -> Dict[str, Tuple[int, float]]:
    """Layered coordinates of the graph for drawing, ``{key: (layer, position)}``: a statement's
    layer is one more than the deepest statement it uses (premises at layer 0, the theorems last),
    and the order within a layer comes from ``sweeps`` passes of the barycentre heuristic (each node
    moved to the mean position of its neighbours in the previous, then the next layer), which
    keeps edges short and crossings few.  Positions are ranks ``0, 1, ...`` within a layer.
    Deterministic: ties keep the order of ``STATEMENTS``."""
    sts = list(bp.STATEMENTS if statements is None else statements)
    bp.check_blueprint(sts)
    by = {s.key: s for s in sts}
    deps = {s.key: [u for u in s.uses + s.proof_uses if u in by] for s in sts}
    layer: Dict[str, int] = {}

    def depth(k):
        if k not in layer:
            layer[k] = 1 + max((depth(u) for u in deps[k]), default=-1)
        return layer[k]

    for s in sts:
        depth(s.key)
    n_layers = 1 + max(layer.values(), default=0)
    rows = [[s.key for s in sts if layer[s.key] == j] for j in range(n_layers)]
    users = {s.key: [] for s in sts}
    for k, ds in deps.items():
        for u in ds:
            users[u].append(k)
    index = {k: float(i) for row in rows for i, k in enumerate(row)}
    for sweep in range(sweeps):
        down = sweep % 2 == 0
        order = range(1, n_layers) if down else range(n_layers - 2, -1, -1)
        for j in order:
            def bary(k):
                nb = deps[k] if down else users[k]
                return sum(index[x] for x in nb) / len(nb) if nb else index[k]
            rows[j] = sorted(rows[j], key=lambda k: (bary(k), index[k]))
            for i, k in enumerate(rows[j]):
                index[k] = float(i)
    return {k: (layer[k], index[k]) for k in layer}


def short_label(key: str) -> str:
    """The node's text: ``"Lemma C.10"`` -> ``"C.10"``, ``"Theorem 4.3 (2)"`` -> ``"Thm 4.3 (2)"``,
    ``"Assumption 4.1 (6)"`` -> ``"A4.1 (6)"``, ``"Appendix D.3"`` -> ``"App. D.3"``, ``"Our Theorem 1"``
    -> ``"Our Thm 1"``."""
    for long, short in (("Our Proposition ", "Our Prop. "), ("Our Theorem ", "Our Thm "), ("Lemma ", ""), ("Proposition ", "Prop. "), ("Theorem ", "Thm "),
                        ("Assumption ", "A"), ("Appendix ", "App. "), ("Corollary ", "Cor. ")):
        if key.startswith(long):
            return short + key[len(long):]
    return key
