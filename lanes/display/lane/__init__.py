"""Figures and explorers of the interactive lane and the batch job store (:mod:`lanes.lane`)."""
