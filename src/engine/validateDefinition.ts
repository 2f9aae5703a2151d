import type { Circuit, User } from '../models';
import { badInput } from '../errors';
import { CircuitDefinition, STEP_KINDS } from './definition';

export interface ValidatedDefinition {
  definition: CircuitDefinition;
  /** Circuits that `circuit` steps embed, for the embeds list and cycle checks. */
  embeddedCircuitUids: string[];
}

/**
 * Checks a definition before it is published; each failure is BadClientData naming the problem.
 * TODO(foundation): Ajv compile, JSONata/template parsing, references, acyclic steps and embeds.
 */
export async function validateDefinition(raw: unknown, _publisher: User, _circuit?: Circuit): Promise<ValidatedDefinition> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badInput('definition must be a JSON object');
  const definition = raw as CircuitDefinition;
  if (typeof definition.query_schema !== 'object' || definition.query_schema === null) {
    throw badInput('definition.query_schema must be a JSON Schema object');
  }
  if (!Array.isArray(definition.steps) || definition.steps.length === 0) throw badInput('definition.steps must be a non-empty array');
  for (const step of definition.steps) {
    if (!STEP_KINDS.includes(step?.kind)) throw badInput(`step ${String(step?.id)}: kind must be one of ${STEP_KINDS.join(', ')}`);
  }
  return { definition, embeddedCircuitUids: [] };
}
