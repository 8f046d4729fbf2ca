// varprobe explorer: plain JavaScript, no library, no network. Data chunks (data/<name>.js) call
// VP.chunk(name, data); they are loaded by script tags on demand (file:// forbids fetch).
"use strict";

const VP = (() => {
  const loaded = {};
  const waiting = {};
  const PAGE = 100;
  const $ = (id) => document.getElementById(id);

  function chunk(name, data) {
    loaded[name] = data;
    (waiting[name] || []).forEach((done) => done(data));
    delete waiting[name];
    if (name === "manifest") start(data);
  }

  function load(name) {
    if (name in loaded) return Promise.resolve(loaded[name]);
    const inline = document.getElementById("vp-chunk-" + name);  // the single-file explorer
    if (inline) {
      chunk(name, JSON.parse(inline.textContent));
      return Promise.resolve(loaded[name]);
    }
    return new Promise((resolve, reject) => {
      const first = !(name in waiting);
      (waiting[name] = waiting[name] || []).push(resolve);
      if (first) {
        const tag = document.createElement("script");
        tag.src = "data/" + name + ".js";
        tag.onerror = () => reject(new Error("cannot load data/" + name + ".js"));
        document.head.appendChild(tag);
      }
    });
  }

  function esc(text) {
    return String(text).replace(/[&<>"']/g, (c) => ({
      "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;",
    })[c]);
  }

  function fmt(x, digits = 4) {
    if (x === null || x === undefined || Number.isNaN(x)) return "–";
    const text = Number(x).toFixed(digits);
    return Number(text) === 0 ? text.replace("-", "") : text;  // no "-0.0000"
  }

  // A sortable, filterable, paged table. columns: {key, label, value(i), html(i), cls}.
  class Table {
    constructor(table, pager, onSelect) {
      this.table = table;
      this.pager = pager;
      this.onSelect = onSelect;
      this.columns = [];
      this.rows = [];
      this.order = [];
      this.sort = null;
      this.page = 0;
      this.selected = null;
      table.tHead.addEventListener("click", (e) => {
        const th = e.target.closest("th");
        if (th) this.sortBy(th.dataset.key);
      });
      table.tBodies[0].addEventListener("click", (e) => {
        const tr = e.target.closest("tr");
        if (tr) this.select(Number(tr.dataset.row));
      });
    }

    setColumns(columns) {
      this.columns = columns;
      if (this.sort && !columns.some((c) => c.key === this.sort.key)) this.sort = null;
      this.table.tHead.innerHTML = "<tr>" + columns.map((c) =>
        `<th data-key="${esc(c.key)}" title="${esc(c.title || c.label)}">${esc(c.label)}</th>`
      ).join("") + "</tr>";
    }

    setRows(rows) {
      this.rows = rows;
      this.page = 0;
      this.apply();
    }

    sortBy(key) {
      const dir = this.sort && this.sort.key === key && this.sort.dir === "asc" ? "desc" : "asc";
      this.sort = {key, dir};
      this.page = 0;
      this.apply();
    }

    apply() {
      this.order = this.rows.slice();
      if (this.sort) {
        const column = this.columns.find((c) => c.key === this.sort.key);
        const sign = this.sort.dir === "asc" ? 1 : -1;
        const value = this.order.map((i) => column.value(i));
        const at = new Map(this.order.map((row, k) => [row, value[k]]));
        this.order.sort((a, b) => {
          const x = at.get(a), y = at.get(b);
          const xm = x === null || x === undefined || Number.isNaN(x);
          const ym = y === null || y === undefined || Number.isNaN(y);
          if (xm || ym) return xm === ym ? a - b : (xm ? 1 : -1);  // missing values last
          if (x < y) return -sign;
          if (x > y) return sign;
          return a - b;
        });
      }
      for (const th of this.table.tHead.querySelectorAll("th")) {
        th.className = this.sort && th.dataset.key === this.sort.key ? "sorted-" + this.sort.dir : "";
      }
      this.render();
    }

    render() {
      const pages = Math.max(1, Math.ceil(this.order.length / PAGE));
      this.page = Math.min(this.page, pages - 1);
      const shown = this.order.slice(this.page * PAGE, (this.page + 1) * PAGE);
      this.table.tBodies[0].innerHTML = shown.map((i) =>
        `<tr data-row="${i}"${i === this.selected ? ' class="selected"' : ""}>` +
        this.columns.map((c) => `<td class="${c.cls || ""}">${c.html(i)}</td>`).join("") + "</tr>"
      ).join("");
      this.pager.innerHTML =
        `<button type="button" data-go="-1"${this.page === 0 ? " disabled" : ""}>previous</button>` +
        `<span>page ${this.page + 1} of ${pages} (${this.order.length} rows)</span>` +
        `<button type="button" data-go="1"${this.page >= pages - 1 ? " disabled" : ""}>next</button>`;
      this.pager.onclick = (e) => {
        const go = e.target.dataset && e.target.dataset.go;
        if (go) { this.page += Number(go); this.render(); }
      };
    }

    select(i) {
      this.selected = i;
      for (const tr of this.table.tBodies[0].rows) {
        tr.classList.toggle("selected", Number(tr.dataset.row) === i);
      }
      this.onSelect(i);
    }
  }

  function numberColumn(key, label, values, title, digits = 4) {
    return {key, label, title, value: (i) => values[i], html: (i) => fmt(values[i], digits)};
  }

  function bar(word, p, cls, note) {
    const width = Math.max(0, Math.min(1, p)) * 100;
    return `<div class="bar ${cls}" data-word="${esc(word)}" data-p="${p}">` +
      `<span class="label" title="${esc(word)}">${esc(word)}</span>` +
      `<span class="track"><span class="fill" style="width:${width.toFixed(2)}%"></span></span>` +
      `<span class="value" title="${esc(note || "")}">${fmt(p)}</span></div>`;
  }

  // ---------------------------------------------------------------- Provo
  const provo = {table: null, data: null, manifest: null, chosen: new Set()};

  function provoStart(manifest) {
    provo.manifest = manifest;
    return load(manifest.table).then((data) => {
      provo.data = data;
      // A context's place in its passage's chunk: the chunk lists them in table order.
      const seen = new Map();
      provo.slot = data.contexts.text_id.map((t) => {
        const k = seen.get(t) || 0;
        seen.set(t, k + 1);
        return k;
      });
      data.systems.forEach((s) => provo.chosen.add(s.name));
      $("provo-systems").innerHTML = "systems: " + data.systems.map((s, k) =>
        `<label><input type="checkbox" data-system="${k}" checked> ${esc(s.name)}` +
        `${s.exact ? " (exact)" : ""}</label>`).join(" ");
      $("provo-systems").onchange = (e) => {
        const s = data.systems[Number(e.target.dataset.system)];
        if (e.target.checked) provo.chosen.add(s.name); else provo.chosen.delete(s.name);
        provoColumns();
        if (provo.table.selected !== null) provoDetail(provo.table.selected);
      };
      $("provo-summary").innerHTML = data.systems.map((s) => {
        const m = s.summary || {};
        const interval = s.exact ? ` [${fmt(m.expected_tvd_lower, 3)}, ${fmt(m.expected_tvd_upper, 3)}]` : "";
        return `<span><b>${esc(s.name)}</b>: E TVD(M, H) ${fmt(m.expected_tvd, 3)}` +
          ` (95% CI ${fmt(m.ci_low, 3)}–${fmt(m.ci_high, 3)})${interval},` +
          ` failure rate ${fmt(m.failure_rate, 3)}</span>`;
      }).join(" · ");
      const passages = [...new Set(data.contexts.text_id)];
      $("provo-passage").innerHTML += passages.map((t) => `<option>${t}</option>`).join("");
      provo.table = new Table($("provo-table"), $("provo-pager"), provoDetail);
      provoColumns();
      $("provo-filter").oninput = provoFilter;
      $("provo-passage").onchange = provoFilter;
      provoFilter();
    });
  }

  function provoColumns() {
    const c = provo.data.contexts;
    const columns = [
      numberColumn("text_id", "passage", c.text_id, "Provo passage", 0),
      numberColumn("word_number", "position", c.word_number, "word number in the passage", 0),
      {key: "context", label: "context", cls: "text", value: (i) => c.context[i],
       html: (i) => `<span title="${esc(c.context[i])}">…${esc(c.context[i].slice(-60))}</span>`},
      {key: "corpus_word", label: "corpus word", cls: "text", value: (i) => c.corpus_word[i],
       html: (i) => esc(c.corpus_word[i])},
      numberColumn("entropy_human", "H entropy", c.entropy_human, "entropy of the human responses (nats)", 3),
      numberColumn("tvd_oracle", "TVD(O2, O1)", c.tvd_oracle,
        "the oracle control: TVD between the two halves of the humans, mean over resplits"),
    ];
    for (const s of provo.data.systems) {
      if (!provo.chosen.has(s.name)) continue;
      columns.push({
        key: "tvd:" + s.name, label: s.name + " TVD(M, H)", title: "TVD to all humans (H)" +
          (s.exact ? " [interval left open by the unresolved mass]" : ""),
        value: (i) => s.tvd[i],
        html: (i) => fmt(s.tvd[i]) +
          (s.exact ? ` <span class="meta">[${fmt(s.tvd_lower[i], 3)}, ${fmt(s.tvd_upper[i], 3)}]</span>` : ""),
      });
      columns.push(numberColumn("fail:" + s.name, s.name + " failures", s.failure_rate,
        s.exact ? "resolved failure mass" : "share of failed draws", 3));
      if (s.exact) {
        columns.push(numberColumn("cert:" + s.name, s.name + " certified", s.certified,
          "certified mass 1 - unresolved", 3));
      }
    }
    provo.table.setColumns(columns);
    provo.table.apply();
  }

  function provoFilter() {
    const c = provo.data.contexts;
    const words = $("provo-filter").value.trim().toLowerCase();
    const passage = $("provo-passage").value;
    const rows = [];
    for (let i = 0; i < c.text_id.length; i++) {
      if (passage && String(c.text_id[i]) !== passage) continue;
      if (words && !(c.context[i].toLowerCase().includes(words) || c.corpus_word[i].includes(words))) continue;
      rows.push(i);
    }
    $("provo-count").textContent = `${rows.length} of ${c.text_id.length} contexts`;
    provo.table.setRows(rows);
  }

  function provoDetail(i) {
    const c = provo.data.contexts;
    const t = c.text_id[i];
    const detail = $("provo-detail");
    detail.innerHTML = "<p>loading…</p>";
    load(provo.manifest.passages[String(t)]).then((rows) => {
      const words = rows[provo.slot[i]];
      const corpus = c.corpus_word[i];
      const total = words.human.reduce((sum, rn) => sum + rn[1], 0);
      let html = `<h2>Passage ${t}, position ${c.word_number[i]}</h2>` +
        `<p class="context">${esc(c.context[i])} <span class="gap"></span></p>` +
        `<p class="meta">corpus word: <b>${esc(corpus)}</b> · human entropy ${fmt(c.entropy_human[i], 3)}` +
        ` · TVD(O2, O1) ${fmt(c.tvd_oracle[i])}</p><div class="dists">` +
        `<div class="dist humans" data-system="humans"><h3>Humans (${total} responses)</h3>` +
        words.human.map(([w, n]) => bar(w, n / total, w === corpus ? "word corpus" : "word",
          `${n} of ${total}`)).join("") + "</div>";
      provo.data.systems.forEach((s, k) => {
        if (!provo.chosen.has(s.name)) return;
        const d = words.systems[k];
        html += `<div class="dist" data-system="${esc(s.name)}"><h3>${esc(s.name)}</h3>`;
        if (!d) { html += "<p class='meta'>no rows for this context</p></div>"; return; }
        html += `<p class="meta">TVD(M, H) ${fmt(s.tvd[i])}` +
          (s.exact ? ` [${fmt(s.tvd_lower[i])}, ${fmt(s.tvd_upper[i])}] · enumerated masses` +
            ` (certified ${fmt(s.certified[i], 3)})` : ` · ${d.kept} of ${d.draws} draws gave a word`) +
          "</p>";
        html += d.words.map(([w, p]) => bar(w, p, w === corpus ? "word corpus" : "word")).join("");
        if (d.other > 0) html += bar("(other words)", d.other, "other");
        if (s.exact) html += bar("(unresolved)", d.unresolved, "unresolved",
          "mass not yet resolved to a word or a failure");
        if (d.failures.length) {
          html += `<table class="failures"><tr><th>failure</th><th>${s.exact ? "mass" : "draws"}</th></tr>` +
            d.failures.map(([r, v]) => `<tr data-reason="${esc(r)}"><td>${esc(r)}</td>` +
              `<td>${s.exact ? fmt(v) : v}</td></tr>`).join("") + "</table>";
        } else {
          html += "<p class='meta'>no failures</p>";
        }
        html += "</div>";
      });
      detail.innerHTML = html + "</div>";
      detail.dataset.context = `${t}:${c.word_number[i]}`;
    }).catch((err) => { detail.textContent = String(err); });
  }

  // ---------------------------------------------------------------- production
  const prod = {table: null, manifest: null, system: null, stats: null, adequacy: null, sources: null};
  const STATS = [
    ["mean_H", "mean H", "mean distance between references"],
    ["mean_M", "mean M", "mean distance between samples"],
    ["mean_C", "mean C", "mean distance between samples and references"],
    ["mean_M_minus_H", "mean M - H", "mean M minus mean H"],
    ["mean_C_minus_H", "mean C - H", "mean C minus mean H"],
    ["w1_M_H", "W1(M, H)", "Wasserstein-1 between the M and H distances"],
    ["w1_C_H", "W1(C, H)", "Wasserstein-1 between the C and H distances"],
    ["w1_control", "W1 human control", "W1 between two disjoint halves of the references"],
  ];
  const ADEQUACY = [
    ["chrf", "chrF", "mean sentence chrF of the outputs against the references (0-100)"],
    ["bleu", "BLEU", "mean sentence BLEU of the outputs against the references (0-100)"],
    ["sari", "SARI", "mean sentence SARI of the outputs against the source and the references (0-100; simplification only)"],
    ["language_share", "in the task's language", "share of outputs identified as in the task's language"],
    ["empty_share", "empty", "share of empty outputs"],
    ["copy_share", "copies the input", "share of outputs that copy the input"],
    ["reference_language_share", "references in the task's language", "share of the references identified as in the task's language (the identifier's ceiling)"],
  ];

  function productionStart(manifest) {
    prod.manifest = manifest;
    $("prod-system").innerHTML = manifest.systems.map((s, k) =>
      `<option value="${k}">${esc(s.name)}</option>`).join("");
    prod.table = new Table($("prod-table"), $("prod-pager"), productionDetail);
    $("prod-system").onchange = () => productionSystem(Number($("prod-system").value));
    $("prod-probe").onchange = () => { productionColumns(); productionDetailAgain(); };
    $("prod-filter").oninput = productionFilter;
    return manifest.systems.length ? productionSystem(0) : Promise.resolve();
  }

  function productionSystem(k) {
    const s = prod.manifest.systems[k];
    const dataset = prod.manifest.datasets[s.dataset];
    return Promise.all([load(s.statistics), load(s.adequacy), load(dataset.sources)]).then(([stats, adequacy, sources]) => {
      prod.system = s;
      prod.stats = stats;
      prod.adequacy = adequacy;
      prod.sources = sources;
      const probe = $("prod-probe").value;
      $("prod-probe").innerHTML = s.probes.map((p) => `<option>${esc(p)}</option>`).join("");
      if (s.probes.includes(probe)) $("prod-probe").value = probe;
      prod.table.selected = null;
      $("prod-detail").innerHTML = '<p class="hint">Choose an input to see its texts and distances.</p>';
      productionColumns();
      productionFilter();
    });
  }

  function productionColumns() {
    const src = prod.sources;
    const probe = $("prod-probe").value;
    const stats = prod.stats[probe] || {};
    const columns = [
      {key: "input_id", label: "input", value: (i) => i, html: (i) => esc(src.input_id[i])},
      {key: "source", label: "source", cls: "text", value: (i) => src.source[i],
       html: (i) => `<span title="${esc(src.source[i])}">${esc(src.source[i].slice(0, 90))}</span>`},
    ];
    for (const [key, label, title] of STATS) {
      columns.push(numberColumn(key, label, stats[key] || [], title + " (" + probe + ")"));
    }
    for (const [key, label, title] of ADEQUACY) {
      if (prod.adequacy[key]) columns.push(numberColumn(key, label, prod.adequacy[key], title));
    }
    prod.table.setColumns(columns);
    prod.table.apply();
  }

  function productionFilter() {
    const src = prod.sources;
    const words = $("prod-filter").value.trim().toLowerCase();
    const rows = [];
    for (let i = 0; i < src.input_id.length; i++) {
      if (words && !(src.input_id[i].toLowerCase().includes(words) ||
                     src.source[i].toLowerCase().includes(words))) continue;
      rows.push(i);
    }
    $("prod-count").textContent = `${rows.length} of ${src.input_id.length} inputs`;
    prod.table.setRows(rows);
  }

  function productionDetailAgain() {
    if (prod.table.selected !== null) productionDetail(prod.table.selected);
  }

  function histogram(values, lo, hi, colour, label) {
    const bins = 20, width = 320, height = 60;
    const counts = new Array(bins).fill(0);
    const span = hi - lo || 1;
    for (const v of values) counts[Math.min(bins - 1, Math.max(0, Math.floor((v - lo) / span * bins)))]++;
    const top = Math.max(1, ...counts);
    const w = width / bins;
    const bars = counts.map((n, b) =>
      `<rect x="${(b * w).toFixed(1)}" y="${(height - n / top * height).toFixed(1)}" ` +
      `width="${(w - 1).toFixed(1)}" height="${(n / top * height).toFixed(1)}" fill="${colour}">` +
      `<title>${n} pairs in [${(lo + b * span / bins).toFixed(3)}, ${(lo + (b + 1) * span / bins).toFixed(3)})</title></rect>`
    ).join("");
    const mean = values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN;
    return `<div class="hist" data-kind="${label}" data-n="${values.length}">` +
      `<div>${label}: ${values.length} pairs, mean ${fmt(mean)}</div>` +
      `<svg width="${width}" height="${height + 14}" role="img">${bars}` +
      `<text x="0" y="${height + 11}">${lo.toFixed(2)}</text>` +
      `<text x="${width}" y="${height + 11}" text-anchor="end">${hi.toFixed(2)}</text></svg></div>`;
  }

  function productionDetail(i) {
    const s = prod.system;
    const dataset = prod.manifest.datasets[s.dataset];
    const block = Math.floor(i / prod.manifest.block);
    const at = i - block * prod.manifest.block;
    const probe = $("prod-probe").value;
    const detail = $("prod-detail");
    detail.innerHTML = "<p>loading…</p>";
    Promise.all([load(dataset.blocks[block]), load(s.blocks[block])]).then(([texts, outputs]) => {
      const references = texts.references[at];
      const samples = outputs.samples[at];
      const distances = outputs.distances[at][probe] || {H: [], M: [], C: []};
      const all = [...distances.H, ...distances.M, ...distances.C];
      const lo = Math.min(0, ...all), hi = Math.max(1, ...all);
      const stats = prod.stats[probe] || {};
      detail.innerHTML =
        `<h2>${esc(s.dataset)} input ${esc(prod.sources.input_id[i])}</h2>` +
        `<p class="meta">${esc(s.name)} · probe ${esc(probe)} · W1(M, H) ${fmt((stats.w1_M_H || [])[i])}` +
        ` · W1(C, H) ${fmt((stats.w1_C_H || [])[i])} · W1 human control ${fmt((stats.w1_control || [])[i])}</p>` +
        `<h3>Distances (${esc(probe)})</h3>` +
        histogram(distances.H, lo, hi, "#c0703a", "H") +
        histogram(distances.M, lo, hi, "#4a6fb5", "M") +
        histogram(distances.C, lo, hi, "#5a9a5a", "C") +
        `<h3>Source</h3><p class="texts source">${esc(prod.sources.source[i])}</p>` +
        `<h3>References (${references.length})</h3><ol class="texts references">` +
        references.map((r) => `<li>${esc(r)}</li>`).join("") + "</ol>" +
        `<h3>Samples (${samples.length})</h3><ol class="texts samples">` +
        samples.map((r) => `<li>${esc(r)}</li>`).join("") + "</ol>";
      detail.dataset.input = prod.sources.input_id[i];
    }).catch((err) => { detail.textContent = String(err); });
  }

  // ---------------------------------------------------------------- start
  function show(view) {
    for (const name of ["provo", "production"]) {
      $(name + "-view").hidden = name !== view;
      $("tab-" + name).classList.toggle("active", name === view);
    }
    if (location.hash !== "#" + view) history.replaceState(null, "", "#" + view);
  }

  function start(manifest) {
    const t0 = performance.now();
    document.title = manifest.title;
    const views = [];
    for (const [name, data] of [["provo", manifest.provo], ["production", manifest.production]]) {
      $("tab-" + name).hidden = !data;
      if (data) {
        views.push(name);
        $("tab-" + name).onclick = () => show(name);
      }
    }
    const wanted = location.hash.slice(1);
    show(views.includes(wanted) ? wanted : views[0]);
    window.addEventListener("hashchange", () => {
      const view = location.hash.slice(1);
      if (views.includes(view)) show(view);
    });
    Promise.all([
      manifest.provo ? provoStart(manifest.provo) : null,
      manifest.production ? productionStart(manifest.production) : null,
    ]).then(() => {
      const ms = performance.now();
      $("status").textContent = `ready in ${Math.round(ms)} ms (data ${Math.round(ms - t0)} ms)`;
      document.body.dataset.ready = String(ms);
    }).catch((err) => { $("status").textContent = String(err); });
  }

  return {chunk, load};
})();
