/**
 * The A2A SDK, in one place. Its package declares its types for ES modules only, while its exports
 * also give CommonJS builds (the "require" condition), which is what this CommonJS service loads:
 * types come through `resolution-mode: import`, values through `require`.
 */
import type * as Core from '@a2a-js/sdk' with { 'resolution-mode': 'import' };
import type * as Errors from '@a2a-js/sdk/errors' with { 'resolution-mode': 'import' };
import type * as Express from '@a2a-js/sdk/server/express' with { 'resolution-mode': 'import' };

export type {
  AgentCard as AgentCardType,
  AgentSkill,
  Artifact,
  CancelTaskRequest,
  GetExtendedAgentCardRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  Part,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
  TaskStatus,
} from '@a2a-js/sdk' with { 'resolution-mode': 'import' };
export type { A2ARequestHandler, ServerCallContext, User as SdkUser } from '@a2a-js/sdk/server' with {
  'resolution-mode': 'import',
};
export type { A2AError as A2AErrorType } from '@a2a-js/sdk/errors' with { 'resolution-mode': 'import' };

const core = require('@a2a-js/sdk') as typeof Core;
const errors = require('@a2a-js/sdk/errors') as typeof Errors;
const express = require('@a2a-js/sdk/server/express') as typeof Express;

export const { AgentCard, Role, TaskState } = core;
export type TaskState = Core.TaskState;
export const {
  A2AError,
  JsonRpcTransportError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} = errors;
export const { agentCardHandler, jsonRpcHandler } = express;
