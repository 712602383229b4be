/**
 * The Windows backend: powercfg.exe run through the one command wrapper (argument arrays, a
 * timeout, no shell), its output decoded from the OEM code page and parsed by GUID. Reads share
 * one in-flight call and a short cache; a change clears it and is read back before it counts.
 * Runs on any OS when pointed at the powercfg emulator (test/emulators/powercfg.mjs).
 */
import { errorMessage, PowerPlanError } from '../../domain/errors.ts';
import type { Effective, IdleStates, Mismatch } from '../../domain/idle.ts';
import { type Note, noteFields } from '../../domain/notes.ts';
import {
  type AcDc,
  type ActivePlan,
  type Capabilities,
  emptyProcessorSettings,
  type Plan,
  type ProcessorSettings,
} from '../../domain/schemas.ts';
import { CommandError, type CommandResult, type RunFn, runCommand } from '../../lib/run-command.ts';
import type { BackendFacts, CreatableKind, PowerBackend } from '../backend.ts';
import { ReadCache } from '../read-cache.ts';
import { classifyScheme, isWellKnown } from './classify.ts';
import { DEFAULT_OEM_CODEPAGE, decodeOutput } from './decode.ts';
import { EVENTS_QUERY, type ProcessorEvent, parseEvents, windowsControl } from './events.ts';
import {
  normalizeGuid,
  parseFirstScheme,
  parseQuery,
  parseSchemeList,
  type QueryResult,
  type SchemeLine,
} from './parse.ts';
import { classifyPowercfgFailure } from './powercfg-errors.ts';
import { createRegistry, POLICY_KEY, type PolicyState } from './registry.ts';
import {
  CREATED_SCHEME,
  planTemplates,
  powercfgAliases,
  SETTING,
  STOCK_SETTINGS,
  SUB_NONE,
  SUB_PROCESSOR,
  stockDifferences,
  TEMPLATES,
} from './well-known.ts';

export interface WindowsBackendOptions {
  /** Full path of powercfg.exe (config.powercfg: POWERPLAN_POWERCFG or %SystemRoot%\System32). */
  powercfgPath: string;
  /** Full path of reg.exe; null or absent: the registry is not read (no policy / code page lookup). */
  regPath?: string | null;
  /** Full path of wevtutil.exe (Kernel-Processor-Power events); null or absent: not read. */
  wevtutilPath?: string | null;
  /** Full path of chcp.com, the code page source of last resort. */
  chcpPath?: string | null;
  /** The OEM code page of console output when known (config.codepage: POWERPLAN_CODEPAGE). */
  codepage?: number | undefined;
  run?: RunFn;
  /** Per call; a powercfg that hangs is killed after this. */
  timeoutMs?: number;
  /** How long a read is reused. */
  cacheTtlMs?: number;
}

const ELEVATE =
  'Changing the power plan needs administrator rights: run the service elevated (as an administrator) or as LocalSystem.';

const acdc = (q: QueryResult, id: string): AcDc | null => {
  const s = q.settings.find((x) => x.id === id);
  return s ? { ac: s.ac, dc: s.dc } : null;
};

const processorSettings = (q: QueryResult): ProcessorSettings => ({
  ...emptyProcessorSettings(),
  minStatePercent: acdc(q, SETTING.minState),
  maxStatePercent: acdc(q, SETTING.maxState),
  boostMode: acdc(q, SETTING.boostMode),
  epp: acdc(q, SETTING.epp),
  coreParkingMinCores: acdc(q, SETTING.coreParkingMinCores),
  perfIncreaseThreshold: acdc(q, SETTING.perfIncreaseThreshold),
  perfIncreaseTime: acdc(q, SETTING.perfIncreaseTime),
});

const idleStates = (q: QueryResult): IdleStates => ({
  source: 'powercfg',
  driver: null,
  governor: null,
  cpus: 0,
  states: [],
  deepestEnabled: null,
  pmQos: null,
  windows: {
    idleDisable: acdc(q, SETTING.idleDisable),
    idleStateMaximum: acdc(q, SETTING.idleStateMax),
    promoteThreshold: acdc(q, SETTING.idlePromote),
    demoteThreshold: acdc(q, SETTING.idleDemote),
  },
});

/** The settings checked after a switch, as the answer names them, with their GUIDs. */
const CHECKED: [string, string][] = [
  ['minStatePercent', SETTING.minState],
  ['maxStatePercent', SETTING.maxState],
  ['boostMode', SETTING.boostMode],
  ['epp', SETTING.epp],
  ['idleDisable', SETTING.idleDisable],
  ['idleStateMaximum', SETTING.idleStateMax],
];

/** How long the event log answer is reused: events 55/37 are written at boot and rarely after. */
const EVENTS_TTL_MS = 10 * 60_000;

const quote = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}...` : s).replace(/\s+/g, ' ').trim();

export const createWindowsBackend = (options: WindowsBackendOptions): PowerBackend => {
  const run = options.run ?? runCommand;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const cache = new ReadCache(options.cacheTtlMs ?? 1_500);
  const registry = createRegistry({
    run,
    regPath: options.regPath ?? null,
    chcpPath: options.chcpPath ?? null,
    timeoutMs,
  });
  /** Set when a change was refused for lack of rights; cleared by the next successful change. */
  let refused: string | null = null;
  /** Whether `/qh` (query including hidden settings) exists here; unknown until first tried. */
  let qhSupported: boolean | undefined;

  let codepage: Promise<number> | undefined;
  const oemCodepage = (): Promise<number> => {
    codepage ??= options.codepage
      ? Promise.resolve(options.codepage)
      : registry.oemCodepage().then((cp) => cp ?? DEFAULT_OEM_CODEPAGE);
    return codepage;
  };
  const decode = (bytes: Buffer) => decodeOutput(bytes, oemCodepage);

  /** Runs powercfg and answers its decoded stdout, or throws a PowerPlanError that says what to do. */
  const powercfg = async (args: string[]): Promise<string> => {
    const what = `powercfg ${args.join(' ')}`;
    let result: CommandResult;
    try {
      result = await run(options.powercfgPath, args, { timeoutMs });
    } catch (e) {
      if (e instanceof CommandError && e.notFound) {
        throw new PowerPlanError(
          'os_error',
          `powercfg was not found at '${options.powercfgPath}'. Set POWERPLAN_POWERCFG to the full path of powercfg.exe (normally %SystemRoot%\\System32\\powercfg.exe).`,
          { command: what },
          { cause: e },
        );
      }
      if (e instanceof CommandError && e.timedOut) {
        throw new PowerPlanError(
          'timeout',
          `${what} did not answer within ${timeoutMs} ms and was stopped. The service is still running; try again, and check the machine's power service if it keeps happening.`,
          { command: what },
          { cause: e },
        );
      }
      throw new PowerPlanError('os_error', `${what} could not be run: ${(e as Error).message}`, {
        command: what,
      });
    }
    const stdout = await decode(result.stdout);
    if (result.exitCode === 0) return stdout;
    const message = quote((await decode(result.stderr)) || stdout);
    const details = { command: what, exitCode: result.exitCode, message };
    switch (classifyPowercfgFailure(message)) {
      case 'forbidden':
        throw new PowerPlanError('forbidden', `${what} was refused ("${message}"). ${ELEVATE}`, details);
      case 'not_found':
        throw new PowerPlanError(
          'not_found',
          `${what}: the power scheme or setting does not exist ("${message}").`,
          details,
        );
      case 'invalid_parameters':
        throw new PowerPlanError('os_error', `${what}: powercfg rejected the parameters ("${message}").`, {
          ...details,
          failure: 'invalid_parameters',
        });
      default:
        throw new PowerPlanError(
          'os_error',
          `${what} failed with exit code ${result.exitCode}: ${message}`,
          details,
        );
    }
  };

  /** `/qh` includes hidden settings (boost, EPP, personality); Windows versions without it get `/query`. */
  const query = async (tail: string[]): Promise<QueryResult> => {
    if (qhSupported !== false) {
      try {
        const out = await powercfg(['/qh', ...tail]);
        qhSupported = true;
        return parseQuery(out);
      } catch (e) {
        if (!(e instanceof PowerPlanError) || e.code !== 'os_error' || qhSupported === true) throw e;
        const out = await powercfg(['/query', ...tail]);
        qhSupported = false;
        return parseQuery(out);
      }
    }
    return parseQuery(await powercfg(['/query', ...tail]));
  };

  const unexpected = (what: string, out: string) =>
    new PowerPlanError(
      'os_error',
      `powercfg ${what} answered without a power scheme: ${quote(out) || '(nothing)'}`,
    );

  const listSchemes = () =>
    cache.get('list', async (): Promise<SchemeLine[]> => {
      const out = await powercfg(['/list']);
      const schemes = parseSchemeList(out);
      if (!schemes.length) throw unexpected('/list', out);
      return schemes;
    });

  const activeScheme = () =>
    cache.get('active', async (): Promise<SchemeLine> => {
      const out = await powercfg(['/getactivescheme']);
      const scheme = parseFirstScheme(out);
      if (!scheme) throw unexpected('/getactivescheme', out);
      return { ...scheme, active: true };
    });

  const processorQuery = (id: string) => cache.get(`processor:${id}`, () => query([id, SUB_PROCESSOR]));

  /** The personality value, or null where Windows does not show it (no `/qh`, setting absent). */
  const personality = (id: string) =>
    cache.get(`personality:${id}`, async (): Promise<number | null> => {
      try {
        const q = await query([id, SUB_NONE, SETTING.personality]);
        return q.settings.find((s) => s.id === SETTING.personality)?.ac ?? null;
      } catch (e) {
        if (e instanceof PowerPlanError && e.code === 'not_found') return null;
        throw e;
      }
    });

  const policy = () => cache.get('policy', (): Promise<PolicyState> => registry.policy());

  const classify = async (id: string) => {
    if (isWellKnown(id)) {
      return classifyScheme({ id, personality: null, minStateAc: null });
    }
    const p = await personality(id);
    const minStateAc = p === null ? (acdc(await processorQuery(id), SETTING.minState)?.ac ?? null) : null;
    return classifyScheme({ id, personality: p, minStateAc });
  };

  /** A built-in plan's differences from its stock key settings (its own /qh; a failed read says nothing). */
  const edits = async (id: string) => {
    if (!STOCK_SETTINGS[id]) return [];
    const q = await processorQuery(id).catch(() => null);
    if (!q) return [];
    return stockDifferences(id, {
      minStatePercent: acdc(q, SETTING.minState)?.ac ?? null,
      maxStatePercent: acdc(q, SETTING.maxState)?.ac ?? null,
      idleDisable: acdc(q, SETTING.idleDisable)?.ac ?? null,
    });
  };

  const toPlan = async (s: SchemeLine): Promise<Plan> => {
    const [c, differences] = await Promise.all([classify(s.id), edits(s.id)]);
    return {
      id: s.id,
      name: s.name,
      kind: c.kind,
      kindSource: c.kindSource,
      active: s.active,
      builtin: c.builtin,
      ...(STOCK_SETTINGS[s.id] ? { edited: differences.length > 0 } : {}),
      ...(differences.length ? { differences } : {}),
    };
  };

  /** Events 55 and 37, newest first; null (and why) when the System log cannot be read. */
  let eventsAt = 0;
  let events: Promise<{ events: ProcessorEvent[] | null; reason?: string }> | undefined;
  const processorEvents = () => {
    if (!options.wevtutilPath) return Promise.resolve({ events: null, reason: 'wevtutil is not configured' });
    if (!events || Date.now() - eventsAt > EVENTS_TTL_MS) {
      eventsAt = Date.now();
      const path = options.wevtutilPath;
      events = (async () => {
        try {
          const r = await run(path, ['qe', 'System', `/q:${EVENTS_QUERY}`, '/c:256', '/rd:true', '/f:xml'], {
            timeoutMs,
          });
          if (r.exitCode !== 0) {
            return {
              events: null,
              reason: `wevtutil exited with ${r.exitCode}: ${quote(await decode(r.stderr))}`,
            };
          }
          return { events: parseEvents(await decode(r.stdout)) };
        } catch (e) {
          return { events: null, reason: errorMessage(e) };
        }
      })();
    }
    return events;
  };

  /** Single settings pinned by group policy (PowerSettings\<setting GUID>: ACSettingIndex / DCSettingIndex). */
  const policySettings = async (): Promise<Map<string, { ac: number | null; dc: number | null }>> => {
    const found = new Map<string, { ac: number | null; dc: number | null }>();
    await Promise.all(
      CHECKED.map(async ([, guid]) => {
        const r = await registry.query(`${POLICY_KEY}\\${guid}`);
        if (r.state !== 'values') return;
        const n = (v: string | undefined) => (v === undefined ? null : Number(v));
        const ac = n(r.values.ACSettingIndex);
        const dc = n(r.values.DCSettingIndex);
        if (ac !== null || dc !== null) found.set(guid, { ac, dc });
      }),
    );
    return found;
  };

  const capabilities = async (): Promise<Capabilities> => ({
    listPlans: true,
    setPlan: true,
    createPlan: true,
    processorSettings: true,
  });

  let virtualization: Promise<BackendFacts['virtualization']> | undefined;
  const vmFacts = () => {
    virtualization ??= registry.virtualization();
    return virtualization;
  };

  return {
    name: 'windows',
    capabilities,

    async listPlans() {
      return Promise.all((await listSchemes()).map(toPlan));
    },

    async getActive(): Promise<ActivePlan> {
      const [active, pol] = await Promise.all([activeScheme(), policy()]);
      const [plan, q, ev, virt] = await Promise.all([
        toPlan(active),
        processorQuery(active.id),
        processorEvents(),
        vmFacts(),
      ]);
      const notes: Note[] = [];
      if (pol.state === 'set') {
        notes.push({
          code: 'policy-managed',
          text: `Group policy sets the active power plan here (${pol.schemeId}); a change made through this service is reverted at the next policy refresh. Change the policy instead.`,
        });
      } else if (pol.state === 'unknown') {
        notes.push({
          code: 'policy-unknown',
          text: `Whether group policy owns the power plan could not be checked: ${pol.reason}.`,
        });
      }
      return {
        plan,
        processor: processorSettings(q),
        owner: pol.state === 'set' ? 'group-policy' : 'powercfg',
        policyManaged: pol.state === 'set',
        canSet: refused === null,
        ...(refused === null ? {} : { cannotSetReason: refused }),
        ...noteFields(notes),
        idle: idleStates(q),
        control: windowsControl(
          ev.events,
          virt.detected ? (virt.kind ?? 'virtual machine') : null,
          ev.reason,
        ),
      };
    },

    async checkEffective(planId) {
      const id = normalizeGuid(planId) ?? planId;
      cache.clear();
      // What the scheme asks for, what the power manager reports in force, and single-setting policies.
      const [wanted, current, pinned] = await Promise.all([
        query([id, SUB_PROCESSOR]),
        query(['SCHEME_CURRENT', SUB_PROCESSOR]),
        policySettings(),
      ]);
      const mismatches: Mismatch[] = [];
      const settings: string[] = [];
      for (const [name, guid] of CHECKED) {
        const want = acdc(wanted, guid);
        if (!want) continue;
        const policy = pinned.get(guid);
        const got = policy ?? acdc(current, guid);
        for (const power of ['ac', 'dc'] as const) {
          settings.push(`${name}.${power}`);
          const w = want[power];
          const g = got?.[power] ?? null;
          if (w === null || g === null || w === g) continue;
          mismatches.push({
            setting: `${name}.${power}`,
            wanted: w,
            got: g,
            cause:
              policy && policy[power] !== null
                ? `group policy pins this setting (${POLICY_KEY}\\${guid}); the plan's value never applies. Change the policy instead.`
                : 'the setting did not stick: the power manager reports another value for the active scheme (a driver, the firmware or another tool overrides it).',
          });
        }
      }
      return {
        checked: settings.length > 0,
        matches: mismatches.length === 0,
        settings,
        mismatches,
      } satisfies Effective;
    },

    async setActive(planId) {
      const id = normalizeGuid(planId);
      if (!id) {
        throw new PowerPlanError('not_found', `'${quote(planId)}' is not a power scheme GUID.`, {
          available: (await listSchemes()).map((s) => ({ id: s.id, name: s.name })),
        });
      }
      try {
        await powercfg(['/setactive', id]);
      } catch (e) {
        cache.clear();
        if (e instanceof PowerPlanError && e.code === 'forbidden') refused = e.message;
        // An error text in a language we do not know: the list says for sure whether the scheme exists.
        if (e instanceof PowerPlanError && e.code === 'os_error') {
          const schemes = await listSchemes().catch(() => null);
          if (schemes && !schemes.some((s) => s.id === id)) {
            throw new PowerPlanError('not_found', `Power scheme ${id} does not exist here.`, {
              available: schemes.map((s) => ({ id: s.id, name: s.name })),
            });
          }
        }
        throw e;
      }
      cache.clear();
      const now = await activeScheme();
      if (now.id !== id) {
        throw new PowerPlanError(
          'os_error',
          `powercfg accepted /setactive ${id}, but the active scheme is still ${now.id} (${now.name}); group policy or another program may have reverted it.`,
          { requested: id, active: now.id },
        );
      }
      refused = null;
    },

    async createPlan(kind: CreatableKind) {
      const template = TEMPLATES[kind].id;
      let out: string;
      try {
        out = await powercfg(['/duplicatescheme', template, CREATED_SCHEME[kind]]);
      } catch (e) {
        if (e instanceof PowerPlanError && e.code === 'forbidden') refused = e.message;
        throw e;
      } finally {
        cache.clear();
      }
      const scheme = parseFirstScheme(out);
      if (!scheme) throw unexpected(`/duplicatescheme ${template}`, out);
      return {
        id: scheme.id,
        name: scheme.name,
        kind,
        kindSource: 'well-known-id',
        active: false,
        builtin: false,
      };
    },

    async facts(): Promise<BackendFacts> {
      return { virtualization: await vmFacts(), powerSource: 'unknown' };
    },

    aliases: () => ({ ...powercfgAliases }),
    templates: planTemplates,
  };
};
