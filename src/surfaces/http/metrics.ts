/**
 * Prometheus metrics at GET /metrics: the status read model (status-metrics.ts), HTTP request
 * counts and latencies, and the process. Each app has its own registry, never prom-client's global
 * one, so several apps in one process (tests, embedders) neither share nor clash. The status is
 * read once per scrape and every series of it drawn from that read; nothing polls between scrapes.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { Counter, Histogram, Registry } from 'prom-client';
import type { Deps } from '../../deps.ts';
import { type Caller, requireScope } from '../../domain/scopes.ts';
import type { Status } from '../../services/status.ts';
import { type ProcessMetrics, registerProcessMetrics } from './process-metrics.ts';
import { registerStatusMetrics } from './status-metrics.ts';
import { registerWorkloadMetrics } from './workload-metrics.ts';

/** HTTP methods kept as label values; anything else is `other`, so a client cannot add series. */
const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);

/** The matched route pattern (`/v1/benchmarks/:id`), never the raw path; `unmatched` for 404s. */
const routeLabel = (c: Context): string => {
  const pattern = routePath(c, -1);
  return pattern === '' || pattern === '*' || pattern === '/*' ? 'unmatched' : pattern;
};

/**
 * prom-client's default set has three gauges named like counters (`nodejs_active_handles_total`,
 * `..._requests_total`, `..._resources_total`), which `promtool check metrics` rejects; the same
 * figures stay, per type, in `nodejs_active_handles`, `nodejs_active_requests` and
 * `nodejs_active_resources`.
 */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];
const dropMisnamedDefaults = (registry: Registry) => {
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
};

export interface Metrics {
  registry: Registry;
  /** Counts and times every request; install it before auth so refused requests count too. */
  middleware: MiddlewareHandler;
  /** GET /metrics: the read scope, like the read operations. */
  handler: (c: Context) => Promise<Response>;
  /** The process metrics, with the event-loop delay monitor that runs only while scraped. */
  process: ProcessMetrics;
}

export const createMetrics = (deps: Deps): Metrics => {
  const registry = new Registry();
  const processMetrics = registerProcessMetrics(registry);
  deps.shutdown.signal.addEventListener('abort', () => processMetrics.stop(), { once: true });
  dropMisnamedDefaults(registry);
  // The read of the scrape in progress, set by the handler before the registry is collected.
  let scrape: Promise<Status> | undefined;
  registerStatusMetrics(registry, () => (scrape ??= deps.status.read()));
  registerWorkloadMetrics(registry, () => (scrape ??= deps.status.read()));

  const requests = new Counter({
    name: 'powerplan_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'powerplan_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });

  const middleware: MiddlewareHandler = async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const method = knownMethods.has(c.req.method) ? c.req.method : 'other';
      const route = routeLabel(c);
      requests.inc({ method, route, status: String(c.res.status) });
      duration.observe({ method, route }, (performance.now() - started) / 1000);
    }
  };

  const handler = async (c: Context): Promise<Response> => {
    const caller = c.get('caller') as Caller;
    requireScope(caller, 'read', 'GET /metrics');
    scrape = deps.status.read();
    processMetrics.scraped();
    const body = await registry.metrics();
    return c.body(body, 200, { 'content-type': registry.contentType });
  };

  return { registry, middleware, handler, process: processMetrics };
};
