// The presenter's view in the Slides panel: what LibreOffice Impress shows, as the daemon relays it
// ("impress …" lines, docs/wire-format.md): the current slide large, the next one small, the notes (their
// size adjustable), "n of m", the clock and a slide list. The panel's buttons stay what they are: the
// daemon sends them to Impress while it is paired, and presses keys when it is not. The notes are text,
// set with textContent: never markup.
import {send} from "./connection.js";
import {$, buzz, element} from "./dom.js";

const view = $("impress"), note = $("impressNote"), count = $("slideCount"), clock = $("clock");
const now = element("slideNow", HTMLImageElement), next = element("slideNext", HTMLImageElement);
const notes = $("notes"), list = $("slideList");

/** The show: its slide count and current slide (from 0); null when none runs. */
let show = /** @type {{count: number, current: number} | null} */ (null);
/** The pictures the daemon sent, by slide (PNG data URLs): the current and the next one. */
const pictures = new Map();

/** The most slides the list shows buttons for. */
const listMost = 200;

/**
 * Says `text` under the view (why there is no picture, or the PIN to type in Impress).
 * @param {string} text
 */
function say(text) { note.textContent = text; note.hidden = text === ""; }

/** Shows the current and next pictures, "n of m" and which list button is current. */
function showSlides() {
  view.dataset.impress = show ? "show" : "on";
  if (!show) { count.textContent = ""; now.removeAttribute("src"); next.removeAttribute("src"); return; }
  count.textContent = (show.current + 1) + " of " + show.count;
  for (const [img, slide] of /** @type {[HTMLImageElement, number][]} */ ([[now, show.current], [next, show.current + 1]])) {
    const url = pictures.get(slide);
    if (url) img.src = url; else img.removeAttribute("src");
  }
  for (const b of list.querySelectorAll("button")) b.setAttribute("aria-current", String(Number(b.dataset.slide) === show.current));
}

/** @param {number} n the show's slide count: one button a slide, up to `listMost` */
function makeList(n) {
  list.replaceChildren();
  for (let i = 0; i < Math.min(n, listMost); i++) {
    const b = document.createElement("button");
    b.textContent = String(i + 1);
    b.dataset.slide = String(i);
    b.addEventListener("click", () => { send("slide goto " + i); buzz(); });
    list.appendChild(b);
  }
}

/**
 * One line from the daemon after "impress ".
 * @param {string} line
 */
export function impressLine(line) {
  const space = line.indexOf(" ");
  const word = space < 0 ? line : line.slice(0, space), rest = space < 0 ? "" : line.slice(space + 1);
  if (word === "off") { forgetImpress(); return; }
  view.hidden = false;
  if (word === "pin") {
    view.dataset.impress = "pin";
    say("LibreOffice Impress asks for a PIN: type " + rest + " in its Impress Remote dialog");
  } else if (word === "on") {
    show = null; pictures.clear(); list.replaceChildren(); notes.textContent = "";
    say("LibreOffice Impress is connected: Start show starts its slide show");
    showSlides();
  } else if (word === "show") {
    const [m, n] = rest.split(" ").map(Number);
    if (!show || show.count !== m) makeList(m);
    show = {count: m, current: n};
    say("");
    showSlides();
  } else if (word === "preview") {
    const cut = rest.indexOf(" ");
    const slide = Number(rest.slice(0, cut));
    pictures.set(slide, "data:image/png;base64," + rest.slice(cut + 1));
    // Only the current and next are kept: the daemon sends a picture again when its slide comes near.
    for (const k of pictures.keys()) if (show && k !== show.current && k !== show.current + 1 && k !== slide) pictures.delete(k);
    showSlides();
  } else if (word === "notes") {
    const cut = rest.indexOf(" ");
    if (show && Number(rest.slice(0, cut)) === show.current) notes.textContent = cut < 0 ? "" : rest.slice(cut + 1);
  } else if (word === "title") {
    view.setAttribute("aria-label", "LibreOffice Impress: " + rest);
  }
}

/** No Impress (it went, or the connection did): the buttons are keys, and the view says why it is empty. */
export function forgetImpress() {
  show = null; pictures.clear(); list.replaceChildren(); notes.textContent = "";
  showSlides();
  view.dataset.impress = "off";
  say("no preview without LibreOffice Impress: Next and Previous press keys");
}

// The notes' size, kept on the phone.
let notesSize = Number(localStorage.getItem("tb.notesSize")) || 18;
/** @param {number} px */
function sizeNotes(px) {
  notesSize = Math.max(12, Math.min(48, px));
  notes.style.fontSize = notesSize + "px";
  localStorage.setItem("tb.notesSize", String(notesSize));
}
sizeNotes(notesSize);
$("notesSmaller").addEventListener("click", () => sizeNotes(notesSize - 2));
$("notesLarger").addEventListener("click", () => sizeNotes(notesSize + 2));

// The clock: the phone's time, each minute while the page is shown.
function showClock() {
  const d = new Date();
  clock.textContent = String(d.getHours()).padStart(2, "0") + ":" + String(d.getMinutes()).padStart(2, "0");
}
showClock();
setInterval(() => { if (!document.hidden) showClock(); }, 15000);
forgetImpress();
