import crypto from 'node:crypto';
import { Circuit, CircuitVersion, User } from '../../src/models';
import { createUser, CreateUserInput } from '../../src/commands/create-user';
import { createApiToken } from '../../src/commands/create-api-token';
import { createCircuit, CreateCircuitInput } from '../../src/commands/create-circuit';
import { publishVersion } from '../../src/commands/publish-version';
import type { CircuitDefinition } from '../../src/domain/definition';
import { createJsonSchemaService } from '../../src/engine/json-schemas';
import { Sandbox } from '../../src/sandbox/sandbox';

const unique = () => crypto.randomBytes(4).toString('hex');

/** The factories' own compile check for publishes (its thread is unref'd: it never holds a test file open). */
const schemas = createJsonSchemaService();
const sandbox = new Sandbox();

/** What publishVersion needs, for factories that publish outside a request: this file's database and compile check. */
export function publishPorts() {
  return { sequelize: Circuit.sequelize!, schemas, sandbox };
}

export interface TestUser {
  user: User;
  token: string;
  username: string;
}

export async function makeUser(input: Partial<CreateUserInput> = {}): Promise<TestUser> {
  const user = await createUser({ username: input.username ?? `u${unique()}`, credits: 1000, ...input });
  const { token } = await createApiToken(user, 'test');
  return { user, token, username: user.username };
}

/** The walk-through circuit (docs/circuit-definition.md): greets `input.name` and upper-cases it. */
export const HELLO_DEFINITION: CircuitDefinition = {
  query_schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  steps: [
    { id: 'greet', kind: 'template', template: 'Hello {{input.name}}' },
    { id: 'shout', kind: 'transform', expression: '$uppercase(steps.greet.output)' },
  ],
  output: 'steps.shout.output',
};

export async function makeCircuit(
  owner: TestUser,
  input: Partial<CreateCircuitInput> = {},
  definition: CircuitDefinition | null = HELLO_DEFINITION,
): Promise<{ circuit: Circuit; version: CircuitVersion | null }> {
  const circuit = await createCircuit(Circuit.sequelize!, owner.user, { name: input.name ?? `c${unique()}`, ...input });
  const version = definition ? await publishVersion(publishPorts(), owner.user, circuit, definition) : null;
  await circuit.reload();
  return { circuit, version };
}
