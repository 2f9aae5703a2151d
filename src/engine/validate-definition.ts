import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import jsonata from 'jsonata';
import { Op } from 'sequelize';
import { Circuit, CircuitEmbed, CircuitVersion, User } from '../models';
import { badInput } from '../errors';
import { circuitPermits } from '../policies/circuit.policy';
import { isUid } from '../ids';
import { CircuitDefinition, STEP_KINDS, StepDefinition, StepKind } from './definition';
import { checkTemplate, stringLeaves } from './render';
import { referencedSteps, stepReferences } from './dependencies';

export interface ValidatedDefinition {
  definition: CircuitDefinition;
  /** Circuits that `circuit` steps embed (distinct), for the embeds list and cycle checks. */
  embeddedCircuitUids: string[];
}

export const STEP_ID = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const MAX_STEPS = 100;
const TOP_LEVEL_FIELDS = new Set(['query_schema', 'steps', 'output', 'description']);
const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];
const LLM_ROLES = ['system', 'user', 'assistant'];

/** The fields each step kind accepts besides `id` and `kind`: true = required. */
const STEP_FIELDS: Record<StepKind, Record<string, boolean>> = {
  template: { template: true },
  transform: { expression: true },
  llm: { model: true, messages: true, temperature: false, max_tokens: false },
  http: { method: true, url: true, headers: false, body: false },
  circuit: { circuit_uid: true, version_uid: false, input: false },
  blob: { blob_uid: true },
};

/** One Ajv for compile checks only; each schema is removed again so the cache does not grow. */
const ajv = new Ajv2020({ strict: false, allErrors: false });
addFormats(ajv);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Throws BadClientData naming `where` when a JSONata expression does not parse. */
export function checkExpression(expression: unknown, where: string): void {
  if (typeof expression !== 'string' || expression.trim() === '') throw badInput(`${where} must be a non-empty JSONata expression`);
  try {
    jsonata(expression);
  } catch (error) {
    const e = error as { message?: string; position?: number };
    throw badInput(`${where}: JSONata expression does not parse: ${e.message ?? 'syntax error'}${e.position !== undefined ? ` (at ${e.position})` : ''}`);
  }
}

function checkQuerySchema(schema: unknown): void {
  if (!isObject(schema)) throw badInput('definition.query_schema must be a JSON Schema object', { field: 'query_schema' });
  if (schema.type !== 'object') throw badInput('definition.query_schema must describe an object ("type": "object")', { field: 'query_schema' });
  try {
    ajv.compile(schema);
  } catch (error) {
    throw badInput(`definition.query_schema is not a valid JSON Schema (draft 2020-12): ${(error as Error).message}`, { field: 'query_schema' });
  } finally {
    try { ajv.removeSchema(schema); } catch { /* never added */ }
  }
}

function checkTemplateField(value: unknown, where: string): void {
  if (typeof value !== 'string') throw badInput(`${where} must be a string template`);
  checkTemplate(value, where);
}

function checkTemplateLeaves(value: unknown, where: string): void {
  for (const [path, text] of stringLeaves(value, where)) checkTemplate(text, path);
}

function checkStepFields(step: StepDefinition, where: string): void {
  const fields = STEP_FIELDS[step.kind];
  for (const key of Object.keys(step)) {
    if (key !== 'id' && key !== 'kind' && !(key in fields)) {
      throw badInput(`${where}: unknown field ${key} for a ${step.kind} step (allowed: ${Object.keys(fields).join(', ')})`);
    }
  }
  for (const [key, required] of Object.entries(fields)) {
    if (required && step[key] === undefined) throw badInput(`${where}: ${key} is required for a ${step.kind} step`);
  }
  switch (step.kind) {
    case 'template':
      checkTemplateField(step.template, `${where}.template`);
      break;
    case 'transform':
      checkExpression(step.expression, `${where}.expression`);
      break;
    case 'llm': {
      if (typeof step.model !== 'string' || step.model.trim() === '') throw badInput(`${where}.model must be a non-empty string`);
      if (!Array.isArray(step.messages) || step.messages.length === 0) throw badInput(`${where}.messages must be a non-empty array`);
      step.messages.forEach((message: unknown, i: number) => {
        const at = `${where}.messages[${i}]`;
        if (!isObject(message)) throw badInput(`${at} must be an object with role and content`);
        const extra = Object.keys(message).filter((k) => k !== 'role' && k !== 'content');
        if (extra.length > 0) throw badInput(`${at}: unknown field ${extra[0]} (allowed: role, content)`);
        if (typeof message.role !== 'string' || !LLM_ROLES.includes(message.role)) throw badInput(`${at}.role must be one of ${LLM_ROLES.join(', ')}`);
        checkTemplateField(message.content, `${at}.content`);
      });
      if (step.temperature !== undefined && (typeof step.temperature !== 'number' || !(step.temperature >= 0 && step.temperature <= 2))) {
        throw badInput(`${where}.temperature must be a number from 0 to 2`);
      }
      if (step.max_tokens !== undefined && (!Number.isInteger(step.max_tokens) || (step.max_tokens as number) < 1)) {
        throw badInput(`${where}.max_tokens must be a positive integer`);
      }
      break;
    }
    case 'http':
      if (typeof step.method !== 'string' || !HTTP_METHODS.includes(step.method)) throw badInput(`${where}.method must be one of ${HTTP_METHODS.join(', ')}`);
      checkTemplateField(step.url, `${where}.url`);
      if (step.headers !== undefined) {
        if (!isObject(step.headers)) throw badInput(`${where}.headers must be an object of string templates`);
        for (const [name, value] of Object.entries(step.headers)) checkTemplateField(value, `${where}.headers.${name}`);
      }
      if (step.body !== undefined) checkTemplateLeaves(step.body, `${where}.body`);
      break;
    case 'circuit':
      if (typeof step.circuit_uid !== 'string') throw badInput(`${where}.circuit_uid must be a circuit uid`);
      if (step.version_uid !== undefined && typeof step.version_uid !== 'string') throw badInput(`${where}.version_uid must be a version uid`);
      if (step.input !== undefined) checkTemplateLeaves(step.input, `${where}.input`);
      break;
    case 'blob':
      checkTemplateField(step.blob_uid, `${where}.blob_uid`);
      break;
  }
}

/** Throws naming one step of a cycle when `steps.<id>` references loop. */
function checkAcyclic(dependencies: Map<string, Set<string>>): void {
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (id: string, path: string[]): void => {
    if (state.get(id) === 'done') return;
    if (state.get(id) === 'visiting') {
      const cycle = [...path.slice(path.indexOf(id)), id];
      throw badInput(`definition.steps: the steps form a cycle: ${cycle.join(' -> ')}`);
    }
    state.set(id, 'visiting');
    for (const next of dependencies.get(id) ?? []) visit(next, [...path, id]);
    state.set(id, 'done');
  };
  for (const id of dependencies.keys()) visit(id, []);
}

/** Checks the embedded circuits exist, may be run by the publisher, and never lead back to `circuit`. */
async function checkEmbeds(steps: StepDefinition[], publisher: User, circuit: Circuit | undefined): Promise<string[]> {
  const embedded = new Set<string>();
  for (const step of steps) {
    if (step.kind !== 'circuit') continue;
    const where = `step ${step.id}`;
    const uid = step.circuit_uid as string;
    const target = isUid(uid) ? await Circuit.findByPk(uid) : null;
    if (!target || !circuitPermits(publisher, target, 'run')) {
      throw badInput(`${where}.circuit_uid does not name a circuit you may run`);
    }
    if (step.version_uid !== undefined) {
      const version = isUid(step.version_uid) ? await CircuitVersion.findByPk(step.version_uid as string) : null;
      if (!version || version.circuit_uid !== target.uid) throw badInput(`${where}.version_uid is not a version of circuit ${target.name}`);
    }
    if (circuit && target.uid === circuit.uid) throw badInput(`${where}: a circuit may not embed itself`);
    embedded.add(target.uid);
  }
  if (circuit && embedded.size > 0) {
    // Walk what the embedded circuits embed (in any version); reaching `circuit` would close a loop.
    const seen = new Set(embedded);
    let frontier = [...embedded];
    while (frontier.length > 0) {
      const rows = await CircuitEmbed.findAll({ where: { circuit_uid: { [Op.in]: frontier } }, attributes: ['circuit_uid', 'embedded_circuit_uid'] });
      frontier = [];
      for (const row of rows) {
        if (row.embedded_circuit_uid === circuit.uid) {
          throw badInput(`definition.steps: embedding would form a cycle: circuit ${row.circuit_uid} already embeds this circuit`);
        }
        if (!seen.has(row.embedded_circuit_uid)) {
          seen.add(row.embedded_circuit_uid);
          frontier.push(row.embedded_circuit_uid);
        }
      }
    }
  }
  return [...embedded];
}

/**
 * Checks a definition before it is published (DESIGN §4); each failure is BadClientData naming the
 * field or step at fault. Returns the definition and the circuits it embeds.
 */
export async function validateDefinition(raw: unknown, publisher: User, circuit?: Circuit): Promise<ValidatedDefinition> {
  if (!isObject(raw)) throw badInput('definition must be a JSON object');
  const unknownTop = Object.keys(raw).filter((key) => !TOP_LEVEL_FIELDS.has(key));
  if (unknownTop.length > 0) {
    throw badInput(`definition: unknown field ${unknownTop[0]} (allowed: ${[...TOP_LEVEL_FIELDS].join(', ')})`, { field: unknownTop[0] });
  }
  if (raw.description !== undefined && typeof raw.description !== 'string') throw badInput('definition.description must be a string');
  checkQuerySchema(raw.query_schema);

  if (!Array.isArray(raw.steps) || raw.steps.length === 0) throw badInput('definition.steps must be a non-empty array', { field: 'steps' });
  if (raw.steps.length > MAX_STEPS) throw badInput(`definition.steps may hold at most ${MAX_STEPS} steps`, { field: 'steps' });
  const ids = new Set<string>();
  raw.steps.forEach((step: unknown, i: number) => {
    if (!isObject(step)) throw badInput(`definition.steps[${i}] must be an object`);
    if (typeof step.id !== 'string' || !STEP_ID.test(step.id)) {
      throw badInput(`definition.steps[${i}].id must match ${STEP_ID.source} (got ${JSON.stringify(step.id ?? null)})`);
    }
    if (ids.has(step.id)) throw badInput(`definition.steps[${i}]: duplicate step id ${step.id}`);
    ids.add(step.id);
    if (typeof step.kind !== 'string' || !STEP_KINDS.includes(step.kind as StepKind)) {
      throw badInput(`step ${step.id}: kind must be one of ${STEP_KINDS.join(', ')}`);
    }
  });
  const steps = raw.steps as StepDefinition[];
  for (const step of steps) checkStepFields(step, `step ${step.id}`);

  const dependencies = new Map<string, Set<string>>();
  for (const step of steps) {
    const refs = stepReferences(step);
    for (const ref of refs) {
      if (ref === step.id) throw badInput(`step ${step.id}: a step may not reference its own output (steps.${ref})`);
      if (!ids.has(ref)) throw badInput(`step ${step.id}: references steps.${ref}, which is not a step of this definition`);
    }
    dependencies.set(step.id, refs);
  }
  checkAcyclic(dependencies);

  if (raw.output !== undefined) {
    checkExpression(raw.output, 'definition.output');
    for (const ref of referencedSteps(raw.output as string)) {
      if (!ids.has(ref)) throw badInput(`definition.output references steps.${ref}, which is not a step of this definition`);
    }
  }

  const embeddedCircuitUids = await checkEmbeds(steps, publisher, circuit);
  return { definition: raw as unknown as CircuitDefinition, embeddedCircuitUids };
}
