"""The documents in proofs/ and their checks: every statement (a heading of level 2 or deeper
starting with Theorem, Lemma, Proposition, Corollary, Fact, Result, Counterexample or Finding)
names at least one test as ``path::test`` after "Checked by:", every such reference points at a
test function that exists, and the index lists every document."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROOFS = ROOT / "proofs"
STATEMENT = re.compile(r"^#{2,6}\s+(Theorem|Lemma|Proposition|Corollary|Fact|Result|Counterexample|Finding)\b")
HEADING = re.compile(r"^#{1,6}\s")
REFERENCE = re.compile(r"`([\w./-]+\.py)::([\w:]+)`")


def _documents() -> list[Path]:
    return sorted(PROOFS.glob("*.md"))


def _sections(path: Path):
    """(heading, body lines) for every heading of a Markdown file."""
    heading, body, out = None, [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if HEADING.match(line):
            if heading is not None:
                out.append((heading, body))
            heading, body = line, []
        elif heading is not None:
            body.append(line)
    if heading is not None:
        out.append((heading, body))
    return out


def _checked_by(body: list[str]) -> list[tuple[str, str]]:
    text = "\n".join(body)
    if "Checked by:" not in text:
        return []
    return REFERENCE.findall(text.split("Checked by:", 1)[1])


def _test_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    names.add(f"{node.name}::{item.name}")
    return names


def _statements():
    out = []
    for doc in _documents():
        for heading, body in _sections(doc):
            if STATEMENT.match(heading):
                out.append((doc.name, heading.lstrip("# ").strip(), body))
    return out


def test_the_proofs_folder_has_the_documents_of_issue_6():
    names = {p.name for p in _documents()}
    assert {"README.md", "model.md", "lemma1-lower-bounds.md", "lemma2-srpt-scaling.md",
            "lemma3-waiting.md", "theorem1.md", "classical.md", "worst-case-table.md",
            "open-questions.md"} <= names


def test_every_statement_names_a_check():
    statements = _statements()
    assert len(statements) >= 20
    missing = [f"{doc}: {title}" for doc, title, body in statements if not _checked_by(body)]
    assert missing == [], "statements without 'Checked by:' and a path::test reference"


def test_every_reference_points_at_an_existing_test():
    cache: dict[Path, set[str]] = {}
    bad = []
    refs = 0
    for doc in _documents():
        for path, name in REFERENCE.findall(doc.read_text(encoding="utf-8")):
            refs += 1
            file = ROOT / path
            if not file.is_file() or not path.startswith("tests/"):
                bad.append(f"{doc.name}: {path} is not a test file")
                continue
            if file not in cache:
                cache[file] = _test_names(file)
            if name not in cache[file]:
                bad.append(f"{doc.name}: {path}::{name} does not exist")
    assert refs > 0 and bad == []


def test_the_index_lists_every_document_and_theorem_1_is_ours():
    index = (PROOFS / "README.md").read_text(encoding="utf-8")
    for doc in _documents():
        if doc.name != "README.md":
            assert f"({doc.name})" in index, doc.name
    for name in ("README.md", "theorem1.md", "model.md"):
        assert "not a quote of the paper" in (PROOFS / name).read_text(encoding="utf-8").replace("\n", " ")


def test_the_checker_finds_missing_checks_and_broken_references(tmp_path):
    """The rules above can fail: a statement without a check and a reference to a missing test."""
    doc = tmp_path / "x.md"
    doc.write_text("# Title\n\n## Lemma 9 (made up)\n\nNo check here.\n\n## Fact 4\n\nChecked by:\n"
                   "`tests/theory/test_proofs.py::test_does_not_exist`\n", encoding="utf-8")
    sections = [(h, b) for h, b in _sections(doc) if STATEMENT.match(h)]
    assert [bool(_checked_by(b)) for _, b in sections] == [False, True]
    ((path, name),) = _checked_by(sections[1][1])
    assert name not in _test_names(ROOT / path)


@pytest.mark.parametrize("doc", [p.name for p in _documents()])
def test_documents_use_only_relative_links_that_exist(doc):
    text = (PROOFS / doc).read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if "://" in target:
            continue
        assert (PROOFS / target).exists(), f"{doc}: broken link {target}"


LABEL = re.compile(r"^(Theorem|Lemma|Proposition|Corollary|Fact|Result|Counterexample|Finding) [\w.]+")
STATUSES = ("proven", "cited", "counterexample", "measured")


def _status_rows() -> dict:
    """(document, statement label) -> (status, test reference) from the README's status table."""
    text = (PROOFS / "README.md").read_text(encoding="utf-8")
    section = text.split("## Status of every statement", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].endswith(".md"):
            rows[(cells[0], cells[1])] = (cells[2], cells[3])
    return rows


def test_the_readme_gives_every_statement_a_status_and_a_test():
    rows = _status_rows()
    statements = {(doc, LABEL.match(title).group(0)) for doc, title, _ in _statements()}
    assert set(rows) == statements, (sorted(statements - set(rows)), sorted(set(rows) - statements))
    for key, (status, test) in rows.items():
        assert status.startswith(STATUSES), (key, status)
        path, name = REFERENCE.match(test).groups()
        assert name in _test_names(ROOT / path), (key, test)
