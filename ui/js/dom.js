// Small DOM helpers. Text reaches the page only as text (textContent and
// text nodes), never as HTML: users, commands and reasons come from the
// API and may hold anything.

// el('td', {class: 'num', text: '3'}, child, ...): an element with
// attributes, properties and children. Keys: class, text, dataset,
// on<event> (a listener), hidden, and plain attributes; null, undefined
// and false leave a key out.
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') {
      node.className = value;
    } else if (key === 'text') {
      node.textContent = String(value);
    } else if (key === 'dataset') {
      Object.assign(node.dataset, value);
    } else if (key.startsWith('on') && typeof value === 'function') {
      node.addEventListener(key.slice(2), value);
    } else {
      node.setAttribute(key, value === true ? '' : String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

// Sets `node`'s text only when it changed, so that screen readers and
// selections are not disturbed by a refresh that changed nothing.
export function setText(node, text) {
  const value = String(text);
  if (node.textContent !== value) node.textContent = value;
}

export function byId(id) {
  return document.getElementById(id);
}
