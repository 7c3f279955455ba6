// The reader's token. It arrives in the URL fragment (#token=glt_..., which
// browsers never send to a server; main.js takes it out of the address bar
// at once) or through the login form, lives in sessionStorage (gone when
// the tab closes), and goes out as "Authorization: Bearer" on every call.
import {byId} from './dom.js';
import {t} from './i18n.js';

const STORAGE_KEY = 'gleaner.token';
// What `gleaner token create` prints: glt_ and 64 hex digits.
const TOKEN_SHAPE = /^glt_[0-9a-f]{64}$/;
let unstored = '';  // where sessionStorage is refused

export function looksLikeToken(text) {
  return TOKEN_SHAPE.test(text);
}

export function token() {
  try {
    return sessionStorage.getItem(STORAGE_KEY) ?? '';
  } catch {
    return unstored;
  }
}

export function setToken(value) {
  unstored = value;
  try {
    sessionStorage.setItem(STORAGE_KEY, value);
  } catch {
    // Kept in memory only: this page load.
  }
}

export function clearToken() {
  unstored = '';
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // Nothing stored.
  }
}

// Shows the login form; `messageKey` says why (a rejected or expired
// token), or is empty on a first visit.
export function showLogin(messageKey = '') {
  byId('dashboard').hidden = true;
  byId('login').hidden = false;
  byId('login-error').textContent = messageKey ? t(messageKey) : '';
  byId('token-input').value = '';
  byId('token-input').focus();
}

export function hideLogin() {
  byId('login').hidden = true;
  byId('dashboard').hidden = false;
}

// Calls `tryToken(token)` when the form is sent with a well-formed token;
// it resolves to '' when the token was accepted, or to the key of the
// message that says why not.
export function initLoginForm(tryToken) {
  byId('login-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const typed = byId('token-input').value.trim();
    const error = byId('login-error');
    if (!looksLikeToken(typed)) {
      error.textContent = t('auth.malformed');
      return;
    }
    error.textContent = t('auth.checking');
    const problem = await tryToken(typed);
    error.textContent = problem ? t(problem) : '';
  });
}
