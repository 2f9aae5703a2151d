import type { Message } from './sdk';
import type { ApprovalDecision } from '../runs';
import { malformed } from './errors';
import { singleStringInput } from './card';

type JsonObject = Record<string, unknown>;
const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What a message carries: its first data part, else its text parts joined; null when it has neither. */
function contentOf(message: Message): { kind: 'data'; value: unknown } | { kind: 'text'; value: string } | null {
  for (const part of message.parts)
    if (part.content?.$case === 'data') return { kind: 'data', value: part.content.value };
  const texts = message.parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : []));
  return texts.length > 0 ? { kind: 'text', value: texts.join('\n') } : null;
}

/**
 * A new task's run input: the message's data part, a JSON object. A circuit whose input schema has
 * one string property also takes a text part as that property.
 */
export function runInputOf(message: Message, querySchema: JsonObject): JsonObject {
  const content = contentOf(message);
  if (content?.kind === 'data') {
    if (!isObject(content.value)) throw malformed("The data part must be a JSON object: the circuit's input");
    return content.value;
  }
  const property = singleStringInput(querySchema);
  if (content?.kind === 'text' && property) return { [property]: content.value };
  throw malformed("Send the circuit's input as a data part (a JSON object)");
}

/** A signal: the message's data part (any JSON), or its text. */
export function signalOf(message: Message): unknown {
  const content = contentOf(message);
  if (!content) throw malformed('Send the signal as a data part');
  return content.value;
}

/** A decision on an approval: a data part `{"approved": true|false, "comment"?, "data"?}`. */
export function decisionOf(message: Message): ApprovalDecision {
  const content = contentOf(message);
  const value = content?.kind === 'data' ? content.value : undefined;
  if (!isObject(value) || typeof value.approved !== 'boolean')
    throw malformed('Send the decision as a data part {"approved": true|false, "comment"?: string}');
  if (value.comment !== undefined && value.comment !== null && typeof value.comment !== 'string')
    throw malformed('comment must be a string');
  return {
    approved: value.approved,
    comment: (value.comment as string | null | undefined) ?? null,
    data: isObject(value.data) ? value.data : null,
  };
}
