// The viewer's page: hash routes, one view each.
//
//   #/                                   stores and their runs
//   #/STORE                              leaderboards: one per benchmark, model x domain cells
//   #/STORE/episodes?model=..&..         episode list with filters, pages, text search
//   #/STORE/episode?id=EPISODE_KEY       one episode
//   #/STORE/compare?a=KEY&b=KEY          two episodes of one task side by side
//
// Every route carries its scope: run= (one run's selection; absent: every episode of the
// store, as `sweepbench report`) and src.<benchmark>=<judge>/<method> (another source than
// the benchmark's headline), so a copied URL shows a colleague the same thing.

import {h, add, clear, route, parseRoute, api, pct, num, when, badge} from "./dom.js";
import {conversation, episodeHeader, identityView, judgmentsView, callsView, outcomeOf,
        passRate, sourceText} from "./episode.js";

const OUTCOMES = ["passed", "failed", "error", "unjudged", "running", "unreachable", "superseded"];
const main = document.getElementById("main");
const crumbs = document.getElementById("crumbs");
const summaries = new Map();

// The scope params of a route: run= and src.*=.
function scopeOf(params) {
  return Object.fromEntries(Object.entries(params || {}).filter(([k]) => k === "run" || k.startsWith("src.")));
}

async function summary(r) {
  const scope = scopeOf(r.params);
  const key = JSON.stringify([r.store, Object.entries(scope).sort()]);
  if (!summaries.has(key)) {
    summaries.set(key, api("summary", {store: r.store, ...scope})
      .catch(e => { summaries.delete(key); throw e; }));
  }
  return summaries.get(key);
}

function scopeLabel(s) {
  return s.run ? `run ${s.run}` : "all episodes";
}

function setCrumbs(items) {
  clear(crumbs);
  add(crumbs, [h("a", {href: "#/", text: "sweepbench view"}),
    items.map(([text, href]) => [h("span", {class: "sep", text: "›"}),
      href ? h("a", {href, text}) : h("span", {text})])]);
}

// Names of leaderboard rows: a model alone, or "model [user U, mode]" when the scope holds it
// under several user models or modes (as the report names them).
function namer(s) {
  const byKey = new Map(s.cells.map(c => [JSON.stringify([c.model, c.user_model, c.user_mode]), c.name]));
  const split = new Set(s.cells.filter(c => c.name !== c.model).map(c => c.model));
  return {
    name: e => byKey.get(JSON.stringify([e.model, e.user_model, e.user_mode])) || e.model,
    filter: c => split.has(c.model) ? {model: c.model, user_model: c.user_model, user_mode: c.user_mode}
                                    : {model: c.model},
  };
}

function sourceOf(s, benchmark) {
  const b = s.benchmarks.find(b => b.name === benchmark);
  return b ? b.source : null;
}

function scopeSelect(s, r) {
  const sel = h("select", {id: "scope", title: "which episodes are looked at",
    onchange: e => { location.hash = route(r.store, "", {...scopeOf(r.params), run: e.target.value || null}); }},
    h("option", {value: "", text: "all episodes in the store"}),
    s.runs.map(run => {
      const o = h("option", {value: run.run_id, text: `run ${run.run_id} (${run.status})`});
      o.selected = run.run_id === s.run;
      return o;
    }));
  return h("label", {class: "pair"}, "scope ", sel);
}

function sourceSelect(s, r, b) {
  const headline = b.headline;
  const value = src => `${src.judge}/${src.method}`;
  const pairs = b.pairs.filter(p => p.verdicts > 0 || p.method === "state");
  if (!pairs.some(p => p.method === "state")) pairs.unshift({judge: "state", method: "state", verdicts: 0});
  const sel = h("select", {class: "source", "data-benchmark": b.name,
    title: "the judge whose verdicts decide pass / fail on this benchmark",
    onchange: e => {
      const v = e.target.value;
      const isHeadline = headline.judge !== null && v === value(headline);
      location.hash = route(r.store, "", {...r.params, [`src.${b.name}`]: isHeadline ? null : v});
    }},
    pairs.map(p => {
      const isHead = p.judge === headline.judge && p.method === headline.method;
      const o = h("option", {value: value(p),
        text: `${p.judge} / ${p.method} · ${num(p.verdicts)} verdicts${isHead ? " · headline" : ""}`});
      o.selected = p.judge === b.source.judge && p.method === b.source.method;
      return o;
    }));
  return h("label", {class: "pair"}, "pass from ", sel);
}

// ---- home ---------------------------------------------------------------------------------

async function home(box) {
  setCrumbs([]);
  const stores = await api("stores");
  if (stores.length === 1) { location.replace(route(stores[0].id, "", {})); return; }
  add(box, h("h1", {text: "Run stores"}), stores.map(s => h("section", {class: "card"},
    h("h2", {}, h("a", {href: route(s.id, "", {}), text: s.id})), h("div", {class: "muted small", text: s.path}),
    s.runs.length ? h("ul", {}, s.runs.map(run => h("li", {},
      h("a", {href: route(s.id, "", {run: run.run_id}), text: run.run_id}),
      h("span", {class: "muted", text: ` ${run.status} · started ${when(run.created_at)}`}))))
      : h("p", {class: "muted", text: "no runs"}))));
}

// ---- leaderboard --------------------------------------------------------------------------

function scored(cell) { return cell.passed + cell.failed + cell.error; }

function rateCell(cell, href) {
  const rate = passRate(cell);
  const extra = [];
  if (cell.error) extra.push(`${cell.error} err`);
  if (cell.unjudged) extra.push(`${cell.unjudged} unj`);
  if (cell.running) extra.push(`${cell.running} run`);
  const bar = h("span", {class: "bar"});
  bar.style.width = `${Math.round(100 * (rate || 0))}%`;
  const unreach = cell.unreachable ? `; ${cell.unreachable} on unreachable tasks` : "";
  return h("td", {class: "cell"}, h("a", {href, class: "cell-link",
      title: `mean over ${cell.rated_tasks} tasks of per-task pass rates (Avg@k); ` +
        `${cell.passed} passed of ${scored(cell)} scored episodes; ` +
        `errors count as failures, ${cell.unjudged} unjudged and ${cell.running} unfinished not scored${unreach}`},
    h("span", {class: "rate", text: pct(rate)}),
    h("span", {class: "n", text: `${cell.passed}/${scored(cell)}`}),
    extra.length ? h("span", {class: "extra", text: extra.join(" · ")}) : null,
    h("span", {class: "track"}, bar)));
}

function sumCells(cells) {
  const t = {episodes: 0, running: 0, error: 0, passed: 0, failed: 0, unjudged: 0, unreachable: 0, tasks: 0,
             rate_sum: 0, rated_tasks: 0};
  for (const c of cells) for (const k of Object.keys(t)) t[k] += c[k];
  return t;
}

// One table: rows by name, an "all" column and one per (benchmark, domain) of `cols`.
function boardTable(s, r, cells, cols, id, showBench) {
  const names = namer(s);
  const rows = [...new Set(cells.map(c => c.name))];
  const byName = new Map(rows.map(n => [n, cells.filter(c => c.name === n)]));
  rows.sort((a, b) => (passRate(sumCells(byName.get(b))) ?? -1) - (passRate(sumCells(byName.get(a))) ?? -1)
    || a.localeCompare(b));
  const list = params => route(r.store, "episodes", {...scopeOf(r.params), ...params});
  const benches = [...new Set(cols.map(c => c[0]))];
  return h("table", {class: "board", id},
    h("thead", {},
      showBench ? h("tr", {}, h("th", {rowspan: 2, class: "model", text: "model"}), h("th", {rowspan: 2, text: "all"}),
        benches.map(b => h("th", {colspan: cols.filter(c => c[0] === b).length, class: "bench"},
          h("a", {href: list({benchmark: b}), text: b})))) : null,
      h("tr", {}, showBench ? null : [h("th", {class: "model", text: "model"}), h("th", {text: "all"})],
        cols.map(([b, d]) => h("th", {class: "domain", title: d},
          h("a", {href: list({benchmark: b, domain: d}), text: d}))))),
    h("tbody", {}, rows.map(n => {
      const mine = byName.get(n);
      const who = names.filter(mine[0]);
      const at = new Map(mine.map(c => [`${c.benchmark}\u0000${c.domain}`, c]));
      const only = showBench ? {} : {benchmark: cols[0][0]};
      return h("tr", {"data-model": n}, h("th", {class: "model", text: n}),
        rateCell(sumCells(mine), list({...who, ...only})),
        cols.map(([b, d]) => {
          const c = at.get(`${b}\u0000${d}`);
          return c ? rateCell(c, list({...who, benchmark: b, domain: d})) : h("td", {class: "empty", text: ""});
        }));
    })));
}

async function leaderboard(r, box) {
  const s = await summary(r);
  setCrumbs([[`${r.store} · ${scopeLabel(s)}`, null]]);
  const total = sumCells(s.cells);
  const list = params => route(r.store, "episodes", {...scopeOf(r.params), ...params});
  add(box,
    h("div", {class: "toolbar"}, h("h1", {text: "Leaderboards"}), scopeSelect(s, r),
      h("a", {href: list({}), class: "button", text: `all ${num(total.episodes)} episodes →`})),
    h("p", {class: "muted small", text: "Pass rate per model and domain, each benchmark scored by its own " +
      "source (its headline unless another is chosen): Avg@k, the mean over tasks of each task's passed / scored " +
      "episodes (as the report). Errors count as failures; " +
      "unjudged and unfinished episodes are not scored (counts shown). Click a cell for its episodes."}));
  for (const b of s.benchmarks) {
    const cells = s.cells.filter(c => c.benchmark === b.name);
    const cols = [...new Set(cells.map(c => c.domain))].sort().map(d => [b.name, d]);
    const t = sumCells(cells);
    add(box, h("section", {class: "bench-board", "data-benchmark": b.name},
      h("div", {class: "toolbar"}, h("h2", {}, h("a", {href: list({benchmark: b.name}), text: b.name})),
        h("span", {class: "muted source-text", text: `pass from ${sourceText(b.source)}`}), sourceSelect(s, r, b)),
      h("div", {class: "scroll"}, boardTable(s, r, cells, cols, `leaderboard-${b.name}`, false)),
      h("div", {class: "muted small", text: `${num(t.episodes)} episodes · ${num(t.passed)} passed · ` +
        `${num(t.failed)} failed · ${num(t.error)} errors · ${num(t.unjudged)} unjudged · ` +
        `${num(t.running)} unfinished · ${num(t.unreachable)} on unreachable tasks`})));
  }
  if (s.benchmarks.length > 1) {
    const cols = s.benchmarks.map(b => b.name).sort()
      .flatMap(b => [...new Set(s.cells.filter(c => c.benchmark === b).map(c => c.domain))].sort().map(d => [b, d]));
    add(box, h("section", {class: "bench-board"},
      h("div", {class: "toolbar"}, h("h2", {text: "overall"}),
        h("span", {class: "muted", text: "pooled over every benchmark, each episode scored by its own benchmark's source"})),
      h("div", {class: "scroll"}, boardTable(s, r, s.cells, cols, "leaderboard", true))));
  }
  if (s.superseded) {
    add(box, h("p", {class: "muted small"}, `${num(s.superseded)} stored episodes superseded by a newer identity ` +
      "of the same model, task and trial (not counted; ",
      h("a", {href: list({outcome: "superseded"}), text: "list them"}), ")"));
  }
}

// ---- episode list -------------------------------------------------------------------------

function filterBar(s, r, p) {
  const scope = scopeOf(r.params);
  const go = changes => { location.hash = route(r.store, "episodes", {...p, ...changes, page: null, cursor: null}); };
  const select = (name, label, values, current, onchange) => {
    const sel = h("select", {name, onchange: onchange || (e => go({[name]: e.target.value}))},
      h("option", {value: "", text: `any ${label}`}),
      values.map(v => { const o = h("option", {value: v, text: v}); o.selected = String(current ?? "") === String(v); return o; }));
    return h("label", {}, sel);
  };
  const text = (name, placeholder) => {
    const input = h("input", {type: "search", name, placeholder, value: p[name] || ""});
    input.addEventListener("keydown", e => { if (e.key === "Enter") go({[name]: input.value.trim()}); });
    input.addEventListener("search", () => { if (!input.value) go({[name]: ""}); });
    return input;
  };
  const names = namer(s);
  const cellOf = new Map(s.cells.map(c => [c.name, c]));
  const current = p.model ? names.name({model: p.model, user_model: p.user_model, user_mode: p.user_mode}) : "";
  const model = select("model", "model", [...cellOf.keys()].sort(), current, e => {
    const c = cellOf.get(e.target.value);
    go({model: null, user_model: null, user_mode: null, ...(c ? names.filter(c) : {})});
  });
  const domains = [...new Set(s.cells.filter(c => !p.benchmark || c.benchmark === p.benchmark).map(c => c.domain))].sort();
  const task = text("task", "task id contains…");
  const q = text("q", "search message text…");
  return h("div", {class: "filters", id: "filters"},
    model, select("benchmark", "benchmark", s.benchmarks.map(b => b.name), p.benchmark),
    select("domain", "domain", domains, p.domain), select("outcome", "outcome", OUTCOMES, p.outcome),
    select("termination", "termination", s.terminations, p.termination), select("trial", "trial", s.trials, p.trial),
    task, q,
    h("button", {type: "button", text: "apply", onclick: () => go({task: task.value.trim(), q: q.value.trim()})}),
    h("a", {href: route(r.store, "episodes", scope), class: "button light", text: "clear"}));
}

function episodeRows(rows, s, r) {
  const names = namer(s);
  const scope = scopeOf(r.params);
  return rows.map(e => {
    const href = route(r.store, "episode", {id: e.episode_key, ...scope});
    return h("tr", {class: "ep-row", "data-id": e.episode_key, onclick: ev => {
      if (ev.target.tagName !== "A") location.hash = href; }},
      h("td", {}, h("a", {href, text: e.task_id})), h("td", {text: names.name(e)}),
      h("td", {text: e.benchmark}), h("td", {text: e.domain}), h("td", {text: e.trial}),
      h("td", {}, badge(e.outcome), e.unreachable ? badge("unreachable") : null),
      h("td", {text: e.termination || "—"}),
      h("td", {text: e.score === null || e.score === undefined ? "—" : e.score.toFixed(2)}));
  });
}

async function episodes(r, box) {
  const s = await summary(r);
  const p = r.params;
  const scope = scopeOf(p);
  setCrumbs([[`${r.store} · ${scopeLabel(s)}`, route(r.store, "", scope)], ["episodes", null]]);
  const page = Number(p.page || 0);
  const data = await api("episodes", {store: r.store, ...p});
  const tbody = h("tbody", {}, episodeRows(data.rows, s, r));
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
      const next = await api("episodes", {store: r.store, ...p, cursor});
      add(tbody, episodeRows(next.rows, s, r));
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
    const to = n => route(r.store, "episodes", {...p, page: n || null});
    footer = h("div", {class: "pager"},
      page > 0 ? h("a", {href: to(page - 1), class: "button light", text: "← previous"}) : null,
      h("span", {id: "list-count", text: `${num(data.total)} episodes · page ${page + 1} of ${num(pages)}`}),
      page + 1 < pages ? h("a", {href: to(page + 1), class: "button light", text: "next →"}) : null);
  }
  const sources = s.benchmarks.filter(b => !p.benchmark || b.name === p.benchmark)
    .map(b => `${b.name}: ${sourceText(b.source)}`).join(" · ");
  add(box, h("div", {class: "toolbar"}, h("h1", {text: "Episodes"}),
      h("span", {class: "muted small", text: `${scopeLabel(s)} · outcomes from ${sources}`})),
    filterBar(s, r, p), table,
    data.rows.length ? null : h("p", {class: "muted", text: "No episodes match."}), footer);
}

// ---- one episode and side by side ---------------------------------------------------------

async function sameTask(r, id) {
  return api("same-task", {store: r.store, id, ...scopeOf(r.params)});
}

function picker(rows, id, s, onpick, label) {
  const names = namer(s);
  return h("select", {class: "picker", onchange: e => onpick(e.target.value)},
    h("option", {value: "", text: label}),
    rows.filter(e => e.episode_key !== id).map(e => h("option", {value: e.episode_key,
      text: `${names.name(e)} · trial ${e.trial} · ${e.outcome}${e.superseded ? " · superseded" : ""}`})));
}

function expandButtons(scope) {
  return h("span", {class: "expanders"},
    h("button", {type: "button", class: "light", text: "expand tool calls",
      onclick: () => scope.querySelectorAll("details.toolcall").forEach(d => { d.open = true; })}),
    h("button", {type: "button", class: "light", text: "collapse",
      onclick: () => scope.querySelectorAll("details.toolcall").forEach(d => { d.open = false; })}));
}

function supersededNote(rows, id, r) {
  const me = rows.find(e => e.episode_key === id);
  if (!me || !me.superseded) return null;
  const newer = rows.filter(e => e.model === me.model && e.trial === me.trial && e.user_model === me.user_model
    && e.user_mode === me.user_mode && !e.superseded);
  return h("p", {class: "note", id: "superseded"}, "Superseded: a newer identity of this model, task and trial " +
    "is stored and counts instead",
    newer.length ? [" (", h("a", {href: route(r.store, "episode", {...scopeOf(r.params), id: newer[0].episode_key}),
      text: newer[0].episode_key}), ")"] : null, ".");
}

async function episode(r, box) {
  const s = await summary(r);
  const scope = scopeOf(r.params);
  const id = r.params.id;
  const [data, rows] = await Promise.all([api("episode", {store: r.store, id}), sameTask(r, id)]);
  const e = data.episode;
  const src = sourceOf(s, e.benchmark);
  const names = namer(s);
  const who = names.filter({model: e.model, user_model: e.user_model, user_mode: e.user_mode});
  setCrumbs([[`${r.store} · ${scopeLabel(s)}`, route(r.store, "", scope)],
    [`${names.name(e)} · ${e.benchmark} ${e.domain}`, route(r.store, "episodes",
      {...scope, ...who, benchmark: e.benchmark, domain: e.domain})],
    [`${e.task_id} #${e.trial}`, null]]);
  const pick = picker(rows, id, s,
    other => { if (other) location.hash = route(r.store, "compare", {...scope, a: id, b: other}); },
    "compare side by side with…");
  const convo = conversation(data);
  add(box,
    h("div", {class: "toolbar"}, h("h1", {text: `${e.task_id}`}), badge(outcomeOf(data, src)), pick),
    supersededNote(rows, id, r),
    episodeHeader(data, src, names.name(e)),
    h("h2", {text: "Verdicts"}), judgmentsView(data, src),
    h("div", {class: "toolbar"}, h("h2", {text: "Conversation"}), expandButtons(convo)), convo,
    h("h2", {text: "Model calls"}), callsView(data),
    h("h2", {text: "Identity"}), identityView(data));
}

async function compare(r, box) {
  const s = await summary(r);
  const scope = scopeOf(r.params);
  const ids = [r.params.a, r.params.b];
  const datas = await Promise.all(ids.map(id => api("episode", {store: r.store, id})));
  const rows = await sameTask(r, ids[0]);
  const names = namer(s);
  const e0 = datas[0].episode;
  setCrumbs([[`${r.store} · ${scopeLabel(s)}`, route(r.store, "", scope)],
    [`${e0.benchmark} ${e0.domain} · ${e0.task_id}`, null], ["side by side", null]]);
  const cols = datas.map((data, i) => {
    const e = data.episode;
    const src = sourceOf(s, e.benchmark);
    const pick = picker(rows, ids[i], s, other => {
      if (!other) return;
      const next = [...ids]; next[i] = other;
      location.hash = route(r.store, "compare", {...scope, a: next[0], b: next[1]});
    }, "switch to…");
    return h("div", {class: "side", "data-side": i},
      h("div", {class: "toolbar"}, h("h2", {}, h("a", {href: route(r.store, "episode", {...scope, id: ids[i]}),
        text: `${names.name(e)} · trial ${e.trial}`})), badge(outcomeOf(data, src)), pick),
      episodeHeader(data, src, names.name(e)), judgmentsView(data, src), conversation(data, {windows: false}));
  });
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
    if (!r.store) await home(box);
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
