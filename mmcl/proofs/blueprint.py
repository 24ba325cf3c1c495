"""The paper's blueprint as a graph: the queries on the statements of :mod:`mmcl.proofs.statements`
(what each uses, which premises its proof rests on, transitively; which gaps it inherits) and the
rules that turn a check into a verdict.

Modelled on the blueprint of a formalisation project (a dependency graph of definitions, lemmas and
theorems, where one look says which steps stand), for a paper whose proofs are read, not formalised.
The statements and our audits are data, in :mod:`mmcl.proofs.statements` (re-exported here); the
drawing of the graph is the book's (:mod:`mmcl.figures.blueprint_graph`).

The register (:mod:`mmcl.booksupport.claims`) evaluates a statement's premises at the setting a check
measured and derives the row's verdict from them (:func:`verdict`); :data:`VERDICT_ORDER` is the one
order in which a statement's rows combine into its measured verdict (:func:`measured_verdict`) and in
which one row is shown as deciding it (:func:`deciding_rows`).

Public: every name in ``__all__``.
"""
from __future__ import annotations

import re
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from mmcl.model.config import SyntheticConfig, check_config
from mmcl.proofs.assumptions import AssumptionConfig, Condition, check_assumption41, premise_conditions
from mmcl.proofs.statements import AUDIT_TEXT, AUDITS, KINDS, RELATIONS, STATEMENTS, Audit, Statement, condition_keys

__all__ = ["KINDS", "AUDITS", "AUDIT_TEXT", "RELATIONS", "Audit", "Statement", "STATEMENTS", "condition_keys",
           "statement", "resolve", "premise_keys", "failing_premises", "verdict", "VERDICTS", "VERDICT_TEXT",
           "VERDICT_ORDER", "UNREACHABLE", "edges", "premise_edges", "relations", "gaps", "rests_on", "check_blueprint",
           "measured_verdict", "deciding_rows", "reaches_a_theorem", "audit_summary", "ancestors",
           "STANDINGS", "STANDING_TEXT", "standing", "standings"]

#: The verdicts a check's row can carry (computed by :func:`verdict`, never typed).
VERDICTS = ("holds", "reach-holds", "beyond", "fails", "reach-fails", "outside", "observation")
VERDICT_TEXT = {"holds": "holds", "reach-holds": "holds where every reachable premise holds",
                "beyond": "holds beyond its premises", "fails": "fails",
                "reach-fails": "fails where every reachable premise holds",
                "outside": "outside the premises", "observation": "our measurement"}
#: The one order of the verdicts, strongest evidence first: how the rows of one statement combine
#: into its measured verdict, and which row decides it (:func:`measured_verdict`, :func:`deciding_rows`).
#: A refutation where the premises hold comes first, then support where they hold, then a conclusion
#: not borne out where a premise fails, and last one borne out only there: evidence against a
#: statement outranks evidence for it at the same standing.
VERDICT_ORDER = ("fails", "reach-fails", "holds", "reach-holds", "outside", "beyond")
#: The premises no computation can reach, each with its reason (conditions on ``n`` or ``d`` far beyond
#: what a run can hold).  Where only these fail, a verdict says so and names them.
UNREACHABLE = {"C.10": "n >= 8 C^2 log(1/delta)/(-log(1 - (delta/m)^2)), about 1.9e11 at delta = 0.1 (Lemma C.10)",
               "D.6": "d >= 300 sqrt(2 n^3 log(6n^2/delta)/(pi (-log(1 - (delta/m)^2))))/(sigma0 sigma_xi), "
                      "past the span draws' limit 2^78 at n = 9,224 (Lemma D.6)"}


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
    return tuple(p for p in condition_keys() if p in order)


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
        if s.kind not in ("assumption", "definition"):
            keys += [k for k in premise_keys(s.key) if k not in keys]
    if not keys:
        return ()
    bad = []
    for cfg in _settings(setting):
        ev = _evaluate(cfg, acfg)
        bad += [k for k in keys if not ev[k].holds and k not in bad]
    return tuple(k for k in condition_keys() if k in bad)


def verdict(held: Optional[bool], paper: str, setting: Optional[Setting] = None,
            acfg: AssumptionConfig = AssumptionConfig()) -> Tuple[str, Tuple[str, ...]]:
    """A row's verdict from what the check observed and where: ``held`` is ``True`` (the conclusion
    of ``paper`` was borne out), ``False`` (it was not) or ``None`` (a measurement of ours).  Returns
    ``(verdict, failing premise keys)``: ``"holds"``/``"fails"`` where every premise of the statement
    holds at every configuration of ``setting``; ``"reach-holds"``/``"reach-fails"`` where the only
    premises that fail are out of any computation's reach (:data:`UNREACHABLE`) and some other premise
    of the statement held; ``"beyond"``/``"outside"`` where another fails, or where every premise the
    statement has is out of reach (nothing was then evaluated in its favour).  ``acfg``: the constants
    the premises are evaluated with (``AssumptionConfig(c_ell=...)``: a measured ``C_l`` in place of the
    paper's 1.01).  A statement with premises needs ``setting`` (ValueError
    otherwise)."""
    if held is None:
        return "observation", ()
    if not isinstance(held, bool):
        raise ValueError(f"held={held!r} must be True, False or None")
    # a premise or a definition concludes nothing from premises: a check of it (the paper's 2.66 is
    # what its proof's constants give) is judged as it stands
    stmts = [s for s in resolve(paper) if s.kind not in ("assumption", "definition")]
    needs = [k for s in stmts for k in premise_keys(s.key)]
    if not needs:
        return ("holds" if held else "fails"), ()
    if setting is None:
        raise ValueError(f"paper={paper!r}: the statement's proof uses the premises {', '.join(dict.fromkeys(needs))}; "
                         "give the setting the check measured (setting=cfg, or claims.setting(cfg))")
    bad = failing_premises(paper, setting, acfg)
    if not bad:
        return ("holds" if held else "fails"), bad
    if all(k in UNREACHABLE for k in bad) and len(bad) < len(set(needs)):
        # out of reach only, and some premise of the statement was evaluated and held there
        return ("reach-holds" if held else "reach-fails"), bad
    return ("beyond" if held else "outside"), bad


def edges() -> List[Tuple[str, str, str]]:
    """``(source, target, kind)`` for every edge: ``kind`` ``"uses"`` (the target's statement uses the
    source) or ``"proof"`` (only its proof does)."""
    out = []
    for s in STATEMENTS:
        out += [(u, s.key, "uses") for u in s.uses]
        out += [(u, s.key, "proof") for u in s.proof_uses if u not in s.uses]
    return out


def relations() -> List[Tuple[str, str, str]]:
    """``(our statement, the paper's statement, relation)`` for every statement of kind ``"ours"``:
    ``relation`` is ``"refutes"`` or ``"repairs"`` (:data:`mmcl.proofs.statements.schema.RELATIONS`).  Kept apart from :func:`edges`:
    they say how the book's statements bear on the paper's, not what a proof uses."""
    return [(s.key, target, rel) for s in STATEMENTS for rel, target in s.relates]


def premise_edges() -> List[Tuple[str, str, Tuple[str, ...]]]:
    """``(premise node, statement, condition keys)``: an edge from the premise node that states a condition
    (an item of Assumption 4.1, ``"Sec. 3.3"``) to every statement whose *own* proof uses one of its
    condition keys, with those keys.  Kept apart from :func:`edges`: a statement inherits only the keys its
    proof uses, not the whole item (``premise_keys`` never follows these edges)."""
    owner = {}
    for s in STATEMENTS:
        if s.kind == "assumption":
            for k in s.premises:
                owner.setdefault(k, s.key)
    out = []
    for s in STATEMENTS:
        if s.kind == "assumption":
            continue
        by: Dict[str, List[str]] = {}
        for k in s.premises:
            if k in owner:
                by.setdefault(owner[k], []).append(k)
        out += [(o, s.key, tuple(ks)) for o, ks in by.items()]
    return out


def rests_on(key: str, status: str = "gap-inside") -> Tuple[str, ...]:
    """The statements with audit ``status`` that statement ``key``'s statement or proof uses, directly or
    through other statements (``key`` itself excluded): what a proof audited "valid" inherits."""
    if status not in AUDITS:
        raise ValueError(f"status={status!r} is not one of {AUDITS}")
    seen = ancestors(key)
    return tuple(s.key for s in STATEMENTS if s.key in seen and s.audit.status == status)


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
        for _, target in s.relates:
            if target not in known:
                raise ValueError(f"{s.key!r} relates to {target!r}, which is not a statement of the blueprint")
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


def measured_verdict(verdicts: Iterable[str]) -> str:
    """One statement's measured verdict from its register rows' verdicts: ``"fails"`` if any row
    refutes it where its premises hold, else ``"holds"`` if one bears it out there, else ``"beyond"``
    (borne out only where a premise fails), ``"outside"`` (not borne out, a premise failing), or
    ``""`` (no row judges it: observations only, or no rows)."""
    vs = set(verdicts)
    unknown = vs - set(VERDICTS)
    if unknown:
        raise ValueError(f"verdicts {sorted(unknown)} are not among {VERDICTS}")
    for v in VERDICT_ORDER:
        if v in vs:
            return v
    return ""


def deciding_rows(rows: Iterable[Mapping]) -> Dict[str, Mapping]:
    """``{statement key: row}``: for each statement of the paper the register row that decides its
    measured verdict (:data:`VERDICT_ORDER`; the first such row in the book's order), so that a
    statement's verdict and the row shown as deciding it never disagree.  Rows of other sources
    (``source`` other than the paper) and observations decide nothing."""
    best: Dict[str, Mapping] = {}
    for r in rows:
        if r.get("source", "huang2024comparison") != "huang2024comparison" or r["verdict"] not in VERDICT_ORDER:
            continue
        for s in resolve(r["paper"]):
            old = best.get(s.key)
            if old is None or VERDICT_ORDER.index(r["verdict"]) < VERDICT_ORDER.index(old["verdict"]):
                best[s.key] = r
    return best


def reaches_a_theorem(key: str) -> bool:
    """Whether some theorem of the paper uses statement ``key``, directly or through other
    statements (a statement no theorem reaches, a duplicate of another, say, cannot change a
    theorem's standing)."""
    statement(key)
    for s in STATEMENTS:
        if s.kind == "theorem" and (s.key == key or key in ancestors(s.key)):
            return True
    return False


def ancestors(key: str) -> set:
    """Every statement that statement ``key``'s statement or proof uses, directly or through others."""
    statement(key)
    seen, todo = set(), [key]
    while todo:
        k = todo.pop()
        for u in statement(k).uses + statement(k).proof_uses:
            if u not in seen:
                seen.add(u)
                todo.append(u)
    return seen


def audit_summary() -> Dict[str, List[str]]:
    """The proofs of the paper by the standing of their audit, each a list of keys in the paper's
    order: ``"root"`` (a step of the proof's own fails inside the premises: the errors themselves),
    ``"outside"`` (a step that needs more only where a premise fails), ``"inherited"`` (the proof's
    own steps are valid, but it uses a statement with a gap), ``"valid"`` (valid and resting on
    nothing with a gap), ``"not-audited"``; and ``"no-theorem"``: the audited statements no theorem
    reaches (:func:`reaches_a_theorem`).  Premises, definitions and our own statements are left out."""
    out = {k: [] for k in ("root", "outside", "inherited", "valid", "not-audited", "no-theorem")}
    for s in STATEMENTS:
        if s.kind in ("assumption", "definition", "ours"):
            continue
        st = s.audit.status
        if st == "gap-inside":
            out["root"].append(s.key)
        elif st == "gap-outside":
            out["outside"].append(s.key)
        elif st == "not-audited":
            out["not-audited"].append(s.key)
        elif rests_on(s.key) or rests_on(s.key, "gap-outside"):
            out["inherited"].append(s.key)
        else:
            out["valid"].append(s.key)
        if not reaches_a_theorem(s.key):
            out["no-theorem"].append(s.key)
    return out


#: The merged verdicts a node can carry, the strongest first (:func:`standing`).
STANDINGS = ("refuted", "gap", "rests on a gap", "stands", "not audited", "premise")
#: What each standing means, for the legend.
STANDING_TEXT = {
    "refuted": "a check fails where its premises hold, or a statement of ours refutes it",
    "gap": "a step of its own proof fails (our audit)",
    "rests on a gap": "its own steps are valid, but it uses a statement with a gap",
    "stands": "valid as written, resting on nothing with a gap, and no check refutes it",
    "not audited": "its proof was not read",
    "premise": "a premise or a definition: nothing to prove",
}


def _refuted_by_ours() -> Dict[str, List[str]]:
    out: Dict[str, List[str]] = {}
    for src, dst, rel in relations():
        if rel == "refutes":
            out.setdefault(dst, []).append(src)
    return out


def standing(key: str, verdict: str = "") -> str:
    """Statement ``key``'s one merged verdict (one of :data:`STANDINGS`), given its measured
    ``verdict`` (:func:`mmcl.proofs.blueprint.measured_verdict`, ``""`` for none): ``"refuted"``
    where a check fails where its premises hold (``fails``, ``reach-fails``) or a statement of ours
    refutes it; else ``"gap"`` where our audit finds a step of its own proof failing (inside the
    premises or only where one fails); ``"rests on a gap"`` where its own steps are valid but it
    uses, directly or not, a statement with a gap; ``"not audited"``; ``"stands"`` otherwise.
    Premises and definitions are ``"premise"``.  The one verdict a reader sees for a statement:
    the Blueprint's fill, its spine and the reading guide's verdict all read it here."""
    s = statement(key)
    if verdict and verdict not in VERDICTS:
        raise ValueError(f"verdict={verdict!r} is not a measured verdict; valid: '', "
                         + ", ".join(map(repr, VERDICTS)))
    if s.kind in ("assumption", "definition"):
        return "premise"
    if verdict in ("fails", "reach-fails") or key in _refuted_by_ours():
        return "refuted"
    if s.audit.status in ("gap-inside", "gap-outside"):
        return "gap"
    if s.audit.status == "not-audited":
        return "not audited"
    if rests_on(key) or rests_on(key, "gap-outside"):
        return "rests on a gap"
    return "stands"


def standings(verdicts: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """:func:`standing` of every statement, ``verdicts`` giving the measured verdict per key."""
    verdicts = dict(verdicts or {})
    return {s.key: standing(s.key, verdicts.get(s.key, "")) for s in STATEMENTS}
