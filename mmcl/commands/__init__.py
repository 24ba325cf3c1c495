"""The subcommands of ``mmcl`` that run an experiment and draw its figures (``mmcl sweep``,
``mmcl coloredmnist``).  A command sits above every layer, as :mod:`mmcl.cli` does: it may import the
experiments and the figures, and nothing imports it but :mod:`mmcl.cli`.

Internal: reached through ``mmcl`` on the command line only.
"""
