import { QueryTypes } from 'sequelize';
import { metadataText } from '../domain/metadata-text';
import { Circuit, CircuitVersion, User } from '../models';
import { CIRCUIT_RULES, circuitPermits } from '../policies/circuit.policy';
import { ruleSql } from '../policies/visibility';
import { circuitsNamedBy, explainDefinition } from '../engine/explain';
import type { CircuitDefinition } from '../domain/definition';
import type { ApiServices } from '../graphql/context';
import { toolNames } from './tool-names';

/** At most this many tools in `tools/list` (and so callable): the caller's own first, then starred ones. */
export const MAX_TOOLS = 200;

/** A circuit the caller may call as a tool. */
export interface CircuitTool {
  name: string;
  circuit: Circuit;
  ownerUsername: string;
  adaptorUid: string;
}

/** The MCP `Tool` shape this service lists (a subset of the SDK's). */
export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema?: { type: 'object'; [key: string]: unknown };
  /** Every tool may be called as a task (src/mcp/tasks.ts) or plainly. */
  execution: { taskSupport: 'optional' };
}

type JsonObject = Record<string, unknown>;
const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The circuits the viewer owns or has starred AND may run (the circuit policy's `run` rule, in SQL
 * and checked again on each row) that have a primary version, with their owner's username and query
 * adaptor: one statement, bounded by MAX_TOOLS, in a fixed order (tool names depend on it). A star on a
 * circuit that has since turned private is ignored by the rule itself.
 */
export async function runnableCircuits(services: ApiServices, viewer: User): Promise<CircuitTool[]> {
  const circuitColumns = Object.keys(Circuit.getAttributes())
    .map((a) => `c."${a}"`)
    .join(', ');
  const run = ruleSql(CIRCUIT_RULES.run, { ownerColumn: 'owner_uid' }, viewer, 'c');
  const rows = await services.sequelize.query<JsonObject & { owner_username: string; adaptor_uid: string }>(
    `SELECT ${circuitColumns}, u.username AS owner_username, a.uid AS adaptor_uid
       FROM circuits c
       JOIN users u ON u.uid = c.owner_uid
       JOIN LATERAL (SELECT uid FROM circuit_adaptors WHERE circuit_uid = c.uid AND kind = 'query' ORDER BY created_at, uid LIMIT 1) a ON true
      WHERE (c.owner_uid = :mcpViewer OR EXISTS (SELECT 1 FROM circuit_stars s WHERE s.circuit_uid = c.uid AND s.user_uid = :mcpViewer))
        AND c.primary_version_uid IS NOT NULL
        AND ${run.sql}
      ORDER BY (c.owner_uid = :mcpViewer) DESC, u.username, c.name, c.uid
      LIMIT :mcpLimit`,
    { replacements: { ...run.replacements, mcpViewer: viewer.uid, mcpLimit: MAX_TOOLS }, type: QueryTypes.SELECT },
  );
  const circuits = rows
    .map(({ owner_username, adaptor_uid, ...row }) => ({
      circuit: Circuit.build(row as never, { isNewRecord: false, raw: true }),
      ownerUsername: owner_username,
      adaptorUid: adaptor_uid,
    }))
    .filter(({ circuit }) => circuitPermits(viewer, circuit, 'run'));
  const names = toolNames(circuits.map((c) => ({ username: c.ownerUsername, circuitName: c.circuit.name })));
  return circuits.map((c, i) => ({ ...c, name: names[i] }));
}

/** The tool the caller named, among the ones `tools/list` gives them; null when there is none. */
export async function findCircuitTool(services: ApiServices, viewer: User, name: string): Promise<CircuitTool | null> {
  return (await runnableCircuits(services, viewer)).find((tool) => tool.name === name) ?? null;
}

/** MCP requires `inputSchema.type` to be "object"; a run's input is always an object. */
function asObjectSchema(schema: unknown): { type: 'object'; [key: string]: unknown } {
  return { ...(isObject(schema) ? schema : {}), type: 'object' };
}

/**
 * The version's `output_schema` (docs/circuit-definition.md, Output contract) as an MCP `outputSchema`, or undefined when it has none.
 * An object schema is used as it is; any other is wrapped as `{output: …}`, the shape
 * `structuredContent` then takes (see completedResult in call-tool.ts).
 */
export function outputContract(
  definition: CircuitDefinition,
): { schema: { type: 'object'; [key: string]: unknown }; wrapped: boolean } | undefined {
  const schema = (definition as CircuitDefinition & { output_schema?: unknown }).output_schema;
  if (!isObject(schema)) return undefined;
  if (schema.type === 'object') return { schema: schema as { type: 'object' }, wrapped: false };
  return { schema: { type: 'object', properties: { output: schema }, required: ['output'] }, wrapped: true };
}

/** How embedded circuits are named in an explanation: `owner/name` when the viewer may list them. */
async function embeddedNames(viewer: User, definitions: CircuitDefinition[]): Promise<Map<string, string>> {
  const uids = new Set<string>();
  for (const definition of definitions) for (const uid of circuitsNamedBy(definition)) uids.add(uid);
  const names = new Map<string, string>();
  if (uids.size === 0) return names;
  const circuits = await Circuit.findAll({ where: { uid: [...uids] } });
  const owners = new Map(
    (
      await User.findAll({
        where: { uid: [...new Set(circuits.map((c) => c.owner_uid))] },
        attributes: ['uid', 'username'],
      })
    ).map((u) => [u.uid, u.username]),
  );
  for (const circuit of circuits) {
    names.set(
      circuit.uid,
      circuitPermits(viewer, circuit, 'list')
        ? `${owners.get(circuit.owner_uid) ?? '?'}/${circuit.name}`
        : 'a circuit you cannot see',
    );
  }
  return names;
}

/**
 * `tools/list` (docs/mcp.md): one tool per runnable circuit. Described by the circuit's description
 * and the explanation of its primary version; its input schema is that version's `query_schema`.
 * A protected circuit of another user is runnable but its versions and explanation are its owner's
 * (docs/api-conventions.md, Who may see what): its tool carries the description only and accepts any object (the run validates it).
 */
export async function listTools(services: ApiServices, viewer: User): Promise<ListedTool[]> {
  const tools = await runnableCircuits(services, viewer);
  const versions = new Map(
    (
      await CircuitVersion.findAll({
        where: { uid: tools.map((t) => t.circuit.primary_version_uid!) },
        attributes: ['uid', 'definition'],
      })
    ).map((v) => [v.uid, v.definition]),
  );
  const readable = (tool: CircuitTool) => circuitPermits(viewer, tool.circuit, 'read');
  const names = await embeddedNames(
    viewer,
    tools
      .filter(readable)
      .map((t) => versions.get(t.circuit.primary_version_uid!))
      .filter((d): d is CircuitDefinition => d !== undefined),
  );

  const listed: ListedTool[] = [];
  for (const tool of tools) {
    const definition = versions.get(tool.circuit.primary_version_uid!);
    if (!definition) continue;
    const { circuit } = tool;
    const parts = [circuit.is_deprecated ? `[deprecated] ${circuit.description}`.trim() : circuit.description];
    const entry: ListedTool = {
      name: tool.name,
      title: metadataText(`${tool.ownerUsername}/${circuit.name}`),
      description: '',
      inputSchema: { type: 'object' },
      execution: { taskSupport: 'optional' },
    };
    if (readable(tool)) {
      parts.push(explainDefinition(definition, (uid) => names.get(uid)).text);
      entry.inputSchema = asObjectSchema(definition.query_schema);
      const contract = outputContract(definition);
      if (contract) entry.outputSchema = contract.schema;
    } else {
      parts.push('A protected circuit: its steps and input schema are shown to its owner only.');
    }
    entry.description = metadataText(parts.filter((p) => p.length > 0).join('\n\n'));
    entry.name = metadataText(entry.name);
    listed.push(entry);
  }
  return listed;
}
