// The reference for the start-up time of `powerplan serve`: plain Node, an http server answering
// /healthz, announced the same way ("listening on <url>") once it listens.
import { createServer } from 'node:http';

const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"status":"ok"}');
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`bare server listening on http://127.0.0.1:${server.address().port}\n`);
});
process.once('SIGTERM', () => process.exit(0));
