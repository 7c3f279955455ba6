// Light and dark: the system's preference (prefers-color-scheme) until the
// reader presses the toggle; that choice is remembered. style.css keys
// its colours off <html data-theme>.
const STORAGE_KEY = 'gleaner.theme';
const listeners = [];
let button = null;

function systemTheme() {
  return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

function storedTheme() {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

export function theme() {
  return document.documentElement.dataset.theme;
}

function apply(next) {
  document.documentElement.dataset.theme = next;
  if (button) button.setAttribute('aria-pressed', String(next === 'dark'));
  for (const listener of listeners) listener(next);
}

// `asked`: the fragment's theme (#theme=dark), if any.
export function initTheme(toggle, asked) {
  button = toggle;
  const choice = ['light', 'dark'].includes(asked) ? asked : storedTheme();
  apply(['light', 'dark'].includes(choice) ? choice : systemTheme());
  toggle.addEventListener('click', () => {
    const next = theme() === 'dark' ? 'light' : 'dark';
    try {
      localStorage.setItem(STORAGE_KEY, next);
    } catch {
      // Not remembered; the page still switches.
    }
    apply(next);
  });
  // Follow the system while the reader has not chosen.
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    if (!storedTheme()) apply(systemTheme());
  });
}

export function onThemeChange(listener) {
  listeners.push(listener);
}

// A colour style.css defines, e.g. cssColor('--spark-line').
export function cssColor(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}
