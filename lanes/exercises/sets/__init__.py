"""One module per exercise set, ``set_NN.py``, each defining ``SPEC`` (see solutions/AUTHORING.md)."""
