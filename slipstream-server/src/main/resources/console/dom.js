// DOM helpers. Everything from the server (names, reasons, logs) is tenant data and may be hostile: it only ever
// enters the page as text (textContent, text nodes, attribute values set one by one), never as HTML.

/** el('td', {class: 'x', title: t}, 'text', child, ...): an element; strings become text nodes. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else if (key === 'href') node.setAttribute('href', safeHref(value));
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Only the console's own hash routes are links: a run id in a URL can never become javascript:. */
function safeHref(value) {
  const text = String(value);
  return text.startsWith('#/') ? text : '#/';
}

const SVG = 'http://www.w3.org/2000/svg';

/** svg('rect', {x: 1, class: 'bar'}, child, ...): an SVG element, made as el() makes HTML ones (attributes one by one, text as text). */
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'dataset') Object.assign(node.dataset, value);
    else node.setAttribute(key, String(value));
  }
  append(node, children);
  return node;
}

/** Replaces a node's children. */
export function replace(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

/** A route segment: tenant names go into links encoded. */
export function seg(text) {
  return encodeURIComponent(String(text));
}

/** "3m", "2h", "5d" since an ISO instant. */
export function age(iso, now = Date.now()) {
  if (!iso) return '';
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return seconds + 's';
  if (seconds < 3600) return Math.floor(seconds / 60) + 'm';
  if (seconds < 86400) return Math.floor(seconds / 3600) + 'h';
  return Math.floor(seconds / 86400) + 'd';
}

/** A labelled bar: value of max, with the figure as text. */
export function bar(label, value, max, kind) {
  const share = max > 0 ? Math.min(100, Math.round((100 * value) / max)) : 0;
  const fill = el('span', {class: 'fill ' + (kind || '')});
  fill.style.width = share + '%'; // a CSSOM property, not a style attribute: the CSP forbids inline styles
  return el('div', {class: 'bar-row'},
    el('span', {class: 'bar-label'}, label),
    el('span', {class: 'bar', role: 'img', 'aria-label': label + ' ' + value + ' of ' + max}, fill),
    el('span', {class: 'bar-figure'}, String(value) + (max > 0 ? ' / ' + max : '')));
}

export function table(headers, rows, attrs = {}) {
  return el('table', attrs,
    el('thead', {}, el('tr', {}, headers.map((h) => el('th', {}, h)))),
    el('tbody', {}, rows));
}

export function message(text, kind = 'info') {
  return el('p', {class: 'message ' + kind, role: kind === 'error' ? 'alert' : 'status'}, text);
}
