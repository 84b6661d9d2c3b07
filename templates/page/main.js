// The plate's live figures: the static SVGs of the default are replaced by Vega views that follow the controls.
// The entry of the page script, bundled by esbuild at build time (generator/node/page.mjs) with the plate's page
// modules (docs/plates.md): its model.js evaluates the model, its selection.js and words.js turn the numbers into
// rows and words, as its Python module does for the default. The Vega runtime (window.vega and window.vegaExpressions) is
// run when the first view is made: see views.js vegaRuntime().
import { model } from "./model.js";
import { ALL, CLUSTER_KEYS, KEYS, data, form, readout, selects } from "./data.js";
import { DATASETS, factsOf } from "./selection.js";
import { downloadSelection, selectionCsv } from "./csv.js";
import { fillTexts, texts } from "./texts.js";
import { ownFromUrl, ownRead, ownSelection, ownSliderShown, ownUrlEntries } from "./own.js";
import { currentSelection, extraEntries, sayUnknown, selectionFromUrl, selectionToUrl, unknownInUrl, writeUrl }
  from "./state.js";
import { termTips } from "./tips.js";
import { NEAR, SAME_FRAME_MS, SLICE_MS, afterFrame, afterPaint, byVisibility, distanceFromView, isDefault, nextTask,
  whenIdle } from "./schedule.js";
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
  // The page as built shows the default's texts (render.py writes them; tests/test_engine.py holds them equal to
  // this script's), so the default's facts wait until a view needs them.
  let shown = null;
  if (!isDefault(sel)) fillTexts((shown = factsOf(sel)));
  const current = () => (shown ||= factsOf(sel));
  const views = []; // the views made so far, in the figures' order
  const pending = new Map(); // figure id → the promise of its view, once asked for
  let queue = Promise.resolve(); // views are made one after another, one task each
  let widths = null; // the holders' widths from the one layout read at load, for the views made then

  // On <html>: data-drawn once the figures on screen show the selection, data-shown (and data-own-shown, the
  // reader's own values) once every figure does.
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
  // Which views are on screen, as the observer reports them: a change redraws those first.
  const onScreen = new Map();
  const watch = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      onScreen.set(entry.target, entry.isIntersecting);
      const made = views.find(({ holder }) => holder === entry.target);
      if (entry.isIntersecting && made && catchUp(made)) made.view.runAsync(); // scrolled to before its turn
    }
  });
  /** A view (and its figure's texts) given the selection shown, if it was behind; true when it was. */
  function catchUp(made) {
    if (!shown || made.fed === shown) return false;
    fillTexts(shown);
    feed(made, shown);
    return true;
  }
  const figureId = (made) => made.holder.parentElement.id;
  /** True unless the figure's "in words and numbers" is closed. */
  const wordsOpen = (id) => document.getElementById(`${id}-data`)?.open !== false;
  // Opened before its words caught up with its figure (they wait for idle time): they do so now.
  document.addEventListener("toggle", (event) => {
    if (shown && event.target.matches?.("details.figure-data") && event.target.open) {
      fillTexts(shown, new Set(views.filter((made) => made.fed !== shown).map(figureId)));
    }
  }, true); // toggle does not bubble
  const order = (made) => data.figures.findIndex((fig) => fig.id === figureId(made));

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
        watch.observe(made.holder);
        // The controls moved while the view was drawn: it catches up (the others already show the selection).
        if (made.fed !== current()) {
          feed(made, current());
          await made.view.runAsync();
        }
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
    const f = (shown = factsOf(sel));
    if (!keepUrl) selectionToUrl(sel);
    // The figures on screen first; those out of sight after, one at a time in idle time that has room for it:
    // the reader sees the change sooner, and a figure scrolled to has caught up long before it is reached.
    // A view the observer has not reported on yet (made a moment ago) is placed by its box, read before the texts
    // change the layout: the first change after a scroll drew a view below the screen with those in view.
    const later = views.filter((made) => (onScreen.has(made.holder) ? !onScreen.get(made.holder)
      : distanceFromView({ id: figureId(made) }) > 0));
    const away = new Set(later.map(figureId));
    // The description and table of a figure in view wait with those out of sight while its "in words and
    // numbers" is closed (none of them shows); the readout and the captions change with the figures.
    const closed = views.map(figureId).filter((id) => !away.has(id) && !wordsOpen(id));
    fillTexts(f, away, new Set([...away, ...closed]));
    const seen = views.filter((made) => !later.includes(made));
    for (const made of seen) feed(made, f);
    await Promise.all(seen.map(({ view }) => view.runAsync()));
    if (shown !== f) return; // a newer change took over, and says when it is drawn
    markDrawn();
    // Every view out of sight timed by an earlier change (or none out of sight, only closed words in view): they
    // follow in the next task when they are cheap, else in the tasks after the frame that shows those in view; not
    // in idle time, which a busy page gives late (tens of ms, a wait per view).
    if ((later.length || closed.length) && later.every((made) => made.cost !== undefined)) {
      await catchUpTimed(f, later, closed.length ? away : null);
      return;
    }
    let idle = null; // the idle period in use: the next view goes on in it while it has room
    if (closed.length) {
      idle = await whenIdle(0);
      if (shown !== f) return;
      fillTexts(f, away);
    }
    for (const made of later) {
      if (made.fed === f) continue; // scrolled into sight meanwhile, and drawn then
      const cost = made.cost || 0;
      if (!idle || idle.timeRemaining() < cost) idle = await whenIdle(cost);
      if (shown !== f) return;
      await drawTimed(made);
    }
    await settled(f);
  }

  /** An out-of-sight view given the selection shown and drawn, its cost kept for the next change's schedule. */
  async function drawTimed(made) {
    const begun = performance.now();
    catchUp(made);
    await made.view.runAsync();
    made.cost = performance.now() - begun;
  }

  /** data-shown once every view, changed or not, has drawn f (runAsync waits for a draw still under way). */
  async function settled(f) {
    await Promise.all([...views.map(({ view }) => view.runAsync()), liveAll()]);
    if (shown === f) markShown();
  }

  /** The views out of sight given the selection f in tasks of about SLICE_MS by their last costs (input gets in
   * between), then data-shown; with `away` (their ids), the closed words in view too. They start in the next task
   * when their costs add up to at most SAME_FRAME_MS, else after the next frame. */
  async function catchUpTimed(f, later, away) {
    const cost = later.reduce((sum, made) => sum + (made.fed === f ? 0 : made.cost), 0);
    await (cost <= SAME_FRAME_MS ? nextTask() : afterFrame());
    if (shown !== f) return;
    if (away) fillTexts(f, away);
    let slice = performance.now();
    let ran = false; // a view drawn in this task already
    for (const made of later) {
      if (made.fed === f) continue; // scrolled into sight meanwhile, and drawn then
      if (ran && performance.now() - slice + made.cost > SLICE_MS) {
        await nextTask();
        if (shown !== f) return;
        slice = performance.now();
      }
      ran = true;
      await drawTimed(made);
    }
    await settled(f);
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
    views: [], show, live: liveAll, model, texts, factsOf, datasets: DATASETS, ownRead,
    selectionCsv,
    selection: () => ({ ...sel }),
  };
  // Paper: redraw at the page's measure before printing (a phone's narrow figure would print tall), back after.
  // Figures not yet live print their static SVG, which is exact: they are made at once for any other selection.
  window.addEventListener("beforeprint", () => {
    setPaper(true);
    // Figures out of sight still to catch up with a change do so now: Vega runs them in microtasks, before the
    // print is laid out.
    const behind = views.filter(catchUp);
    refit();
    for (const { view } of behind) view.runAsync();
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
