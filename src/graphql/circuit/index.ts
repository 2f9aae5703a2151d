import { CircuitResolver } from './circuit.resolver';
import { CircuitSocialResolver } from './circuit-social.resolver';
import { CircuitExplainResolver } from './circuit-explain.resolver';
import { CircuitMetricResolver } from './circuit-metric.resolver';
import { CircuitAliasResolver } from './circuit-alias.resolver';

/** Resolvers of the circuit domain. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const circuitResolvers: Function[] = [
  CircuitResolver,
  CircuitSocialResolver,
  CircuitExplainResolver,
  CircuitMetricResolver,
  CircuitAliasResolver,
];
