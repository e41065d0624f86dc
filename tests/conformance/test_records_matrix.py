"""docs/records.md, the op × framework matrix, is generated from the registry and up to date."""

from __future__ import annotations

from conformance import ops
from conformance.ops import _matrix


def test_matrix_doc_is_up_to_date():
    text = _matrix.render()
    assert _matrix.DOC.read_text() == text, "docs/records.md is stale: run python -m conformance.ops._matrix"


def test_matrix_lists_every_record_once():
    text = _matrix.render()
    for name in ops.RECORDS:
        assert text.count(f"| `{name}` |") == 1, name


def test_matrix_check_flag_reports_staleness(tmp_path, monkeypatch):
    stale = tmp_path / "records.md"
    stale.write_text("old\n")
    monkeypatch.setattr(_matrix, "DOC", stale)
    assert _matrix.main(["--check"]) == 1
    assert _matrix.main([]) == 0
    assert _matrix.main(["--check"]) == 0
