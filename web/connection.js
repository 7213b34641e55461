// The connection to the daemon: the pairing secret, the WebSocket, its state on the page (the dot and the
// status line), a ping every 2 s for the round-trip time, and a new connection with backoff when one
// drops or is refused. Everything the page sends goes through `send`; what the daemon says goes to the
// listeners `start` is given (main.js wires them to the other parts).
import {$} from "./dom.js";

/** @typedef {"connecting" | "connected" | "refused" | "busy" | "disconnected"} State */

/**
 * What the page does when the connection changes or the daemon speaks.
 * @typedef {object} Listeners
 * @property {() => void} opened  the socket is open (the daemon's greeting is still to come)
 * @property {() => void} greeted  "hello touchbridge": the daemon took this page
 * @property {(line: string) => void} said  any other line from the daemon ("mode …", "drawing …", "busy")
 * @property {(data: ArrayBuffer) => void} frame  a binary message: a frame of the live view (view.js)
 * @property {() => void} closed  the socket is gone: what the page held is forgotten (the daemon released it)
 */

const hashKey = new URLSearchParams(location.hash.slice(1)).get("k");
// The installed app opens at "/" without the secret: it keeps the last one it was given.
if (hashKey) { try { localStorage.setItem("touchbridge.k", hashKey); } catch (e) {} }
const key = hashKey || (() => { try { return localStorage.getItem("touchbridge.k") || ""; } catch (e) { return ""; } })();
const statusEl = $("status"), rttEl = $("rtt"), dot = $("dot");
// This page's own name, the same on each of its connections: a new connection closes the page's old one
// that the daemon still holds (the phone lost Wi-Fi and came back without closing it), so that it gets its
// place back at once. Made at load, not kept: a reload or a duplicated tab is a page of its own.
const tab = crypto.getRandomValues(new Uint32Array(3)).join("-");

/** @type {State} */
let current = "connecting";
/** @type {WebSocket | null} */
let ws = null;
/** @type {number | undefined} */
let retry;
/** @type {number | undefined} */
let pinger;
let attempt = 0, pingN = 0, lastPong = 0;
/** When each ping still unanswered went, by its number (performance.now(), ms). @type {Map<number, number>} */
const pings = new Map();
/** @type {Listeners} */
let listeners = {opened() {}, greeted() {}, said() {}, frame() {}, closed() {}};
window.tbReceived = [];
window.tbRTT = null;

/**
 * Shows the connection's state: the dot's colour (body[data-state]) and the status line.
 * @param {State} state
 * @param {string} text
 */
export function setState(state, text) {
  current = state;
  document.body.dataset.state = state; statusEl.textContent = text;
  dot.setAttribute("aria-label", "connection: " + state);
}

/** @returns {State} */
export function state() { return current; }

/**
 * Says `text` on the status line, the state unchanged.
 * @param {string} text
 */
export function say(text) { statusEl.textContent = text; }

/**
 * Sends `message` if the socket is open.
 * @param {string} message
 * @returns {boolean} whether it went
 */
export function send(message) {
  if (ws && ws.readyState === WebSocket.OPEN) { ws.send(message); return true; }
  return false;
}

/** The socket, for the page's tests. @returns {WebSocket | null} */
export function socket() { return ws; }

function startPings() { stopPings(); ping(); pinger = setInterval(ping, 2000); }
function stopPings() { clearInterval(pinger); pinger = undefined; }
function ping() {
  if (lastPong && performance.now() - lastPong > 5000) document.body.dataset.slow = "";
  pingN += 1; pings.set(pingN, performance.now());
  if (pings.size > 8) pings.delete(pings.keys().next().value);
  send("ping " + pingN);
}
/** @param {number} n */
function pong(n) {
  const t0 = pings.get(n); if (t0 === undefined) return;
  pings.delete(n); lastPong = performance.now();
  const ms = Math.round(lastPong - t0); window.tbRTT = ms;
  rttEl.textContent = ms + " ms";
  if (ms >= 150) document.body.dataset.slow = ""; else delete document.body.dataset.slow;
}
document.addEventListener("visibilitychange", () => {
  if (document.hidden) stopPings();
  else if (ws && ws.readyState === WebSocket.OPEN) startPings();
});

/**
 * Connects again in `ms`, saying why.
 * @param {number} ms
 * @param {string} why
 */
function later(ms, why) {
  clearTimeout(retry); retry = setTimeout(connect, ms);
  setState(current === "refused" ? "refused" : "disconnected", why + ", retrying in " + Math.ceil(ms / 1000) + " s…");
}
/** @returns {number} the wait before the next attempt, in ms: 1 s doubling to 30 s, ±20 % */
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

/** Opens a new connection (the old one, if any, is left to close). */
export function connect() {
  if (!key) { setState("refused", "no pairing secret: open the address touchbridge printed"); return; }
  clearTimeout(retry);
  if (current !== "refused") setState("connecting", "connecting…");
  let opened = false;
  const socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws?k=" + encodeURIComponent(key) + "&t=" + tab);
  ws = socket;
  socket.binaryType = "arraybuffer";
  socket.onopen = () => { opened = true; listeners.opened(); };
  socket.onmessage = m => {
    if (m.data instanceof ArrayBuffer) { listeners.frame(m.data); return; }
    const line = String(m.data); window.tbReceived.push(line);
    if (line === "hello touchbridge") { attempt = 0; setState("connected", "connected to " + location.host); listeners.greeted(); startPings(); }
    else if (line.startsWith("pong ")) pong(Number(line.slice(5)));
    else if (line.startsWith("error ")) say(line.slice(6));
    else {
      if (line === "busy") setState("busy", "busy: another phone is using touchbridge (touch the pad to try again)");
      else if (line.startsWith("mode ") && current === "busy") setState("connected", "connected to " + location.host);
      listeners.said(line);
    }
  };
  socket.onclose = () => {
    if (ws !== socket) return;
    stopPings(); rttEl.textContent = "";
    listeners.closed();
    if (!opened) whyRefused();
    else later(backoff(), "disconnected");
  };
}

/**
 * Connects, and keeps connecting, telling `to` what happens.
 * @param {Listeners} to
 */
export function start(to) { listeners = to; connect(); }
