// The text field: a real field, showing the line being typed, so the phone's keyboard keeps the context
// its predictions, autocorrect, swipe, voice and input methods need. `sent` is what the desktop has of
// this line (what the page typed there since the line began). After every change of the field, whatever
// event told of it (input, compositionend, beforeinput: browsers order them differently, so the page
// trusts the field's value, not the events), the page sends the smallest edit from `sent` to the field:
// BackSpace back to the first character that differs, then the field's text from there ("edit N TEXT").
// Counted in Unicode scalars, as a terminal's line discipline (IUTF8) deletes them.
// - Composing text goes to the desktop as it is composed, and is corrected as it changes: the word
//   appears as it is typed, and the end state is the committed text exactly. With a CJK input method
//   the desktop shows the reading (kana, pinyin) until it is converted, then the conversion.
// - The desktop's caret is taken to be at the end of the line: an edit in the middle of the field
//   (the caret moved there) deletes back to that point and types the rest again.
// - Enter sends Return and starts a new line; so do the New line button (the desktop keeps what was
//   typed), a key or click from the page's buttons (the desktop's caret may move), and the connection
//   going (the page no longer knows what the desktop has).
// - Backspace in an empty field sends BackSpace.
import {send} from "./connection.js";
import {$, buzz, element} from "./dom.js";

const text = element("text", HTMLInputElement);
/** Backspaces, and characters, in one message (WebCommand.maxEditBackspaces/Scalars). */
const EDIT_MAX = 256;
let sent = "";
window.tbLineSent = () => sent;

/**
 * Sends `backspaces` BackSpaces then `add`. Long edits (a paste) go as several messages, in order: the
 * backspaces first, then the text in pieces.
 * @param {number} backspaces
 * @param {string} add
 * @returns {boolean} whether every message went
 */
function edit(backspaces, add) {
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

/** Brings the desktop's line to the field's. */
export function syncLine() {
  // The field may hold what no key types (a line break from a paste): the desktop gets it as a space.
  const now = text.value.replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, " ");
  if (now === sent) return;
  const had = Array.from(sent), has = Array.from(now);
  let same = 0;
  while (same < had.length && same < has.length && had[same] === has[same]) same++;
  if (edit(had.length - same, has.slice(same).join(""))) sent = now;
}

/** Starts a new line: the field empties, and the desktop keeps what it has. */
export function newLine() { text.value = ""; sent = ""; }

/** Enter: the line as it stands, then Return, and a new line. */
export function enter() { settle(); send("key Return"); newLine(); }

text.addEventListener("keydown", e => {
  // The input method's own key (Enter commits a conversion).
  if (e.isComposing || e.keyCode === 229) return;
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
/** @type {number | undefined} */
let compositionDeleted;
function settle() { clearTimeout(compositionDeleted); compositionDeleted = undefined; syncLine(); }
text.addEventListener("input", e => {
  const type = e instanceof InputEvent ? e.inputType : "";
  if (type === "deleteCompositionText" || type === "deleteByComposition") {
    clearTimeout(compositionDeleted); compositionDeleted = setTimeout(settle, 100);
  } else settle();
});
text.addEventListener("compositionend", () => { if (compositionDeleted === undefined) syncLine(); });
$("newLine").addEventListener("click", () => { newLine(); text.focus(); buzz(); });
