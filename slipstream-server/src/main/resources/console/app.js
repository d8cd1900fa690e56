// The console's shell: sign-in, navigation by the URL's hash, and one page at a time (each returns how to stop it).
import * as api from './api.js';
import {el, replace, message} from './dom.js';
import {runsPage} from './runs.js';
import {runPage} from './run.js';
import {quotasPage} from './quotas.js';
import {nodesPage} from './nodes.js';
import {pendingPage} from './pending.js';
import {usagePage} from './usage.js';

const main = document.getElementById('main');
let stopPage = () => {};
let who = null;

const ROUTES = [
  [/^#\/runs$/, (m, ctx) => runsPage(main, ctx)],
  [/^#\/runs\/([^/]+)$/, (m, ctx) => runPage(main, ctx, decodeURIComponent(m[1]))],
  [/^#\/quotas$/, (m, ctx) => quotasPage(main, ctx)],
  [/^#\/quotas\/([^/]+)\/([^/]+)\/pending$/, (m, ctx) => pendingPage(main, ctx, decodeURIComponent(m[1]), decodeURIComponent(m[2]))],
  [/^#\/nodes$/, (m, ctx) => nodesPage(main, ctx)],
  [/^#\/usage$/, (m, ctx) => usagePage(main, ctx)],
];

/** A 401 or 403 from any call: the token is wrong, expired, revoked or not enough; ask for one again. */
function signedOut(reason) {
  api.clearToken();
  who = null;
  showSignIn(reason);
}

function showSignIn(reason) {
  stopPage();
  stopPage = () => {};
  document.getElementById('nav').hidden = true;
  document.getElementById('sign-out').hidden = true;
  replace(document.getElementById('who'));
  const input = el('input', {id: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true,
    placeholder: 'ss_…', 'aria-label': 'API token'});
  const form = el('form', {id: 'sign-in', class: 'sign-in'},
    el('h1', {}, 'Sign in'),
    el('p', {}, 'Paste an API token (slipstream token create, or the admin token in the server\'s data directory). '
      + 'It is kept in this tab only and sent as a Bearer header.'),
    reason ? message(reason, 'error') : null,
    el('label', {for: 'token'}, 'Token'), input,
    el('button', {type: 'submit', id: 'sign-in-button'}, 'Sign in'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    api.setToken(input.value.trim());
    await start();
  });
  replace(main, form);
  input.focus();
}

async function start() {
  try {
    who = await api.get('/api/v1/whoami');
  } catch (e) {
    signedOut(e instanceof api.AuthError ? 'That token was refused: ' + e.message : 'The server cannot be reached: ' + e.message);
    return;
  }
  document.getElementById('nav').hidden = false;
  document.getElementById('nav-nodes').hidden = !who.admin;
  document.getElementById('sign-out').hidden = false;
  replace(document.getElementById('who'), who.user + (who.admin ? ' (admin)' : ''));
  if (!location.hash || location.hash === '#/') location.hash = '#/runs';
  route();
}

function route() {
  if (!who) return;
  stopPage();
  stopPage = () => {};
  const hash = location.hash || '#/runs';
  for (const link of document.querySelectorAll('#nav a')) {
    link.classList.toggle('current', hash.startsWith('#/' + link.dataset.page));
  }
  const ctx = {
    who,
    fail(error) {
      if (error instanceof api.AuthError) signedOut('Signed out: ' + error.message);
      else if (error.name !== 'AbortError') replace(main, message(error.message, 'error'));
    },
  };
  for (const [pattern, page] of ROUTES) {
    const match = hash.match(pattern);
    if (match) {
      stopPage = page(match, ctx) || (() => {});
      return;
    }
  }
  replace(main, message('No such page: ' + hash, 'error'));
}

window.addEventListener('hashchange', route);
document.getElementById('sign-out').addEventListener('click', () => signedOut(''));
if (api.token()) start(); else showSignIn('');
