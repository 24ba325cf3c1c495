"""Figures of the chapter side_by_side (being moved from the chapter into the library)."""
FIGURES = []
