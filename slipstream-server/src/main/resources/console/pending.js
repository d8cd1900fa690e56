// A quota's pending queue, in the order the scheduler takes it, with why each run waits.
import * as api from './api.js';
import {el, replace, table, seg, message} from './dom.js';

export function pendingPage(main, ctx, workspace, quota) {
  const abort = new AbortController();
  const list = el('section', {id: 'pending'});
  replace(main, el('p', {}, el('a', {href: '#/quotas'}, '← Quotas')), el('h1', {}, 'Pending in ' + workspace + ' / ' + quota), list);

  async function load() {
    try {
      const page = await api.get('/api/v1/workspaces/' + seg(workspace) + '/quotas/' + seg(quota) + '/pending', abort.signal);
      replace(list, page.items.length ? table(['#', 'Run', 'Job', 'Priority', 'Asks', 'Idle resources', 'Reason', 'Waiting since'],
        page.items.map((p) => el('tr', {dataset: {run: p.id}},
          el('td', {class: 'num'}, p.position === null || p.position === undefined ? '…' : String(p.position)),
          el('td', {}, el('a', {href: '#/runs/' + seg(p.id)}, p.id)), el('td', {}, p.job), el('td', {class: 'num'}, String(p.priority)),
          el('td', {}, 'gpu ' + p.resources.gpu + ', cpu ' + p.resources.cpu + ', memory ' + p.resources.memory),
          el('td', {}, p.idleResources || ''), el('td', {class: 'reason', title: p.message || ''}, (p.reason || '') + (p.message ? ': ' + p.message : '')),
          el('td', {title: p.createdAt}, p.createdAt))), {id: 'pending-runs'}) : message('Nothing waits in this quota.'));
    } catch (e) {
      ctx.fail(e);
    }
  }

  load();
  let pending = null;
  const stopWatch = api.watch({workspace, state: 'QUEUED', limit: '1000'}, () => {
    clearTimeout(pending);
    pending = setTimeout(load, 300);
  }, ctx.fail);
  return () => {
    abort.abort();
    stopWatch();
    clearTimeout(pending);
  };
}
