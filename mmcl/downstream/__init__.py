"""Downstream evaluation (Sec. 3.3, Theorems 4.2/4.3): embeddings and linear heads on the OOD task."""
