"""report.json (the source of truth) and index.html (rendered from it with Jinja2).

A simple, honest summary: per framework and check, how many results had each verdict and the
largest judged ratio; every non-passing result with its reason, bound and case; every
``unsupported`` reason with its count. A later report writer can build on report.json.
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from pathlib import Path

from conformance.runner import read_results
from conformance.tolerance import FAILING, VERDICTS

TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>refgrad conformance report</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}
th{background:#f4f4f4}.fail,.error_mismatch,.crash,.timeout{background:#fdd}.pass{background:#efe}
.unsupported{background:#eee}code,pre{font-size:.85em}td.l{text-align:left}
</style></head><body>
<h1>refgrad conformance report</h1>
<p>{{ report.created }} &middot; {{ report.totals.get('results', 0) }} results &middot;
<b class="{{ 'fail' if report.failed else 'pass' }}">{{ 'FAILURES FOUND' if report.failed else 'no failures' }}</b></p>
<p>Bound: <code>{{ report.bound_formula }}</code>; judged figure <code>ratio = |observed - expected| / (u*M)</code>.</p>
<h2>Frameworks</h2>
<table><tr><th>framework</th><th>version</th><th class="l">settings</th></tr>
{% for name, info in report.frameworks.items() %}<tr><td>{{ name }}</td><td>{{ info.get('version', '-') }}</td>
<td class="l"><code>{{ info.get('settings', info.get('error', '')) }}</code></td></tr>{% endfor %}</table>
<h2>Summary</h2>
<table><tr><th>framework</th><th>check</th>{% for v in verdicts %}<th>{{ v }}</th>{% endfor %}<th>max ratio</th></tr>
{% for fw, checks in report.summary.items() %}{% for check, counts in checks.items() %}
<tr><td>{{ fw }}</td><td>{{ check }}</td>{% for v in verdicts %}
<td class="{{ v if counts.get(v) else '' }}">{{ counts.get(v, '') }}</td>{% endfor %}
<td>{{ '%.3g' % report.max_ratio[fw][check] if report.max_ratio[fw][check] is not none else '-' }}</td></tr>
{% endfor %}{% endfor %}</table>
<h2>Failures ({{ report.failures|length }})</h2>
{% for r in report.failures %}<div class="{{ r.verdict }}"><h3>{{ r.verdict }}: {{ r.framework }} {{ r.check }}
&middot; {{ r.case_id }}</h3><p>{{ r.config }}</p><pre>{{ r.reason }}</pre>
<p>bound: <code>{{ r.bound }}</code>{% if r.found %} &middot; saved: <code>{{ r.found }}</code>{% endif %}</p>
<details><summary>case JSON (conformance replay FILE)</summary><pre>{{ r.case | tojson(indent=2) }}</pre></details></div>
{% else %}<p>None.</p>{% endfor %}
<h2>Unsupported (declared by the adapters)</h2>
<table><tr><th>framework</th><th class="l">reason</th><th>results</th></tr>
{% for fw, reasons in report.unsupported.items() %}{% for reason, n in reasons.items() %}
<tr><td>{{ fw }}</td><td class="l">{{ reason }}</td><td>{{ n }}</td></tr>{% endfor %}{% endfor %}</table>
</body></html>
"""


def build_report(out_dir, frameworks: dict | None = None, command: str = "") -> dict:
    """Summarise ``out_dir/results.jsonl`` into report.json and index.html; return the report."""
    import jinja2

    from conformance.tolerance import BOUND_FORMULA

    out = Path(out_dir)
    records = read_results(out / "results.jsonl")
    summary = defaultdict(lambda: defaultdict(Counter))
    max_ratio = defaultdict(dict)
    unsupported = defaultdict(Counter)
    totals = Counter(results=len(records))
    for r in records:
        fw, check = r["framework"], r["check"]
        summary[fw][check][r["verdict"]] += 1
        totals[r["verdict"]] += 1
        if r.get("max_ratio") is not None:
            max_ratio[fw][check] = max(max_ratio[fw].get(check) or 0.0, r["max_ratio"])
        else:
            max_ratio[fw].setdefault(check, None)
        if r["verdict"] == "unsupported":
            unsupported[fw][r.get("reason", "")] += 1
    failures = [r for r in records if r["verdict"] in FAILING]
    report = {
        "created": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "command": command,
        "bound_formula": BOUND_FORMULA,
        "frameworks": frameworks or {},
        "totals": dict(totals),
        "failed": bool(failures),
        "summary": {fw: {c: dict(v) for c, v in checks.items()} for fw, checks in summary.items()},
        "max_ratio": {fw: dict(v) for fw, v in max_ratio.items()},
        "failures": failures,
        "unsupported": {fw: dict(v) for fw, v in unsupported.items()},
    }
    (out / "report.json").write_text(json.dumps(report, indent=1))
    html = jinja2.Environment(autoescape=True).from_string(TEMPLATE).render(report=report, verdicts=VERDICTS)
    (out / "index.html").write_text(html)
    return report
