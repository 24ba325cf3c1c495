"""The paper's blueprint: every numbered statement the book discusses, what it and its proof use, the
premises its proof uses, and our audit of the proof.

Modelled on the blueprint of a formalisation project (a dependency graph of definitions, lemmas and
theorems, where one look says which steps stand), for a paper whose proofs are read, not formalised:

* a :class:`Statement` is one node: its ``key`` is the paper's name for it (``"Lemma C.10"``,
  ``"Theorem 4.3 (2)"``, ``"Sec. 3.3"``, ``"Assumption 4.1 (6)"``), the name the claims register's
  ``paper=`` uses; ``uses`` are the statements its *statement* refers to (solid edges), ``proof_uses``
  those only its *proof* uses (dotted edges); ``premises`` are the keys of the explicit conditions its
  own proof uses, evaluable at a configuration (:func:`premise_keys` adds those of everything the
  proof uses, transitively);
* an :class:`Audit` is our reading of the proof: ``"valid"`` as written, ``"gap-inside"`` (a step
  that fails although every premise holds: no premise can repair it), ``"gap-outside"`` (a step that
  needs more than the premises give only where a premise fails, e.g. a bound that needs ``n`` larger
  than any run reaches), or ``"not-audited"``; with the step, the analytic reason (a formula the
  reader can check) and whether the conclusion may still hold by another route, with the
  measurement that says so.

The register (:mod:`mmcl.booksupport.claims`) evaluates a statement's premises at the setting a check
measured and derives the row's verdict from them (:func:`verdict`); the book's Blueprint page draws
the graph and lists one line per statement.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

from mmcl.model.config import SyntheticConfig, check_config
from mmcl.proofs.assumptions import (EXTRA_PREMISES, AssumptionConfig, Condition, check_assumption41,
                                     premise_conditions)

__all__ = ["KINDS", "AUDITS", "AUDIT_TEXT", "Audit", "Statement", "STATEMENTS", "statement", "resolve",
           "premise_keys", "failing_premises", "verdict", "VERDICTS", "VERDICT_TEXT", "edges", "gaps",
           "check_blueprint", "layout", "measured_verdict", "short_label"]

KINDS = ("definition", "assumption", "lemma", "proposition", "theorem", "step")
AUDITS = ("valid", "gap-inside", "gap-outside", "not-audited")
AUDIT_TEXT = {"valid": "valid as written", "gap-inside": "gap inside the premises",
              "gap-outside": "gap only where a premise fails", "not-audited": "not audited"}
#: The verdicts a check's row can carry (computed by :func:`verdict`, never typed).
VERDICTS = ("holds", "beyond", "fails", "outside", "observation")
VERDICT_TEXT = {"holds": "holds", "beyond": "holds beyond its premises", "fails": "fails",
                "outside": "outside the premises", "observation": "our measurement"}

_ALL_KEYS = None


def _condition_keys() -> Tuple[str, ...]:
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
    section that discusses it (``""``: none yet); ``summary`` the statement in a line of our words."""

    key: str
    kind: str
    summary: str
    audit: Audit
    uses: Tuple[str, ...] = ()
    proof_uses: Tuple[str, ...] = ()
    premises: Tuple[str, ...] = ()
    section: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Statement {self.key!r}: kind={self.kind!r} is not one of {KINDS}")
        bad = [k for k in self.premises if k not in _condition_keys()]
        if bad:
            raise ValueError(f"Statement {self.key!r}: premises {bad} are not condition keys; valid: {_condition_keys()}")


# --------------------------------------------------------------------------------------------
# The statements
# --------------------------------------------------------------------------------------------
_A = Audit
STATEMENTS: Tuple[Statement, ...] = ()  # filled below


def statement(key: str) -> Statement:
    """The statement named ``key`` exactly; a ValueError listing the keys otherwise."""
    for s in STATEMENTS:
        if s.key == key:
            return s
    raise ValueError(f"key={key!r} is not a statement of the blueprint; valid: {', '.join(s.key for s in STATEMENTS)}")


_PART = re.compile(r"^(.*?) \(([0-9a-z]+)\)$")


def resolve(paper: str) -> Tuple[Statement, ...]:
    """The statements a register row's ``paper=`` names: the statement of that key; for a part
    (``"Lemma D.3 (3)"``, ``"Assumption 4.1 (6b)"``) without a node of its own, the whole statement
    (``"Lemma D.3"``, ``"Assumption 4.1 (6)"``); for a statement made of parts (``"Theorem 4.3"``),
    all of its parts; ``()`` where the blueprint has no such statement (an equation, ``"Sec. 6"``,
    ``"Figure 1"``: nothing with premises)."""
    keys = {s.key: s for s in STATEMENTS}
    paper = paper.strip()
    if paper in keys:
        return (keys[paper],)
    m = _PART.match(paper)
    if m:
        base, part = m.group(1), m.group(2)
        alt = f"{base} ({part[0]})" if len(part) > 1 and part[0].isdigit() else None
        if alt in keys:
            return (keys[alt],)
        if base in keys:
            return (keys[base],)
    parts = tuple(s for s in STATEMENTS if s.key.startswith(paper + " ("))
    return parts


def premise_keys(key: str, *, transitive: bool = True) -> Tuple[str, ...]:
    """The premise keys of statement ``key``'s proof; ``transitive``: with those of every statement
    its statement or proof uses, recursively (what must hold for the conclusion to be guaranteed)."""
    seen, order, todo = set(), [], [key]
    while todo:
        k = todo.pop()
        if k in seen:
            continue
        seen.add(k)
        s = statement(k)
        for p in s.premises:
            if p not in order:
                order.append(p)
        if transitive:
            todo.extend(s.uses + s.proof_uses)
    return tuple(p for p in _condition_keys() if p in order)


Setting = Union[SyntheticConfig, Sequence[SyntheticConfig]]


def _settings(setting: Setting) -> List[SyntheticConfig]:
    cfgs = [setting] if isinstance(setting, SyntheticConfig) else list(setting)
    if not cfgs:
        raise ValueError("setting is empty: give the SyntheticConfig (or configs) the check measured")
    for c in cfgs:
        check_config(c, "setting")
    return cfgs


def _evaluate(cfg: SyntheticConfig, acfg: AssumptionConfig) -> Dict[str, Condition]:
    return {c.key: c for c in check_assumption41(cfg, acfg) + premise_conditions(cfg, acfg)}


def failing_premises(paper: str, setting: Setting, acfg: AssumptionConfig = AssumptionConfig()) -> Tuple[str, ...]:
    """The premise keys of the statement(s) ``paper`` names (:func:`resolve`, transitively) that fail
    at one or more of the configurations ``setting``."""
    keys = []
    for s in resolve(paper):
        keys += [k for k in premise_keys(s.key) if k not in keys]
    if not keys:
        return ()
    bad = []
    for cfg in _settings(setting):
        ev = _evaluate(cfg, acfg)
        bad += [k for k in keys if not ev[k].holds and k not in bad]
    return tuple(k for k in _condition_keys() if k in bad)


def verdict(held: Optional[bool], paper: str, setting: Optional[Setting] = None,
            acfg: AssumptionConfig = AssumptionConfig()) -> Tuple[str, Tuple[str, ...]]:
    """A row's verdict from what the check observed and where: ``held`` is ``True`` (the conclusion
    of ``paper`` was borne out), ``False`` (it was not) or ``None`` (a measurement of ours).  Returns
    ``(verdict, failing premise keys)``: ``"holds"``/``"fails"`` where every premise of the statement
    holds at every configuration of ``setting``, ``"beyond"``/``"outside"`` where one fails.  A
    statement with premises needs ``setting`` (ValueError otherwise)."""
    if held is None:
        return "observation", ()
    if not isinstance(held, bool):
        raise ValueError(f"held={held!r} must be True, False or None")
    stmts = resolve(paper)
    needs = [k for s in stmts for k in premise_keys(s.key)]
    if not needs:
        return ("holds" if held else "fails"), ()
    if setting is None:
        raise ValueError(f"paper={paper!r}: the statement's proof uses the premises {', '.join(dict.fromkeys(needs))}; "
                         "give the setting the check measured (setting=cfg, or claims.setting(cfg))")
    bad = failing_premises(paper, setting, acfg)
    if held:
        return ("beyond" if bad else "holds"), bad
    return ("outside" if bad else "fails"), bad


def edges() -> List[Tuple[str, str, str]]:
    """``(source, target, kind)`` for every edge: ``kind`` ``"uses"`` (the target's statement uses the
    source) or ``"proof"`` (only its proof does)."""
    out = []
    for s in STATEMENTS:
        out += [(u, s.key, "uses") for u in s.uses]
        out += [(u, s.key, "proof") for u in s.proof_uses if u not in s.uses]
    return out


def gaps(status: str = "gap-inside") -> List[Statement]:
    """The statements whose proof audit is ``status``."""
    if status not in AUDITS:
        raise ValueError(f"status={status!r} is not one of {AUDITS}")
    return [s for s in STATEMENTS if s.audit.status == status]


def check_blueprint(statements: Iterable[Statement] = None) -> None:
    """Raise ValueError unless every key is unique, every edge names a statement and the graph has
    no cycle."""
    sts = list(STATEMENTS if statements is None else statements)
    keys = [s.key for s in sts]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise ValueError(f"duplicate statement keys: {dup}")
    known = set(keys)
    for s in sts:
        for u in s.uses + s.proof_uses:
            if u not in known:
                raise ValueError(f"{s.key!r} uses {u!r}, which is not a statement of the blueprint")
    state: Dict[str, int] = {}
    by = {s.key: s for s in sts}

    def visit(k, path):
        if state.get(k) == 2:
            return
        if state.get(k) == 1:
            raise ValueError(f"the blueprint has a cycle: {' -> '.join(path + [k])}")
        state[k] = 1
        for u in by[k].uses + by[k].proof_uses:
            visit(u, path + [k])
        state[k] = 2

    for k in keys:
        visit(k, [])


def layout(statements: Sequence[Statement] = None, sweeps: int = 8) -> Dict[str, Tuple[int, float]]:
    """Layered coordinates of the graph for drawing, ``{key: (layer, position)}``: a statement's
    layer is one more than the deepest statement it uses (premises at layer 0, the theorems last),
    and the order within a layer comes from ``sweeps`` passes of the barycentre heuristic (each node
    moved to the mean position of its neighbours in the previous, then the next layer), which
    keeps edges short and crossings few.  Positions are ranks ``0, 1, ...`` within a layer.
    Deterministic: ties keep the order of ``STATEMENTS``."""
    sts = list(STATEMENTS if statements is None else statements)
    check_blueprint(sts)
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


#: How the rows of one statement combine into its measured verdict (the first that occurs wins).
_MEASURED_ORDER = ("fails", "holds", "beyond", "outside")


def measured_verdict(verdicts: Iterable[str]) -> str:
    """One statement's measured verdict from its register rows' verdicts: ``"fails"`` if any row
    refutes it where its premises hold, else ``"holds"`` if one bears it out there, else ``"beyond"``
    (borne out only where a premise fails), ``"outside"`` (not borne out, a premise failing), or
    ``""`` (no row judges it: observations only, or no rows)."""
    vs = set(verdicts)
    unknown = vs - set(VERDICTS)
    if unknown:
        raise ValueError(f"verdicts {sorted(unknown)} are not among {VERDICTS}")
    for v in _MEASURED_ORDER:
        if v in vs:
            return v
    return ""


def short_label(key: str) -> str:
    """The node's text: ``"Lemma C.10"`` -> ``"C.10"``, ``"Theorem 4.3 (2)"`` -> ``"Thm 4.3 (2)"``,
    ``"Assumption 4.1 (6)"`` -> ``"A4.1 (6)"``, ``"Appendix D.3"`` -> ``"App. D.3"``."""
    for long, short in (("Lemma ", ""), ("Proposition ", "Prop. "), ("Theorem ", "Thm "),
                        ("Assumption ", "A"), ("Appendix ", "App. "), ("Corollary ", "Cor. ")):
        if key.startswith(long):
            return short + key[len(long):]
    return key
