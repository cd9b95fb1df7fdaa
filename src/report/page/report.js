// anvil's run report: every element is made here from the embedded data, and
// every text the run holds (the model's, the candidate's, the compiler's)
// enters the page through textContent only.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("anvil-data").textContent);
  const m = data.metrics;

  function el(tag, attrs, children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") e.textContent = v;
      else if (k === "class") e.className = v;
      else e.setAttribute(k, v);
    }
    for (const c of children || []) e.appendChild(c);
    return e;
  }
  const fixed = (x, d) => (x === null || x === undefined ? "–" : Number(x).toFixed(d));

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

  function samples() {
    const section = document.getElementById("samples");
    const table = el("table", { class: "samples" }, [el("tr", {}, ["problem", "sample", "turns", "reward",
      "speedup eager", "PrimeEcho"].map((h, i) => el("th", { class: i === 0 || i === 2 ? "name" : "", text: h })))]);
    data.samples.forEach((s, si) => {
      const task = data.tasks[s.task];
      const last = s.attempts[s.attempts.length - 1];
      const turns = el("td", { class: "name" }, s.attempts.map((a) =>
        el("a", { href: "#c/" + si + "/" + a.turn, title: "turn " + a.turn }, [statusChip(a.outcome || a.state)])));
      table.appendChild(el("tr", {}, [
        el("td", { class: "name", text: (task.level ? "L" + task.level + " " : "") + task.name }),
        el("td", { text: String(s.sample) }), turns,
        el("td", { text: last ? fixed(last.reward, 3) : "–" }),
        el("td", { text: last ? fixed(last.speedup_eager, 2) : "–" }),
        el("td", { text: fixed(s.prime_echo, 3) })]));
    });
    section.appendChild(table);
  }

  // A candidate's page, from the link's hash: #c/SAMPLE/TURN.
  function candidate() {
    const view = document.getElementById("candidate");
    const match = /^#c\/(\d+)\/(\d+)$/.exec(location.hash);
    const s = match ? data.samples[Number(match[1])] : null;
    const a = s ? s.attempts.find((x) => x.turn === Number(match[2])) : null;
    view.replaceChildren();
    view.hidden = !a;
    if (!a) return;
    const task = data.tasks[s.task];
    view.appendChild(el("h2", { text: task.name + " · sample " + s.sample + " · turn " + a.turn }));
    view.appendChild(el("p", {}, [statusChip(a.outcome || a.state), el("span", { text: " reward " +
      fixed(a.reward, 3) + " · speedup eager " + fixed(a.speedup_eager, 2) + " · compile " +
      fixed(a.speedup_compile, 2) + (a.cached ? " · from the verdict cache" : "") })]));
    const parts = [["Feedback", a.feedback], ["Code", a.code], ["The model's answer", a.response],
      ["Verdict", a.verdict === null ? null : JSON.stringify(a.verdict, null, 2)]];
    for (const [title, text] of parts) {
      if (text === null || text === undefined) continue;
      view.appendChild(el("h3", { text: title }));
      view.appendChild(el("pre", { class: "text-" + title.split(" ").pop().toLowerCase(), text: text }));
    }
    view.scrollIntoView();
  }

  header();
  tables();
  samples();
  candidate();
  window.addEventListener("hashchange", candidate);
  document.documentElement.setAttribute("data-ready", "1");
})();
