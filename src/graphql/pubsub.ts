import { createPubSub } from '@graphql-yoga/subscription';

/**
 * The pubSub type-graphql's `buildSchema({ pubSub })` wants, one per schema built. Run subscriptions
 * do not use it: they read the run's event log (src/runs/events/stream.ts), woken by the cross-process bus.
 */
export function createRunPubSub() {
  return createPubSub<Record<string, never>>();
}
