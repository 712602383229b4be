// The main script of the .exe stand-ins for Windows commands (powercfg.exe, reg.exe, icacls.exe)
// used by the Windows tier: one single executable linked under each name. It runs the emulator
// script that standins.json (next to the .exe) names for its own file name, with the arguments it
// was given, as if `node <script> <args...>` had been run. The command wrapper passes a minimal
// environment, so the script, and any variables the emulators need (their state file), are found
// beside the executable: { "scripts": { "<name>": "<path>" }, "env": { ... } }.
const { readFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { basename, dirname, join } = require('node:path');

const exe = process.execPath;
const name = basename(exe)
  .replace(/\.exe$/i, '')
  .toLowerCase();
const { scripts, env = {} } = JSON.parse(readFileSync(join(dirname(exe), 'standins.json'), 'utf8'));
const script = scripts[name];
Object.assign(process.env, env);
if (!script) {
  process.stderr.write(`${name}: no emulator script in standins.json\n`);
  process.exit(9009);
}
process.argv = [process.argv[0], script, ...process.argv.slice(process.argv[1] === exe ? 2 : 1)];
// A SEA's own require loads built-ins only; the loader next to the script is an ordinary module,
// whose import() can load the ES module emulator.
createRequire(join(dirname(exe), 'loader.cjs'))('./loader.cjs')(script).catch((error) => {
  process.stderr.write(`${name}: ${error?.stack ?? error}\n`);
  process.exit(1);
});
