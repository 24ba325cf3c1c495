"""Figures of the chapter phase_diagrams (being moved from the chapter into the library)."""
FIGURES = []
