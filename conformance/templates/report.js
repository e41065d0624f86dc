// index.html's script: draws the summary matrix, the discrepancies, the cells and the results a page at a
// time from the JSON in <script id="report-data"> (conformance.report.page_data), so that the page's size
// and opening time stay small however many results the campaign has. No network, no library.
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("report-data").textContent);
  const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  const esc = (s) => String(s === null || s === undefined ? "" : s).replace(/[&<>"']/g, (c) => ESC[c]);
  // %.<p>g: a figure with p significant digits, trailing zeros dropped; "-" for none
  function g(x, p = 3) {
    if (x === null || x === undefined) return "-";
    if (x === "inf") return "inf";
    let s = Number(x).toPrecision(p);
    if (s.includes(".")) s = s.replace(/0+(e|$)/, "$1").replace(/\.(e|$)/, "$1");
    return s;
  }
  const ulpText = (u) => (u === null || u === undefined ? "-" : g(u));
  const counts = (c) => Object.entries(c).map(([v, n]) => `${n} ${esc(v)}`).join(", ");
  const cellId = (fw, op, check, dtype) => `cell-${fw}-${op}-${check}-${dtype}`;

  // A table or list drawn one page at a time: a search box (every word must appear in a row's text),
  // an optional verdict choice, previous/next; reveal(i) shows the page holding item i.
  function pager(id, items, render, opts = {}) {
    const root = document.getElementById(id);
    const size = Number(root.dataset.size);
    const body = root.querySelector(".pager-body");
    const bar = root.querySelector(".pager");
    const text = opts.text || (() => "");
    const verdicts = opts.verdicts || null;
    bar.innerHTML =
      `<input type="search" placeholder="${esc(opts.placeholder || "search")}" aria-label="search">` +
      (verdicts ? `<select aria-label="verdict"><option value="">${esc(opts.all || "every verdict")}</option>` +
        verdicts.map((v) => `<option>${esc(v)}</option>`).join("") + "</select>" : "") +
      '<button type="button" data-go="-1">&larr; previous</button><button type="button" data-go="1">next &rarr;</button>' +
      '<span class="where"></span>';
    const box = bar.querySelector("input"), pick = bar.querySelector("select"), where = bar.querySelector(".where");
    let shown = items.map((_, i) => i), page = 0;
    function draw() {
      const pages = Math.max(1, Math.ceil(shown.length / size));
      page = Math.min(Math.max(page, 0), pages - 1);
      body.innerHTML = shown.slice(page * size, (page + 1) * size).map((i) => render(items[i], i)).join("");
      const first = shown.length ? page * size + 1 : 0, last = Math.min(shown.length, (page + 1) * size);
      where.textContent = `${first}-${last} of ${shown.length}` +
        (shown.length !== items.length ? ` (of ${items.length})` : "") + `, page ${page + 1} of ${pages}`;
    }
    function filter() {
      const words = box.value.toLowerCase().split(/\s+/).filter(Boolean), v = pick ? pick.value : "";
      shown = [];
      items.forEach((item, i) => {
        if (v && !opts.hasVerdict(item, v)) return;
        const t = words.length ? text(item).toLowerCase() : "";
        if (words.every((w) => t.includes(w))) shown.push(i);
      });
      page = 0;
      draw();
    }
    box.addEventListener("input", filter);
    if (pick) pick.addEventListener("change", filter);
    bar.addEventListener("click", (e) => {
      const go = e.target.dataset && e.target.dataset.go;
      if (go) { page += Number(go); draw(); }
    });
    draw();
    return {
      reveal(i) {
        if (!shown.includes(i)) { box.value = ""; if (pick) pick.value = ""; shown = items.map((_, j) => j); }
        page = Math.floor(shown.indexOf(i) / size);
        draw();
      },
      search(words) { box.value = words; filter(); },
    };
  }

  // ---- histogram of log10(ratio/bound): exact, one bin per decade, inf; the bound's line ----
  function hist(bins, w = 300, hgt = 84) {
    const top = Math.max(1, ...bins), n = bins.length, bw = (w - 20) / n;
    const boundBin = 2 + D.edges.indexOf(0), x0 = 10 + boundBin * bw;
    let s = `<svg class="hist" width="${w}" height="${hgt + 16}" viewBox="0 0 ${w} ${hgt + 16}" role="img" ` +
      `aria-label="histogram of log10(ratio/bound) per case"><rect x="0" y="0" width="${x0}" height="${hgt}" fill="#f1f8f1"/>` +
      `<rect x="${x0}" y="0" width="${w - x0}" height="${hgt}" fill="#fbeeee"/>`;
    bins.forEach((c, i) => {
      const bh = ((hgt - 12) * c) / top, x = 10 + i * bw;
      s += `<rect class="bar" x="${x + 1}" y="${hgt - bh}" width="${bw - 2}" height="${bh}" ` +
        `fill="${i >= boundBin ? "#c0392b" : "#2e7d32"}"><title>${esc(D.hist_labels[i])}: ${c}</title></rect>`;
      if (c) s += `<text x="${x + bw / 2}" y="${hgt - bh - 2}" font-size="9" text-anchor="middle">${c}</text>`;
    });
    return s + `<line x1="${x0}" x2="${x0}" y1="0" y2="${hgt}" stroke="#000" stroke-dasharray="3,2"/>` +
      `<text x="${x0 + 3}" y="10" font-size="9">bound</text><text x="10" y="${hgt + 12}" font-size="9">0</text>` +
      `<text x="${10 + 1.5 * bw}" y="${hgt + 12}" font-size="9" text-anchor="middle">1e${D.edges[0]}</text>` +
      `<text x="${x0}" y="${hgt + 12}" font-size="9" text-anchor="middle">1</text>` +
      `<text x="${w - 10 - bw / 2}" y="${hgt + 12}" font-size="9" text-anchor="middle">inf</text></svg>`;
  }

  // ---- the summary matrix: one row per op x check x dtype, one column per framework ----
  const cellIndex = new Map(D.cells.map((c, i) => [c[0], i]));
  const rowKeys = new Map();
  D.cells.forEach((c) => {
    const key = JSON.stringify([c[2], c[3], c[4]]);
    if (!rowKeys.has(key)) rowKeys.set(key, { op: c[2], check: c[3], dtype: c[4], cells: {} });
    rowKeys.get(key).cells[c[1]] = c;
  });
  const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  const rows = [...rowKeys.values()].sort((a, b) => cmp(a.op, b.op) || cmp(a.check, b.check) || cmp(a.dtype, b.dtype));
  const departs = (v) => v !== "pass" && v !== "unsupported";
  function matrixCell(c) {
    if (!c) return '<td class="cell v-none">&nbsp;</td>';
    const [id, , , , , , cts, verdict, worst] = c;
    const pass = cts.pass && verdict !== "pass" ? ` <span class="muted">(${cts.pass} pass)</span>` : "";
    const w = worst ? `worst ${g(worst[6])} / ${g(worst[7])} = <b>${g(worst[8], 2)}</b>` +
      (worst[5] !== null && worst[5] !== undefined ? ` <span class="muted">(${ulpText(worst[5])} ulps)</span>` : "")
      : '<span class="muted">no ratio</span>';
    return `<td class="cell v-${esc(verdict)}" data-verdict="${esc(verdict)}"><a href="#${esc(id)}">` +
      `<span class="big">${esc(verdict)}</span>${pass}<br>${counts(cts)}<br>${w}</a></td>`;
  }
  pager("summary-pager", rows, (r) =>
    `<tr class="matrix-row"><td>${esc(r.op)}</td><td>${esc(r.check)}</td><td>${esc(r.dtype)}</td>` +
    D.frameworks.map((fw) => matrixCell(r.cells[fw])).join("") + "</tr>", {
    text: (r) => `${r.op} ${r.check} ${r.dtype}`,
    placeholder: "op, check or dtype",
    verdicts: ["departing"],
    all: "every row",
    hasVerdict: (r) => Object.values(r.cells).some((c) => departs(c[7])),
  });

  // ---- discrepancies: the case JSON and the reproducer are drawn when their <details> opens ----
  function worstTable(w, failing) {
    if (!w) return "";
    return '<table class="worst"><tr><th>worst element</th><th>observed</th><th>reference (float64)</th>' +
      "<th>error (ulps)</th><th>ratio</th><th>bound</th><th>ratio/bound</th><th>elements outside</th></tr>" +
      `<tr><td><code>${esc(w[1])}</code></td><td class="num"><code>${esc(w[2])}</code>` +
      (w[4] ? ` <span class="muted">${esc(w[4])}</span>` : "") + `</td><td class="num"><code>${esc(w[3])}</code></td>` +
      `<td class="num">${ulpText(w[5])}${w[4] ? ` <span class="muted">of ${esc(w[4])}</span>` : ""}</td>` +
      `<td class="num">${g(w[6])}</td><td class="num">${g(w[7])}</td><td class="num"><b>${g(w[8])}</b></td>` +
      `<td class="num">${esc(failing || "-")}</td></tr></table>`;
  }
  const discIndex = new Map(D.discrepancies.map((d, i) => [d.id, i]));
  const discrepancies = D.discrepancies.length ? pager("discrepancy-pager", D.discrepancies, (d, i) => {
    const same = d.same_kind || [];
    return `<section class="discrepancy ${esc(d.verdict)}" id="${esc(d.id)}">` +
      `<h3>${esc(d.verdict)}: ${esc(d.framework)} &middot; ${esc(d.op)} ${esc(d.check)} &middot; ${esc(d.dtype)} ` +
      `<span class="muted">(${esc(d.kind)})</span> <a class="muted" href="#${esc(d.cell)}">cell</a></h3>` +
      `<p><b>case</b> <code>${esc(d.case_id)}</code> (${esc(d.phase)}): <code>${esc(d.config)}</code>` +
      (d.found ? ` &middot; saved as <code>${esc(d.found)}</code>` : "") + "</p>" +
      `<pre class="reason">${esc(d.reason)}</pre>` +
      (d.rerun ? `<p class="rerun"><b>run twice</b>: ${esc(d.rerun)}</p>` : "") +
      (d.modes ? '<p class="mode-differential"><b>execution modes</b>: ' +
        Object.entries(d.modes).map(([m, v]) => `<code>${esc(m)}</code> ${esc(v)}`).join(", ") + "</p>" : "") +
      worstTable(d.worst, d.failing_elements) +
      `<p>bound: u = ${g(d.bound.u)} (${esc(d.bound.compute_dtype)}), K = <code>${esc(JSON.stringify(d.bound.K))}</code></p>` +
      (same.length ? `<p>${same.length} other case(s) of this kind: <code>${esc(same.slice(0, 20).join(", "))}` +
        `${same.length > 20 ? ", ..." : ""}</code></p>` : "") +
      `<p>Replay with refgrad: <code class="replay">${esc(d.replay)}</code></p>` +
      `<details data-d="${i}" data-show="case"><summary>case JSON</summary><pre></pre></details>` +
      (d.reproducer ? `<details class="reproducer" data-d="${i}" data-show="reproducer"><summary>standalone reproducer ` +
        `<code>${esc(d.reproducer_file)}</code> (NumPy + ${esc(d.framework)}; exits 1 while the departure is present)</summary>` +
        "<pre></pre></details>" : `<p class="muted">no reproducer: ${esc(d.reproducer_error)}</p>`) + "</section>";
  }, {
    text: (d) => `${d.framework} ${d.op} ${d.check} ${d.dtype} ${d.kind} ${d.verdict} ${d.case_id} ${d.reason}`,
    placeholder: "framework, op, check, kind, case...",
  }) : null;
  document.addEventListener("toggle", (e) => {
    const el = e.target;
    if (!el.dataset || el.dataset.d === undefined || !el.open) return;
    const pre = el.querySelector("pre");
    if (pre.textContent) return;
    const d = D.discrepancies[Number(el.dataset.d)];
    pre.textContent = el.dataset.show === "case" ? JSON.stringify(d.case, null, 1) : d.reproducer;
  }, true);

  // ---- cells: histogram, worst element, what the failures share ----
  const cells = pager("cell-pager", D.cells, (c) => {
    const [id, fw, op, check, dtype, n, cts, verdict, worst, bins, failing, nFailing, shared] = c;
    const any = bins.some((b) => b);
    return `<div class="cell-detail" id="${esc(id)}"><h4>${esc(fw)} &middot; ${esc(op)} ${esc(check)} &middot; ${esc(dtype)} ` +
      `<span class="badge v-${esc(verdict)}">${esc(verdict)}</span></h4><p>${n} results: ${counts(cts)}</p>` +
      (any ? hist(bins) : "") +
      (worst ? `<p>worst: <code>${esc(worst[0])}</code> ${esc(worst[1])} = <code>${esc(worst[2])}</code>, reference ` +
        `<code>${esc(worst[3])}</code>: ${ulpText(worst[5])} ulps${worst[4] ? ` of ${esc(worst[4])}` : ""}, ` +
        `ratio ${g(worst[6])} / bound ${g(worst[7])}</p>` : "") +
      (shared.length ? '<p class="shared"><b>Failures share:</b></p><ul class="shared-parameters">' +
        shared.map(([p, f, ft, ps, pt]) => `<li>${esc(p)}: ${f}/${ft} failing` +
          (pt ? `, ${ps}/${pt} passing` : " (no passing case to contrast)") + "</li>").join("") + "</ul>"
        : nFailing ? '<p class="muted">No parameter is shared by the failures and rare among the passing cases.</p>' : "") +
      (nFailing ? `<p>failing: <code>${esc(failing.join(", "))}${nFailing > failing.length ? ", ..." : ""}</code></p>` : "") +
      "</div>";
  }, {
    text: (c) => `${c[1]} ${c[2]} ${c[3]} ${c[4]} ${c[7]}`,
    placeholder: "framework, op, check, dtype, verdict",
  });

  // ---- every result ----
  const verdictsSeen = [...new Set(D.results.map((r) => r[5]))].sort();
  const results = pager("result-pager", D.results, (r) => {
    const [caseId, fw, op, check, dtype, verdict, phase, excess, ulps] = r;
    return `<tr class="result-row v-${esc(verdict)}" data-case="${esc(caseId)}"><td><code>${esc(caseId)}</code></td>` +
      `<td>${esc(fw)}</td><td><a href="#${esc(cellId(fw, op, check, dtype))}">${esc(op)}</a></td><td>${esc(check)}</td>` +
      `<td>${esc(dtype)}</td><td class="verdict">${esc(verdict)}</td><td class="num">${g(excess)}</td>` +
      `<td class="num">${ulpText(ulps)}</td><td>${esc(phase)}</td></tr>`;
  }, {
    text: (r) => r.slice(0, 7).join(" "),
    placeholder: "case id, framework, op, check, dtype...",
    verdicts: verdictsSeen,
    hasVerdict: (r, v) => r[5] === v,
  });

  // ---- links: #cell-..., #dN, #q=WORDS show the page holding them ----
  function follow() {
    const h = decodeURIComponent(location.hash.slice(1));
    if (!h) return;
    let target = null;
    if (h.startsWith("q=")) {
      results.search(h.slice(2));
      target = "results";
    } else if (cellIndex.has(h)) {
      cells.reveal(cellIndex.get(h));
      target = h;
    } else if (discrepancies && discIndex.has(h)) {
      discrepancies.reveal(discIndex.get(h));
      target = h;
    }
    const el = target && document.getElementById(target);
    if (el) el.scrollIntoView();
  }
  window.addEventListener("hashchange", follow);
  follow();
})();
