"""Figures: the house style and the save helper (:mod:`mmcl.figures.theme`), and the registry of
every figure the book shows (:mod:`mmcl.figures.registry`).

``style``, ``save_figure``, ``COLORS`` and ``figure_dir`` are imported from here by the library's
experiments, which must not import the registry (the registry imports them)."""
from mmcl.figures.theme import COLORS, FORMATS, STYLE_FILE, figure_dir, save_figure, style

__all__ = ["STYLE_FILE", "FORMATS", "COLORS", "style", "save_figure", "figure_dir"]
