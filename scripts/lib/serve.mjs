// Child processes for the tests, the performance harness and the scripts, written once: a command
// run to its end with its output collected, and a serving process (`powerplan serve`, or anything
// that prints `listening on <url>`) started and awaited on that line. Plain JavaScript, so that a
// script run by node alone imports it as well as the TypeScript tests and perf scripts (types in
// serve.d.mts).
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const repoRoot = resolve(import.meta.dirname, '..', '..');

/**
 * The `powerplan` command. On Windows the bundle itself (built by the Windows tier before it
 * starts): bin/powerplan.js would fall back to tsx for a source changed since, and tsx cannot run
 * there (its esbuild is the Linux build).
 */
export const binPath =
  process.platform === 'win32'
    ? join(repoRoot, 'dist', 'powerplan.mjs')
    : join(repoRoot, 'bin', 'powerplan.js');

/** The URL of the first `listening on <url>` line in `output`, if there is one. */
export const listeningUrl = (output) => /listening on (\S+)/.exec(output)?.[1];

/** PATH and HOME of this process: the least environment a child needs. */
export const minimalEnv = () => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' });

/**
 * spawn(), started once more after 250 ms when the system could not start the process at all (as
 * the product's command wrapper does: under Wine CreateProcess now and then fails as UNKNOWN).
 */
const spawnChild = async (command, args, options) => {
  try {
    return spawn(command, args, options);
  } catch (e) {
    if (!['UNKNOWN', 'EAGAIN', 'EMFILE', 'ENFILE', 'ENOMEM', 'EBUSY'].includes(e?.code)) throw e;
    await sleep(250);
    return spawn(command, args, options);
  }
};

/** Runs `command args` to its end and resolves with its exit code and output. */
export const runProcess = async (command, args, { env = minimalEnv(), cwd, timeoutMs } = {}) => {
  const child = await spawnChild(command, args, {
    env,
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: timeoutMs,
  });
  return new Promise((resolvePromise, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
};

/**
 * Starts `command args` and resolves once its standard output has a `listening on <url>` line;
 * rejects (and kills it) when it exits first or has not listened within `timeoutMs`.
 */
export const startServing = async (command, args, { env = minimalEnv(), cwd, timeoutMs = 30_000 } = {}) => {
  const t0 = performance.now();
  const child = await spawnChild(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolvePromise, reject) => {
    let out = '';
    let err = '';
    const exited = new Promise((r) => child.once('exit', (code) => r(code)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no "listening on" within ${timeoutMs} ms: ${out}${err}`));
    }, timeoutMs);
    child.stderr.on('data', (d) => {
      err += d;
    });
    let listening = false;
    child.stdout.on('data', (d) => {
      out += d;
      const url = listening ? undefined : listeningUrl(out);
      if (url === undefined) return;
      listening = true;
      clearTimeout(timer);
      resolvePromise({
        url,
        banner: out,
        child,
        listeningMs: performance.now() - t0,
        exited,
        output: () => out + err,
        stop: (signal = 'SIGTERM') => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening: ${out}${err}`));
    });
  });
};
