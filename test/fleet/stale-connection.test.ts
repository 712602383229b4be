/**
 * A kept-alive connection the agent closed as idle just as the next request went out: the request
 * never reached the agent, so the client sends it once more on a new connection instead of calling
 * a live host unreachable. A reset on a fresh connection is still the agent's failure.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { exchange } from '../../src/services/fleet/client.ts';
import { AgentFailure } from '../../src/services/fleet/failure.ts';

const answer =
  'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\n{}';

/** A server that answers the first request on a connection and resets the connection at its second. */
const resettingSecondRequest = async (resetFirstToo = false) => {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    let requests = 0;
    socket.on('data', () => {
      requests++;
      if (requests === 1 && !resetFirstToo) socket.write(answer);
      else socket.resetAndDestroy();
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/plans/active`);
  return { server, url, connections: () => connections };
};

const get = (url: URL, agent: http.Agent) =>
  exchange(url, agent, {
    method: 'GET',
    headers: {},
    signal: AbortSignal.timeout(5000),
    maxBytes: 1024,
  });

describe('fleet client: a kept-alive connection closed by the agent', () => {
  const servers: net.Server[] = [];
  after(() => {
    for (const s of servers) s.close();
  });

  it('is retried once on a new connection, and the answer comes from there', async () => {
    const s = await resettingSecondRequest();
    servers.push(s.server);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      assert.equal((await get(s.url, agent)).status, 200);
      assert.equal(s.connections(), 1);
      // The second request goes out on the kept connection, which the server resets.
      const second = await get(s.url, agent);
      assert.equal(second.status, 200);
      assert.equal(second.text, '{}');
      assert.equal(s.connections(), 2, 'the retry opened a new connection');
    } finally {
      agent.destroy();
    }
  });

  it('a reset on a new connection is not retried: the host is unreachable', async () => {
    const s = await resettingSecondRequest(true);
    servers.push(s.server);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      await assert.rejects(get(s.url, agent), (e: unknown) => {
        assert.ok(e instanceof AgentFailure);
        assert.equal(e.status, 'unreachable');
        return true;
      });
      assert.equal(s.connections(), 1, 'one attempt');
    } finally {
      agent.destroy();
    }
  });
});
