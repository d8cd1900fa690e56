// Quotas as their tree (parent → children) with each quota's live figures as bars, and the sharing pools.
import * as api from './api.js';
import {el, replace, bar, table, seg, message} from './dom.js';

export function quotasPage(main, ctx) {
  const abort = new AbortController();
  const tree = el('section', {id: 'quota-tree'});
  const pools = el('section', {id: 'pools'});
  replace(main, el('h1', {}, 'Quotas'),
    el('p', {class: 'muted'}, 'GPUs per quota: guaranteed, used (in quota and borrowed), lent to others and pending. '
      + 'Bars are scaled to the largest figure of their quota. A quota\'s share of idle capacity is what it holds beyond its '
      + 'guarantee over what its pool could lend, divided by its weight: lowest share borrows first. Its fair share is what each quota of its level that wants idle '
      + 'capacity would hold, were what they borrow divided by weight: a quota above it may lose borrowed runs to one below.'), tree, pools);

  async function load() {
    try {
      const [quotas, poolList] = await Promise.all([api.get('/api/v1/quotas', abort.signal), api.get('/api/v1/pools', abort.signal)]);
      showTree(quotas.items);
      showPools(poolList.items);
    } catch (e) {
      ctx.fail(e);
    }
  }

  function showTree(items) {
    const key = (q) => q.metadata.workspace + '/' + q.metadata.name;
    const byKey = new Map(items.map((q) => [key(q), q]));
    const children = new Map();
    const roots = [];
    for (const q of items) {
      const parent = q.spec && q.spec.parent ? (q.spec.parent.includes('/') ? q.spec.parent : q.metadata.workspace + '/' + q.spec.parent) : null;
      if (parent && byKey.has(parent)) {
        if (!children.has(parent)) children.set(parent, []);
        children.get(parent).push(q);
      } else {
        roots.push(q); // a top-level quota, or one whose parent this token may not see
      }
    }
    const node = (q) => el('li', {class: 'quota', dataset: {quota: key(q)}}, card(q),
      children.has(key(q)) ? el('ul', {class: 'tree'}, children.get(key(q)).map(node)) : null);
    replace(tree, items.length ? el('ul', {class: 'tree root'}, roots.map(node)) : message('No quotas this token may see.'));
  }

  function card(q) {
    const s = q.status || {};
    const gpu = (r) => (r ? r.gpu : 0);
    const figures = [gpu(s.guaranteed), gpu(s.used), gpu(s.borrowed), gpu(s.lent), gpu(s.pending), gpu(s.max)];
    const scale = Math.max(1, ...figures);
    return el('div', {class: 'card'},
      el('h3', {}, q.metadata.workspace + ' / ' + q.metadata.name, ' ',
        el('span', {class: 'muted'}, (q.spec && q.spec.type) || 'General', s.pool ? ' · pool ' + s.pool : '')),
      s.guaranteed ? [
        bar('guaranteed', gpu(s.guaranteed), scale, 'guaranteed'),
        bar('used', gpu(s.used), scale, 'used'),
        bar('borrowed', gpu(s.borrowed), scale, 'borrowed'),
        bar('lent', gpu(s.lent), scale, 'lent'),
        bar('pending', gpu(s.pending), scale, 'pending'),
        el('p', {class: 'muted small'}, 'cpu used ' + (s.used ? s.used.cpu : '0') + ' of ' + (s.guaranteed ? s.guaranteed.cpu : '0')
          + ' guaranteed · share of idle capacity ' + share(s) + ' · ' + (s.admittedRuns || 0) + ' admitted, ' + (s.pendingRuns || 0) + ' pending runs · ',
          el('a', {href: '#/quotas/' + seg(q.metadata.workspace) + '/' + seg(q.metadata.name) + '/pending'}, 'pending queue'))]
        : el('p', {class: 'muted'}, 'no live figures yet (no scheduling cycle has seen it)'));
  }

  // The quota's weighted share of its pool's idle capacity; the API leaves it out while it is infinite (weight 0, borrowing).
  // Beside it, its fair share: what its level's quotas that want idle capacity would each hold, divided by weight.
  function share(s) {
    const mine = typeof s.weightedShare === 'number' ? s.weightedShare.toFixed(2) : 'infinite (weight 0)';
    return typeof s.fairShare === 'number' ? mine + ' (fair ' + s.fairShare.toFixed(2) + ')' : mine;
  }

  function showPools(items) {
    replace(pools, el('h2', {}, 'Sharing pools'), table(['Pool', 'GPUs guaranteed', 'lendable', 'used', 'in quota', 'borrowed', 'lent', 'pending', 'runs'],
      items.map((p) => el('tr', {dataset: {pool: p.name}}, el('td', {}, p.name),
        ...[p.guaranteed, p.lendable, p.used, p.inQuota, p.borrowed, p.lent, p.pending].map((r) => el('td', {class: 'num'}, String(r ? r.gpu : 0))),
        el('td', {class: 'num'}, p.admittedRuns + ' admitted, ' + p.pendingRuns + ' pending')))));
  }

  load();
  let pending = null;
  const stopWatch = api.watch({limit: '1000', state: 'QUEUED,STARTING,RUNNING,TERMINATING'}, () => {
    clearTimeout(pending);
    pending = setTimeout(load, 1000); // figures follow the runs; at most one read a second
  }, ctx.fail);
  return () => {
    abort.abort();
    stopWatch();
    clearTimeout(pending);
  };
}
