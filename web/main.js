// The page touchbridge serves: the phone's browser becomes the touch surface, a keyboard's special keys
// and a presentation remote. It speaks the PoseAI packet format over the WebSocket (Touches, TouchState,
// Orientation) plus text commands (see WebCommand). This module wires the page's parts together; each
// part (connection.js, surfaces.js, panels.js, keyboard.js) attaches its own listeners when loaded.
// The live view (view.js, the screen under the pad) is one more part: drawing in surfaces.js's pad, and
// told of the connection through the listeners below.
import * as connection from "./connection.js";
import {enter, newLine, syncLine} from "./keyboard.js";
import {forgetLaser, forgetPerson, laser, sendSettings, showDrawing, showMode, showPerson, wake} from "./panels.js";
import {forgetImpress, impressLine} from "./presenter.js";
import {forgetTouches, releaseTouches, surface} from "./surfaces.js";
import {viewClosed, viewFrame, viewMode, viewSaid} from "./view.js";

/** The picture came, went or changed shape: the surface the touches map onto changed. */
function pictureChanged() { surface(); }

/** Lets go of everything the page holds down: the page is left, hidden or loses focus. */
function releaseAll() {
  releaseTouches();
  laser(false);
  connection.send("release");
}
window.addEventListener("blur", releaseAll);
window.addEventListener("pagehide", releaseAll);
document.addEventListener("visibilitychange", () => { if (document.hidden) releaseAll(); else wake(); });

connection.start({
  opened() {},
  // The kept settings first, then the surface: its answer ("mode …") comes once they are applied, so a
  // touch that follows it is not cut short by a setting that changes (a change releases what is held).
  greeted() { sendSettings(); surface(true); syncLine(); },
  said(line) {
    if (line.startsWith("mode ")) { showMode(line.slice(5)); viewMode(line.slice(5), pictureChanged); }
    else if (line.startsWith("view ")) viewSaid(line, pictureChanged);
    else if (line === "drawing on" || line === "drawing off") showDrawing(line === "drawing on");
    else if (line === "busy") { newLine(); forgetPerson(); }
    else if (line.startsWith("impress ")) impressLine(line.slice(8));
    else if (line.startsWith("person ")) showPerson(line.slice(7));
  },
  frame(data) { viewFrame(data, pictureChanged); },
  closed() { forgetTouches(); forgetLaser(); newLine(); viewClosed(); forgetImpress(); forgetPerson(); },
});

// Over HTTPS a service worker keeps the page, so the installed app opens offline.
if (location.protocol === "https:" && "serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js").then(() => navigator.serviceWorker.ready)
    .then(() => { window.tbServiceWorker = "ready"; }, e => { window.tbServiceWorker = "failed: " + e.message; });
}

window.tb = {send: connection.send, connect: connection.connect, enter, socket: connection.socket};
