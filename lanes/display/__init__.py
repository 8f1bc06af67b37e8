"""Display: figures, explorers and the notebook plumbing, apart from the models they show.

The models (:mod:`lanes.pool`, :mod:`lanes.lane`, :mod:`lanes.gpu`) compute; these
modules draw what they computed and import matplotlib, pandas and ipywidgets inside
their functions.  No model imports them, so ``import lanes`` and ``python -m lanes ...``
never load a plotting library.

Modules
-------
explorers                  every explorer defined once: controls, model call, charts (standard library only)
svg                        those charts drawn as SVG (the web book's live explorers, in Pyodide)
pool.plots, pool.widgets   figures of the slot pool (chapters 1-5); ``widgets.lab`` gives an explorer its JupyterLab form
lane.plots, lane.widgets   the interactive lane and the batch job store (chapter 6)
gpu.plots, gpu.widgets     the engine: steps, chains, batching, KV pool (chapters 7-10)
progress                   a progress line for long loops in a live notebook
savehook                   the Jupyter server's save rules (``server_config/lanes.json``)
"""
