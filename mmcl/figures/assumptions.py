"""Figures of the chapter assumptions (being moved from the chapter into the library)."""
FIGURES = []
