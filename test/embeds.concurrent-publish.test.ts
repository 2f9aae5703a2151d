import { startTestApp, TestApp } from './support/app';
import { makeCircuit, makeUser, HELLO_DEFINITION } from './support/factories';
import { CircuitEmbed } from '../src/models';
import type { CircuitDefinition } from '../src/domain/definition';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const embedding = (circuitUid: string): CircuitDefinition => ({
  query_schema: { type: 'object' },
  steps: [{ id: 'inner', kind: 'circuit', circuit_uid: circuitUid, input: { name: 'x' } }],
});

test('concurrent publishes X→Y and Y→X never both succeed: the embed graph stays acyclic', async () => {
  const owner = await makeUser();
  for (let round = 0; round < 10; round++) {
    const { circuit: x } = await makeCircuit(owner, {}, HELLO_DEFINITION);
    const { circuit: y } = await makeCircuit(owner, {}, HELLO_DEFINITION);
    const publish = (from: string, to: string) =>
      t.gql(
        'mutation($c: ID!, $d: JSON!) { publishCircuitVersion(circuitUid: $c, definition: $d) { uid } }',
        { c: from, d: embedding(to) },
        owner.token,
      );
    const results = await Promise.all([publish(x.uid, y.uid), publish(y.uid, x.uid)]);
    const succeeded = results.filter((r) => !r.errors);
    expect(succeeded).toHaveLength(1);
    const failed = results.find((r) => r.errors)!;
    expect(failed.code).toBe('BadClientData');
    expect(failed.errors![0].message).toMatch(/cycle/);
    const edges = await CircuitEmbed.findAll({ where: { circuit_uid: [x.uid, y.uid] } });
    expect(edges).toHaveLength(1);
  }
});
