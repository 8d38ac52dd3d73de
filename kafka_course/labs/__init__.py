"""The automatic checks of the labs, one module per lab (``labs/NN-slug/`` in the repository).

Each module's ``check()`` is called from the last cell of the lab's starter and
solution notebooks; it prints what passed and raises ``CheckFailed`` otherwise.
"""
