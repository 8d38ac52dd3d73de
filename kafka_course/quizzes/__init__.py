"""Question banks, one module per notebook (``nb02.py`` for notebook 02), kept out of the learner's
view: the notebook calls ``course.predict("02", key)`` and ``course.quiz("02")``.

Each bank holds ``QUESTIONS``, a dict from a short key to a ``Question`` whose texts are marked
with ``N_()`` (the package's catalog translates them), and ``RECAP``, the keys of the end quiz.
Right answers are spread over the positions; the distractors are misconceptions people hold.
"""
