// What idleness costs (docs/cost.md): idle and held-idle money today and
// this month by GPU model and by project, each project's charge for all the
// GPU time it occupied, what harvesting was worth at cloud prices and saved, and the advisor's comparison for a day-long job
// on this host's GPUs. Amounts are in the report's currency.
import {ApiError, getJson} from './api.js';
import {el} from './dom.js';
import {gpuHours, money, number} from './format.js';
import {mostOfOneModel} from './gpus_doc.js';
import {t} from './i18n.js';

const OPTION_KIND = {
  'in-house': 'advisor.kind_in_house',
  'on-demand': 'advisor.kind_on_demand',
  spot: 'advisor.kind_spot',
  'reserved-1y': 'advisor.kind_reserved_1y',
  'reserved-3y': 'advisor.kind_reserved_3y',
  subscription: 'advisor.kind_subscription',
  'capacity-block': 'advisor.kind_capacity_block',
};
const ADVICE_HOURS = 24;
const MAX_OPTIONS = 5;

function kindLabel(kind) {
  return OPTION_KIND[kind] ? t(OPTION_KIND[kind]) : kind;
}

function utcToday() {
  return new Date().toISOString().slice(0, 10);
}

function table(captionKey, headKeys, rows) {
  return el(
    'table',
    {class: 'money-table'},
    el('caption', {text: t(captionKey)}),
    el('thead', {}, el('tr', {}, ...headKeys.map((k, i) => el('th', {scope: 'col', class: i ? 'num' : '', text: t(k)})))),
    el(
      'tbody',
      {},
      ...rows.map(([head, ...cells]) =>
        el('tr', {}, el('th', {scope: 'row', text: head}), ...cells.map((c) => el('td', {class: 'num', text: c}))),
      ),
    ),
  );
}

export class MoneyPanel {
  constructor(container) {
    this.container = container;
    this.today = null;
    this.month = null;
    this.advice = null;
    this.adviceProblem = '';
    this.adviceDetail = '';
    this.sample = null;
  }

  // `gpusDoc` (GET /v1/gpus) sizes the sample job: as many GPUs as a host
  // has of its most common model (on a coordinator, the largest such host).
  async refresh(gpusDoc) {
    const today = utcToday();
    const [day, month] = await Promise.all([
      getJson(`/v1/cost/report?since=${today}`),
      getJson(`/v1/cost/report?since=${today.slice(0, 7)}-01`),
    ]);
    this.today = day;
    this.month = month;
    await this.refreshAdvice(month, gpusDoc);
    this.render();
  }

  async refreshAdvice(month, gpusDoc) {
    const models = (month.by_model ?? []).filter((m) => m.model !== '(unrecorded)');
    models.sort((a, b) => b.gpu_hours.observed - a.gpu_hours.observed);
    const count = mostOfOneModel(gpusDoc);
    this.advice = null;
    this.adviceProblem = '';
    this.adviceDetail = '';
    if (models.length === 0) {
      this.adviceProblem = 'advisor.no_model';
      return;
    }
    this.sample = {model: models[0].model, count, hours: ADVICE_HOURS};
    const query = new URLSearchParams({gpu: this.sample.model, hours: String(ADVICE_HOURS), count: String(count)});
    try {
      this.advice = await getJson(`/v1/cost/advise?${query}`);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status === 0) throw error;
      // An anonymous reader may not ask the advisor; a model without a
      // price gets no advice. Neither is a reason to hide the rest.
      this.adviceProblem = error.status === 401 ? 'advisor.sign_in' : 'advisor.unavailable';
      this.adviceDetail = error.message;
    }
  }

  render() {
    if (!this.today || !this.month) return;
    const currency = this.month.currency;
    const m = (line, field) => money(line?.money?.[field] ?? 0, currency);
    const summary = table(
      'money.summary_caption',
      ['money.col_what', 'money.today', 'money.this_month'],
      [
        [t('money.idle_cost'), m(this.today.total, 'idle_cost'), m(this.month.total, 'idle_cost')],
        [t('money.held_idle_cost'), m(this.today.total, 'held_idle_cost'), m(this.month.total, 'held_idle_cost')],
        [t('money.harvested_value'), m(this.today.total, 'harvested_cloud_value'), m(this.month.total, 'harvested_cloud_value')],
        [t('money.net_savings'), m(this.today.total, 'net_savings'), m(this.month.total, 'net_savings')],
      ],
    );
    const todayByModel = new Map((this.today.by_model ?? []).map((r) => [r.model, r]));
    const byModel = table(
      'money.by_model_caption',
      ['money.col_model', 'money.col_idle_hours_today', 'money.col_idle_cost_today', 'money.col_idle_hours_month', 'money.col_idle_cost_month', 'money.col_held_idle_cost_month'],
      (this.month.by_model ?? []).map((r) => {
        const d = todayByModel.get(r.model);
        return [r.model, gpuHours(d?.gpu_hours?.idle ?? 0), m(d, 'idle_cost'), gpuHours(r.gpu_hours.idle), m(r, 'idle_cost'), m(r, 'held_idle_cost')];
      }),
    );
    const byProject = table(
      'money.by_project_caption',
      ['money.col_project', 'money.col_held_idle_hours', 'money.col_held_idle_cost', 'money.col_harvested_hours', 'money.col_harvested_value', 'money.col_charge'],
      (this.month.by_project ?? []).map((r) => [
        r.project,
        gpuHours(r.gpu_hours.held_idle),
        m(r, 'held_idle_cost'),
        gpuHours(r.gpu_hours.harvested),
        m(r, 'harvested_cloud_value'),
        m(r, 'charge'),
      ]),
    );
    const parts = [el('div', {class: 'money-tables'}, summary, byModel, byProject), this.adviceView()];
    const unpriced = this.month.total?.unpriced_gpu_hours?.owned ?? 0;
    if (unpriced > 0) parts.push(el('p', {class: 'note', text: t('money.unpriced', {hours: gpuHours(unpriced)})}));
    const warnings = this.month.warnings ?? [];
    if (warnings.length) {
      parts.push(
        el(
          'details',
          {class: 'warnings'},
          el('summary', {text: t('money.warnings', {n: warnings.length})}),
          el('ul', {}, ...warnings.map((w) => el('li', {text: w}))),
        ),
      );
    }
    this.container.replaceChildren(...parts);
  }

  adviceView() {
    const box = el('div', {class: 'advisor'}, el('h3', {text: t('advisor.title')}));
    if (!this.advice) {
      box.append(el('p', {class: 'note', text: t(this.adviceProblem || 'advisor.unavailable')}));
      if (this.adviceProblem === 'advisor.unavailable' && this.adviceDetail) box.append(el('p', {class: 'note', text: this.adviceDetail}));
      return box;
    }
    const a = this.advice;
    box.append(el('p', {text: t('advisor.sample', {count: this.sample.count, model: this.sample.model, hours: this.sample.hours})}));
    const options = (a.options ?? []).filter((o) => o.eligible);
    options.sort((x, y) => x.expected_cost - y.expected_cost);
    const shown = options.slice(0, MAX_OPTIONS);
    const inHouse = options.find((o) => o.kind === 'in-house');
    if (inHouse && !shown.includes(inHouse)) shown.push(inHouse);
    box.append(
      table(
        'advisor.options_caption',
        ['advisor.col_option', 'advisor.col_cost', 'advisor.col_hours'],
        shown.map((o) => [
          [kindLabel(o.kind), o.provider, o.instance].filter(Boolean).join(' · '),
          money(o.expected_cost, o.currency),
          t('units.hours', {n: number(o.expected_hours, 1)}),
        ]),
      ),
    );
    const r = a.recommendation ?? {};
    const verdict = r.kind
      ? t('advisor.recommended', {option: [kindLabel(r.kind), r.provider, r.instance].filter(Boolean).join(' · '), cost: money(r.expected_cost, r.currency)})
      : t('advisor.no_recommendation');
    box.append(el('p', {class: 'recommendation', text: verdict}));
    if (r.reason) box.append(el('p', {class: 'note', text: r.reason}));
    return box;
  }

  retranslate() {
    this.render();
  }
}
