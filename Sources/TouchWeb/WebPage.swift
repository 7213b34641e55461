// The page touchbridge serves: the phone's browser becomes the touch surface, a keyboard's special keys
// and a presentation remote. Everything is here, in the binary (no CDN, works offline). It speaks the
// PoseAI packet format over the WebSocket (Touches, TouchState, Orientation) plus text commands (see
// `WebCommand`); `WebAssets` serves its manifest, icon and service worker.
enum WebPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, maximum-scale=1, user-scalable=no, viewport-fit=cover">
<meta name="theme-color" content="#15171c">
<meta name="mobile-web-app-capable" content="yes">
<meta name="apple-mobile-web-app-capable" content="yes">
<link rel="manifest" href="/manifest.webmanifest">
<link rel="icon" href="/icon.svg" type="image/svg+xml">
<link rel="apple-touch-icon" href="/icon.svg">
<title>touchbridge</title>
<style>
*{box-sizing:border-box;-webkit-tap-highlight-color:transparent}
html,body{margin:0;height:100%;background:#15171c;color:#e8e8ea;font:15px/1.3 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;overflow:hidden;overscroll-behavior:none}
body{display:flex;flex-direction:column;height:100dvh;padding:env(safe-area-inset-top) env(safe-area-inset-right) env(safe-area-inset-bottom) env(safe-area-inset-left)}
header{display:flex;align-items:center;gap:8px;padding:4px 12px 0}
#dot{width:12px;height:12px;border-radius:50%;background:#d9a52b;flex:none}
body[data-state=connected] #dot{background:#3cc46a}
body[data-state=connected][data-slow] #dot{background:#d9a52b}
body[data-state=refused] #dot,body[data-state=busy] #dot,body[data-state=disconnected] #dot{background:#e0483e}
#status{flex:1;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
#rtt{font-variant-numeric:tabular-nums;color:#b9bcc4;white-space:nowrap}
#penSign{display:none;align-items:center;gap:4px;padding:2px 8px;border-radius:10px;background:#7a3de0;color:#fff;font-size:13px;font-weight:600;white-space:nowrap}
body[data-pen] #penSign{display:flex}
body[data-pen] #pad{border-color:#7a3de0;box-shadow:inset 0 0 0 2px #7a3de0}
.penmark{position:absolute;width:14px;height:14px;margin:-7px 0 0 -7px;border-radius:50%;border:2px solid #b08cff;pointer-events:none}
.penmark[data-down]{background:#b08cff}
nav{display:flex;gap:8px;padding:6px 12px}
.modes{display:flex;flex:1;border:1px solid #3a3d45;border-radius:10px;overflow:hidden}
.modes button{flex:1;border:0;border-radius:0;padding:0 6px}
button[aria-pressed=true]{background:#3d6fe0;color:#fff;border-color:#3d6fe0}
button{min-height:44px;min-width:44px;background:#2a2d35;color:#e8e8ea;border:1px solid #3a3d45;border-radius:10px;padding:0 8px;font:inherit;touch-action:manipulation;user-select:none;-webkit-user-select:none}
button:active{background:#3a3d45}
button:focus-visible,input:focus-visible{outline:2px solid #8fb0ff;outline-offset:2px}
.icon{font-size:20px;padding:0}
#main{flex:1;display:flex;flex-direction:column;min-height:0;gap:10px;padding:0 12px}
#pad{flex:1;min-height:120px;border-radius:14px;background:#20232a;border:1px solid #30333b;touch-action:none;position:relative;display:flex;align-items:center;justify-content:center;color:#8a8e98;user-select:none;-webkit-user-select:none}
#pad .hint{pointer-events:none;text-align:center}
.dotf{position:absolute;width:44px;height:44px;margin:-22px 0 0 -22px;border-radius:50%;background:rgba(61,111,224,.45);pointer-events:none}
#slides{display:none;flex-direction:column;gap:8px;padding:10px 12px 10px}
body[data-view=presenter] #slides{display:flex}
body[data-view=presenter] footer{display:none}
#slides .big{display:grid;grid-template-columns:1fr 1.6fr;gap:8px}
#slides .big button{min-height:72px;font-size:19px;font-weight:600;white-space:nowrap}
#next{background:#3d6fe0;border-color:#3d6fe0;color:#fff}
.row{display:grid;grid-auto-flow:column;grid-auto-columns:1fr;gap:8px}
#laser[aria-pressed=true]{background:#e0483e;border-color:#e0483e}
.timer{align-items:center}
#elapsed{font-size:24px;font-variant-numeric:tabular-nums;text-align:center}
.note{margin:0;color:#d9a52b;font-size:13px}
footer{display:grid;grid-template-columns:1fr 1fr;gap:10px;padding:10px 12px}
.line{grid-column:1/3;display:flex;gap:8px}
#text{flex:1;min-width:0;min-height:44px;background:#20232a;color:#e8e8ea;border:1px solid #3a3d45;border-radius:10px;padding:10px 12px;font:inherit}
.sheet{position:absolute;left:0;right:0;bottom:0;max-height:70%;overflow:auto;background:#1b1d23;border-top:1px solid #3a3d45;border-radius:14px 14px 0 0;padding:12px 12px calc(12px + env(safe-area-inset-bottom));z-index:5;box-shadow:0 -8px 24px rgba(0,0,0,.5)}
.sheet[hidden]{display:none}
.sheet h2{font-size:13px;font-weight:600;color:#b9bcc4;margin:10px 0 6px;text-transform:uppercase;letter-spacing:.04em}
.sheet h2:first-child{margin-top:0}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(64px,1fr));gap:6px}
.sheet button{font-size:13px;padding:0 4px;line-height:1.1}
.sticky[aria-pressed=true]{background:#d9a52b;border-color:#d9a52b;color:#15171c}
.setting{display:flex;align-items:center;gap:12px;min-height:48px}
.setting label{flex:1}
.setting input[type=range]{flex:1.4;height:44px}
.setting input[type=checkbox]{width:28px;height:28px}
.setting output{width:3.5em;text-align:right;font-variant-numeric:tabular-nums}
@media (orientation:landscape){
  body{display:grid;grid-template-columns:1fr minmax(300px,42%);grid-template-rows:auto auto 1fr auto}
  header{grid-column:1/3;grid-row:1}
  nav{grid-column:2;grid-row:2}
  #main{grid-column:1;grid-row:2/5;padding-bottom:10px}
  #slides{grid-column:2;grid-row:3/5;overflow:auto;padding-top:0}
  footer{grid-column:2;grid-row:4}
  #slides .big button{min-height:56px;font-size:17px}
}
@media (min-width:700px) and (min-height:600px){
  html,body{font-size:18px}
  button{min-height:52px}
  #slides .big button{min-height:110px;font-size:24px}
  .sheet{left:auto;width:min(560px,100%);right:12px}
}
</style>
</head>
<body data-state="connecting">
<header>
<span id="dot" role="img" aria-label="connection: connecting"></span><span id="status" role="status">connecting…</span><span id="rtt" aria-label="round-trip time"></span><span id="penSign" role="status" aria-label="pen active">✎ pen</span>
<button id="fullscreen" class="icon" aria-label="Fullscreen" aria-pressed="false"><svg viewBox="0 0 24 24" width="20" height="20" fill="none" stroke="currentColor" stroke-width="2.2" aria-hidden="true"><path d="M4 9V4h5M15 4h5v5M20 15v5h-5M9 20H4v-5"/></svg></button>
</header>
<nav>
<div class="modes" role="group" aria-label="mode">
<button data-mode="touchpad" aria-pressed="false">Pad</button><button data-mode="touchscreen" aria-pressed="false">Screen</button><button data-mode="presenter" aria-pressed="false">Slides</button><button data-mode="pen" aria-pressed="false">Pen</button>
</div>
<button id="keysToggle" aria-expanded="false" aria-controls="keys">Keys</button><button id="settingsToggle" class="icon" aria-label="Settings" aria-expanded="false" aria-controls="settings">⚙</button>
</nav>
<div id="main">
<div id="pad"><div class="hint">touch here<br><small id="hint">one finger moves · two scroll</small></div></div>
</div>
<section id="slides" aria-label="Slides">
<div class="big"><button id="previous" aria-label="Previous">◀ Previous</button><button id="next" aria-label="Next">Next ▶</button></div>
<div class="row"><button id="blank">Blank</button><button id="laser" aria-pressed="false" title="hold, and move a finger on the pad">Laser</button><button id="draw" aria-pressed="false">Draw</button><button id="clear">Clear</button></div>
<div class="row"><button id="startShow">Start show</button><button id="endShow">End show</button></div>
<div class="row timer"><span id="elapsed" role="timer" aria-label="elapsed time">0:00</span><button id="timerRun">Start timer</button><button id="timerReset">Reset timer</button></div>
<p id="wakeNote" class="note" hidden></p>
</section>
<footer>
<button id="left">Left click</button><button id="right">Right click</button>
<div class="line"><input id="text" type="text" autocorrect="on" autocapitalize="off" spellcheck="true" enterkeyhint="enter" placeholder="type here: it types on the desktop" aria-label="type on the desktop"><button id="newLine" class="icon" aria-label="New line" title="New line: empty the field (the desktop keeps what was typed)">✕</button></div>
</footer>
<section id="keys" class="sheet" aria-label="Keys" hidden>
<h2>Held for the next key or click</h2>
<div class="grid"><button class="sticky" data-mod="ctrl" aria-pressed="false">Ctrl</button><button class="sticky" data-mod="alt" aria-pressed="false">Alt</button><button class="sticky" data-mod="super" aria-pressed="false">Super</button><button class="sticky" data-mod="shift" aria-pressed="false">Shift</button><button data-click="left">Left click</button><button data-click="right">Right click</button></div>
<h2>Keys</h2>
<div class="grid">
<button data-key="Escape">Esc</button><button data-key="Tab">Tab</button><button data-key="Return">Enter</button><button data-key="BackSpace" aria-label="Backspace">⌫ Bksp</button><button data-key="Delete">Delete</button>
<button data-key="Left" aria-label="Left">←</button><button data-key="Up" aria-label="Up">↑</button><button data-key="Down" aria-label="Down">↓</button><button data-key="Right" aria-label="Right">→</button>
<button data-key="Home">Home</button><button data-key="End">End</button><button data-key="Page_Up">Page Up</button><button data-key="Page_Down">Page Down</button>
</div>
<h2>Function keys</h2>
<div class="grid" id="fkeys"></div>
<h2>Media</h2>
<div class="grid">
<button data-key="XF86AudioLowerVolume" aria-label="Volume down">Vol −</button><button data-key="XF86AudioRaiseVolume" aria-label="Volume up">Vol +</button><button data-key="XF86AudioMute">Mute</button>
<button data-key="XF86AudioPrev" aria-label="Previous track">Prev track</button><button data-key="XF86AudioPlay" aria-label="Play/pause">Play</button><button data-key="XF86AudioNext" aria-label="Next track">Next track</button>
</div>
<h2>Edit</h2>
<div class="grid"><button data-key="ctrl+c">Copy</button><button data-key="ctrl+v">Paste</button><button data-key="ctrl+z">Undo</button></div>
</section>
<section id="settings" class="sheet" aria-label="Settings" hidden>
<h2>Touchpad, for this phone</h2>
<div class="setting"><label for="speed">Pointer speed</label><input id="speed" type="range" min="-1" max="1" step="0.1" value="0"><output for="speed" id="speedOut">0</output></div>
<div class="setting"><label for="scrollSpeed">Scroll speed</label><input id="scrollSpeed" type="range" min="0.2" max="5" step="0.1" value="1"><output for="scrollSpeed" id="scrollSpeedOut">1</output></div>
<div class="setting"><label for="natural">Natural scroll</label><input id="natural" type="checkbox"></div>
<div class="setting"><label for="tap">Tap to click</label><input id="tap" type="checkbox" checked></div>
<p class="note" style="color:#b9bcc4">Applied at once, to this phone only, while it is connected; touchbridge's own settings (config file, command line) stay as they are.</p>
</section>
<script>
"use strict";
const hashKey = new URLSearchParams(location.hash.slice(1)).get("k");
// The installed app opens at "/" without the secret: it keeps the last one it was given.
if (hashKey) { try { localStorage.setItem("touchbridge.k", hashKey); } catch (e) {} }
const key = hashKey || (() => { try { return localStorage.getItem("touchbridge.k") || ""; } catch (e) { return ""; } })();
const $ = id => document.getElementById(id);
const pad = $("pad"), statusEl = $("status"), rttEl = $("rtt");
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const ids = new Array(10).fill(null), pos = new Array(10).fill(null), marks = new Array(10).fill(null);
let ws = null, timer = null, retry = null, attempt = 0, pinger = null, pingN = 0, lastPong = 0, mode = "";
const pings = new Map();
window.tbReceived = [];
window.tbRTT = null;
function setState(state, text) {
  document.body.dataset.state = state; statusEl.textContent = text;
  $("dot").setAttribute("aria-label", "connection: " + state);
}
function send(s) { if (ws && ws.readyState === 1) { ws.send(s); return true; } return false; }
function buzz() { if (navigator.vibrate) { try { navigator.vibrate(12); } catch (e) {} } }
function enc(r) { return B64[r >> 6] + B64[r & 63]; }
function raw(v, size) { return Math.max(0, Math.min(4095, Math.round(v / size * 4094))); }
function touchState() { return pos.map(p => p ? enc(p[0]) + enc(p[1]) : "====").join(""); }
window.tbPacketsSent = 0;
function packet(events) { if (send(JSON.stringify({Touches: events, TouchState: touchState(), Orientation: 1}))) window.tbPacketsSent += 1; }
let lastSurface = "";
function surface(force) {
  const r = pad.getBoundingClientRect();
  const s = "surface " + Math.max(10, Math.round(r.width)) + " " + Math.max(10, Math.round(r.height));
  if ((force || s !== lastSurface) && send(s)) lastSurface = s;
}
function anyDown() { return pos.some(p => p !== null); }
function heartbeat() {
  // While a finger is down, the full state every 100 ms: lost messages heal, and silence releases.
  if (anyDown()) send(JSON.stringify({TouchState: touchState()}));
  // A still pen near the glass: its last report again (the daemon takes a silent pen away).
  if (penNear && penMsg) send(penMsg);
}
function mark(s, x, y) {
  if (!marks[s]) { marks[s] = document.createElement("div"); marks[s].className = "dotf"; pad.appendChild(marks[s]); }
  marks[s].style.left = x + "px"; marks[s].style.top = y + "px";
}
function unmark(s) { if (marks[s]) { marks[s].remove(); marks[s] = null; } }
function onTouch(e, kind) {
  e.preventDefault();
  const r = pad.getBoundingClientRect();
  let events = "";
  for (const t of e.changedTouches) {
    // A stylus is the pen (Pointer Events, below), never a finger; and while a pen is near or down, a
    // new touch is a palm resting on the glass: ignored for its whole life.
    if (t.touchType === "stylus") continue;
    let s = ids.indexOf(t.identifier);
    if (kind === "start" && s < 0 && penNear) continue;
    if (kind === "start" && s < 0) { s = ids.indexOf(null); if (s < 0) continue; ids[s] = t.identifier; }
    if (s < 0) continue;
    if (kind === "end" || kind === "cancel") {
      ids[s] = null; pos[s] = null; unmark(s);
      events += s + (kind === "end" ? "====" : "=0=0");
    } else {
      const x = t.clientX - r.left, y = t.clientY - r.top;
      pos[s] = [raw(x, r.width), raw(y, r.height)];
      mark(s, x, y);
      events += s + enc(pos[s][0]) + enc(pos[s][1]);
    }
  }
  // Refused as busy: a new touch asks again (the other phone may have gone quiet).
  if (kind === "start" && document.body.dataset.state === "busy") surface(true);
  if (events) packet(events);
}
pad.addEventListener("touchstart", e => onTouch(e, "start"), {passive: false});
pad.addEventListener("touchmove", e => onTouch(e, "move"), {passive: false});
pad.addEventListener("touchend", e => onTouch(e, "end"), {passive: false});
pad.addEventListener("touchcancel", e => onTouch(e, "cancel"), {passive: false});
// The pen (Pointer Events, pointerType "pen"): its own message, with pressure, tilt, twist, the barrel
// button (buttons bit 2), the eraser end (bit 32, or button 5) and hover before contact.
let penNear = false, penMsg = "", penMark = null;
window.tbPenSent = 0;
function cancelFingers() {
  let events = "";
  for (let s = 0; s < 10; s++) { if (pos[s]) events += s + "=0=0"; ids[s] = null; pos[s] = null; unmark(s); }
  if (events) packet(events);
}
function penSign(on) {
  if (on === penNear) return;
  penNear = on;
  if (on) { document.body.dataset.pen = ""; cancelFingers(); }  // palm rejection: fingers already down go
  else { delete document.body.dataset.pen; if (penMark) { penMark.remove(); penMark = null; } }
}
function onPen(e, kind) {
  if (e.pointerType !== "pen") return;
  e.preventDefault();
  if (kind === "away") { if (penNear) send("pen away"); penMsg = ""; penSign(false); return; }
  if (kind === "down") { try { pad.setPointerCapture(e.pointerId); } catch (err) {} }
  const r = pad.getBoundingClientRect();
  const fx = Math.max(0, Math.min(1, (e.clientX - r.left) / r.width)), fy = Math.max(0, Math.min(1, (e.clientY - r.top) / r.height));
  const touching = kind !== "up" && (e.buttons & 1) === 1;
  const eraser = (e.buttons & 32) !== 0 || e.button === 5;
  const flags = ((e.buttons & 2) ? "b" : "") + (eraser ? "e" : "");
  const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, Math.round(v || 0)));
  penMsg = "pen " + (touching ? "touch " : "hover ") + fx.toFixed(4) + " " + fy.toFixed(4) + " "
    + (touching ? Math.max(0, Math.min(1, e.pressure || 0)).toFixed(3) : "0") + " "
    + clamp(e.tiltX, -90, 90) + " " + clamp(e.tiltY, -90, 90) + " " + clamp(e.twist, 0, 359) + " " + (flags || "-");
  penSign(true);
  if (send(penMsg)) { window.tbPenSent += 1; window.tbPenLast = penMsg; }
  if (!penMark) { penMark = document.createElement("div"); penMark.className = "penmark"; pad.appendChild(penMark); }
  penMark.style.left = (fx * r.width) + "px"; penMark.style.top = (fy * r.height) + "px";
  if (touching) penMark.dataset.down = ""; else delete penMark.dataset.down;
}
pad.addEventListener("pointerover", e => onPen(e, "move"));
pad.addEventListener("pointermove", e => onPen(e, "move"));
pad.addEventListener("pointerdown", e => onPen(e, "down"));
pad.addEventListener("pointerup", e => onPen(e, "up"));
pad.addEventListener("pointercancel", e => onPen(e, "away"));
pad.addEventListener("pointerleave", e => onPen(e, "away"));
function releaseAll() {
  // The fingers the page forgets are cancelled first, so the daemon frees their slots (a finger it
  // cancels while still down otherwise stays cancelled until it lifts); then everything is released.
  cancelFingers();
  if (penNear) { send("pen away"); penMsg = ""; penSign(false); }
  laser(false);
  send("release");
}
window.addEventListener("blur", releaseAll);
window.addEventListener("pagehide", releaseAll);
document.addEventListener("visibilitychange", () => {
  if (document.hidden) { releaseAll(); stopPings(); }
  else { if (ws && ws.readyState === 1) startPings(); wake(); }
});
window.addEventListener("resize", () => surface());
if (window.ResizeObserver) new ResizeObserver(() => surface()).observe(pad);

// Sticky modifiers: they apply to the next key or click, then let go.
const sticky = () => [...document.querySelectorAll(".sticky[aria-pressed=true]")].map(b => b.dataset.mod);
function unstick() { for (const b of document.querySelectorAll(".sticky")) b.setAttribute("aria-pressed", "false"); }
for (const b of document.querySelectorAll(".sticky")) b.addEventListener("click", () => {
  b.setAttribute("aria-pressed", String(b.getAttribute("aria-pressed") !== "true")); buzz();
});
function sendKey(name) {
  const chord = [];
  for (const k of sticky().concat(name.split("+"))) if (!chord.includes(k)) chord.push(k);
  send("key " + chord.slice(-4).join("+")); unstick(); buzz(); newLine();
}
function click(button) {
  const mods = sticky();
  send("click " + button + (mods.length ? " " + mods.join("+") : "")); unstick(); buzz(); newLine();
}
const fkeys = $("fkeys");
for (let i = 1; i <= 12; i++) { const b = document.createElement("button"); b.dataset.key = "F" + i; b.textContent = "F" + i; fkeys.appendChild(b); }
for (const b of document.querySelectorAll("[data-key]")) b.addEventListener("click", () => sendKey(b.dataset.key));
$("left").addEventListener("click", () => click("left"));
for (const b of document.querySelectorAll("[data-click]")) b.addEventListener("click", () => click(b.dataset.click));
$("right").addEventListener("click", () => click("right"));
for (const b of document.querySelectorAll(".modes button")) b.addEventListener("click", () => send("mode " + b.dataset.mode));
function toggleSheet(button, sheet, other) {
  const open = sheet.hidden;
  sheet.hidden = !open; button.setAttribute("aria-expanded", String(open));
  if (open) { other.sheet.hidden = true; other.button.setAttribute("aria-expanded", "false"); }
}
$("keysToggle").addEventListener("click", () => toggleSheet($("keysToggle"), $("keys"), {button: $("settingsToggle"), sheet: $("settings")}));
$("settingsToggle").addEventListener("click", () => toggleSheet($("settingsToggle"), $("settings"), {button: $("keysToggle"), sheet: $("keys")}));
// The text field: a real field, showing the line being typed, so the phone's keyboard keeps
// the context its predictions, autocorrect, swipe, voice and input methods need. `sent` is what the
// desktop has of this line (what the page typed there since the line began). After every change of the
// field, whatever event told of it (input, compositionend, beforeinput: browsers order them differently,
// so the page trusts the field's value, not the events), the page sends the smallest edit from `sent` to
// the field: BackSpace back to the first character that differs, then the field's text from there
// ("edit N TEXT"). Counted in Unicode scalars, as a terminal's line discipline (IUTF8) deletes them.
// - Composing text goes to the desktop as it is composed, and is corrected as it changes: the word
//   appears as it is typed, and the end state is the committed text exactly. With a CJK input method
//   the desktop shows the reading (kana, pinyin) until it is converted, then the conversion.
// - The desktop's caret is taken to be at the end of the line: an edit in the middle of the field
//   (the caret moved there) deletes back to that point and types the rest again.
// - Enter sends Return and starts a new line; so do the New line button (the desktop keeps what was
//   typed), a key or click from the page's buttons (the desktop's caret may move), and the connection
//   going (the page no longer knows what the desktop has).
// - Backspace in an empty field sends BackSpace.
const text = $("text");
const EDIT_MAX = 256;  // backspaces, and characters, in one message (WebCommand.maxEditBackspaces/Scalars)
let sent = "";
window.tbLineSent = () => sent;
function edit(backspaces, add) {
  // Long edits (a paste) go as several messages, in order: the backspaces first, then the text in pieces.
  const chars = Array.from(add);
  while (backspaces > EDIT_MAX) { if (!send("edit " + EDIT_MAX)) return false; backspaces -= EDIT_MAX; }
  let i = 0;
  do {
    const piece = chars.slice(i, i + EDIT_MAX).join("");
    if ((backspaces > 0 || piece) && !send("edit " + backspaces + (piece ? " " + piece : ""))) return false;
    backspaces = 0; i += EDIT_MAX;
  } while (i < chars.length);
  return true;
}
function syncLine() {
  // The field may hold what no key types (a line break from a paste): the desktop gets it as a space.
  const now = text.value.replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, " ");
  if (now === sent) return;
  const had = Array.from(sent), has = Array.from(now);
  let same = 0;
  while (same < had.length && same < has.length && had[same] === has[same]) same++;
  if (edit(had.length - same, has.slice(same).join(""))) sent = now;
}
function newLine() { text.value = ""; sent = ""; }
function enter() { settle(); send("key Return"); newLine(); }
text.addEventListener("keydown", e => {
  if (e.isComposing || e.keyCode === 229) return;  // the input method's own key (Enter commits a conversion)
  if (e.key === "Enter") { e.preventDefault(); enter(); }
  else if (e.key === "Backspace" && text.value === "") { e.preventDefault(); send("key BackSpace"); }
});
text.addEventListener("beforeinput", e => {
  if (e.inputType === "insertLineBreak" || e.inputType === "insertParagraph") { e.preventDefault(); enter(); }
  else if (e.inputType === "deleteContentBackward" && text.value === "") { e.preventDefault(); send("key BackSpace"); }
});
// WebKit commits a composition as a deletion of it (input deleteCompositionText, then a compositionend),
// then an insertion of the committed text (insertFromComposition, another compositionend), each its own
// task. Sending the deletion would erase the word on the desktop and type it again: the page waits for
// the insertion, or 100 ms when none comes (the composition was cancelled). Either way the end is exact.
let compositionDeleted = null;
function settle() { clearTimeout(compositionDeleted); compositionDeleted = null; syncLine(); }
text.addEventListener("input", e => {
  if (e.inputType === "deleteCompositionText" || e.inputType === "deleteByComposition") {
    clearTimeout(compositionDeleted); compositionDeleted = setTimeout(settle, 100);
  } else settle();
});
text.addEventListener("compositionend", () => { if (compositionDeleted === null) syncLine(); });
$("newLine").addEventListener("click", () => { newLine(); text.focus(); buzz(); });

// The Slides panel.
for (const [id, action] of [["next", "next"], ["previous", "previous"], ["blank", "blank"], ["startShow", "start"], ["endShow", "end"], ["draw", "draw"], ["clear", "clear"]]) {
  $(id).addEventListener("click", () => { send("slide " + action); buzz(); });
}
let laserHeld = false;
function laser(on) {
  if (on === laserHeld) return;
  laserHeld = on; $("laser").setAttribute("aria-pressed", String(on));
  send(on ? "slide laser-on" : "slide laser-off");
  if (on) buzz();
}
const laserButton = $("laser");
laserButton.style.touchAction = "none";
laserButton.addEventListener("pointerdown", e => { e.preventDefault(); laser(true); });
for (const ev of ["pointerup", "pointercancel", "lostpointercapture"]) laserButton.addEventListener(ev, () => laser(false));
laserButton.addEventListener("contextmenu", e => e.preventDefault());
laserButton.addEventListener("keydown", e => { if (e.key === " " || e.key === "Enter") { e.preventDefault(); laser(true); } });
laserButton.addEventListener("keyup", e => { if (e.key === " " || e.key === "Enter") laser(false); });
// The talk's timer: the page's own, from Start timer, paused and reset by hand.
let elapsedMs = 0, runningSince = null, ticker = null;
function showElapsed() {
  const total = Math.floor((elapsedMs + (runningSince === null ? 0 : performance.now() - runningSince)) / 1000);
  const h = Math.floor(total / 3600), m = Math.floor(total / 60) % 60, s = total % 60;
  $("elapsed").textContent = (h ? h + ":" + String(m).padStart(2, "0") : m) + ":" + String(s).padStart(2, "0");
}
$("timerRun").addEventListener("click", () => {
  if (runningSince === null) { runningSince = performance.now(); ticker = setInterval(showElapsed, 1000); $("timerRun").textContent = "Pause timer"; }
  else { elapsedMs += performance.now() - runningSince; runningSince = null; clearInterval(ticker); $("timerRun").textContent = "Start timer"; }
  showElapsed(); buzz();
});
$("timerReset").addEventListener("click", () => {
  elapsedMs = 0; if (runningSince !== null) runningSince = performance.now(); showElapsed(); buzz();
});
// Keep the screen awake in Slides mode (Screen Wake Lock: HTTPS only); where not allowed, say so once.
let wakeLock = null, wakeSaid = false;
function wakeNote(text) { window.tbWake = "refused"; if (wakeSaid) return; wakeSaid = true; $("wakeNote").textContent = text; $("wakeNote").hidden = false; }
async function wake() {
  if (mode !== "presenter" || document.hidden) { if (wakeLock) { wakeLock.release().catch(() => {}); wakeLock = null; } return; }
  if (wakeLock) return;
  if (!("wakeLock" in navigator)) { wakeNote("The screen may turn off during the talk: keeping it awake needs the page over HTTPS (touchbridge --tls-cert)."); return; }
  try { wakeLock = await navigator.wakeLock.request("screen"); window.tbWake = "held"; wakeLock.addEventListener("release", () => { wakeLock = null; }); }
  catch (e) { wakeNote("The screen may turn off during the talk: this browser did not allow keeping it awake (" + e.name + ")."); }
}
function showMode(m) {
  mode = m; document.body.dataset.view = m;
  for (const b of document.querySelectorAll(".modes button")) b.setAttribute("aria-pressed", String(b.dataset.mode === m));
  if (m !== "presenter") laser(false);
  $("hint").textContent = m === "presenter" ? "tap: next · swipe: next or previous · hold Laser to point"
    : m === "touchscreen" ? "the pad is the screen" : m === "pen" ? "the pad is the screen for the pen · fingers do nothing"
    : "one finger moves · two scroll";
  wake();
}
// Fullscreen.
$("fullscreen").addEventListener("click", () => {
  if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
  else if (document.documentElement.requestFullscreen) document.documentElement.requestFullscreen().catch(e => { statusEl.textContent = "fullscreen refused: " + e.message; });
  else statusEl.textContent = "this browser has no fullscreen; Add to Home Screen opens touchbridge as an app";
});
document.addEventListener("fullscreenchange", () => $("fullscreen").setAttribute("aria-pressed", String(!!document.fullscreenElement)));

// Live settings: sent as commands, kept in local storage, sent again on each connection.
const SETTINGS = "touchbridge.settings";
let settings = {};
try { settings = JSON.parse(localStorage.getItem(SETTINGS) || "{}") || {}; } catch (e) { settings = {}; }
const controls = {
  speed: {el: $("speed"), cmd: v => "set speed " + v, get: el => Number(el.value).toFixed(1), set: (el, v) => { el.value = v; }},
  scrollSpeed: {el: $("scrollSpeed"), cmd: v => "set scroll-speed " + v, get: el => Number(el.value).toFixed(1), set: (el, v) => { el.value = v; }},
  natural: {el: $("natural"), cmd: v => "set natural-scroll " + (v ? "on" : "off"), get: el => el.checked, set: (el, v) => { el.checked = v; }},
  tap: {el: $("tap"), cmd: v => "set tap-to-click " + (v ? "on" : "off"), get: el => el.checked, set: (el, v) => { el.checked = v; }},
};
function showSetting(name) { const out = $(name + "Out"); if (out) out.textContent = controls[name].get(controls[name].el); }
for (const [name, c] of Object.entries(controls)) {
  if (name in settings) c.set(c.el, settings[name]);
  showSetting(name);
  c.el.addEventListener("input", () => showSetting(name));
  c.el.addEventListener("change", () => {
    settings[name] = c.get(c.el);
    try { localStorage.setItem(SETTINGS, JSON.stringify(settings)); } catch (e) {}
    send(c.cmd(settings[name]));
  });
}
function sendSettings() { for (const [name, c] of Object.entries(controls)) if (name in settings) send(c.cmd(settings[name])); }

// The connection: a ping every 2 s gives the round-trip time; a drop reconnects with backoff.
function startPings() { stopPings(); ping(); pinger = setInterval(ping, 2000); }
function stopPings() { clearInterval(pinger); pinger = null; }
function ping() {
  if (lastPong && performance.now() - lastPong > 5000) document.body.dataset.slow = "";
  pingN += 1; pings.set(pingN, performance.now()); if (pings.size > 8) pings.delete(pings.keys().next().value);
  send("ping " + pingN);
}
function pong(n) {
  const t0 = pings.get(n); if (t0 === undefined) return;
  pings.delete(n); lastPong = performance.now();
  const ms = Math.round(lastPong - t0); window.tbRTT = ms;
  rttEl.textContent = ms + " ms";
  if (ms >= 150) document.body.dataset.slow = ""; else delete document.body.dataset.slow;
}
function later(ms, why) {
  clearTimeout(retry); retry = setTimeout(connect, ms);
  setState(document.body.dataset.state === "refused" ? "refused" : "disconnected", why + ", retrying in " + Math.ceil(ms / 1000) + " s…");
}
function backoff() { attempt += 1; return Math.min(30000, 1000 * 2 ** Math.min(attempt - 1, 5)) * (0.8 + Math.random() * 0.4); }
async function whyRefused() {
  // The WebSocket API hides why an upgrade was refused: the server says it here.
  let reason = "";
  try { reason = (await (await fetch("/pairing?k=" + encodeURIComponent(key), {cache: "no-store"})).text()).trim(); } catch (e) { reason = "unreachable"; }
  window.tbRefusal = reason;
  if (reason === "wrong secret") setState("refused", "refused: wrong pairing secret. Open the address touchbridge printed, or scan its QR code again.");
  else if (reason === "too many tries") { setState("refused", "refused: too many tries with a wrong secret from this phone; retrying in a minute…"); clearTimeout(retry); retry = setTimeout(connect, 61000); }
  else if (reason === "unreachable") later(backoff(), "cannot reach touchbridge");
  else later(backoff(), "connection refused");
}
function connect() {
  if (!key) { setState("refused", "no pairing secret: open the address touchbridge printed"); return; }
  clearTimeout(retry);
  if (document.body.dataset.state !== "refused") setState("connecting", "connecting…");
  const opened = {v: false};
  lastSurface = "";
  const socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws?k=" + encodeURIComponent(key));
  ws = socket;
  socket.onopen = () => { opened.v = true; surface(true); };
  socket.onmessage = m => {
    const line = String(m.data); window.tbReceived.push(line);
    if (line === "hello touchbridge") { attempt = 0; setState("connected", "connected to " + location.host); sendSettings(); startPings(); syncLine(); }
    else if (line.startsWith("pong ")) pong(Number(line.slice(5)));
    else if (line.startsWith("mode ")) { showMode(line.slice(5)); if (document.body.dataset.state === "busy") setState("connected", "connected to " + location.host); }
    else if (line === "drawing on" || line === "drawing off") $("draw").setAttribute("aria-pressed", String(line === "drawing on"));
    else if (line === "busy") { setState("busy", "busy: another phone is using touchbridge (touch the pad to try again)"); newLine(); }
    else if (line.startsWith("error ")) statusEl.textContent = line.slice(6);
  };
  socket.onclose = () => {
    if (ws !== socket) return;
    stopPings(); rttEl.textContent = "";
    for (let s = 0; s < 10; s++) { ids[s] = null; pos[s] = null; unmark(s); }
    penMsg = ""; penSign(false);
    laserHeld = false; $("laser").setAttribute("aria-pressed", "false");
    newLine();
    if (!opened.v) whyRefused();
    else later(backoff(), "disconnected");
  };
}
// Over HTTPS a service worker keeps the page, so the installed app opens offline.
if (location.protocol === "https:" && "serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js").then(() => navigator.serviceWorker.ready)
    .then(() => { window.tbServiceWorker = "ready"; }, e => { window.tbServiceWorker = "failed: " + e.message; });
}
timer = setInterval(heartbeat, 100);
connect();
</script>
</body>
</html>
"""#
}
