// Queued and running jobs with why they wait, and the buttons their owner
// (or root) may press: cancel, hold, release; those its project's
// approvers may press: approve, deny; and its history, a timeline under
// its row. A button calls the API and the table is asked again; the
// outcome is announced in a status line.
import {ApiError, getJson, post} from './api.js';
import {byId, el, setText} from './dom.js';
import {duration, secondsSince} from './format.js';
import {t} from './i18n.js';

const STATE_LABEL = {
  pending_approval: 'job_state.pending_approval',
  queued: 'job_state.queued',
  held: 'job_state.held',
  running: 'job_state.running',
  vacating: 'job_state.vacating',
  succeeded: 'job_state.succeeded',
  failed: 'job_state.failed',
  cancelled: 'job_state.cancelled',
};

// Which states each action moves a job out of (docs/api.md), and who may
// press it: the job's owner (or root), or its project's approvers.
const ACTIONS = [
  {name: 'approve', label: 'actions.approve', done: 'actions.approved', states: ['pending_approval'], by: 'approver'},
  {name: 'deny', label: 'actions.deny', done: 'actions.denied', states: ['pending_approval'], by: 'approver', confirm: 'actions.confirm_deny'},
  {name: 'hold', label: 'actions.hold', done: 'actions.held', states: ['queued'], by: 'owner'},
  {name: 'release', label: 'actions.release', done: 'actions.released', states: ['held'], by: 'owner'},
  {name: 'cancel', label: 'actions.cancel', done: 'actions.cancelled', states: ['pending_approval', 'queued', 'held', 'running', 'vacating'], by: 'owner', confirm: 'actions.confirm_cancel'},
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
    this.histories = new Map();  // job id -> {events} or {error}, for the open timelines
  }

  // `who`: GET /v1/whoami; decides which buttons show.
  setCaller(who) {
    this.who = who;
    this.render();
  }

  // `jobs`: GET /v1/jobs's list (jobs that have not ended). The open
  // timelines are read again: a job's history grows while it lives.
  update(jobs) {
    this.jobs = jobs;
    const listed = new Set(jobs.map((job) => job.id));
    for (const id of [...this.histories.keys()]) {
      if (!listed.has(id)) this.histories.delete(id);
      else this.readHistory(id);
    }
    this.render();
  }

  mayAct(job) {
    const who = this.who;
    return Boolean(who && who.by !== 'anonymous' && (who.admin || who.uid === job.uid));
  }

  mayApprove(job) {
    const who = this.who;
    if (!who || who.by === 'anonymous') return false;
    return who.admin || (who.approves ?? []).includes(job.spec?.project ?? '');
  }

  may(job, action) {
    return action.by === 'approver' ? this.mayApprove(job) : this.mayAct(job);
  }

  render() {
    const focused = document.activeElement?.dataset?.action ? document.activeElement.id : '';
    this.empty.hidden = this.jobs.length > 0;
    this.table.hidden = this.jobs.length === 0;
    this.body.replaceChildren(
      ...this.jobs.flatMap((job) => (this.histories.has(job.id) ? [this.row(job), this.timeline(job)] : [this.row(job)])),
    );
    // A refresh must not throw keyboard focus off the button it was on.
    if (focused) byId(focused)?.focus();
  }

  row(job) {
    const since = job.state === 'running' || job.state === 'vacating' ? job.started_at : job.submitted_at;
    const timeKey = job.state === 'running' || job.state === 'vacating' ? 'jobs.running_for' : 'jobs.waiting_for';
    const command = (job.spec?.command ?? []).join(' ');
    const gpus = job.gpus?.length ? job.gpus.length : job.spec?.gpus ?? 0;
    const button = (name, label, onclick, extra = {}) =>
      el('button', {
        type: 'button',
        class: `action action-${name}`,
        id: `job-${job.id}-${name}`,
        dataset: {action: name},
        text: t(label),
        'aria-label': t('actions.aria', {action: t(label), id: job.id}),
        onclick,
        ...extra,
      });
    const buttons = ACTIONS.filter((a) => a.states.includes(job.state) && this.may(job, a)).map((a) =>
      button(a.name, a.label, (event) => this.act(job, a, event.currentTarget)),
    );
    if (this.mayAct(job)) {
      buttons.push(
        button('history', 'actions.history', () => this.toggleHistory(job.id), {
          'aria-expanded': this.histories.has(job.id) ? 'true' : 'false',
          'aria-controls': `job-${job.id}-timeline`,
        }),
      );
    }
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

  // The row under a job's: its events, oldest first, as GET
  // /v1/jobs/ID/events returns them.
  timeline(job) {
    const history = this.histories.get(job.id) ?? {};
    let content;
    if (history.error) {
      content = el('p', {class: 'message', text: t('history.failed', {id: job.id, why: history.error})});
    } else if (!history.events) {
      content = el('p', {class: 'note', text: t('history.loading', {id: job.id})});
    } else if (history.events.length === 0) {
      content = el('p', {class: 'note', text: t('history.empty')});
    } else {
      content = el(
        'ol',
        {class: 'timeline'},
        history.events.map((e) =>
          el(
            'li',
            {class: `event event-${e.kind}`, dataset: {kind: e.kind}},
            el('time', {datetime: e.at, text: e.at.replace('T', ' ').replace('Z', ' UTC')}),
            ' ',
            el('strong', {class: 'event-kind', text: e.kind}),
            ' ',
            el('span', {class: 'event-actor', text: t('history.by', {actor: e.actor})}),
            e.detail ? el('span', {class: 'event-detail', text: `: ${e.detail}`}) : null,
          ),
        ),
      );
    }
    return el(
      'tr',
      {class: 'job-timeline', id: `job-${job.id}-timeline`, dataset: {jobId: job.id}},
      el('td', {colspan: 8}, el('p', {class: 'timeline-caption', text: t('history.caption', {id: job.id})}), content),
    );
  }

  // Shows job `id`'s history under its row, or hides it.
  async toggleHistory(id) {
    if (this.histories.has(id)) {
      this.histories.delete(id);
      this.render();
      return;
    }
    await this.openHistory(id);
  }

  async openHistory(id) {
    this.histories.set(id, {});
    this.render();
    await this.readHistory(id);
  }

  async readHistory(id) {
    let history;
    try {
      const doc = await getJson(`/v1/jobs/${encodeURIComponent(id)}/events`);
      history = {events: doc.events ?? []};
    } catch (error) {
      history = {error: error instanceof ApiError ? error.message : String(error)};
    }
    if (!this.histories.has(id)) return;  // closed meanwhile
    this.histories.set(id, history);
    this.render();
  }

  async act(job, action, button) {
    if (action.confirm && !window.confirm(t(action.confirm, {id: job.id}))) return;
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
