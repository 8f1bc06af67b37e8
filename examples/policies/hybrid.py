"""Reserve 8 slots for interactive traffic and preempt batch when even those run out.

    python -m lanes table --policy-file examples/policies/hybrid.py

prints the same row as ``python -m lanes table --policies hybrid:8``.
"""

from lanes.pool.protocol import Decision

RESERVE = 8  # slots batch must leave free when it starts


class ReservePlusPreemption:
    name = "hybrid:8"  # the row's label: the built-in policy's spec, as in the table

    def decide(self, obs):
        free = obs.free
        # 1. Too many requests for the free slots: evict running batch jobs,
        #    the most recently started first (they lose the least work).
        #    Jobs that started in the same tick go in the order they started.
        evict = []
        need = len(obs.waiting) - free
        if need > 0:
            batch = [job for job in obs.running if job.kind == "batch"]
            batch.sort(key=lambda job: -job.start)  # a stable sort keeps ties in order
            evict = [job.id for job in batch[:need]]
            free += len(evict)
        # 2. Requests take free slots, oldest first.
        start = []
        for request in obs.waiting:
            if free == 0:
                break
            start.append(request.id)
            free -= 1
        # 3. Batch starts only while more than RESERVE slots stay free.  An
        #    evicted job is back at the head of the queue, the last one first.
        queue = [job_id for job_id in reversed(evict)] + [job.id for job in obs.batch_queue[:free]]
        for job_id in queue:
            if free <= RESERVE:
                break
            start.append(job_id)
            free -= 1
        return Decision(start=start, evict=evict)
