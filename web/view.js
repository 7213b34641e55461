// The live view: the mapped monitor's picture on the pad, in touchscreen, pen and presenter mode (there
// the pad shows what the audience sees, the show's slide from any viewer, and the laser and Draw land on
// the screen where they show on it). The page pulls:
// it asks for a frame ("view W H", its box in device pixels) and asks for the next only once it has
// drawn the last, so at most one frame is in flight and a slow link never builds a queue. The daemon
// sends a frame only when the screen changed. The picture is letterboxed to the monitor's shape; a
// touch on it lands where it shows (surfaces.js maps touches through `mapPoint`), and the pad's
// touches leave the bars alone.
//
// Zoom: the Zoom button on the pad turns zoom mode on: then two fingers pinch and one finger moves
// the picture, and nothing reaches the desktop. Pressing it again leaves zoom mode with the picture as
// zoomed (touches land where they show); pinching back out to the whole picture undoes the zoom.
import {send} from "./connection.js";
import {$} from "./dom.js";

const pad = $("pad");
const canvas = /** @type {HTMLCanvasElement} */ (document.createElement("canvas"));
canvas.id = "view";
canvas.setAttribute("aria-label", "the desktop's screen");
pad.insertBefore(canvas, pad.firstChild);
const note = document.createElement("div");
note.id = "viewNote";
note.className = "viewnote";
note.hidden = true;
pad.appendChild(note);
const zoomButton = document.createElement("button");
zoomButton.id = "zoom";
zoomButton.className = "zoom";
zoomButton.textContent = "Zoom";
zoomButton.setAttribute("aria-pressed", "false");
zoomButton.title = "Zoom mode: pinch with two fingers, move with one; nothing reaches the desktop until you press it again";
zoomButton.hidden = true;
pad.appendChild(zoomButton);
const context = canvas.getContext("2d");

/** Whether the mode shows the picture (touchscreen, pen, presenter). */
let wanted = false;
/** Whether the daemon said it gives no picture ("view none …"): asked again only after a reconnect. */
let refused = false;
/** A frame asked for and not yet drawn. */
let inFlight = false;
/** The monitor's size in its pixels (from the last frame); 0 before one. */
let monitorW = 0, monitorH = 0;
/** The zoom: the factor (1: the whole picture) and the visible part's top-left, as fractions of the picture. */
let zoom = 1, zoomX = 0, zoomY = 0;
let zoomMode = false;
/** The fingers of zoom mode, by identifier: where each is now (client px). @type {Map<number, [number, number]>} */
const zoomFingers = new Map();

window.tbView = {received: 0, frames: 0, bytes: 0, monitor: [0, 0], picture: [0, 0], none: ""};

/** @returns {boolean} whether the picture is shown and touches map onto it */
export function showing() { return wanted && !refused && monitorW > 0; }

/** @returns {boolean} whether zoom mode takes the pad's touches (none reaches the desktop) */
export function zooming() { return showing() && zoomMode; }

/**
 * The picture's rectangle in the pad (CSS px, relative to the pad's top-left): the monitor's shape,
 * as large as fits, centred.
 * @returns {{x: number, y: number, w: number, h: number}}
 */
export function pictureRect() {
  const r = pad.getBoundingClientRect();
  if (!showing()) return {x: 0, y: 0, w: r.width, h: r.height};
  const s = Math.min(r.width / monitorW, r.height / monitorH);
  const w = monitorW * s, h = monitorH * s;
  return {x: (r.width - w) / 2, y: (r.height - h) / 2, w, h};
}

/**
 * Where a point of the pad (CSS px from the pad's top-left) is on the monitor, as fractions 0…1 of it
 * (through the zoom); null for a point outside the picture.
 * @param {number} x @param {number} y
 * @returns {[number, number] | null}
 */
export function mapPoint(x, y) {
  const p = pictureRect();
  const fx = (x - p.x) / p.w, fy = (y - p.y) / p.h;
  if (fx < 0 || fx > 1 || fy < 0 || fy > 1) return null;
  if (!showing()) return [fx, fy];
  return [zoomX + fx / zoom, zoomY + fy / zoom];
}

/** Asks for the next frame: the picture's box in device pixels (finer when zoomed). */
function ask() {
  if (!wanted || refused || inFlight || document.hidden) return;
  const r = pad.getBoundingClientRect(), k = (window.devicePixelRatio || 1) * zoom;
  if (send("view " + Math.max(1, Math.round(r.width * k)) + " " + Math.max(1, Math.round(r.height * k)))) inFlight = true;
}

/** Places the canvas over the picture's rectangle, the zoom applied. */
function layout() {
  const on = showing();
  canvas.style.display = on ? "block" : "none";
  zoomButton.hidden = !on;
  pad.classList.toggle("viewing", on);
  if (!on) return;
  const p = pictureRect();
  canvas.style.left = p.x + "px"; canvas.style.top = p.y + "px";
  canvas.style.width = p.w + "px"; canvas.style.height = p.h + "px";
  // The visible part of the picture fills the rectangle: scale by the zoom about the top-left, moved back.
  canvas.style.transformOrigin = "0 0";
  canvas.style.transform = zoom === 1 ? "" : "scale(" + zoom + ") translate(" + (-zoomX * p.w) + "px," + (-zoomY * p.h) + "px)";
  zoomButton.textContent = zoom === 1 ? "Zoom" : "Zoom ×" + zoom.toFixed(1);
}

/**
 * The mode the daemon said: the picture in touchscreen, pen and presenter mode, the plain pad in
 * touchpad mode.
 * @param {string} mode
 * @param {() => void} changed called when the picture came or went (the surface's size changes)
 */
export function viewMode(mode, changed) {
  const want = mode === "touchscreen" || mode === "pen" || mode === "presenter";
  if (want === wanted) { ask(); return; }
  wanted = want;
  if (!want) { send("view off"); inFlight = false; setZoomMode(false); }
  layout(); changed(); ask();
}

/**
 * A line of the daemon about the view ("view none WHY: …"): no picture; the page says why.
 * @param {string} line
 * @param {() => void} changed
 */
export function viewSaid(line, changed) {
  if (!line.startsWith("view none ")) return;
  inFlight = false;
  const why = line.slice(10);
  window.tbView.none = why;
  // Another phone's session: try again with the next mode line; the rest stays until a reconnect.
  if (why.startsWith("busy")) return;
  refused = true;
  note.textContent = "no picture: " + why.slice(why.indexOf(":") + 1).trim();
  note.hidden = !wanted;
  layout(); changed();
}

/**
 * A frame (`ViewFrame`: "V", 1, the monitor's and the picture's sizes, then the JPEG): drawn, then the
 * next asked for.
 * @param {ArrayBuffer} data
 * @param {() => void} changed
 */
export async function viewFrame(data, changed) {
  const bytes = new Uint8Array(data);
  window.tbView.received += 1;
  if (bytes.length <= 10 || bytes[0] !== 0x56 || bytes[1] !== 1) { inFlight = false; return; }
  /** @param {number} i */
  const u16 = i => bytes[i] << 8 | bytes[i + 1];
  const mw = u16(2), mh = u16(4), pw = u16(6), ph = u16(8);
  let image;
  try { image = await createImageBitmap(new Blob([bytes.subarray(10)], {type: "image/jpeg"})); }
  catch (e) { inFlight = false; ask(); return; }
  if (!wanted) { image.close(); inFlight = false; return; }
  const shape = mw !== monitorW || mh !== monitorH;
  monitorW = mw; monitorH = mh;
  if (canvas.width !== pw || canvas.height !== ph) { canvas.width = pw; canvas.height = ph; }
  context?.drawImage(image, 0, 0, pw, ph);
  image.close();
  window.tbView.frames += 1; window.tbView.bytes += bytes.length;
  window.tbView.monitor = [mw, mh]; window.tbView.picture = [pw, ph];
  note.hidden = true;
  if (shape) { layout(); changed(); }
  inFlight = false;
  // Shown: the next one (the browser paints this one first).
  requestAnimationFrame(ask);
}

/** The connection is gone: nothing in flight, the daemon may give a picture again. */
export function viewClosed() {
  inFlight = false; refused = false; monitorW = 0; monitorH = 0; wanted = false;
  note.hidden = true; setZoomMode(false); layout();
}

/** @param {boolean} on */
function setZoomMode(on) {
  zoomMode = on; zoomFingers.clear();
  zoomButton.setAttribute("aria-pressed", String(on));
  pad.classList.toggle("zoommode", on);
}
zoomButton.addEventListener("click", e => { e.stopPropagation(); setZoomMode(!zoomMode); });
for (const kind of ["touchstart", "touchend", "touchmove", "pointerdown"]) {
  // The button is on the pad: its touches are the button's, not the desktop's.
  zoomButton.addEventListener(kind, e => e.stopPropagation(), {passive: true});
}

/**
 * A touch of the pad in zoom mode (surfaces.js hands them here and sends nothing): one finger moves
 * the visible part, two pinch.
 * @param {TouchEvent} e
 */
export function zoomTouch(e) {
  const before = [...zoomFingers.values()];
  for (const t of e.changedTouches) {
    if (e.type === "touchend" || e.type === "touchcancel") zoomFingers.delete(t.identifier);
    else zoomFingers.set(t.identifier, [t.clientX, t.clientY]);
  }
  const after = [...zoomFingers.values()];
  if (e.type !== "touchmove" || before.length !== after.length || after.length === 0) return;
  const p = pictureRect();
  /** @param {[number, number][]} f @returns {[number, number, number]} the centre and the spread */
  const measure = f => {
    const cx = f.reduce((s, q) => s + q[0], 0) / f.length, cy = f.reduce((s, q) => s + q[1], 0) / f.length;
    return [cx, cy, f.length > 1 ? Math.hypot(f[0][0] - f[1][0], f[0][1] - f[1][1]) : 0];
  };
  const [x0, y0, d0] = measure(before), [x1, y1, d1] = measure(after);
  const z = d0 > 0 && d1 > 0 ? Math.max(1, Math.min(8, zoom * d1 / d0)) : zoom;
  // The picture's point under the old centre stays under the new one.
  const r = pad.getBoundingClientRect();
  const ux = zoomX + (x0 - r.left - p.x) / p.w / zoom, uy = zoomY + (y0 - r.top - p.y) / p.h / zoom;
  zoom = z;
  zoomX = Math.max(0, Math.min(1 - 1 / z, ux - (x1 - r.left - p.x) / p.w / z));
  zoomY = Math.max(0, Math.min(1 - 1 / z, uy - (y1 - r.top - p.y) / p.h / z));
  if (zoom === 1) { zoomX = 0; zoomY = 0; }
  window.tbView.zoom = [zoom, zoomX, zoomY];
  layout();
}

document.addEventListener("visibilitychange", () => {
  if (document.hidden) { if (wanted && !refused) send("view off"); inFlight = false; } else ask();
});
/** The pad's size changed: the picture placed again, and a frame of the new size asked for. */
function resized() { layout(); inFlight = false; ask(); }
window.addEventListener("resize", resized);
// The pad also changes size without the window: in Slides mode the panel below it grows when Impress's
// slides and notes come. The picture must follow it, or it would show where touches do not land.
if (window.ResizeObserver) new ResizeObserver(resized).observe(pad);
