"""Figures of the chapter single_stage1 (being moved from the chapter into the library)."""
FIGURES = []
