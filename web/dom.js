// The page's small helpers: its elements by id, checked for their type, and the phone's buzz.

/**
 * The element `id` of the page's markup, checked to be a `type`: a missing one is the page's own bug,
 * thrown at once rather than found at the first touch.
 * @template {HTMLElement} T
 * @param {string} id
 * @param {{new (): T, prototype: T}} type
 * @returns {T}
 */
export function element(id, type) {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error("the page has no element #" + id + " of the expected type");
  return found;
}

/**
 * The element `id`, any kind.
 * @param {string} id
 * @returns {HTMLElement}
 */
export const $ = id => element(id, HTMLElement);

/**
 * The page's buttons that match `selector`.
 * @param {string} selector
 * @returns {HTMLButtonElement[]}
 */
export function buttons(selector) {
  /** @type {HTMLButtonElement[]} */
  const found = [];
  for (const b of document.querySelectorAll(selector)) if (b instanceof HTMLButtonElement) found.push(b);
  return found;
}

/** A short vibration where the phone has one: the answer of a button pressed without looking. */
export function buzz() { if (navigator.vibrate) { try { navigator.vibrate(12); } catch (e) {} } }
