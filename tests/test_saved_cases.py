"""Saved node cases (``conformance model --save-cases``) as ``run --cases``
reads them: each node judged as built whatever ``--variants`` says, an
``as-built-`` tag held to the variants, and what ``--save-cases`` writes
always loadable (issue 44: items 4 and 11)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from conformance.cases import CaseErrors, loader
from conformance.cli import main
from conformance.tables.variants import VARIANTS


def _shape_gather(folder: Path) -> Path:
    """Shape -> Gather of a constant index: judged as built in indices_initializer."""
    graph = h.make_graph(
        [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "i"], ["y"], name="dim0")],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
        [h.make_tensor_value_info("y", T.INT64, [])],
        [nh.from_array(np.array(0, np.int64), "i")],
    )
    proto = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    proto.ir_version = 10
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(proto, folder / "shape.onnx")
    return folder / "shape.onnx"


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    """The shape model's node cases as --save-cases writes them."""
    base = tmp_path_factory.mktemp("saved")
    path = base / "cases" / "nodes.yaml"
    path.parent.mkdir()
    code = main(["model", str(_shape_gather(base / "models")), "--runtime", "reference",
                 "--variants", "static", "--out", str(base / "model-run"), "--save-cases",
                 str(path), "--no-progress"])  # fmt: skip
    assert code == 0 and path.is_file()
    return path


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_saved_node_cases_run_as_built_whatever_variants_say(saved, tmp_path, capsys):
    """44.4: `run --cases` of saved node cases with --variants that leave out the
    as-built variant still judges each node as built (as `model` does)."""
    out = tmp_path / "run"
    code = main(["run", "--cases", str(saved), "--runtime", "reference", "--variants",
                 "static", "--out", str(out), "--no-progress"])  # fmt: skip
    said = capsys.readouterr().out
    assert code == 0
    (entry,) = json.loads((out / "nodes.json").read_text())["nodes"]
    built = entry["as_built"]
    assert built["variant"] == "indices_initializer"  # not among those asked
    ran = {(r["case_id"], r["variant"]) for r in _records(out)}
    assert {(c, "indices_initializer") for c in built["cases"]} <= ran
    assert {v for _, v in ran} == {"static", "indices_initializer"}
    header = json.loads((out / "header.json").read_text())
    assert "indices_initializer" in header["variants"]
    assert "reference: safe: every one of 1 node(s) exact as built" in said


def _with_tags(saved: Path, folder: Path, tags: list[str]) -> Path:
    """The saved file again, its first case's tags replaced by ``tags``."""
    lines = saved.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("tags:"))
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    end = at + 1
    while end < len(lines) and lines[end].startswith(indent + "- "):
        end += 1  # a block list of tags
    lines[at:end] = [f"{indent}tags: [{', '.join(tags)}]"]
    path = folder / "nodes.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path, at + 1


@pytest.mark.parametrize(
    ("tags", "said"),
    [
        (["as-built-statik"], "'as-built-statik' names no model variant (known: as-built-static"),
        (["as-built-"], "'as-built-' names no model variant"),
        (
            ["as-built-static", "as-built-dynamic"],
            "'as-built-dynamic': a second as-built tag (the case is as built in 'static')",
        ),
    ],
)
def test_an_as_built_tag_naming_no_variant_is_refused_at_its_line(saved, tmp_path, tags, said):
    """44.4: an `as-built-` tag whose suffix is not a variant is an error at its
    file, line and field, not a node judged as built nowhere."""
    path, line = _with_tags(saved, tmp_path, tags)
    with pytest.raises(CaseErrors) as raised:
        loader.load_file(path)
    (error,) = raised.value.errors
    assert (
        error.path == path
        and error.line == line
        and error.field.endswith(".tags[" + str(len(tags) - 1) + "]")
    )
    assert said in error.message


def test_every_variant_is_a_valid_as_built_tag(saved, tmp_path):
    for variant in VARIANTS:
        path, _ = _with_tags(saved, tmp_path, [f"as-built-{variant}"])
        assert loader.load_file(path)


def test_run_of_a_misspelt_as_built_tag_exits_2_naming_the_file(saved, tmp_path, capsys):
    path, line = _with_tags(saved, tmp_path, ["as-built-statik"])
    code = main(["run", "--cases", str(path), "--runtime", "reference", "--out",
                 str(tmp_path / "run"), "--no-progress"])  # fmt: skip
    assert code == 2
    assert f"{path}:{line}: cases[0].tags[0]:" in capsys.readouterr().err


# -- 44.11: what --save-cases writes loads -------------------------------------------------
def _alike(folder: Path, count: int) -> Path:
    """``count`` Gathers alike (one group: every case lists them all)."""
    nodes = [h.make_node("Gather", ["x", "ids"], [f"y{i}"], name=f"g{i}", axis=0)
             for i in range(count)]  # fmt: skip
    graph = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [4, 2]),
         h.make_tensor_value_info("ids", T.INT64, [2])],
        [h.make_tensor_value_info(f"y{i}", T.FLOAT, None) for i in range(count)],
    )  # fmt: skip
    proto = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    proto.ir_version = 10
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(proto, folder / "alike.onnx")
    return folder / "alike.onnx"


def _values(path: Path) -> int:
    """The YAML nodes of a case file, aliases expanded: what the loader counts."""
    import yaml

    count, todo = 0, [yaml.safe_load(path.read_text())]
    while todo:
        value = todo.pop()
        count += 1 + (len(value) if isinstance(value, dict) else 0)
        todo.extend(value.values() if isinstance(value, dict) else
                    value if isinstance(value, list) else ())  # fmt: skip
    return count


def test_save_cases_refuses_what_the_loader_would_refuse(tmp_path, monkeypatch, capsys):
    """44.11: the saved file stays within the loader's cap on one file's values
    (MAX_NODES, made small here), or nothing is written and the error says why
    and what to do. The writer counts as the loader does: a file at the cap
    loads, one value less and the loader refuses it."""
    from conformance.cli import model as command
    from conformance.graphs import drawing, reading, saving

    monkeypatch.setattr(saving, "NODES_INLINE", 1000)  # every case lists its 40 nodes
    found = reading.load(_alike(tmp_path / "models", 40))
    groups = drawing.group_nodes([found], {}, 1 << 30)
    drawing.make_cases(groups, 1)
    path = tmp_path / "cases" / "nodes.yaml"
    path.parent.mkdir()
    command.save_cases(path, groups, 1 << 30)  # well within the real cap
    count = _values(path)
    monkeypatch.setattr(loader, "MAX_NODES", count)  # the writer's and the loader's cap
    command.save_cases(path, groups, 1 << 30)
    assert len(loader.load_file(path)) == len(groups[0].cases)
    monkeypatch.setattr(loader, "MAX_NODES", count - 1)
    with pytest.raises(CaseErrors, match=f"more than {count - 1} values"):
        loader.load_file(path)  # the same count: one value over, refused
    path.unlink()
    with pytest.raises(saving.SaveRefused) as refused:
        command.save_cases(path, groups, 1 << 30)
    assert not list(path.parent.iterdir())  # nothing written
    said = str(refused.value)
    assert said.startswith(
        f"error: {path}: not written: its {len(groups[0].cases)} cases would "
        f"be {count:,} values, over the {count - 1:,} a case file holds"
    )
    assert "fewer --draws make fewer cases" in said
    # as the command says it: exit 2, the model not run
    code = main(
        [
            "model",
            str(tmp_path / "models" / "alike.onnx"),
            "--draws",
            "1",
            "--runtime",
            "reference",
            "--save-cases",
            str(path),
            "--out",
            str(tmp_path / "run"),
        ]
    )
    assert code == 2 and said in capsys.readouterr().err
    assert not path.exists() and not (tmp_path / "run").exists()


def _saved_alike(tmp_path: Path, monkeypatch, count: int = 40) -> tuple[Path, list]:
    """``count`` alike Gathers saved with their node list beside the case file."""
    from conformance.cli import model as command
    from conformance.graphs import drawing, reading, saving

    monkeypatch.setattr(saving, "NODES_INLINE", 8)
    found = reading.load(_alike(tmp_path / "models", count))
    groups = drawing.group_nodes([found], {}, 1 << 30)
    drawing.make_cases(groups, 1)
    path = tmp_path / "cases" / "nodes.yaml"
    path.parent.mkdir()
    command.save_cases(path, groups, 1 << 30)
    return path, groups


def test_a_long_node_list_is_written_once_beside_and_read_back(tmp_path, monkeypatch, capsys):
    """44.11 at its root: alike nodes by the thousand are listed once, in a JSON
    file beside the case file, not by every case of theirs; `run --cases` reads
    them back into every record, as `model` recorded them."""
    path, groups = _saved_alike(tmp_path, monkeypatch)
    (listed,) = path.parent.glob("*.nodes.json")
    assert sorted(p.name for p in path.parent.iterdir()) == [listed.name, "nodes.yaml"]
    assert _values(path) < 7 * 40  # less than one case listing its 40 nodes (7 values each)
    nodes = [("../models/alike.onnx", "", f"g{i}") for i in range(40)]
    for case in loader.load_file(path):
        assert sorted(case.nodes) == sorted(nodes)
    out = tmp_path / "run"
    code = main(["run", "--cases", str(path), "--runtime", "reference", "--variants", "static",
                 "--out", str(out), "--no-progress"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    records = _records(out)
    assert records and all(len(r["nodes"]) == 40 for r in records)
    from conformance.cli import model as command

    command.save_cases(path, groups, 1 << 30)  # its own companion: replaced without a word


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (lambda p: p.write_text("5"), "is not a JSON list of {model, graph, node} objects"),
        (lambda p: p.write_text('[{"model": "m"}]'), "is not a JSON list of {model, graph"),
        (lambda p: p.write_text("[" * 5000 + "]" * 5000), "is not a flat JSON list (nested)"),
        (lambda p: p.write_bytes(bytes([0xFF])), "is not UTF-8 text"),
        (lambda p: (p.unlink(), os.mkfifo(p)), "not a regular file"),
        (lambda p: p.unlink(), "No such file"),
    ],
    ids=["a-number", "a-field-missing", "deep", "not-utf8", "fifo", "absent"],
)
def test_a_bad_node_list_file_is_an_error_at_its_line(tmp_path, monkeypatch, spoil, said):
    path, _ = _saved_alike(tmp_path, monkeypatch)
    (listed,) = path.parent.glob("*.nodes.json")
    spoil(listed)
    with pytest.raises(CaseErrors) as raised:
        loader.load_file(path)
    first = raised.value.errors[0]
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1)
                if listed.name in text)  # fmt: skip
    assert first.field.endswith(".nodes.file") and first.line == line, first
    assert said in first.message, first


def test_a_node_list_file_outside_the_folder_is_refused(tmp_path, monkeypatch):
    path, _ = _saved_alike(tmp_path, monkeypatch)
    (listed,) = path.parent.glob("*.nodes.json")
    (tmp_path / listed.name).write_bytes(listed.read_bytes())
    path.write_text(path.read_text().replace(f"file: {listed.name}", f"file: ../{listed.name}"))
    with pytest.raises(CaseErrors, match="leaves the case file's folder: nodes reads only"):
        loader.load_file(path)
