/**
 * The MCP prompts: `check_server_power` (this server) and `check_fleet_power` (check these
 * servers, through the fleet tools). Each names only the tools the server offers.
 */
import { z } from 'zod';
import type { Operation } from '../../operations/define.ts';

export interface PromptDef {
  name: string;
  title: string;
  description: string;
  arguments: { name: string; description: string; required: boolean }[];
  args: z.ZodObject;
  text: (args: Record<string, string | undefined>) => string;
  /** Shown only when the server offers this tool. */
  needs: string;
}

const workload = z
  .string()
  .max(500)
  .optional()
  .describe('What the server runs, e.g. "PostgreSQL OLTP", "build agent", "file server".');

const serverSteps = (ops: readonly Operation[], workload: string | undefined): string => {
  const has = (name: string) => ops.some((o) => o.name === name);
  const steps = [
    'Call get_system_info and get_active_power_plan (both read-only) and tell me the OS, whether this is a ' +
      'virtual machine (then the hypervisor host mostly decides CPU power policy), the active plan, its ' +
      'processor settings, who owns the setting and whether it can be changed here.',
    ...(has('run_cpu_benchmark')
      ? [
          'If a measurement would help, first look at list_benchmarks for a recent result. Run ' +
            'run_cpu_benchmark only after I agree: it loads every CPU for a few seconds.',
        ]
      : []),
    has('get_recommendation')
      ? 'Call get_recommendation with the workload class closest to what the server runs (its `workload` ' +
        'argument lists them) and explain it in plain words: what it suggests, what each reason rests on, ' +
        'the confidence, and the trade-off in power and heat.'
      : 'Say whether the active plan suits the workload and why, with the trade-off in power and heat.',
    ...(has('compare_power_plans')
      ? [
          'If I want the plans measured against each other, offer compare_power_plans: it switches the plan ' +
            'for a while and loads every CPU, so call it with dryRun: true first and run it only after I agree.',
        ]
      : []),
    'Do not change anything unless I explicitly ask for it. When I do, call set_power_plan with dryRun: true ' +
      'first, show me what would change, and only then call it again without dryRun.',
  ];
  return [
    `Check whether this server's power plan suits its workload${workload ? `: ${workload}` : ''}.`,
    '',
    ...steps.map((s, i) => `${i + 1}. ${s}`),
  ].join('\n');
};

const fleetSteps = (a: Record<string, string | undefined>): string => {
  const which = [a.hosts ? `the hosts ${a.hosts}` : '', a.tags ? `the hosts tagged ${a.tags}` : ''].filter(
    Boolean,
  );
  const filter = [a.hosts ? `hosts: [${a.hosts}]` : '', a.tags ? `tags: [${a.tags}]` : '']
    .filter(Boolean)
    .join(', ');
  const steps = [
    `Call get_fleet_status${filter ? ` with ${filter}` : ''} (read-only on every host) and show me a table: host, ` +
      'status, plan and kind, advice (keep, or switch to which kind), the latest burst penalty, drift and holds.',
    'List the hosts that did not answer (unreachable, unauthorized, error) with their error, and say what to ' +
      'check (the agent running, the token in the fleet file, TLS).',
    'Group the hosts whose advice is to switch by the recommended kind, and explain the advice of one of each ' +
      'group in plain words (call get_recommendation on that host only if I ask; it is on that agent).',
    'Do not change anything unless I explicitly ask for it. When I do, call set_fleet_power_plan with the plan, ' +
      'exactly the hosts I named, and dryRun: true first; show me per host what would change, and only then ' +
      'call it again without dryRun. Report every host, including those that failed.',
  ];
  return [
    `Check the power plans of ${which.length ? which.join(' and ') : 'every server of the fleet'}${a.workload ? `, which run: ${a.workload}` : ''}.`,
    '',
    ...steps.map((s, i) => `${i + 1}. ${s}`),
  ].join('\n');
};

const list = z
  .string()
  .max(2000)
  .regex(/^[A-Za-z0-9._, -]*$/, 'must be names separated by commas')
  .optional();

export const promptDefs = (ops: readonly Operation[]): PromptDef[] => {
  const defs: PromptDef[] = [
    {
      name: 'check_server_power',
      title: "Check this server's power plan",
      description:
        'Walks through checking whether the power plan suits this server: read the system and the active ' +
        'plan, measure only with consent, recommend, and change the plan only when explicitly asked.',
      arguments: [{ name: 'workload', description: workload.description ?? '', required: false }],
      args: z.object({ workload }),
      text: (a) => serverSteps(ops, a.workload),
      needs: 'get_active_power_plan',
    },
    {
      name: 'check_fleet_power',
      title: 'Check these servers',
      description:
        'Walks through checking the power plans of many servers at once (the fleet): one status call, the ' +
        'hosts that need attention, the advice grouped, and a change only when explicitly asked, dry run first.',
      arguments: [
        {
          name: 'hosts',
          description: 'Fleet host names, comma-separated (default: every host).',
          required: false,
        },
        { name: 'tags', description: 'Fleet tags, comma-separated, e.g. "sql".', required: false },
        { name: 'workload', description: workload.description ?? '', required: false },
      ],
      args: z.object({ hosts: list, tags: list, workload }),
      text: fleetSteps,
      needs: 'get_fleet_status',
    },
  ];
  return defs.filter((d) => ops.some((o) => o.name === d.needs));
};
