/**
 * The fleet file and what it names, read with care: clear errors naming host and field, file
 * permissions, token and CA files; the Ansible inventory hand-off; redirects and TLS towards agents.
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { allowedAgentUrl } from '../../src/domain/fleet-file.ts';
import { createLogger } from '../../src/lib/log.ts';
import { loadFleet, readAnsibleInventory, readFleetFile } from '../../src/services/fleet/file.ts';
import { FleetService } from '../../src/services/fleet/fleet.ts';
import { startHttpServer } from '../../src/surfaces/http/server.ts';
import { ansibleInstall, opensslInstall, requireTool, toolRuns } from '../integrations/tools.ts';
import { testDeps } from '../support/deps.ts';
import { makeTestCertificate } from '../support/tls.ts';
import { listen, writeSecret } from './rig.ts';

const silent = createLogger('silent');

/** A loopback server that answers `{}` and counts the requests it gets. */
const counting = async () => {
  const target = {
    hits: 0,
    url: '',
    server: createServer((_q, s) => {
      target.hits++;
      s.end('{}');
    }),
  };
  target.url = await listen(target.server);
  return target;
};

/** The fleet status that a service with this fleet file answers. */
const statusOf = async (fleetFile: string) => {
  const t = await testDeps({ POWERPLAN_FLEET_FILE: fleetFile });
  try {
    return await new FleetService(t.deps.config, silent).status({});
  } finally {
    await t.cleanup();
  }
};

describe('fleet file', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'powerplan-fleetfile-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const fleetWith = async (hosts: unknown, name = 'f.json') => {
    const path = join(dir, name);
    await writeSecret(path, typeof hosts === 'string' ? hosts : JSON.stringify({ hosts }));
    return path;
  };

  it('rejects unknown fields, duplicate names, credentials in URLs and non-HTTP URLs, naming host and field', async () => {
    const cases: [unknown, RegExp][] = [
      [
        [{ name: 'db1', url: 'http://127.0.0.1:1', token: 'x' }],
        /hosts\[0\] \(db1\): unknown field\(s\) 'token'/,
      ],
      [
        [
          { name: 'db1', url: 'http://127.0.0.1:1' },
          { name: 'DB1', url: 'http://127.0.0.1:2' },
        ],
        /hosts\[1\] \(DB1\)\.name: duplicate host name 'DB1' \(also hosts\.0\)/,
      ],
      [
        [{ name: 'db1', url: 'https://admin:secret@db1:8750' }],
        /hosts\[0\] \(db1\)\.url: must not carry credentials/,
      ],
      [[{ name: 'db1', url: 'ftp://db1' }], /url: must be http:\/\/ or https:\/\/ \(got ftp:\)/],
      [[{ name: 'db1', url: 'db1:8750' }], /url: must be http/],
      [[{ name: 'db1', url: 'not a url' }], /url: is not a URL/],
      [[{ name: 'db 1', url: 'http://db1' }], /hosts\[0\] \(db 1\)\.name: must be 1-63 letters/],
      [
        [{ name: 'db1', url: 'http://db1', tokenFile: 'a', tokenEnv: 'B' }],
        /tokenFile or tokenEnv, not both/,
      ],
      [{ hosts: [], extra: 1 }, /unknown field\(s\) 'extra'/],
    ];
    for (const [hosts, pattern] of cases) {
      const path = await fleetWith(
        (hosts as { hosts?: unknown }).hosts !== undefined ? JSON.stringify(hosts) : hosts,
      );
      await assert.rejects(readFleetFile(path), (e: Error) => {
        assert.match(e.message, pattern);
        return true;
      });
    }
    await assert.rejects(readFleetFile(await fleetWith('{ nope')), /is not valid JSON/);
    await assert.rejects(readFleetFile(join(dir, 'absent.json')), /does not exist/);
  });

  it('takes a Prometheus source instead of hosts, its matchers and labels checked, its paths relative to the file', async () => {
    const prom = (p: object) =>
      fleetWith(JSON.stringify({ prometheus: { url: 'http://127.0.0.1:9090', ...p } }));
    const cases: [() => Promise<string>, RegExp][] = [
      [() => fleetWith(JSON.stringify({})), /give hosts \(the agents\) or prometheus/],
      [
        () => fleetWith(JSON.stringify({ hosts: [], prometheus: { url: 'http://p:9090' } })),
        /give hosts or prometheus, not both/,
      ],
      [
        () => prom({ url: 'https://u:p@p:9090' }),
        /prometheus\.url: must not carry credentials.*tokenFile or basicAuth/,
      ],
      [() => prom({ selector: 'job=powerplan' }), /prometheus\.selector: must be label matchers/],
      [() => prom({ selector: 'up{job="x"}' }), /prometheus\.selector: must be label matchers/],
      [() => prom({ selector: '__name__=~".+"' }), /must not match __name__/],
      [
        () => prom({ selector: 'job="a"} or vector(1) or {a="b"' }),
        /prometheus\.selector: must be label matchers/,
      ],
      [() => prom({ hostLabel: 'fleet-host' }), /prometheus\.hostLabel: must be a Prometheus label name/],
      [() => prom({ lookback: '1 hour' }), /prometheus\.lookback: must be a Prometheus duration/],
      [
        () => prom({ tokenFile: 't', basicAuth: { username: 'u', passwordFile: 'p' } }),
        /tokenFile or basicAuth, not both/,
      ],
      [
        () => prom({ basicAuth: { username: 'a:b', passwordFile: 'p' } }),
        /username: must be 1-256 characters/,
      ],
      [() => prom({ agents: { tokenFile: 'a', tokenDir: 'b' } }), /tokenFile or tokenDir, not both/],
      [() => prom({ agents: { token: 'x' } }), /unknown field\(s\) 'token'/],
      // A token for the agents goes only where the fleet file allows, so the list is required.
      [
        () => prom({ agents: { tokenFile: 'a' } }),
        /prometheus\.agents\.allow: is required with tokenFile or tokenDir/,
      ],
      [() => prom({ agents: { tokenDir: 'b' } }), /prometheus\.agents\.allow: is required/],
      [() => prom({ agents: { tokenDir: 'b', allow: [] } }), /prometheus\.agents\.allow: too small/i],
      [
        () => prom({ agents: { allow: ['db1 example'] } }),
        /prometheus\.agents\.allow\.0: must be host, host:port/,
      ],
      [() => prom({ agents: { allow: ['*'] } }), /prometheus\.agents\.allow\.0: must be host/],
      [() => prom({ agents: { allow: ['db1.example.com/agent'] } }), /a path needs a scheme/],
      [() => prom({ agents: { allow: ['https://db1/../x'] } }), /must not hold \. or \.\./],
    ];
    for (const [write, pattern] of cases) {
      await assert.rejects(readFleetFile(await write()), (e: Error) => {
        assert.match(e.message, pattern);
        return true;
      });
    }
    const ok = await readFleetFile(
      await prom({
        selector: '{ job="powerplan", env=~"prod|staging", }',
        agents: { tokenDir: 'tokens', allow: ['*.db.example.com'] },
      }),
    );
    assert.deepEqual(ok.hosts, []);
    assert.equal(ok.prometheus?.selector, 'job="powerplan", env=~"prod|staging"');
    assert.equal(ok.prometheus?.hostLabel, 'fleet_host');
    assert.equal(ok.prometheus?.lookback, '1h');
    assert.equal(ok.prometheus?.agents.tokenDir, join(dir, 'tokens'));
    await assert.rejects(
      loadFleet({ fleet: await prom({}), ansibleInventory: join(dir, 'inventory.ini') }),
      /an Ansible inventory cannot be added/,
    );
    await assert.rejects(
      loadFleet({ fleet: await prom({ tokenFile: 'absent.token' }) }),
      /Prometheus token file.*does not exist/,
    );
  });

  it('refuses a fleet file others may write, and a token file others may read', async (ctx) => {
    if (process.platform === 'win32' || process.getuid?.() === undefined) return ctx.skip('POSIX modes');
    const path = await fleetWith(
      [{ name: 'db1', url: 'http://127.0.0.1:1', tokenFile: 'db1.token' }],
      'perm.json',
    );
    await chmod(path, 0o666);
    await assert.rejects(readFleetFile(path), /writable by group or others \(mode 666\)/);
    await chmod(path, 0o644);
    await writeFile(join(dir, 'db1.token'), `pp_${'C'.repeat(43)}`, { mode: 0o644 });
    await chmod(join(dir, 'db1.token'), 0o644);
    const fleet = await loadFleet({ fleet: path });
    assert.match(fleet.hosts[0]!.problem ?? '', /readable by group or others \(mode 644\); chmod 600/);
    assert.equal(fleet.hosts[0]!.token, undefined);
    await chmod(join(dir, 'db1.token'), 0o600);
    const ok = await loadFleet({ fleet: path });
    assert.equal(ok.hosts[0]!.problem, undefined);
    assert.equal(ok.hosts[0]!.token, `pp_${'C'.repeat(43)}`);
  });

  it('a host whose token cannot be read is reported as an error, and is never contacted', async () => {
    const target = await counting();
    const { url } = target;
    const path = await fleetWith(
      [
        { name: 'nofile', url, tokenFile: 'missing.token' },
        { name: 'noenv', url, tokenEnv: 'POWERPLAN_TEST_UNSET_TOKEN' },
      ],
      'missing.json',
    );
    try {
      const s = await statusOf(path);
      assert.deepEqual(
        s.hosts.map((h) => [h.name, h.status, h.error?.title]),
        [
          ['nofile', 'error', 'Not configured'],
          ['noenv', 'error', 'Not configured'],
        ],
      );
      assert.match(s.hosts[0]!.error!.detail, /missing\.token\) does not exist/);
      assert.match(s.hosts[1]!.error!.detail, /POWERPLAN_TEST_UNSET_TOKEN .* is not set/);
      assert.equal(target.hits, 0);
    } finally {
      target.server.close();
    }
  });

  it('a redirect is not followed, so the token stays with its host', async () => {
    const other = await counting();
    const otherUrl = other.url;
    let sawToken = '';
    const redirecting = createServer((q, s) => {
      sawToken = String(q.headers.authorization ?? '');
      s.writeHead(302, { location: `${otherUrl}${q.url}` }).end();
    });
    const redirectingUrl = await listen(redirecting);
    await writeSecret(join(dir, 'r.token'), `pp_${'D'.repeat(43)}`);
    const path = await fleetWith(
      [
        {
          name: 'mover',
          url: redirectingUrl,
          tokenFile: 'r.token',
        },
      ],
      'redirect.json',
    );
    try {
      const s = await statusOf(path);
      assert.equal(s.hosts[0]!.status, 'error');
      assert.equal(s.hosts[0]!.error?.title, 'Redirect not followed');
      assert.equal(sawToken, `Bearer pp_${'D'.repeat(43)}`, 'the token went to its own host');
      assert.equal(other.hits, 0, 'nothing reached the redirect target');
    } finally {
      other.server.close();
      redirecting.close();
    }
  });

  it('verifies TLS by default and trusts a per-host caFile', async (ctx) => {
    if (!requireTool(ctx, toolRuns('openssl', ['version']), 'openssl', opensslInstall)) return;
    const { cert, key } = makeTestCertificate(dir);
    await chmod(key, 0o600);
    const agent = await testDeps({
      POWERPLAN_TLS_CERT: cert,
      POWERPLAN_TLS_KEY: key,
      POWERPLAN_PORT: '0',
      POWERPLAN_HOST: '127.0.0.1',
    });
    const server = await startHttpServer(agent.deps);
    const path = await fleetWith(
      [
        { name: 'strict', url: server.url },
        { name: 'pinned', url: server.url, caFile: 'cert.pem' },
      ],
      'tls.json',
    );
    try {
      const s = await statusOf(path);
      assert.equal(s.hosts[0]!.status, 'error');
      assert.equal(s.hosts[0]!.error?.title, 'TLS verification failed');
      assert.equal(s.hosts[1]!.status, 'ok', JSON.stringify(s.hosts[1]!.error));
      assert.equal(s.hosts[1]!.plan?.kind, 'balanced');
    } finally {
      await server.close();
      await agent.cleanup();
    }
  });

  it('reads hosts, tokens and groups from an Ansible inventory', async (ctx) => {
    if (!requireTool(ctx, toolRuns('ansible-inventory'), 'ansible-inventory', ansibleInstall)) return;
    const inv = join(dir, 'hosts.ini');
    await writeFile(
      inv,
      [
        '[sql]',
        'db1 powerplan_url=https://db1.example.com:8750 powerplan_token_file=/etc/powerplan/db1.token',
        'db2 powerplan_url=http://127.0.0.1:8750',
        '[web]',
        'web1 powerplan_url=http://web1:8750 powerplan_token_env=WEB1_TOKEN powerplan_ca_file=/etc/ca.pem',
        'legacy',
        '[prod:children]',
        'sql',
        '',
      ].join('\n'),
    );
    const hosts = await readAnsibleInventory(inv);
    assert.deepEqual(
      hosts.map((h) => [h.name, h.url, h.tags, h.tokenFile, h.tokenEnv, h.caFile]),
      [
        [
          'db1',
          'https://db1.example.com:8750',
          ['prod', 'sql'],
          '/etc/powerplan/db1.token',
          undefined,
          undefined,
        ],
        ['db2', 'http://127.0.0.1:8750', ['prod', 'sql'], undefined, undefined, undefined],
        ['web1', 'http://web1:8750', ['web'], undefined, 'WEB1_TOKEN', '/etc/ca.pem'],
      ],
    );
    await writeFile(inv, '[sql]\ndb1 powerplan_url=ftp://db1\n');
    await assert.rejects(readAnsibleInventory(inv), /url: must be http/);
    await writeFile(inv, '[sql]\ndb1\n');
    await assert.rejects(readAnsibleInventory(inv), /no host has the variable powerplan_url/);
  });
});

describe('agents.allow', () => {
  it('matches host, port, a *. suffix, scheme and base path; nothing else', () => {
    const yes = (url: string, ...p: string[]) =>
      assert.equal(allowedAgentUrl(new URL(url), p), true, `${url} ${p}`);
    const no = (url: string, ...p: string[]) =>
      assert.equal(allowedAgentUrl(new URL(url), p), false, `${url} ${p}`);
    yes('https://db1.example.com:8750', 'db1.example.com');
    yes('https://DB1.example.com:8750', 'db1.EXAMPLE.com:8750');
    no('https://db1.example.com.evil.net:8750', 'db1.example.com');
    no('https://evil-db1.example.com:8750', 'db1.example.com');
    no('https://db1.example.com:8751', 'db1.example.com:8750');
    yes('https://db1.example.com', 'db1.example.com:443');
    no('http://db1.example.com', 'db1.example.com:443');
    yes('https://a.b.db.example.com:8750', '*.db.example.com');
    no('https://db.example.com:8750', '*.db.example.com');
    no('https://xdb.example.com:8750', '*.db.example.com');
    no('http://a.db.example.com:8750', 'https://*.db.example.com');
    yes('https://a.db.example.com:8750/agent', 'https://*.db.example.com:8750/agent');
    yes('https://a.db.example.com:8750/agent/x', 'https://*.db.example.com:8750/agent/');
    no('https://a.db.example.com:8750/agentx', 'https://*.db.example.com:8750/agent');
    no('https://a.db.example.com:8750', 'https://*.db.example.com:8750/agent');
    yes('http://[::1]:8750', '[::1]:8750');
    no('http://127.0.0.2:8750', '127.0.0.1', 'localhost');
  });
});
