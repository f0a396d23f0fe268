// @ts-check
// DOM helpers the page's views share.

/**
 * Attributes for el and svgEl: `text` sets the text and `class` the class name (el only; svgEl sets it as an
 * attribute), any other key the attribute of that name; an undefined or null value sets nothing.
 * @typedef {Record<string, string | number | undefined | null>} Attrs
 */

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * The page's element with this id: index.html has every one the scripts ask for, so a missing one is a bug.
 * @param {string} id
 * @returns {HTMLElement}
 */
export function byId(id) {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`the inspector page has no #${id}`);
  return node;
}

/**
 * The page's checkbox (or other input) with this id.
 * @param {string} id
 * @returns {HTMLInputElement}
 */
export function inputById(id) {
  const node = byId(id);
  if (!(node instanceof HTMLInputElement)) throw new Error(`#${id} is not an input`);
  return node;
}

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {Node[]} [children]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue;
    if (key === "text") node.textContent = String(value);
    else if (key === "class") node.className = String(value);
    else node.setAttribute(key, String(value));
  }
  node.append(...children);
  return node;
}

/**
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {Node[]} [children]
 * @returns {SVGElementTagNameMap[K]}
 */
export function svgEl(tag, attrs = {}, children = []) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue;
    if (key === "text") node.textContent = String(value);
    else node.setAttribute(key, String(value));
  }
  node.append(...children);
  return node;
}
