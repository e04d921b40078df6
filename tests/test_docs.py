"""The documentation kept in step with the code: every `conformance ...` command
and flag the README and docs/ name exists in the real parser, docs/cli.md
documents every flag and the exit codes of conformance.cli.exits, and the
field tables of docs/formats.md match the JSON Schemas in docs/schemas/."""

from __future__ import annotations

import argparse
import json
import re
import shlex
from functools import cache
from pathlib import Path

import pytest

from conformance import cli
from conformance.cli import exits
from conformance.tables import outcomes
from tests.conftest import REPO

DOCS = REPO / "docs"
SCHEMAS = DOCS / "schemas"
PAGES = sorted([REPO / "README.md", REPO / "CONTRIBUTING.md", REPO / "cases" / "README.md"])
PAGES += sorted(DOCS.glob("*.md"))
HELP = {"-h", "--help"}


# -- markdown, read just enough ---------------------------------------------------------
def sections(text: str, level: int = 2) -> dict[str, str]:
    """Heading text -> the section's body, for headings of this level."""
    marker = "#" * level + " "
    found: dict[str, str] = {}
    title = None
    for line in text.splitlines(keepends=True):
        if line.startswith(marker):
            title = line[len(marker) :].strip()
            found[title] = ""
        elif line.startswith("#" * (level - 1) + " ") and level > 1:
            title = None  # a heading above this level ends the section
        elif title is not None:
            found[title] += line
    return found


def _cells(line: str) -> list[str]:
    """A table row's cells; a | inside a code span does not split."""
    cells, current, in_code = [], "", False
    for char in line.strip().strip("|"):
        if char == "`":
            in_code = not in_code
        if char == "|" and not in_code:
            cells.append(current.strip())
            current = ""
        else:
            current += char
    return [*cells, current.strip()]


def tables(body: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every table of a section: (header cells, rows of cells)."""
    found, lines = [], body.splitlines()
    for index, line in enumerate(lines):
        starts = line.startswith("|") and (index == 0 or not lines[index - 1].startswith("|"))
        if starts and index + 1 < len(lines) and re.match(r"^\|[\s|:-]+\|$", lines[index + 1]):
            rows = []
            for row in lines[index + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append(_cells(row))
            found.append((_cells(line), rows))
    return found


def spans(cell: str) -> list[str]:
    """The code spans of a cell, in order."""
    return re.findall(r"`([^`]+)`", cell)


def code_texts(text: str) -> list[tuple[int, str]]:
    """(line, text) of everything set as code: each line of a code block (a
    synopsis's continuation lines joined to it), and each inline code span.
    Fenced blocks in another language (python, yaml) are left out."""
    found: list[tuple[int, str]] = []
    prose: list[str] = []
    lines = text.splitlines()
    fence: str | None = None
    previous_blank = True
    block_line = -1  # the last line of an indented code block seen
    for number, line in enumerate(lines, 1):
        if fence is not None:
            if line.strip().startswith("```"):
                fence = None
            elif fence in ("", "sh", "bash", "console", "shell"):
                found.append((number, line))
            prose.append("")
            continue
        if line.strip().startswith("```"):
            fence = line.strip()[3:].strip()
            prose.append("")
            continue
        indented = line.startswith("    ") and line.strip()
        if indented and (previous_blank or block_line == number - 1):
            if line.strip().startswith(("[", "-")) and block_line == number - 1:
                start, before = found[-1]
                found[-1] = (start, f"{before} {line.strip()}")  # a synopsis goes on
            else:
                found.append((number, line.strip()))
            block_line = number
            prose.append("")
        else:
            prose.append(line)
        previous_blank = not line.strip()
    # Inline code may run over a line break; count lines to say where it starts.
    joined = "\n".join(prose)
    for match in re.finditer(r"(`+)(.+?)\1", joined, flags=re.S):
        number = joined.count("\n", 0, match.start()) + 1
        found.append((number, " ".join(match.group(2).split())))
    return found


# -- the real parser ----------------------------------------------------------------------
def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


@cache
def commands() -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every command path (``("cases", "list")``, ``("run",)``...) -> its parser,
    groups of subcommands (``("cases",)``) included."""
    found = {}

    def walk(parser, path):
        found[path] = parser
        for name, sub in _subcommands(parser).items():
            walk(sub, (*path, name))

    walk(cli.parser(), ())
    return found


def _runs_alone(parser: argparse.ArgumentParser) -> bool:
    """A command of its own as well: its subcommands are optional (`fuzz`, `fuzz replay`)."""
    return not any(
        action.required
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
    )


def leaves() -> list[tuple[str, ...]]:
    """Every command a user runs: those without subcommands, and those whose
    subcommands are optional."""
    return [
        path
        for path, parser in commands().items()
        if path and (not _subcommands(parser) or _runs_alone(parser))
    ]


def flags(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings}


def positionals(parser: argparse.ArgumentParser) -> set[str]:
    """Positional arguments as --help shows them, upper case (the docs' spelling)."""
    return {
        str(action.metavar or action.dest).upper()
        for action in parser._actions
        if not action.option_strings and not isinstance(action, argparse._SubParsersAction)
    }


def exit_codes(parser: argparse.ArgumentParser) -> set[int]:
    """The exit codes a command's --help epilog lists."""
    return {
        code
        for code, meaning in exits.MEANING.items()
        if f"{code} {meaning}" in (parser.epilog or "")
    }


# -- (a) commands and flags written in the docs exist ----------------------------------
_SHELL_END = re.compile(r"\s(\||&&|;|>|#)\s")


def mentions(text: str) -> list[tuple[int, list[str]]]:
    """(line, words after `conformance`) of every command line set as code."""
    found = []
    for number, code in code_texts(text):
        for match in re.finditer(r"(?<![\w./-])conformance\s+(.+)", code):
            words = _SHELL_END.split(match.group(1))[0]
            try:
                tokens = shlex.split(words)
            except ValueError:
                tokens = words.split()
            found.append((number, tokens))
    return found


def resolve(tokens: list[str]) -> tuple[tuple[str, ...], list[str]]:
    """(command path, words) of a `conformance ...` command line; the path is
    () for a placeholder (`conformance <command> --help`) and ends at the
    first word that names no command."""
    path: tuple[str, ...] = ()
    words = [t.strip("[](),") for t in tokens]
    for word in words:
        subs = _subcommands(commands()[path])
        if not subs or not re.fullmatch(r"[a-z][a-z-]*", word) or word not in subs:
            break
        path = (*path, word)
    return path, words


def check_mention(tokens: list[str]) -> list[str]:
    """What is wrong with one `conformance ...` command line (nothing: [])."""
    path, words = resolve(tokens)
    following = words[len(path)] if len(words) > len(path) else ""
    if _subcommands(commands()[path]) and re.fullmatch(r"[a-z][a-z-]*", following):
        return [f"no command `conformance {' '.join((*path, following))}`"]
    if not path:
        return []
    known = flags(commands()[path])
    wrong = []
    for word in words:
        if word == "--":
            break
        if re.match(r"-[-\w]", word):
            flag = word.split("=", 1)[0]
            if flag not in known:
                wrong.append(f"`conformance {' '.join(path)}` has no flag {flag}")
    return wrong


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_command_written_in_the_docs_exists(page: Path):
    text = page.read_text(encoding="utf-8")
    found = mentions(text)
    problems = [
        f"{page.relative_to(REPO)}:{number}: {problem}: conformance {' '.join(tokens)}"
        for number, tokens in found
        for problem in check_mention(tokens)
    ]
    assert not problems, "\n".join(problems)


def test_the_command_check_catches_what_it_should():
    assert check_mention(["run", "--runtime", "openvino", "--gate"]) == []
    assert check_mention(["cases", "validate", "--check-models", "cases/"]) == []
    assert check_mention(["<command>", "--help"]) == []
    assert check_mention(["run", "--no-such-flag"]) == [
        "`conformance run` has no flag --no-such-flag"
    ]
    assert check_mention(["cases", "frobnicate"]) == ["no command `conformance cases frobnicate`"]
    assert check_mention(["gate", "--runtime", "x"]) == ["`conformance gate` has no flag --runtime"]
    text = "See `conformance cases\nvalidate --strict` and\n\n    conformance run [--frob N]\n"
    assert [tokens[:2] for _, tokens in mentions(text)] == [
        ["run", "[--frob"],
        ["cases", "validate"],
    ]


# -- docs/cli.md: one section per command, every flag, the exit codes -------------------
CLI_MD = DOCS / "cli.md"


def command_sections() -> dict[tuple[str, ...], str]:
    """Command path -> its section of docs/cli.md (heading included)."""
    found = {}
    for title, body in sections(CLI_MD.read_text(encoding="utf-8")).items():
        match = re.fullmatch(r"`conformance ([a-z ]+?)(?: [^a-z].*)?`", title)
        if match:
            found[tuple(match.group(1).split())] = f"{title}\n{body}"
    return found


def synopsis_flags(section: str, command: tuple[str, ...]) -> set[str]:
    """The flags a command's heading and synopsis show."""
    found = set()
    for _, tokens in mentions(section):
        path, words = resolve(tokens)
        if path == command:
            found |= {word for word in words if re.match(r"-[-\w]", word)}
    return found


def flag_table(section: str) -> tuple[set[str], set[str]]:
    """(flags, positionals) the flag table of a command's section lists."""
    found_flags, found_positionals = set(), set()
    for header, rows in tables(section):
        if header[0] != "flag":
            continue
        for row in rows:
            for item in spans(row[0]):
                name = item.split()[0]
                (found_flags if name.startswith("-") else found_positionals).add(name)
    return found_flags, found_positionals


@pytest.mark.parametrize("path", leaves(), ids=" ".join)
def test_cli_md_documents_every_flag_of_every_command(path):
    name = f"conformance {' '.join(path)}"
    section = command_sections().get(path)
    assert section is not None, f"docs/cli.md has no section `{name} ...`"
    parser = commands()[path]
    listed, arguments = flag_table(section)
    assert listed == flags(parser) - HELP, (
        f"{name}: flag table lacks {sorted(flags(parser) - HELP - listed)}, "
        f"lists unknown {sorted(listed - flags(parser))}"
    )
    assert arguments == positionals(parser), f"{name}: positional arguments"
    shown = synopsis_flags(section, path)
    missing = [
        action.option_strings
        for action in parser._actions
        if action.option_strings and not HELP & set(action.option_strings)
        if not shown & set(action.option_strings)
    ]
    assert not missing, f"{name}: the synopsis does not show {missing}"


def test_cli_md_lists_every_command():
    (_, rows), *_ = tables(CLI_MD.read_text(encoding="utf-8").split("## ")[0])
    listed = {tuple(spans(row[0])[0].split()[1:]) for row in rows}
    listed = {tuple(w for w in path if re.fullmatch(r"[a-z]+", w)) for path in listed}
    assert listed == set(leaves())


def exit_code_table(body: str) -> dict[int, str]:
    (header, rows), *_ = [(h, r) for h, r in tables(body) if h[0] == "code"]
    assert header == ["code", "meaning"]
    return {int(row[0]): row[1] for row in rows}


def test_cli_md_exit_codes_are_exits_meaning():
    body = sections(CLI_MD.read_text(encoding="utf-8"))["Exit codes"]
    assert exit_code_table(body) == exits.MEANING


def test_cli_md_says_which_command_returns_which_code():
    body = sections(CLI_MD.read_text(encoding="utf-8"))["Exit codes"]
    (_, rows), *_ = [(h, r) for h, r in tables(body) if h[0] == "command"]
    documented = {
        tuple(name.split()): {int(code) for code in row[1].split(",")}
        for row in rows
        for name in spans(row[0])
    }
    assert documented == {path: exit_codes(commands()[path]) for path in leaves()}


def test_readme_exit_codes_are_exits_meaning():
    body = sections((REPO / "README.md").read_text(encoding="utf-8"))["Exit codes"]
    bullets = re.findall(r"^- \*\*(\d+)\*\* (.+?)(?=^- |\Z)", body, flags=re.M | re.S)
    assert bullets, "README.md: no exit-code bullets under 'Exit codes'"
    assert {int(code): " ".join(text.split()) for code, text in bullets} == exits.MEANING


# -- (c) docs/formats.md against the schemas ------------------------------------------------
FORMATS_MD = DOCS / "formats.md"
FILES = {  # section of formats.md -> schema
    "results.jsonl": "result",
    "header.json": "header",
    "summary.json": "summary",
    "groups.json": "groups",
    "gate.json": "gate",
    "report.json": "report",
    "findings.json": "findings",
    "nodes.json": "nodes",
    "manifest.json": "manifest",
    "cases/known/*.yaml": "baseline",
    "--targets": "targets",
    "entries/*.json": "store-entry",
}
SHARED = {"tensor": ("groups", "findings"), "entry": ("gate",)}  # $defs with a table of their own


@cache
def schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


def schema_fields(document: dict, node: dict, prefix: str = "") -> set[str]:
    """Every field path a schema describes (``a.b``, ``a[].b``, ``a.*.b``);
    a shared definition (a tensor, a gate entry) ends a path."""
    if "$ref" in node:
        if not node["$ref"].startswith("#"):  # defs.schema.json: enums, no fields
            return set()
        name = node["$ref"].rsplit("/", 1)[-1]
        return set() if name in SHARED else schema_fields(document, document["$defs"][name], prefix)
    found: set[str] = set()
    for key in ("oneOf", "anyOf", "allOf"):
        for branch in node.get(key, []):
            found |= schema_fields(document, branch, prefix)
    for name, sub in node.get("properties", {}).items():
        path = f"{prefix}.{name}" if prefix else name
        found |= {path} | schema_fields(document, sub, path)
    if isinstance(node.get("items"), dict):
        found |= schema_fields(document, node["items"], prefix + "[]")
    if isinstance(node.get("additionalProperties"), dict):
        found |= schema_fields(document, node["additionalProperties"], prefix + ".*")
    return found


def documented_fields(body: str, header: str = "field") -> set[str]:
    """The field paths a section's tables name (first column); a name without a
    dot takes the prefix of the name before it in the same cell."""
    found = set()
    for cells, rows in tables(body):
        if cells[0] != header:
            continue
        for row in rows:
            prefix = ""
            for name in spans(row[0]):
                if "." not in name and "[]" not in name:
                    name = prefix + name
                prefix = name[: len(name) - len(re.split(r"\.|\[\]\.", name)[-1])]
                found.add(name)
    return found


def formats_sections() -> dict[str, str]:
    found = {}
    for title, body in sections(FORMATS_MD.read_text(encoding="utf-8")).items():
        names = spans(title)
        if names:
            found[names[0]] = body
    return found


@pytest.mark.parametrize("file", FILES)
def test_formats_md_documents_exactly_the_schema_fields(file):
    body = formats_sections().get(file)
    assert body is not None, f"docs/formats.md has no section `{file}`"
    document = schema(FILES[file])
    fields = schema_fields(document, document)
    documented = documented_fields(body)
    assert documented - fields == set(), f"{file}: documented, not in the schema"
    assert fields - documented == set(), f"{file}: in the schema, not documented"
    required = set(document.get("required", ()))  # a baseline may be empty
    assert required <= documented


@pytest.mark.parametrize("name", SHARED)
def test_formats_md_documents_the_shared_definitions(name):
    documented = {
        field
        for body in sections(FORMATS_MD.read_text(encoding="utf-8")).values()
        for field in documented_fields(body, f"{name} field")
    }
    for owner in SHARED[name]:
        document = schema(owner)
        assert documented == set(document["$defs"][name]["properties"]), owner


def test_formats_md_links_every_schema():
    text = FORMATS_MD.read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(schemas/([\w.-]+\.schema\.json)\)", text))
    assert linked == {path.name for path in SCHEMAS.glob("*.schema.json")}


def test_the_field_paths_read_as_documented():
    body = (
        "| field | meaning |\n| --- | --- |\n| `a`, `b` | x |\n| `g[].c`, `d`, `e.*.f`, `h` | y |\n"
    )
    assert documented_fields(body) == {"a", "b", "g[].c", "g[].d", "e.*.f", "e.*.h"}


def test_readme_lists_the_outcome_table():
    """The README's outcome kinds: the table's, in its order, each said
    conforming, a discrepancy or neither as its row has it."""
    body = sections((REPO / "README.md").read_text(encoding="utf-8"))["Outcome kinds"]
    listed = re.findall(r"^- `(\w+)`: .*\((conforming|discrepancy|neither)\)$", body, flags=re.M)
    said = {True: "conforming", False: "discrepancy"}
    assert listed == [
        (kind.name, said[kind.conforming] if kind.judged else "neither")
        for kind in outcomes.OUTCOME_KINDS
    ]
