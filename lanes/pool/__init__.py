"""The slot pool: identical decode slots shared by interactive requests and a batch backlog.

Models: ``scenario`` (the workload, the pool, the clock), ``policies`` (the
seven rules and their extensions), ``arrivals`` (the seeded draws),
``engine`` (the one simulator loop), ``results``, ``protocol`` (the interface
a student's scheduler is written against), ``traces``, ``littles``, ``erlang``, ``theory`` (M/G/1 with the residual life, Cobham,
SJF, preemption, conservation, Kingman) and ``sweep``.
The command line: ``cli``.  Figures and explorers: :mod:`lanes.display.pool`.
"""
