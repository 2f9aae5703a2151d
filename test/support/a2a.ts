/**
 * The A2A SDK's own client, as an agent on another machine would use it: the agent card fetched with
 * the caller's bearer token, then JSON-RPC. Its package declares types for ES modules only; this
 * CommonJS test code loads its CommonJS build.
 */
import type * as ClientSdk from '@a2a-js/sdk/client' with { 'resolution-mode': 'import' };
import type * as Core from '@a2a-js/sdk' with { 'resolution-mode': 'import' };

export type { Client } from '@a2a-js/sdk/client' with { 'resolution-mode': 'import' };
export type { Message, StreamResponse, Task } from '@a2a-js/sdk' with { 'resolution-mode': 'import' };

const clientSdk = require('@a2a-js/sdk/client') as typeof ClientSdk;
const core = require('@a2a-js/sdk') as typeof Core;
export const { TaskState, Role } = core;

/** A fetch that sends `Authorization: Bearer <token>` on every request. */
export function bearerFetch(token: string): typeof fetch {
  return (input, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set('Authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
}

export async function a2aClient(baseUrl: string, token: string): Promise<ClientSdk.Client> {
  const fetchImpl = bearerFetch(token);
  const factory = new clientSdk.ClientFactory({
    transports: [new clientSdk.JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new clientSdk.DefaultAgentCardResolver({ fetchImpl }),
  });
  return factory.createFromUrl(baseUrl);
}

let messages = 0;

/** A user message: a data part (an object) or a text part, with metadata (skill_id, step_id). */
export function userMessage(
  content: { data: unknown } | { text: string },
  options: { taskId?: string; metadata?: Record<string, unknown>; messageId?: string } = {},
): Core.Message {
  const part: Core.Part =
    'data' in content
      ? {
          content: { $case: 'data', value: content.data },
          metadata: undefined,
          filename: '',
          mediaType: 'application/json',
        }
      : { content: { $case: 'text', value: content.text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
  return {
    messageId: options.messageId ?? `m-${process.pid}-${++messages}-${Date.now()}`,
    contextId: '',
    taskId: options.taskId ?? '',
    role: core.Role.ROLE_USER,
    parts: [part],
    metadata: options.metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A SendMessage request as the client takes it. */
export function sendParams(message: Core.Message, returnImmediately = false): Core.SendMessageRequest {
  return {
    tenant: '',
    message,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately,
    },
    metadata: undefined,
  };
}
