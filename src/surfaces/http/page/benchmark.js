// @ts-check
// "Benchmark": the run form (profile, "run even if the CPU is busy"), shown only with the benchmark
// scope. The request blocks until the run is done; meanwhile a progress bar, the phase the run is
// probably in and the elapsed time. A refused run is shown with the service's reason.
import { ApiError, api } from './api.js';
import { may } from './caller.js';
import { byId } from './dom.js';
import { errorBox } from './errors.js';
import { showResult } from './result.js';

/** @typedef {import('../../../../openapi/api-types').components['schemas']['BenchmarkResult']} BenchmarkResult */

/** @type {[number, string][]} When each phase of a quick run probably starts (ms), and its text. */
const phases = [
  [0, 'Calibrating the unit of work…'],
  [300, 'Timing bursts on a warm core, then after each idle gap…'],
  [3000, 'Measuring sustained single-thread and all-core throughput…'],
  [5000, 'Finishing…'],
];

/**
 * Offers the run form when the caller may run the benchmark; `onDone` refreshes what a new result
 * changes (the history, the recommendation).
 * @param {{ onDone: () => Promise<unknown> }} options
 */
export const initBenchmark = ({ onDone }) => {
  const form = byId('bench-form', HTMLFormElement);
  const status = byId('bench-status');
  form.hidden = !may('benchmark');
  byId('bench-note').hidden = may('benchmark');
  byId('bench-note').textContent = 'Running the benchmark needs a token with the benchmark scope.';
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const button = byId('bench-run', HTMLButtonElement);
    const profile = byId('bench-profile', HTMLSelectElement).value;
    const scale = profile === 'standard' ? 4 : 1;
    const started = performance.now();
    button.disabled = true;
    form.setAttribute('aria-busy', 'true');
    byId('bench-running').hidden = false;
    status.textContent = `Running the ${profile} benchmark; the page waits until it is done.`;
    const tick = () => {
      const ms = performance.now() - started;
      byId('bench-elapsed').textContent = `${(ms / 1000).toFixed(0)} s elapsed`;
      byId('bench-phase').textContent = phases.filter(([at]) => ms >= at * scale).at(-1)?.[1] ?? '';
    };
    tick();
    const timer = setInterval(tick, 500);
    try {
      const body = { profile, ...(byId('bench-force', HTMLInputElement).checked ? { force: true } : {}) };
      const r = /** @type {BenchmarkResult} */ (await api('POST', '/v1/benchmarks', body));
      status.textContent = `Benchmark ${r.id} finished in ${(r.durationMs / 1000).toFixed(1)} s.`;
      await showResult(r.id);
      await onDone();
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const hint =
        err.status === 409 ? ' Tick "Run even if the CPU is busy" to run anyway, or try again later.' : '';
      status.textContent = '';
      status.append(errorBox('The benchmark did not run', err), hint);
    } finally {
      clearInterval(timer);
      byId('bench-running').hidden = true;
      form.removeAttribute('aria-busy');
      button.disabled = false;
    }
  });
};
