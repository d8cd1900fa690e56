// One run: what it is and holds, its node groups and instances (every attempt), its events and an instance's live log.
import * as api from './api.js';
import {el, replace, table, age, seg, message} from './dom.js';

const FINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);
const MAX_LOG_CHARS = 200000; // the page keeps the tail of a log: a chatty workload must not exhaust the tab

export function runPage(main, ctx, id) {
  const abort = new AbortController();
  const path = '/api/v1/runs/' + seg(id);
  const summary = el('section', {id: 'run-summary'});
  const actions = el('div', {id: 'run-actions', class: 'actions'});
  const groups = el('section', {id: 'run-groups'});
  const instances = el('section', {id: 'run-instances'});
  const events = el('section', {id: 'run-events'});
  const logTitle = el('h2', {}, 'Logs');
  const logText = el('pre', {id: 'log', class: 'log', tabindex: '0'});
  const logs = el('section', {id: 'run-logs'}, logTitle, el('p', {class: 'muted'}, 'Choose an instance’s Logs to follow its output.'), logText);
  let logAbort = null;
  let stopWatch = () => {};

  replace(main, el('p', {}, el('a', {href: '#/runs'}, '← Runs')), el('h1', {}, 'Run ', el('code', {}, id)),
    actions, summary, el('div', {class: 'columns'}, el('div', {}, groups, instances), events), logs);

  async function load() {
    try {
      const [run, history] = await Promise.all([api.get(path, abort.signal), api.get(path + '/events?limit=1000', abort.signal)]);
      showRun(run);
      showEvents(history.items);
    } catch (e) {
      ctx.fail(e);
    }
  }

  /** Cancel, for a run not ended: asked to confirm first (the server says whether this caller may). */
  function showActions(run) {
    if (FINAL.has(run.state) || run.cancelRequestedAt) {
      replace(actions, run.cancelRequestedAt && !FINAL.has(run.state)
        ? el('p', {class: 'muted', id: 'cancel-requested'}, 'Cancel requested at ' + run.cancelRequestedAt + ': waiting for every process to stop.')
        : null);
      return;
    }
    replace(actions, el('button', {type: 'button', id: 'cancel-run', onclick: cancel}, 'Cancel run'));
  }

  async function cancel() {
    if (!window.confirm('Cancel run ' + id + '? Its processes get SIGTERM, then SIGKILL after the grace period.')) {
      return;
    }
    try {
      await api.post(path + '/cancel', {});
      load();
    } catch (e) {
      if (e instanceof api.AuthError) {
        ctx.fail(e);
      } else {
        replace(actions, message('Not cancelled: ' + e.message, 'error'));
      }
    }
  }

  function showRun(run) {
    showActions(run);
    const p = run.progress || {};
    const r = run.restarts || {};
    replace(summary, el('dl', {class: 'facts'},
      fact('Workspace / job', run.workspace + ' / ' + run.job),
      fact('State', el('span', {class: 'badge state-' + run.state, id: 'run-state'}, run.state)),
      fact('Resources', resources(run)),
      run.world ? fact('World', el('span', {id: 'run-world'}, run.world.size + ' instance(s) of ' + run.world.minimum + ' to ' + run.world.maximum
        + ', world ' + run.world.version + (run.world.changing ? ' (changing)' : ''))) : null,
      fact('Reason', run.reason || '—'),
      run.queue ? fact('Queue', '#' + run.queue.position + ' ' + (run.queue.reason || '') + (run.queue.message ? ': ' + run.queue.message : '')) : null,
      fact('Attempt', String(run.attempt)),
      fact('Restarts', 'failures ' + (r.failures || 0) + ', preemptions ' + (r.preemptions || 0) + ', lost nodes ' + (r.nodeLost || 0)
        + ', hangs ' + (r.hangs || 0) + (r.retryAt ? ', next try ' + r.retryAt : '')),
      r.lastError ? fact('Last error', r.lastError + (r.sameErrorCount > 1 ? ' (' + r.sameErrorCount + ' times in a row)' : '')) : null,
      fact('Progress', p.step === null || p.step === undefined ? 'none reported' : 'step ' + p.step
        + (p.checkpointStep !== null && p.checkpointStep !== undefined ? ', checkpoint at step ' + p.checkpointStep : '')),
      fact('Work lost', (p.workLostSeconds || 0).toFixed(1) + ' instance-seconds'),
      fact('Submitted by', run.submittedBy || '—'),
      fact('Created', run.createdAt + ' (' + age(run.createdAt) + ' ago)'),
      run.finishedAt ? fact('Finished', run.finishedAt) : null));
    replace(groups, el('h2', {}, 'Node groups'), table(['Group', 'Replicas', 'Pending', 'Starting', 'Running', 'Succeeded', 'Failed', 'Stopped'],
      (run.nodeGroups || []).map((g) => el('tr', {}, el('td', {}, g.name),
        el('td', {class: 'num'}, g.minReplicas ? g.minReplicas + ' to ' + g.replicas : String(g.replicas)),
        ...[g.pending, g.starting, g.running, g.succeeded, g.failed, g.stopped].map((n) => el('td', {class: 'num'}, String(n)))))));
    const sorted = [...(run.instances || [])].sort((a, b) => b.attempt - a.attempt || a.rank - b.rank);
    replace(instances, el('h2', {}, 'Instances'), table(['Instance', 'Attempt', 'Node', 'State', 'Exit', 'Peak memory', 'CPU', 'Reason', 'Started', ''],
      sorted.map((i) => {
        const name = i.nodeGroup + '-' + i.groupRank;
        return el('tr', {dataset: {instance: name, attempt: String(i.attempt)}},
          el('td', {}, name), el('td', {class: 'num'}, String(i.attempt)),
          el('td', {class: 'node'}, i.node ? i.node : el('span', {class: 'muted', title: 'node names are shown to the owners of the capacity'}, 'hidden')),
          el('td', {class: 'state'}, el('span', {class: 'badge istate-' + i.state}, i.state)),
          el('td', {class: 'num'}, exitText(i)),
          el('td', {class: 'num memory-peak', title: i.memoryPeak || ''}, i.memoryPeak ? memoryText(i.memoryPeak) : ''),
          el('td', {class: 'num cpu'}, i.cpuSeconds === null || i.cpuSeconds === undefined ? '' : cpuText(i.cpuSeconds)),
          el('td', {class: 'reason'}, i.reason || ''),
          el('td', {title: i.startedAt || ''}, i.startedAt ? age(i.startedAt) + ' ago' : ''),
          el('td', {}, el('button', {type: 'button', class: 'logs-button', onclick: () => followLog(name, i.attempt)}, 'Logs')));
      }), {id: 'instances'}));
  }

  /** Where its resources are: an elastic run's instances each stand on their own ("2 InQuota + 6 NotInQuota"). */
  function resources(run) {
    if (!run.realTimeResources) {
      return '—';
    }
    const w = run.world;
    const text = w && w.inQuota && w.notInQuota ? w.inQuota + ' InQuota + ' + w.notInQuota + ' NotInQuota' : run.realTimeResources;
    return el('span', {class: 'badge res-' + run.realTimeResources, id: 'run-resources'}, text);
  }

  /** "137 (OOMKilled)": the exit code, with the end cause where the executor knew one. */
  function exitText(i) {
    const code = i.exitCode === null || i.exitCode === undefined ? '' : String(i.exitCode);
    return i.endCause ? (code + ' (' + i.endCause + ')').trim() : code;
  }

  /** "1.5 GiB": a measured memory peak (a quantity such as "1536Mi" or bytes), to a tenth in the largest binary unit. */
  function memoryText(quantity) {
    const units = {'': 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, Pi: 1024 ** 5, Ei: 1024 ** 6};
    const m = /^(\d+)([KMGTPE]i)?$/.exec(quantity);
    if (!m) {
      return quantity;
    }
    const bytes = Number(m[1]) * units[m[2] || ''];
    const unit = ['Ti', 'Gi', 'Mi', 'Ki'].find((u) => bytes >= units[u]);
    return unit ? (bytes / units[unit]).toFixed(1) + ' ' + unit + 'B' : bytes + ' B';
  }

  /** "12m 5s": CPU time, from seconds. */
  function cpuText(seconds) {
    if (seconds < 60) {
      return seconds.toFixed(1) + 's';
    }
    const whole = Math.round(seconds);
    return whole < 3600 ? Math.floor(whole / 60) + 'm ' + (whole % 60) + 's' : Math.floor(whole / 3600) + 'h ' + Math.floor(whole % 3600 / 60) + 'm';
  }

  function showEvents(items) {
    replace(events, el('h2', {}, 'Events'), el('ol', {class: 'timeline', id: 'events'}, items.map((e) => el('li', {},
      el('time', {datetime: e.time, title: e.time}, new Date(e.time).toLocaleTimeString()), ' ',
      el('strong', {}, e.type), e.state ? ' → ' + e.state : '', e.instance ? ' [' + e.instance + ']' : '',
      e.reason ? el('span', {class: 'reason'}, ' ' + e.reason) : null, e.message ? el('div', {class: 'muted'}, e.message) : null))));
  }

  /** Streams ?follow=true as it comes, appending text (never HTML) and keeping the last MAX_LOG_CHARS. */
  async function followLog(name, attempt) {
    if (logAbort) logAbort.abort();
    logAbort = new AbortController();
    const signal = logAbort.signal;
    replace(logTitle, 'Logs of ' + name + ' (attempt ' + attempt + ')');
    logText.replaceChildren();
    try {
      const response = await fetch(path + '/logs' + api.query({instance: name, attempt, follow: 'true', prefix: 'false'}),
        {headers: {Authorization: 'Bearer ' + api.token()}, signal, cache: 'no-store'});
      if (response.status === 401 || response.status === 403) throw new api.AuthError('the token may not read this run’s logs');
      if (!response.ok) throw new Error('logs: ' + response.status);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        logText.append(document.createTextNode(value));
        if (logText.textContent.length > MAX_LOG_CHARS) logText.textContent = logText.textContent.slice(-MAX_LOG_CHARS);
        logText.scrollTop = logText.scrollHeight;
      }
    } catch (e) {
      if (e.name !== 'AbortError') {
        if (e instanceof api.AuthError) ctx.fail(e);
        else logText.append(document.createTextNode('\n[' + e.message + ']'));
      }
    }
  }

  load();
  let pending = null;
  stopWatch = api.watch({run: id}, (type) => {
    if (type === 'ready' || type === 'run') {
      clearTimeout(pending);
      pending = setTimeout(load, 100); // a burst of changes is read once
    }
  }, ctx.fail);
  return () => {
    abort.abort();
    stopWatch();
    clearTimeout(pending);
    if (logAbort) logAbort.abort();
  };
}

function fact(name, value) {
  return [el('dt', {}, name), el('dd', {}, value)];
}
