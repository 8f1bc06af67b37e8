"""Figures and explorers of the engine under the slots (:mod:`lanes.gpu`)."""
