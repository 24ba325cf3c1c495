"""Figures of the chapter alternating_gd (being moved from the chapter into the library)."""
FIGURES = []
