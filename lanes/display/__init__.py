"""Display: figures, explorers and the notebook plumbing, apart from the models they show.

The models (:mod:`lanes.pool`, :mod:`lanes.lane`, :mod:`lanes.gpu`) compute; these
modules draw what they computed and import matplotlib, pandas and ipywidgets inside
their functions.  No model imports them, so ``import lanes`` and ``python -m lanes ...``
never load a plotting library.

Modules
-------
pool.plots, pool.widgets   figures and explorers of the slot pool (chapters 1-5)
lane.plots, lane.widgets   the interactive lane and the batch job store (chapter 6)
gpu.plots, gpu.widgets     the engine: steps, chains, batching, KV pool (chapters 7-10)
progress                   a progress line for long loops in a live notebook
savehook                   the Jupyter server's save rules (``server_config/lanes.json``)
"""
