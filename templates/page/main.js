// The plate's live figures: the static SVGs of the default are replaced by Vega views that follow the controls.
// The entry of the page script, bundled by esbuild at build time (generator/node/page.mjs) with the plate's page
// modules (docs/plates.md): its model.js evaluates the model, its selection.js and words.js turn the numbers into
// rows and words, as its Python module does for the default. The Vega runtime (window.vega and window.vegaExpressions) is
// run when the first view is made: see views.js vegaRuntime().
import { model } from "./model.js";
import { ALL, CLUSTER_KEYS, KEYS, data, form, readout, selects } from "./data.js";
import { DATASETS, factsOf } from "./selection.js";
import { downloadSelection, selectionCsv } from "./csv.js";
import { carryLinks, fillTexts, texts } from "./texts.js";
import { ownFromUrl, ownRead, ownSelection, ownSliderShown, ownUrlEntries } from "./own.js";
import { currentSelection, extraEntries, sayUnknown, selectionFromUrl, selectionToUrl, unknownInUrl, writeUrl }
  from "./state.js";
import { termTips } from "./tips.js";
import { NEAR, afterPaint, byVisibility, distanceFromView, isDefault, nextTask } from "./schedule.js";
import { feed, fitWidth, liveView, setPaper } from "./views.js";

// The disclosure of the other controls and the workshop's assumptions: closed on screen where scripts run (plate.css,
// from the first paint), opened and closed by its button.
const moreToggle = document.getElementById("more-toggle");
function showMore(open) {
  form.classList.toggle("more-open", open);
  moreToggle.setAttribute("aria-expanded", String(open));
}
if (moreToggle) {
  showMore(false);
  moreToggle.addEventListener("click", () => showMore(!form.classList.contains("more-open")));
}

async function start() {
  let sel = selectionFromUrl();
  for (const k of ALL) if (selects[k]) selects[k].value = sel[k];
  // A link that chose one of the disclosure's controls otherwise than the default opens it: the choice is in sight.
  if (moreToggle && ALL.some((k) => sel[k] !== data.default[k] && selects[k]?.closest("#more"))) showMore(true);
  sel = ownFromUrl(sel);
  const unknown = unknownInUrl();
  if (unknown.length) { // the page says so, and the URL says what it shows
    sayUnknown(unknown);
    selectionToUrl(sel);
    writeUrl();
  }
  carryLinks(sel); // links to other plates carry the choices they read
  // The page as built shows the default's texts (render.py writes them; tests/test_engine.py holds them equal to
  // this script's), so the default's facts wait until a view needs them.
  let shown = null;
  if (!isDefault(sel)) fillTexts((shown = factsOf(sel)));
  const current = () => (shown ||= factsOf(sel));
  const views = []; // the views made so far, in the figures' order
  const pending = new Map(); // figure id → the promise of its view, once asked for
  let queue = Promise.resolve(); // views are made one after another, one task each
  let widths = null; // the holders' widths from the one layout read at load, for the views made then

  // On <html>: data-drawn once the figures in sight show the selection, data-shown (and data-own-shown, the
  // reader's own values) once every figure and word does (those out of sight wait for the reader: below).
  const markDrawn = () => {
    const own = extraEntries(sel).map(([k, v]) => `${k}=${v}`).join("&");
    document.documentElement.dataset.drawn = `${KEYS.map((k) => sel[k]).join("|")}${own ? `&${own}` : ""}`;
  };
  const markShown = () => {
    markDrawn();
    // render.selection_key: the keys, then the real cluster's choices that are not DDP's defaults
    document.documentElement.dataset.shown = [KEYS.map((k) => sel[k]).join("|"),
      ...CLUSTER_KEYS.filter((k) => sel[k] !== data.default[k]).map((k) => `${k}=${sel[k]}`)].join("&");
    document.documentElement.dataset.ownShown = ownUrlEntries(sel).map(([k, v]) => `${k}=${v}`).join("&");
  };

  const refit = () => Promise.all(views.filter((made) => fitWidth(made))
    .map(({ view }) => view.runAsync())); // only views whose width changed redraw
  const resize = new ResizeObserver(refit);
  const figureId = (made) => made.holder.parentElement.id;
  const viewOf = (id) => views.find((made) => figureId(made) === id);
  const order = (made) => data.figures.findIndex((fig) => fig.id === figureId(made));

  // What a change leaves for later: a figure out of sight (its view, title, caption and description) until it nears
  // the screen, and the table of a closed "in words and numbers" until it is opened; printing brings all of it. Only
  // what the reader can see is updated at once, and nothing stale is ever in sight or on paper.
  const waiting = { figures: new Set(), tables: new Set() };
  const tablesWaiting = () => new Set([...waiting.figures, ...waiting.tables]);
  /** The figure's texts and view brought to the selection shown, if they wait; the promise of its view's run. */
  function bringFigure(id) {
    if (!waiting.figures.delete(id)) return null;
    fillTexts(shown, waiting.figures, tablesWaiting());
    const made = viewOf(id);
    if (made && made.fed !== shown) feed(made, shown);
    const run = made ? made.view.runAsync() : Promise.resolve();
    run.then(whenCurrent);
    revealSoon(); // its texts may have moved what lies below it
    return run;
  }
  /** A table whose "in words and numbers" opens, written for the selection shown before it is painted. */
  function bringTable(id) {
    if (!waiting.tables.delete(id)) return;
    fillTexts(shown, waiting.figures, tablesWaiting());
    whenCurrent();
  }
  /** Everything brought to the selection shown (for print, and window.plate.current()); resolves once data-shown. */
  function bringAll() {
    if (!shown) return Promise.resolve(); // nothing changed since the page as built, which shows the default
    for (const id of data.figures.map((fig) => fig.id)) waiting.tables.delete(id);
    const runs = [...waiting.figures].map(bringFigure);
    fillTexts(shown, waiting.figures, tablesWaiting());
    return Promise.all(runs).then(() => settled(shown));
  }
  /** data-shown once nothing waits and every view has drawn the selection shown. */
  function whenCurrent() {
    if (shown && !waiting.figures.size && !waiting.tables.size) settled(shown);
  }
  const inSight = (id, margin = 0) => distanceFromView({ id }) <= margin;
  /** The figures that wait and now lie in sight, brought at once: called where the browser is about to paint after
   * a scroll or a resize, or in the frame after texts or a disclosure moved them (a shorter readout, the other
   * controls closed), so none is ever painted stale. */
  function reveal() {
    revealing = false;
    for (const id of [...waiting.figures]) if (inSight(id)) bringFigure(id);
  }
  let revealing = false;
  /** reveal() in the next frame's animation callbacks: before its layout and paint, and with nothing else to change
   * after them, the layout it reads is the one the frame would make anyway. */
  const revealSoon = () => {
    if (!revealing && waiting.figures.size) requestAnimationFrame(reveal);
    revealing = waiting.figures.size > 0;
  };
  addEventListener("scroll", reveal, { passive: true }); // scroll events come before the frame's paint
  addEventListener("resize", reveal);
  moreToggle?.addEventListener("click", revealSoon); // after showMore's: closed, the controls lift the figures
  // Ahead of the reader: a figure that waits comes within half a screen of it.
  const approach = new IntersectionObserver((entries) => {
    for (const entry of entries) if (entry.isIntersecting) bringFigure(entry.target.id);
  }, { rootMargin: `${NEAR * 100}% 0px` });
  for (const fig of data.figures) approach.observe(document.getElementById(fig.id));
  // An "in words and numbers" opened (by the reader, a script, or find in page): its table is written before the
  // frame paints it (a MutationObserver's callback runs before the browser renders again).
  // Each one is watched alone, not the page's subtree: a change's many attribute writes in the figures' SVG then
  // never meet the observer.
  const opened = new MutationObserver((records) => {
    for (const { target } of records) if (target.open) bringTable(target.id.replace(/-data$/, ""));
    revealSoon(); // one closed: what lay below it moved up
  });
  for (const details of document.querySelectorAll("details.figure-data")) {
    opened.observe(details, { attributes: true, attributeFilter: ["open"] });
  }
  // A reader's focus entering a figure (a screen reader moving through the page, say) brings it.
  document.addEventListener("focusin", (event) => {
    const fig = event.target.closest?.("figure.figure, details.figure-data");
    if (fig) bringFigure(fig.id.replace(/-data$/, ""));
  });
  const tableOpen = (id) => document.getElementById(`${id}-data`)?.open !== false;

  /** The figure's live view, made once (after the views asked for before it), following the selection. */
  function makeLive(figure) {
    if (!pending.has(figure.id)) {
      const first = pending.size === 0;
      queue = queue.then(async () => {
        if (!first) await nextTask(); // one task per view: input and paint get in between
        const made = await liveView(figure, current, widths ? widths.get(figure.id) : undefined);
        views.push(made);
        views.sort((a, b) => order(a) - order(b));
        window.plate.views = views.map(({ view }) => view);
        resize.observe(made.holder);
        // The controls moved while the view was drawn: it catches up (the others already show the selection).
        if (made.fed !== current()) {
          feed(made, current());
          await made.view.runAsync();
        }
        if (waiting.figures.has(figure.id) && inSight(figure.id, NEAR * window.innerHeight)) bringFigure(figure.id);
        else whenCurrent();
      });
      queue.catch(failed); // a view made after load (scrolled to) fails as one made at load does
      pending.set(figure.id, queue);
    }
    return pending.get(figure.id);
  }

  /** Every figure live, the nearest first: once the selection is not the default, no static SVG shows it. */
  async function liveAll() {
    const left = data.figures.filter((fig) => !pending.has(fig.id));
    // Ordered only while some are left: measuring where the figures are lays the page out, at every change.
    if (left.length) byVisibility(left).forEach(makeLive);
    await Promise.all(data.figures.map((fig) => pending.get(fig.id)));
    await Promise.all(views.map(({ view }) => view.runAsync()));
  }

  async function show(next, keepUrl = false) {
    sel = { ...data.default, ...next }; // a partial selection keeps the workshop's other choices
    carryLinks(sel);
    // Where the figures lie, read before the texts change the layout (one layout, clean at a change).
    const away = new Set(data.figures.map((fig) => fig.id).filter((id) => !inSight(id)));
    const f = (shown = factsOf(sel));
    if (!keepUrl) selectionToUrl(sel);
    // The figures in sight now: their views, titles, captions and descriptions (a chart's accessible description,
    // read even while its "in words and numbers" is closed), and the readout. The others wait for the reader: out
    // of sight until they near the screen, each closed table until it is opened.
    waiting.figures = away;
    waiting.tables = new Set(data.figures.map((fig) => fig.id).filter((id) => !tableOpen(id)));
    fillTexts(f, away, tablesWaiting());
    const seen = views.filter((made) => !away.has(figureId(made)));
    for (const made of seen) feed(made, f);
    await Promise.all(seen.map(({ view }) => view.runAsync()));
    if (shown !== f) return; // a newer change took over, and says when it is drawn
    markDrawn();
    revealSoon(); // the new texts may have lifted a figure that waits into sight
    // A figure still static shows the default: every one is made live (once), drawn with the selection shown.
    if (views.length < data.figures.length) await liveAll();
    if (shown === f) whenCurrent();
  }

  /** data-shown once every view, changed or not, has drawn f (runAsync waits for a draw still under way). */
  async function settled(f) {
    await Promise.all(views.map(({ view }) => view.runAsync()));
    if (shown === f && !waiting.figures.size && !waiting.tables.size) markShown();
  }

  form.addEventListener("change", () => {
    sayUnknown([]); // the reader chose: what the link named no longer matters
    const next = ownSelection(currentSelection()); // null while a free input that counts is not a good value
    if (next) show(next);
  });
  form.addEventListener("input", ownSliderShown);
  const saving = document.getElementById("download-selection");
  if (saving) {
    saving.addEventListener("click", () => downloadSelection(current()));
    saving.parentElement.hidden = false;
  }
  form.addEventListener("submit", (event) => event.preventDefault());
  // A reader reaching for a control is about to change the figures: make them now, not on the change.
  for (const intent of ["focusin", "pointerdown"]) form.addEventListener(intent, () => liveAll(), { once: true });
  window.addEventListener("hashchange", () => {
    // Links to terms and sources change the fragment too; only a selection in it changes the figures.
    const params = new URLSearchParams(location.hash.slice(1));
    if (!ALL.some((k) => params.has(k))) return;
    const next = selectionFromUrl();
    for (const k of ALL) if (selects[k]) selects[k].value = next[k];
    const unknown = unknownInUrl();
    sayUnknown(unknown);
    show(ownFromUrl(next));
    if (unknown.length) writeUrl(); // show() gave it the selection shown
  });
  window.plate = {
    // show: a selection shown, then every figure and word brought to it, as for print (the page's own changes leave
    // what is out of sight for later); current: that for the selection shown; both resolve once data-shown.
    views: [], show: (next) => show(next).then(bringAll), current: bringAll, live: liveAll, model, texts, factsOf,
    datasets: DATASETS, ownRead, selectionCsv,
    selection: () => ({ ...sel }),
  };
  // Paper: redraw at the page's measure before printing (a phone's narrow figure would print tall), back after.
  // Figures not yet live print their static SVG, which is exact: they are made at once for any other selection.
  window.addEventListener("beforeprint", () => {
    setPaper(true);
    // Figures out of sight and closed tables still to catch up with a change do so now: Vega runs them in
    // microtasks, before the print is laid out.
    bringAll();
    refit();
  });
  window.addEventListener("afterprint", () => { setPaper(false); refit(); });

  // Which figures go live now: for the default, only those near the screen (the static SVGs show the default
  // exactly); for any other selection, all. Reading where they lie lays the page out, as its first paint must.
  const margin = NEAR * window.innerHeight;
  const now = isDefault(sel) ? data.figures.filter((fig) => distanceFromView(fig) <= margin) : data.figures;
  const near = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      near.unobserve(entry.target);
      makeLive(data.figures.find((fig) => fig.id === entry.target.id));
    }
  }, { rootMargin: `${NEAR * 100}% 0px` });
  for (const fig of data.figures) if (!now.includes(fig)) near.observe(document.getElementById(fig.id));
  if (now.length) {
    await afterPaint(); // the static SVGs are painted first
    // One layout read for all the figures (they share the column's width); a resize later refits them.
    widths = new Map(now.map((fig) => [fig.id, document.querySelector(`#${fig.id} .chart`).clientWidth]));
    await Promise.all(byVisibility(now).map(makeLive));
    widths = null; // views made later measure their holder then
  }
  markShown();
  document.documentElement.dataset.ready = "true";
}

/** The static figures of the default selection stay; say why the controls did not appear. */
function failed(error) {
  if (document.documentElement.dataset.ready === "failed") return; // said once
  readout.append(Object.assign(document.createElement("p"), {
    textContent: `(The interactive figures could not start: ${error.message})`,
  }));
  document.documentElement.dataset.ready = "failed";
  form.classList.add("failed"); // controls that cannot work go; the assumptions stay
  const saving = document.querySelector(".download-selection");
  if (saving) saving.hidden = true;
}

termTips();
start().catch((error) => {
  failed(error);
  throw error;
});
