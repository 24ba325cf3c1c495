"""Downstream evaluation (Sec. 3.3, Theorems 4.2/4.3): embeddings and linear heads on the OOD task.

Public: every name in a module's ``__all__`` (``evaluation``, ``probe``, ``response``); a leading
underscore marks what is internal.
"""
