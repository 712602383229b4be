import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { unsupportedNode } from '../../perf/lib/machine.ts';
import { repoRoot } from '../support/deps.ts';

describe('perf scripts: the Node.js they measure on', () => {
  it('warns on a line package.json engines does not list, and names the engines; not on 22.19+ or 24+', () => {
    const engines = (
      JSON.parse(readFileSync(`${repoRoot}/package.json`, 'utf8')) as { engines: { node: string } }
    ).engines.node;
    assert.equal(engines, '^22.19.0 || >=24.0.0', 'unsupportedNode follows engines: change both together');
    for (const v of ['20.20.2', '22.18.0', '23.11.0', '18.20.0']) {
      assert.match(
        unsupportedNode(v) ?? '',
        new RegExp(
          `Node ${v.replaceAll('.', '\\.')} is not a supported line .*${engines.replace(/[.^|>=]/g, '\\$&')}`,
        ),
      );
    }
    for (const v of ['22.19.0', '22.23.3', '24.0.0', '24.22.3', '25.1.0'])
      assert.equal(unsupportedNode(v), undefined, v);
  });
});
