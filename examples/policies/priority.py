"""Strict priority, written as a student would: interactive requests first, batch in what is left.

    python -m lanes table --policy-file examples/policies/priority.py

prints the same row as ``python -m lanes table --policies priority``.
"""

from lanes.pool.protocol import Decision


class StrictPriority:
    name = "priority"  # the row's label

    def decide(self, obs):
        free = obs.free
        start = []
        # Waiting requests first, oldest first, as long as slots are free.
        for request in obs.waiting:
            if free == 0:
                break
            start.append(request.id)
            free -= 1
        # Batch jobs from the head of their queue take whatever is left.
        for job in obs.batch_queue:
            if free == 0:
                break
            start.append(job.id)
            free -= 1
        return Decision(start=start)
