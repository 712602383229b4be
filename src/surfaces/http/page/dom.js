// @ts-check
// The page's DOM toolkit: elements built from text (always through textContent or attributes, never
// innerHTML, so a plan name or an error message from the server cannot inject markup), the shared
// building blocks of every section (facts, notes, error boxes) and the formats they use.

/** @typedef {Node | string | null | undefined | false} Leaf */
/** @typedef {Leaf | Leaf[] | (Leaf | Leaf[])[]} Child A node, a text, or lists of them (nothing for null/false). */
/** @typedef {string | number | boolean | null | undefined | ((event: Event) => unknown)} Attr */

/**
 * Creates an element: h('p', { class: 'x' }, 'text', child, ...). `null`/`false` children are skipped;
 * an attribute named on… is an event listener.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, Attr>} [attrs]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export const h = (tag, attrs = {}, ...children) => {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (typeof v === 'function') {
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    } else el.setAttribute(k, v === true ? '' : String(v));
  }
  el.append(...present(children));
  return el;
};

/**
 * The nodes and strings among `children`, flattened.
 * @param {Child[]} children
 * @returns {(Node | string)[]}
 */
const present = (children) => children.flat(2).filter((n) => n !== null && n !== undefined && n !== false);

/**
 * Replaces what `target` shows and marks it as no longer busy.
 * @param {Element} target
 * @param {...Child} nodes
 */
export const replace = (target, ...nodes) => {
  target.replaceChildren(...present(nodes));
  target.removeAttribute('aria-busy');
};

/**
 * The element with this id, of the expected type; a page that lacks it is a bug, said loudly.
 * @template {HTMLElement} T
 * @param {string} id
 * @param {{ new (): T, prototype: T }} [type]
 * @returns {T}
 */
export const byId = (
  id,
  type = /** @type {{ new (): T, prototype: T }} */ (/** @type {unknown} */ (HTMLElement)),
) => {
  const el = document.getElementById(id);
  if (!(el instanceof type)) throw new Error(`The page has no ${type.name} #${id}.`);
  return el;
};

/**
 * A timestamp in the reader's locale; the text as it came when it is not a date.
 * @param {string} iso
 */
export const when = (iso) => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
};

/**
 * A figure with `digits` decimals, or a dash when there is none.
 * @param {number | null | undefined} n
 */
export const fig = (n, digits = 0) => (typeof n === 'number' && Number.isFinite(n) ? n.toFixed(digits) : '–');

/**
 * A definition list from [label, value] rows, skipping empty values.
 * @param {[string, string | null | undefined][]} rows
 */
export const facts = (rows) =>
  h(
    'dl',
    { class: 'facts' },
    rows
      .filter(([, v]) => v !== undefined && v !== null && v !== '')
      .map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v))),
  );

/**
 * A callout: `kind` is warning or info.
 * @param {'warning' | 'info'} kind
 * @param {string} title
 * @param {string} text
 */
export const note = (kind, title, text) =>
  h('div', { class: `callout ${kind}`, role: 'note' }, h('strong', {}, title), ' ', text);

/**
 * A table's head row of column titles.
 * @param {string[]} titles
 */
export const thead = (titles) =>
  h(
    'thead',
    {},
    h(
      'tr',
      {},
      titles.map((t) => h('th', { scope: 'col' }, t)),
    ),
  );

/**
 * A shell command to copy: wrapped at the box's edge (never cut off), with a Copy button that puts
 * the exact text on the clipboard (or selects it where the clipboard is not allowed).
 * @param {string} text
 */
export const command = (text) => {
  const code = h('code', {}, text);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      getSelection()?.selectAllChildren(code);
      button.textContent = 'Selected: press Ctrl+C';
    }
  };
  const button = h(
    'button',
    { type: 'button', class: 'copy', 'aria-label': `Copy: ${text}`, onclick: copy },
    'Copy',
  );
  return h('div', { class: 'command' }, h('pre', {}, code), button);
};
