import { createPubSub } from '@graphql-yoga/subscription';
import type { RunStateEvent } from './run-event-bus';

/**
 * The in-process pubSub behind GraphQL subscriptions (type-graphql's `buildSchema({ pubSub })`).
 * It is fed by the cross-process run-event bus (src/events/run-event-bus.ts), never published to directly.
 */
export const runPubSub = createPubSub<{ CIRCUIT_RUN_UPDATED: [uid: string, event: RunStateEvent] }>();
