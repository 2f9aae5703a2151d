import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import { Op, type Transaction } from 'sequelize';
import { Circuit, CircuitAlias, CircuitEmbed, CircuitVersion, User } from '../models';
import { badInput } from '../errors';
import { describeSchemaError, fieldPath } from '../schema-errors';
import { circuitPermits } from '../policies/circuit.policy';
import { isUid } from '../ids';
import type { Sandbox } from '../sandbox/sandbox';
import type { CircuitDefinition, StepDefinition } from '../domain/definition';
import { annotatedDefinitionSchema, STEP_ID } from './definition-schema';
import { referencedSteps, stepReferences } from './dependencies';
import { querySchemaProblem } from './input-schema';
import { outputSchemaProblem } from './output-schema';
import type { SchemaCompiler } from './schema-compile';
import { stringLeaves } from './render';
import { stepKind } from './steps/registry';
import { waitStepProblem } from './steps/wait';
import { agentStepProblem } from './steps/agent';
import type { FieldSchema } from './steps/types';

export { MAX_STEPS, STEP_ID } from './definition-schema';

export interface ValidatedDefinition {
  definition: CircuitDefinition;
  /** Circuits that `circuit` steps and agent steps' circuit tools embed (distinct), for the embeds list and cycle checks. */
  embeddedCircuitUids: string[];
}

/**
 * Compiled once per process, by the API at start (prepareDefinitionValidation): workers and most CLI commands never
 * need it. Without Ajv's optimizing pass over the generated code it compiles ~35 % faster and validates as fast.
 */
let shapeValidator: ValidateFunction | undefined;
function shapeValidatorOf(): ValidateFunction {
  return (shapeValidator ??= new Ajv2020({
    strict: false,
    allErrors: false,
    verbose: true,
    code: { optimize: false },
  }).compile(annotatedDefinitionSchema()));
}
function validateShape(raw: unknown): ErrorObject | null {
  const validate = shapeValidatorOf();
  return validate(raw) ? null : validate.errors![0];
}

/** Compiles the definition's JSON Schema now, so that the first publish does not stall the event loop for it (~0.1 s). */
export function prepareDefinitionValidation(): void {
  shapeValidatorOf();
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The words of an annotated schema for a failing keyword. */
function messageOf(schema: FieldSchema | undefined, keyword: string): string | undefined {
  const message = schema?.['x-message'];
  if (typeof message === 'string') return message;
  return message?.[keyword] ?? message?.['*'];
}

/** `/steps/2/messages/0/role` → where the step is named (`step a`) and the path inside it (`.messages[0].role`). */
function locate(instancePath: string, definition: unknown): { where: string; path: string } {
  const parts = instancePath.split('/');
  if (parts[1] === 'steps' && parts.length >= 3) {
    const step = (definition as { steps: unknown[] }).steps[Number(parts[2])] as { id?: unknown } | undefined;
    const named = typeof step?.id === 'string' && STEP_ID.test(step.id);
    const inside = fieldPath(`/${parts.slice(3).join('/')}`, 'x').slice(1);
    return {
      where: named ? `step ${String(step!.id)}` : `definition.steps[${parts[2]}]`,
      path: parts.length > 3 ? inside : '',
    };
  }
  return { where: 'definition', path: parts.length > 1 ? `.${fieldPath(instancePath)}` : '' };
}

/**
 * One Ajv error as the sentence a publisher reads: the shared wording (src/schema-errors.ts), naming the
 * step and field; a field's authored `x-message` replaces Ajv's words, and an unknown field lists the allowed ones.
 */
function describe(error: ErrorObject, definition: unknown): { message: string; field?: string } {
  const { where, path } = locate(error.instancePath, definition);
  const at = `${where}${path}`;
  const parent = error.parentSchema as FieldSchema | undefined;
  const properties = (parent?.properties ?? {}) as Record<string, FieldSchema>;
  const value = (text: string, data: unknown) => text.replace('{value}', JSON.stringify(data ?? null));
  const topField = (name: string | undefined) => (where === 'definition' ? name : undefined);
  switch (error.keyword) {
    case 'additionalProperties': {
      const allowed = Object.keys(properties).filter((k) => !(parent?.['x-kind'] && (k === 'id' || k === 'kind')));
      const kind = parent?.['x-kind'] ? `a ${String(parent['x-kind'])} step allows` : 'allowed';
      const { message, field } = describeSchemaError(error, at, 'definition');
      return {
        message: `${message} (${kind}: ${allowed.join(', ')})`,
        field: path === '' ? topField(field.slice(at.length + 1)) : undefined,
      };
    }
    case 'required': {
      const missing = String((error.params as { missingProperty: string }).missingProperty);
      const authored = parent?.['x-kind'] ? undefined : messageOf(properties[missing], 'required');
      if (missing === 'kind' && authored) return { message: `${at}: ${authored}` };
      const { message } = describeSchemaError(error, at, 'definition');
      return {
        message: authored ? `${at}.${missing} ${value(authored, undefined)}` : message,
        field: path === '' ? topField(missing) : undefined,
      };
    }
    default: {
      // "step a: kind must be one of …": the kind is about the step, not a field inside it.
      if (path === '.kind')
        return { message: `${where}: ${messageOf(parent, error.keyword) ?? 'has an unknown kind'}` };
      const authored = messageOf(parent, error.keyword);
      const field = path !== '' ? topField(path.slice(1).split(/[.[]/)[0]) : undefined;
      return {
        message: authored
          ? `${at} ${value(authored, error.data)}`
          : describeSchemaError(error, at, 'definition').message,
        field,
      };
    }
  }
}

/** Throws BadClientData naming `where` when a JSONata expression does not parse (parsed in the sandbox). */
export async function checkExpression(sandbox: Sandbox, expression: unknown, where: string): Promise<void> {
  if (typeof expression !== 'string' || expression.trim() === '')
    throw badInput(`${where} must be a non-empty JSONata expression`);
  await checkTexts(sandbox, [{ kind: 'jsonata', text: expression, where }]);
}

interface Text {
  kind: 'template' | 'jsonata';
  text: string;
  where: string;
}

/** Parses every template and expression in one sandbox call (bounded by STEP_CPU_MS); throws on the first bad one. */
async function checkTexts(sandbox: Sandbox, texts: Text[]): Promise<void> {
  const problem = await sandbox.checkSyntax(texts.map(({ kind, text }) => ({ kind, text })));
  if (!problem) return;
  if (problem.index < 0) throw badInput(`definition: ${problem.message}`);
  const text = texts[problem.index];
  if (problem.kind === 'unavailable') throw badInput(`${text.where}: ${problem.message}`);
  if (text.kind === 'template')
    throw badInput(`${text.where}: template does not parse: ${problem.message.split('\n')[0]}`);
  throw badInput(
    `${text.where}: JSONata expression does not parse: ${problem.message}${problem.position !== undefined ? ` (at ${problem.position})` : ''}`,
  );
}

/** The templates and expressions a value holds, by the annotations of its schema. */
function textsOf(schema: FieldSchema, value: unknown, where: string, out: Text[]): void {
  if (value === undefined) return;
  if (schema['x-template'] && typeof value === 'string') out.push({ kind: 'template', text: value, where });
  if (schema['x-jsonata'] && typeof value === 'string') out.push({ kind: 'jsonata', text: value, where });
  if (schema['x-template-leaves'])
    for (const [path, text] of stringLeaves(value, where)) out.push({ kind: 'template', text, where: path });
  if (Array.isArray(value) && isObject(schema.items))
    value.forEach((item, i) => textsOf(schema.items as FieldSchema, item, `${where}[${i}]`, out));
  if (isObject(value)) {
    const properties = (schema.properties ?? {}) as Record<string, FieldSchema>;
    for (const [key, item] of Object.entries(value)) {
      const inner =
        properties[key] ??
        (isObject(schema.additionalProperties) ? (schema.additionalProperties as FieldSchema) : undefined);
      if (inner) textsOf(inner, item, `${where}.${key}`, out);
    }
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

/**
 * Throws BadClientData when embedding `embedded` in circuit `circuitUid` would close a loop: walks what
 * the embedded circuits embed (in any version). Publishing calls it again under the embeds lock, inside
 * its transaction, so that two concurrent publishes (X embeds Y, Y embeds X) cannot both pass.
 */
export async function assertNoEmbedCycle(
  circuitUid: string,
  embedded: string[],
  transaction?: Transaction,
): Promise<void> {
  const seen = new Set(embedded);
  let frontier = [...embedded];
  while (frontier.length > 0) {
    const rows = await CircuitEmbed.findAll({
      where: { circuit_uid: { [Op.in]: frontier } },
      attributes: ['circuit_uid', 'embedded_circuit_uid'],
      transaction,
    });
    frontier = [];
    for (const row of rows) {
      if (row.embedded_circuit_uid === circuitUid) {
        throw badInput(
          `definition.steps: embedding would form a cycle: circuit ${row.circuit_uid} already embeds this circuit`,
        );
      }
      if (!seen.has(row.embedded_circuit_uid)) {
        seen.add(row.embedded_circuit_uid);
        frontier.push(row.embedded_circuit_uid);
      }
    }
  }
}

/** What a step runs of other circuits: a `circuit` step's circuit, an `agent` step's circuit tools. */
function embedsOf(step: StepDefinition): { where: string; uid: unknown; version_uid?: unknown; alias?: unknown }[] {
  if (step.kind === 'circuit')
    return [{ where: `step ${step.id}`, uid: step.circuit_uid, version_uid: step.version_uid }];
  if (step.kind !== 'agent') return [];
  return (step.tools as { circuit_uid?: unknown; version_uid?: unknown; alias?: unknown }[]).flatMap((tool, i) =>
    tool.circuit_uid === undefined
      ? []
      : [
          {
            where: `step ${step.id}.tools[${i}]`,
            uid: tool.circuit_uid,
            version_uid: tool.version_uid,
            alias: tool.alias,
          },
        ],
  );
}

/**
 * Checks the embedded circuits (`circuit` steps, agent steps' circuit tools) exist, may be run by the
 * publisher, and never lead back to `circuit`.
 */
async function checkEmbeds(steps: StepDefinition[], publisher: User, circuit: Circuit | undefined): Promise<string[]> {
  const embedded = new Set<string>();
  for (const embed of steps.flatMap(embedsOf)) {
    const { where, uid } = embed;
    const target = isUid(uid) ? await Circuit.findByPk(uid) : null;
    if (!target || !circuitPermits(publisher, target, 'run')) {
      throw badInput(`${where}.circuit_uid does not name a circuit you may run`);
    }
    if (embed.version_uid !== undefined) {
      const version = isUid(embed.version_uid) ? await CircuitVersion.findByPk(embed.version_uid) : null;
      if (!version || version.circuit_uid !== target.uid)
        throw badInput(`${where}.version_uid is not a version of circuit ${target.name}`);
    }
    if (embed.alias !== undefined) {
      const alias = await CircuitAlias.findOne({ where: { circuit_uid: target.uid, name: String(embed.alias) } });
      if (!alias) throw badInput(`${where}.alias is not an alias of circuit ${target.name}`);
    }
    if (circuit && target.uid === circuit.uid) throw badInput(`${where}: a circuit may not embed itself`);
    embedded.add(target.uid);
  }
  if (circuit) await assertNoEmbedCycle(circuit.uid, [...embedded]);
  return [...embedded];
}

/**
 * Checks a definition before it is published; each failure is BadClientData naming the
 * field or step at fault. The shape is checked against the definition JSON Schema built from the step
 * kinds; then step references, the query schema, every template and expression (parsed in the
 * sandbox) and the embeds. Returns the definition and the circuits it embeds.
 */
export async function validateDefinition(
  { compiler, sandbox }: { compiler: SchemaCompiler; sandbox: Sandbox },
  raw: unknown,
  publisher: User,
  circuit?: Circuit,
): Promise<ValidatedDefinition> {
  const shapeError = validateShape(raw);
  if (shapeError) {
    const { message, field } = describe(shapeError, raw);
    throw badInput(message, field ? { field } : undefined);
  }
  const definition = raw as unknown as CircuitDefinition;
  if (definition.query_schema.type !== 'object')
    throw badInput('definition.query_schema must describe an object ("type": "object")', { field: 'query_schema' });
  const problem = await querySchemaProblem(compiler, definition.query_schema);
  if (problem) throw badInput(`definition.query_schema ${problem}`, { field: 'query_schema' });
  const outputProblem =
    definition.output_schema === undefined ? null : await outputSchemaProblem(compiler, definition.output_schema);
  if (outputProblem) throw badInput(`definition.output_schema ${outputProblem}`, { field: 'output_schema' });

  const steps = definition.steps;
  const ids = new Set<string>();
  steps.forEach((step, i) => {
    if (ids.has(step.id)) throw badInput(`definition.steps[${i}]: duplicate step id ${step.id}`);
    ids.add(step.id);
  });

  for (const step of steps) {
    if (step.kind !== 'agent') continue;
    const problem = agentStepProblem(step);
    if (problem) throw badInput(`step ${step.id}.${problem.field}: ${problem.message}`);
    for (const [i, tool] of (step.tools as { input_schema?: Record<string, unknown> }[]).entries()) {
      if (tool.input_schema === undefined) continue;
      const schemaProblem = await querySchemaProblem(compiler, tool.input_schema);
      if (schemaProblem) throw badInput(`step ${step.id}.tools[${i}].input_schema ${schemaProblem}`);
    }
    if (step.output_schema !== undefined) {
      const schemaProblem = await outputSchemaProblem(compiler, step.output_schema);
      if (schemaProblem) throw badInput(`step ${step.id}.output_schema ${schemaProblem}`);
    }
  }

  for (const step of steps) {
    if (step.kind !== 'wait') continue;
    const problem = waitStepProblem(step);
    if (problem) throw badInput(`step ${step.id}.${problem.field}: ${problem.message}`);
    if (step.schema !== undefined) {
      const schemaProblem = await outputSchemaProblem(compiler, step.schema);
      if (schemaProblem) throw badInput(`step ${step.id}.schema ${schemaProblem}`);
    }
  }

  const dependencies = new Map<string, Set<string>>();
  for (const step of steps) {
    const refs = stepReferences(step);
    for (const ref of refs) {
      if (ref === step.id) throw badInput(`step ${step.id}: a step may not reference its own output (steps.${ref})`);
      if (!ids.has(ref))
        throw badInput(`step ${step.id}: references steps.${ref}, which is not a step of this definition`);
    }
    dependencies.set(step.id, refs);
  }
  checkAcyclic(dependencies);
  if (definition.output !== undefined) {
    for (const ref of referencedSteps(definition.output)) {
      if (!ids.has(ref))
        throw badInput(`definition.output references steps.${ref}, which is not a step of this definition`);
    }
  }

  const texts: Text[] = [];
  for (const step of steps) {
    for (const [field, schema] of Object.entries(stepKind(step.kind)!.fields))
      textsOf(schema, step[field], `step ${step.id}.${field}`, texts);
  }
  if (definition.output !== undefined)
    texts.push({ kind: 'jsonata', text: definition.output, where: 'definition.output' });
  await checkTexts(sandbox, texts);

  const embeddedCircuitUids = await checkEmbeds(steps, publisher, circuit);
  return { definition, embeddedCircuitUids };
}
