"""What the book found, one line per main claim of the paper: the table that opens the reading guide.

Each :class:`Finding` names a claim of the paper in a few words (ours), the statements whose checks
decide it (``papers``: keys of :mod:`mmcl.proofs.blueprint`, or ``"Figure 1"``, ``"Table 1"``), the
section that shows it and, for an experiment of the paper that the blueprint has no statement for
(Figure 1, Table 1), the text of the check to feature (``row``: a piece of one register row's claim).
For a statement the featured check is always the row that decides its verdict, so that the two
cannot disagree.  Nothing else is typed: :func:`render_findings` takes, from the claims
register's rows of the executed chapters, each statement's measured verdict and the decisive check
(:func:`mmcl.booksupport.blueprint_page.decisive`), and from the blueprint the proof audit and the
gaps the statement rests on.  The Sphinx extension (:mod:`mmcl.booksupport.sphinx_ext`) puts the
table where the reading guide says ``{mmcl-findings}``.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Iterable, List, Mapping, Optional, Sequence, Tuple

from mmcl.booksupport.blueprint_page import decisive, measured
from mmcl.booksupport.claims import MAIN
from mmcl.figures.blueprint_graph import STANDING_COLOR, STANDING_INK
from mmcl.proofs import blueprint as bp

__all__ = ["Finding", "FINDINGS", "featured_row", "render_findings", "finding_verdicts", "finding_standings",
           "finding_stands", "render_verdict"]


@dataclass(frozen=True)
class Finding:
    """One line of the table (module docstring)."""

    claim: str
    papers: Tuple[str, ...]
    where: str
    row: str = ""


FINDINGS: Tuple[Finding, ...] = (
    Finding("Figure 1: multi-modal features generalise out of distribution, single-modal ones do not",
            ("Figure 1",), "sec-side-by-side-figure1", row="under every protocol the multi-modal features win"),
    Finding("Theorem 4.2: single-modal training converges and its OOD error stays bounded away from 0",
            ("Theorem 4.2 (1)", "Theorem 4.2 (2)"), "sec-decisive-errors"),
    Finding("Theorem 4.3: multi-modal training converges and its OOD error goes to 0",
            ("Theorem 4.3 (1)", "Theorem 4.3 (2)"), "sec-decisive-errors"),
    Finding("The mechanism: in stage 1 single-modal learning memorises noise, multi-modal learning learns the "
            "signal", ("Lemma 5.2", "Lemma 5.4"), "sec-phase-race"),
    Finding("The second modality must carry a signal C_mu >= 2.66 times stronger", ("Assumption 4.1 (7)",),
            "sec-phase-cmu", row="the advantage (gap >= 0.05) begins between C_mu = 1 and 2"),
    Finding("Ours: under Sec. 3.3's test signal no linear head on either mode's features errs less than 1/4",
            ("Our Proposition 1",), "sec-window-proposition"),
    Finding("Ours: the paper's comparison holds for test signals in a window of angles with mu, which "
            "excludes Sec. 3.3's", ("Our Theorem 1",), "sec-window-theorem"),
    Finding("Lemma 5.4: multi-modal noise memorisation stays of order 1/sqrt(n)", ("Lemma 5.4",),
            "sec-multimodal-noise"),
    Finding("Table 1: on ColoredMNIST the multi-modal model keeps its accuracy when the colours flip, SimCLR "
            "does not", ("Table 1",), "sec-coloredmnist-gap", row="over SimCLR with colour jitter to about 10 points"),
)


def featured_row(finding: Finding, rows: Sequence[Mapping]) -> Optional[Mapping]:
    """The row to show for ``finding``: the one whose claim contains ``finding.row`` (the first in
    the book's order), else the decisive row of its statements (a refutation first, then support
    inside the premises, ...), else ``None``."""
    best = decisive(rows)
    judged = [s for p in finding.papers for s in bp.resolve(p)]
    if finding.row and not judged:  # an experiment of the paper (Figure 1, Table 1): the row named
        for r in rows:
            if finding.row in r["claim"]:
                return r
        return None
    order = bp.VERDICT_ORDER
    found = [best[s.key] for p in finding.papers for s in bp.resolve(p) if s.key in best]
    found += [r for r in rows if r["paper"] in finding.papers and r["verdict"] in order]
    return min(found, key=lambda r: order.index(r["verdict"])) if found else None


def _verdicts(finding: Finding, counts: Mapping[str, Mapping[str, int]], rows: Sequence[Mapping]) -> List[str]:
    out = []
    for p in finding.papers:
        stmts = bp.resolve(p)
        if stmts:
            for s in stmts:
                v = bp.measured_verdict(counts.get(s.key, {}))
                gaps = bp.rests_on(s.key)
                proof = bp.AUDIT_TEXT[s.audit.status] if s.kind not in ("assumption", "definition") else "a premise"
                if gaps and s.audit.status == "valid":
                    proof += f", resting on gaps in {', '.join(g.replace('Lemma ', '') for g in gaps)}"
                out.append(f"<b>{html.escape(s.key)}</b>: "
                           + (f"<span class='mmcl-verdict mmcl-{v}'>{bp.VERDICT_TEXT[v]}</span>" if v
                              else "measured, no verdict")
                           + f" <small>(proof: {html.escape(proof)})</small>")
        else:  # an experiment of the paper: its rows' verdicts directly
            vs = [r["verdict"] for r in rows if r["paper"] == p and r.get("source", MAIN) == MAIN]
            v = bp.measured_verdict(vs)
            out.append(f"<b>{html.escape(p)}</b>: " + (f"<span class='mmcl-verdict mmcl-{v}'>{bp.VERDICT_TEXT[v]}</span>"
                                                       if v else "measured, no verdict"))
    return out


def render_findings(rows: Iterable[Mapping], links: Optional[Mapping[str, str]] = None,
                    findings: Sequence[Finding] = FINDINGS) -> str:
    """The table, from the register's rows (dicts as the Sphinx extension collects them, each with
    an ``href`` to where it is checked) and ``links`` (``{section label: URL}``)."""
    rows = list(rows)
    counts = measured(rows)
    links = dict(links or {})
    out = ["<table class='mmcl-findings table'><thead><tr><th>the claim</th><th>verdict</th>"
           "<th>the check that decides it</th></tr></thead><tbody>"]
    for f in findings:
        claim = html.escape(f.claim)
        if f.where in links:
            claim = f"<a class='reference internal' href='{html.escape(links[f.where], quote=True)}'>{claim}</a>"
        r = featured_row(f, rows)
        if r is None:
            ev = "&ndash;"
        else:
            text = r["claim"]
            if text.startswith("... "):  # the continuation of the row before it: stands alone here
                text = text[4:5].upper() + text[5:]
            text = html.escape(text)
            if r.get("href"):
                text = f"<a class='reference internal' href='{html.escape(r['href'], quote=True)}'>{text}</a>"
            ev = f"<span class='mmcl-verdict mmcl-{r['verdict']}'>{bp.VERDICT_TEXT[r['verdict']]}</span>: {text}"
        out.append(f"<tr><td>{claim}</td><td>{'<br>'.join(_verdicts(f, counts, rows))}</td><td>{ev}</td></tr>")
    out.append("</tbody></table>")
    return "".join(out)


STANDS = ("holds", "reach-holds")


def finding_verdicts(finding: Finding, rows: Sequence[Mapping]) -> List[str]:
    """The measured verdict of each statement ``finding`` names (an experiment of the paper: of its
    rows), in order; statements measured by no row are left out."""
    rows = list(rows)
    counts = measured(rows)
    out = []
    for p in finding.papers:
        stmts = bp.resolve(p)
        if stmts:
            out += [bp.measured_verdict(counts.get(s.key, {})) for s in stmts]
        else:
            out.append(bp.measured_verdict([r["verdict"] for r in rows
                                            if r["paper"] == p and r.get("source", MAIN) == MAIN]))
    return [v for v in out if v]


def finding_standings(finding: Finding, rows: Sequence[Mapping]) -> List[str]:
    """The Blueprint's one merged verdict (:func:`mmcl.proofs.blueprint.standing`) of each statement
    ``finding`` names that has a proof (premises and the paper's experiments have none: ``[]``), in
    order, from its measured verdict in ``rows``: the word the Blueprint shows for it."""
    counts = measured(list(rows))
    out = []
    for p in finding.papers:
        for s in bp.resolve(p):
            word = bp.standing(s.key, bp.measured_verdict(counts.get(s.key, {})))
            if word != "premise":
                out.append(word)
    return out


def finding_stands(finding: Finding, rows: Sequence[Mapping]) -> Optional[bool]:
    """Whether ``finding`` stands: every statement it names *stands* on the Blueprint, or, for the
    paper's experiments and premises (no proof), every measured verdict holds; ``None`` where
    nothing was measured."""
    words = finding_standings(finding, rows)
    if words:
        return all(w == "stands" for w in words)
    vs = finding_verdicts(finding, rows)
    return all(v in STANDS for v in vs) if vs else None


def _names(items, links) -> str:
    parts = []
    for f, vs in items:
        head, _, rest = f.claim.partition(": ")
        text = rest or head
        text = html.escape(text[:1].upper() + text[1:])
        if f.where in links:
            text = f"<a class='reference internal' href='{html.escape(links[f.where], quote=True)}'>{text}</a>"
        label = "" if head == "Ours" or not rest else f"<b>{html.escape(head)}</b>, "
        if all(v in bp.STANDINGS for v in vs):  # the Blueprint's words, in its colours
            words = [(f"mmcl-standing-{v.replace(' ', '-')}", v,
                      f" style='background:{STANDING_COLOR[v]};color:{STANDING_INK[v]};padding:0 .25em;"
                      "border-radius:3px'") for v in sorted(set(vs), key=bp.STANDINGS.index)]
        else:  # measured verdicts (an experiment of the paper, a premise)
            words = [(f"mmcl-{v}", bp.VERDICT_TEXT[v], "") for v in sorted(set(vs), key=bp.VERDICTS.index)]
        parts.append(f"{label}{text} <span class='mmcl-verdict-words'>("
                     + ", ".join(f"<span class='{c}'{st}>{html.escape(w)}</span>" for c, w, st in words)
                     + ")</span>")
    return "; ".join(parts)


def render_verdict(rows: Iterable[Mapping], links: Optional[Mapping[str, str]] = None,
                   findings: Sequence[Finding] = FINDINGS) -> str:
    """The verdict first, three sentences computed from the register's rows and the proof audit:
    what stands (:func:`finding_stands`: the findings whose statements all *stand* on the Blueprint,
    or whose experiments hold where measured), what does not (the rest, with the number of proofs
    with a root error and of those inheriting one) and what holds instead (our statements), each
    with the Blueprint's word for it, so that the two pages cannot disagree.
    ``links``: ``{section label: URL}``."""
    rows = list(rows)
    links = dict(links or {})
    stands, falls, ours = [], [], []
    for f in findings:
        words = finding_standings(f, rows) or finding_verdicts(f, rows)
        if f.claim.startswith("Ours:"):
            ours.append((f, words))
        elif finding_stands(f, rows):
            stands.append((f, words))
        elif words:
            falls.append((f, words))
    audit = bp.audit_summary()
    root, inherited = len(audit["root"]), len(audit["inherited"])
    out = [f"<div class='mmcl-verdict-summary' data-stands='{len(stands)}' data-falls='{len(falls)}' "
           f"data-ours='{len(ours)}' data-root='{root}' data-inherited='{inherited}'>",
           "<p class='mmcl-verdict-title'>The verdict</p>",
           f"<p><b>What stands.</b> {_names(stands, links)}.</p>",
           f"<p><b>What does not stand as proved.</b> {_names(falls, links)}. Of the paper's proofs, "
           f"<b>{root}</b> have a root error (a step that fails inside their premises) and "
           f"<b>{inherited}</b> more inherit one.</p>",
           f"<p><b>What holds instead.</b> {_names(ours, links)}.</p>",
           "</div>"]
    return "".join(out)
