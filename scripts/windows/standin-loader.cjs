// Loaded by standin.cjs from disk (copied next to the stand-ins as loader.cjs): an ordinary
// CommonJS module, whose dynamic import() a single executable's main script does not have.
const { pathToFileURL } = require('node:url');

module.exports = (script) => import(pathToFileURL(script).href);
