"""Method interpret's files on disk, damaged: WordNet's files read in place (a missing or damaged
data file degrades with a warning, the absent-word check falling back to embeddings alone) and a
kept calibration (made again); never a crash at start or mid-goal."""
import logging
import shutil

from llm_planner_ros.interpretation.confidence import Candidate, Evidence, Labelled, read_labelled, write_labelled
from llm_planner_ros.interpretation.lexicon import WordNetNouns, wordnet_dir, wordnet_nouns


def _copy(tmp_path):
    src = wordnet_dir()
    for name in ("index.noun", "data.noun", "data.noun1", "data.noun2"):
        if (src / name).exists():
            shutil.copy(src / name, tmp_path / name)
    return [p for p in tmp_path.iterdir() if p.name.startswith("data.noun")]


def test_a_missing_data_file_gives_no_lexicon_and_a_warning(tmp_path, caplog):
    for p in _copy(tmp_path):
        p.unlink()
    with caplog.at_level(logging.WARNING, logger="llm_planner_ros.interpretation.lexicon"):
        assert wordnet_nouns(tmp_path) is None
    assert "not at" in caplog.text


def test_a_truncated_data_file_reads_as_unknown_with_one_warning(tmp_path, caplog):
    whole = WordNetNouns(wordnet_dir())
    assert whole.is_a("banana", "fruit") and whole.body_part("teeth")
    for p in _copy(tmp_path):
        p.write_bytes(p.read_bytes()[:2000])
    nouns = WordNetNouns(tmp_path)
    with caplog.at_level(logging.WARNING, logger="llm_planner_ros.interpretation.lexicon"):
        assert nouns.senses("banana") == whole.senses("banana")   # index.noun is whole
        assert not nouns.is_a("banana", "fruit") and not nouns.body_part("teeth") and not nouns.food("milk")
        assert nouns.steps("oven", "kitchen", 4) == 5              # no shared kind read
    assert caplog.text.count("damaged") == 1


def test_a_damaged_index_line_reads_as_no_senses(tmp_path, caplog):
    _copy(tmp_path)
    (tmp_path / "index.noun").write_bytes(b"banana n x\n")
    nouns = WordNetNouns(tmp_path)
    with caplog.at_level(logging.WARNING, logger="llm_planner_ros.interpretation.lexicon"):
        assert nouns.senses("banana") == ()
    assert "damaged" in caplog.text


def test_a_calibration_file_of_another_shape_is_made_again_not_a_crash(tmp_path):
    """A kept calibration cut short, or of another shape (hand-edited, another version's), reads
    as none: the calibration is made again rather than every goal failing."""
    path = tmp_path / "c.json"
    kept = [Labelled("Watch TV", Evidence((Candidate("The TV is on.", 0.8, -1.0, 0.0, ("said",), True),), 0.9, 1.0),
                     ("The TV is on.",), True)]
    write_labelled(path, kept)
    assert read_labelled(path) == kept
    for text in ("{}", "[1]", '[{"task": "x"}]', '[{"task": "x", "evidence": [], "asked": []}]', "[", ""):
        path.write_text(text)
        assert read_labelled(path) is None, text
