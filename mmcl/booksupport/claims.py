"""The claims register: the one place where a chapter asserts a claim.

Every check cell of the book states its claims through a :class:`Claims` object (``env.claims``,
made by :func:`~mmcl.booksupport.chapter_setup`)::

    claims.setting(cfg)                      # what the following checks measured
    claims.upper("the measured rate stays below the rate Lemma 5.2 guarantees",
                 paper="Lemma 5.2", held=False, observed=fit.rate, bound=rate_lemma)

Each call records one row -- the claim in our words, the paper's statement it concerns, the
verdict (computed from the statement's premises at the setting), the observed value, the bound, and the margin -- and raises :class:`ClaimFailed` (an
``AssertionError``) when the observation contradicts the claim, so that the chapter stops, the
build fails and nbval fails.  An array-valued ``observed`` (or ``bound``) is checked elementwise;
the row records the element closest to failing, and how many elements there are.

``paper=`` names a numbered statement of the paper (``"Lemma C.11"``, ``"Theorem 4.2 (1)"``,
``"Sec. 3.3"``); ``source=`` (a key of ``references.bib``) says when it is another work's.

**Verdicts are computed, not typed.**  A check states what it observed -- ``held=True`` (the
statement's conclusion was borne out), ``held=False`` (it was not), or ``verdict="observation"`` (a
number of ours that the prose gives; ``paper=`` is what it illustrates) -- and the setting it
measured (``setting=cfg``, or ``claims.setting(cfg)`` for the rows that follow; a list of configs
for a check over several).  The register evaluates, at that setting, the premises of the statement
``paper=`` names, as the paper's blueprint lists them (:mod:`mmcl.proofs.blueprint`, transitively:
the premises of everything its proof uses), and derives the row's verdict:

* ``"holds"`` -- the conclusion held and every premise held: support;
* ``"beyond"`` -- the conclusion held although a premise failed (the row lists which): the statement
  holding beyond its premises, not support for its proof;
* ``"fails"`` -- the conclusion was not borne out although every premise held: a refutation there;
* ``"outside"`` -- the conclusion was not borne out and a premise failed: out of the statement's scope;
* ``"observation"`` -- our measurement.

A statement whose proof uses premises needs a setting.  The older typed forms ``verdict="holds"``
(= ``held=True``), ``"fails"`` and ``"outside"`` (= ``held=False``) are read the same way, and one that
contradicts the computed premises (``"fails"`` where a premise fails, ``"outside"`` where all hold)
is an error.  ``premises=`` adds words to the computed list.  A statement of another work
(``source=``) is not in the blueprint: its typed verdict stands, with ``premises=`` required for
``"fails"``/``"outside"`` as before.

**Looseness.**  A one-sided bound more than 10x from the claim's scale proves little; it is
refused unless ``paper_bound=True`` says the bound is the paper's own, which the register then
marks as loose.  The scale is ``scale=`` when the claim gives one, else the observed value
(``observed = 0.01`` against ``bound = 1`` is refused).  A claim whose observation moves with the
seed or the CPU's code path (a trained network's accuracy, the difference of two nearly equal
numbers) must give ``scale=``: the spread measured over seeds and code paths, or the magnitude of
what is compared.  Whether the book builds then never depends on how well two numbers happen to
agree in one run (``|a - b| <= 0.03`` with a spread of 0.01 is a tight claim, even on a day when
``a - b`` is 0.0009).  Judged against a scale, only a bound on the permissive side counts as loose
(an upper bound above ten times the scale, a lower bound below a tenth of it); a range
(:meth:`Claims.between`) may then be at most twenty times the scale wide.  A loose paper bound that
holds is recorded as *our measurement*, not as support: a check that cannot fail says nothing for
the statement.  (An integer count within one unit of an
integer bound, such as 0 against "at most 1", is tight.)  Round-off checks (:meth:`Claims.roundoff`)
are exempt: their bound is a tolerance.  A tolerance (:meth:`Claims.near`) wider than the target's
magnitude is refused for the same reason.

**Display and collection.**  :mod:`mmcl.booksupport.claims_table` shows the rows and reads them back.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import List, Optional

from mmcl.model.config import SyntheticConfig
from mmcl.proofs import blueprint
from mmcl.proofs.assumptions import AssumptionConfig
# the display, read from here too (the book's Sphinx extension, the browser tests)
from mmcl.booksupport.claims_table import ATTR, fold_summary, format_number, parse_html, render_html, render_text  # noqa: F401

__all__ = ["Claims", "Claim", "ClaimFailed", "VERDICTS", "TYPED_VERDICTS", "VERDICT_TEXT", "PAPER_REF"]

#: The verdicts a row carries (computed, :func:`mmcl.proofs.blueprint.verdict`).
VERDICTS = blueprint.VERDICTS
VERDICT_TEXT = blueprint.VERDICT_TEXT
#: The verdicts a check may still type (read as ``held=``, then checked against the computed one).
TYPED_VERDICTS = ("holds", "fails", "outside", "observation")
_HELD = {"holds": True, "fails": False, "outside": False, "observation": None}
#: What ``paper=`` may name: a numbered statement, equation, section, figure or table of the paper,
#: or one of the book's own statements ("Our Theorem 1").
#:
#: :meta hide-value:
PAPER_REF = re.compile(r"^(Our Proposition|Our Theorem|Lemma|Theorem|Corollary|Assumption|Condition|Definition|"
                       r"Proposition|Eq\.|Eqs\.|"
                       r"Sec\.|Figure|Table|Appendix) \(?([A-Z]\.)?\d+(\.\d+)*\)?[a-z]?( .*)?$")
#: For another work (``source=``), whose numbering the book may not have: a kind and a number or a
#: name in parentheses, e.g. ``"Theorem 3.8"`` or ``"Lemma (the loss is a matrix factorisation)"``.
#:
#: :meta hide-value:
OTHER_REF = re.compile(r"^(Lemma|Theorem|Corollary|Assumption|Condition|Definition|Proposition|Eq\.|Eqs\.|"
                       r"Sec\.|Figure|Table|Appendix|Algorithm) (\(?([A-Z]\.)?\d+(\.\d+)*\)?[a-z]?( .*)?|\([^()]{4,}\))$")
LOOSE_FACTOR = 10.0
#: The bibliography key of the paper the book accompanies (``source=`` names another cited work).
MAIN = "huang2024comparison"


class ClaimFailed(AssertionError):
    """A claim of the book that the computation contradicts."""


@dataclass
class Claim:
    """One row of the register."""

    claim: str
    paper: str
    verdict: str
    kind: str  # "upper", "lower", "between", "near", "equal", "roundoff", "true"
    observed: Optional[float]
    bound: Optional[float]
    margin: Optional[float]  # relative slack; 0 at the bound, 1 when the observation is far inside
    size: int = 1  # elements checked
    premises: str = ""
    note: str = ""
    paper_bound: bool = False
    section: str = ""  # a MyST label of the section that discusses the claim ("" = where it is checked)
    chapter: str = ""
    tol: Optional[float] = None  # the tolerance of a "near" claim
    source: str = "huang2024comparison"  # the bibliography key of the work whose statement it is
    high: Optional[float] = None  # the upper end of a "between" claim (``bound`` is the lower)
    failing: str = ""  # the statement's premise keys that fail at the setting (computed), comma-separated
    held: Optional[bool] = None  # what the check observed of the conclusion (None: our measurement)

    def bound_text(self) -> str:
        if self.kind == "true":
            return "true"
        b = format_number(self.bound)
        sign = {"upper": "≤ ", "lower": "≥ ", "roundoff": "≤ ", "equal": "= "}.get(self.kind, "")
        if self.kind == "near":
            return f"{b} ± {format_number(self.tol)}"
        if self.kind == "between":
            return f"in [{b}, {format_number(self.high)}]"
        return sign + b


def _values(x, name: str) -> List[float]:
    """A number, a bool, a sequence, a numpy array or a torch tensor, as a flat list of floats."""
    if hasattr(x, "detach"):  # torch
        x = x.detach().cpu().double().reshape(-1).tolist()
    elif hasattr(x, "reshape") and hasattr(x, "tolist"):  # numpy
        x = x.astype(float).reshape(-1).tolist()
    elif isinstance(x, (list, tuple)):
        flat = []
        for v in x:
            flat.extend(_values(v, name))
        x = flat
    else:
        x = [x]
    out = []
    for v in x:
        if isinstance(v, bool):
            v = float(v)
        try:
            v = float(v)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}={v!r} is not a number, an array or a tensor of numbers") from exc
        out.append(v)
    if not out:
        raise ValueError(f"{name} is empty: a claim needs at least one observed value")
    return out


def _broadcast(obs: List[float], other: List[float], name: str) -> List[float]:
    if len(other) == len(obs):
        return other
    if len(other) == 1:
        return other * len(obs)
    raise ValueError(f"{name} has {len(other)} values for {len(obs)} observed values; give one value or one per element")


class Claims:
    """The register of one chapter: call one method per claim; each asserts and records.

    Parameters
    ----------
    chapter : str
        The chapter's name (its file stem); the Sphinx extension knows the page in any case.
    display : bool
        Show each cell's claims as a table after the cell (in IPython).
    """

    def __init__(self, chapter: str = "", display: bool = True):
        self.chapter = chapter
        self.rows: List[Claim] = []
        self._pending: List[Claim] = []
        self._section = ""
        self._setting = None
        self._acfg = AssumptionConfig()
        if display:
            self._install_hook()

    # -- the statements -------------------------------------------------------------------
    def section(self, label: str) -> "Claims":
        """Link the following claims to the section with MyST label ``label`` (``""``: the check's)."""
        if not isinstance(label, str) or (label and not re.match(r"^[A-Za-z][\w-]*$", label)):
            raise ValueError(f"label={label!r} is not a MyST label (letters, digits, '-', '_')")
        self._section = label
        return self

    def setting(self, cfg) -> "Claims":
        """The configuration(s) the following checks measured (a :class:`~mmcl.model.config.SyntheticConfig`
        or a list of them; ``None`` clears it): the register evaluates each row's statement's premises
        there.  A call's own ``setting=`` overrides it."""
        self._setting = None if cfg is None else _check_setting(cfg)
        return self

    def constants(self, c_ell: Optional[float] = None) -> "Claims":
        """The constants the following rows' premises are evaluated with: ``c_ell`` the ``C_l`` of Lemma
        D.1 that items 4c and Lemma D.4's requirement take (a run's measured value, e.g. at ``T1``);
        ``None`` returns to the paper's 1.01."""
        self._acfg = AssumptionConfig() if c_ell is None else AssumptionConfig(c_ell=c_ell)
        return self

    def upper(self, claim: str, *, paper: str, verdict: str = None, observed, bound, strict: bool = False,
              held: Optional[bool] = None, setting=None, premises: str = "", note: str = "", paper_bound: bool = False,
              source: str = MAIN, scale=None) -> None:
        """``observed <= bound`` (``<`` with ``strict=True``), elementwise.  ``scale``: the size the
        bound is judged against for looseness (see the module's docstring), one value or one per
        element; default the observed value."""
        obs = _values(observed, "observed")
        bnd = _broadcast(obs, _values(bound, "bound"), "bound")
        holds = [(o < b) if strict else (o <= b) for o, b in zip(obs, bnd)]
        margins = [_slack(b - o, b) for o, b in zip(obs, bnd)]
        self._record(claim, paper, (verdict, held, setting), "upper", obs, bnd, holds, margins, premises, note,
                     paper_bound, "<" if strict else "<=", source=source, scale=_scales(obs, scale))

    def lower(self, claim: str, *, paper: str, verdict: str = None, observed, bound, strict: bool = False,
              held: Optional[bool] = None, setting=None, premises: str = "", note: str = "", paper_bound: bool = False,
              source: str = MAIN, scale=None) -> None:
        """``observed >= bound`` (``>`` with ``strict=True``), elementwise; ``scale`` as in
        :meth:`upper`."""
        obs = _values(observed, "observed")
        bnd = _broadcast(obs, _values(bound, "bound"), "bound")
        holds = [(o > b) if strict else (o >= b) for o, b in zip(obs, bnd)]
        margins = [_slack(o - b, b) for o, b in zip(obs, bnd)]
        self._record(claim, paper, (verdict, held, setting), "lower", obs, bnd, holds, margins, premises, note,
                     paper_bound, ">" if strict else ">=", source=source, scale=_scales(obs, scale))

    def between(self, claim: str, *, paper: str, verdict: str = None, observed, low, high,
                held: Optional[bool] = None, setting=None, premises: str = "",
                note: str = "", source: str = MAIN, scale=None) -> None:
        """``low <= observed <= high``, elementwise: a range the prose gives ("a few", "between 37 and
        50").  The element closest to either end must lie within 10x of it; with ``scale=`` (the
        spread of the observation over seeds and code paths) the range must instead be at most
        20 times that scale wide, a rule that no run's value decides."""
        obs = _values(observed, "observed")
        lo, hi = float(low), float(high)
        if not lo < hi:
            raise ValueError(f"{claim!r}: low={low!r} must be below high={high!r}")
        holds = [lo <= o <= hi for o in obs]
        width = (hi - lo) / 2
        margins = [min(o - lo, hi - o) / width for o in obs]
        if scale is not None:
            sc = min(_scales(obs, scale))
            if hi - lo > 2 * LOOSE_FACTOR * sc:
                raise ValueError(f"{claim!r}: the range [{lo:g}, {hi:g}] is {(hi - lo) / sc:.3g}x as wide as the "
                                 f"claim's scale {sc:g}; narrow it")
        self._record(claim, paper, (verdict, held, setting), "between", obs, [lo] * len(obs), holds, margins, premises, note,
                     False, f"in [{lo:g}, {hi:g}]", source=source, high=hi, scale=scale)

    def near(self, claim: str, *, paper: str, verdict: str = None, observed, target, tol=None, rtol=None,
             held: Optional[bool] = None, setting=None, premises: str = "", note: str = "", source: str = MAIN) -> None:
        """``|observed - target| <= tol`` (or ``<= rtol * |target|``), elementwise; ``target`` may be an
        array."""
        obs = _values(observed, "observed")
        tgt = _broadcast(obs, _values(target, "target"), "target")
        if (tol is None) == (rtol is None):
            raise ValueError(f"{claim!r}: give exactly one of tol= (absolute) and rtol= (relative to the target)")
        if tol is not None:
            tol = float(tol)
            if not tol > 0:
                raise ValueError(f"tol={tol!r} must be positive")
            tols = [tol] * len(obs)
            wide = [t for t in tgt if t != 0 and tol > abs(t)]
        else:
            rtol = float(rtol)
            if not 0 < rtol <= 1:
                raise ValueError(f"rtol={rtol!r} must be in (0, 1]")
            tols = [rtol * abs(t) for t in tgt]
            wide = [t for t in tgt if t == 0]
        if wide:
            raise ValueError(f"{claim!r}: the tolerance is wider than the target {wide[0]:g} itself, so the check "
                             "cannot tell the value from 0; narrow it, or state a bound with upper()/lower()")
        holds = [abs(o - t) <= e for o, t, e in zip(obs, tgt, tols)]
        margins = [1.0 - abs(o - t) / e for o, t, e in zip(obs, tgt, tols)]
        worst = min(range(len(obs)), key=lambda k: (holds[k], margins[k]))
        self._record(claim, paper, (verdict, held, setting), "near", obs, tgt, holds, margins, premises, note, False,
                            f"within {tols[worst]:g} of", tol=tols[worst], source=source)

    def equal(self, claim: str, *, paper: str, verdict: str = None, observed, value,
              held: Optional[bool] = None, setting=None, premises: str = "", note: str = "", source: str = MAIN) -> None:
        """``observed == value`` exactly, elementwise (counts, flags, exact zeros)."""
        obs = _values(observed, "observed")
        val = _broadcast(obs, _values(value, "value"), "value")
        holds = [o == v for o, v in zip(obs, val)]
        margins = [0.0 if h else -1.0 for h in holds]
        self._record(claim, paper, (verdict, held, setting), "equal", obs, val, holds, margins, premises, note, False, "==",
                            source=source)

    def roundoff(self, claim: str, *, paper: str, observed, tol, verdict: str = None,
                 held: Optional[bool] = None, setting=None, premises: str = "", note: str = "", source: str = MAIN) -> None:
        """An exactness claim: ``observed <= tol``, where ``tol`` is a round-off tolerance (no 10x rule)."""
        if verdict is None and held is None:
            held = True  # an exactness claim states that the identity holds
        obs = _values(observed, "observed")
        tol = float(tol)
        if not tol > 0:
            raise ValueError(f"tol={tol!r} must be positive")
        bnd = [tol] * len(obs)
        holds = [abs(o) <= tol for o in obs]
        margins = [_slack(tol - abs(o), tol) for o in obs]
        self._record(claim, paper, (verdict, held, setting), "roundoff", [abs(o) for o in obs], bnd, holds, margins,
                            premises, note, False, "<= (round-off)", source=source)

    def true(self, claim: str, *, paper: str, verdict: str = None, observed, held: Optional[bool] = None,
             setting=None, premises: str = "", note: str = "", source: str = MAIN) -> None:
        """A yes/no claim (``observed`` a bool or an array of bools, all of which must be true).
        Prefer a quantitative method where the claim has a number."""
        obs = _values(observed, "observed")
        bad = [o for o in obs if o not in (0.0, 1.0)]
        if bad:
            raise ValueError(f"{claim!r}: true() takes booleans, got {bad[0]!r}; use upper/lower/near for numbers")
        holds = [o == 1.0 for o in obs]
        margins = [0.0 if h else -1.0 for h in holds]
        self._record(claim, paper, (verdict, held, setting), "true", obs, [1.0] * len(obs), holds, margins, premises,
                            note, False, "is true", source=source)

    # -- bookkeeping ----------------------------------------------------------------------
    def _record(self, claim, paper, verdict, kind, obs, bnd, holds, margins, premises, note, paper_bound,
                relation, tol=None, source=None, high=None, scale=None) -> None:
        if not isinstance(source, str) or not re.match(r"^[a-z][\w-]*\d{4}[a-z]*$", source or MAIN):
            raise ValueError(f"source={source!r} must be a bibliography key of references.bib, e.g. {MAIN!r}")
        typed, held, setting = verdict
        other = (source or MAIN) != MAIN
        _check_text(claim, paper, typed if typed is not None else "holds", premises if other else "x", other=other)
        verdict, failing, held = self._verdict(claim, paper, typed, held, setting, premises, other)
        worst = min(range(len(obs)), key=lambda k: (holds[k], margins[k]))
        o, b = obs[worst], bnd[worst]
        if any(math.isnan(v) for v in obs):
            raise ClaimFailed(f"{claim} ({paper}): the observed value is NaN")
        if not all(holds):
            n_bad = sum(not h for h in holds)
            raise ClaimFailed(f"claim failed: {claim} ({paper}, verdict {verdict!r}): observed {o:.6g} {relation} "
                              f"{b:.6g} does not hold" + (f" ({n_bad} of {len(obs)} elements)" if len(obs) > 1 else ""))
        ends = [e for e in (b, high) if kind == "between" and e != 0 and scale is None]
        if ends and min(_ratio(o, e) for e in ends) > LOOSE_FACTOR:
            raise ValueError(f"{claim!r}: the range [{b:g}, {high:g}] has no end within 10x of the observed {o:g}; "
                             "narrow it")
        if kind in ("upper", "lower") and not paper_bound:
            # judged against the claim's scale: every element when scale= is given (nothing of the
            # run decides), else the element closest to failing against its observed value
            pairs = [(o, b)] if scale is None else list(zip(scale, bnd))
            for r, bb in pairs:
                ratio = _ratio(r, bb)
                if _near_count(r, bb) or ratio <= LOOSE_FACTOR:
                    continue
                if scale is not None and (bb < r if kind == "upper" else bb > r):
                    continue  # a bound far on the strict side of the claim's scale is tight, not loose
                what = f"the observed {r:g}" if scale is None else f"the claim's scale {r:g}"
                raise ValueError(
                    f"{claim!r}: the bound {bb:g} is {ratio:.3g}x from {what}; a check that loose "
                    "cannot fail for the reason it states. Tighten the bound, give scale= (the spread "
                    "over seeds and code paths, or the magnitude of what is compared) if the observation "
                    "moves from run to run, or pass paper_bound=True if it is the paper's own bound "
                    "(the register then marks it loose)")
        row = Claim(claim=claim, paper=paper, verdict=verdict, kind=kind, observed=o, bound=b,
                    margin=margins[worst], size=len(obs), premises=premises, note=note,
                    paper_bound=bool(paper_bound), section=self._section, chapter=self.chapter, tol=tol,
                    source=source or MAIN, high=high, failing=", ".join(failing), held=held)
        if kind in ("upper", "lower") and paper_bound:
            row.note = (note + "; " if note else "") + f"the paper's bound, {_ratio(o, b):.3g}x from the observed value"
            if _ratio(o, b) > LOOSE_FACTOR and row.verdict in ("holds", "beyond"):
                # a bound this far from the observation cannot fail here: it is no support for the statement
                row.verdict, row.failing = "observation", ""
                row.note += " (too loose to fail here: recorded as a measurement, not as support)"
        self.rows.append(row)
        self._pending.append(row)

    def _verdict(self, claim, paper, typed, held, setting, premises, other):
        """``(verdict, failing premise keys, held)`` of a row (the module docstring's rules)."""
        if typed is not None and typed not in TYPED_VERDICTS:
            raise ValueError(f"verdict={typed!r} is not one of {', '.join(map(repr, TYPED_VERDICTS))} (the verdict "
                             "itself is computed: give held=True/False and the setting)")
        if typed is not None and held is not None and _HELD[typed] is not held:
            raise ValueError(f"{claim!r}: verdict={typed!r} and held={held!r} disagree; give one of them")
        if typed is None and held is None:
            raise ValueError(f"{claim!r}: say what the check observed: held=True (the conclusion of {paper} was borne "
                             "out), held=False (it was not), or verdict='observation' (a measurement of ours)")
        if held is None and typed is not None:
            held = _HELD[typed]
        if not isinstance(held, (bool, type(None))):
            raise ValueError(f"held={held!r} must be True, False or None")
        if other:  # another work's statement: not in the blueprint, its typed verdict stands
            return (typed or ("holds" if held else "outside" if held is False else "observation")), (), held
        cfgs = setting if setting is not None else self._setting
        if setting is not None:
            cfgs = _check_setting(setting)
        computed, failing = blueprint.verdict(held, paper, cfgs, self._acfg)
        if typed in ("fails", "outside") and typed != computed:
            why = (f"the premises {', '.join(failing)} of {paper} fail at the setting" if failing
                   else f"every premise of {paper} holds at the setting")
            raise ValueError(f"{claim!r}: verdict={typed!r} contradicts the premises: {why}, so the verdict is "
                             f"{computed!r}; state held=False and let the register decide")
        return computed, failing, held

    def pending(self) -> List[Claim]:
        """The claims recorded since the last display (and forget them)."""
        out, self._pending = self._pending, []
        return out

    def _install_hook(self) -> None:
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover
            return
        ip = get_ipython()
        if ip is None:
            return
        # one hook per kernel, showing the latest register's rows (a re-run of the set-up cell
        # replaces the register instead of adding a second table)
        for cb in list(ip.events.callbacks.get("post_execute", [])):
            if getattr(cb, "_mmcl_claims", False):
                ip.events.unregister("post_execute", cb)

        def show():
            rows = self.pending()
            if rows:
                from IPython.display import display
                display({"text/html": render_html(rows), "text/plain": render_text(rows)}, raw=True)

        show._mmcl_claims = True  # type: ignore[attr-defined]
        ip.events.register("post_execute", show)


def _check_setting(cfg):
    """A :class:`~mmcl.model.config.SyntheticConfig` or a non-empty list of them (the setting of a row)."""
    cfgs = [cfg] if isinstance(cfg, SyntheticConfig) else cfg
    if not isinstance(cfgs, (list, tuple)) or not cfgs or not all(isinstance(c, SyntheticConfig) for c in cfgs):
        raise ValueError(f"setting must be a SyntheticConfig or a non-empty list of them, got {type(cfg).__name__}")
    return cfg if isinstance(cfg, SyntheticConfig) else list(cfgs)


def _scales(obs: List[float], scale) -> Optional[List[float]]:
    """``scale`` (None, one value, or one per observed value) as one positive finite value per element."""
    if scale is None:
        return None
    vals = _broadcast(obs, _values(scale, "scale"), "scale")
    bad = [v for v in vals if not (math.isfinite(v) and v > 0)]
    if bad:
        raise ValueError(f"scale={bad[0]!r} must be a positive finite number (the claim's typical size)")
    return vals


def _slack(diff: float, bound: float) -> float:
    scale = abs(bound) if bound != 0 else 1.0
    return diff / scale


def _near_count(o: float, b: float) -> bool:
    """A count against a bound one unit away ("at most one of six runs", observed 0): tight."""
    return float(o).is_integer() and float(b).is_integer() and abs(o - b) <= 1


def _ratio(o: float, b: float) -> float:
    """How far a one-sided bound is from the observed value, as a factor (1 = at the bound)."""
    if b == 0:
        return 1.0  # a sign claim (observed <= 0): tight by nature
    if o == 0:
        return math.inf  # an exact zero against a nonzero bound: state it with equal()
    if (o > 0) != (b > 0):
        return 1.0 + abs(o - b) / abs(b)  # opposite signs: 1 plus the distance in units of the bound
    return max(o / b, b / o)


def _check_text(claim, paper, verdict, premises, other=False) -> None:
    if not isinstance(claim, str) or len(claim.strip()) < 8:
        raise ValueError(f"claim={claim!r}: state the claim in words (at least a short sentence)")
    if verdict not in TYPED_VERDICTS:
        raise ValueError(f"verdict={verdict!r} is not one of {', '.join(map(repr, TYPED_VERDICTS))}")
    if other:
        if not isinstance(paper, str) or not OTHER_REF.match(paper):
            raise ValueError(f"paper={paper!r} must name the cited work's statement, e.g. 'Theorem 3.8' or "
                             "'Lemma (the loss is a matrix factorisation)'")
    elif not isinstance(paper, str) or not PAPER_REF.match(paper):
        raise ValueError(f"paper={paper!r} must name the paper's statement, e.g. 'Lemma 5.2', 'Lemma C.11', "
                         "'Theorem 4.2', 'Eq. (13)', 'Sec. 3.3', 'Figure 1', 'Table 1'")
    if verdict in ("fails", "outside") and not (isinstance(premises, str) and premises.strip()):
        raise ValueError(f"{claim!r}: verdict={verdict!r} needs premises=, saying "
                         + ("how the statement's premises held where it failed" if verdict == "fails"
                            else "which of the statement's premises fails where it was measured"))
