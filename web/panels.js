// The panels around the pad: the mode buttons, the Slides panel (presenter buttons, the laser, the talk's
// timer, the screen kept awake), the Keys sheet (sticky modifiers, keys, clicks), the Settings sheet
// (live settings for this phone) and fullscreen.
import {say, send} from "./connection.js";
import {$, buttons, buzz, element} from "./dom.js";
import {newLine} from "./keyboard.js";

let mode = "";

/**
 * Shows the mode the daemon is in ("mode NAME"): the pressed button, the panel, the pad's hint.
 * @param {string} m
 */
export function showMode(m) {
  mode = m; document.body.dataset.view = m;
  for (const b of buttons(".modes button")) b.setAttribute("aria-pressed", String(b.dataset.mode === m));
  if (m !== "presenter") laser(false);
  $("hint").textContent = m === "presenter" ? "tap: next · swipe: next or previous · hold Laser to point"
    : m === "touchscreen" ? "the pad is the screen" : m === "pen" ? "the pad is the screen for the pen · fingers do nothing"
    : "one finger moves · two scroll";
  wake();
}
for (const b of buttons(".modes button")) b.addEventListener("click", () => send("mode " + b.dataset.mode));

/**
 * Shows which person this phone is when several drive the desktop at once ("person N #rrggbb"): the
 * badge in the header, in the colour the desktop's overlay draws this person's touches, laser and
 * strokes in. Anything else said there hides it.
 * @param {string} said
 */
export function showPerson(said) {
  const badge = $("person");
  const m = /^(\d{1,2}) (#[0-9a-f]{6})$/.exec(said);
  if (!m) { forgetPerson(); return; }
  badge.textContent = "person " + m[1];
  badge.style.setProperty("--person", m[2]);
  badge.setAttribute("aria-label", "you are person " + m[1] + " on the desktop");
  badge.hidden = false;
}

/** The connection closed: the place is given up, and the next one may differ. */
export function forgetPerson() { $("person").hidden = true; }

/**
 * Opens or closes `sheet`; opening one closes the other.
 * @param {HTMLElement} button
 * @param {HTMLElement} sheet
 * @param {{button: HTMLElement, sheet: HTMLElement}} other
 */
function toggleSheet(button, sheet, other) {
  const open = sheet.hidden;
  sheet.hidden = !open; button.setAttribute("aria-expanded", String(open));
  if (open) { other.sheet.hidden = true; other.button.setAttribute("aria-expanded", "false"); }
}
const keysToggle = $("keysToggle"), keys = $("keys"), settingsToggle = $("settingsToggle"), settingsSheet = $("settings");
keysToggle.addEventListener("click", () => toggleSheet(keysToggle, keys, {button: settingsToggle, sheet: settingsSheet}));
settingsToggle.addEventListener("click", () => toggleSheet(settingsToggle, settingsSheet, {button: keysToggle, sheet: keys}));

// Sticky modifiers: they apply to the next key or click, then let go.
const sticky = () => buttons(".sticky[aria-pressed=true]").map(b => b.dataset.mod || "");
function unstick() { for (const b of buttons(".sticky")) b.setAttribute("aria-pressed", "false"); }
for (const b of buttons(".sticky")) b.addEventListener("click", () => {
  b.setAttribute("aria-pressed", String(b.getAttribute("aria-pressed") !== "true")); buzz();
});
/**
 * Presses a key or a chord ("ctrl+c"), with the sticky modifiers; at most 4 keys.
 * @param {string} name
 */
function sendKey(name) {
  /** @type {string[]} */
  const chord = [];
  for (const k of sticky().concat(name.split("+"))) if (!chord.includes(k)) chord.push(k);
  send("key " + chord.slice(-4).join("+")); unstick(); buzz(); newLine();
}
/** @param {string} button "left" or "right" */
function click(button) {
  const mods = sticky();
  send("click " + button + (mods.length ? " " + mods.join("+") : "")); unstick(); buzz(); newLine();
}
const fkeys = $("fkeys");
for (let i = 1; i <= 12; i++) { const b = document.createElement("button"); b.dataset.key = "F" + i; b.textContent = "F" + i; fkeys.appendChild(b); }
for (const b of buttons("[data-key]")) b.addEventListener("click", () => sendKey(b.dataset.key || ""));
for (const b of buttons("[data-click]")) b.addEventListener("click", () => click(b.dataset.click || "left"));
$("left").addEventListener("click", () => click("left"));
$("right").addEventListener("click", () => click("right"));

// The Slides panel.
for (const [id, action] of [["next", "next"], ["previous", "previous"], ["blank", "blank"], ["startShow", "start"], ["endShow", "end"], ["draw", "draw"], ["clear", "clear"]]) {
  $(id).addEventListener("click", () => { send("slide " + action); buzz(); });
}
/** @param {boolean} on whether the daemon draws on the slides ("drawing on", "drawing off") */
export function showDrawing(on) { $("draw").setAttribute("aria-pressed", String(on)); }

const laserButton = $("laser");
let laserHeld = false;
/** @param {boolean} on the laser pointer held (while the button is) */
export function laser(on) {
  if (on === laserHeld) return;
  laserHeld = on; laserButton.setAttribute("aria-pressed", String(on));
  send(on ? "slide laser-on" : "slide laser-off");
  if (on) buzz();
}
/** Forgets the laser without a word: the connection is gone, and the daemon let go of it. */
export function forgetLaser() { laserHeld = false; laserButton.setAttribute("aria-pressed", "false"); }
laserButton.style.touchAction = "none";
laserButton.addEventListener("pointerdown", e => { e.preventDefault(); laser(true); });
for (const ev of ["pointerup", "pointercancel", "lostpointercapture"]) laserButton.addEventListener(ev, () => laser(false));
laserButton.addEventListener("contextmenu", e => e.preventDefault());
laserButton.addEventListener("keydown", e => { if (e.key === " " || e.key === "Enter") { e.preventDefault(); laser(true); } });
laserButton.addEventListener("keyup", e => { if (e.key === " " || e.key === "Enter") laser(false); });

// The talk's timer: the page's own, from Start timer, paused and reset by hand.
const elapsed = $("elapsed"), timerRun = $("timerRun");
let elapsedMs = 0;
/** @type {number | null} */
let runningSince = null;
/** @type {number | undefined} */
let ticker;
function showElapsed() {
  const total = Math.floor((elapsedMs + (runningSince === null ? 0 : performance.now() - runningSince)) / 1000);
  const h = Math.floor(total / 3600), m = Math.floor(total / 60) % 60, s = total % 60;
  elapsed.textContent = (h ? h + ":" + String(m).padStart(2, "0") : m) + ":" + String(s).padStart(2, "0");
}
timerRun.addEventListener("click", () => {
  if (runningSince === null) { runningSince = performance.now(); ticker = setInterval(showElapsed, 1000); timerRun.textContent = "Pause timer"; }
  else { elapsedMs += performance.now() - runningSince; runningSince = null; clearInterval(ticker); timerRun.textContent = "Start timer"; }
  showElapsed(); buzz();
});
$("timerReset").addEventListener("click", () => {
  elapsedMs = 0; if (runningSince !== null) runningSince = performance.now(); showElapsed(); buzz();
});

// Keep the screen awake in Slides mode (Screen Wake Lock: HTTPS only); where not allowed, say so once.
/** @type {WakeLockSentinel | null} */
let wakeLock = null;
let wakeSaid = false;
/** @param {string} text */
function wakeNote(text) {
  window.tbWake = "refused"; if (wakeSaid) return; wakeSaid = true;
  const note = $("wakeNote"); note.textContent = text; note.hidden = false;
}
/** Holds the screen awake while the page shows Slides, and lets go otherwise. */
export async function wake() {
  if (mode !== "presenter" || document.hidden) { if (wakeLock) { wakeLock.release().catch(() => {}); wakeLock = null; } return; }
  if (wakeLock) return;
  if (!("wakeLock" in navigator)) { wakeNote("The screen may turn off during the talk: keeping it awake needs the page over HTTPS (touchbridge --tls-cert)."); return; }
  try { wakeLock = await navigator.wakeLock.request("screen"); window.tbWake = "held"; wakeLock.addEventListener("release", () => { wakeLock = null; }); }
  catch (e) { wakeNote("The screen may turn off during the talk: this browser did not allow keeping it awake (" + (e instanceof Error ? e.name : String(e)) + ")."); }
}

// Fullscreen.
const fullscreen = $("fullscreen");
fullscreen.addEventListener("click", () => {
  if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
  else if (document.documentElement.requestFullscreen) document.documentElement.requestFullscreen().catch(e => { say("fullscreen refused: " + e.message); });
  else say("this browser has no fullscreen; Add to Home Screen opens touchbridge as an app");
});
document.addEventListener("fullscreenchange", () => fullscreen.setAttribute("aria-pressed", String(!!document.fullscreenElement)));

// Live settings: sent as commands, kept in local storage, sent again on each connection.
/** @typedef {string | boolean} SettingValue */
/**
 * One of the Settings sheet's controls.
 * @typedef {object} Control
 * @property {HTMLInputElement} el
 * @property {() => SettingValue} read  the control's value, as kept and sent
 * @property {(v: SettingValue) => void} write  shows a kept value
 * @property {(v: SettingValue) => string} command  the message that applies it
 */
const SETTINGS = "touchbridge.settings";
/** @type {Record<string, SettingValue>} */
let settings = {};
try { const kept = JSON.parse(localStorage.getItem(SETTINGS) || "{}"); if (kept && typeof kept === "object") settings = kept; } catch (e) {}
/**
 * A slider: its value with one decimal.
 * @param {string} id
 * @param {string} command
 * @returns {Control}
 */
function slider(id, command) {
  const el = element(id, HTMLInputElement);
  return {el, read: () => Number(el.value).toFixed(1), write: v => { el.value = String(v); }, command: v => command + " " + v};
}
/**
 * A switch: on or off.
 * @param {string} id
 * @param {string} command
 * @returns {Control}
 */
function toggle(id, command) {
  const el = element(id, HTMLInputElement);
  return {el, read: () => el.checked, write: v => { el.checked = v === true; }, command: v => command + " " + (v ? "on" : "off")};
}
/** @type {Record<string, Control>} */
const controls = {
  speed: slider("speed", "set speed"),
  scrollSpeed: slider("scrollSpeed", "set scroll-speed"),
  natural: toggle("natural", "set natural-scroll"),
  tap: toggle("tap", "set tap-to-click"),
};
/** @param {string} name @param {Control} c */
function showSetting(name, c) { const out = document.getElementById(name + "Out"); if (out) out.textContent = String(c.read()); }
for (const [name, c] of Object.entries(controls)) {
  if (name in settings) c.write(settings[name]);
  showSetting(name, c);
  c.el.addEventListener("input", () => showSetting(name, c));
  c.el.addEventListener("change", () => {
    settings[name] = c.read();
    try { localStorage.setItem(SETTINGS, JSON.stringify(settings)); } catch (e) {}
    send(c.command(settings[name]));
  });
}
/** Sends this phone's kept settings (on each connection). */
export function sendSettings() { for (const [name, c] of Object.entries(controls)) if (name in settings) send(c.command(settings[name])); }
