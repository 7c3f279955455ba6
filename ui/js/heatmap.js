// Hour-of-week heatmaps (GET /v1/profiles): a 7 × 24 table per host and per
// project, each cell the share of GPU time in use in that hour of the week
// (UTC), shaded in eleven steps that style.css colours for either theme.
// Every cell also says its value in text, for screen readers and hover.
import {el} from './dom.js';
import {gpuHours, percent} from './format.js';
import {t} from './i18n.js';

// Monday first, as the API's hour 0 is Monday 00:00 UTC.
const DAYS = ['days.mon', 'days.tue', 'days.wed', 'days.thu', 'days.fri', 'days.sat', 'days.sun'];
const HOURS_PER_DAY = 24;

function heatmap(title, occupancy) {
  const head = el(
    'tr',
    {},
    el('td', {}),
    ...Array.from({length: HOURS_PER_DAY}, (_, h) => el('th', {scope: 'col', class: 'hour', text: h % 3 === 0 ? String(h) : '', 'aria-label': t('heatmap.hour', {h})})),
  );
  const rows = DAYS.map((dayKey, d) =>
    el(
      'tr',
      {},
      el('th', {scope: 'row', class: 'day', text: t(dayKey)}),
      ...Array.from({length: HOURS_PER_DAY}, (_, h) => {
        const share = occupancy[d * HOURS_PER_DAY + h];
        const label =
          share == null
            ? t('heatmap.cell_unobserved', {day: t(dayKey), h})
            : t('heatmap.cell', {day: t(dayKey), h, value: percent(share * 100)});
        const step = share == null ? 'none' : String(Math.round(Math.min(1, Math.max(0, share)) * 10));
        return el('td', {class: `cell step-${step}`, title: label}, el('span', {class: 'visually-hidden', text: label}));
      }),
    ),
  );
  return el(
    'figure',
    {class: 'heatmap'},
    el('figcaption', {text: title}),
    el('table', {class: 'heatmap-grid'}, el('thead', {}, head), el('tbody', {}, ...rows)),
  );
}

function scale() {
  return el(
    'div',
    {class: 'heatmap-scale', 'aria-hidden': 'true'},
    el('span', {text: t('heatmap.scale_low')}),
    ...Array.from({length: 11}, (_, i) => el('span', {class: `cell step-${i}`})),
    el('span', {text: t('heatmap.scale_high')}),
    el('span', {class: 'cell step-none'}),
    el('span', {text: t('heatmap.scale_none')}),
  );
}

export class Heatmaps {
  constructor(container) {
    this.container = container;
    this.host = null;
    this.projects = null;
    this.hostName = '';
  }

  // `host` and `projects`: GET /v1/profiles?kind=host and ?kind=project;
  // `hostName` null on a coordinator, whose host profile is all its hosts'.
  update(host, projects, hostName) {
    this.host = host;
    this.projects = projects;
    this.hostName = hostName;
    this.render();
  }

  render() {
    if (!this.host || !this.projects) return;
    const maps = [];
    for (const p of this.host.profiles ?? []) {
      const hours = gpuHours(p.observed_gpu_hours);
      const title = this.hostName === null ? t('heatmap.cluster_title', {hours}) : t('heatmap.host_title', {host: this.hostName, hours});
      maps.push(heatmap(title, p.occupancy));
    }
    for (const p of this.projects.profiles ?? []) {
      maps.push(heatmap(t('heatmap.project_title', {project: p.key}), p.occupancy));
    }
    if (maps.length === 0) {
      // A coordinator's profiles grow from the minutes its agents send.
      const empty = this.hostName === null ? 'heatmap.cluster_empty' : 'heatmap.empty';
      this.container.replaceChildren(el('p', {class: 'note', text: t(empty)}));
      return;
    }
    this.container.replaceChildren(scale(), el('div', {class: 'heatmap-list'}, ...maps));
  }

  retranslate() {
    this.render();
  }
}
