"""Figures and explorers of the slot pool (:mod:`lanes.pool`)."""
