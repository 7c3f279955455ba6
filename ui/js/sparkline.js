// A sparkline: one series over the last hour, drawn by uPlot (loaded as a
// classic script, window.uPlot). No axes, legend or cursor; the figure's
// aria-label says in words what the line shows.
import {cssColor} from './theme.js';

const HEIGHT_PX = 36;

export class Sparkline {
  // `colorVar`: the CSS custom property of the line's colour; style.css
  // defines `colorVar`-fill for the area under it.
  constructor(container, colorVar) {
    this.container = container;
    this.colorVar = colorVar;
    this.chart = null;
    this.data = [[], []];
    this.range = [0, 1];
    this.max = 1;
  }

  // `times` in Unix seconds; `values` may hold nulls (gaps); `max` tops the
  // scale (100 for percentages, the GPU's memory for bytes); the x scale
  // spans [from, to], so that a short history sits at the right end.
  set(times, values, max, from, to) {
    this.data = [times, values];
    this.range = [from, to];
    if (this.chart && max === this.max) {
      this.chart.setData(this.data);
      return;
    }
    this.max = max;
    this.draw();
  }

  // Drawn anew: on a theme change (the colours) or a new scale.
  draw() {
    this.destroy();
    if (typeof window.uPlot !== 'function') return;  // uPlot failed to load
    const line = cssColor(this.colorVar) || 'currentColor';
    const fill = cssColor(`${this.colorVar}-fill`) || 'transparent';
    const width = Math.max(120, Math.floor(this.container.clientWidth) || 200);
    this.chart = new window.uPlot(
      {
        width,
        height: HEIGHT_PX,
        pxAlign: false,
        cursor: {show: false},
        select: {show: false},
        legend: {show: false},
        scales: {
          x: {time: true, range: () => this.range},
          y: {range: [0, this.max]},
        },
        axes: [{show: false}, {show: false}],
        series: [
          {},
          {
            stroke: line,
            fill,
            width: 1.5,
            spanGaps: false,
            // A line needs two minutes; until then the first is a dot.
            points: {show: (u) => u.data[0].length < 2, size: 5, fill: line},
          },
        ],
      },
      this.data,
      this.container,
    );
  }

  destroy() {
    if (this.chart) this.chart.destroy();
    this.chart = null;
  }
}
