// The page touchbridge serves: the phone's browser becomes the touch surface. Everything is here, in
// the binary (no CDN, works offline). It speaks the PoseAI packet format over the WebSocket (Touches,
// TouchState, Orientation) plus text commands (see `WebCommand`).
enum WebPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, maximum-scale=1, user-scalable=no, viewport-fit=cover">
<meta name="theme-color" content="#15171c">
<title>touchbridge</title>
<style>
*{box-sizing:border-box;-webkit-tap-highlight-color:transparent}
html,body{margin:0;height:100%;background:#15171c;color:#e8e8ea;font:15px/1.3 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;overflow:hidden;overscroll-behavior:none}
body{display:flex;flex-direction:column;height:100dvh;padding:env(safe-area-inset-top) env(safe-area-inset-right) env(safe-area-inset-bottom) env(safe-area-inset-left)}
header{display:flex;align-items:center;gap:8px;padding:8px 12px}
#dot{width:10px;height:10px;border-radius:50%;background:#d9a52b;flex:none}
body[data-state=connected] #dot{background:#3cc46a}
body[data-state=refused] #dot,body[data-state=busy] #dot{background:#e0483e}
#status{flex:1;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.modes{display:flex;border:1px solid #3a3d45;border-radius:8px;overflow:hidden}
.modes button{border:0;border-radius:0;padding:6px 9px;font-size:13px}
.modes button[aria-pressed=true]{background:#3d6fe0;color:#fff}
#pad{flex:1;margin:0 12px;border-radius:14px;background:#20232a;border:1px solid #30333b;touch-action:none;position:relative;display:flex;align-items:center;justify-content:center;color:#5d616b;user-select:none;-webkit-user-select:none}
#pad .hint{pointer-events:none;text-align:center}
.dotf{position:absolute;width:44px;height:44px;margin:-22px 0 0 -22px;border-radius:50%;background:rgba(61,111,224,.45);pointer-events:none}
footer{display:grid;grid-template-columns:1fr 1fr;gap:10px;padding:10px 12px}
button{background:#2a2d35;color:#e8e8ea;border:1px solid #3a3d45;border-radius:10px;padding:14px 0;font:inherit;touch-action:manipulation}
button:active{background:#3a3d45}
#text{grid-column:1/3;background:#20232a;color:#e8e8ea;border:1px solid #3a3d45;border-radius:10px;padding:12px;font:inherit}
</style>
</head>
<body data-state="connecting">
<header>
<span id="dot"></span><span id="status">connecting…</span>
<div class="modes" role="group" aria-label="mode">
<button data-mode="touchpad" aria-pressed="false">Pad</button><button data-mode="touchscreen" aria-pressed="false">Screen</button><button data-mode="presenter" aria-pressed="false">Slides</button>
</div>
</header>
<div id="pad"><div class="hint">touch here<br><small>one finger moves · two scroll</small></div></div>
<footer>
<button id="left">Left click</button><button id="right">Right click</button>
<input id="text" type="text" autocomplete="off" autocorrect="off" autocapitalize="off" spellcheck="false" placeholder="type to send keys">
</footer>
<script>
"use strict";
const key = new URLSearchParams(location.hash.slice(1)).get("k") || "";
const pad = document.getElementById("pad"), statusEl = document.getElementById("status");
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const ids = new Array(10).fill(null), pos = new Array(10).fill(null), marks = new Array(10).fill(null);
let ws = null, timer = null, retry = null;
window.tbReceived = [];
function setState(state, text) { document.body.dataset.state = state; statusEl.textContent = text; }
function send(s) { if (ws && ws.readyState === 1) { ws.send(s); return true; } return false; }
function enc(r) { return B64[r >> 6] + B64[r & 63]; }
function raw(v, size) { return Math.max(0, Math.min(4095, Math.round(v / size * 4094))); }
function touchState() { return pos.map(p => p ? enc(p[0]) + enc(p[1]) : "====").join(""); }
function packet(events) { send(JSON.stringify({Touches: events, TouchState: touchState(), Orientation: 1})); }
function surface() { const r = pad.getBoundingClientRect(); send("surface " + Math.round(r.width) + " " + Math.round(r.height)); }
function anyDown() { return pos.some(p => p !== null); }
function heartbeat() {
  // While a finger is down, the full state every 100 ms: lost messages heal, and silence releases.
  if (anyDown()) send(JSON.stringify({TouchState: touchState()}));
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
    let s = ids.indexOf(t.identifier);
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
  if (events) packet(events);
}
pad.addEventListener("touchstart", e => onTouch(e, "start"), {passive: false});
pad.addEventListener("touchmove", e => onTouch(e, "move"), {passive: false});
pad.addEventListener("touchend", e => onTouch(e, "end"), {passive: false});
pad.addEventListener("touchcancel", e => onTouch(e, "cancel"), {passive: false});
function releaseAll() {
  for (let s = 0; s < 10; s++) { ids[s] = null; pos[s] = null; unmark(s); }
  send("release");
}
window.addEventListener("blur", releaseAll);
window.addEventListener("pagehide", releaseAll);
document.addEventListener("visibilitychange", () => { if (document.hidden) releaseAll(); });
window.addEventListener("resize", surface);
document.getElementById("left").addEventListener("click", () => send("click left"));
document.getElementById("right").addEventListener("click", () => send("click right"));
for (const b of document.querySelectorAll(".modes button")) b.addEventListener("click", () => send("mode " + b.dataset.mode));
const text = document.getElementById("text");
text.addEventListener("keydown", e => {
  if (e.key === "Enter") { send("key Return"); e.preventDefault(); }
  else if (e.key === "Backspace" && text.value === "") { send("key BackSpace"); e.preventDefault(); }
});
text.addEventListener("input", e => {
  if (e.inputType === "deleteContentBackward") send("key BackSpace");
  else if (text.value) send("text " + text.value);
  text.value = "";
});
function showMode(m) { for (const b of document.querySelectorAll(".modes button")) b.setAttribute("aria-pressed", String(b.dataset.mode === m)); }
function connect() {
  if (!key) { setState("refused", "no pairing secret: open the address touchbridge printed"); return; }
  setState("connecting", "connecting…");
  const opened = {v: false};
  ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws?k=" + encodeURIComponent(key));
  ws.onopen = () => { opened.v = true; surface(); };
  ws.onmessage = m => {
    const line = String(m.data); window.tbReceived.push(line);
    if (line === "hello touchbridge") setState("connected", "connected to " + location.host);
    else if (line.startsWith("mode ")) showMode(line.slice(5));
    else if (line === "busy") setState("busy", "another phone is using touchbridge");
    else if (line.startsWith("error ")) statusEl.textContent = line.slice(6);
  };
  ws.onclose = () => {
    for (let s = 0; s < 10; s++) { ids[s] = null; pos[s] = null; unmark(s); }
    if (!opened.v) setState("refused", "refused: wrong pairing secret? retrying…");
    else setState("disconnected", "disconnected, retrying…");
    clearTimeout(retry); retry = setTimeout(connect, 2000);
  };
}
timer = setInterval(heartbeat, 100);
connect();
</script>
</body>
</html>
"""#
}
