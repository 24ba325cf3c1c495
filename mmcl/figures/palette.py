"""The one palette of mmcl's figures: every figure module reads its colours from here.

Colours carry meaning across the whole book, so that a reader learns them once (Okabe-Ito hues,
readable by colour-blind viewers):

* the two modalities: :data:`SINGLE` (vermilion) and :data:`MULTI` (blue), on every figure that
  compares them;
* what a network learns: :data:`SIGNAL` (bluish green) against :data:`NOISE` (reddish purple);
* :data:`PAPER_GREY`: the paper's own numbers, bounds and reference lines (chance, a threshold);
* :data:`EXTRA`: further data series (a third curve, a second initialisation);
* :data:`INK`, :data:`BACKGROUND`, :data:`FAINT`, :data:`MID`, :data:`DARK`, :data:`SHADE`: the
  neutral greys of axes lines, separators, hatching and backgrounds;
* :data:`VERDICT`: the verdicts of the book's checks (holds, holds beyond its premises, fails,
  outside the premises, our observation), never used for a data series
  (``tests/test_figures_palette.py`` checks both sets apart), and the colours of the Blueprint
  (:data:`BLUEPRINT`, :data:`BLUEPRINT_INK` and its lines) and of the proof audit's standing
  (:data:`STANDING`) built on them.
"""
from __future__ import annotations

from typing import Dict, Tuple

__all__ = ["SINGLE", "MULTI", "SIGNAL", "NOISE", "PAPER_GREY", "EXTRA", "DATA", "INK", "BACKGROUND",
           "FAINT", "MID", "DARK", "SHADE", "NEUTRAL", "VERDICT", "BLUEPRINT", "BLUEPRINT_INK",
           "GRAPH_EDGE", "GRAPH_TEXT", "GRAPH_MEASURED", "GRAPH_UNMEASURED", "STANDING", "MODE"]

#: Single-modal contrastive learning (augmentations), vermilion.
SINGLE = "#D55E00"
#: Multi-modal contrastive learning (a second, cleaner modality), blue.
MULTI = "#0072B2"
#: The signal a network learns (the direction mu), bluish green.
SIGNAL = "#009E73"
#: The noise a network memorises (the samples' noise patches), reddish purple.
NOISE = "#CC79A7"
#: The paper's grey: its own numbers, its bounds, reference lines (chance, thresholds).
PAPER_GREY = "#444444"
#: Further data series, in order of use: orange, sky blue, dark brown, yellow.
EXTRA: Tuple[str, ...] = ("#E69F00", "#56B4E9", "#7F3800", "#F0E442")
#: Every colour a data series may take.
DATA: Tuple[str, ...] = (SINGLE, MULTI, SIGNAL, NOISE, *EXTRA)
#: The colour of each mode, by the library's mode names.
MODE: Dict[str, str] = {"single": SINGLE, "multi": MULTI}

#: Black: axes lines, markers of no mode, reference curves of a heatmap.
INK = "#000000"
#: White: separators drawn over data, hollow markers, the page.
BACKGROUND = "#FFFFFF"
#: The lightest grey: a background band.
SHADE = "#EBEBEB"
#: A light grey: what is not compared (e.g. a probe on one feature only).
FAINT = "#999999"
#: A middle grey: chance and ceiling lines.
MID = "#777777"
#: A dark grey: edges of boxes and bars, error bars.
DARK = "#555555"
#: Every neutral colour (never a data series' or a verdict's).
NEUTRAL: Tuple[str, ...] = (INK, BACKGROUND, SHADE, FAINT, MID, DARK, PAPER_GREY)

#: The verdicts of the book's checks (the Claims page's words), never a data series' colour.
VERDICT: Dict[str, str] = {"holds": "#007a5a", "beyond": "#2e6da4", "fails": "#c0392b",
                           "outside": "#a06a00", "observation": "#6a5d8f"}
#: The Blueprint's fill of a statement by its one merged verdict (:data:`mmcl.proofs.blueprint.STANDINGS`):
#: refuted in the verdicts' red, then a proof's own gap, resting on one, standing.
BLUEPRINT: Dict[str, str] = {"refuted": VERDICT["fails"], "gap": "#f0955b", "rests on a gap": "#f6d55c",
                             "stands": "#6cc08b", "not audited": "#d0d0d0", "premise": BACKGROUND}
#: The text colour that reads on each of :data:`BLUEPRINT`'s fills.
BLUEPRINT_INK: Dict[str, str] = {k: (BACKGROUND if k == "refuted" else "#111111") for k in BLUEPRINT}
#: The Blueprint's lines: its edges, the words on them, a measured statement's border and another's.
GRAPH_EDGE, GRAPH_TEXT, GRAPH_MEASURED, GRAPH_UNMEASURED = "#8a8a8a", "#333333", "#222222", "#9a9a9a"
#: The proof audit's standing of a proof, from a root failure (dark red) to valid (light blue).
STANDING: Dict[str, str] = {"root": "#d6604d", "inherited": "#f4a582", "outside": "#fddbc7",
                            "valid": "#92c5de", "not-audited": "#dddddd"}
