// When views are made and redrawn: after the first paint, in idle time, nearest the viewport first.
import { ALL, data } from "./data.js";
import { ownUrlEntries } from "./own.js";

/** After the first paint, in idle time: the static SVGs stay the first thing drawn. When the browser has painted
 * already (it often has by the time this module runs), the next task will do. */
export function afterPaint() {
  if (performance.getEntriesByType("paint").length) return nextTask();
  return new Promise((resolve) => {
    requestAnimationFrame(() => setTimeout(() => {
      if (window.requestIdleCallback) requestIdleCallback(() => resolve(), { timeout: 300 });
      else resolve();
    }, 0));
  });
}

/** End this task and go on in a new one soon (before idle time), so no single task blocks input for long. */
export function nextTask() {
  if (window.scheduler && typeof window.scheduler.yield === "function") return window.scheduler.yield();
  return new Promise((resolve) => { setTimeout(resolve, 0); });
}

/** How far a figure is from the viewport, in CSS px (0 when any of it is in view). */
export function distanceFromView(fig) {
  const box = document.getElementById(fig.id).getBoundingClientRect();
  return box.bottom < 0 ? -box.bottom : Math.max(0, box.top - window.innerHeight);
}

/** Figures nearest the viewport first: the one the reader sees goes live first. */
export function byVisibility(figures) {
  const distance = new Map(figures.map((fig) => [fig, distanceFromView(fig)]));
  return [...figures].sort((a, b) => distance.get(a) - distance.get(b));
}

// A figure goes live when it comes within half a viewport of the screen: soon enough that the reader scrolls onto a
// live view, late enough that figures far down the page cost nothing at load.
export const NEAR = 0.5;

/** True when sel is the plate's default: the static SVGs show exactly that, so its figures need no view yet. */
export function isDefault(sel) {
  return ALL.every((k) => sel[k] === data.default[k]) && ownUrlEntries(sel).length === 0;
}
