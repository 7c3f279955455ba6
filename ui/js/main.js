// The dashboard's start and its refresh loop. The page asks the API every
// few seconds for the GPUs and the jobs, every half minute for the
// sparklines' history, and every minute for the money and the heatmaps;
// nothing while the tab is hidden.
//
// The URL fragment may carry #token=glt_...&lang=zh-CN&theme=dark&job=7:
// the token moves into sessionStorage and the fragment leaves the address
// bar (and the history entry) before anything else happens; job 7's
// history opens under its row.
import {ApiError, getJson} from './api.js';
import {clearToken, hideLogin, initLoginForm, setToken, showLogin, token} from './auth.js';
import {byId, setText} from './dom.js';
import {clockTime} from './format.js';
import {GpuWall} from './gpu_wall.js';
import {isCluster} from './gpus_doc.js';
import {Heatmaps} from './heatmap.js';
import {language, loadStrings, onLanguageChange, setLanguage, startingLanguage, t} from './i18n.js';
import {JobsTable} from './jobs_table.js';
import {MoneyPanel} from './money_panel.js';
import {Poller} from './poller.js';
import {initTheme, onThemeChange} from './theme.js';

const POLL_MS = 3000;
const HISTORY_EVERY_MS = 30_000;
const SLOW_EVERY_MS = 60_000;

function takeFragment() {
  const params = new URLSearchParams(window.location.hash.slice(1));
  if (params.get('token')) setToken(params.get('token'));
  if (window.location.hash) {
    window.history.replaceState(null, '', window.location.pathname + window.location.search);
  }
  return {lang: params.get('lang'), theme: params.get('theme'), job: params.get('job')};
}

class Dashboard {
  constructor() {
    this.who = null;
    this.gpus = null;
    this.historyAt = 0;
    this.slowAt = 0;
    this.live = {key: '', at: null};
    this.problems = new Map();  // section -> message
    this.wall = new GpuWall(byId('gpu-wall'), byId('verdict-legend'));
    this.jobs = new JobsTable(() => this.poller.now());
    this.money = new MoneyPanel(byId('money'));
    this.heatmaps = new Heatmaps(byId('heatmaps'));
    this.poller = new Poller(() => this.tick(), POLL_MS, () => this.setLive('live.paused'));
    onLanguageChange(() => {
      this.wall.retranslate();
      this.jobs.retranslate();
      this.money.retranslate();
      this.heatmaps.retranslate();
      this.renderWho();
      this.renderHost();
      this.renderLive();
      this.renderProblems();
    });
    onThemeChange(() => this.wall.redrawCharts());
    let resizing = null;
    window.addEventListener('resize', () => {
      clearTimeout(resizing);
      resizing = setTimeout(() => this.wall.redrawCharts(), 200);
    });
    byId('sign-out').addEventListener('click', () => this.signOut('auth.signed_out'));
    byId('sign-in').addEventListener('click', () => this.signOut(''));
    initLoginForm(async (typed) => {
      setToken(typed);
      try {
        await this.start();
        return '';
      } catch (error) {
        clearToken();
        return error instanceof ApiError && error.status === 401 ? 'auth.rejected' : 'auth.unreachable';
      }
    });
  }

  // Asks who we are (the token's owner, or an anonymous reader where the
  // server allows one); a 401 is thrown to the caller.
  async start() {
    this.who = await getJson('/v1/whoami');
    hideLogin();
    this.renderWho();
    this.jobs.setCaller(this.who);
    this.historyAt = 0;
    this.slowAt = 0;
    this.poller.start();
  }

  signOut(messageKey) {
    this.poller.stop();
    clearToken();
    this.who = null;
    this.renderWho();
    showLogin(messageKey);
  }

  renderWho() {
    const who = this.who;
    const anonymous = who?.by === 'anonymous';
    let text = '';
    if (anonymous) text = t('auth.anonymous');
    else if (who) text = t(who.admin ? 'auth.signed_in_admin' : 'auth.signed_in_as', {user: who.user});
    setText(byId('who'), text);
    byId('sign-out').hidden = !who || anonymous || who.by !== 'token';
    byId('sign-in').hidden = !anonymous;
  }

  // The top bar names the host, or on a coordinator how many hosts report
  // to it, and the policy version running where there is one.
  renderHost() {
    const doc = this.gpus;
    const host = isCluster(doc) ? t('hosts.summary', {n: (doc.hosts ?? []).length}) : doc?.host ?? '';
    const policy = Number.isInteger(doc?.policy_version) ? t('hosts.policy', {n: doc.policy_version}) : '';
    setText(byId('host-name'), policy ? `${host} · ${policy}` : host);
  }

  setLive(key, at = null) {
    this.live = {key, at};
    this.renderLive();
  }

  renderLive() {
    const {key, at} = this.live;
    setText(byId('live-text'), key ? t(key, {time: at ? clockTime(at) : ''}) : '');
    byId('live-dot').className = `live-dot live-${key.replace('live.', '')}`;
  }

  renderProblems() {
    const banner = byId('banner');
    const lines = [...this.problems.entries()].map(([section, message]) => t('live.section_failed', {section: t(section), message}));
    banner.hidden = lines.length === 0;
    setText(banner, lines.join(' '));
  }

  // Runs one part of a refresh; a 401 ends the session, anything else is
  // reported in the banner and tried again on the next tick.
  async section(name, work) {
    try {
      await work();
      this.problems.delete(name);
      return true;
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) throw error;
      const message = error instanceof ApiError && error.status === 0 ? t('live.unreachable') : error.message;
      this.problems.set(name, message);
      return false;
    }
  }

  async tick() {
    try {
      const now = Date.now();
      const results = await Promise.all([
        this.section('sections.gpus', async () => {
          this.gpus = await getJson('/v1/gpus');
          this.wall.update(this.gpus);
          this.renderHost();
        }),
        this.section('sections.jobs', async () => this.jobs.update((await getJson('/v1/jobs')).jobs ?? [])),
      ]);
      if (now - this.historyAt >= HISTORY_EVERY_MS) {
        if (await this.section('sections.history', async () => this.wall.updateHistory(await getJson('/v1/history?minutes=60')))) {
          this.historyAt = now;
        }
      }
      if (now - this.slowAt >= SLOW_EVERY_MS) {
        const money = await this.section('sections.money', () => this.money.refresh(this.gpus));
        const heatmaps = await this.section('sections.heatmaps', async () => {
          const [host, projects] = await Promise.all([getJson('/v1/profiles?kind=host'), getJson('/v1/profiles?kind=project')]);
          // A coordinator's host profile is every agent's GPUs together.
          this.heatmaps.update(host, projects, isCluster(this.gpus) ? null : this.gpus?.host ?? '');
        });
        if (money && heatmaps) this.slowAt = now;
      }
      this.renderProblems();
      this.setLive(results.every(Boolean) ? 'live.updated' : 'live.trouble', new Date());
    } catch (error) {
      this.signOut(token() ? 'auth.expired' : '');
    }
  }
}

async function main() {
  const asked = takeFragment();
  await loadStrings();
  setLanguage(startingLanguage(asked.lang), Boolean(asked.lang));
  const select = byId('lang-select');
  select.value = language();
  select.addEventListener('change', () => setLanguage(select.value));
  initTheme(byId('theme-toggle'), asked.theme);
  const dashboard = new Dashboard();
  try {
    await dashboard.start();
    if (/^[1-9][0-9]*$/.test(asked.job ?? '')) dashboard.jobs.openHistory(Number(asked.job));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      const hadToken = Boolean(token());
      clearToken();
      showLogin(hadToken ? 'auth.rejected' : '');
    } else {
      showLogin('auth.unreachable');
    }
  }
}

main();
