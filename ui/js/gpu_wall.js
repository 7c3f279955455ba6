// The wall of GPUs: per host, a card per GPU coloured by its verdict, with
// its readings, last-hour sparklines, processes and their users, and the
// verdict's evidence on hover or keyboard focus. Served by a coordinator,
// the wall has a host section per agent, headed by the host's health (up,
// silent, lost) and the age of its last report; its cards show what each
// agent last reported: the state and reason, and the processes and
// evidence while the host is up. Cards are kept
// between refreshes and updated in place, so the charts are not rebuilt
// every few seconds and focus stays where the reader left it.
import {el, setText} from './dom.js';
import {duration, gib, number, percent, secondsSince} from './format.js';
import {hostsOf} from './gpus_doc.js';
import {t} from './i18n.js';
import {Sparkline} from './sparkline.js';

export const VERDICTS = ['busy', 'idle', 'held_idle', 'harvested', 'shared', 'protected', 'reserved', 'unknown', 'unhealthy'];

const VERDICT_LABEL = {
  busy: 'verdict.busy',
  idle: 'verdict.idle',
  held_idle: 'verdict.held_idle',
  harvested: 'verdict.harvested',
  shared: 'verdict.shared',
  protected: 'verdict.protected',
  reserved: 'verdict.reserved',
  unknown: 'verdict.unknown',
  unhealthy: 'verdict.unhealthy',
};

const VERDICT_MEANING = {
  busy: 'verdict_help.busy',
  idle: 'verdict_help.idle',
  held_idle: 'verdict_help.held_idle',
  harvested: 'verdict_help.harvested',
  shared: 'verdict_help.shared',
  protected: 'verdict_help.protected',
  reserved: 'verdict_help.reserved',
  unknown: 'verdict_help.unknown',
  unhealthy: 'verdict_help.unhealthy',
};

const HEALTH_LABEL = {
  no_permission: 'health.no_permission',
  lost: 'health.lost',
  error: 'health.error',
};

// A coordinator's hosts (docs/cluster.md): reporting, silent for
// --silent-after (their GPUs unknown), or lost for --requeue-after.
const HOST_HEALTH_LABEL = {
  up: 'hosts.health_up',
  silent: 'hosts.health_silent',
  lost: 'hosts.health_lost',
};

const HOST_HEALTH_MEANING = {
  up: 'hosts.health_help_up',
  silent: 'hosts.health_help_silent',
  lost: 'hosts.health_help_lost',
};

export function verdictLabel(state) {
  return t(VERDICT_LABEL[state] ?? 'verdict.unknown');
}

// A single host's GPU carries its verdict; a coordinator's, the state its
// agent last reported.
function stateOf(gpu) {
  const state = gpu.verdict?.state ?? gpu.state;
  if (state && VERDICT_LABEL[state]) return state;
  return gpu.health && gpu.health !== 'ok' ? 'unhealthy' : 'unknown';
}

function keyOf(gpu) {
  return gpu.uuid ?? `index:${gpu.index}`;
}

// A card's place on the wall: GPU indexes repeat across hosts.
function placeOf(host, gpu) {
  return `${host.host}|${keyOf(gpu)}`;
}

function layoutOf(hosts) {
  return hosts.map((h) => `${h.cluster}|${h.host}:${h.gpus.map(keyOf).join(',')}`).join(';');
}

const DASH = '–';
// Where a process runs, when it says: its Slurm job, container, pod or unit.
function processPlace(p) {
  if (p.slurm_job_id) return t('procs.slurm_job', {id: p.slurm_job_id});
  if (p.container_id) return t('procs.container', {id: p.container_id.slice(0, 12)});
  if (p.kubernetes_pod_uid) return t('procs.pod', {id: p.kubernetes_pod_uid.slice(0, 8)});
  return p.systemd_unit ?? '';
}

// Element ids, unique on the page: GPU indexes repeat across hosts.
let lastId = 0;

// One GPU's card: its elements, built once, and its two sparklines.
class GpuCard {
  // `reported`: the GPU is a coordinator's, as its agent last reported it.
  constructor(gpu, reported) {
    const key = keyOf(gpu);
    const evidenceId = `evidence-${++lastId}`;
    this.title = el('span', {class: 'gpu-title'});
    this.badge = el('span', {class: 'verdict-badge'});
    this.name = el('p', {class: 'gpu-name'});
    this.since = el('p', {class: 'gpu-since'});
    this.health = el('p', {class: 'gpu-health', hidden: true});
    this.slurm = el('p', {class: 'gpu-slurm', hidden: true});
    this.readings = el('dl', {class: 'readings'});
    this.utilCaption = el('span', {class: 'spark-caption'});
    this.utilValue = el('span', {class: 'spark-value'});
    this.utilBox = el('div', {class: 'spark', role: 'img'});
    this.memCaption = el('span', {class: 'spark-caption'});
    this.memValue = el('span', {class: 'spark-value'});
    this.memBox = el('div', {class: 'spark', role: 'img'});
    this.procsTitle = el('h4', {class: 'procs-title'});
    this.procs = el('ul', {class: 'procs'});
    this.evidence = el('div', {class: 'evidence', role: 'tooltip', id: evidenceId});
    this.root = el(
      'article',
      {class: 'gpu-card', tabindex: 0, 'aria-describedby': evidenceId, dataset: {uuid: key}},
      el('header', {class: 'gpu-head'}, this.title, this.badge),
      this.name,
      this.since,
      this.health,
      this.slurm,
      this.readings,
      el('div', {class: 'spark-row'}, el('div', {class: 'spark-label'}, this.utilCaption, this.utilValue), this.utilBox),
      el('div', {class: 'spark-row'}, el('div', {class: 'spark-label'}, this.memCaption, this.memValue), this.memBox),
      this.procsTitle,
      this.procs,
      this.evidence,
    );
    this.util = new Sparkline(this.utilBox, '--spark-util');
    this.mem = new Sparkline(this.memBox, '--spark-mem');
    this.key = key;
    this.reported = reported;
    this.gpu = gpu;
    this.history = null;
  }

  update(gpu) {
    this.gpu = gpu;
    const state = stateOf(gpu);
    this.root.dataset.state = state;
    this.root.className = `gpu-card state-${state}`;
    setText(this.title, t('gpus.card_title', {index: gpu.index}));
    setText(this.badge, verdictLabel(state));
    setText(this.name, gpu.name ?? t('gpus.unnamed'));
    setText(this.since, gpu.verdict?.since ? t('gpus.since', {span: duration(secondsSince(gpu.verdict.since))}) : '');
    this.health.hidden = !gpu.health || gpu.health === 'ok';
    if (!this.health.hidden) {
      const detail = gpu.health_detail ? ` (${gpu.health_detail})` : '';
      setText(this.health, t(HEALTH_LABEL[gpu.health] ?? 'health.error') + detail);
    }
    // On a Slurm node ([slurm] enabled): the Slurm job holding this GPU.
    const job = gpu.slurm_job;
    this.slurm.hidden = !job;
    if (job) {
      setText(this.slurm, t('gpus.slurm_job', {
        id: job.array_id || job.id,
        owner: [job.user, job.account].filter(Boolean).join('/'),
        partition: job.partition ?? '',
      }));
    }
    this.fillReadings(gpu);
    // A coordinator's card has the processes and the evidence once the
    // host's agent has sent them (at once for a host that is up).
    const detailed = !this.reported || gpu.verdict !== undefined;
    this.procsTitle.hidden = !detailed;
    this.procs.hidden = !detailed;
    if (detailed) {
      this.fillProcesses(gpu.processes);
      this.fillEvidence(gpu.verdict, this.reported ? gpu.lendable : undefined);
    } else {
      this.fillReportedEvidence(gpu);
    }
    setText(this.utilCaption, t('spark.utilization'));
    setText(this.memCaption, t('spark.memory'));
    this.fillHistoryLabels();
  }

  fillReadings(gpu) {
    const memory =
      gpu.memory_used_bytes == null
        ? DASH
        : gpu.memory_total_bytes
          ? t('gpus.memory_of', {used: gib(gpu.memory_used_bytes), total: gib(gpu.memory_total_bytes)})
          : gib(gpu.memory_used_bytes);
    const rows = [
      ['gpus.utilization', gpu.utilization_gpu_pct == null ? DASH : percent(gpu.utilization_gpu_pct)],
      ['gpus.memory', memory],
      ['gpus.temperature', gpu.temperature_c == null ? DASH : t('units.celsius', {n: gpu.temperature_c})],
      ['gpus.power', gpu.power_draw_w == null ? DASH : t('units.watts', {n: number(gpu.power_draw_w)})],
    ];
    this.readings.replaceChildren(
      ...rows.flatMap(([key, value]) => [el('dt', {text: t(key)}), el('dd', {text: value})]),
    );
  }

  fillProcesses(processes) {
    const list = processes ?? [];
    setText(this.procsTitle, t('procs.title', {n: list.length}));
    if (list.length === 0) {
      this.procs.replaceChildren(el('li', {class: 'procs-none', text: t(processes ? 'procs.none' : 'procs.unreadable')}));
      return;
    }
    this.procs.replaceChildren(
      ...list.map((p) =>
        el(
          'li',
          {class: 'proc'},
          el('span', {class: 'proc-user', text: p.user ?? t('procs.unknown_user')}),
          el('span', {class: 'proc-command', title: p.command ?? '', text: p.command ?? t('procs.pid', {pid: p.pid})}),
          el('span', {class: 'proc-where', text: processPlace(p)}),
          el('span', {class: 'proc-memory', text: p.used_memory_bytes == null ? DASH : gib(p.used_memory_bytes)}),
        ),
      ),
    );
  }

  // `lendable`: a coordinator's word on lending it now (undefined on one host).
  fillEvidence(verdict, lendable) {
    if (!verdict) {
      this.evidence.replaceChildren(el('p', {text: t('evidence.none')}));
      return;
    }
    const e = verdict.evidence ?? {};
    const rows = [
      ['evidence.quiet_for', t('evidence.of_window', {quiet: duration(e.quiet_for_s ?? 0), window: duration(e.window_s ?? 0)})],
      ['evidence.observed_for', duration(e.observed_for_s ?? 0)],
      ['evidence.utilization_now', e.utilization_pct == null ? DASH : percent(e.utilization_pct)],
      ['evidence.max_in_window', e.max_utilization_pct_in_window == null ? DASH : percent(e.max_utilization_pct_in_window)],
      ['evidence.processes', t('evidence.processes_value', {n: e.processes ?? 0, foreign: e.foreign_processes ?? 0})],
      ['evidence.process_memory', gib(e.process_memory_bytes ?? 0)],
      [
        'evidence.power',
        e.power_w == null
          ? DASH
          : t('evidence.power_value', {
              now: t('units.watts', {n: number(e.power_w)}),
              rest: e.idle_power_w == null ? DASH : t('units.watts', {n: number(e.idle_power_w)}),
            }),
      ],
      [
        'evidence.confidence',
        e.confidence == null ? DASH : t('evidence.confidence_value', {p: percent(e.confidence * 100), n: e.similar_pauses ?? 0}),
      ],
    ];
    // Beside a quiet holder: what it may lend, or the loan as it stands.
    const b = e.beside_holder;
    if (b) {
      rows.push(['evidence.holder_peak', t('evidence.holder_peak_value', {peak: gib(b.holder_peak_bytes), now: gib(b.holder_memory_bytes), history: duration(b.history_s)})]);
      rows.push(['evidence.lendable_beside', b.lendable_bytes > 0 ? gib(b.lendable_bytes) : b.reason]);
      if (b.declared_bytes > 0) rows.push(['evidence.borrower', t('evidence.borrower_value', {used: gib(b.borrower_memory_bytes), declared: gib(b.declared_bytes)})]);
    }
    // Its holder told it will be parked, being parked, parked in host memory, or on its way back.
    const p = e.parking;
    if (p) {
      const who = t('evidence.parking_who', {pid: p.pid, user: p.user || t('procs.unknown_user')});
      const memory = gib(p.memory_bytes);
      let text;
      if (p.phase === 'notice') text = t('evidence.parking_notice', {who, memory, span: duration(Math.max(0, -secondsSince(p.at)))});
      else if (p.phase === 'parking') text = t('evidence.parking_parking', {who, memory, span: duration(secondsSince(p.at))});
      else if (p.phase === 'parked') text = t('evidence.parking_parked', {who, memory, span: duration(secondsSince(p.at))});
      else if (p.waiting) text = t('evidence.parking_restore_waits', {who, why: p.reason, waiting: p.waiting});
      else text = t('evidence.parking_restoring', {who, why: p.reason});
      rows.push(['evidence.parking', text]);
    }
    if (lendable !== undefined) rows.push(['evidence.lendable', t(lendable ? 'evidence.yes' : 'evidence.no')]);
    this.evidence.replaceChildren(
      el('p', {class: 'evidence-title', text: t('evidence.title')}),
      el('p', {class: 'evidence-reason', text: e.reason ?? ''}),
      el('dl', {}, ...rows.flatMap(([key, value]) => [el('dt', {text: t(key)}), el('dd', {text: value})])),
    );
  }

  // A coordinator's GPU: the reason its agent gave, and whether it may be
  // lent now.
  fillReportedEvidence(gpu) {
    this.evidence.replaceChildren(
      el('p', {class: 'evidence-title', text: t('evidence.title')}),
      el('p', {class: 'evidence-reason', text: gpu.reason || t('evidence.none')}),
      el('dl', {}, el('dt', {text: t('evidence.lendable')}), el('dd', {text: t(gpu.lendable ? 'evidence.yes' : 'evidence.no')})),
    );
  }

  setHistory(history, from, to) {
    this.history = history;
    const minutes = history?.minutes ?? [];
    const times = [];
    const util = [];
    const mem = [];
    let previous = null;
    for (const m of minutes) {
      const at = Date.parse(m.minute) / 1000;
      // A missing minute is a gap in the line, not a slope across it.
      if (previous !== null && at - previous > 90) {
        times.push(previous + 60);
        util.push(null);
        mem.push(null);
      }
      times.push(at);
      util.push(m.utilization_mean_pct);
      mem.push(m.memory_used_max_bytes);
      previous = at;
    }
    const total = history?.memory_total_bytes ?? this.gpu.memory_total_bytes ?? Math.max(1, ...mem.filter((v) => v != null));
    this.util.set(times, util, 100, from, to);
    this.mem.set(times, mem, total, from, to);
    this.fillHistoryLabels();
  }

  fillHistoryLabels() {
    const minutes = this.history?.minutes ?? [];
    if (minutes.length === 0) {
      setText(this.utilValue, DASH);
      setText(this.memValue, DASH);
      this.utilBox.setAttribute('aria-label', t('spark.no_history'));
      this.memBox.setAttribute('aria-label', t('spark.no_history'));
      return;
    }
    const means = minutes.map((m) => m.utilization_mean_pct);
    const mean = means.reduce((a, b) => a + b, 0) / means.length;
    const max = Math.max(...minutes.map((m) => m.utilization_max_pct));
    const memMax = Math.max(0, ...minutes.map((m) => m.memory_used_max_bytes ?? 0));
    setText(this.utilValue, t('spark.mean_max', {mean: percent(mean), max: percent(max)}));
    setText(this.memValue, t('spark.at_most', {value: gib(memMax)}));
    this.utilBox.setAttribute('aria-label', t('spark.utilization_summary', {n: minutes.length, mean: percent(mean), max: percent(max)}));
    this.memBox.setAttribute('aria-label', t('spark.memory_summary', {n: minutes.length, value: gib(memMax)}));
  }

  redrawCharts() {
    this.util.draw();
    this.mem.draw();
  }
}

// One host's part of the wall: its heading (name and GPU count), on a
// coordinator its health and last report, and its cards' grid.
class HostSection {
  constructor(host) {
    const headingId = `host-heading-${++lastId}`;
    const badgeId = `host-health-${lastId}`;
    this.heading = el('h3', {class: 'host-heading', id: headingId});
    this.badge = el('span', {class: 'health-badge', id: badgeId, hidden: true});
    this.detail = el('p', {class: 'host-detail'});
    this.grid = el('div', {class: 'cards'});
    this.root = el(
      'section',
      {class: 'host', 'aria-labelledby': host.cluster ? `${headingId} ${badgeId}` : headingId, dataset: {host: host.host}},
      el('header', {class: 'host-head'}, this.heading, this.badge),
      this.detail,
      this.grid,
    );
  }

  update(host) {
    setText(this.heading, t('gpus.host', {host: host.host, n: host.gpus.length}));
    if (!host.cluster) {
      const driver = host.driver ? t('gpus.driver', {version: host.driver}) : '';
      setText(this.detail, [t('gpus.source', {source: host.source}), driver].filter(Boolean).join(' · '));
      return;
    }
    const health = HOST_HEALTH_LABEL[host.health] ? host.health : 'lost';
    this.root.dataset.health = health;
    this.badge.hidden = false;
    this.badge.className = `health-badge health-${health}`;
    this.badge.title = t(HOST_HEALTH_MEANING[health]);
    setText(this.badge, t(HOST_HEALTH_LABEL[health]));
    const report = host.reportAgeS == null ? t('hosts.no_report') : t('hosts.last_report', {span: duration(host.reportAgeS)});
    setText(this.detail, [report, t('hosts.jobs', {n: host.jobs})].join(' · '));
  }
}

export class GpuWall {
  constructor(container, legend) {
    this.container = container;
    this.legend = legend;
    this.cards = new Map();
    this.sections = [];
    this.none = null;
    this.layout = null;
    this.doc = null;
    this.historyDoc = null;
  }

  // `doc`: GET /v1/gpus, a gleaner.gpus/v1 document or a coordinator's
  // gleaner.cluster/v1 (js/gpus_doc.js).
  update(doc) {
    this.doc = doc;
    const hosts = hostsOf(doc);
    if (layoutOf(hosts) !== this.layout) this.build(hosts);
    if (this.none) setText(this.none, t('hosts.none'));
    hosts.forEach((host, i) => {
      this.sections[i].update(host);
      for (const gpu of host.gpus) this.cards.get(placeOf(host, gpu)).update(gpu);
    });
    this.fillLegend(hosts.flatMap((h) => h.gpus));
  }

  // A new set of hosts or GPUs (or the first): sections and cards built
  // afresh.
  build(hosts) {
    for (const card of this.cards.values()) {
      card.util.destroy();
      card.mem.destroy();
    }
    this.cards.clear();
    this.layout = layoutOf(hosts);
    this.sections = hosts.map((host) => {
      const section = new HostSection(host);
      for (const gpu of host.gpus) {
        const card = new GpuCard(gpu, host.cluster);
        this.cards.set(placeOf(host, gpu), card);
        section.grid.append(card.root);
      }
      return section;
    });
    // A coordinator that no agent has reported to yet.
    this.none = hosts.length === 0 ? el('p', {class: 'note'}) : null;
    this.container.replaceChildren(...(this.none ? [this.none] : this.sections.map((s) => s.root)));
    if (this.historyDoc) this.updateHistory(this.historyDoc);
  }

  fillLegend(gpus) {
    const counts = Object.fromEntries(VERDICTS.map((v) => [v, 0]));
    for (const gpu of gpus) counts[stateOf(gpu)] += 1;
    this.legend.replaceChildren(
      ...VERDICTS.map((v) =>
        el(
          'li',
          {class: `legend-item state-${v}`, title: t(VERDICT_MEANING[v]), dataset: {state: v}},
          el('span', {class: 'swatch', 'aria-hidden': 'true'}),
          el('span', {text: t('gpus.legend_item', {verdict: verdictLabel(v), n: counts[v]})}),
        ),
      ),
    );
  }

  // `doc`: GET /v1/history; its GPUs are keyed by uuid, on a coordinator
  // too (the agents forward their minutes).
  updateHistory(doc) {
    this.historyDoc = doc;
    const from = Date.parse(doc.from) / 1000;
    const to = Date.parse(doc.to) / 1000;
    const byUuid = new Map((doc.gpus ?? []).map((g) => [g.uuid, g]));
    for (const card of this.cards.values()) card.setHistory(byUuid.get(card.key) ?? null, from, to);
  }

  // The language changed: every text again.
  retranslate() {
    if (this.doc) this.update(this.doc);
  }

  // The theme changed: the charts take their colours again.
  redrawCharts() {
    for (const card of this.cards.values()) card.redrawCharts();
  }
}
