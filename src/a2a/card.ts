import type { AgentCardType as AgentCard, AgentSkill } from './sdk';
import type { User } from '../models';
import type { ApiServices } from '../graphql/context';
import { metadataText } from '../domain/metadata-text';
import { listTools, type ListedTool } from '../mcp/tools';

export const A2A_PATH = '/a2a';
export const AGENT_CARD_PATH = '/.well-known/agent-card.json';
export const A2A_PROTOCOL_VERSION = '1.0';
/** Clients of the previous protocol (method names `message/send`, `tasks/get`…) are served through the SDK's compatibility layer. */
export const A2A_LEGACY_PROTOCOL_VERSION = '0.3';

/** Whether a request's `A2A-Version` asks for the previous protocol (absent means 0.3, as the protocol says). */
export function asksLegacy(header: string | undefined): boolean {
  const version = header?.trim() ?? '';
  return version === '' || version.startsWith('0.');
}

/** The one string property of an input schema, when the circuit takes nothing else: a text part may be it. */
export function singleStringInput(schema: ListedTool['inputSchema'] | Record<string, unknown>): string | null {
  const properties = schema.properties;
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return null;
  const names = Object.keys(properties);
  if (names.length !== 1) return null;
  const property = (properties as Record<string, unknown>)[names[0]];
  return typeof property === 'object' && property !== null && (property as { type?: unknown }).type === 'string'
    ? names[0]
    : null;
}

/**
 * A runnable circuit as a skill: its id the circuit's MCP tool name (one name per circuit on both
 * protocols), described as `tools/list` describes it.
 */
function skillOf(tool: ListedTool): AgentSkill {
  const modes = singleStringInput(tool.inputSchema) ? ['application/json', 'text/plain'] : ['application/json'];
  return {
    id: tool.name,
    name: metadataText(tool.title),
    description: metadataText(tool.description),
    tags: ['circuit'],
    examples: [],
    inputModes: modes,
    outputModes: ['application/json', 'text/plain'],
    securityRequirements: [],
  };
}

/** The skills of a caller: the circuits the MCP tool list gives them, in its order. */
export async function skillsOf(services: ApiServices, viewer: User): Promise<AgentSkill[]> {
  return (await listTools(services, viewer)).map(skillOf);
}

/**
 * The agent card (docs/a2a.md): the service as one agent whose skills are the caller's runnable
 * circuits; without a caller, no skills, and the card says a bearer token is needed.
 */
export function agentCard(baseUrl: string, version: string, skills: AgentSkill[]): AgentCard {
  return {
    name: 'Circuit Service',
    description:
      "Runs circuits: each skill is a circuit you may run, a task is one run of it. Send the circuit's input as a data part, with the skill id in the message's metadata.skill_id.",
    supportedInterfaces: [
      { url: `${baseUrl}${A2A_PATH}`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
      {
        url: `${baseUrl}${A2A_PATH}`,
        protocolBinding: 'JSONRPC',
        tenant: '',
        protocolVersion: A2A_LEGACY_PROTOCOL_VERSION,
      },
    ],
    provider: undefined,
    version,
    documentationUrl: `${baseUrl}/docs`,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: true },
    securitySchemes: {
      bearer: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: {
            description: 'An API token of the service (Authorization: Bearer …)',
            scheme: 'Bearer',
            bearerFormat: '',
          },
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ['application/json', 'text/plain'],
    defaultOutputModes: ['application/json', 'text/plain'],
    skills,
    signatures: [],
  };
}
