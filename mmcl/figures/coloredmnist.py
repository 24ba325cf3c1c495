"""Figures of the chapter coloredmnist (being moved from the chapter into the library)."""
FIGURES = []
