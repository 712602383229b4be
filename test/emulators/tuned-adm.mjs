#!/usr/bin/env node
// A stand-in for tuned-adm in tests, driven by a JSON state file (TUNED_ADM_EMU_STATE) and printing
// what the real tool prints (test/fixtures/linux-tuned). Every argv is appended as a JSON line to
// TUNED_ADM_EMU_LOG (default: <state file>.argv.jsonl).
// State: { daemon: "running" | "stopped", authorized: true, active: "name" | null,
//          profiles: [{ name, description }], recommend: "name",
//          log: "<path of tuned.log>", activeFile: "<path of tuned's active_profile>",
//          ignoredOptions: { "<profile>": [["option", "Plugin"], ...] }   options tuned warns about and ignores
//          notSticking: [{ name, got, expected, device? }] }             what `verify` finds changed back
// The log lines are tuned's own formats (tuned/consts.py and plugins/base.py of tuned 2.x); the
// verify messages are printed by tuned-adm (tuned/admin/admin.py), including its "Verfication" typo.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { answerSlowly, logRun } from './run-log.mjs';

logRun('tuned-adm');

const statePath = process.env.TUNED_ADM_EMU_STATE;
if (!statePath) {
  process.stderr.write('tuned-adm emulator: TUNED_ADM_EMU_STATE is not set\n');
  process.exit(2);
}
const args = process.argv.slice(2);
appendFileSync(process.env.TUNED_ADM_EMU_LOG ?? `${statePath}.argv.jsonl`, `${JSON.stringify(args)}\n`);
const state = JSON.parse(readFileSync(statePath, 'utf8'));
answerSlowly(state);
const out = (s) => process.stdout.write(s);
const err = (s) => process.stderr.write(s);
const running = state.daemon !== 'stopped';
// rocky-tuned-adm-active-daemon-not-running.txt (the source does not say which stream; stderr here)
const noDaemon = 'Cannot talk to TuneD daemon via DBus. Is TuneD daemon running?\n';

const printActive = () => {
  if (running && state.active) {
    out(`Current active profile: ${state.active}\n`);
    return 0;
  }
  out('No current active profile.\n');
  return 1;
};

const stamp = () => new Date().toISOString().replace('T', ' ').replace('Z', '').replace('.', ',');
const log = (level, where, text) => {
  if (state.log) appendFileSync(state.log, `${stamp()} ${level.padEnd(8)} ${where}: ${text}\n`);
};

const commands = {
  verify() {
    if (!running) {
      err(noDaemon);
      return 1;
    }
    const failed = state.notSticking ?? [];
    for (const f of failed) {
      log(
        'ERROR',
        'tuned.plugins.base',
        f.device
          ? `verify: failed: device ${f.device}: '${f.name}' = '${f.got}', expected '${f.expected}'`
          : `verify: failed: '${f.name}' = '${f.got}', expected '${f.expected}'`,
      );
    }
    if (failed.length === 0) {
      out('Verfication succeeded, current system settings match the preset profile.\n');
    } else {
      out('Verification failed, current system settings differ from the preset profile.\n');
      out(
        'You can mostly fix this by restarting the TuneD daemon, e.g.:\n  systemctl restart tuned\nor\n  service tuned restart\n',
      );
      out('Sometimes (if some plugins like bootloader are used) a reboot may be required.\n');
    }
    out("See TuneD log file ('/var/log/tuned/tuned.log') for details.\n");
    return failed.length ? 1 : 0;
  },
  active() {
    if (!running) err(noDaemon);
    return printActive();
  },
  list() {
    if (!running) err(noDaemon);
    out('Available profiles:\n');
    for (const p of state.profiles) {
      out(p.description ? `- ${p.name.padEnd(27)} - ${p.description}\n` : `- ${p.name}\n`);
    }
    printActive();
    return 0;
  },
  recommend() {
    out(`${state.recommend ?? 'balanced'}\n`);
    return 0;
  },
  profile(...names) {
    if (!running) {
      // Not a captured case for the backend: it never switches through a stopped daemon.
      err(noDaemon);
      return 1;
    }
    if (state.authorized === false) {
      // Captured in openstack-k8s-operators/edpm-ansible#143 (stderr, exit code 1).
      err('Unable to switch profile: Unauthorized\n');
      return 1;
    }
    const missing = names.find((n) => !state.profiles.some((p) => p.name === n));
    if (names.length === 0 || missing) {
      // Not captured: the wording of tuned's "no such profile" answer is a stand-in.
      err(`Unable to switch profile: Requested profile '${missing ?? ''}' doesn't exist.\n`);
      return 1;
    }
    writeFileSync(statePath, JSON.stringify({ ...state, active: names.join(' ') }, null, 2));
    // As the daemon does on a switch (tuned/daemon/daemon.py _save_active_profile).
    if (state.activeFile) writeFileSync(state.activeFile, `${names.join(' ')}\n`);
    log(
      'INFO',
      'tuned.profiles.loader',
      names.length > 1 ? `loading profiles: ${names.join(', ')}` : `loading profile: ${names[0]}`,
    );
    for (const name of names) {
      for (const [option, plugin] of state.ignoredOptions?.[name] ?? []) {
        log('WARNING', 'tuned.plugins.base', `Unknown option '${option}' for plugin '${plugin}'.`);
      }
    }
    log('INFO', 'tuned.daemon.daemon', `static tuning from profile '${names.join(' ')}' applied`);
    return 0;
  },
};

const run = commands[args[0]];
if (!run) {
  err(
    `usage: tuned-adm [-h] [--version] [--debug] [--async] [--timeout TIMEOUT] [--loglevel LOGLEVEL] {list,active,off,profile,recommend,verify,auto_profile,profile_mode,profile_info} ...\n`,
  );
  process.exit(2);
}
process.exit(run(...args.slice(1)));
