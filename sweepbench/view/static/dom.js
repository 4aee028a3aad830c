// DOM building, formatting and fetching for the viewer.
//
// Everything shown comes from a run store, and a store holds model output: untrusted text.
// So the page is built with createElement + textContent only: no string is ever parsed as
// HTML, anywhere (tests/view check the sources for every HTML sink). Links are built here
// from encoded parts (internal "#/..." routes only), never taken from data. Control and
// invisible characters in that text (a bidirectional override would show "1000" as "0001")
// are shown as escapes, "\u202e", as the terminal shows them (results/text.py, CONTROL).

const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

export function visible(text) {
  return String(text).replace(CONTROL, c => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}`
                        : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

export function h(tag, props, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = visible(v);
    else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "href" && !String(v).startsWith("#")) throw new Error("only internal links");
    else if (k === "value") el.value = v;
    else el.setAttribute(k, v === true ? "" : k === "title" ? visible(v) : String(v));
  }
  add(el, kids);
  return el;
}

export function add(el, ...kids) {
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(visible(kid)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// ---- routes -------------------------------------------------------------------------------

// #/STORE/VIEW?params: the scope (run=, src.<benchmark>=) rides in the params.
export function route(store, view, params) {
  let path = "#/" + encodeURIComponent(store);
  if (view) path += "/" + view;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== null && v !== undefined && v !== "") q.set(k, String(v));
  }
  const qs = q.toString();
  return qs ? `${path}?${qs}` : path;
}

export function parseRoute(hash) {
  const text = (hash || "").replace(/^#\/?/, "");
  const [path, qs] = [text.split("?")[0], text.split("?").slice(1).join("?")];
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  return {store: parts[0] || null, view: parts[1] || "",
          params: Object.fromEntries(new URLSearchParams(qs || ""))};
}

// ---- fetch --------------------------------------------------------------------------------

export async function api(name, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== null && v !== undefined && v !== "") q.set(k, String(v));
  }
  const resp = await fetch(`/api/${name}?${q}`, {headers: {Accept: "application/json"}});
  const data = await resp.json().catch(() => ({error: `HTTP ${resp.status}`}));
  if (!resp.ok) throw new Error(data.error || `HTTP ${resp.status}`);
  return data;
}

// ---- formatting ---------------------------------------------------------------------------

export function pct(x, digits = 1) {
  return x === null || x === undefined || Number.isNaN(x) ? "—" : `${(100 * x).toFixed(digits)}%`;
}

export function num(x) {
  return x === null || x === undefined ? "—" : Number(x).toLocaleString("en-US");
}

export function secs(x) {
  if (x === null || x === undefined) return "—";
  return x < 1 ? `${Math.round(x * 1000)} ms` : `${x.toFixed(2)} s`;
}

export function money(x) {
  if (x === null || x === undefined) return "—";
  if (x === 0) return "$0";
  return x < 0.01 ? `$${x.toPrecision(2)}` : `$${x.toFixed(4)}`;
}

export function when(ts) {
  return ts ? new Date(ts * 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "—";
}

// Pretty JSON when the text is JSON that JavaScript holds exactly, else the text itself
// (1e400 or a 5,000-digit integer would come back as null, a rounded one as another number;
// arguments nested too deep for JSON.stringify are shown as written too).
export function pretty(text) {
  if (typeof text !== "string") return JSON.stringify(text, null, 2);
  let exact = true;
  const keep = (k, v) => {
    if (typeof v === "number" && !(Number.isFinite(v) && (!Number.isInteger(v) || Number.isSafeInteger(v)))) exact = false;
    return v;
  };
  try {
    const value = JSON.parse(text, keep);
    return exact ? JSON.stringify(value, null, 2) : text;
  } catch { return text; }
}

export function badge(outcome) {
  return h("span", {class: `badge ${outcome || "none"}`, text: outcome || "—"});
}

export function verdict(passed) {
  if (passed === true) return h("span", {class: "badge passed", text: "pass"});
  if (passed === false) return h("span", {class: "badge failed", text: "fail"});
  return h("span", {class: "badge unjudged", text: "no verdict"});
}
