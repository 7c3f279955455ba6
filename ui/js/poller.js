// Calls `tick` every `intervalMs` while the tab is visible: a hidden tab
// asks nothing of the server, and one shown again is brought up to date at
// once. A tick that fails does not stop the next one.
export class Poller {
  constructor(tick, intervalMs, onPause) {
    this.tick = tick;
    this.intervalMs = intervalMs;
    this.onPause = onPause;
    this.timer = null;
    this.running = false;
    this.busy = false;
    document.addEventListener('visibilitychange', () => {
      if (!this.running) return;
      if (document.hidden) {
        clearTimeout(this.timer);
        this.onPause();
      } else {
        this.schedule(0);
      }
    });
  }

  start() {
    this.running = true;
    this.schedule(0);
  }

  stop() {
    this.running = false;
    clearTimeout(this.timer);
  }

  // Asks again now (after a cancel, say), unless a tick is under way.
  now() {
    if (this.running) this.schedule(0);
  }

  schedule(delayMs) {
    clearTimeout(this.timer);
    if (!this.running || document.hidden) return;
    this.timer = setTimeout(() => this.run(), delayMs);
  }

  async run() {
    if (this.busy) return;
    this.busy = true;
    try {
      await this.tick();
    } catch (error) {
      console.error(error);
    } finally {
      this.busy = false;
      this.schedule(this.intervalMs);
    }
  }
}
