"""The slot pool: scenario, policies, arrivals, the fast engine, results, calculators.

This part knows nothing of the lane or the engine: it models a fixed number
of identical slots shared by interactive requests and a batch backlog.

Modules
-------
scenario   the frozen :class:`~lanes.pool.scenario.Scenario` (units in field names)
policies   the seven policies and their extensions, keyed by CLI spec
arrivals   the seeded arrival stream shared by every policy of a table
traces     real request traces (shipped Azure hours, CSV files): load, window, scale, resample
engine     the fast event-driven simulator behind :func:`lanes.simulate`
reference  the plain per-tick simulator the fast one is checked against
results    result objects, metrics and tables
littles    Little's law and Poisson-burst calculators
erlang     Erlang B and C, M/M/c waits, square-root staffing, Allen-Cunneen
theory     M/G/1 with the residual life, Cobham, SJF, preemption, conservation, Kingman
sweep      parameter sweeps over scenarios and policies
plots, widgets, cli   figures, explorers and the ``table`` and ``trace`` subcommands
"""
