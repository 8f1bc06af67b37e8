"""Inside the lanes: the interactive lane, the durable batch job store, queueing.

Builds on :mod:`lanes.pool`; knows nothing of the engine.

Modules
-------
interactive   one interactive lane: bounded queue, deadlines, tenants, LIFO, CoDel
jobstore      the batch lane as a durable job system with overflow to a provider API
queueing      M/M/1 formulas and a seeded single-queue simulation (the p99 knee)
service_order one server under FCFS, shortest job first and SRPT: checks the priority formulas
"""
