"""Figures of the chapter multimodal (being moved from the chapter into the library)."""
FIGURES = []
