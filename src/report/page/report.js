// anvil's run report: every element is made here from the embedded data, and
// every text the run holds (the model's, the candidate's, the compiler's)
// enters the page through textContent only.
(function () {
  const data = JSON.parse(document.getElementById("anvil-data").textContent);
  const m = data.metrics;

  function statusChip(s) {
    return el("span", { class: "status s-" + String(s).replace(/[^a-z_]/g, ""), text: s });
  }

  // The paper's table: a row per level and one for the whole run, at one turn.
  function metricsTable(turn) {
    const n = turn.overall.n;
    const fastKeys = Object.keys(turn.overall.fast_p);
    const head = ["level", "problems", "samples", "Pass@1", "Pass@" + Math.max(n, 1), "Avg@" + n,
      "Faster eager %", "Faster compile %", "geomean eager", "geomean compile"].concat(fastKeys.map((k) => "fast_" + k));
    const table = el("table", { class: "metrics", "data-turn": String(turn.turn) },
      [el("tr", {}, head.map((h, i) => el("th", { class: i === 0 ? "name" : "", text: h })))]);
    const rows = turn.levels.concat([turn.overall]);
    for (const l of rows) {
      const passN = l.pass_at_k_pct[String(Math.max(l.n, 1))];
      const cells = [
        ["level", l.level, l.level === "all" ? "all" : String(l.level)],
        ["problems", l.problems, String(l.problems)],
        ["samples", l.samples, String(l.samples)],
        ["pass_at_1", l.pass_at_k_pct["1"], fixed(l.pass_at_k_pct["1"], 1)],
        ["pass_at_n", passN, fixed(passN, 1)],
        ["avg_at_n", l.avg_at_n_pct, fixed(l.avg_at_n_pct, 1)],
        ["faster_eager", l.faster_rate_pct.eager, fixed(l.faster_rate_pct.eager, 1)],
        ["faster_compile", l.faster_rate_pct.compile, fixed(l.faster_rate_pct.compile, 1)],
        ["geomean_eager", l.geomean_speedup.eager, fixed(l.geomean_speedup.eager, 2)],
        ["geomean_compile", l.geomean_speedup.compile, fixed(l.geomean_speedup.compile, 2)],
      ].concat(fastKeys.map((k) => ["fast_" + k, l.fast_p[k], fixed(l.fast_p[k], 2)]));
      table.appendChild(el("tr", { class: l.level === "all" ? "all" : "" }, cells.map(([key, value, shown], i) =>
        el("td", { class: i === 0 ? "name" : "", "data-key": key, "data-value": JSON.stringify(value), text: shown }))));
    }
    return table;
  }

  function header() {
    document.title = "anvil report: " + m.model + " (" + m.backend + ")";
    const turns = m.turns.length;
    document.getElementById("run").textContent = m.model + " · prompt " + m.prompt + " · " + m.backend + " · " +
      data.tasks.length + " problems × " + m.samples + " samples · " + turns + " turn" + (turns === 1 ? "" : "s");
  }

  function tables() {
    const section = document.getElementById("tables");
    for (const turn of m.turns) {
      section.appendChild(el("h3", { text: "Turn " + turn.turn + " of " + m.turns.length +
        (turn.turn > 1 ? " (each sample's best attempt in turns 1.." + turn.turn + ")" : "") }));
      section.appendChild(el("div", { class: "wide" }, [metricsTable(turn)]));
      const statuses = Object.entries(turn.overall.statuses).map(([s, c]) => s + " " + c).join(", ");
      section.appendChild(el("p", { class: "note", text: "statuses: " + statuses +
        (turn.pending ? " · pending " + turn.pending : "") + (turn.server_errors ? " · server_error " + turn.server_errors : "") }));
    }
    section.appendChild(el("p", { class: "note", text: "Faster: passed with speedup > " + m.faster_than +
      "×, a share of all samples. geomean: over passing samples with a known speedup. fast_p: sample 0 of each " +
      "problem, correct and faster than eager by p (KernelBench)." }));
  }

  const SHOWN_AT_FIRST = 500;  // rows of the sample list drawn at load; the rest on asking

  function sampleRow(s, si) {
    const task = data.tasks[s.task] || { name: "?", level: 0 };
    const last = s.attempts[s.attempts.length - 1];
    const turns = el("td", { class: "name" }, s.attempts.map((a) =>
      el("a", { href: "#c/" + si + "/" + a.turn, title: "turn " + a.turn }, [statusChip(a.outcome || a.state)])));
    return el("tr", {}, [
      el("td", { class: "name", text: (task.level ? "L" + task.level + " " : "") + task.name }),
      el("td", { text: String(s.sample) }), turns,
      el("td", { text: last ? fixed(last.reward, 3) : "–" }),
      el("td", { text: last ? fixed(last.speedup_eager, 2) : "–" }),
      el("td", { text: fixed(s.prime_echo, 3) })]);
  }

  function samples() {
    const section = document.getElementById("samples");
    const table = el("table", { class: "samples" }, [el("tr", {}, ["problem", "sample", "turns", "reward",
      "speedup eager", "PrimeEcho"].map((h, i) => el("th", { class: i === 0 || i === 2 ? "name" : "", text: h })))]);
    const first = Math.min(data.samples.length, SHOWN_AT_FIRST);
    for (let si = 0; si < first; si++) table.appendChild(sampleRow(data.samples[si], si));
    section.appendChild(table);
    if (first < data.samples.length) {
      const more = el("button", { type: "button", text: "Show all " + data.samples.length + " samples" });
      more.addEventListener("click", () => {
        const rows = document.createDocumentFragment();
        for (let si = first; si < data.samples.length; si++) rows.appendChild(sampleRow(data.samples[si], si));
        table.appendChild(rows);
        more.remove();
      });
      section.appendChild(more);
    }
  }

  // The attempts' texts, one gzip'd chunk per task, read when a candidate of the task opens.
  const chunks = new Map();
  function texts(k) {
    if (!chunks.has(k)) {
      const b64 = document.getElementById("anvil-text-" + k).textContent;
      const raw = atob(b64);
      const bytes = new Uint8Array(raw.length);
      for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      chunks.set(k, new Response(stream).text().then(JSON.parse));
    }
    return chunks.get(k);
  }

  // Plots: SVG elements made here, each mark carrying its number in data-value.
  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, children) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") e.textContent = v;
      else e.setAttribute(k, String(v));
    }
    for (const c of children || []) e.appendChild(c);
    return e;
  }
  const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"];
  const STATUS_COLORS = { pass: "#59a14f", wrong_answer: "#f28e2b", compile_error: "#e15759",
    runtime_error: "#b07aa1", timeout: "#76b7b2", cheat: "#9c1c1c", infra_error: "#9aa5b1",
    server_error: "#c4ccd4", no_code: "#bab0ac", truncated: "#d4cfc9", refused: "#8c8c8c" };
  const statusColor = (s) => STATUS_COLORS[s] || "#666";

  // A bar chart: groups along x, one bar per series in each; values in [0, max].
  function barChart(cls, title, groups, series, max, unit) {
    if (max > 1 && max !== 100) max = Math.ceil(max / 4) * 4;  // counts: whole ticks
    const W = 560, H = 220, L = 44, B = 36, T = 24, R = 12;
    const plot = svg("svg", { class: "plot " + cls, width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img" });
    plot.appendChild(svg("title", { text: title }));
    plot.appendChild(svg("text", { x: L, y: 14, class: "plot-title", text: title }));
    const y = (v) => T + (H - T - B) * (1 - Math.min(v, max) / max);
    for (let i = 0; i <= 4; i++) {
      const v = (max * i) / 4;
      plot.appendChild(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid-line" }));
      plot.appendChild(svg("text", { x: L - 6, y: y(v) + 4, class: "axis", "text-anchor": "end",
        text: (max <= 1 ? v.toFixed(2) : Math.round(v)) + (unit || "") }));
    }
    const gw = (W - L - R) / Math.max(groups.length, 1);
    const bw = Math.max(2, Math.min(28, (gw - 8) / Math.max(series.length, 1)));
    groups.forEach((g, gi) => {
      const x0 = L + gi * gw + (gw - bw * series.length) / 2;
      series.forEach((s, si) => {
        const v = s.values[gi];
        if (v === null || v === undefined) return;
        const bar = svg("rect", { x: x0 + si * bw, y: y(v), width: bw - 1, height: y(0) - y(v), fill: s.color,
          class: "bar", "data-series": s.name, "data-group": g, "data-value": JSON.stringify(v) },
          [svg("title", { text: s.name + ", " + g + ": " + (typeof v === "number" ? +v.toFixed(2) : v) + (unit || "") })]);
        plot.appendChild(bar);
      });
      plot.appendChild(svg("text", { x: L + gi * gw + gw / 2, y: H - B + 16, class: "axis", "text-anchor": "middle",
        text: g }));
    });
    const legend = el("div", { class: "legend" }, series.map((s) =>
      el("span", {}, [svg("svg", { class: "swatch", width: 10, height: 10 }, [svg("rect", { width: 10, height: 10, fill: s.color })]),
        document.createTextNode(" " + s.name)])));
    return el("figure", { class: "chart" }, [plot, legend]);
  }

  // Each sample's best attempt (the highest reward; the earlier among equals).
  function best(s) {
    let b = null;
    for (const a of s.attempts) if (a.reward !== null && (b === null || a.reward > b.reward)) b = a;
    return b;
  }

  const SPEEDUP_BINS = [[0, 0.5, "<0.5×"], [0.5, 0.9, "0.5–0.9×"], [0.9, 1.1, "0.9–1.1×"], [1.1, 1.5, "1.1–1.5×"],
    [1.5, 2, "1.5–2×"], [2, 4, "2–4×"], [4, Infinity, "≥4×"]];
  function speedupCounts(key) {
    const counts = SPEEDUP_BINS.map(() => 0);
    let known = 0;
    for (const s of data.samples) {
      const b = best(s);
      if (!b || b.outcome !== "pass" || typeof b[key] !== "number") continue;
      known++;
      const i = SPEEDUP_BINS.findIndex(([lo, hi]) => b[key] >= lo && b[key] < hi);
      counts[i]++;
    }
    return { counts, known };
  }

  function plots() {
    const section = document.getElementById("plots");
    const turns = m.turns.map((t) => "turn " + t.turn);
    const levels = m.turns.length ? m.turns[0].levels.map((l) => l.level) : [];
    const rate = [{ name: "all", color: PALETTE[0], values: m.turns.map((t) => t.overall.avg_at_n_pct) }];
    if (levels.length > 1) {
      levels.forEach((lv, i) => rate.push({ name: "level " + lv, color: PALETTE[(i + 1) % PALETTE.length],
        values: m.turns.map((t) => { const l = t.levels.find((x) => x.level === lv); return l ? l.avg_at_n_pct : null; }) }));
    }
    section.appendChild(barChart("plot-pass-by-turn", "Pass rate by turn (Avg@N, % of samples)", turns, rate, 100, "%"));

    for (const [key, name] of [["speedup_eager", "eager"], ["speedup_compile", "torch.compile"]]) {
      const { counts, known } = speedupCounts(key);
      const max = Math.max(1, ...counts);
      const chart = barChart("plot-speedup-" + (key === "speedup_eager" ? "eager" : "compile"),
        "Speedup vs " + name + " (each passing sample's best attempt; " + known + " known)",
        SPEEDUP_BINS.map((b) => b[2]), [{ name: "samples", color: PALETTE[key === "speedup_eager" ? 2 : 4], values: counts }],
        max, "");
      if (known === 0) chart.appendChild(el("p", { class: "note", text: "No speedup was measured (perf off, or no pass)." }));
      section.appendChild(chart);
    }

    // What each turn's attempts came to.
    const outcomes = [...new Set(data.samples.flatMap((s) => s.attempts.map((a) => a.outcome || a.state)))].sort();
    const byTurn = m.turns.map((t) => {
      const c = {};
      for (const s of data.samples) for (const a of s.attempts) if (a.turn === t.turn) c[a.outcome || a.state] = (c[a.outcome || a.state] || 0) + 1;
      return c;
    });
    const most = Math.max(1, ...byTurn.flatMap((c) => Object.values(c)));
    section.appendChild(barChart("plot-outcomes", "Outcome of each turn's attempts", turns,
      outcomes.map((o) => ({ name: o, color: statusColor(o), values: byTurn.map((c) => c[o] || 0) })), most, ""));

    // Where the time went, summed over every attempt: the loop's stages (the model's queue and generate, the
    // verifier's judge), then the verdict's own stages within judge.
    const stages = data.stage_seconds;
    const LOOP = ["queue", "generate", "judge"];
    const loop = LOOP.filter((k) => k in stages);
    const inner = Object.keys(stages).filter((k) => !LOOP.includes(k)).sort((a, b) => stages[b] - stages[a]);
    const table = el("table", { class: "stages" }, [el("tr", {}, ["stage", "seconds, all attempts", "share"].map((h, i) =>
      el("th", { class: i === 0 ? "name" : "", text: h })))]);
    const loopTotal = loop.reduce((x, k) => x + stages[k], 0) || 1;
    const judge = stages.judge || inner.reduce((x, k) => x + stages[k], 0) || 1;
    const row = (k, label, share) => table.appendChild(el("tr", {}, [el("td", { class: "name", text: label }),
      el("td", { "data-stage": k, "data-value": JSON.stringify(stages[k]), text: stages[k].toFixed(2) }),
      el("td", { text: (100 * share).toFixed(1) + "%" })]));
    for (const k of loop) {
      row(k, k, stages[k] / loopTotal);
      if (k === "judge") for (const i of inner) row(i, "  judge: " + i, stages[i] / judge);
    }
    if (!loop.includes("judge")) for (const i of inner) row(i, i, stages[i] / judge);
    section.appendChild(el("h3", { text: "Time per stage" }));
    section.appendChild(Object.keys(stages).length ? table : el("p", { class: "note", text: "No stage times recorded." }));
    section.appendChild(el("p", { class: "note", text: "queue and generate are the model's side, judge the " +
      "verifier's (a verdict from the cache spends none); the judge: rows split it into the verdict's own stages, as " +
      "shares of judge. Stages of different samples overlap: the sums are work, not wall time." }));
  }

  // Problems × samples: each sample's final outcome, a link to its last attempt.
  function grid() {
    const section = document.getElementById("grid");
    const n = Math.max(0, ...data.samples.map((s) => s.sample + 1));
    const rows = new Map();
    data.samples.forEach((s, si) => {
      if (!rows.has(s.task)) rows.set(s.task, []);
      rows.get(s.task)[s.sample] = si;
    });
    const order = [...rows.keys()].sort((a, b) => {
      const x = data.tasks[a], y = data.tasks[b];
      return x.level - y.level || (x.problem ?? 1e9) - (y.problem ?? 1e9) || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0);
    });
    const head = [el("th", { class: "name", text: "problem" })];
    for (let k = 0; k < n; k++) head.push(el("th", { text: String(k) }));
    const table = el("table", { class: "grid" }, [el("tr", {}, head)]);
    for (const t of order) {
      const task = data.tasks[t];
      const tr = el("tr", {}, [el("td", { class: "name", text: (task.level ? "L" + task.level + " " : "") + task.name })]);
      for (let k = 0; k < n; k++) {
        const si = rows.get(t)[k];
        if (si === undefined) { tr.appendChild(el("td", { class: "cell none" })); continue; }
        const s = data.samples[si];
        const last = s.attempts[s.attempts.length - 1];
        const outcome = last.outcome || last.state;
        tr.appendChild(el("td", { class: "cell" }, [el("a", { href: "#c/" + si + "/" + last.turn,
          class: "status s-" + String(outcome).replace(/[^a-z_]/g, ""), "data-outcome": outcome,
          title: s.attempts.map((a) => "turn " + a.turn + ": " + (a.outcome || a.state)).join("\n"),
          text: String(last.turn) })]));
      }
      table.appendChild(tr);
    }
    section.appendChild(el("div", { class: "wide" }, [table]));
    section.appendChild(el("p", { class: "note", text: "Each cell: the sample's last outcome and the turn it came at." }));
  }

  // A candidate's page, from the link's hash: #c/SAMPLE/TURN.
  async function candidate() {
    const view = document.getElementById("candidate");
    const hash = location.hash;
    const match = /^#c\/(\d+)\/(\d+)$/.exec(hash);
    const s = match ? data.samples[Number(match[1])] : null;
    const a = s ? s.attempts.find((x) => x.turn === Number(match[2])) : null;
    view.replaceChildren();
    view.hidden = !a;
    view.removeAttribute("data-shown");
    if (!a) return;
    const t = (await texts(a.text[0]))[a.text[1]];
    if (location.hash !== hash) return;  // another candidate was asked for meanwhile
    const task = data.tasks[s.task] || { name: "?" };
    view.appendChild(el("h2", { text: task.name + " · sample " + s.sample + " · turn " + a.turn }));
    view.appendChild(el("p", {}, [statusChip(a.outcome || a.state), el("span", { text: " reward " +
      fixed(a.reward, 3) + " · speedup eager " + fixed(a.speedup_eager, 2) + " · compile " +
      fixed(a.speedup_compile, 2) + (a.cached ? " · from the verdict cache" : "") })]));
    const parts = [["Feedback", t.feedback], ["Code", t.code], ["The model's answer", t.response],
      ["Verdict", t.verdict === null ? null : JSON.stringify(t.verdict, null, 2)]];
    for (const [title, text] of parts) {
      if (text === null || text === undefined) continue;
      view.appendChild(el("h3", { text: title }));
      view.appendChild(el("pre", { class: "text-" + title.split(" ").pop().toLowerCase(), text: text }));
    }
    view.setAttribute("data-shown", hash.slice(1));
    view.scrollIntoView();
  }

  header();
  tables();
  plots();
  grid();
  samples();
  candidate();
  window.addEventListener("hashchange", candidate);
  document.documentElement.setAttribute("data-ready", "1");
  // How long the page took to reach its load event, for the scale benchmark (bench/scripts/report_scale.py).
  window.addEventListener("load", () =>
    document.documentElement.setAttribute("data-load-ms", String(Math.round(performance.now()))));
})();
