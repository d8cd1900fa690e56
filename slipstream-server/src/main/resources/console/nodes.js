// Nodes (admins): what each has and what is allocated on it, and whether it is down.
import * as api from './api.js';
import {el, replace, bar, message} from './dom.js';

export function nodesPage(main, ctx) {
  const abort = new AbortController();
  const list = el('section', {id: 'nodes'});
  replace(main, el('h1', {}, 'Nodes'), list);
  if (!ctx.who.admin) {
    replace(list, message('Nodes are shown to admins.', 'error'));
    return () => {};
  }

  async function load() {
    try {
      const [page, runs] = await Promise.all([api.get('/api/v1/nodes', abort.signal),
        api.get('/api/v1/runs' + api.query({limit: '1000', state: 'STARTING,RUNNING,TERMINATING'}), abort.signal)]);
      // Which runs hold each node: their instances of the current attempt placed there.
      const holders = new Map();
      for (const run of runs.items) {
        for (const i of run.instances || []) {
          if (i.node && i.attempt === run.attempt) {
            if (!holders.has(i.node)) holders.set(i.node, new Set());
            holders.get(i.node).add(run.id);
          }
        }
      }
      replace(list, el('div', {class: 'grid'}, page.items.map((n) => el('div', {class: 'card node-' + n.state, dataset: {node: n.name}},
        el('h3', {}, n.name, ' ', el('span', {class: 'badge node-state'}, n.state)),
        n.reason ? el('p', {class: 'reason'}, n.state.toLowerCase() + ': ' + n.reason + (n.since ? ' (since ' + n.since + ')' : '')) : null,
        bar('GPUs', n.allocated.gpu, n.capacity.gpu, 'used'),
        el('p', {class: 'muted small'}, 'cpu ' + n.allocated.cpu + ' of ' + n.capacity.cpu + ' · memory ' + n.allocated.memory + ' of '
          + n.capacity.memory + ' · ' + n.instances + ' instance(s)' + (n.capacity.gpuModel ? ' · ' + n.capacity.gpuModel : '')),
        // Where it is in the cluster's topology (block b1 · rack r2), when there is one.
        n.topology ? el('p', {class: 'small node-place'}, Object.entries(n.topology).map(([level, domain]) => level + ' ' + domain).join(' · ')) : null,
        holders.has(n.name) ? el('p', {class: 'small node-runs'}, 'runs: ', ...[...holders.get(n.name)].sort().flatMap((run, k) =>
          [k ? ', ' : '', el('a', {href: '#/runs/' + encodeURIComponent(run)}, run)])) : null))));
    } catch (e) {
      ctx.fail(e);
    }
  }

  load();
  let pending = null;
  const stopWatch = api.watch({limit: '1000', state: 'STARTING,RUNNING,TERMINATING'}, () => {
    clearTimeout(pending);
    pending = setTimeout(load, 1000);
  }, ctx.fail);
  const tick = setInterval(load, 5000); // a node declared down or up changes no run until its instances are lost
  return () => {
    abort.abort();
    stopWatch();
    clearTimeout(pending);
    clearInterval(tick);
  };
}
