"""The model of Sec. 3 (the book's chapter "The setting"): the configuration, the data model and
its OOD set (explicit d-vectors, or exactly in law by their coordinates in a basis of their span,
``sample_synthetic(cfg, seed, span=True)``, module ``mmcl.model.span``), the encoders and the
InfoNCE losses, and the decomposition of Eq. (11) that turns weights into signal learning
``gamma`` and noise memorisation ``rho``.

Public: every name in a module's ``__all__``; a leading underscore marks what is internal.
"""
