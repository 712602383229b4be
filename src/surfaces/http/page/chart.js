// @ts-check
// Inline SVG charts of one benchmark result, drawn here without a library: burst time after each
// idle gap against the warm baseline, and sustained single-thread / all-core throughput as bars.
// Colours come from CSS classes so that the page's light and dark themes apply.

/** @typedef {import('../../../../openapi/api-types').components['schemas']['BenchmarkResult']} BenchmarkResult */

const NS = 'http://www.w3.org/2000/svg';

/**
 * An SVG element with its attributes and, optionally, its text.
 * @param {string} name
 * @param {Record<string, string | number>} [attrs]
 * @param {string} [text]
 */
const svgEl = (name, attrs = {}, text) => {
  const el = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
};

/** @param {number} ms */
const fmtMs = (ms) => (ms >= 1000 ? `${+(ms / 1000).toFixed(2)} s` : `${+ms.toFixed(ms < 10 ? 2 : 1)} ms`);
/** @param {number} ms */
const gapLabel = (ms) => (ms >= 1000 ? `${+(ms / 1000).toFixed(1)} s` : `${ms} ms`);

/**
 * Drawn at the width it is shown at (12 px text stays 12 px), within sensible bounds.
 * @param {number} width
 */
const chartWidth = (width) => Math.round(Math.min(900, Math.max(300, width || 640)));

/**
 * A rounded step for axis ticks, about `count` of them up to `max`.
 * @param {number} max
 * @param {number} count
 */
const niceStep = (max, count) => {
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
};

/**
 * Wraps a chart: role img, a title and a description naming every figure for screen readers.
 * @param {number} width
 * @param {number} height
 * @param {string} title
 * @param {string} desc
 */
const frame = (width, height, title, desc) => {
  const id = `c${Math.random().toString(36).slice(2, 8)}`;
  const svg = svgEl('svg', {
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'aria-labelledby': `${id}-t ${id}-d`,
    class: 'chart',
    preserveAspectRatio: 'xMidYMid meet',
  });
  svg.append(svgEl('title', { id: `${id}-t` }, title), svgEl('desc', { id: `${id}-d` }, desc));
  return svg;
};

/**
 * Burst duration (median, p10-p90 whisker) per idle gap, with the warm burst as a dashed reference.
 * @param {BenchmarkResult} result
 * @param {number} [width]
 */
export const burstChart = (result, width = 640) => {
  const bursts = result.phases.burstsAfterIdle;
  const warm = result.phases.warmBaseline.burstMs;
  const W = chartWidth(width);
  const H = 300;
  const m = { top: 28, right: 78, bottom: 48, left: 64 };
  const iw = W - m.left - m.right;
  const ih = H - m.top - m.bottom;
  const top = Math.max(warm.p90, ...bursts.map((b) => b.burstMs.p90)) * 1.1 || 1;
  const step = niceStep(top, 5);
  const yMax = Math.ceil(top / step) * step;
  /** @param {number} v */
  const y = (v) => m.top + ih - (v / yMax) * ih;
  /** @param {number} i */
  const x = (i) =>
    m.left + (bursts.length === 1 ? iw / 2 : (i / (bursts.length - 1)) * iw * 0.86 + iw * 0.07);

  const desc =
    `Warm burst ${fmtMs(warm.median)}. ` +
    bursts
      .map(
        (b) =>
          `After ${gapLabel(b.idleGapMs)} idle: ${fmtMs(b.burstMs.median)} (${b.penaltyPercent.value >= 0 ? '+' : ''}${b.penaltyPercent.value.toFixed(0)}%)`,
      )
      .join('; ');
  const svg = frame(W, H, 'Burst time after an idle gap', desc);

  const grid = svgEl('g', { class: 'grid-lines', 'aria-hidden': 'true' });
  for (let v = 0; v <= yMax + step / 1e6; v += step) {
    grid.append(svgEl('line', { x1: m.left, x2: W - m.right, y1: y(v), y2: y(v) }));
    grid.append(svgEl('text', { x: m.left - 8, y: y(v) + 4, 'text-anchor': 'end', class: 'tick' }, fmtMs(v)));
  }
  svg.append(grid);

  const axes = svgEl('g', { class: 'axis', 'aria-hidden': 'true' });
  axes.append(svgEl('line', { x1: m.left, x2: W - m.right, y1: y(0), y2: y(0) }));
  axes.append(svgEl('line', { x1: m.left, x2: m.left, y1: m.top, y2: y(0) }));
  axes.append(
    svgEl(
      'text',
      { x: m.left + iw / 2, y: H - 8, 'text-anchor': 'middle', class: 'label' },
      'idle gap before the burst',
    ),
  );
  axes.append(svgEl('text', { x: 12, y: m.top - 12, class: 'label' }, 'burst time'));
  svg.append(axes);

  const warmG = svgEl('g', { class: 'warm' });
  warmG.append(
    svgEl('rect', {
      x: m.left,
      width: iw,
      y: y(warm.p90),
      height: Math.max(1, y(warm.p10) - y(warm.p90)),
      class: 'warm-band',
    }),
  );
  warmG.append(
    svgEl('line', {
      x1: m.left,
      x2: W - m.right,
      y1: y(warm.median),
      y2: y(warm.median),
      class: 'warm-line',
    }),
  );
  // In the right margin, where no point's label can cover it.
  warmG.append(svgEl('text', { x: W - m.right + 6, y: y(warm.median) - 2, class: 'warm-label' }, 'warm'));
  warmG.append(
    svgEl('text', { x: W - m.right + 6, y: y(warm.median) + 12, class: 'warm-label' }, fmtMs(warm.median)),
  );
  svg.append(warmG);

  const series = svgEl('g', { class: 'series' });
  series.append(
    svgEl('polyline', {
      points: bursts.map((b, i) => `${x(i)},${y(b.burstMs.median)}`).join(' '),
      class: 'line',
    }),
  );
  bursts.forEach((b, i) => {
    const g = svgEl('g', { class: b.noisy ? 'point noisy' : 'point' });
    g.append(
      svgEl('line', { x1: x(i), x2: x(i), y1: y(b.burstMs.p10), y2: y(b.burstMs.p90), class: 'whisker' }),
    );
    const dot = svgEl('circle', { cx: x(i), cy: y(b.burstMs.median), r: 5, 'data-gap': b.idleGapMs });
    dot.append(
      svgEl(
        'title',
        {},
        `${gapLabel(b.idleGapMs)} idle: ${fmtMs(b.burstMs.median)} (p10 ${fmtMs(b.burstMs.p10)}, p90 ${fmtMs(b.burstMs.p90)})`,
      ),
    );
    g.append(dot);
    const pct = b.penaltyPercent.value;
    g.append(
      svgEl(
        'text',
        { x: x(i), y: y(b.burstMs.p90) - 8, 'text-anchor': 'middle', class: 'value' },
        `${pct >= 0 ? '+' : ''}${pct.toFixed(0)}%${b.noisy ? ' (noisy)' : ''}`,
      ),
    );
    g.append(
      svgEl('text', { x: x(i), y: y(0) + 18, 'text-anchor': 'middle', class: 'tick' }, gapLabel(b.idleGapMs)),
    );
    series.append(g);
  });
  svg.append(series);
  return svg;
};

/**
 * Sustained throughput: single thread and all cores, as horizontal bars on one scale.
 * @param {BenchmarkResult} result
 * @param {number} [width]
 */
export const sustainedChart = (result, width = 640) => {
  const single = result.phases.sustainedSingle;
  const all = result.phases.sustainedAllCore;
  const rows = [
    { label: 'single thread', value: single.throughput.value, cls: 'bar-single', noisy: single.noisy },
    {
      label: `all cores (${all.threads} threads)`,
      value: all.throughput.value,
      cls: 'bar-all',
      noisy: all.noisy,
    },
  ];
  const W = chartWidth(width);
  const row = 52;
  const H = rows.length * row + 8;
  // Labels above the bars and values after them, so the bars keep their width on a narrow screen.
  const m = { left: 4, right: 140 };
  const iw = W - m.left - m.right;
  const max = Math.max(...rows.map((r) => r.value)) || 1;
  const desc = `${rows.map((r) => `${r.label}: ${r.value.toFixed(0)} Mops/s`).join('; ')}; speedup ${all.speedup.value.toFixed(1)}x`;
  const svg = frame(W, H, 'Sustained throughput', desc);
  rows.forEach((r, i) => {
    const top = 4 + i * row;
    const w = Math.max(2, (r.value / max) * iw);
    const g = svgEl('g', { class: `bar ${r.cls}` });
    g.append(svgEl('text', { x: m.left, y: top + 13, class: 'label' }, r.label));
    g.append(svgEl('rect', { x: m.left, y: top + 19, width: w, height: 24, rx: 3 }));
    g.append(
      svgEl(
        'text',
        { x: m.left + w + 8, y: top + 36, class: 'value' },
        `${r.value.toFixed(0)} Mops/s${r.noisy ? ' (noisy)' : ''}`,
      ),
    );
    svg.append(g);
  });
  return svg;
};
