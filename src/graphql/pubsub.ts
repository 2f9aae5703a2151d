import { createPubSub } from '@graphql-yoga/subscription';

/**
 * The pubSub type-graphql's `buildSchema({ pubSub })` wants. Run subscriptions do not use it: they
 * read the run's event log (src/runs/events/stream.ts), woken by the cross-process bus.
 */
export const runPubSub = createPubSub<Record<string, never>>();
