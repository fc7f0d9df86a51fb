// attune dashboard: the campaigns list and a campaign page, drawn from /api/ (docs/serve.md) and
// kept live by the campaign's event stream. The same file draws report.html from data inlined
// in the page (window.ATTUNE_REPORT), with no server and no network.
"use strict";

(function () {
  const inline = window.ATTUNE_REPORT || null;
  const app = document.getElementById("app");
  const crumb = document.getElementById("crumb");
  const liveBadge = document.getElementById("live");

  const OUTCOME_COLORS = {
    baseline: "#777777",
    new_leader: "#1a9850",
    paired_loss_mismatch: "#e08214",
    within_noise: "#4575b4",
    slower: "#74add1",
    failed: "#d73027",
    other: "#999999",
  };

  // ---- small helpers ----------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined) continue;
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.append(c instanceof Node ? c : String(c));
    }
    return e;
  }
  const fmt = (v, d) => (v === null || v === undefined ? "–" : Number(v).toFixed(d));
  const times = (v) => (v === null || v === undefined ? "–" : Number(v).toFixed(3) + "×");
  const when = (ms) => (ms ? new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z") : "–");
  const enc = encodeURIComponent;
  const api = (path) => fetch(path, { credentials: "same-origin" }).then((r) => {
    if (!r.ok) return r.json().then((j) => Promise.reject(new Error(j.error || r.statusText)));
    return r.json();
  });
  function badge(state) { return el("span", { class: "badge state-" + state, id: "state" }, state); }
  function outcomeKey(run) {
    if (!run.ok) return "failed";
    if (run.candidate === "baseline") return "baseline";
    const v = run.verdict || "";
    for (const k of ["new_leader", "paired_loss_mismatch", "within_noise", "slower"]) {
      if (v.startsWith(k)) return k;
    }
    return "other";
  }

  // ---- campaigns list ---------------------------------------------------------------------
  function renderList(data) {
    const rows = data.campaigns.map((c) => el("tr", { "data-name": c.name },
      el("td", {}, el("a", { href: "/campaign?name=" + enc(c.name) }, c.name)),
      el("td", {}, [c.stack, c.launcher, c.agent].filter(Boolean).join(" / ")),
      el("td", {}, el("span", { class: "badge state-" + c.state }, c.state)),
      el("td", {}, c.leader ? c.leader + (c.leader_lever ? " (" + c.leader_lever + ")" : "") : "–"),
      el("td", { class: "num" }, times(c.speedup)),
      el("td", { class: "num" }, c.budget ? fmt(c.budget.charged_gpu_hours, 2) + " / " + fmt(c.budget.total_gpu_hours, 2) : "–"),
      el("td", {}, when(c.last_event_ms)),
      el("td", { class: "muted" }, c.damage || "")));
    const table = el("table", { id: "campaigns" },
      el("thead", {}, el("tr", {}, ...["campaign", "stack / launcher / agent", "state", "leader", "speedup",
        "GPU-hours spent / budget", "last event", ""].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...rows));
    app.replaceChildren(el("h1", {}, "Campaigns"),
      el("p", { class: "muted" }, "under " + data.roots.join(", ")),
      data.campaigns.length ? table : el("p", {}, "No campaign directories found yet (searched 3 folders deep)."));
  }

  function startList() {
    crumb.textContent = "";
    const load = () => api("/api/campaigns").then(renderList).catch((e) => app.replaceChildren(el("p", { class: "error" }, e.message)));
    load();
    setInterval(load, 2000);
  }

  // ---- campaign page ----------------------------------------------------------------------
  let page = null;         // the last /api/campaigns/NAME answer
  let showAll = false;     // a big campaign shows its first kShown rows and tree nodes until asked
  const kShown = 500;
  function more(count, tag) {
    const again = () => { showAll = true; renderCampaign(page); };
    const link = el("a", { href: "#", onclick: (e) => { e.preventDefault(); again(); } }, "show " + count + " more");
    return tag === "tr" ? el("tr", { class: "more" }, el("td", { colspan: "8" }, link)) : el(tag, { class: "more" }, link);
  }
  let charts = [];
  let selected = null;

  function summaryBlock(p) {
    const s = p.summary || {};
    const b = s.budget || {};
    return el("section", { class: "summary" },
      el("h1", {}, p.name, " ", badge(p.state)),
      el("p", {}, [s.stack, s.launcher, s.agent].filter(Boolean).join(" / "),
        " · events ", el("span", { id: "seq" }, String(p.seq)),
        " · last event ", el("span", { id: "last-event" }, when(p.last_event_ms))),
      el("div", { class: "cards" },
        card("leader", (s.leader || "–") + (s.leader_lever ? " (" + s.leader_lever + ")" : ""), s.leader_change || ""),
        card("speedup", times(s.speedup), s.speedup_caveat ? s.speedup_caveat : s.speedup_verified ? "verified side by side" : "from tuning runs"),
        card("budget", fmt(b.charged_gpu_hours, 3) + " / " + fmt(b.total_gpu_hours, 3), "GPU-hours; " + fmt(b.reserved_gpu_hours, 3) + " reserved"),
        card("runs", String((p.runs || []).length), (s.failed_jobs || 0) + " failed jobs, " + (s.jobs_in_flight || 0) + " in flight")),
      p.damage ? el("p", { class: "error" }, "damaged: " + p.damage) : null,
      s.paused ? el("p", { class: "muted" }, "paused: " + (s.pause_reason || "") + " — `attune run` resumes it") : null);
  }
  function card(title, value, note) {
    return el("div", { class: "card" }, el("div", { class: "muted" }, title), el("div", { class: "big" }, value), el("div", { class: "muted small" }, note));
  }

  function chartWidth(node) { return Math.max(320, Math.min(1100, (node.clientWidth || 900) - 10)); }

  // Throughput vs cumulative GPU-hours: one point per run, the leader as a step line.
  function throughputChart(p, holder) {
    const runs = p.runs || [];
    const steps = p.leader_steps || [];
    const rows = [];  // {x, run|null}
    for (const r of runs) rows.push({ x: r.gpu_hours_after, run: r });
    // A leader step sits on the x of the run that made it: it gets a row of its own only where no
    // run is (the baseline's step at 0), so that the cursor always lands on runs.
    const runXs = new Set(runs.map((r) => r.gpu_hours_after));
    for (const s of steps) if (!runXs.has(s.gpu_hours)) rows.push({ x: s.gpu_hours, run: null });
    rows.sort((a, b) => a.x - b.x || (a.run ? 1 : 0) - (b.run ? 1 : 0));
    const keys = ["baseline", "new_leader", "paired_loss_mismatch", "within_noise", "slower", "other", "failed"];
    const xs = rows.map((r) => r.x);
    const leader = [];
    let si = 0, cur = null;
    for (const r of rows) {
      while (si < steps.length && steps[si].gpu_hours <= r.x) cur = steps[si++].tokens_per_s_per_gpu;
      leader.push(cur);
    }
    const series = keys.map((k) => rows.map((r) => (r.run && outcomeKey(r.run) === k ? (r.run.ok ? r.run.tokens_per_s_per_gpu : 0) : null)));
    holder.setAttribute("data-points", String(rows.filter((r) => r.run).length));
    holder.setAttribute("data-leader-steps", String(steps.length));
    if (typeof uPlot === "undefined") {
      holder.append(el("p", { class: "error" }, "The chart library (uPlot) is not installed: run tools/setup.sh."));
      return null;
    }
    const tip = el("div", { class: "tip", id: "tip" });
    holder.append(tip);
    const pointSeries = keys.map((k) => ({
      label: k.replace(/_/g, " "), stroke: OUTCOME_COLORS[k], fill: OUTCOME_COLORS[k], paths: () => null,
      points: { show: true, size: k === "failed" ? 9 : 7, fill: OUTCOME_COLORS[k], stroke: k === "failed" ? "#000" : OUTCOME_COLORS[k] },
    }));
    const opts = {
      title: "throughput vs cumulative GPU-hours", width: chartWidth(holder), height: 340,
      scales: { x: { time: false } },
      axes: [{ label: "cumulative GPU-hours" }, { label: "tokens/s/GPU", size: 70 }],
      series: [{ label: "GPU-hours" },
        { label: "leader", stroke: "#1a9850", width: 2, paths: uPlot.paths.stepped({ align: 1 }), points: { show: false }, spanGaps: true },
        ...pointSeries],
      cursor: { points: { size: 10 } },
      hooks: {
        setCursor: [(u) => {
          const i = u.cursor.idx;
          const r = i === null || i === undefined ? null : rows[i].run;
          if (!r) { tip.style.display = "none"; return; }
          tip.replaceChildren(el("b", {}, r.candidate), " · ", r.job, el("br"),
            "lever: " + (r.lever || "–"), el("br"), "change: " + (r.change || "–"), el("br"),
            r.ok ? fmt(r.tokens_per_s_per_gpu, 1) + " tokens/s/GPU" : "failed: " + (r.failure || "unknown"), el("br"),
            "verdict: " + (r.verdict || "–"));
          tip.style.display = "block";
          tip.style.left = Math.min(u.cursor.left + 60, u.over.clientWidth - 120) + "px";
          tip.style.top = Math.max(u.cursor.top - 10, 0) + "px";
        }],
        draw: [(u) => {
          // Lever labels on the leader's steps.
          const ctx = u.ctx;
          ctx.save();
          ctx.font = Math.round(11 * devicePixelRatio) + "px sans-serif";
          ctx.fillStyle = "#1a9850";
          for (const s of steps.slice(1)) {
            const x = u.valToPos(s.gpu_hours, "x", true), y = u.valToPos(s.tokens_per_s_per_gpu, "y", true);
            ctx.fillText(s.lever || s.candidate, x + 4, y - 6);
          }
          ctx.restore();
        }],
      },
    };
    const u = new uPlot(opts, [xs, leader, ...series], holder);
    u.over.addEventListener("click", () => {
      const i = u.cursor.idx;
      if (i !== null && i !== undefined && rows[i].run) showCandidate(rows[i].run.candidate);
    });
    return u;
  }

  function burnChart(p, holder) {
    const burn = p.burn_down || [];
    if (typeof uPlot === "undefined" || burn.length < 2) {
      holder.append(el("p", { class: "muted" }, burn.length < 2 ? "no finished job yet" : ""));
      return null;
    }
    return new uPlot({
      title: "budget left", width: chartWidth(holder), height: 200, scales: { x: { time: false } },
      axes: [{ label: "finished jobs" }, { label: "GPU-hours left", size: 70 }],
      series: [{ label: "jobs" }, { label: "left", stroke: "#4575b4", fill: "rgba(69,117,180,0.12)", width: 2 }],
    }, [burn.map((b) => b.jobs), burn.map((b) => b.left_gpu_hours)], holder);
  }

  function leaderboard(p) {
    const all = p.leaderboard || [];
    const shown = showAll ? all : all.slice(0, kShown);
    const rows = shown.map((r) => el("tr", { "data-candidate": r.candidate, class: r.leader ? "leader" : "", onclick: () => showCandidate(r.candidate) },
      el("td", { class: "num" }, r.rank === null ? "–" : String(r.rank)),
      el("td", {}, r.candidate),
      el("td", {}, r.lever || ""),
      el("td", { class: "change" }, r.change),
      el("td", { class: "num" }, fmt(r.tokens_per_s_per_gpu, 1)),
      el("td", { class: "num" }, times(r.speedup)),
      el("td", { class: "num" }, fmt(r.gpu_hours, 4)),
      el("td", {}, r.verdict)));
    return el("table", { id: "leaderboard" },
      el("thead", {}, el("tr", {}, ...["rank", "candidate", "lever", "change", "tokens/s/GPU", "speedup", "GPU-hours", "verdict"].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...rows, shown.length < all.length ? more(all.length - shown.length, "tr") : null));
  }

  function tree(p) {
    const nodes = p.tree || [];
    const kids = new Map();
    const ids = new Set(nodes.map((n) => n.id));
    for (const n of nodes) {
      const parent = n.parent === null ? null : (ids.has(n.parent) ? n.parent : "baseline");
      if (parent === null) continue;
      if (!kids.has(parent)) kids.set(parent, []);
      kids.get(parent).push(n);
    }
    const byId = new Map(nodes.map((n) => [n.id, n]));
    let budget = showAll ? Infinity : kShown;
    const item = (n, depth) => (budget-- <= 0 ? null : el("li", { "data-id": n.id, class: "outcome-" + n.outcome + (n.leader ? " leader" : "") },
      el("a", { href: "#", onclick: (e) => { e.preventDefault(); showCandidate(n.id); } }, n.id),
      n.lever ? " " + n.lever : "", n.change ? el("span", { class: "muted" }, " " + n.change) : null,
      " ", el("span", { class: "small" }, n.outcome + (n.tokens_per_s_per_gpu !== null ? " · " + fmt(n.tokens_per_s_per_gpu, 1) : "")),
      kids.has(n.id) ? el("ul", {}, ...kids.get(n.id).map((c) => item(c, depth + 1))) : null));
    const root = byId.get("baseline");
    const list = el("ul", { class: "tree", id: "tree" }, root ? item(root, 0) : null);
    if (budget < 0) list.append(more(nodes.length - kShown, "div"));
    return list;
  }

  function eventsFeed(p) {
    const items = (p.recent_events || []).slice(-30).reverse().map(eventItem);
    return el("ul", { id: "events", class: "events" }, ...items);
  }
  function eventItem(e) {
    return el("li", { "data-seq": String(e.seq) }, el("span", { class: "muted" }, "#" + e.seq + " " + when(e.ts_ms) + " "),
      e.type, e.candidate ? " " + e.candidate : "", e.job ? el("span", { class: "muted" }, " " + e.job) : null);
  }

  function renderCampaign(p) {
    page = p;
    for (const c of charts) if (c) c.destroy();
    charts = [];
    crumb.textContent = "/ " + p.name;
    document.title = "attune · " + p.name;
    const chartHolder = el("div", { id: "throughput", class: "chart" });
    const burnHolder = el("div", { id: "burn", class: "chart" });
    const detail = el("section", { id: "detail", class: "detail" }, el("p", { class: "muted" }, "Click a run, a leaderboard row or a tree node for its detail."));
    app.replaceChildren(summaryBlock(p),
      el("section", {}, chartHolder, legend()),
      el("section", {}, el("h2", {}, "Leaderboard"), leaderboard(p)),
      detail,
      el("div", { class: "two" },
        el("section", {}, el("h2", {}, "Candidate tree"), tree(p)),
        el("section", {}, el("h2", {}, "Budget burn-down"), burnHolder,
          el("h2", {}, "Recent events"), eventsFeed(p))));
    charts.push(throughputChart(p, chartHolder));
    charts.push(burnChart(p, burnHolder));
    window.attuneCharts = charts;  // for scripts and tests: the uPlot instances on the page
    if (selected) showCandidate(selected);
  }
  function legend() {
    return el("p", { class: "legend small" }, el("span", { class: "swatch", style: "background:#1a9850" }), "leader (step line, labelled with the lever) · points: one per run, coloured by outcome; failed runs sit on the x axis");
  }

  function showCandidate(id) {
    selected = id;
    const detail = document.getElementById("detail");
    if (!detail) return;
    const got = inline ? Promise.resolve(inline.candidates[id]) : api("/api/campaigns/" + enc(page.name) + "/candidates/" + enc(id));
    got.then((c) => {
      if (!c) {
        detail.replaceChildren(el("p", { class: "muted" }, "The detail of " + id + " is not in this report (a very large campaign keeps the first 1000 leaderboard rows'); `attune serve` shows it."));
        return;
      }
      detail.replaceChildren(...candidateDetail(c));
      if (!inline) loadLogs(c);
    }).catch((e) => detail.replaceChildren(el("p", { class: "error" }, e.message)));
  }
  function changeList(changes) {
    if (!changes || !changes.length) return el("p", { class: "muted" }, "none");
    return el("ul", {}, ...changes.map((c) => el("li", {}, el("code", {}, c.text || c.key))));
  }
  function candidateDetail(c) {
    const out = [el("h2", {}, "Candidate " + c.candidate, c.leader ? " (leader)" : "")];
    if (c.candidate !== "baseline") {
      out.push(el("p", {}, "parent ", el("b", {}, c.parent), " · lever ", el("b", {}, c.lever || "–"), " · outcome ", el("b", {}, c.outcome), " · verdict ", c.verdict));
      if (c.rationale) out.push(el("p", { class: "muted" }, c.rationale));
      out.push(el("div", { class: "two" },
        el("div", {}, el("h3", {}, "Against the baseline"), changeList(c.changes_vs_baseline)),
        el("div", {}, el("h3", {}, "Against its parent"), changeList(c.changes_vs_parent))));
      const g = c.gate || {};
      out.push(el("h3", {}, "Gate"), el("p", { id: "gate" }, g.checked ? (g.pass ? "pass" : "refused") + (g.rule ? " — rule " + g.rule : "") + (g.reason ? ": " + g.reason : "") : "not checked"));
    }
    out.push(el("h3", {}, "Measurement"), el("p", {}, c.measurement ? fmt(c.measurement.tokens_per_s_per_gpu, 1) + " tokens/s/GPU, step " + fmt(c.measurement.step_time_s, 3) + " s, cv " + fmt(c.measurement.cv, 3) : "none"));
    if ((c.paired_loss || []).length) {
      out.push(el("h3", {}, "Paired-loss check"), el("ul", {}, ...c.paired_loss.map((p) => el("li", {}, (p.pass ? "pass" : "mismatch") + ": " + p.compared + " losses compared, max relative difference " + fmt(p.max_rel_diff, 5) + " (tolerance " + fmt(p.tolerance, 5) + ")" + (p.reason ? " — " + p.reason : "")))));
    }
    if ((c.diagnosis || []).length) {
      out.push(el("h3", {}, "Diagnosis"), el("ul", {}, ...c.diagnosis.map((d) => el("li", {}, el("b", {}, d.kind), " (" + fmt(d.severity, 2) + ") " + d.evidence))));
    }
    if (c.profile) out.push(el("h3", {}, "Profile"), profileBlock(c.profile));
    out.push(el("h3", {}, "Jobs"), el("div", { id: "jobs" }, ...(c.jobs || []).map((j) => el("div", { class: "job", "data-job": j.job },
      el("p", {}, el("b", {}, j.job), " · " + j.purpose + " · " + j.state + " · " + fmt(j.gpu_hours, 4) + " GPU-hours" + (j.failure ? " · failed: " + j.failure.kind + " — " + (j.failure.evidence || "") : "")),
      el("pre", { class: "log" }, inline ? "(job logs are not part of report.html; see the campaign directory)" : "…")))));
    return out;
  }
  function profileBlock(p) {
    if (p.error) return el("p", { class: "muted" }, p.error);
    const parts = ["compute_ns", "exposed_communication_ns", "memory_only_ns", "launch_bound_idle_ns", "other_idle_ns"];
    const pct = (b, k) => (b.window_ns > 0 ? fmt(100 * b[k] / b.window_ns, 1) + "%" : "–");
    return el("div", {},
      el("table", { class: "small", id: "profile" },
        el("thead", {}, el("tr", {}, el("th", {}, "rank"), ...parts.map((k) => el("th", {}, k.replace(/_ns$/, "").replace(/_/g, " "))))),
        el("tbody", {}, ...(p.bars || []).map((b) => el("tr", {}, el("td", {}, b.label), ...parts.map((k) => el("td", { class: "num" }, pct(b, k))))))),
      el("ul", {}, ...(p.diagnoses || []).map((d) => el("li", {}, el("b", {}, d.kind), " " + d.evidence))));
  }
  function loadLogs(c) {
    for (const j of c.jobs || []) {
      api("/api/campaigns/" + enc(page.name) + "/jobs/" + enc(j.job) + "/log?bytes=4096")
        .then((l) => { const pre = document.querySelector('[data-job="' + CSS.escape(j.job) + '"] pre'); if (pre) pre.textContent = l.text || "(empty)"; })
        .catch((e) => { const pre = document.querySelector('[data-job="' + CSS.escape(j.job) + '"] pre'); if (pre) pre.textContent = e.message; });
    }
  }

  // What an event-stream message says is shown at once (seq, state, the new events); the charts
  // and tables are re-read from /api/ at most every other load time, so that a campaign whose page
  // takes a second to draw does not keep the browser (and the server) busy drawing it.
  function liveHeader(msg) {
    const seq = document.getElementById("seq");
    if (seq) seq.textContent = String(msg.seq);
    const state = document.getElementById("state");
    if (state) { state.textContent = msg.state; state.className = "badge state-" + msg.state; }
    const feed = document.getElementById("events");
    const events = msg.events || [];
    if (feed) {
      for (const e of events) if (!feed.querySelector('[data-seq="' + e.seq + '"]')) feed.prepend(eventItem(e));
      while (feed.children.length > 50) feed.lastChild.remove();
    }
    const last = document.getElementById("last-event");
    if (last && events.length) last.textContent = when(events[events.length - 1].ts_ms);
  }

  function startCampaign(name) {
    let pending = null, fetching = false, again = false, loadMs = 0, loadedAt = 0, latest = 0, lastMsg = null;
    const load = () => {
      if (fetching) { again = true; return; }
      fetching = true;
      const t0 = performance.now();
      api("/api/campaigns/" + enc(name)).then((p) => {
        renderCampaign(p);
        loadMs = performance.now() - t0;
        loadedAt = performance.now();
        // A big campaign's answer may be a little behind the stream: ask again until it is not.
        if (p.seq < latest) {
          again = true;
          if (lastMsg) liveHeader(lastMsg);  // the header stays at what the stream said
        }
      })
        .catch((e) => app.replaceChildren(el("p", { class: "error" }, e.message)))
        .finally(() => { fetching = false; if (again) { again = false; soon(); } });
    };
    const soon = () => {
      if (pending) return;
      const wait = Math.max(100, 2 * loadMs - (performance.now() - loadedAt));
      pending = setTimeout(() => { pending = null; load(); }, wait);
    };
    load();
    const es = new EventSource("/api/campaigns/" + enc(name) + "/stream");
    const onMessage = (m) => {
      const msg = JSON.parse(m.data);
      latest = Math.max(latest, msg.seq);
      lastMsg = msg;
      liveBadge.textContent = "live";
      liveBadge.className = "live on";
      if (page) liveHeader(msg);
      if (!page || msg.seq !== page.seq || msg.state !== page.state) soon();
    };
    es.addEventListener("hello", onMessage);
    es.addEventListener("update", onMessage);
    es.onerror = () => { liveBadge.textContent = "reconnecting…"; liveBadge.className = "live"; };
  }

  // ---- entry ------------------------------------------------------------------------------
  if (inline) {
    liveBadge.textContent = "static report";
    renderCampaign(inline.page);
  } else if (location.pathname.startsWith("/campaign")) {
    startCampaign(new URLSearchParams(location.search).get("name") || "");
  } else {
    startList();
  }
})();
