// The viewer's page: hash routes, one view each.
//
//   #/                                   stores and their runs
//   #/STORE/RUN                          leaderboard: model x (benchmark, domain) cells
//   #/STORE/RUN/episodes?model=..&..     episode list with filters, pages, text search
//   #/STORE/RUN/episode?id=EPISODE       one episode
//   #/STORE/RUN/compare?a=EP&b=EP        two episodes of one task side by side
//
// Every route carries the judge/method pair that decides pass and fail (judge=, method=),
// so a copied URL shows a colleague the same thing.

import {h, add, clear, route, parseRoute, api, pct, num, when, badge} from "./dom.js";
import {conversation, episodeHeader, judgmentsView, callsView, outcomeOf, passRate} from "./episode.js";

const OUTCOMES = ["passed", "failed", "error", "unjudged", "unreachable", "running"];
const main = document.getElementById("main");
const crumbs = document.getElementById("crumbs");
const summaries = new Map();

function pairOf(r) { return {judge: r.params.judge, method: r.params.method}; }

async function summary(r) {
  const key = JSON.stringify([r.store, r.run, r.params.judge || "", r.params.method || ""]);
  if (!summaries.has(key)) {
    summaries.set(key, api("summary", {store: r.store, run: r.run, judge: r.params.judge, method: r.params.method})
      .catch(e => { summaries.delete(key); throw e; }));
  }
  return summaries.get(key);
}

function setCrumbs(items) {
  clear(crumbs);
  add(crumbs, [h("a", {href: "#/", text: "sweepbench view"}),
    items.map(([text, href]) => [h("span", {class: "sep", text: "›"}),
      href ? h("a", {href, text}) : h("span", {text})])]);
}

function pairSelect(s, r, view, params) {
  if (!s.pairs.length) return h("span", {class: "muted", text: "no judgments yet"});
  const sel = h("select", {id: "pair", title: "the judge whose verdicts decide pass / fail",
    onchange: e => {
      const [judge, method] = JSON.parse(e.target.value);
      location.hash = route(r.store, r.run, view, {...params, judge, method, page: null, cursor: null});
    }},
    s.pairs.map(p => {
      const o = h("option", {value: JSON.stringify([p.judge, p.method]),
        text: `${p.judge} / ${p.method} (${num(p.verdicts)} verdicts)`});
      o.selected = p.judge === s.judge && p.method === s.method;
      return o;
    }));
  return h("label", {class: "pair"}, "verdicts from ", sel);
}

// ---- home ---------------------------------------------------------------------------------

async function home(box) {
  setCrumbs([]);
  const stores = await api("stores");
  const runs = stores.flatMap(s => s.runs.map(run => [s, run]));
  if (runs.length === 1) { location.replace(route(runs[0][0].id, runs[0][1].run_id)); return; }
  add(box, h("h1", {text: "Run stores"}), stores.map(s => h("section", {class: "card"},
    h("h2", {text: s.id}), h("div", {class: "muted small", text: s.path}),
    s.runs.length ? h("ul", {}, s.runs.map(run => h("li", {},
      h("a", {href: route(s.id, run.run_id), text: run.run_id}),
      h("span", {class: "muted", text: ` ${run.status} · started ${when(run.created_at)}`}))))
      : h("p", {class: "muted", text: "no runs"}))));
}

// ---- leaderboard --------------------------------------------------------------------------

function rateCell(cell, href) {
  const rate = passRate(cell);
  const extra = [];
  if (cell.error) extra.push(`${cell.error} err`);
  if (cell.unjudged) extra.push(`${cell.unjudged} unj`);
  if (cell.running) extra.push(`${cell.running} run`);
  const bar = h("span", {class: "bar"});
  bar.style.width = `${Math.round(100 * (rate || 0))}%`;
  return h("td", {class: "cell"}, h("a", {href, class: "cell-link",
      title: `${cell.passed} passed of ${cell.episodes - cell.running} finished episodes (${cell.tasks} tasks)`},
    h("span", {class: "rate", text: pct(rate)}),
    h("span", {class: "n", text: `${cell.passed}/${cell.episodes - cell.running}`}),
    extra.length ? h("span", {class: "extra", text: extra.join(" · ")}) : null,
    h("span", {class: "track"}, bar)));
}

function sumCells(cells) {
  const t = {episodes: 0, running: 0, error: 0, passed: 0, failed: 0, unjudged: 0, tasks: 0};
  for (const c of cells) for (const k of Object.keys(t)) t[k] += c[k];
  return t;
}

async function leaderboard(r, box) {
  const s = await summary(r);
  setCrumbs([[`${r.store} · ${r.run}`, null]]);
  const pair = {judge: s.judge, method: s.method};
  const cols = [...new Map(s.cells.map(c => [`${c.benchmark}\u0000${c.domain}`, c])).values()]
    .map(c => [c.benchmark, c.domain]).sort((a, b) => a[0].localeCompare(b[0]) || a[1].localeCompare(b[1]));
  const models = [...new Set(s.cells.map(c => c.model))];
  const byModel = new Map(models.map(m => [m, s.cells.filter(c => c.model === m)]));
  models.sort((a, b) => (passRate(sumCells(byModel.get(b))) ?? -1) - (passRate(sumCells(byModel.get(a))) ?? -1));
  const benches = [...new Set(cols.map(c => c[0]))];
  const list = params => route(r.store, r.run, "episodes", {...pair, ...params});
  const table = h("table", {class: "board", id: "leaderboard"},
    h("thead", {},
      h("tr", {}, h("th", {rowspan: 2, class: "model", text: "model"}), h("th", {rowspan: 2, text: "all"}),
        benches.map(b => h("th", {colspan: cols.filter(c => c[0] === b).length, class: "bench"},
          h("a", {href: list({benchmark: b}), text: b})))),
      h("tr", {}, cols.map(([b, d]) => h("th", {class: "domain", title: d},
        h("a", {href: list({benchmark: b, domain: d}), text: d}))))),
    h("tbody", {}, models.map(m => {
      const cells = new Map(byModel.get(m).map(c => [`${c.benchmark}\u0000${c.domain}`, c]));
      return h("tr", {"data-model": m}, h("th", {class: "model", text: m}),
        rateCell(sumCells(byModel.get(m)), list({model: m})),
        cols.map(([b, d]) => {
          const c = cells.get(`${b}\u0000${d}`);
          return c ? rateCell(c, list({model: m, benchmark: b, domain: d})) : h("td", {class: "empty", text: ""});
        }));
    })));
  const total = sumCells(s.cells);
  add(box,
    h("div", {class: "toolbar"}, h("h1", {text: "Leaderboard"}), pairSelect(s, r, "", {}),
      h("a", {href: list({}), class: "button", text: `all ${num(total.episodes)} episodes →`})),
    h("p", {class: "muted small", text: "Pass rate per model and domain: passed / finished episodes; errors and " +
      "episodes without a verdict count as failures. Click a cell for its episodes."}),
    h("div", {class: "scroll"}, table),
    h("div", {class: "muted small", text: `${num(total.episodes)} episodes · ${num(total.passed)} passed · ` +
      `${num(total.failed)} failed · ${num(total.error)} errors · ${num(total.unjudged)} without a verdict · ` +
      `${num(total.running)} unfinished`}));
}

// ---- episode list -------------------------------------------------------------------------

function filterBar(s, r, p) {
  const go = changes => { location.hash = route(r.store, r.run, "episodes", {...p, ...changes, page: null, cursor: null}); };
  const select = (name, label, values) => {
    const sel = h("select", {name, onchange: e => go({[name]: e.target.value})},
      h("option", {value: "", text: `any ${label}`}),
      values.map(v => { const o = h("option", {value: v, text: v}); o.selected = String(p[name] ?? "") === String(v); return o; }));
    return h("label", {}, sel);
  };
  const text = (name, placeholder) => {
    const input = h("input", {type: "search", name, placeholder, value: p[name] || ""});
    input.addEventListener("keydown", e => { if (e.key === "Enter") go({[name]: input.value.trim()}); });
    input.addEventListener("search", () => { if (!input.value) go({[name]: ""}); });
    return input;
  };
  const uniq = key => [...new Set(s.cells.filter(c => (key === "domain" && p.benchmark) ? c.benchmark === p.benchmark : true)
    .map(c => c[key]))].sort();
  const task = text("task", "task id contains…");
  const q = text("q", "search message text…");
  return h("div", {class: "filters", id: "filters"},
    select("model", "model", uniq("model")), select("benchmark", "benchmark", uniq("benchmark")),
    select("domain", "domain", uniq("domain")), select("outcome", "outcome", OUTCOMES),
    select("termination", "termination", s.terminations), select("trial", "trial", s.trials),
    task, q,
    h("button", {type: "button", text: "apply", onclick: () => go({task: task.value.trim(), q: q.value.trim()})}),
    h("a", {href: route(r.store, r.run, "episodes", pairOf(r)), class: "button light", text: "clear"}));
}

function episodeRows(rows, r, pair) {
  return rows.map(e => {
    const href = route(r.store, r.run, "episode", {id: e.episode_id, ...pair});
    return h("tr", {class: "ep-row", "data-id": e.episode_id, onclick: ev => {
      if (ev.target.tagName !== "A") location.hash = href; }},
      h("td", {}, h("a", {href, text: e.task_id})), h("td", {text: e.model}),
      h("td", {text: e.benchmark}), h("td", {text: e.domain}), h("td", {text: e.trial}),
      h("td", {}, badge(e.outcome)), h("td", {text: e.termination || "—"}),
      h("td", {text: e.score === null || e.score === undefined ? "—" : e.score.toFixed(2)}));
  });
}

async function episodes(r, box) {
  const s = await summary(r);
  const p = r.params;
  const pair = {judge: s.judge, method: s.method};
  setCrumbs([[`${r.store} · ${r.run}`, route(r.store, r.run, "", pair)], ["episodes", null]]);
  const page = Number(p.page || 0);
  const data = await api("episodes", {store: r.store, run: r.run, ...pair, ...p, judge: s.judge, method: s.method});
  const tbody = h("tbody", {}, episodeRows(data.rows, r, pair));
  const table = h("table", {class: "episodes", id: "episode-list"},
    h("thead", {}, h("tr", {}, ["task", "model", "benchmark", "domain", "trial", "outcome", "termination", "score"]
      .map(t => h("th", {text: t})))), tbody);
  let footer;
  if (data.search !== undefined) {
    const status = h("span", {class: "muted", id: "search-status"});
    let cursor = data.next_cursor;
    let found = data.rows.length;
    const more = h("button", {type: "button", text: "search further", onclick: async () => {
      more.disabled = true;
      const next = await api("episodes", {store: r.store, run: r.run, ...p, ...pair, cursor});
      add(tbody, episodeRows(next.rows, r, pair));
      found += next.rows.length; cursor = next.next_cursor; show(next.scanned_to);
      more.disabled = false;
    }});
    const show = scanned => {
      status.textContent = `${num(found)} episodes contain “${data.search}”` +
        (cursor === null ? " (all searched)" : ` in the first ${num(scanned)} of the list`);
      more.hidden = cursor === null;
    };
    show(data.scanned_to);
    footer = h("div", {class: "pager"}, status, more);
  } else {
    const pages = Math.max(1, Math.ceil(data.total / data.per_page));
    const to = n => route(r.store, r.run, "episodes", {...p, ...pair, page: n || null});
    footer = h("div", {class: "pager"},
      page > 0 ? h("a", {href: to(page - 1), class: "button light", text: "← previous"}) : null,
      h("span", {id: "list-count", text: `${num(data.total)} episodes · page ${page + 1} of ${num(pages)}`}),
      page + 1 < pages ? h("a", {href: to(page + 1), class: "button light", text: "next →"}) : null);
  }
  add(box, h("div", {class: "toolbar"}, h("h1", {text: "Episodes"}), pairSelect(s, r, "episodes", p)),
    filterBar(s, r, {...p, ...pair}), table,
    data.rows.length ? null : h("p", {class: "muted", text: "No episodes match."}), footer);
}

// ---- one episode and side by side ---------------------------------------------------------

async function sameTaskPicker(r, id, pair, onpick, label) {
  const rows = await api("same-task", {store: r.store, run: r.run, id, ...pair});
  const sel = h("select", {class: "picker", onchange: e => onpick(e.target.value)},
    h("option", {value: "", text: label}),
    rows.filter(e => e.episode_id !== id).map(e => h("option", {value: e.episode_id,
      text: `${e.model} · trial ${e.trial} · ${e.outcome}`})));
  return sel;
}

function expandButtons(scope) {
  return h("span", {class: "expanders"},
    h("button", {type: "button", class: "light", text: "expand tool calls",
      onclick: () => scope.querySelectorAll("details.toolcall").forEach(d => { d.open = true; })}),
    h("button", {type: "button", class: "light", text: "collapse",
      onclick: () => scope.querySelectorAll("details.toolcall").forEach(d => { d.open = false; })}));
}

async function episode(r, box) {
  const s = await summary(r);
  const pair = {judge: s.judge, method: s.method};
  const id = r.params.id;
  const data = await api("episode", {store: r.store, run: r.run, id});
  const e = data.episode;
  setCrumbs([[`${r.store} · ${r.run}`, route(r.store, r.run, "", pair)],
    [`${e.model} · ${e.benchmark} ${e.domain}`, route(r.store, r.run, "episodes",
      {...pair, model: e.model, benchmark: e.benchmark, domain: e.domain})],
    [`${e.task_id} #${e.trial}`, null]]);
  const picker = await sameTaskPicker(r, id, pair,
    other => { if (other) location.hash = route(r.store, r.run, "compare", {a: id, b: other, ...pair}); },
    "compare side by side with…");
  const convo = conversation(data);
  add(box,
    h("div", {class: "toolbar"}, h("h1", {text: `${e.task_id}`}), badge(outcomeOf(data, s.judge, s.method)), picker),
    episodeHeader(data, pair),
    h("h2", {text: "Verdicts"}), judgmentsView(data),
    h("div", {class: "toolbar"}, h("h2", {text: "Conversation"}), expandButtons(convo)), convo,
    h("h2", {text: "Model calls"}), callsView(data));
}

async function compare(r, box) {
  const s = await summary(r);
  const pair = {judge: s.judge, method: s.method};
  const ids = [r.params.a, r.params.b];
  const datas = await Promise.all(ids.map(id => api("episode", {store: r.store, run: r.run, id})));
  const e0 = datas[0].episode;
  setCrumbs([[`${r.store} · ${r.run}`, route(r.store, r.run, "", pair)],
    [`${e0.benchmark} ${e0.domain} · ${e0.task_id}`, null], ["side by side", null]]);
  const cols = await Promise.all(datas.map(async (data, i) => {
    const e = data.episode;
    const picker = await sameTaskPicker(r, ids[i], pair, other => {
      if (!other) return;
      const next = [...ids]; next[i] = other;
      location.hash = route(r.store, r.run, "compare", {a: next[0], b: next[1], ...pair});
    }, "switch to…");
    return h("div", {class: "side", "data-side": i},
      h("div", {class: "toolbar"}, h("h2", {}, h("a", {href: route(r.store, r.run, "episode", {id: ids[i], ...pair}),
        text: `${e.model} · trial ${e.trial}`})), badge(outcomeOf(data, s.judge, s.method)), picker),
      episodeHeader(data, pair), judgmentsView(data), conversation(data, {windows: false}));
  }));
  add(box, h("h1", {text: `${e0.task_id}: side by side`}), h("div", {class: "compare"}, cols));
}

// ---- router -------------------------------------------------------------------------------

let rendering = 0;

async function render() {
  const r = parseRoute(location.hash);
  const mine = ++rendering;
  const box = h("div", {class: "page"});
  main.setAttribute("aria-busy", "true");
  try {
    if (!r.store || !r.run) await home(box);
    else if (r.view === "") await leaderboard(r, box);
    else if (r.view === "episodes") await episodes(r, box);
    else if (r.view === "episode") await episode(r, box);
    else if (r.view === "compare") await compare(r, box);
    else add(box, h("p", {class: "error-text", text: `unknown page ${r.view}`}));
  } catch (err) {
    clear(box);
    add(box, h("p", {class: "error-text", text: `error: ${err.message}`}));
  }
  if (mine !== rendering) return; // a newer route is being shown
  clear(main).append(box);
  main.setAttribute("aria-busy", "false");
  document.body.dataset.route = r.view || (r.store ? "leaderboard" : "home");
}

window.addEventListener("hashchange", () => { render(); window.scrollTo(0, 0); });
render();
