"""Figures: the house style and the save helper (:mod:`mmcl.figures.theme`), and the registry of
every figure the book shows (:mod:`mmcl.figures.registry`).

``style``, ``save_figure``, ``COLORS`` and ``figure_dir`` are imported from here by the chapter
modules and the commands (and the functions are documented under this package); nothing below the
figures layer draws.

Public: ``style``, ``save_figure``, ``COLORS``, the registry and each chapter module's drawing
functions; a chapter module's sizes and runs are in ``mmcl.experiments.<chapter>``, not here.
"""
from mmcl.figures.theme import COLORS, FORMATS, STYLE_FILE, figure_dir, save_figure, style

__all__ = ["STYLE_FILE", "FORMATS", "COLORS", "style", "save_figure", "figure_dir"]
