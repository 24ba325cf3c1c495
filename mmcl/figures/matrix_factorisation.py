"""Figures of the chapter matrix_factorisation (being moved from the chapter into the library)."""
FIGURES = []
