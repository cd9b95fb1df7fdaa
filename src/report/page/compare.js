// anvil's run comparison: every element made here from the embedded data,
// every text of the runs put in through textContent only.
(function () {
  const d = JSON.parse(document.getElementById("anvil-data").textContent);

  const signed = (x, n) => (x === null || x === undefined ? "–" : (x > 0 ? "+" : "") + Number(x).toFixed(n));
  const run = (r) => r.model + " (" + r.backend + ", " + r.samples + " samples, turn " + r.turn + ") · " + r.run;

  document.title = "anvil compare: " + d.a.model + " vs " + d.b.model;
  document.getElementById("runs").textContent = "A: " + run(d.a) + " — B: " + run(d.b);

  if (d.warnings.length) {
    const w = document.getElementById("warnings");
    w.hidden = false;
    w.appendChild(el("ul", {}, d.warnings.map((t) => el("li", { text: t }))));
  }

  const METRICS = [
    ["Pass@1", (l) => l.pass_at_k_pct["1"], 1],
    ["Pass@N", (l) => l.pass_at_k_pct[String(Math.max(l.n, 1))], 1],
    ["Avg@N", (l) => l.avg_at_n_pct, 1],
    ["Faster eager %", (l) => l.faster_rate_pct.eager, 1],
    ["Faster compile %", (l) => l.faster_rate_pct.compile, 1],
    ["geomean eager", (l) => l.geomean_speedup.eager, 2],
  ];
  const table = el("table", { class: "metrics compare" }, [el("tr", {}, [el("th", { class: "name", text: "level" })]
    .concat(METRICS.flatMap(([name]) => [el("th", { text: name + " A" }), el("th", { text: "B" }), el("th", { text: "B − A" })])))]);
  for (const row of d.levels.concat([{ level: "all", a: d.overall.a, b: d.overall.b }])) {
    const cells = [el("td", { class: "name", text: String(row.level) })];
    for (const [name, get, n] of METRICS) {
      const va = row.a ? get(row.a) : null, vb = row.b ? get(row.b) : null;
      const diff = va === null || va === undefined || vb === null || vb === undefined ? null : vb - va;
      cells.push(el("td", { "data-key": name + " A", "data-value": JSON.stringify(va ?? null), text: fixed(va, n) }),
        el("td", { "data-key": name + " B", "data-value": JSON.stringify(vb ?? null), text: fixed(vb, n) }),
        el("td", { class: diff > 0 ? "up" : diff < 0 ? "down" : "", text: signed(diff, n) }));
    }
    table.appendChild(el("tr", { class: row.level === "all" ? "all" : "" }, cells));
  }
  document.getElementById("tables").appendChild(el("div", { class: "wide" }, [table]));
  document.getElementById("tables").appendChild(el("p", { class: "note", text: "Each run's metrics over all its " +
    "problems; " + d.problems.matched + " problems are in both (by level and name), " + d.problems.only_a.length +
    " only in A, " + d.problems.only_b.length + " only in B." }));

  const solved = document.getElementById("solved");
  solved.appendChild(el("p", { text: d.solved.both + " problems solved by both." }));
  for (const [who, list] of [["A", d.solved.only_a], ["B", d.solved.only_b]]) {
    solved.appendChild(el("h3", { text: "Solved by " + who + " only (" + list.length + ")" }));
    solved.appendChild(el("ul", { class: "solved-" + who.toLowerCase() }, list.map((t) => el("li", { text: t }))));
  }

  const sp = document.getElementById("speedups");
  sp.appendChild(el("p", { text: "Best eager speedup of a passing sample, B over A; geometric mean of the change: " +
    fixed(d.speedup_change_geomean, 3) + "×." }));
  const st = el("table", { class: "speedups" }, [el("tr", {}, ["problem", "A", "B", "B / A"].map((h, i) =>
    el("th", { class: i === 0 ? "name" : "", text: h })))]);
  for (const r of d.speedups) {
    st.appendChild(el("tr", {}, [el("td", { class: "name", text: r.problem }), el("td", { text: fixed(r.a, 2) }),
      el("td", { text: fixed(r.b, 2) }), el("td", { "data-value": JSON.stringify(r.change), text: fixed(r.change, 3) })]));
  }
  sp.appendChild(st);
  document.documentElement.setAttribute("data-ready", "1");
})();
