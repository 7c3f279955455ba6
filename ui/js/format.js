// Numbers, sizes, money, spans and times in the reader's language.
import {language, t} from './i18n.js';

export function number(value, digits = 0) {
  return new Intl.NumberFormat(language(), {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(value);
}

// `pct` is 0–100, as the API gives it.
export function percent(pct, digits = 0) {
  return new Intl.NumberFormat(language(), {
    style: 'percent',
    maximumFractionDigits: digits,
  }).format(pct / 100);
}

export function gib(bytes) {
  return t('units.gib', {n: number(bytes / 2 ** 30, 1)});
}

export function money(amount, currency) {
  try {
    return new Intl.NumberFormat(language(), {style: 'currency', currency}).format(amount);
  } catch {
    // An unknown currency code: the number and the code.
    return `${number(amount, 2)} ${currency}`;
  }
}

export function gpuHours(hours) {
  return t('units.gpu_hours', {n: number(hours, hours < 10 ? 2 : 1)});
}

// A span such as "3 h 12 min", coarser the longer it is.
export function duration(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return t('units.seconds', {n: s});
  if (s < 3600) return t('units.minutes', {n: Math.floor(s / 60)});
  if (s < 86400) return t('units.hours_minutes', {h: Math.floor(s / 3600), m: Math.floor((s % 3600) / 60)});
  return t('units.days_hours', {d: Math.floor(s / 86400), h: Math.floor((s % 86400) / 3600)});
}

// Seconds from an RFC 3339 time until now.
export function secondsSince(iso) {
  const at = Date.parse(iso);
  return Number.isNaN(at) ? 0 : (Date.now() - at) / 1000;
}

export function clockTime(date) {
  return date.toLocaleTimeString(language());
}

export function dateTime(iso) {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : at.toLocaleString(language());
}
