// The REST API under /api/v1, called with the signed-in token. The token lives in sessionStorage (gone with the
// tab) and travels only in the Authorization header, never in a URL.
const KEY = 'slipstream.token';

export class AuthError extends Error {}

export function token() {
  return sessionStorage.getItem(KEY);
}

export function setToken(value) {
  sessionStorage.setItem(KEY, value);
}

export function clearToken() {
  sessionStorage.removeItem(KEY);
}

function headers() {
  return {Authorization: 'Bearer ' + token(), Accept: 'application/json'};
}

/** GET path as JSON; a 401 or 403 is an AuthError (the console goes back to sign-in), other errors name the API's message. */
export async function get(path, signal) {
  const response = await fetch(path, {headers: headers(), signal, cache: 'no-store'});
  if (response.status === 401 || response.status === 403) {
    throw new AuthError(await errorText(response));
  }
  if (!response.ok) {
    throw new Error(await errorText(response));
  }
  return response.json();
}

/**
 * POST body as JSON to path; the answer's JSON. A 401 is an AuthError (the console goes back to sign-in); a 403 (the
 * caller may read the run but not change it) and other errors name the API's message.
 */
export async function post(path, body) {
  const response = await fetch(path, {method: 'POST', headers: {...headers(), 'Content-Type': 'application/json'},
    body: JSON.stringify(body), cache: 'no-store'});
  if (response.status === 401) {
    throw new AuthError(await errorText(response));
  }
  if (!response.ok) {
    throw new Error(await errorText(response));
  }
  return response.json();
}

/** GET path as text (logs). */
export async function text(path, signal) {
  const response = await fetch(path, {headers: {Authorization: 'Bearer ' + token()}, signal, cache: 'no-store'});
  if (response.status === 401 || response.status === 403) throw new AuthError(await errorText(response));
  if (!response.ok) throw new Error(await errorText(response));
  return response.text();
}

async function errorText(response) {
  try {
    const body = await response.json();
    return (body.message || response.statusText) + (body.problems && body.problems.length
      ? ': ' + body.problems.map((p) => p.field + ' ' + p.message).join('; ') : '');
  } catch (e) {
    return response.status + ' ' + response.statusText;
  }
}

export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== '') search.set(key, value);
  }
  const text = search.toString();
  return text ? '?' + text : '';
}

/**
 * Follows GET /api/v1/watch (server-sent events) with fetch and a ReadableStream, since EventSource cannot send the
 * Authorization header. Calls onEvent(type, data) for each event; reconnects after the stream ends (its timeout, a
 * server restart) with a growing pause. Returns a function that stops it.
 */
export function watch(params, onEvent, onAuthError) {
  const abort = new AbortController();
  let pause = 500;
  const loop = async () => {
    while (!abort.signal.aborted) {
      try {
        const response = await fetch('/api/v1/watch' + query(params),
          {headers: {Authorization: 'Bearer ' + token(), Accept: 'text/event-stream'}, signal: abort.signal, cache: 'no-store'});
        if (response.status === 401 || response.status === 403) {
          onAuthError(new AuthError(await errorText(response)));
          return;
        }
        if (response.status >= 400 && response.status < 500 && response.status !== 429) {
          return; // asking again cannot help (a run not found, a bad filter); the page shows its own error
        }
        if (response.ok) {
          pause = 500;
          let replaced = false;
          await readEvents(response.body, (type, data) => {
            if (type === 'end' && String(data.reason).startsWith('replaced')) replaced = true;
            onEvent(type, data);
          });
          if (replaced) return; // this user's newer streams (other tabs) have the places; reload to be live again
        }
      } catch (e) {
        if (abort.signal.aborted) return;
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, 10000);
    }
  };
  loop();
  return () => abort.abort();
}

/** Parses text/event-stream: blank-line separated blocks of "event:" and "data:" lines; ":" lines are comments. */
async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const {value, done} = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let type = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) type = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) onEvent(type, JSON.parse(data.join('\n')));
    }
  }
}
