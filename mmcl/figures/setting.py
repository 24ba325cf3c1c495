"""Figures of the chapter setting (being moved from the chapter into the library)."""
FIGURES = []
