#!/usr/bin/env node
// A WinSW (powerplan-service.exe) emulator for tests of `powerplan service install|uninstall`:
// WinSW is a .NET program and no service control manager is reachable from the tests. It keeps
// the service's state in the JSON file POWERPLAN_EMU_WINSW (installed, running, every command in
// order) and answers install, start, stop, uninstall and status as WinSW 1.17 does: an install of
// an installed service, or a start of a missing one, fails with exit code 1.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const path = process.env.POWERPLAN_EMU_WINSW;
if (!path) {
  process.stderr.write('winsw emulator: POWERPLAN_EMU_WINSW not set\n');
  process.exit(2);
}
const state = existsSync(path)
  ? JSON.parse(readFileSync(path, 'utf8'))
  : { installed: false, running: false, commands: [] };
const [command = ''] = process.argv.slice(2);
state.commands.push(command);
const fail = (message) => {
  writeFileSync(path, JSON.stringify(state));
  process.stderr.write(`${message}\r\n`);
  process.exit(1);
};
switch (command.toLowerCase()) {
  case 'install':
    if (state.installed)
      fail("Installing the service with id 'powerplan'\r\nWMI Operation failure: ServiceExists");
    state.installed = true;
    process.stdout.write("Installing the service with id 'powerplan'\r\n");
    break;
  case 'start':
    if (!state.installed)
      fail("Starting the service with id 'powerplan'\r\nWMI Operation failure: ServiceNotFound");
    state.running = true;
    process.stdout.write("Starting the service with id 'powerplan'\r\n");
    break;
  case 'stop':
    if (!state.installed)
      fail("Stopping the service with id 'powerplan'\r\nWMI Operation failure: ServiceNotFound");
    state.running = false;
    process.stdout.write("Stopping the service with id 'powerplan'\r\n");
    break;
  case 'uninstall':
    if (!state.installed) {
      process.stdout.write(
        "Uninstalling the service with id 'powerplan'\r\nWarning! The service with id 'powerplan' does not exist. Nothing to uninstall\r\n",
      );
      break;
    }
    state.installed = false;
    state.running = false;
    process.stdout.write("Uninstalling the service with id 'powerplan'\r\n");
    break;
  case 'status':
    process.stdout.write(`${!state.installed ? 'NonExistent' : state.running ? 'Started' : 'Stopped'}\r\n`);
    break;
  default:
    fail(`Unknown command: ${command}`);
}
writeFileSync(path, JSON.stringify(state));
