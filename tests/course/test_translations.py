"""The translated editions (Spanish, ``es``; Brazilian Portuguese, ``pt-BR``, being written): built from
the English notebooks and gettext catalogs, never edited by hand. Every test goes over the catalogs a
language has, so a language whose catalogs are only partly written is checked as far as it goes.

- Every catalog is complete and current: a cell without a translation, or whose English
  changed after it was translated (stale), fails; so do committed translated notebooks
  that differ from what ``python -m translations.build`` writes (drift).
- The package's own sentences (``kafka_course.i18n``) all have a translation with the same
  placeholders, and the course speaks the language of the folder a notebook runs in.
- Each language's text follows its glossary (``translations/<lang>/GLOSSARY.md``).
- A translated code cell is the English code, token for token, once comments and the words of
  strings are set aside: the English notebook's run vouches for the translation's code.
- Every Spanish notebook and lab solution runs under nbval and under papermill (the lessons'
  papermill run is the deck build's, checked in tests/slides; the lab solutions' and worked
  solutions' are here, and must speak Spanish). A Spanish lab starter fails its check, in Spanish.
  Another language, its code vouched by the English run, runs one lesson under nbval and one lab
  starter, to see what it prints.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from kafka_course import i18n
from tests.course.english import SPANISH_CLUSTER_STARTED, english_lines, unexpected_english
from tests.course.test_notebooks import run_timeout, timed
from translations import build, catalogs
from translations.notes import documents as notes_of

ROOT = Path(__file__).resolve().parents[2]
PAIRS = [pair for lang in build.languages() for pair in build.pairs(lang)]
ALL_STARTERS = [p.output for p in PAIRS  # labs/02-partitioner/es/lab02-partitioner-es.ipynb
                if p.source.parent.parent.name == "labs" and not p.source.stem.endswith("-solution")]
STARTERS = [path for path in ALL_STARTERS if "es" in path.parts]
RUNNABLE = [p.output for p in PAIRS if p.lang == "es" and p.output not in STARTERS]


def name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_there_is_a_spanish_edition():
    assert "es" in build.languages() and PAIRS
    assert (ROOT / "notebooks" / "es" / "00-setup-and-tour-es.ipynb").exists()


def test_every_translation_is_complete_current_and_built():
    found = build.check()
    assert found == [], "\n".join(found)


def _pair_with_source(pair: build.Pair, tmp_path: Path, change) -> build.Pair:
    nb = nbformat.read(pair.source, as_version=4)
    change(nb)
    source = tmp_path / pair.source.name
    nbformat.write(nb, source)
    return build.Pair(pair.lang, source, pair.catalog, tmp_path / "out.ipynb")


def test_a_changed_english_cell_makes_its_translation_stale(tmp_path, monkeypatch):
    pair = next(p for p in PAIRS if p.name == "notebooks/00-setup-and-tour.ipynb")
    monkeypatch.setattr(catalogs, "REPO", tmp_path.parent)  # names relative to somewhere that holds tmp_path

    def edit(nb):
        cell = next(c for c in nb.cells if c.cell_type == "markdown")
        cell.source += "\n\nOne more sentence."
    stale = build.problems(_pair_with_source(pair, tmp_path, edit))
    assert len(stale) == 1 and "stale" in stale[0]

    def add(nb):
        nb.cells.append(nbformat.v4.new_markdown_cell("A new paragraph.", id="newcell1"))
    missing = build.problems(_pair_with_source(pair, tmp_path, add))
    assert missing == [f"{tmp_path.name}/{pair.source.name}, markdown cell newcell1: no es translation"]


def test_update_keeps_an_old_translation_as_fuzzy_with_the_english_it_was_made_from(tmp_path, monkeypatch):
    pair = next(p for p in PAIRS if p.name == "notebooks/00-setup-and-tour.ipynb")
    catalog = tmp_path / "es" / "copy.po"
    catalog.parent.mkdir()
    shutil.copy(pair.catalog, catalog)
    monkeypatch.setattr(catalogs, "HERE", tmp_path)
    monkeypatch.setattr(catalogs, "REPO", tmp_path.parent)

    def edit(nb):
        next(c for c in nb.cells if c.id == "d8619c33").source += " (edited)"
    changed = _pair_with_source(pair, tmp_path, edit)
    changed = build.Pair("es", changed.source, catalog, changed.output)
    said = build.update(changed)
    assert said == [f"{tmp_path.name}/{pair.source.name}: cell d8619c33 changed since it was translated "
                    "(marked fuzzy)"]
    entry = next(m for m in build.load(catalog) if m.context == "d8619c33")
    assert entry.fuzzy and entry.string.startswith("Cada mensaje")
    english = next(c.source for c in nbformat.read(pair.source, as_version=4).cells if c.id == "d8619c33")
    assert catalogs.previous_ids(catalog) == {"d8619c33": english}, "the translator sees what the English was"
    build.update(changed)  # a second update keeps it
    assert catalogs.previous_ids(catalog) == {"d8619c33": english}
    assert any("fuzzy" in line for line in build.problems(changed))


def test_a_hand_edited_translated_notebook_is_drift(tmp_path, monkeypatch):
    """check() compares every committed translation with what the build writes."""
    pair = PAIRS[0]
    edited = tmp_path / pair.output.name
    edited.write_text(pair.output.read_text().replace("Kafka", "Kafká", 1))
    moved = build.Pair(pair.lang, pair.source, pair.catalog, edited)
    monkeypatch.setattr(build, "everything", lambda lang: [moved] if lang == pair.lang else [])
    found = build.check(pair.lang)
    assert found == [f"{edited} is not what the build writes: run "
                     "`python -m translations.build` and commit the result"]
    edited.write_text(build.rendered(moved))
    assert build.check(pair.lang) == []


def test_a_new_language_is_a_new_folder_of_catalogs_not_new_code(tmp_path, monkeypatch):
    """Brazilian Portuguese, tried on a scratch copy: `add` writes the catalog, a translator fills it,
    `check` names what is missing until then, and `build` writes notebooks/pt-BR/."""
    (tmp_path / "translations").mkdir()
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / "00-setup-and-tour.ipynb", tmp_path / "notebooks")
    monkeypatch.setattr(catalogs, "HERE", tmp_path / "translations")
    monkeypatch.setattr(catalogs, "REPO", tmp_path)
    monkeypatch.chdir(tmp_path)
    assert build.main(["add", "pt-BR", "notebooks/00-setup-and-tour.ipynb"]) == 0
    assert build.languages() == ["pt-BR"]
    pair, = build.pairs("pt-BR")
    assert pair.catalog == tmp_path / "translations" / "pt-BR" / "notebooks" / "00-setup-and-tour.po"
    assert b'"Language: pt_BR' in pair.catalog.read_bytes(), "gettext's own name for the locale"
    missing = build.check("pt-BR", [pair])
    assert missing and all("no pt-BR translation" in line for line in missing)
    catalog = build.load(pair.catalog)
    for entry in catalog:
        if entry.id:
            code = "code cell" in entry.auto_comments  # what a translator would write: code keeps its code
            entry.string = ("# [pt-BR]\n" if code else "[pt-BR] ") + entry.id
    build.save(catalog, pair.catalog)
    assert build.check("pt-BR", [pair]) != [], "built nothing yet: the notebook must be missing"
    assert build.build("pt-BR", [pair]) == [tmp_path / "notebooks" / "pt-BR" / "00-setup-and-tour-pt-BR.ipynb"]
    assert build.check("pt-BR", [pair]) == []
    built = nbformat.read(pair.output, as_version=4)
    assert built.metadata["course"]["language"] == "pt-BR"
    assert any(c.source.startswith("[pt-BR] ") for c in built.cells if c.cell_type == "markdown")


def test_a_link_to_a_notebook_not_translated_yet_leads_to_the_english_one():
    """A translator writes every link in the language's folders; until the target is translated too,
    the build points the link at the English notebook."""
    folder = ROOT / "notebooks" / "pt-BR"
    lab = "../../labs/02-partitioner/pt-BR/lab02-partitioner-pt-BR.ipynb"
    said = catalogs.point_links(f"[o laboratório]({lab}) e [a solução](solutions/02-topics-partitions-offsets.ipynb)",
                                folder, "pt-BR", {})
    assert said == ("[o laboratório](../../labs/02-partitioner/lab02-partitioner.ipynb) e "
                    "[a solução](../solutions/02-topics-partitions-offsets.ipynb)")
    translated = {folder / "solutions" / "02-topics-partitions-offsets.ipynb":
                  folder / "solutions" / "02-topics-partitions-offsets-pt-BR.ipynb"}
    assert catalogs.point_links("[a solução](solutions/02-topics-partitions-offsets.ipynb)", folder, "pt-BR",
                                translated) == "[a solução](solutions/02-topics-partitions-offsets-pt-BR.ipynb)"
    assert catalogs.point_links("[x](solutions/99-none.ipynb)", folder, "pt-BR", {}) == "[x](solutions/99-none.ipynb)"


# -- a translated code cell runs the English code ------------------------------------------------------
@pytest.mark.parametrize("lang", build.languages())
def test_a_translated_code_cell_is_the_english_code_but_for_comments_and_words(lang):
    """So the English notebook's run vouches for the translation's code (a language needs no run of its own)."""
    found = [line for pair in build.pairs(lang) if pair.source.exists()
             for line in build.code_problems(pair, catalogs.translatable_cells(pair.source)[1])]
    assert found == [], "\n".join(found)


def test_the_code_comparison_sets_aside_comments_and_words_only():
    english = 'left = course.consume_all(prices)  # what compaction kept\nprint(len(left), f"{n:>5} records of {k}")\n'
    same = ('# o que a compactação manteve\nleft = course.consume_all(prices)\n'
            'print(len(left), f"{k}: {n:>5} "\n      "mensagens")\n')
    assert catalogs.code_difference(english, same) == ""
    for other in ('left = course.consume_all(prices)\nprint("restam", len(left), f"{n:>5} de {k}")\n',
                  'left = course.consume_all(precos)\nprint(len(left), f"{n:>5} de {k}")\n',
                  'left = course.consume_all(prices)\nprint(len(left), f"{n:>6} de {k}")\n',
                  'left = course.consume_all(prices)\nprint(len(left), f"{n:>5} de {k}", end="")\n'):
        assert catalogs.code_difference(english, other) != "", other
    assert catalogs.code_difference('!ls "a b"', '!ls "a b"') == ""


# -- the package's sentences -----------------------------------------------------------------------
@pytest.mark.parametrize("lang", build.languages())
def test_every_sentence_of_the_package_has_a_translation_with_the_same_placeholders(lang):
    """Every language with a notebook, or with a package catalog (``kafka_course/locales/<lang>.po``)."""
    assert build.package_problems(lang) == []
    assert len(build.package_messages()) > 50


def test_a_package_catalog_with_other_placeholders_or_gaps_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(catalogs, "REPO", tmp_path)
    path = tmp_path / "pt-BR.po"
    catalog = catalogs.new_catalog("pt-BR")
    catalog.add("{count} failed", "{número} falharam")
    catalog.add("Ready for the course.", "Pronto para o curso.", flags=["fuzzy"])
    build.save(catalog, path)
    assert build.sentence_problems("pt-BR", path, ["{count} failed", "Ready for the course.", "check"]) == [
        "pt-BR.po: the translation of '{count} failed' has other placeholders",
        "pt-BR.po: 'Ready for the course.' is marked fuzzy", "pt-BR.po: no pt-BR translation of 'check'"]


def test_the_course_speaks_the_language_of_the_folder_or_of_course_lang(tmp_path, monkeypatch):
    from kafka_course.checks import Report
    monkeypatch.delenv("COURSE_LANG", raising=False)
    assert i18n.language() == "en"
    for folder in ("notebooks/es", "labs/02-partitioner/es", "notebooks/es/solutions"):
        (tmp_path / folder).mkdir(parents=True)
        monkeypatch.chdir(tmp_path / folder)
        assert i18n.language() == "es", folder
    assert i18n._("Ready for the course.") == "Listo para el curso."
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COURSE_LANG", "es_ES.UTF-8")
    report = Report("t")
    report.check(True, "ok", "")
    report.check(False, "", "wrong")
    assert report.summary() == "1 de 2 comprobaciones pasaron, 1 con fallo."
    monkeypatch.setenv("COURSE_LANG", "fr")  # no catalog: English
    assert i18n.language() == "en" and i18n._("Ready for the course.") == "Ready for the course."


# The few sentences the Portuguese tests below print, for when kafka_course/locales/pt-BR.po is not written yet.
PORTUGUESE = {"Ready for the course.": "Pronto para o curso.", "{count} failed": "{count} com falha",
              "{passed} of {total} passed, {rest}.": "{passed} de {total} passaram, {rest}.",
              "check": "verificação", "checks": "verificações",
              "partition {partition}: leader {leader}, replicas {replicas}, in sync {isr}":
                  "partição {partition}: líder {leader}, réplicas {replicas}, sincronizadas {isr}",
              "external Kafka cluster": "cluster Kafka externo", "{kind} at {servers}": "{kind} em {servers}",
              "revoked": "revogadas", "assigned": "atribuídas", "left": "saiu"}


@pytest.fixture
def portuguese(tmp_path, monkeypatch):
    """The course with a pt-BR catalog: the real one when it is written, else the sentences above."""
    locales = tmp_path / "locales"
    locales.mkdir()
    shutil.copy(i18n.LOCALES / "es.po", locales)
    real = i18n.LOCALES / "pt-BR.po"
    if real.exists():
        shutil.copy(real, locales)
    else:
        catalog = catalogs.new_catalog("pt-BR")
        for english, said in PORTUGUESE.items():
            catalog.add(english, said)
        build.save(catalog, locales / "pt-BR.po")
    monkeypatch.setattr(i18n, "LOCALES", locales)
    monkeypatch.setattr(i18n, "LANGUAGES", ("en", "es", "pt-BR"))
    monkeypatch.delenv("COURSE_LANG", raising=False)
    i18n.catalog.cache_clear()
    yield i18n.catalog("pt-BR")
    i18n.set_language(None)
    i18n.catalog.cache_clear()


def test_the_course_speaks_brazilian_portuguese_in_its_folders_and_by_its_names(portuguese, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert i18n.language() == "en"
    for folder in ("notebooks/pt-BR", "labs/02-partitioner/pt-BR", "notebooks/pt-BR/solutions"):
        (tmp_path / folder).mkdir(parents=True)
        monkeypatch.chdir(tmp_path / folder)
        assert i18n.language() == "pt-BR", folder
    assert i18n._("Ready for the course.") == portuguese["Ready for the course."] != "Ready for the course."
    monkeypatch.chdir(tmp_path)
    for name in ("pt-BR", "pt_BR", "pt_BR.UTF-8", "pt", "PT_br.utf8"):
        monkeypatch.setenv("COURSE_LANG", name)
        assert i18n.language() == "pt-BR", name
    monkeypatch.setenv("COURSE_LANG", "es_ES.UTF-8")
    assert i18n.language() == "es", "es_ES is still Spanish, not cut to a region the course lacks"
    monkeypatch.delenv("COURSE_LANG")
    i18n.set_language("pt-BR")
    assert i18n.language() == "pt-BR"
    i18n.set_language(None)
    with pytest.raises(ValueError, match="not 'fr'"):
        i18n.set_language("fr")
    built = tmp_path / "moved-out-of-pt-BR.ipynb"  # the notebook's metadata, as the build writes it
    nb = nbformat.v4.new_notebook(metadata={"course": {"language": "pt-BR"}})
    nbformat.write(nb, built)
    monkeypatch.setenv("JPY_SESSION_NAME", str(built))
    assert i18n.language() == "pt-BR"


def test_checks_and_helpers_speak_brazilian_portuguese(portuguese, monkeypatch):
    from kafka_course.checks import Report
    from kafka_course.handle import ClusterHandle, PartitionState
    from kafka_course.members import EVENTS
    monkeypatch.setenv("COURSE_LANG", "pt_BR.UTF-8")
    report = Report("t")
    report.check(True, "ok", "")
    report.check(False, "", "wrong")
    said = [report.summary(), str(PartitionState(0, 1, (1, 2), (1,))), repr(ClusterHandle("127.0.0.1:1", None)),
            *(i18n._(w) for w in EVENTS.values())]
    monkeypatch.setenv("COURSE_LANG", "en")
    english = [Report.summary(report), str(PartitionState(0, 1, (1, 2), (1,))),
               repr(ClusterHandle("127.0.0.1:1", None)), *EVENTS.values()]
    assert all(p != e for p, e in zip(said, english)), list(zip(said, english))
    assert [line for text in said for line in english_lines(text)] == []
    if not (ROOT / "kafka_course" / "locales" / "pt-BR.po").exists():
        assert said[:3] == ["1 de 2 verificações passaram, 1 com falha.",
                            "partição 0: líder 1, réplicas [1, 2], sincronizadas [1]",
                            "<cluster Kafka externo em 127.0.0.1:1>"]


def test_in_jupyterlab_the_notebooks_own_metadata_chooses_the_language(tmp_path, monkeypatch):
    """Jupyter's server names a kernel's notebook in JPY_SESSION_NAME: its metadata wins over the folder."""
    monkeypatch.delenv("COURSE_LANG", raising=False)
    monkeypatch.chdir(tmp_path)  # an English folder
    spanish = ROOT / "notebooks" / "es" / "00-setup-and-tour-es.ipynb"
    moved = tmp_path / "copied-out-of-es.ipynb"
    moved.write_text(spanish.read_text())
    monkeypatch.setenv("JPY_SESSION_NAME", str(moved))
    assert i18n.language() == "es"
    monkeypatch.setenv("JPY_SESSION_NAME", str(ROOT / "notebooks" / "00-setup-and-tour.ipynb"))
    assert i18n.language() == "en"  # the English source has no language in its metadata: the folder decides
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "gone.ipynb"))
    assert i18n.language() == "en"


# -- the glossary ------------------------------------------------------------------------------------
def avoided(lang: str) -> dict[str, str]:
    """Each variant the glossary says to avoid -> the term to use."""
    rows = [line.split("|")[1:-1] for line in (catalogs.HERE / lang / "GLOSSARY.md").read_text().splitlines()
            if line.startswith("| ") and not line.startswith("| English") and not line.startswith("|---")]
    return {bad.strip(): use.strip() for _, use, bads in rows for bad in bads.split(",") if bad.strip()}


def prose(text: str) -> str:
    """Text without code: fenced blocks and `inline code` are not prose."""
    return re.sub(r"`[^`]*`", " ", re.sub(r"```.*?```", " ", text, flags=re.S))


def glossary_slips(lang: str, texts: list[tuple[str, str]]) -> list[str]:
    """Each (where, text) that uses a variant ``lang``'s glossary rules out, as 'where: word (use ...)'."""
    bad = avoided(lang)
    return [f"{where}: {word!r} (the glossary says {use})" for where, text in texts for word, use in bad.items()
            if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", prose(text), re.IGNORECASE)]


GLOSSARIES = [lang for lang in build.languages() if (catalogs.HERE / lang / "GLOSSARY.md").exists()]


@pytest.mark.parametrize("lang", GLOSSARIES)
def test_the_translated_text_follows_the_glossary(lang):
    """Over the markdown cells, the package's sentences and the speaker notes the language has."""
    texts = [(pair.name, m.string) for pair in build.pairs(lang) for m in build.load(pair.catalog)
             if m.id and "markdown cell" in m.auto_comments]
    if build.package_catalog(lang).exists():
        texts += [(catalogs.shown(build.package_catalog(lang)), m.string)
                  for m in build.load(build.package_catalog(lang)) if m.id]
    notes = [n.catalog for n in notes_of(lang)] + sorted((catalogs.HERE / lang / "instructor" / "notes").glob("*.po"))
    texts += [(catalogs.shown(path), m.string) for path in dict.fromkeys(notes) for m in build.load(path) if m.id]
    found = glossary_slips(lang, texts)
    assert found == [], "\n".join(found)


def test_each_glossary_rules_out_its_own_false_friends():
    assert {"es", "pt-BR"} <= set(GLOSSARIES)
    spanish, portuguese = avoided("es"), avoided("pt-BR")
    assert "tópico" in spanish and "desplazamiento" in spanish
    assert {"deslocamento", "caderno", "ficheiro", "clúster", "offset comprometido", "grupo consumidor"} <= set(
        portuguese)
    assert "tópico" not in portuguese and "cluster" not in portuguese, "what one language avoids the other uses"
    said = [("x.po", "Abra o caderno e leia o `deslocamento`: o deslocamento do tópico.")]
    assert glossary_slips("pt-BR", said) == ["x.po: 'deslocamento' (the glossary says offset (o offset))",
                                             "x.po: 'caderno' (the glossary says notebook)"], "code is not prose"


# -- run, as the English ones are -------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("path", timed(RUNNABLE))
def test_spanish_notebooks_run_under_nbval(path):
    from tests.course.test_notebooks import run_nbval
    done = run_nbval(path)
    assert done.returncode == 0, f"nbval failed for {name(path)}:\n{done.stdout[-6000:]}"


def papermill(path: Path, out: Path):
    """Run ``path`` with papermill in its own folder (so it speaks that folder's language); its result and output."""
    from tests.course.test_notebooks import once_more_if_spark_was_late
    done = once_more_if_spark_was_late(path, lambda: subprocess.run(
        [sys.executable, "-m", "papermill", "--cwd", str(path.parent), str(path), str(out / path.name),
         "--no-progress-bar"], capture_output=True, text=True, timeout=run_timeout(path),
        env={**os.environ, "PYTHONPATH": str(ROOT)}), out / path.name)
    return done, nbformat.read(out / path.name, as_version=4)


@pytest.mark.slow
@pytest.mark.parametrize("path", timed([p for p in RUNNABLE if p.relative_to(ROOT).parts[0] == "labs"]))
def test_spanish_lab_solutions_run_under_papermill(path, tmp_path):
    done, executed = papermill(path, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = "".join(o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.outputs)
    assert "comprobaciones pasaron" in printed or "Todas pasaron" in printed, "the check spoke English"
    assert unexpected_english(executed) == []


@pytest.mark.slow
@pytest.mark.parametrize("path", timed([p for p in RUNNABLE if p.parent.name == "solutions"]))
def test_spanish_worked_solutions_run_under_papermill(path, tmp_path):
    done, executed = papermill(path, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = "".join(o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.outputs)
    assert any(s in printed for s in SPANISH_CLUSTER_STARTED), "the course spoke English (or started no broker)"
    assert unexpected_english(executed) == []


@pytest.mark.slow
@pytest.mark.parametrize("path", timed(STARTERS))
def test_an_untouched_spanish_starter_fails_its_check_in_spanish(path, tmp_path):
    said = check_failure(path, tmp_path)
    assert "comprobaciones pasaron" in said, said


def check_failure(path, tmp_path) -> str:
    """Run an untouched starter: its last cell must stop with the check's CheckFailed; what it said."""
    done, executed = papermill(path, tmp_path)
    assert done.returncode != 0
    last = [c for c in executed.cells if c.cell_type == "code"][-1]
    errors = [o for o in last.outputs if o.get("output_type") == "error"]
    assert errors and errors[0]["ename"] == "CheckFailed"
    return errors[0]["evalue"]


# Portuguese function words: none may be one of the detector's English words, or Portuguese would count as English.
PORTUGUESE_WORDS = """a o as os e é de do da dos das em no na nos nas um uma uns umas ao à aos às que se por
para com não mais mas como pelo pela seu sua ser está são foi tem isso isto este esta até já só quando
onde cada outro outra então""".split()  # noqa: SIM905 - reads as prose


# Another language runs one lesson and one lab starter (its code is the English code: see above), to see
# that what the course prints there is in that language.
OTHERS = [lang for lang in build.languages() if lang != "es"]
ONE_LESSON = [p.output for p in PAIRS if p.lang in OTHERS and p.name == "notebooks/00-setup-and-tour.ipynb"]
ONE_STARTER = [next(path for path in ALL_STARTERS if lang in path.parts) for lang in OTHERS
               if any(lang in path.parts for path in ALL_STARTERS)]


@pytest.mark.slow
@pytest.mark.parametrize("path", timed(ONE_LESSON))
def test_one_lesson_of_each_other_language_runs_and_prints_no_english(path, tmp_path):
    done, executed = papermill(path, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert executed.metadata["course"]["language"] in path.parts
    assert unexpected_english(executed) == []


@pytest.mark.slow
@pytest.mark.parametrize("path", timed(ONE_STARTER))
def test_one_untouched_starter_of_each_other_language_fails_its_check_in_that_language(path, tmp_path):
    said = check_failure(path, tmp_path)
    assert english_lines(said) == [] and "checks passed" not in said, said


def test_the_english_detector_takes_no_portuguese_for_english():
    from tests.course.english import ENGLISH
    assert ENGLISH.isdisjoint(PORTUGUESE_WORDS)
    for portuguese in ("partição 0: líder 1, réplicas [1], sincronizadas [1]",
                       "1 de 2 verificações passaram, 1 com falha.",
                       "O consumidor lê as mensagens do tópico e faz commit do offset ao final de cada lote.",
                       "Se o broker cair, o seguidor que está no ISR vira líder; a mensagem não se perde.",
                       "Nenhuma mensagem foi perdida, mas 3 foram entregues duas vezes (at-least-once).",
                       "Por que o offset com commit é o da próxima mensagem a ler? Porque o consumidor retoma dali.",
                       "<cluster Kafka externo em 127.0.0.1:1>"):
        assert english_lines(portuguese) == [], portuguese
    for left_in_english in ("um consumidor lê: [b'written with acks=1']", "alice leaves the group",
                            "o produtor envia: the records are sent in order"):
        assert english_lines(left_in_english) != [], left_in_english


def test_the_english_detector_tells_prose_from_names_logs_and_code():
    assert english_lines("un consumidor lee: [b'written with acks=1']") != []
    assert english_lines("{'acks': '1', 'acknowledged but lost': 50}") != []
    assert english_lines("partition 0: leader 1, replicas [1], in sync [1]") != []
    assert english_lines("alice leaves the group") != []
    for spanish_or_names in ("partición 0: líder 1, réplicas [1], sincronizadas [1]",
                             "NOT_ENOUGH_REPLICAS: Messages are rejected since there are fewer in-sync replicas",
                             "el commit falló: _FENCED, Failed to end transaction: This instance has been fenced",
                             "minikafka WARNING: broker 1 did not shut down cleanly",
                             "salida 0; %0|1795777938.690|FATAL|rdkafka#consumer-1| [thrd:main]: Fatal error: Broker",
                             "at-most-once  0  0.0", "{'country': 'IT', 'at': 3}", "Sale(at=1, customer='a')",
                             "Completed updating config for topic payments.",
                             "def f():\n    # the records, then the offsets\n    return 1\n"):
        assert english_lines(spanish_or_names) == [], spanish_or_names


def test_helpers_print_spanish_in_spanish(monkeypatch):
    from kafka_course.handle import ClusterHandle, PartitionState
    monkeypatch.setenv("COURSE_LANG", "es")
    assert str(PartitionState(0, 1, (1, 2), (1,))) == "partición 0: líder 1, réplicas [1, 2], sincronizadas [1]"
    assert repr(ClusterHandle("127.0.0.1:1", None)) == "<clúster de Kafka externo en 127.0.0.1:1>"
    from kafka_course.members import EVENTS
    assert [i18n._(w) for w in EVENTS.values()] == ["revocadas", "asignadas", "salió"]


def test_every_tab_tells_the_language_and_the_lab():
    """JupyterLab titles a tab with the file name: a translation's names its language, a lab's names the lab."""
    for pair in PAIRS:
        assert pair.output.name == f"{pair.source.stem}-{pair.lang}.ipynb", name(pair.output)
        if pair.source.parent.parent.name == "labs":
            assert pair.source.stem.startswith(f"lab{pair.source.parent.name}"), name(pair.source)


def test_links_between_translated_notebooks_lead_somewhere():
    """A Spanish notebook links to its Spanish worked solutions, or to the English ones until they exist."""
    broken = []
    for pair in PAIRS:
        for cell in nbformat.read(pair.output, as_version=4).cells:
            if cell.cell_type != "markdown":
                continue
            for target in re.findall(r"\]\(([^)#\s]+\.ipynb)\)", cell.source):
                if "://" not in target and not (pair.output.parent / target).resolve().exists():
                    broken.append(f"{name(pair.output)}: {target}")
    assert broken == [], broken
