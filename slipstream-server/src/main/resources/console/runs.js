// The runs list: the API's pages (newest first, cursor 'next'), filtered by workspace and state, kept live by the
// watch stream of the same query.
import * as api from './api.js';
import {el, replace, table, age, seg, message} from './dom.js';

const STATES = ['', 'QUEUED', 'STARTING', 'RUNNING', 'TERMINATING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];
const HEADERS = ['Run', 'Workspace', 'Job', 'State', 'Resources', 'Queue', 'Attempt', 'Restarts', 'Age'];

export function runsPage(main, ctx) {
  const abort = new AbortController();
  const saved = JSON.parse(sessionStorage.getItem('slipstream.runs') || '{}');
  const filter = {workspace: saved.workspace || '', state: saved.state || '', limit: saved.limit || '100'};
  const cursors = []; // the 'before' of each page shown so far: back pops one
  let before = '';
  let stopWatch = () => {};
  const rows = new Map();

  const workspace = el('select', {id: 'filter-workspace', 'aria-label': 'Workspace'}, el('option', {value: ''}, 'all workspaces'));
  const state = el('select', {id: 'filter-state', 'aria-label': 'State'},
    STATES.map((s) => el('option', {value: s}, s || 'any state')));
  const limit = el('select', {id: 'filter-limit', 'aria-label': 'Runs per page'},
    ['50', '100', '250', '1000'].map((n) => el('option', {value: n}, n + ' per page')));
  const newer = el('button', {type: 'button', id: 'page-newer'}, '← Newer');
  const older = el('button', {type: 'button', id: 'page-older'}, 'Older →');
  const where = el('span', {id: 'page-where', class: 'muted'});
  const body = el('tbody');
  const status = el('div', {id: 'runs-status'});
  const list = table(HEADERS, [], {id: 'runs', class: 'runs'});
  list.replaceChild(body, list.tBodies[0]);

  replace(main,
    el('h1', {}, 'Runs'),
    el('div', {class: 'toolbar'}, workspace, state, limit, newer, older, where, el('span', {id: 'live', class: 'live muted'}, '')),
    status, list);

  (ctx.who.admin ? api.get('/api/v1/workspaces', abort.signal).then((r) => r.items.map((w) => w.metadata.name))
    : Promise.resolve(ctx.who.workspaces)).then((names) => {
    for (const name of names) workspace.append(el('option', {value: name}, name));
    workspace.value = filter.workspace;
  }).catch(ctx.fail);
  state.value = filter.state;
  limit.value = filter.limit;

  const params = () => ({workspace: filter.workspace, state: filter.state, limit: filter.limit, before});

  async function load() {
    try {
      const page = await api.get('/api/v1/runs' + api.query(params()), abort.signal);
      rows.clear();
      body.replaceChildren(...page.items.map((run) => row(run)));
      replace(status, page.items.length ? null : message('No runs match.'),
        page.unreadable ? message(page.unreadable.length + ' run(s) cannot be read by the server (see docs/operations.md).', 'error') : null);
      older.disabled = !page.next;
      older.dataset.next = page.next || '';
      newer.disabled = cursors.length === 0;
      replace(where, 'page ' + (cursors.length + 1) + ' · ' + page.items.length + ' runs');
    } catch (e) {
      ctx.fail(e);
    }
  }

  function row(run) {
    const restarts = run.restarts ? run.restarts.failures + run.restarts.preemptions + run.restarts.nodeLost + run.restarts.hangs : 0;
    const queue = run.queue ? ['#' + run.queue.position + ' ', el('span', {class: 'reason', title: run.queue.message || ''}, run.queue.reason || '')]
      : [run.reason && run.state !== 'RUNNING' ? el('span', {class: 'reason muted', title: run.reason}, run.reason) : ''];
    const tr = el('tr', {dataset: {run: run.id, created: run.createdAt}},
      el('td', {}, el('a', {href: '#/runs/' + seg(run.id)}, run.id)),
      el('td', {}, run.workspace),
      el('td', {}, run.job),
      el('td', {class: 'state'}, el('span', {class: 'badge state-' + run.state}, run.state)),
      el('td', {class: 'resources'}, run.realTimeResources ? el('span', {class: 'badge res-' + run.realTimeResources},
        run.world && run.world.inQuota && run.world.notInQuota ? run.world.inQuota + ' InQuota + ' + run.world.notInQuota + ' NotInQuota'
          : run.realTimeResources) : ''),
      el('td', {class: 'queue'}, queue),
      el('td', {class: 'attempt num'}, String(run.attempt)),
      el('td', {class: 'restarts num', title: run.restarts ? 'failures ' + run.restarts.failures + ', preemptions ' + run.restarts.preemptions
        + ', lost nodes ' + run.restarts.nodeLost + ', hangs ' + run.restarts.hangs : ''}, String(restarts)),
      el('td', {class: 'age num', title: run.createdAt}, age(run.createdAt)));
    rows.set(run.id, tr);
    return tr;
  }

  function changed(run) {
    const old = rows.get(run.id);
    if (old) {
      old.replaceWith(row(run));
    } else if (!before && newerThanShown(run)) { // a new run: the first page shows it on top
      body.prepend(row(run));
      while (body.rows.length > Number(filter.limit)) {
        rows.delete(body.rows[body.rows.length - 1].dataset.run);
        body.deleteRow(body.rows.length - 1);
      }
    }
  }

  /**
   * Whether a run the page does not show is newer than every run it does: only such a run is new. An older one (a run
   * of a later page that changed state, or one pushed off this page) must not be put on top.
   */
  function newerThanShown(run) {
    const top = body.rows[0];
    return !top || Date.parse(run.createdAt) >= Date.parse(top.dataset.created);
  }

  function follow() {
    stopWatch();
    const live = document.getElementById('live');
    stopWatch = api.watch(params(), (type, data) => {
      if (type === 'ready') {
        replace(live, '● live');
        load(); // what changed between the page's load and the stream's start
      } else if (type === 'run') {
        changed(data);
      } else if (type === 'gone') {
        const old = rows.get(data.id); // it no longer matches the filter, or newer runs pushed it off this page
        if (old) {
          old.remove();
          rows.delete(data.id);
        }
      } else if (type === 'end') {
        replace(live, String(data.reason).startsWith('replaced') ? '○ not live: other tabs hold this user’s streams' : '○ reconnecting');
      }
    }, ctx.fail);
  }

  function refilter() {
    filter.workspace = workspace.value;
    filter.state = state.value;
    filter.limit = limit.value;
    sessionStorage.setItem('slipstream.runs', JSON.stringify(filter));
    cursors.length = 0;
    before = '';
    load();
    follow();
  }
  workspace.addEventListener('change', refilter);
  state.addEventListener('change', refilter);
  limit.addEventListener('change', refilter);
  older.addEventListener('click', () => {
    cursors.push(before);
    before = older.dataset.next;
    load();
    follow();
  });
  newer.addEventListener('click', () => {
    before = cursors.pop() || '';
    load();
    follow();
  });

  load();
  follow();
  const tick = setInterval(() => {
    for (const tr of body.rows) {
      const cell = tr.querySelector('td.age');
      if (cell) cell.textContent = age(cell.title);
    }
  }, 5000);
  return () => {
    abort.abort();
    stopWatch();
    clearInterval(tick);
  };
}
