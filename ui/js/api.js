// gleaner's API (docs/api.md) from the browser: JSON over fetch, with the
// reader's token when there is one. Failures are ApiErrors carrying the
// HTTP status (0: the server could not be reached) and gleaner's message.
import {token} from './auth.js';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function call(method, path) {
  const headers = {Accept: 'application/json'};
  const secret = token();
  if (secret) headers.Authorization = `Bearer ${secret}`;
  let response;
  try {
    response = await fetch(path, {method, headers, cache: 'no-store'});
  } catch (error) {
    throw new ApiError(0, 'UNREACHABLE', String(error));
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    // Not JSON: the status says enough.
  }
  if (!response.ok) {
    const problem = body?.error ?? {};
    throw new ApiError(response.status, problem.code ?? '', problem.message ?? response.statusText);
  }
  return body;
}

export function getJson(path) {
  return call('GET', path);
}

export function post(path) {
  return call('POST', path);
}
