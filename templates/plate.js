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

function fitWidth(view, holder) {
  const width = Math.max(260, Math.floor(holder.clientWidth));
  if (width && view.width() !== width) view.width(width);
}

async function start() {
  let sel = selectionFromUrl();
  for (const k of KEYS) selects[k].value = sel[k];
  const views = await Promise.all(data.figures.map((f) => liveView(f, sel)));

  async function show(next) {
    sel = next;
    for (const { view } of views) {
      for (const k of KEYS) view.signal(data.signals[k], sel[k]);
    }
    const t = texts(sel);
    readout.textContent = t.readout;
    for (const el of document.querySelectorAll("figcaption [data-selection]")) el.textContent = t.caption;
    selectionToUrl(sel);
    await Promise.all(views.map(({ view }) => view.runAsync()));
    document.documentElement.dataset.shown = KEYS.map((k) => sel[k]).join("|");
  }

  form.addEventListener("change", () => show(currentSelection()));
  form.addEventListener("submit", (event) => event.preventDefault());
  window.addEventListener("hashchange", () => {
    const next = selectionFromUrl();
    for (const k of KEYS) selects[k].value = next[k];
    show(next);
  });
  const resize = new ResizeObserver(() => {
    for (const { view, holder } of views) fitWidth(view, holder);
    Promise.all(views.map(({ view }) => view.runAsync()));
  });
  for (const { holder } of views) resize.observe(holder);

  form.hidden = false;
  await show(sel);
  window.plate = { views: views.map(({ view }) => view), show };
  document.documentElement.dataset.ready = "true";
}

start().catch((error) => {
  // The static figures of the default selection stay; say why the controls did not appear.
  readout.textContent = `${readout.textContent} (The interactive figures could not start: ${error.message})`;
  document.documentElement.dataset.ready = "failed";
  throw error;
});
