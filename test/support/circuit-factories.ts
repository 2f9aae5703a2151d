import { Circuit } from '../../src/models';
import type { CircuitDefinition } from '../../src/domain/definition';
import { publishVersion } from '../../src/commands/publish-version';
import { setCircuitStar } from '../../src/commands/star-circuit';
import { HELLO_DEFINITION, makeCircuit, publishPorts, TestUser } from './factories';

/** A definition whose only step embeds `circuitUid` (optionally pinned to `versionUid`). */
export function embeddingDefinition(circuitUid: string, versionUid?: string): CircuitDefinition {
  return {
    query_schema: { type: 'object', properties: { name: { type: 'string' } } },
    steps: [
      {
        id: 'inner',
        kind: 'circuit',
        circuit_uid: circuitUid,
        ...(versionUid ? { version_uid: versionUid } : {}),
        input: { name: '{{input.name}}' },
      },
    ],
  };
}

/** A circuit of `owner` whose first version embeds `target`. */
export async function makeEmbeddingCircuit(
  owner: TestUser,
  target: Circuit,
  input: { isPrivate?: boolean; name?: string } = {},
): Promise<Circuit> {
  const { circuit } = await makeCircuit(owner, input, null);
  await publishVersion(publishPorts(), owner.user, circuit, embeddingDefinition(target.uid));
  return circuit.reload();
}

/** Publishes another version of HELLO_DEFINITION (or `definition`). */
export async function publishAgain(
  owner: TestUser,
  circuit: Circuit,
  definition: CircuitDefinition = HELLO_DEFINITION,
  primary = false,
) {
  const version = await publishVersion(publishPorts(), owner.user, circuit, definition, primary);
  await circuit.reload();
  return version;
}

export async function star(user: TestUser, circuit: Circuit): Promise<void> {
  await setCircuitStar(Circuit.sequelize!, user.user, circuit, true);
}
