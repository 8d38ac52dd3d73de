"""The course's language: English, or the language of a translated notebook or lab (``es``, ``pt-BR``).

Every sentence the package shows a learner (a lab check's verdict, a skip, the preflight,
the quiz's buttons) is written in English and passed through ``_()``::

    print(_("{count} problem(s) to fix before you go on.").format(count=len(blocking)))

The English text is the key; its translation lives in ``kafka_course/locales/<lang>.po``,
a gettext catalog (``translations/`` holds the notebooks' catalogs). The language is,
in order: ``set_language()``, the ``COURSE_LANG`` environment variable, the notebook's
own metadata (``metadata.course.language``, which the translation build writes; Jupyter's
server tells a kernel its notebook in ``JPY_SESSION_NAME``), then where the kernel runs:
a notebook in ``notebooks/es/`` or a lab in ``labs/<lab>/es/`` runs in that folder (what
papermill, nbval and nbconvert give a kernel), so it speaks Spanish without asking. A
sentence without a translation stays in English; the tests make sure none is missing.
Adding a language is a new catalog.

A language is named as the web names it (``es``, ``pt-BR``), which is also the name of its
folders and catalog. ``COURSE_LANG`` may be written as a POSIX locale too (``pt_BR.UTF-8``,
``es_ES``) or as a bare language (``pt``), which is the course's one variant of it.
"""

from __future__ import annotations

import os
from functools import lru_cache, cache
from pathlib import Path

__all__ = ["LANGUAGES", "N_", "_", "language", "set_language", "spoken"]

LOCALES = Path(__file__).resolve().parent / "locales"
# English is the source; every other language is a catalog in locales/ (a new one needs no code)
LANGUAGES = ("en", *sorted(path.stem for path in LOCALES.glob("*.po")))
_chosen: str | None = None


def set_language(lang: str | None) -> None:
    """Speak ``lang`` from now on (``None``: back to the environment and the folder)."""
    global _chosen
    known = None if lang is None else spoken(lang)
    if lang is not None and known is None:
        raise ValueError(f"the course speaks {', '.join(LANGUAGES)}, not {lang!r}")
    _chosen = known


def spoken(name: str) -> str | None:
    """The course's language that ``name`` asks for: ``pt-BR``, ``pt_BR``, ``pt_BR.UTF-8`` and ``pt``
    all ask for ``pt-BR``; ``es_ES.UTF-8`` for ``es``. ``None`` when the course does not speak it."""
    lang, _, region = name.split(".")[0].split("@")[0].replace("_", "-").partition("-")
    lang, region = lang.lower(), region.upper()
    for wanted in (f"{lang}-{region}", lang):
        if wanted in LANGUAGES:
            return wanted
    variants = [known for known in LANGUAGES if known.startswith(f"{lang}-")]
    return variants[0] if len(variants) == 1 else None


@lru_cache(maxsize=8)
def notebook_language(path: str) -> str | None:
    """``metadata.course.language`` of the notebook at ``path``, if it has one the course speaks."""
    import json
    try:
        with open(path, encoding="utf-8") as f:
            said = json.load(f).get("metadata", {}).get("course", {}).get("language")
    except (OSError, ValueError, AttributeError):
        return None
    return said if said in LANGUAGES else None


def language() -> str:
    """The language to speak now: ``set_language()``, ``COURSE_LANG``, the notebook's metadata,
    or the notebook's folder."""
    if _chosen:
        return _chosen
    wanted = spoken(os.environ.get("COURSE_LANG", ""))
    if wanted:
        return wanted
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(".ipynb") and (said := notebook_language(session)):
        return said
    here = Path.cwd()
    for folder in (here.name, here.parent.name):  # notebooks/pt-BR, labs/02-partitioner/es, notebooks/es/solutions
        if folder in LANGUAGES:
            return folder
    return "en"


@cache
def catalog(lang: str) -> dict[str, str]:
    """English -> ``lang`` for every translated, non-fuzzy entry of the language's catalog."""
    path = LOCALES / f"{lang}.po"
    if lang == "en" or not path.exists():
        return {}
    from babel.messages.pofile import read_po
    with path.open("rb") as f:
        messages = read_po(f)
    # A plural entry's id and string are tuples; the package's sentences have none, so only str pairs count.
    return {m.id: m.string for m in messages
            if isinstance(m.id, str) and isinstance(m.string, str) and m.id and m.string and not m.fuzzy}


def _(text: str) -> str:
    """``text`` in the course's language (itself when it has no translation)."""
    lang = language()
    return text if lang == "en" else catalog(lang).get(text, text)


def N_(text: str) -> str:
    """Mark ``text`` for the catalog without translating it now (a question bank, a table):
    whoever shows it passes it through ``_()`` at that moment, in the language of that moment."""
    return text
