// One episode: header facts, each judge's verdict, the conversation with tool calls, the
// judge's windows at the messages they cover, and every model call with its cost.
// All text from the store goes in through textContent (dom.js's h).

import {h, add, num, secs, money, pct, pretty, verdict, badge} from "./dom.js";

const ROLE_LABEL = {system: "System prompt", assistant: "Agent", user: "User (simulator)",
                    tool: "Tool result"};

function usageText(u) {
  if (!u) return "—";
  const cached = u.cached_prompt_tokens ? ` (${num(u.cached_prompt_tokens)} cached)` : "";
  return `${num(u.prompt_tokens || 0)} in${cached} · ${num(u.completion_tokens || 0)} out`;
}

function facts(rows) {
  return h("dl", {class: "facts"}, rows.filter(r => r).map(([k, v]) =>
    h("div", {}, h("dt", {text: k}), h("dd", {}, v))));
}

// The outcome under the benchmark's source (the summary's {judge, method}).
export function outcomeOf(data, src) {
  const e = data.episode;
  if (e.status === "running") return "running";
  if (e.status === "error") return "error";
  const j = src && data.judgments.find(j => j.judge === src.judge && j.method === src.method);
  if (!j || j.passed === null) return "unjudged";
  return j.passed ? "passed" : "failed";
}

// Where a benchmark's pass comes from, in words (as the report's tables say it).
export function sourceText(src) {
  if (!src) return "—";
  if (!src.applicable) return `the ${src.method} judge: does not apply to this benchmark`;
  const where = src.method === "state" ? "state check" : src.judge ? `${src.judge} / ${src.method}`
    : `no ${src.method} judgments yet`;
  return `${src.label} (${where})${src.explicit ? ", chosen here" : ""}`;
}

// ---- judgments ----------------------------------------------------------------------------

const SKIP_DETAILS = new Set(["rubrics", "window_log", "usage", "why", "unreachable",
                              "reasoning", "note", "error", "method", "premature"]);

function isNumber(v) { return typeof v === "number" || typeof v === "boolean"; }

// A metrics grid holds rates: one format for all (1 and 0 too), counts as counts.
function rateCell(v) {
  if (typeof v === "number" && !(Number.isInteger(v) && Math.abs(v) > 1)) return v.toFixed(3);
  return numberCell(v);
}

function numberCell(v) {
  if (typeof v === "boolean") return v ? "yes" : "no";
  return Number.isInteger(v) ? num(v) : v.toFixed(3);
}

// Generic details: scalars as facts; an object of objects of numbers as one table
// (T1's {tool: {precision, recall, f1, accuracy}, param: {...}}); text maps as facts.
function detailsView(details) {
  const out = [];
  const scalars = [];
  const grid = [];
  for (const [k, v] of Object.entries(details || {})) {
    if (SKIP_DETAILS.has(k) || v === null || v === undefined) continue;
    if (isNumber(v)) scalars.push([k, numberCell(v)]);
    else if (typeof v === "string") scalars.push([k, v]);
    else if (typeof v === "object" && !Array.isArray(v)) {
      const vals = Object.values(v);
      if (vals.length && vals.every(isNumber)) grid.push([k, v]);
      else if (vals.every(x => typeof x === "string")) {
        for (const [kk, vv] of Object.entries(v)) scalars.push([`${k}.${kk}`, vv]);
      }
    }
  }
  if (grid.length) {
    const cols = [...new Set(grid.flatMap(([, v]) => Object.keys(v)))];
    out.push(h("table", {class: "metrics"},
      h("thead", {}, h("tr", {}, h("th", {text: ""}), cols.map(c => h("th", {text: c})))),
      h("tbody", {}, grid.map(([k, v]) => h("tr", {}, h("th", {text: k}),
        cols.map(c => h("td", {text: c in v ? rateCell(v[c]) : ""})))))));
  }
  if (scalars.length) {
    out.push(h("div", {class: "kv"}, scalars.map(([k, v]) =>
      h("span", {}, h("span", {class: "muted", text: `${k} `}), v))));
  }
  return out;
}

function judgmentCard(j, decides) {
  const d = j.details || {};
  const head = h("div", {class: "jhead"},
    h("strong", {text: `${j.judge} / ${j.method}`}), " ", verdict(j.passed),
    j.score !== null && j.score !== undefined ? h("span", {class: "muted", text: ` score ${j.score.toFixed(3)}`}) : null,
    decides ? h("span", {class: "badge source", text: "decides pass / fail", title: "this benchmark's source in this view"}) : null,
    d.premature ? h("span", {class: "badge error", text: "premature ending",
      title: "ended by a limit: scored 0, the judge was not called"}) : null,
    d.unreachable ? h("span", {class: "badge unreachable", text: "unreachable"}) : null);
  const body = [];
  if (d.why) {
    body.push(h("div", {class: "why"}, h("span", {class: "muted", text: "What differs: "}),
      h("ul", {}, String(d.why).split(/;\s+(?=\S)/).map(x => h("li", {text: x})))));
  }
  if (d.error) body.push(h("div", {class: "error-text", text: `judge error: ${d.error}`}));
  if (d.note) body.push(h("div", {class: "muted", text: d.note}));
  if (typeof d.reasoning === "string" && d.reasoning) body.push(h("p", {class: "reasoning", text: d.reasoning}));
  if (Array.isArray(d.rubrics) && d.rubrics.length) {
    body.push(h("table", {class: "rubrics"},
      h("thead", {}, h("tr", {}, h("th", {text: ""}), h("th", {text: "rubric"}),
        h("th", {text: "justification"}), h("th", {text: "set in"}))),
      h("tbody", {}, d.rubrics.map(r => h("tr", {class: r.met ? "met" : "unmet"},
        h("td", {class: "mark", text: r.met ? "✓" : "✗"}), h("td", {text: r.rubric}),
        h("td", {text: r.reasoning || ""}),
        h("td", {class: "muted nowrap", text: r.window === null || r.window === undefined ? "—" : `window ${r.window + 1}`}))))));
  }
  body.push(...detailsView(d));
  const extra = [];
  if (j.calls) extra.push(`${j.calls} judge calls`, usageText(j.usage));
  if (j.cost !== null && j.cost !== undefined) extra.push(money(j.cost));
  if (j.windows && j.windows.length) {
    extra.push(`${j.windows.length} window${j.windows.length > 1 ? "s" : ""} (shown at their messages)`);
  }
  if (extra.length) body.push(h("div", {class: "muted small", text: extra.join(" · ")}));
  if (j.windows_note) body.push(h("div", {class: "note", text: j.windows_note}));
  const wide = Array.isArray(d.rubrics) && d.rubrics.length ? " wide" : "";
  return h("div", {class: `judgment${wide} ${j.passed === true ? "ok" : j.passed === false ? "bad" : ""}`,
                   "data-judge": `${j.judge}/${j.method}`}, head, body);
}

function windowCard(j, w) {
  const range = `messages [${w.start + 1}]–[${w.end}]`;
  const title = h("summary", {},
    h("strong", {text: `Judge window ${w.index + 1} of ${j.windows.length}`}),
    h("span", {class: "muted", text: ` · ${j.judge} / ${j.method} · ${range}`}),
    w.judged === false ? h("span", {class: "badge error", text: "unjudged"}) : null);
  const body = [];
  if (w.error) body.push(h("div", {class: "error-text", text: w.error}));
  if (w.states) {
    body.push(h("table", {class: "rubrics"},
      h("thead", {}, h("tr", {}, h("th", {text: ""}), h("th", {text: "rubric"}),
        h("th", {text: "justification after this window"}))),
      h("tbody", {}, w.states.map(s => h("tr", {class: `${s.met ? "met" : "unmet"}${s.changed ? " changed" : ""}`},
        h("td", {class: "mark", text: s.met ? "✓" : "✗", title: s.changed ? "changed in this window" : ""}),
        h("td", {}, s.rubric, s.changed ? h("span", {class: "badge changed", text: "changed"}) : null),
        h("td", {text: s.justification || (s.mentioned ? "" : "(not mentioned)")}))))));
  } else if (w.verdict) {
    body.push(h("div", {}, verdict(w.verdict.met), " ", w.verdict.justification || ""));
  } else {
    body.push(h("div", {class: "muted", text: "states not available (see the judgment)"}));
  }
  return h("details", {class: "window", open: true, "data-window": w.index}, title, body);
}

// ---- conversation -------------------------------------------------------------------------

function callBadge(c) {
  if (!c) return null;
  const parts = [c.role, usageText(c.usage), secs(c.latency_s)];
  if (c.attempts && c.attempts > 1) parts.push(`${c.attempts} attempts`);
  if (c.cost !== null && c.cost !== undefined) parts.push(money(c.cost));
  return h("span", {class: "call", text: parts.join(" · ")});
}

function toolCall(tc, result) {
  const fn = tc.function || {};
  const status = !result ? "no result" : result.tool_ok === false ? "error" : "ok";
  return h("details", {class: `toolcall ${status === "error" ? "bad" : ""}`},
    h("summary", {},
      h("span", {class: "tool-name", text: fn.name || "(no name)"}),
      h("span", {class: "muted args-short", text: ` ${(fn.arguments || "").slice(0, 120)}`}),
      h("span", {class: `badge ${status === "ok" ? "passed" : status === "error" ? "failed" : "unjudged"}`, text: status}),
      result && result.number ? h("span", {class: "num", text: `[${result.number}]`}) : null),
    h("div", {class: "label", text: "arguments"}),
    h("pre", {class: "args", text: pretty(fn.arguments || "")}),
    result ? [h("div", {class: "label", text: "result"}), h("pre", {class: "result", text: pretty(result.content)})] : null);
}

function messageView(m, ctx) {
  const calls = ctx.callsAt.get(m.index);
  const num_ = m.number ? h("span", {class: "num", text: `[${m.number}]`}) : null;
  if (m.role === "system") {
    return h("details", {class: "msg system"},
      h("summary", {}, h("span", {class: "role", text: ROLE_LABEL.system}),
        h("span", {class: "muted", text: ` ${(m.content || "").length.toLocaleString("en-US")} characters`})),
      h("pre", {class: "text", text: m.content || ""}));
  }
  if (m.role === "tool") {
    if (ctx.paired.has(m.index)) return null; // shown inside its call
    return h("div", {class: "msg tool"}, h("div", {class: "mhead"}, num_,
      h("span", {class: "role", text: `${ROLE_LABEL.tool}${m.name ? ` (${m.name})` : ""}`})),
      h("pre", {class: "text", text: m.content || ""}));
  }
  const kids = [h("div", {class: "mhead"}, num_, h("span", {class: "role", text: ROLE_LABEL[m.role] || m.role}),
    calls ? calls.map(callBadge) : null)];
  if (m.content) kids.push(h("div", {class: "text", text: m.content}));
  for (const tc of m.tool_calls || []) kids.push(toolCall(tc, ctx.results.get(tc.id)));
  return h("div", {class: `msg ${m.role}`, "data-index": m.index}, kids);
}

function callsTable(data) {
  if (!data.calls.length) return h("p", {class: "muted", text: "No model calls in this episode's journal."});
  return h("table", {class: "calls"},
    h("thead", {}, h("tr", {}, ["#", "role", "model", "prompt", "cached", "completion",
      "latency", "attempts", "cost", "message"].map(t => h("th", {text: t})))),
    h("tbody", {}, data.calls.map(c => h("tr", {},
      h("td", {text: c.seq}), h("td", {text: c.role}), h("td", {text: c.model || "—"}),
      h("td", {text: num(c.usage.prompt_tokens || 0)}), h("td", {text: num(c.usage.cached_prompt_tokens || 0)}),
      h("td", {text: num(c.usage.completion_tokens || 0)}), h("td", {text: secs(c.latency_s)}),
      h("td", {text: c.attempts ?? "—"}), h("td", {text: money(c.cost)}),
      h("td", {text: c.message_index === null ? "—" : `[${data.messages[c.message_index].number}]`})))));
}

export function conversation(data, {windows = true} = {}) {
  const callsAt = new Map();
  for (const c of data.calls) {
    if (c.message_index !== null) callsAt.set(c.message_index, [...(callsAt.get(c.message_index) || []), c]);
  }
  const results = new Map();
  const paired = new Set();
  for (const m of data.messages) {
    if (m.role === "tool" && m.tool_call_id && !results.has(m.tool_call_id)) {
      results.set(m.tool_call_id, m);
      paired.add(m.index);
    }
  }
  const anchored = new Map();
  if (windows) {
    for (const j of data.judgments) {
      for (const w of j.windows || []) {
        if (w.anchor === null || w.anchor === undefined) continue;
        anchored.set(w.anchor, [...(anchored.get(w.anchor) || []), windowCard(j, w)]);
      }
    }
  }
  // a tool result shown inside its call: the window ending at it goes after the caller
  const ctx = {callsAt, results, paired};
  const out = [];
  let pending = [];
  for (const m of data.messages) {
    const view = messageView(m, ctx);
    if (view) {
      out.push(view);
      if (pending.length) { out.push(...pending); pending = []; }
    }
    const cards = anchored.get(m.index);
    if (cards) {
      if (view) out.push(...cards); else pending.push(...cards);
    }
  }
  out.push(...pending);
  return h("div", {class: "conversation"}, out);
}

export function episodeHeader(data, src, name) {
  const e = data.episode;
  const r = data.record || {};
  const t = data.totals;
  const n = k => data.record ? num(r[k] || 0) : "—"; // a record omits zeros
  const cost = t.cost !== null ? money(t.cost) : t.priced ? `${money(null)} (${t.priced} of ${t.calls} calls priced)`
    : t.calls ? "no stored prices" : "—";
  return h("div", {class: "ep-head"},
    facts([
      ["model", name || e.model], ["task", `${e.benchmark} · ${e.domain} · ${e.task_id}`],
      ["trial", String(e.trial)], ["outcome", badge(outcomeOf(data, src))],
      ["termination", e.termination || e.status],
      e.unreachable ? ["unreachable", h("span", {class: "error-text", text: e.unreachable})] : null,
      r.error ? ["error", h("span", {class: "error-text", text: r.error})] : null,
      ["turns · steps", `${n("turns")} · ${n("steps")}`],
      ["tool calls", data.record ? `${n("tool_calls")} (${n("tool_errors")} failed)` : "—"],
      ["agent tokens", usageText(r.agent_usage)],
      ["user tokens", `${usageText(r.user_usage)}${e.user_model ? ` (${e.user_model}, ${e.user_mode || "default"})` : ""}`],
      ["wall time", secs(r.wall_s)],
      ["model calls", `${num(t.calls)} · ${secs(t.latency_s)} waiting`],
      ["cost (agent + user)", cost],
      t.judge_cost !== null && t.judge_cost !== undefined ? ["cost (judges)", money(t.judge_cost)] : null,
    ]));
}

export function judgmentsView(data, src) {
  if (!data.judgments.length) return h("p", {class: "muted", text: "No judgments."});
  return h("div", {class: "judgments"}, data.judgments.map(j =>
    judgmentCard(j, !!src && j.judge === src.judge && j.method === src.method)));
}

function short(hash) { return typeof hash === "string" ? hash.slice(0, 12) : "—"; }

function endpointText(ep) {
  if (!ep || typeof ep !== "object") return "—";
  if (ep.scripted) return `${ep.scripted} (scripted)`;
  const {model, base_url, ...rest} = ep;
  const opts = Object.entries(rest).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  return [`${model || "?"} at ${base_url || "?"}`, ...opts].join(" · ");
}

// What the episode's key is the hash of (ids.EpisodeKey, runner/identity.py).
export function identityView(data) {
  const e = data.episode;
  const id = data.identity || {};
  if (id.legacy) {
    return h("div", {class: "ep-head", id: "identity"}, facts([["key", e.episode_key], ["label", e.label],
      ["identity", "not recorded (a store written before episode identities): reported, never reused"]]));
  }
  const limits = id.limits && typeof id.limits === "object"
    ? Object.entries(id.limits).map(([k, v]) => `${k} ${v === null ? "—" : v}`).join(" · ") : "—";
  return h("div", {class: "ep-head", id: "identity"},
    h("p", {class: "muted small", text: "The episode's key is the hash of what decides its outcome; " +
      "change any of these and a sweep runs a new episode."}),
    facts([
      ["key", h("span", {class: "mono", text: e.episode_key})], ["label", e.label],
      ["agent endpoint", endpointText(id.agent)],
      ["task content", h("span", {class: "mono", title: id.task || "", text: short(id.task)})],
      ["prompts and tools", h("span", {class: "mono", title: id.fingerprint || "", text: short(id.fingerprint)})],
      ["user model", endpointText(id.user)], ["user mode", id.user_mode || "—"],
      ["trial · seed", `${id.trial ?? "—"} · ${id.seed ?? "—"}`], ["limits", limits],
      ["runs that selected it", (e.runs || []).join(", ") || "—"],
      e.spec ? ["split", e.spec] : null,
    ]));
}

export function callsView(data) { return callsTable(data); }

// The report's Avg@k: the mean over tasks of each task's passed / scored (errors count as
// failures; unjudged and unfinished are not scored), so a task run 40 times weighs as one.
export function passRate(cell) {
  return cell.rated_tasks ? cell.rate_sum / cell.rated_tasks : null;
}

export {pct};
