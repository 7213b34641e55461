// The touch surface (the pad): fingers as PoseAI packets (Touches, TouchState), the pen as its own message,
// and the pad's size ("surface W H"), which the daemon maps the fingers and the pen onto.
// The live view (view.js) draws into a layer it puts first in `pad`, under the finger and pen marks,
// with pointer-events: none, so that every touch still lands on the pad; while it shows the picture,
// touches map onto the picture's rectangle (`mapPoint`), and in its zoom mode none goes to the desktop.
import {send, state} from "./connection.js";
import {$} from "./dom.js";
import {mapPoint, pictureRect, zoomTouch, zooming} from "./view.js";

/** @typedef {"start" | "move" | "end" | "cancel"} TouchKind */
/** @typedef {"move" | "down" | "up" | "away"} PenKind */

export const pad = $("pad");
const SLOTS = 10;
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/** Each slot's browser touch identifier. @type {(number | null)[]} */
const ids = new Array(SLOTS).fill(null);
/** Each slot's position in PoseAI's raw units (0…4094 across the pad). @type {([number, number] | null)[]} */
const pos = new Array(SLOTS).fill(null);
/** Each slot's mark on the pad. @type {(HTMLElement | null)[]} */
const marks = new Array(SLOTS).fill(null);
let penNear = false, penMsg = "", lastSurface = "";
/** @type {HTMLElement | null} */
let penMark = null;
window.tbPacketsSent = 0;
window.tbPenSent = 0;

/** @param {number} r a raw coordinate, 0…4095 @returns {string} its two base-64 digits */
function enc(r) { return B64[r >> 6] + B64[r & 63]; }
/** @param {number} v @param {number} size @returns {number} `v` of `size` in raw units */
function raw(v, size) { return Math.max(0, Math.min(4095, Math.round(v / size * 4094))); }
function touchState() { return pos.map(p => p ? enc(p[0]) + enc(p[1]) : "====").join(""); }
/** @param {string} events */
function packet(events) { if (send(JSON.stringify({Touches: events, TouchState: touchState(), Orientation: 1}))) window.tbPacketsSent += 1; }

/**
 * Tells the daemon the pad's size in CSS pixels, when it changed (or always, when `force`).
 * @param {boolean} [force]
 */
export function surface(force) {
  // The picture's rectangle while the view shows one (the pad itself otherwise).
  const r = pictureRect();
  const s = "surface " + Math.max(10, Math.round(r.w)) + " " + Math.max(10, Math.round(r.h));
  if ((force || s !== lastSurface) && send(s)) lastSurface = s;
}
function heartbeat() {
  // While a finger is down, the full state every 100 ms: lost messages heal, and silence releases.
  if (pos.some(p => p !== null)) send(JSON.stringify({TouchState: touchState()}));
  // A still pen near the glass: its last report again (the daemon takes a silent pen away).
  if (penNear && penMsg) send(penMsg);
}
/**
 * Where a point of the pad is on the monitor (fractions 0…1), moved onto the picture's edge when it is
 * beside it.
 * @param {number} x @param {number} y
 * @returns {[number, number]}
 */
function clampedPoint(x, y) {
  const p = pictureRect();
  const at = mapPoint(Math.max(p.x, Math.min(p.x + p.w, x)), Math.max(p.y, Math.min(p.y + p.h, y)));
  return at || [0, 0];
}
/** @param {number} s @param {number} x @param {number} y */
function mark(s, x, y) {
  let m = marks[s];
  if (!m) { m = marks[s] = document.createElement("div"); m.className = "dotf"; pad.appendChild(m); }
  m.style.left = x + "px"; m.style.top = y + "px";
}
/** @param {number} s */
function unmark(s) { marks[s]?.remove(); marks[s] = null; }
/** @param {number} s */
function forgetSlot(s) { ids[s] = null; pos[s] = null; unmark(s); }

/**
 * @param {TouchEvent} e
 * @param {TouchKind} kind
 */
function onTouch(e, kind) {
  e.preventDefault();
  // Zoom mode: the fingers zoom and move the picture; the desktop gets nothing (those down already were cancelled).
  if (zooming()) { zoomTouch(e); return; }
  const r = pad.getBoundingClientRect();
  let events = "";
  for (const t of e.changedTouches) {
    // A stylus is the pen (Pointer Events, below), never a finger; and while a pen is near or down, a
    // new touch is a palm resting on the glass: ignored for its whole life.
    if (t.touchType === "stylus") continue;
    let s = ids.indexOf(t.identifier);
    if (kind === "start" && s < 0 && penNear) continue;
    const x = t.clientX - r.left, y = t.clientY - r.top;
    const at = mapPoint(x, y);
    // A finger that starts on the bars beside the picture is not the desktop's.
    if (kind === "start" && s < 0 && !at) continue;
    if (kind === "start" && s < 0) { s = ids.indexOf(null); if (s < 0) continue; ids[s] = t.identifier; }
    if (s < 0) continue;
    if (kind === "end" || kind === "cancel") {
      forgetSlot(s);
      events += s + (kind === "end" ? "====" : "=0=0");
    } else {
      // On the picture, or on its edge when the finger slid past it.
      const f = at || clampedPoint(x, y);
      const p = pos[s] = [raw(f[0], 1), raw(f[1], 1)];
      mark(s, x, y);
      events += s + enc(p[0]) + enc(p[1]);
    }
  }
  // Refused as busy: a new touch asks again (the other phone may have gone quiet).
  if (kind === "start" && state() === "busy") surface(true);
  if (events) packet(events);
}
pad.addEventListener("touchstart", e => onTouch(e, "start"), {passive: false});
pad.addEventListener("touchmove", e => onTouch(e, "move"), {passive: false});
pad.addEventListener("touchend", e => onTouch(e, "end"), {passive: false});
pad.addEventListener("touchcancel", e => onTouch(e, "cancel"), {passive: false});

// The pen (Pointer Events, pointerType "pen"): its own message, with pressure, tilt, twist, the barrel
// button (buttons bit 2), the eraser end (bit 32, or button 5) and hover before contact.
function cancelFingers() {
  let events = "";
  for (let s = 0; s < SLOTS; s++) { if (pos[s]) events += s + "=0=0"; forgetSlot(s); }
  if (events) packet(events);
}
/** @param {boolean} on whether a pen is near the glass */
function penSign(on) {
  if (on === penNear) return;
  penNear = on;
  // Palm rejection: fingers already down go.
  if (on) { document.body.dataset.pen = ""; cancelFingers(); }
  else { delete document.body.dataset.pen; penMark?.remove(); penMark = null; }
}
/**
 * @param {PointerEvent} e
 * @param {PenKind} kind
 */
function onPen(e, kind) {
  if (e.pointerType !== "pen") return;
  e.preventDefault();
  if (kind === "away") { if (penNear) send("pen away"); penMsg = ""; penSign(false); return; }
  if (kind === "down") { try { pad.setPointerCapture(e.pointerId); } catch (err) {} }
  const r = pad.getBoundingClientRect();
  const [fx, fy] = clampedPoint(e.clientX - r.left, e.clientY - r.top);
  const touching = kind !== "up" && (e.buttons & 1) === 1;
  const eraser = (e.buttons & 32) !== 0 || e.button === 5;
  const flags = ((e.buttons & 2) ? "b" : "") + (eraser ? "e" : "");
  /** @type {(v: number, lo: number, hi: number) => number} */
  const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, Math.round(v || 0)));
  penMsg = "pen " + (touching ? "touch " : "hover ") + fx.toFixed(4) + " " + fy.toFixed(4) + " "
    + (touching ? Math.max(0, Math.min(1, e.pressure || 0)).toFixed(3) : "0") + " "
    + clamp(e.tiltX, -90, 90) + " " + clamp(e.tiltY, -90, 90) + " " + clamp(e.twist, 0, 359) + " " + (flags || "-");
  penSign(true);
  if (send(penMsg)) { window.tbPenSent += 1; window.tbPenLast = penMsg; }
  if (!penMark) { penMark = document.createElement("div"); penMark.className = "penmark"; pad.appendChild(penMark); }
  penMark.style.left = (e.clientX - r.left) + "px"; penMark.style.top = (e.clientY - r.top) + "px";
  if (touching) penMark.dataset.down = ""; else delete penMark.dataset.down;
}
pad.addEventListener("pointerover", e => onPen(e, "move"));
pad.addEventListener("pointermove", e => onPen(e, "move"));
pad.addEventListener("pointerdown", e => onPen(e, "down"));
pad.addEventListener("pointerup", e => onPen(e, "up"));
pad.addEventListener("pointercancel", e => onPen(e, "away"));
pad.addEventListener("pointerleave", e => onPen(e, "away"));

/**
 * Lets go of everything on the pad: the fingers are cancelled first, so the daemon frees their slots (a
 * finger it cancels while still down otherwise stays cancelled until it lifts), and the pen goes away.
 */
export function releaseTouches() {
  cancelFingers();
  if (penNear) { send("pen away"); penMsg = ""; penSign(false); }
}

/** Forgets the fingers and the pen without a word: the connection is gone, and the daemon let go of them. */
export function forgetTouches() {
  for (let s = 0; s < SLOTS; s++) forgetSlot(s);
  penMsg = ""; penSign(false);
}

setInterval(heartbeat, 100);
window.addEventListener("resize", () => surface());
if (window.ResizeObserver) new ResizeObserver(() => surface()).observe(pad);
