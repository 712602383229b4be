/**
 * The port squatter (docs/SECURITY.md, "Local control"), attacked for real as `nobody` against a
 * service run by root: the control socket refuses `nobody` (EACCES) and serves root as
 * `local-admin`; while the service is down, `nobody` listens on its TCP port, logs every request
 * and answers 401 with a Bearer challenge to tempt the clients, and root's CLI, Ansible module and
 * PowerShell module are run the way a user runs them with no token configured: the squatter sees
 * no Authorization header and no credential in any request. The local administrator credential of
 * the run before is refused once the service is back, since it is rotated at every start. Needs
 * root and runuser (skipped otherwise, failed in CI); Ansible and PowerShell parts need their tools.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServing } from '../../scripts/lib/serve.mjs';
import { findPwsh, prepareAnsible, run, runAnsible, toolRuns } from '../integrations/tools.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { binPath, readAdminToken, runCli, type ServerProcess, startServer } from '../support/processes.ts';
import { until } from '../support/until.ts';

const isRoot = process.getuid?.() === 0;
const hasRunuser = spawnSync('runuser', ['--help']).status === 0;
const skip = (!isRoot || !hasRunuser) && process.env.CI !== 'true' ? 'needs root and runuser' : false;
const modulePath = join(
  import.meta.dirname,
  '..',
  '..',
  'integrations',
  'powershell',
  'PowerPlan',
  'PowerPlan.psd1',
);

/** One HTTP request over a Unix socket, as root: the status and the JSON answer. */
const overSocket = (socketPath: string, method: string, path: string, body?: unknown) =>
  new Promise<{ status: number; json: Record<string, unknown> }>((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        socketPath,
        method,
        path,
        headers: text
          ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }
          : {},
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (data += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(data) }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });

/** A Python program that `nobody` runs: listens on the port, prints each request as JSON, answers 401. */
const SQUATTER = `
import http.server, json, sys
class H(http.server.BaseHTTPRequestHandler):
    def any(self):
        n = int(self.headers.get('content-length') or 0)
        body = self.rfile.read(n).decode('utf-8', 'replace') if n else ''
        print(json.dumps({'method': self.command, 'path': self.path, 'headers': dict(self.headers), 'body': body}), flush=True)
        data = b'{"type":"about:blank","title":"Unauthorized","status":401,"detail":"send your token"}'
        self.send_response(401)
        self.send_header('WWW-Authenticate', 'Bearer realm="powerplan"')
        self.send_header('Content-Type', 'application/problem+json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    do_GET = do_PUT = do_POST = do_DELETE = any
    def log_message(self, *args):
        pass
s = http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H)
print('READY', flush=True)
s.serve_forever()
`;

interface Caught {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

describe('a squatter on the port while the service is down', { skip }, () => {
  let t: TestDeps;
  let server: ServerProcess | undefined;
  let socket: string;
  let port: number;

  before(async () => {
    t = await testDeps();
    // nobody may enter the state directory: the control directory's own mode is what refuses it.
    chmodSync(t.dir, 0o755);
    socket = join(t.dir, 'control', 'powerplan.sock');
    server = await startServer(t.env);
    port = Number(new URL(server.url).port);
  });
  after(async () => {
    await server?.stop();
    await t.cleanup();
  });

  it('nobody cannot connect to the control socket (EACCES); root can, as local-admin, with control', async () => {
    const tried = spawnSync(
      'runuser',
      [
        '-u',
        'nobody',
        '--',
        'python3',
        '-c',
        'import errno, socket, sys\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect(sys.argv[1]); print("CONNECTED")\nexcept OSError as e:\n    print(errno.errorcode[e.errno])',
        socket,
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    assert.equal(tried.stdout.trim(), 'EACCES', tried.stderr);
    const who = await overSocket(socket, 'GET', '/v1/whoami');
    assert.deepEqual([who.status, who.json.name], [200, 'local-admin']);
    const dry = await overSocket(socket, 'PUT', '/v1/plans/active', { plan: 'power-saver', dryRun: true });
    assert.equal(dry.status, 200, JSON.stringify(dry.json));
  });

  it("root's CLI, Ansible module and PowerShell module send no credential; last run's token no longer works", async () => {
    const lastRun = readAdminToken(t.dir);
    assert.match(lastRun, /^pp_/);
    await server!.stop();
    server = undefined;
    const squatter: ChildProcess = spawn(
      'runuser',
      ['-u', 'nobody', '--', 'python3', '-u', '-c', SQUATTER, String(port)],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    squatter.stdout!.on('data', (d) => (out += d));
    const caught = (): Caught[] =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Caught);
    try {
      await until('the squatter listens', () => out.includes('READY'));

      // The CLI runs the operation in-process: it connects to no port at all.
      const cli = await runCli(['set', 'high-performance', '--dry-run'], t.env);
      assert.equal(cli.code, 0, cli.stderr);
      assert.equal(caught().length, 0, 'the CLI sent the squatter nothing');

      const clients: string[] = [];
      if (toolRuns('ansible', ['--version'])) {
        const dir = join(t.dir, 'ansible');
        await prepareAnsible(dir);
        const r = await runAnsible(dir, 'ansible', [
          '-i',
          join(dir, 'inventory.ini'),
          'localhost',
          '-m',
          'powerplan.powerplan.powerplan_plan',
          '-a',
          `url=http://127.0.0.1:${port} plan=high-performance control_socket=${socket}`,
        ]);
        assert.match(r.stdout, /FAILED!/, r.stdout);
        clients.push('ansible');
      }
      const pwsh = findPwsh();
      if (toolRuns(pwsh, ['-v'])) {
        const r = await run(
          pwsh,
          [
            '-NoProfile',
            '-Command',
            `Import-Module '${modulePath}'; try { Set-PowerPlan high-performance -ComputerName 127.0.0.1 -Port ${port} -Confirm:$false } catch { 'FAILED ' + $_.FullyQualifiedErrorId }`,
          ],
          { env: { ...process.env, POWERPLAN_STATE_DIR: t.dir }, timeoutMs: 120_000 },
        );
        assert.match(r.stdout, /FAILED PowerPlan\./, `${r.stdout}${r.stderr}`);
        clients.push('powershell');
      }
      if (process.env.CI === 'true') assert.deepEqual(clients, ['ansible', 'powershell']);
      // The attack reached the squatter (each client fell back to TCP), and learned nothing usable.
      const requests = caught();
      assert.ok(requests.length >= clients.length, JSON.stringify(requests));
      for (const r of requests) {
        assert.equal(
          Object.keys(r.headers).find((h) => h.toLowerCase() === 'authorization'),
          undefined,
          JSON.stringify(r),
        );
        assert.doesNotMatch(JSON.stringify(r), /pp_[A-Za-z0-9_-]{43}/);
      }
    } finally {
      squatter.kill();
      await new Promise((done) => squatter.once('exit', done));
    }

    // Back on the same port: a new credential; the one of the run before is refused.
    server = await startServer({ ...t.env, POWERPLAN_PORT: String(port) });
    const current = readAdminToken(t.dir);
    assert.notEqual(current, lastRun);
    const put = (token: string) =>
      fetch(`${server!.url}/v1/plans/active`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ plan: 'power-saver', dryRun: true }),
      });
    assert.equal((await put(lastRun)).status, 401);
    assert.equal((await put(current)).status, 200);
  });
});

describe("the service's own user on its control socket", { skip }, () => {
  it('a service run by nobody: nobody is local-admin on its socket, and so is root', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'powerplan-sock-'));
    const nobody = Number(spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).stdout.trim());
    chownSync(dir, nobody, nobody);
    const state = join(dir, 'state');
    const env = [
      'POWERPLAN_BACKEND=simulated',
      `POWERPLAN_STATE_DIR=${state}`,
      'POWERPLAN_PORT=0',
      'HOME=/tmp',
    ];
    const served = await startServing(
      'runuser',
      ['-u', 'nobody', '--', 'env', ...env, process.execPath, binPath, 'serve'],
      { env: { PATH: process.env.PATH ?? '' }, timeoutMs: 30_000 },
    );
    try {
      const socket = join(state, 'control', 'powerplan.sock');
      const get = `require('node:http').get({ socketPath: ${JSON.stringify(socket)}, path: '/v1/whoami' }, (r) => { let d = ''; r.on('data', (c) => (d += c)); r.on('end', () => console.log(d)); });`;
      const asNobody = spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, '-e', get], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(JSON.parse(asNobody.stdout).name, 'local-admin', asNobody.stderr);
      assert.equal((await overSocket(socket, 'GET', '/v1/whoami')).json.name, 'local-admin');
    } finally {
      await served.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a control directory that lets others in stops the start (exit 2) with the fix', async () => {
    const t = await testDeps();
    try {
      mkdirSync(join(t.dir, 'control'), { mode: 0o755 });
      chmodSync(join(t.dir, 'control'), 0o755);
      const r = await runCli(['serve'], { ...t.env, POWERPLAN_PORT: '0' });
      assert.equal(r.code, 2, `${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /lets other users in \(mode 755\).*chmod 0700/);
    } finally {
      await t.cleanup();
    }
  });
});
