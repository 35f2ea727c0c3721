"""The shipped question set, its generator and packaging, and the TruthfulQA / StrategyQA loaders."""

import json
import re
import shutil
import subprocess
import sys
import zipfile
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest

from uncertainty_lab.datasets import (
    BEHAVIOURS,
    CATEGORIES,
    DatasetFormatError,
    QAItem,
    load_qa_jsonl,
    load_qa_questions,
    load_strategyqa_json,
    load_truthfulqa_csv,
    qa_questions_resource,
)
from uncertainty_lab.datasets import build_qa_questions as build
from uncertainty_lab.semantic.text import normalise_answer

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = REPO / "uncertainty_lab" / "datasets" / "data"


# ----------------------------------------------------------------------------------------------------------------
# the shipped set
# ----------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def items():
    return load_qa_questions()


def test_about_150_items_about_30_per_category(items):
    assert 140 <= len(items) <= 160
    counts = Counter(item.category for item in items)
    assert set(counts) == set(CATEGORIES)
    assert all(25 <= n <= 35 for n in counts.values()), counts
    assert [item.category for item in items] == sorted((i.category for i in items), key=CATEGORIES.index)


def test_ids_are_unique_and_well_formed(items):
    ids = [item.id for item in items]
    assert len(ids) == len(set(ids))
    for item in items:
        assert re.fullmatch(rf"{item.category}-\d{{3}}", item.id), item.id
        assert item.source == "uncertainty_lab"


def test_questions_are_questions_or_instructions_to_decline(items):
    for item in items:
        q = item.question
        assert q == q.strip() and q
        if item.category == "decline":
            assert q.endswith(("?", ".")), item.id
        else:
            assert q.endswith("?"), item.id
    normalised = [normalise_answer(item.question) for item in items]
    assert len(set(normalised)) == len(normalised), "duplicate question"


def test_aliases_normalise_to_distinct_nonempty_strings(items):
    for item in items:
        gold = [normalise_answer(a) for a in item.answers]
        assert all(gold), item.id
        assert len(set(gold)) == len(gold), (item.id, gold)
        wrong = [normalise_answer(a) for a in item.incorrect]
        assert all(wrong), item.id
        assert len(set(wrong)) == len(wrong), (item.id, wrong)
        assert not set(gold) & set(wrong), (item.id, set(gold) & set(wrong))


def test_every_item_has_a_note_and_a_known_behaviour(items):
    for item in items:
        assert item.note.strip(), item.id
        assert item.behaviour in BEHAVIOURS
        assert item.expects_refusal == (item.category == "decline")


def test_category_specific_fields(items):
    by_cat = {c: [i for i in items if i.category == c] for c in CATEGORIES}
    for item in by_cat["ambiguous"]:
        assert len(item.answers) >= 2, item.id
    for item in by_cat["false_premise"]:
        assert item.incorrect, item.id
    yes_no = by_cat["yes_no_multistep"]
    for item in yes_no:
        assert item.canonical in ("yes", "no")
        assert set(item.answers) | set(item.incorrect) == {"yes", "true", "no", "false"}
        assert len(item.decomposition) >= 2 and len(item.facts) >= 2, item.id
    answers = Counter(item.canonical for item in yes_no)
    assert abs(answers["yes"] - answers["no"]) <= 4, answers  # roughly balanced: "always yes" scores ~50%
    for item in by_cat["decline"]:
        assert item.behaviour == "decline"
        assert "can t" in normalise_answer(item.canonical)
    for cat in ("factual", "ambiguous", "false_premise", "decline"):
        assert all(not i.decomposition and not i.facts for i in by_cat[cat]), cat


def test_numbers_are_given_as_digits_and_words_in_factual_items(items):
    for item in items:
        if item.category == "factual" and item.canonical.isdigit():
            assert any(re.fullmatch(r"[a-z \-]+", a) for a in item.answers[1:]), item.id


def test_category_filter(items):
    ambiguous = load_qa_questions("ambiguous")
    assert ambiguous == [i for i in items if i.category == "ambiguous"]
    two = load_qa_questions(["factual", "decline"])
    assert {i.category for i in two} == {"factual", "decline"}
    with pytest.raises(ValueError, match=r"unknown 'factoid'.*choose from factual, ambiguous"):
        load_qa_questions("factoid")


def test_data_card_counts_match_the_file(items):
    card = (DATA_DIR / "qa_questions.md").read_text(encoding="utf-8")
    counts = Counter(item.category for item in items)
    for category, n in counts.items():
        assert re.search(rf"^\| `{category}` \| {n} \|", card, flags=re.M), category
    assert f"{len(items)} English questions" in card


# ----------------------------------------------------------------------------------------------------------------
# generator and packaging
# ----------------------------------------------------------------------------------------------------------------


def test_regenerating_reproduces_the_shipped_bytes(tmp_path):
    out = build.write_qa_questions(tmp_path / "regen.jsonl")
    assert out.read_bytes() == (DATA_DIR / "qa_questions.jsonl").read_bytes(), (
        "qa_questions.jsonl is stale: run python -m uncertainty_lab.datasets.build_qa_questions"
    )
    assert build.main(["--check", "--out", str(out)]) == 0
    out.write_bytes(out.read_bytes().replace(b"Canberra", b"Sydney", 1))
    assert build.main(["--check", "--out", str(out)]) == 1


def test_generator_runs_as_a_module(tmp_path):
    out = tmp_path / "cli.jsonl"
    result = subprocess.run(
        [sys.executable, "-m", "uncertainty_lab.datasets.build_qa_questions", "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"{len(load_qa_questions())} questions" in result.stdout
    assert load_qa_jsonl(out) == load_qa_questions()


def test_jsonl_is_one_object_per_line_in_schema_order():
    lines = (DATA_DIR / "qa_questions.jsonl").read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    for line in lines[:-1]:
        record = json.loads(line)
        assert list(record) == [
            "id",
            "category",
            "question",
            "answers",
            "incorrect",
            "note",
            "decomposition",
            "facts",
            "behaviour",
        ]


def test_packaged_file_is_found_via_importlib_resources():
    resource = resources.files("uncertainty_lab.datasets").joinpath("data/qa_questions.jsonl")
    assert resource.is_file()
    assert qa_questions_resource().read_bytes() == resource.read_bytes()
    assert resources.files("uncertainty_lab.datasets").joinpath("data/qa_questions.md").is_file()


def test_wheel_includes_the_data_files(tmp_path):
    pytest.importorskip("setuptools")
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(REPO / "pyproject.toml", src)
    shutil.copy(REPO / "README.md", src)
    shutil.copytree(
        REPO / "uncertainty_lab", src / "uncertainty_lab", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(src),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
        ],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.fail(f"wheel build failed:\n{result.stdout}\n{result.stderr}")
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "uncertainty_lab/datasets/data/qa_questions.jsonl" in names
    assert "uncertainty_lab/datasets/data/qa_questions.md" in names


# ----------------------------------------------------------------------------------------------------------------
# QAItem and files in the shipped schema
# ----------------------------------------------------------------------------------------------------------------


def test_qaitem_round_trips_and_validates():
    item = QAItem(id="x-1", category="factual", question="Q?", answers=["A", "a b"], incorrect=["B"])
    assert item.answers == ("A", "a b") and item.canonical == "A"
    assert QAItem.from_dict(item.to_dict()) == item
    assert json.loads(json.dumps(item.to_dict()))["answers"] == ["A", "a b"]
    with pytest.raises(ValueError, match="answers must hold at least one"):
        QAItem(id="x", category="c", question="Q?", answers=[])
    with pytest.raises(ValueError, match="question must be a non-empty string"):
        QAItem(id="x", category="c", question="  ", answers=["a"])
    with pytest.raises(ValueError, match="answers must be a list of strings"):
        QAItem(id="x", category="c", question="Q?", answers="a")
    with pytest.raises(ValueError, match="behaviour must be one of answer, decline"):
        QAItem(id="x", category="c", question="Q?", answers=["a"], behaviour="refuse")
    with pytest.raises(ValueError, match="unknown field.*anwsers"):
        QAItem.from_dict({"id": "x", "category": "c", "question": "Q?", "answers": ["a"], "anwsers": []})


def _write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_load_qa_jsonl_reads_a_users_file_and_names_bad_lines(tmp_path):
    good = {"id": "q1", "category": "mine", "question": "Q?", "answers": ["a"]}
    items = load_qa_jsonl(_write_jsonl(tmp_path / "ok.jsonl", [good, {**good, "id": "q2"}]))
    assert [i.id for i in items] == ["q1", "q2"] and items[0].behaviour == "answer"

    path = _write_jsonl(tmp_path / "dup.jsonl", [good, good])
    with pytest.raises(
        DatasetFormatError,
        match=r"dup\.jsonl, line 2, column 'id': duplicate id 'q1' \(first on "
        r"line 1\)",
    ):
        load_qa_jsonl(path)
    path = _write_jsonl(tmp_path / "cat.jsonl", [good])
    with pytest.raises(DatasetFormatError, match=r"line 1, column 'category': unknown category 'mine'"):
        load_qa_jsonl(path, known_categories=CATEGORIES)
    path = _write_jsonl(tmp_path / "noans.jsonl", [{**good, "answers": []}])
    with pytest.raises(DatasetFormatError, match=r"noans\.jsonl, line 1: answers must hold at least one"):
        load_qa_jsonl(path)
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(good) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"bad\.jsonl, line 2: not valid JSON"):
        load_qa_jsonl(path)
    with pytest.raises(FileNotFoundError, match="nothing is downloaded"):
        load_qa_jsonl(tmp_path / "absent.jsonl")


# ----------------------------------------------------------------------------------------------------------------
# TruthfulQA CSV
# ----------------------------------------------------------------------------------------------------------------

TQA_HEADER = "Type,Category,Question,Best Answer,Correct Answers,Incorrect Answers,Source\n"

# Written by us in the published layout: quoted commas, a quoted multi-line field, doubled quotes, "; " lists.
TQA_ROWS = (
    'Adversarial,Misconceptions,"If you swallow a cherry stone, what happens?",It passes through you,'
    '"It passes through you; Nothing much, it is excreted","A cherry tree grows in you; You die",'
    "https://example.org/cherry\n"
    'Non-Adversarial,Fiction,"Where does the wizard ""Merrow"" live?","In a made-up story;\n'
    'he is fictional",In a made-up story; He is fictional,In a tower in Wales,https://example.org/merrow\n'
)


def _write(path, text, encoding="utf-8"):
    path.write_text(text, encoding=encoding, newline="")
    return path


def test_truthfulqa_loader_reads_the_published_format(tmp_path):
    path = _write(tmp_path / "TruthfulQA.csv", TQA_HEADER + TQA_ROWS, encoding="utf-8-sig")  # with a BOM
    first, second = load_truthfulqa_csv(path)
    assert first.id == "truthfulqa-0001" and first.category == "false_premise" and first.source == "truthfulqa"
    assert first.question == "If you swallow a cherry stone, what happens?"
    assert first.answers == ("It passes through you", "Nothing much, it is excreted")  # best answer deduplicated
    assert first.incorrect == ("A cherry tree grows in you", "You die")
    assert first.meta == {
        "type": "Adversarial",
        "truthfulqa_category": "Misconceptions",
        "source": "https://example.org/cherry",
    }
    assert first.note == "TruthfulQA (Adversarial, Misconceptions)"
    assert second.question == 'Where does the wizard "Merrow" live?'
    assert second.answers[0] == "In a made-up story;\nhe is fictional"
    assert second.answers[1:] == ("In a made-up story", "He is fictional")
    assert second.incorrect == ("In a tower in Wales",)
    assert [i.category for i in load_truthfulqa_csv(path, category="truthfulqa")] == ["truthfulqa"] * 2


def test_truthfulqa_loader_uses_best_incorrect_answer_when_present(tmp_path):
    text = (
        "Type,Category,Question,Best Answer,Best Incorrect Answer,Correct Answers,Incorrect Answers,Source\n"
        "Adversarial,Health,Does cracking knuckles cause arthritis?,No,Yes,No; It does not,"
        "Yes; It causes arthritis,https://example.org\r\n"
    )
    (item,) = load_truthfulqa_csv(_write(tmp_path / "t.csv", text))
    assert item.answers == ("No", "It does not")
    assert item.incorrect == ("Yes", "It causes arthritis")


def test_truthfulqa_loader_errors_name_file_row_and_column(tmp_path):
    path = _write(tmp_path / "nocol.csv", "Type,Category,Question,Best Answer,Incorrect Answers,Source\nA,B,Q?,x,y,z\n")
    with pytest.raises(
        DatasetFormatError,
        match=r"nocol\.csv, line 1 \(header\): missing column\(s\) "
        r"'Correct Answers'",
    ):
        load_truthfulqa_csv(path)

    path = _write(tmp_path / "noq.csv", TQA_HEADER + TQA_ROWS + 'A,B," ",x,x,y,z\n')
    with pytest.raises(
        DatasetFormatError,
        match=r"noq\.csv, row 3 \(ending on line 5\), column 'Question': "
        r"empty question",
    ) as info:
        load_truthfulqa_csv(path)
    assert (info.value.row, info.value.column) == ("row 3 (ending on line 5)", "Question")

    path = _write(tmp_path / "noans.csv", TQA_HEADER + "A,B,Q?,,,y,z\n")
    with pytest.raises(DatasetFormatError, match=r"row 1 .*column 'Best Answer': no gold answer"):
        load_truthfulqa_csv(path)

    path = _write(tmp_path / "short.csv", TQA_HEADER + "A,B,Q?,x\n")
    with pytest.raises(DatasetFormatError, match=r"row 1 .*column 'Correct Answers': the row has fewer fields"):
        load_truthfulqa_csv(path)

    path = _write(tmp_path / "long.csv", TQA_HEADER + "A,B,Q?,x,x,y,z,extra, more\n")
    with pytest.raises(DatasetFormatError, match=r"row 1 .*: 9 fields but the header has 7 columns"):
        load_truthfulqa_csv(path)

    with pytest.raises(DatasetFormatError, match=r"empty\.csv: empty file"):
        load_truthfulqa_csv(_write(tmp_path / "empty.csv", ""))

    path = tmp_path / "latin1.csv"
    path.write_bytes((TQA_HEADER + "A,B,Caf\xe9?,x,x,y,z\n").encode("latin-1"))
    with pytest.raises(DatasetFormatError, match=r"latin1\.csv, line 2: not UTF-8"):
        load_truthfulqa_csv(path)


def test_truthfulqa_loader_keeps_rows_as_written_by_csv_writer(tmp_path):
    import csv

    rows = [
        [
            "Adversarial",
            "Law",
            'Is it legal to say "hello, world" in court?',
            "Yes, it is legal",
            "Yes, it is legal; Yes",
            "No, it is banned",
            "https://example.org/a,b",
        ]
    ]
    path = tmp_path / "w.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(TQA_HEADER.strip().split(","))
        writer.writerows(rows)
    (item,) = load_truthfulqa_csv(path)
    assert item.question == rows[0][2]
    assert item.answers == ("Yes, it is legal", "Yes")
    assert item.meta["source"] == "https://example.org/a,b"


# ----------------------------------------------------------------------------------------------------------------
# StrategyQA JSON
# ----------------------------------------------------------------------------------------------------------------


def _sqa_entry(**changes):
    entry = {
        "qid": "a1b2c3d4e5f6a7b8c9d0",
        "term": "Hedgehog",
        "description": "Small spiny mammal",
        "question": "Could a hedgehog fit in a teacup?",
        "answer": True,
        "facts": ["Young hedgehogs are a few centimetres long.", "Teacups are about 8 cm across."],
        "decomposition": ["How small is a young hedgehog?", "How wide is a teacup?", "Is #1 smaller than #2?"],
        "evidence": [[[["Hedgehog-1"]], ["no_evidence"], ["operation"]]],
    }
    entry.update(changes)
    return {k: v for k, v in entry.items() if v is not ...}


def _write_json(path, data):
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def test_strategyqa_loader_reads_the_published_format(tmp_path):
    data = [
        _sqa_entry(),
        _sqa_entry(
            qid="ffff",
            question="Is ice heavier than liquid water of equal volume?",
            answer=False,
            facts=[],
            decomposition=[],
            term=...,
        ),
    ]
    yes, no = load_strategyqa_json(_write_json(tmp_path / "strategyqa_train.json", data))
    assert yes.id == "strategyqa-a1b2c3d4e5f6a7b8c9d0" and yes.category == "yes_no_multistep"
    assert yes.answers == ("yes", "true") and yes.incorrect == ("no", "false") and yes.canonical == "yes"
    assert yes.decomposition == tuple(data[0]["decomposition"]) and yes.facts == tuple(data[0]["facts"])
    assert yes.meta == {"term": "Hedgehog", "description": "Small spiny mammal"}
    assert yes.source == "strategyqa" and yes.note == "StrategyQA term: Hedgehog"
    assert no.answers == ("no", "false") and no.decomposition == () and no.note == "StrategyQA"


@pytest.mark.parametrize(
    "entry, pattern",
    [
        (
            _sqa_entry(answer="yes"),
            r"record 2 \(qid 'a1b2c3d4e5f6a7b8c9d0'\), column 'answer': answer must be "
            r"JSON true or false, got 'yes' \(str\)",
        ),
        (_sqa_entry(answer=1), r"column 'answer': answer must be JSON true or false, got 1 \(int\)"),
        (_sqa_entry(answer=...), r"column 'answer': no 'answer' \(StrategyQA's test split"),
        (_sqa_entry(question="  "), r"column 'question': question must be a non-empty string"),
        (_sqa_entry(question=...), r"column 'question': question must be a non-empty string, got None"),
        (_sqa_entry(qid=...), r"record 2, column 'qid': qid must be a non-empty string"),
        (_sqa_entry(facts="one fact"), r"column 'facts': facts must be a list of strings"),
        (_sqa_entry(decomposition=[1, 2]), r"column 'decomposition': decomposition must be a list of strings"),
        (_sqa_entry(qid="ffff"), r"record 2 \(qid 'ffff'\), column 'qid': duplicate qid \(first at record 1\)"),
        ("not an object", r"record 2: expected a JSON object, got str"),
    ],
)
def test_strategyqa_loader_errors_name_file_entry_and_field(tmp_path, entry, pattern):
    first = _sqa_entry(qid="ffff")
    path = _write_json(tmp_path / "sqa.json", [first, entry])
    with pytest.raises(DatasetFormatError, match=r"sqa\.json, (record 2 \(qid 'a1b2c3d4e5f6a7b8c9d0'\), )?" + pattern):
        load_strategyqa_json(path)


def test_strategyqa_loader_rejects_files_that_are_not_a_list(tmp_path):
    with pytest.raises(DatasetFormatError, match=r"obj\.json: expected a JSON list.*got a dict"):
        load_strategyqa_json(_write_json(tmp_path / "obj.json", {"data": []}))
    path = tmp_path / "broken.json"
    path.write_text('[{"qid": "x",\n  "question": }]', encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"broken\.json, line 2, column 15: not valid JSON"):
        load_strategyqa_json(path)
    with pytest.raises(IsADirectoryError, match="pass the data file itself"):
        load_strategyqa_json(tmp_path)
    assert load_strategyqa_json(_write_json(tmp_path / "empty.json", [])) == []


def test_truthfulqa_cut_short_or_in_another_format_says_so(tmp_path):
    text = TQA_HEADER + TQA_ROWS
    cut = _write(tmp_path / "cut.csv", text[: text.index("he is fictional") + 4])  # inside a quoted field
    with pytest.raises(DatasetFormatError, match=r"cut\.csv ends in the middle of a record at line \d+ \(the file "
                                                 r"looks truncated: download it again\)") as info:
        load_truthfulqa_csv(cut)
    assert info.value.truncated
    short = _write(tmp_path / "short.csv", text[: text.index(",https://example.org/cherry")])  # mid-row, no newline
    with pytest.raises(DatasetFormatError, match=r"short\.csv ends in the middle of a record at line 2"):
        load_truthfulqa_csv(short)
    as_json = _write(tmp_path / "tqa.json", json.dumps([{"Question": "Q?"}]))
    with pytest.raises(DatasetFormatError, match=r"missing column.*this file is JSON, not the TruthfulQA CSV"):
        load_truthfulqa_csv(as_json)
    tabs = _write(tmp_path / "tqa.tsv", TQA_HEADER.replace(",", "\t"))
    with pytest.raises(DatasetFormatError, match=r"found 'Type\\tCategory.*the header has tabs"):
        load_truthfulqa_csv(tabs)


def test_strategyqa_json_lines_load_like_the_json_list(tmp_path):
    data = [_sqa_entry(), _sqa_entry(qid="ffff", answer=False)]
    from_list = load_strategyqa_json(_write_json(tmp_path / "strategyqa_train.json", data))
    lines = _write(tmp_path / "train.jsonl", "".join(json.dumps(e) + "\n" for e in data))
    assert load_strategyqa_json(lines) == from_list
    cut = _write(tmp_path / "cut.jsonl", lines.read_text()[:-30])
    with pytest.raises(DatasetFormatError, match=r"cut\.jsonl ends in the middle of a record at line 2"):
        load_strategyqa_json(cut)
