import type OpenAI from 'openai';
import type { Config } from './config';
import type { Logger } from './logger';
import type { BlobStorage } from './storage';
import type { JsonSchemaService } from './engine/json-schemas';
import type { Sandbox } from './sandbox/sandbox';

// engine deps: replaced when w-engine lands. This file exists only because src/engine/steps/types.ts
// imports `Services` from here for `ExecutionContext.services`. Outside src/engine/ only the run wing
// names it (lint holds this): createRunWing (src/runs/run-wing.ts) builds it once, in a worker, and the
// wing's executor passes it on. It goes with that import.

/** The config the engine reads while it executes a run. */
export type EngineConfig = Pick<Config, 'httpStepAllowPrivate' | 'openaiApiKey' | 'openaiBaseUrl' | 'sandboxUserIsolates' | 'stepCpuMs' | 'stepMemoryMb'>;

/** What the engine reads of `ExecutionContext.services` (a step's blob content, the sandbox, schemas, model clients, step metrics). */
export interface Services {
  config: EngineConfig;
  log: Logger;
  blobStorage: BlobStorage;
  sandbox: Sandbox;
  schemas: JsonSchemaService;
  /** Where a step's end is counted (src/telemetry/run-metrics.ts). */
  runMetrics: { stepEnded(kind: string, startedAt: string, endedAt: string): void };
  /** The model providers' clients by base URL and key, each with its connection pool (src/engine/steps/llm.ts). */
  runs: { llmClients: Map<string, OpenAI> };
}
