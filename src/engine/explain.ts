import type { CircuitDefinition, StepDefinition } from '../domain/definition';
import { stepReferences } from './dependencies';
import { stringLeaves } from './render';
import { describePolicy } from './step-policy';
import { stepKind } from './steps/registry';
import { agentToolCircuits } from './steps/agent';

export interface ExplainedInput {
  name: string;
  type: string;
  required: boolean;
  description: string;
}
export interface ExplainedStep {
  id: string;
  kind: string;
  description: string;
}
export interface Explanation {
  inputs: ExplainedInput[];
  steps: ExplainedStep[];
  text: string;
}

/** How a `circuit` step's target is named in words, e.g. `alice/summarize`; resolved by the caller. */
export type CircuitNamer = (circuitUid: string) => string | undefined;

/** The circuits a definition names (`circuit` steps, agent steps' circuit tools): what a CircuitNamer is asked about. */
export function circuitsNamedBy(definition: CircuitDefinition): string[] {
  const uids = new Set<string>();
  for (const step of definition.steps) {
    if (step.kind === 'circuit' && typeof step.circuit_uid === 'string') uids.add(step.circuit_uid);
    for (const uid of agentToolCircuits(step)) uids.add(uid);
  }
  return [...uids];
}

const INPUT_REFERENCE = /\binput\.([A-Za-z_$][A-Za-z0-9_$]*)/g;

function schemaType(schema: unknown): string {
  if (!schema || typeof schema !== 'object') return 'any';
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.type)) return s.type.join(' or ');
  if (typeof s.type === 'string') {
    if (s.type === 'array' && s.items && typeof s.items === 'object') return `array of ${schemaType(s.items)}`;
    return s.type;
  }
  if (Array.isArray(s.enum)) return `one of ${s.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  if ('const' in s) return `the value ${JSON.stringify(s.const)}`;
  return 'any';
}

/** The `input` fields a run accepts, from the version's query schema. */
export function explainInputs(querySchema: Record<string, unknown>): ExplainedInput[] {
  const properties = (querySchema.properties ?? {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(querySchema.required) ? (querySchema.required as string[]) : []);
  return Object.entries(properties).map(([name, schema]) => ({
    name,
    type: schemaType(schema),
    required: required.has(name),
    description:
      typeof (schema as { description?: unknown })?.description === 'string'
        ? (schema as { description: string }).description
        : '',
  }));
}

function inputsRead(step: StepDefinition): string[] {
  const names = new Set<string>();
  for (const [field, value] of Object.entries(step)) {
    if (field === 'id' || field === 'kind') continue;
    for (const [, text] of stringLeaves(value, field)) for (const m of text.matchAll(INPUT_REFERENCE)) names.add(m[1]);
  }
  return [...names];
}

function quote(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length > max ? `${flat.slice(0, max - 1)}…` : flat);
}

function what(step: StepDefinition, nameCircuit: CircuitNamer): string {
  const kind = stepKind(step.kind);
  return kind ? kind.describe(step, { quote, nameCircuit }) : `Runs a ${String(step.kind)} step`;
}

/** One plain-words sentence for a step: what it does, and the inputs and step outputs it uses; then its retry and timeout when it sets them. */
export function describeStep(step: StepDefinition, nameCircuit: CircuitNamer = () => undefined): string {
  const uses = [
    ...inputsRead(step).map((name) => `input ${name}`),
    ...[...stepReferences(step)].map((id) => `the output of step ${id}`),
  ];
  const policy = describePolicy(step);
  return `${what(step, nameCircuit)}${uses.length > 0 ? `, using ${uses.join(', ')}` : ''}.${policy ? ` ${policy}` : ''}`;
}

/**
 * A human-readable breakdown of a definition: its inputs, one description per step, and a text
 * with one line for the inputs, one per step, and one for what the run returns.
 */
export function explainDefinition(
  definition: CircuitDefinition,
  nameCircuit: CircuitNamer = () => undefined,
): Explanation {
  const inputs = explainInputs(definition.query_schema ?? {});
  const steps = definition.steps.map((step) => ({
    id: step.id,
    kind: step.kind,
    description: describeStep(step, nameCircuit),
  }));
  const inputLine =
    inputs.length === 0
      ? 'Takes no input fields.'
      : `Takes input: ${inputs.map((i) => `${i.name} (${i.type}, ${i.required ? 'required' : 'optional'})`).join(', ')}.`;
  const last = definition.steps[definition.steps.length - 1];
  const outputLine = definition.output
    ? `Returns the JSONata expression ${quote(definition.output)} over the input and step outputs.`
    : `Returns the output of step ${last.id}.`;
  const text = [inputLine, ...steps.map((s, i) => `${i + 1}. ${s.id} (${s.kind}): ${s.description}`), outputLine].join(
    '\n',
  );
  return { inputs, steps, text };
}
