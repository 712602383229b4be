// Renders API answers into DOM nodes. Text always goes in through textContent (never innerHTML), so
// a plan name or an error message from the server cannot inject markup.

/** Creates an element: h('p', { class: 'x' }, 'text', child, ...). `null`/`false` children are skipped. */
export const h = (tag, attrs = {}, ...children) => {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
};

export const replace = (target, ...nodes) => {
  target.replaceChildren(
    ...nodes.flat(Number.POSITIVE_INFINITY).filter((n) => n !== null && n !== undefined && n !== false),
  );
  target.removeAttribute('aria-busy');
};

const when = (iso) => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
};

/** A definition list from [label, value] rows, skipping empty values. */
const facts = (rows) =>
  h(
    'dl',
    { class: 'facts' },
    rows
      .filter(([, v]) => v !== undefined && v !== null && v !== '')
      .map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v))),
  );

const note = (kind, title, text) =>
  h('div', { class: `callout ${kind}`, role: 'note' }, h('strong', {}, title), ' ', text);

export const errorBox = (what, err) =>
  h(
    'p',
    { class: 'callout error' },
    h('strong', {}, `${what}: `),
    err.message,
    err.status
      ? h('span', { class: 'muted' }, ` (HTTP ${err.status}${err.code ? `, ${err.code}` : ''})`)
      : null,
  );

export const systemView = (s) =>
  facts([
    ['Host', s.hostname],
    ['OS', `${s.os} ${s.release} (${s.arch})`],
    ['CPU', `${s.cpu.model}, ${s.cpu.logicalCpus} logical CPUs`],
    [
      'Virtual machine',
      s.virtualization.detected
        ? `yes${s.virtualization.kind ? ` (${s.virtualization.kind})` : ''}`
        : 'none detected',
    ],
    ['Power source', s.powerSource],
    ['Backend', s.backend.name],
    [
      'Can',
      Object.entries(s.backend.capabilities)
        .filter(([, v]) => v)
        .map(
          ([k]) =>
            ({
              listPlans: 'list plans',
              setPlan: 'set the plan',
              createPlan: 'create plans',
              processorSettings: 'read processor settings',
            })[k] ?? k,
        )
        .join(', ') || 'read only',
    ],
  ]);

const boostModes = [
  'disabled',
  'enabled',
  'aggressive',
  'efficient enabled',
  'efficient aggressive',
  'aggressive at guaranteed',
  'efficient aggressive at guaranteed',
];

const acdc = (v, fmt = (x) => String(x)) => {
  if (!v) return undefined;
  const a = v.ac === null ? '–' : fmt(v.ac);
  const d = v.dc === null ? '–' : fmt(v.dc);
  return a === d ? `${a} (AC and DC)` : `AC ${a}, DC ${d}`;
};

/** The processor settings this system exposes, with what each means for a burst of work. */
const settingsTable = (p) => {
  const pct = (x) => `${x}%`;
  const rows = [
    ['Minimum processor state', acdc(p.minStatePercent, pct), 'how low the clock may drop while idle'],
    ['Maximum processor state', acdc(p.maxStatePercent, pct), 'the ceiling'],
    ['Boost mode', acdc(p.boostMode, (x) => boostModes[x] ?? String(x)), 'turbo above the base clock'],
    ['Energy performance preference', acdc(p.epp, pct), '0% = performance, 100% = energy'],
    ['Core parking, minimum cores', acdc(p.coreParkingMinCores, pct), 'cores kept unparked'],
    ['Performance increase threshold', acdc(p.perfIncreaseThreshold, pct), 'busy % before the clock rises'],
    ['Performance increase time', acdc(p.perfIncreaseTime), 'intervals before the clock rises'],
    ['Governor', p.governor, 'cpufreq scaling governor'],
    ['Driver', p.driverMode ? `${p.driver} (${p.driverMode})` : p.driver, 'cpufreq scaling driver'],
    ['Energy preference', p.energyPreference, 'energy_performance_preference'],
    ['Turbo', p.turbo === null || p.turbo === undefined ? undefined : p.turbo ? 'on' : 'off', ''],
    ['Platform profile', p.platformProfile, 'ACPI platform profile'],
  ].filter(([, v]) => v !== undefined && v !== null);
  if (!rows.length) return h('p', { class: 'muted' }, 'This system exposes no processor settings.');
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      h('caption', {}, 'Processor settings'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Setting'),
          h('th', { scope: 'col' }, 'Value'),
          h('th', { scope: 'col' }, 'Meaning'),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map(([k, v, m]) =>
          h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, v), h('td', { class: 'muted' }, m)),
        ),
      ),
    ),
  );
};

export const activeView = (a) => {
  const plan = a.plan;
  return [
    plan
      ? h(
          'p',
          { class: 'plan-name', id: 'active-plan-name' },
          plan.name,
          ' ',
          h('span', { class: `badge kind-${plan.kind}` }, plan.kind),
        )
      : h('p', { class: 'plan-name', id: 'active-plan-name' }, 'No power plan is exposed on this system.'),
    facts([
      ['Plan id', plan?.id],
      ['Owner', a.owner],
      ['Can be changed here', a.canSet ? 'yes' : 'no'],
      a.desired
        ? [
            'Desired plan',
            `${a.desired.planId}: ${a.desired.status}${a.desired.enforce ? ' (enforced)' : ''}`,
          ]
        : ['', ''],
    ]),
    a.policyManaged
      ? note(
          'warning',
          'Managed by policy.',
          'A policy (such as Windows group policy) sets the plan here and reverts a change at its next refresh; change the policy instead.',
        )
      : null,
    !a.canSet && a.cannotSetReason ? note('info', 'Read-only here.', a.cannotSetReason) : null,
    ...(a.warnings ?? []).map((w) => note('warning', 'Note:', w)),
    settingsTable(a.processor),
  ];
};

/** The plan list; `onSwitch(plan, button)` is given only when the caller may switch plans here. */
export const plansView = (list, onSwitch) =>
  list.plans.map((p) =>
    h(
      'li',
      { class: p.active ? 'plan active' : 'plan', 'data-plan-id': p.id },
      h(
        'span',
        { class: 'plan-title' },
        p.name,
        ' ',
        h('span', { class: `badge kind-${p.kind}` }, p.kind),
        p.active ? h('span', { class: 'badge on' }, 'active') : null,
      ),
      h('code', { class: 'plan-id' }, p.id),
      onSwitch && !p.active
        ? h(
            'button',
            {
              type: 'button',
              class: 'switch',
              'aria-label': `Switch to ${p.name}…`,
              onclick: (e) => onSwitch(p, e.currentTarget),
            },
            'Switch…',
          )
        : null,
    ),
  );

export const previewView = (r) => [
  h(
    'p',
    {},
    r.changed ? 'The active plan would change:' : 'This plan is already active; nothing would change.',
  ),
  facts([
    ['From', `${r.before.name} (${r.before.kind})`],
    ['To', `${r.after.name} (${r.after.kind})`],
    ['Plan id', r.after.id],
  ]),
  r.created ? note('info', 'Created first:', 'the plan is not installed and would be created.') : null,
  ...(r.warnings ?? []).map((w) => note('warning', 'Note:', w)),
  h('p', { class: 'muted' }, 'This preview changed nothing (dry run). The change is audited with your name.'),
];

export const holdsView = (l) =>
  l.holds.length
    ? [
        h(
          'ul',
          {},
          l.holds.map((x) =>
            h(
              'li',
              {},
              h('strong', {}, x.planName),
              ` until ${when(x.expiresAt)} (${x.secondsRemaining} s left), by ${x.createdBy}`,
              x.reason ? `: ${x.reason}` : '',
            ),
          ),
        ),
        h(
          'p',
          { class: 'muted' },
          `When the last hold ends, ${l.restorePlanName ?? l.restorePlanId} is restored.`,
        ),
      ]
    : [
        h(
          'p',
          { class: 'muted' },
          l.restorePending
            ? `No holds; restoring ${l.restorePlanName} is pending${l.restoreError ? `: ${l.restoreError}` : ''}.`
            : 'No holds.',
        ),
      ];

const fig = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '–');

export const resultHeader = (r) => [
  h('h3', { id: 'result-h' }, `Result ${r.id}`),
  facts([
    [
      'Ran',
      `${when(r.startedAt)}, ${r.profile}, ${fig(r.durationMs / 1000, 1)} s${r.forced ? ', forced while busy' : ''}`,
    ],
    ['Plan', r.summary.plan ?? 'none'],
    ['Burst penalty', `${fig(r.summary.burstPenaltyPercent)}% after the longest idle gap`],
    [
      'Throughput',
      `${fig(r.summary.singleThreadMops)} Mops/s single, ${fig(r.summary.allCoreMops)} Mops/s on ${r.threads} threads`,
    ],
  ]),
  ...r.warnings.map((w) => note('warning', 'Note:', w)),
];

export const resultTable = (r) =>
  h(
    'details',
    {},
    h('summary', {}, 'Figures as a table'),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        {},
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Idle gap', 'Burst median', 'p10', 'p90', 'Penalty', 'Ramp-up median'].map((t) =>
              h('th', { scope: 'col' }, t),
            ),
          ),
        ),
        h(
          'tbody',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'row' }, 'warm'),
            h('td', {}, `${fig(r.phases.warmBaseline.burstMs.median, 2)} ms`),
            h('td', {}, fig(r.phases.warmBaseline.burstMs.p10, 2)),
            h('td', {}, fig(r.phases.warmBaseline.burstMs.p90, 2)),
            h('td', {}, '–'),
            h('td', {}, '–'),
          ),
          r.phases.burstsAfterIdle.map((b) =>
            h(
              'tr',
              {},
              h('th', { scope: 'row' }, `${b.idleGapMs} ms`),
              h('td', {}, `${fig(b.burstMs.median, 2)} ms`),
              h('td', {}, fig(b.burstMs.p10, 2)),
              h('td', {}, fig(b.burstMs.p90, 2)),
              h('td', {}, `${fig(b.penaltyPercent.value)}%${b.noisy ? ' (noisy)' : ''}`),
              h('td', {}, `${fig(b.rampUpMs.median, 1)} ms`),
            ),
          ),
        ),
      ),
    ),
  );

export const adviceView = (r) => [
  h('p', { class: `summary ${r.changeRecommended ? 'change' : 'ok'}`, id: 'advice-summary' }, r.summary),
  facts([
    [
      'Recommended plan',
      r.recommended
        ? `${r.recommended.name} (${r.recommended.kind})${r.recommended.installed ? '' : ', to be created'}`
        : 'none',
    ],
    ['Confidence', `${r.confidence}: ${r.confidenceReason}`],
    ['Based on', r.basis.text],
  ]),
  r.reasons.length
    ? [
        h('h3', {}, 'Reasons'),
        h(
          'ul',
          { class: 'reasons' },
          r.reasons.map((x) =>
            h('li', {}, x.text, ' ', h('code', { class: 'muted' }, `${x.fact.name} = ${x.fact.value}`)),
          ),
        ),
      ]
    : null,
  r.expectedGain?.length
    ? [
        h('h3', {}, 'Expected gain'),
        h(
          'ul',
          {},
          r.expectedGain.map((g) => h('li', {}, g.text)),
        ),
      ]
    : null,
  r.actions.length
    ? [
        h('h3', {}, 'How to apply it'),
        h(
          'ul',
          { class: 'actions' },
          r.actions.map((a) =>
            h('li', {}, h('span', {}, `${a.description} (${a.via})`), h('pre', {}, h('code', {}, a.command))),
          ),
        ),
      ]
    : null,
  r.caveats.length
    ? [
        h('h3', {}, 'Caveats'),
        h(
          'ul',
          {},
          r.caveats.map((c) => h('li', {}, h('strong', {}, `${c.kind}: `), c.text)),
        ),
      ]
    : null,
];

export const historyView = (list, onShow) =>
  list.benchmarks.length
    ? h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { id: 'history-table' },
          h('caption', {}, `${list.total} stored, newest first`),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['Started', 'Plan', 'Profile', 'Burst penalty', 'Single', 'All cores', ''].map((t) =>
                h('th', { scope: 'col' }, t),
              ),
            ),
          ),
          h(
            'tbody',
            {},
            list.benchmarks.map((b) =>
              h(
                'tr',
                { 'data-id': b.id },
                h('td', {}, when(b.startedAt)),
                h('td', {}, b.plan ?? 'none'),
                h('td', {}, b.profile),
                h('td', {}, `${fig(b.burstPenaltyPercent)}%${b.noisy ? ' (noisy)' : ''}`),
                h('td', {}, `${fig(b.singleThreadMops)} Mops/s`),
                h('td', {}, `${fig(b.allCoreMops)} Mops/s`),
                h(
                  'td',
                  {},
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'secondary small',
                      'aria-label': `Show result ${b.id}`,
                      onclick: () => onShow(b.id),
                    },
                    'Show',
                  ),
                ),
              ),
            ),
          ),
        ),
      )
    : h('p', { class: 'muted' }, 'No benchmark has run yet.');
