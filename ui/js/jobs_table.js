// Queued and running jobs with why they wait, and the buttons their owner
// (or root) may press: cancel, hold, release. A button calls the API and
// the table is asked again; the outcome is announced in a status line.
import {ApiError, post} from './api.js';
import {byId, el, setText} from './dom.js';
import {duration, secondsSince} from './format.js';
import {t} from './i18n.js';

const STATE_LABEL = {
  queued: 'job_state.queued',
  held: 'job_state.held',
  running: 'job_state.running',
  vacating: 'job_state.vacating',
  succeeded: 'job_state.succeeded',
  failed: 'job_state.failed',
  cancelled: 'job_state.cancelled',
};

// Which states each action moves a job out of (docs/api.md).
const ACTIONS = [
  {name: 'hold', label: 'actions.hold', done: 'actions.held', states: ['queued']},
  {name: 'release', label: 'actions.release', done: 'actions.released', states: ['held']},
  {name: 'cancel', label: 'actions.cancel', done: 'actions.cancelled', states: ['queued', 'held', 'running', 'vacating']},
];

export class JobsTable {
  // `refresh` asks for the jobs again after an action.
  constructor(refresh) {
    this.body = byId('jobs-body');
    this.empty = byId('jobs-empty');
    this.table = byId('jobs-table');
    this.message = byId('jobs-message');
    this.refresh = refresh;
    this.jobs = [];
    this.who = null;
  }

  // `who`: GET /v1/whoami; decides which buttons show.
  setCaller(who) {
    this.who = who;
    this.render();
  }

  // `jobs`: GET /v1/jobs's list (jobs that have not ended).
  update(jobs) {
    this.jobs = jobs;
    this.render();
  }

  mayAct(job) {
    const who = this.who;
    return Boolean(who && who.by !== 'anonymous' && (who.admin || who.uid === job.uid));
  }

  render() {
    const focused = document.activeElement?.dataset?.action ? document.activeElement.id : '';
    this.empty.hidden = this.jobs.length > 0;
    this.table.hidden = this.jobs.length === 0;
    this.body.replaceChildren(...this.jobs.map((job) => this.row(job)));
    // A refresh must not throw keyboard focus off the button it was on.
    if (focused) byId(focused)?.focus();
  }

  row(job) {
    const since = job.state === 'running' || job.state === 'vacating' ? job.started_at : job.submitted_at;
    const timeKey = job.state === 'running' || job.state === 'vacating' ? 'jobs.running_for' : 'jobs.waiting_for';
    const command = (job.spec?.command ?? []).join(' ');
    const gpus = job.gpus?.length ? job.gpus.length : job.spec?.gpus ?? 0;
    const buttons = this.mayAct(job)
      ? ACTIONS.filter((a) => a.states.includes(job.state)).map((a) =>
          el('button', {
            type: 'button',
            class: `action action-${a.name}`,
            id: `job-${job.id}-${a.name}`,
            dataset: {action: a.name},
            text: t(a.label),
            'aria-label': t('actions.aria', {action: t(a.label), id: job.id}),
            onclick: (event) => this.act(job, a, event.currentTarget),
          }),
        )
      : [];
    return el(
      'tr',
      {class: `job-row job-${job.state}`, dataset: {jobId: job.id, state: job.state}},
      el('th', {scope: 'row', class: 'num', text: job.id}),
      el('td', {text: job.user}),
      el('td', {}, el('span', {class: `job-state job-state-${job.state}`, text: t(STATE_LABEL[job.state] ?? 'job_state.unknown')})),
      el('td', {class: 'num', text: gpus}),
      el('td', {class: 'command', title: command}, el('code', {text: command})),
      el('td', {text: since ? t(timeKey, {span: duration(secondsSince(since))}) : ''}),
      el('td', {class: 'reason', text: job.reason ?? ''}),
      el('td', {class: 'actions'}, buttons.length ? buttons : el('span', {class: 'muted', text: '–'})),
    );
  }

  async act(job, action, button) {
    if (action.name === 'cancel' && !window.confirm(t('actions.confirm_cancel', {id: job.id}))) return;
    button.disabled = true;
    try {
      await post(`/v1/jobs/${encodeURIComponent(job.id)}/${action.name}`);
      setText(this.message, t(action.done, {id: job.id}));
    } catch (error) {
      const why = error instanceof ApiError ? error.message : String(error);
      setText(this.message, t('actions.failed', {action: t(action.label), id: job.id, why}));
    }
    this.refresh();
  }

  retranslate() {
    this.render();
  }
}
