// Usage charts: per quota or (admins) per sharing pool or for the cluster, a day by hour, a week by six hours or a month
// by day: GPUs held in quota, borrowed and lent, the queue's length and the waits, from GET /api/v1/usage/series.
// Drawn as SVG with DOM calls (no library, nothing to build; the CSP allows no inline script or style, and colours
// come from console.css classes). Every figure drawn is also in the element's data-* attributes and its tooltip, and
// the window's totals, the usage report's own figures, are in a table beside each chart.
import * as api from './api.js';
import {el, svg, replace, message} from './dom.js';

const WIDTH = 720;
const GPU_HEIGHT = 140;
const QUEUE_HEIGHT = 70;
const LEFT = 44;
const KINDS = [['inQuota', 'in quota'], ['borrowed', 'borrowed']];
// What each window is: a month is 30 UTC days, not a calendar month.
const WINDOWS = [['day', 'last 24 hours'], ['week', 'last 7 days'], ['month', 'last 30 days']];

export function usagePage(main, ctx) {
  const abort = new AbortController();
  const windowSelect = el('select', {id: 'usage-window', 'aria-label': 'window'},
    WINDOWS.map(([w, label]) => el('option', {value: w}, label)));
  // A pool's and the cluster's figures hold other teams' usage: the server answers them to admins only.
  const bySelect = el('select', {id: 'usage-by', 'aria-label': 'series of'},
    el('option', {value: 'quota'}, 'per quota'),
    ctx.who.admin ? [el('option', {value: 'pool'}, 'per sharing pool'), el('option', {value: 'cluster'}, 'cluster')] : null);
  const where = el('span', {id: 'usage-where', class: 'muted'});
  const charts = el('section', {id: 'usage-charts'});
  replace(main, el('h1', {}, 'Usage'),
    el('p', {class: 'muted'}, 'Average GPUs held per step: on the quota\'s guarantee (green), on borrowed idle capacity (orange), '
      + 'and of its guarantee lent to borrowers (purple line). Below: the queue\'s average length, and the runs that started '
      + 'after waiting (mean and longest wait in the tooltip). The totals are the usage report\'s for the same window.'),
    el('div', {class: 'toolbar'}, windowSelect, bySelect, where), charts);

  let loads = 0;
  async function load() {
    const mine = ++loads;
    // An answer to an older choice, come late, is not shown: neither its figures nor its failure.
    try {
      const query = new URLSearchParams({window: windowSelect.value, by: bySelect.value});
      const data = await api.get('/api/v1/usage/series?' + query, abort.signal);
      if (mine === loads) show(data);
    } catch (e) {
      if (mine === loads) ctx.fail(e);
    }
  }

  function show(data) {
    charts.dataset.since = data.since;
    charts.dataset.until = data.until;
    charts.dataset.window = data.window;
    charts.dataset.by = data.by;
    charts.dataset.stepHours = data.stepHours;
    replace(where, data.since.replace('T', ' ').slice(0, 16) + ' – ' + data.until.replace('T', ' ').slice(0, 16) + ' UTC, in steps of '
      + data.stepHours + ' h');
    if (!data.series.length) {
      replace(charts, message('No usage in this window that this token may see.'));
      return;
    }
    replace(charts, data.series.map((s) => seriesCard(data, s)));
  }

  windowSelect.addEventListener('change', load);
  bySelect.addEventListener('change', load);
  load();
  return () => abort.abort();
}

function seriesName(data, s) {
  if (data.by === 'cluster') return 'cluster';
  if (data.by === 'pool') return s.pool;
  return s.workspace + '/' + (s.quota === undefined ? '(no quota)' : s.quota);
}

function seriesCard(data, s) {
  const name = seriesName(data, s);
  const title = data.by === 'quota' && s.pool ? [name, ' ', el('span', {class: 'muted'}, '· pool ' + s.pool)] : name;
  return el('section', {class: 'card usage-card', dataset: {series: name}},
    el('h3', {}, title),
    el('div', {class: 'usage-figures'},
      el('div', {}, gpuChart(data, s), queueChart(data, s)),
      totalsTable(data, s)));
}

/** Stacked bars (in quota, borrowed) per step, the lent GPUs as a line, and for the cluster its capacity. */
function gpuChart(data, s) {
  const capacity = data.capacityGpu;
  const top = Math.max(1, capacity || 0, ...s.points.map((p) => Math.max(p.inQuota + p.borrowed, p.lent)));
  const scale = (GPU_HEIGHT - 14) / top;
  const step = (WIDTH - LEFT) / data.buckets.length; // the steps after now have no point
  const bars = [];
  s.points.forEach((p, i) => {
    let base = GPU_HEIGHT;
    for (const [kind, label] of KINDS) {
      const height = p[kind] * scale;
      base -= height;
      if (p[kind] > 0) {
        bars.push(svg('rect', {class: 'usage-' + kind, x: LEFT + i * step + 1, y: base, width: Math.max(1, step - 2), height,
          dataset: {bucket: data.buckets[i], kind, value: p[kind], hours: p.hours}}, svg('title', {}, when(data.buckets[i]) + ': ' + fixed(p[kind]) + ' GPUs ' + label)));
      }
    }
  });
  const lent = s.points.map((p, i) => (LEFT + (i + 0.5) * step) + ',' + (GPU_HEIGHT - p.lent * scale)).join(' ');
  return svg('svg', {class: 'usage-chart gpu-chart', viewBox: '0 0 ' + WIDTH + ' ' + (GPU_HEIGHT + 16), role: 'img',
    'aria-label': 'GPUs held per step: ' + seriesTotals(s)},
  axis(top, GPU_HEIGHT, 'GPUs'),
  bars,
  s.points.some((p) => p.lent > 0) ? svg('polyline', {class: 'usage-lent', points: lent},
    svg('title', {}, 'lent: ' + s.points.map((p) => fixed(p.lent)).join(', '))) : null,
  capacity ? svg('line', {class: 'usage-capacity', x1: LEFT, x2: WIDTH, y1: GPU_HEIGHT - capacity * scale, y2: GPU_HEIGHT - capacity * scale,
    dataset: {value: capacity}}, svg('title', {}, 'capacity: ' + capacity + ' GPUs')) : null,
  ticks(data, step, GPU_HEIGHT));
}

/** The queue's average length per step; a dot on each step where waits ended. */
function queueChart(data, s) {
  const top = Math.max(1, ...s.points.map((p) => p.queued));
  const scale = (QUEUE_HEIGHT - 12) / top;
  const step = (WIDTH - LEFT) / data.buckets.length; // the steps after now have no point
  return svg('svg', {class: 'usage-chart queue-chart', viewBox: '0 0 ' + WIDTH + ' ' + QUEUE_HEIGHT, role: 'img',
    'aria-label': 'queue length and waits per step'},
  axis(top, QUEUE_HEIGHT, 'queued'),
  s.points.map((p, i) => [
    p.queued > 0 ? svg('rect', {class: 'usage-queued', x: LEFT + i * step + 1, y: QUEUE_HEIGHT - p.queued * scale, width: Math.max(1, step - 2),
      height: p.queued * scale, dataset: {bucket: data.buckets[i], kind: 'queued', value: p.queued}},
    svg('title', {}, when(data.buckets[i]) + ': ' + fixed(p.queued) + ' runs queued on average, asking ' + fixed(p.queuedGpu) + ' GPUs')) : null,
    p.waits > 0 ? svg('circle', {class: 'usage-wait', cx: LEFT + (i + 0.5) * step, cy: 5, r: 3.5,
      dataset: {bucket: data.buckets[i], kind: 'waits', value: p.waits, mean: p.meanWaitHours, longest: p.longestWaitHours}},
    svg('title', {}, when(data.buckets[i]) + ': ' + p.waits + ' started after waiting ' + duration(p.meanWaitHours) + ' on average, '
      + duration(p.longestWaitHours) + ' the longest')) : null,
  ]));
}

function axis(top, height, label) {
  return [
    svg('line', {class: 'usage-axis', x1: LEFT, x2: WIDTH, y1: height, y2: height}),
    svg('text', {class: 'usage-label', x: LEFT - 4, y: 10, 'text-anchor': 'end'}, fixed(top)),
    svg('text', {class: 'usage-label', x: LEFT - 4, y: height - 2, 'text-anchor': 'end'}, label),
  ];
}

/** A few of the steps' start times along the bottom. */
function ticks(data, step, height) {
  const every = Math.ceil(data.buckets.length / 8);
  return data.buckets.map((b, i) => (i % every === 0
    ? svg('text', {class: 'usage-label', x: LEFT + i * step, y: height + 12}, data.window === 'month' ? b.slice(5, 10) : when(b)) : null));
}

/** The window's totals: the usage report's figures for the same window. */
function totalsTable(data, s) {
  const t = s.totals;
  const row = (label, figure, value, text) => el('tr', {}, el('th', {}, label),
    el('td', {class: 'num', dataset: {figure, value: value === undefined ? '' : value}}, text === undefined ? fixed(value) : text));
  return el('table', {class: 'usage-totals'},
    el('caption', {}, 'In the window'),
    el('tbody', {},
      row('GPU-hours in quota', 'inQuota', t.gpuHours.inQuota),
      row('GPU-hours borrowed', 'borrowed', t.gpuHours.borrowed),
      row('GPU-hours lent', 'lent', t.gpuHours.lent),
      row('GPU-hours lost', 'lostToPreemption', t.gpuHours.lostToPreemption),
      row('run-hours queued', 'queuedHours', t.queued.hours),
      row('GPU-hours asked, queued', 'queuedGpuHours', t.queued.gpuHours),
      row('runs started after waiting', 'waits', t.waits, String(t.waits)),
      row('mean wait', 'meanWaitHours', t.meanWaitHours, duration(t.meanWaitHours)),
      row('longest wait', 'longestWaitHours', t.longestWaitHours, duration(t.longestWaitHours)),
      data.capacityGpu && utilization(data, s) !== null ? row('utilization of ' + data.capacityGpu + ' GPUs', 'utilization',
        utilization(data, s), (100 * utilization(data, s)).toFixed(1) + ' %') : null));
}

/**
 * GPU-hours held over the GPU-hours the nodes have now, over the window until now (the points' hours: the hours still
 * to come are no idle capacity yet); null before anything happened.
 */
function utilization(data, s) {
  const hours = s.points.reduce((sum, p) => sum + p.hours, 0);
  return hours > 0 ? (s.totals.gpuHours.inQuota + s.totals.gpuHours.borrowed) / (data.capacityGpu * hours) : null;
}

function seriesTotals(s) {
  return fixed(s.totals.gpuHours.inQuota) + ' GPU-hours in quota, ' + fixed(s.totals.gpuHours.borrowed) + ' borrowed, '
    + fixed(s.totals.gpuHours.lent) + ' lent';
}

function fixed(x) {
  return x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
}

function when(iso) {
  return iso.slice(5, 16).replace('T', ' ');
}

function duration(hours) {
  if (hours === undefined || hours === null) return '–';
  if (hours < 1 / 60) return Math.round(hours * 3600) + 's';
  if (hours < 1) return Math.round(hours * 60) + 'm';
  return hours.toFixed(1) + 'h';
}
