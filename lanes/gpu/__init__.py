"""The engine under the slots: hardware, step costs, chains, batching, KV pool, fairness.

May use :mod:`lanes.pool` and :mod:`lanes.lane`; neither of them imports it.

Modules
-------
transformer  a model's shape and the bytes and FLOPs a step derives from it
hardware     GPU and model catalogue (datasheet figures)
steps        roofline cost of one engine step and a step-level prefill simulator
calibration  a step-time model calibrated on measured GPU steps (profile h200-measured)
measured     load measured step timings (JSONL), fit and check the calibrated model
chains       the eight scheduling chains, each a small calculation
batcher      a micro-batcher on a virtual clock
continuous   static against continuous batching
kvpool       a pool counted in KV blocks, and preemption costs
fairness     token-weighted tenant fairness
replay       request traces replayed: hold times from a step profile, then the slot pool
cli          the ``chains``/``prefill``/``steptime`` subcommands (figures and explorers: :mod:`lanes.display.gpu`)
"""
