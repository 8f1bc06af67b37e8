"""The slot pool: identical decode slots shared by interactive requests and a batch backlog.

One run: ``scenario`` -> ``arrivals`` (the draws) -> ``engine`` (the loop, any ``policies`` or a
``protocol`` scheduler) -> ``results`` (and ``day``).  Theory: ``littles``, ``erlang``, ``theory``;
``sweep``, ``table``, ``traces``; the command line: ``cli``.  Figures: :mod:`lanes.display.pool`.
"""
