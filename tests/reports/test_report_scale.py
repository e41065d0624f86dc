"""A 20,000-result campaign's index.html: its size per result, its opening time in headless Chromium
against a small report's on the same machine, and every result's verdict reachable in it.

Measured when this test was written (2 shared cores): before the page drew its large sections from
embedded JSON, 32.8 MB (1,640 bytes per result) and 22-37 s to load; after, 5.2 MB (260 bytes per
result, 30 of them the 100 reproducer scripts) and 3.4-4.5 s, of which a small report's 2.2 s is the
browser starting.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections import Counter

import pytest

from conformance.report import build_report

from .synthetic import embedded_data, synthetic_results, write_results
from .test_reports import _chromium

pytestmark = pytest.mark.torch

N_RESULTS = 20_000
# the bound on the page's size: every result's row (~80 bytes), its share of a cell (~130), the
# reproducers of the failures, the fixed sections; the page was 1,640 bytes per result before
BYTES_PER_RESULT = 400
# the page may take the small page's time twice over (browser start-up on a loaded machine) plus this
WORK_SECONDS = 5.0


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    out = tmp_path_factory.mktemp("big")
    records = synthetic_results(N_RESULTS)
    write_results(out / "results.jsonl", records)
    build_report(out, {}, "synthetic 20,000-result campaign")
    return out, records


def _load(chromium, url) -> tuple[float, str]:
    """Seconds headless Chromium takes to load ``url``, run its script and print the DOM; the DOM."""
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,2000"]
    start = time.perf_counter()
    done = subprocess.run(
        [chromium, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=180, check=True
    )
    return time.perf_counter() - start, done.stdout


def test_the_page_of_20000_results_is_small(big):
    out, _ = big
    size = (out / "index.html").stat().st_size
    assert size <= BYTES_PER_RESULT * N_RESULTS, f"{size} bytes, {size / N_RESULTS:.0f} per result"


def test_the_page_of_20000_results_opens_in_seconds(big, tmp_path):
    chromium = _chromium()
    out, _ = big
    small = tmp_path / "small"
    small.mkdir()
    write_results(small / "results.jsonl", synthetic_results(20, ops=5))
    build_report(small, {}, "synthetic 20-result campaign")
    _load(chromium, (small / "index.html").as_uri())  # a first start warms the disk cache
    base = min(_load(chromium, (small / "index.html").as_uri())[0] for _ in range(2))
    took, dom = _load(chromium, (out / "index.html").as_uri())
    assert took <= 2 * base + WORK_SECONDS, f"{took:.1f} s; a 20-result report takes {base:.1f} s"
    # the script drew the first page of each paged section, and counted them all
    where = re.findall(r'class="where">([^<]*)<', dom)
    assert "1-100 of 20000, page 1 of 200" in where
    assert len(re.findall(r'<tr class="result-row v-\w+"', dom)) == 100
    assert len(re.findall(r'<section class="discrepancy \w+" id="d\d+">', dom)) == 10


def test_every_result_verdict_is_in_the_page_and_found_by_search(big):
    out, records = big
    html = (out / "index.html").read_text()
    rows = embedded_data(html)["results"]
    assert Counter((r[0], r[1], r[3], r[4], r[5]) for r in rows) == Counter(
        (r["case_id"], r["framework"], r["check"], r["dtype"], r["verdict"]) for r in records
    )
    chromium = _chromium()
    for r in (records[-1], next(r for r in records if r["verdict"] == "unsupported")):
        _, dom = _load(chromium, (out / "index.html").as_uri() + f"#q={r['case_id']}%20{r['check']}")
        found = re.findall(r'<tr class="result-row v-(\w+)" data-case="([^"]+)"', dom)
        assert found == [(r["verdict"], r["case_id"])]
