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
  (:data:`AUDIT_FILL`, :data:`VERDICT_STROKE`) and of the proof audit's standing
  (:data:`STANDING`) built on them.
"""
from __future__ import annotations

from typing import Dict, Tuple

__all__ = ["SINGLE", "MULTI", "SIGNAL", "NOISE", "PAPER_GREY", "EXTRA", "DATA", "INK", "BACKGROUND",
           "FAINT", "MID", "DARK", "SHADE", "NEUTRAL", "VERDICT", "AUDIT_FILL", "VERDICT_STROKE",
           "STANDING", "MODE"]

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
#: The Blueprint's fill of a statement by its proof audit (light tints of the verdicts).
AUDIT_FILL: Dict[str, str] = {"valid": "#cfe8dc", "gap-inside": "#f4c7c0", "gap-outside": "#f9e2b0",
                              "not-audited": "#eeeeee"}
#: The Blueprint's border of a statement by its measured verdict, ``(colour, width, dash)``
#: (``""``: none measured).
VERDICT_STROKE: Dict[str, Tuple[str, float, str]] = {
    "holds": (VERDICT["holds"], 3.0, ""), "reach-holds": (VERDICT["holds"], 3.0, "6,2"),
    "beyond": (VERDICT["beyond"], 3.0, ""), "fails": (VERDICT["fails"], 3.5, ""),
    "reach-fails": (VERDICT["fails"], 3.5, "6,2"), "outside": (VERDICT["outside"], 2.5, "5,3"),
    "": ("#888888", 1.0, "")}
#: The proof audit's standing of a proof, from a root failure (dark red) to valid (light blue).
STANDING: Dict[str, str] = {"root": "#d6604d", "inherited": "#f4a582", "outside": "#fddbc7",
                            "valid": "#92c5de", "not-audited": "#dddddd"}
