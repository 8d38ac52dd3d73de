"""Instructor decks built from the course notebooks (``python -m slides.build``)."""
