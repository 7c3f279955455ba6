// Every string the page shows, in English and 简体中文. They live in one
// file, ui/strings.json, and a unit test (tests/ui) holds both languages
// to the same keys and placeholders and checks that every key the page
// uses exists. Keys are always written out in full ('jobs.title'), never
// pieced together, so that the test can find them.
//
// The language is the URL fragment's (#lang=zh-CN), else the one chosen
// before (localStorage), else the browser's.

export const LANGUAGES = ['en', 'zh-CN'];
const STORAGE_KEY = 'gleaner.lang';

let strings = {};
let current = 'en';
const listeners = [];

export async function loadStrings() {
  const response = await fetch('/ui/strings.json', {cache: 'no-cache'});
  if (!response.ok) throw new Error(`strings.json: ${response.status}`);
  strings = await response.json();
}

export function language() {
  return current;
}

// The language to start in; `asked` is the fragment's, if any.
export function startingLanguage(asked) {
  if (LANGUAGES.includes(asked)) return asked;
  let stored = null;
  try {
    stored = localStorage.getItem(STORAGE_KEY);
  } catch {
    // Storage refused (a privacy setting): the browser's language decides.
  }
  if (LANGUAGES.includes(stored)) return stored;
  return (navigator.language || '').toLowerCase().startsWith('zh') ? 'zh-CN' : 'en';
}

// Switches the page to `lang`, remembers the choice, and tells every
// listener (the parts of the page drawn from data) to draw again.
export function setLanguage(lang, remember = true) {
  if (!LANGUAGES.includes(lang)) return;
  current = lang;
  if (remember) {
    try {
      localStorage.setItem(STORAGE_KEY, lang);
    } catch {
      // Not remembered; the page still switches.
    }
  }
  document.documentElement.lang = lang;
  translateStatic(document);
  for (const listener of listeners) listener(lang);
}

export function onLanguageChange(listener) {
  listeners.push(listener);
}

// The string for `key` in the current language, with {name} placeholders
// filled from `params`.
export function t(key, params = {}) {
  const text = strings[current]?.[key] ?? strings.en?.[key];
  if (text === undefined) {
    console.warn(`gleaner: no string ${key}`);
    return key;
  }
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

// Fills every data-i18n element's text, and every data-i18n-attr
// ("attr:key;attr:key") attribute, under `root`.
export function translateStatic(root) {
  for (const node of root.querySelectorAll('[data-i18n]')) {
    const text = t(node.dataset.i18n);
    if (node.textContent !== text) node.textContent = text;
  }
  for (const node of root.querySelectorAll('[data-i18n-attr]')) {
    for (const pair of node.dataset.i18nAttr.split(';')) {
      const [attribute, key] = pair.split(':');
      node.setAttribute(attribute, t(key));
    }
  }
}
