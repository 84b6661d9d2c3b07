// The plate's live figures: the static SVGs are replaced by Vega views that follow the controls.
// Runs after the Vega runtime module, which sets window.vega and window.vegaExpressionInterpreter.
const data = JSON.parse(document.getElementById("plate-data").textContent);
const KEYS = ["model", "batch", "network"];
const form = document.getElementById("controls");
const readout = document.getElementById("readout");
const selects = Object.fromEntries(KEYS.map((k) => [k, document.getElementById(`choose-${k}`)]));

/** The selection named in the URL's fragment, falling back to the plate's default for each key. */
function selectionFromUrl() {
  const params = new URLSearchParams(location.hash.slice(1));
  const chosen = {};
  for (const k of KEYS) {
    const wanted = params.get(k);
    chosen[k] = data.choices[k].includes(wanted) ? wanted : data.default[k];
  }
  return chosen;
}

/** Keep the selection in the URL without adding history entries for every change. */
function selectionToUrl(sel) {
  const params = new URLSearchParams(KEYS.map((k) => [k, sel[k]]));
  history.replaceState(null, "", `#${params}`);
}

function currentSelection() {
  return Object.fromEntries(KEYS.map((k) => [k, selects[k].value]));
}

function texts(sel) {
  return data.texts[KEYS.map((k) => sel[k]).join("|")];
}

/** A number as render.py's `shown` prints it: toFixed (ties away from zero), thousands separated. */
function fixed(value, digits = 0) {
  const [whole, part] = value.toFixed(digits).split(".");
  return whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",") + (part ? `.${part}` : "");
}
const stepTime = (s) => (s === 0 ? "none" : `${fixed(s, s < 0.1 ? 3 : 2)} s`);
const efficiencyText = (e) => `${fixed(e * 100)}%`;

/** A figure's data table for a selection, cell by cell as render.py's table_rows writes it. */
function tableRows(figureId, sel) {
  const same = (row) => KEYS.every((k) => row[k] === sel[k]);
  const facts = data.datasets.facts.find(same);
  const rows = data.datasets.grid.filter(same).sort((a, b) => a.replicas - b.replicas);
  return rows.map((r) => {
    const n = fixed(r.replicas) + (r.replicas === facts.crossing ? " (cross)" : "");
    return figureId === "fig-time"
      ? [n, stepTime(r.compute_s), stepTime(r.allreduce_s)]
      : [n, fixed(facts.tokens / r.replicas), efficiencyText(r.efficiency)];
  });
}

/** Each figure's description and data table, for the selection shown. */
function fillTexts(sel) {
  const t = texts(sel);
  readout.textContent = t.readout;
  for (const el of document.querySelectorAll("[data-selection]")) el.textContent = t.caption;
  for (const el of document.querySelectorAll("[data-describe]")) el.textContent = t.describe[el.dataset.describe];
  for (const table of document.querySelectorAll("[data-table]")) {
    table.tBodies[0].replaceChildren(...tableRows(table.dataset.table, sel).map(([head, ...cells]) => {
      const tr = document.createElement("tr");
      const th = document.createElement("th");
      th.scope = "row";
      th.textContent = head;
      tr.append(th, ...cells.map((c) => Object.assign(document.createElement("td"), { textContent: c })));
      return tr;
    }));
  }
}

/** Glossary definitions beside their terms: on hover, on keyboard focus, and on a first tap. */
function termTips() {
  const tip = document.createElement("div");
  tip.className = "term-tip";
  tip.hidden = true;
  tip.setAttribute("aria-hidden", "true"); // screen readers get the definition from aria-describedby
  document.body.append(tip);
  let owner = null;
  let closing = 0;
  let tapOpened = false;
  const open = (link) => {
    clearTimeout(closing);
    const definition = document.getElementById(link.getAttribute("aria-describedby"));
    if (!definition) return;
    owner = link;
    tip.textContent = definition.textContent;
    tip.hidden = false;
    const page = document.documentElement.clientWidth;
    const box = link.getBoundingClientRect();
    const width = Math.min(320, page - 16);
    tip.style.width = `${width}px`;
    tip.style.left = `${Math.max(8, Math.min(box.left, page - width - 8)) + window.scrollX}px`;
    tip.style.top = `${box.bottom + window.scrollY + 6}px`;
  };
  const close = () => { tip.hidden = true; owner = null; };
  const closeSoon = () => { closing = setTimeout(close, 300); };
  for (const link of document.querySelectorAll("a.term[aria-describedby]")) {
    link.addEventListener("mouseenter", () => open(link));
    link.addEventListener("mouseleave", closeSoon);
    link.addEventListener("focus", () => open(link));
    link.addEventListener("blur", closeSoon);
    link.addEventListener("pointerdown", (e) => { tapOpened = e.pointerType === "touch" && owner !== link; });
    link.addEventListener("click", (e) => {
      if (tapOpened) { e.preventDefault(); open(link); } // a second tap follows the link to the glossary
      tapOpened = false;
    });
  }
  tip.addEventListener("mouseenter", () => clearTimeout(closing));
  tip.addEventListener("mouseleave", closeSoon);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && owner) close(); });
}

/** A live Vega view for one figure, drawn off-page and swapped in for its static SVG. */
async function liveView(figure, sel) {
  const spec = structuredClone(figure.vega);
  for (const d of spec.data) {
    if (d.name in data.datasets) d.values = data.datasets[d.name].map((row) => ({ ...row }));
  }
  for (const s of spec.signals || []) {
    for (const k of KEYS) if (s.name === data.signals[k]) s.value = sel[k];
  }
  const holder = document.querySelector(`#${figure.id} .chart`);
  const live = document.createElement("div");
  live.className = "live";
  const runtime = window.vega.parse(spec, null, { ast: true });
  const view = new window.vega.View(runtime, {
    expr: window.vegaExpressionInterpreter,
    renderer: "svg",
    hover: false,
  });
  view.initialize(live);
  fitWidth(view, holder);
  await view.runAsync();
  holder.replaceChildren(live);
  holder.dataset.live = "true";
  return { view, holder };
}

/** Draw at the holder's width (text stays at its set size), but no wider than a printed page's measure
 * (about 680 CSS px), so a figure scaled to the paper keeps legible text whatever screen it was drawn on. */
const printing = window.matchMedia("print");
let paper = false; // between beforeprint and afterprint

function fitWidth(view, holder) {
  const width = paper || printing.matches ? 720 : Math.min(720, Math.max(260, Math.floor(holder.clientWidth)));
  if (width && view.width() !== width) view.width(width);
}

async function start() {
  let sel = selectionFromUrl();
  for (const k of KEYS) selects[k].value = sel[k];
  const views = await Promise.all(data.figures.map((f) => liveView(f, sel)));

  async function show(next, keepUrl = false) {
    sel = next;
    for (const { view } of views) {
      for (const k of KEYS) view.signal(data.signals[k], sel[k]);
    }
    fillTexts(sel);
    if (!keepUrl) selectionToUrl(sel);
    await Promise.all(views.map(({ view }) => view.runAsync()));
    document.documentElement.dataset.shown = KEYS.map((k) => sel[k]).join("|");
  }

  form.addEventListener("change", () => show(currentSelection()));
  form.addEventListener("submit", (event) => event.preventDefault());
  window.addEventListener("hashchange", () => {
    // Links to terms and sources change the fragment too; only a selection in it changes the figures.
    const params = new URLSearchParams(location.hash.slice(1));
    if (!KEYS.some((k) => params.has(k))) return;
    const next = selectionFromUrl();
    for (const k of KEYS) selects[k].value = next[k];
    show(next);
  });
  const refit = () => {
    for (const { view, holder } of views) fitWidth(view, holder);
    return Promise.all(views.map(({ view }) => view.runAsync()));
  };
  const resize = new ResizeObserver(refit);
  for (const { holder } of views) resize.observe(holder);
  // Paper: redraw at the page's measure before printing (a phone's narrow figure would print tall), back after.
  window.addEventListener("beforeprint", () => { paper = true; refit(); });
  window.addEventListener("afterprint", () => { paper = false; refit(); });

  form.hidden = false;
  await show(sel, true);
  window.plate = { views: views.map(({ view }) => view), show, tableRows };
  document.documentElement.dataset.ready = "true";
}

termTips();
start().catch((error) => {
  // The static figures of the default selection stay; say why the controls did not appear.
  readout.textContent = `${readout.textContent} (The interactive figures could not start: ${error.message})`;
  document.documentElement.dataset.ready = "failed";
  throw error;
});
