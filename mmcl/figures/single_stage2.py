"""Figures of the chapter single_stage2 (being moved from the chapter into the library)."""
FIGURES = []
