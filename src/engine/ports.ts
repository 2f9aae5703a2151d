import type OpenAI from 'openai';
import type { Config } from '../config';
import type { Logger } from '../logger';
import type { Sandbox } from '../sandbox/sandbox';
import type { BlobStorage } from '../storage/BlobStorage';
import type { JsonSchemaService } from './json-schemas';

/** The settings the engine reads: the sandbox's limits, the http step's address check, the model endpoint. */
export type EngineConfig = Pick<
  Config,
  'stepCpuMs' | 'stepMemoryMb' | 'sandboxUserIsolates' | 'httpStepAllowPrivate' | 'openaiBaseUrl' | 'openaiApiKey'
>;

/**
 * What the engine reports of every step it executes, embedded runs included, for the process's
 * metrics. Unlike a run's RunObserver (its event log), it is the same for all runs of a process.
 * Sync, cheap, never throws.
 */
export interface EngineObserver {
  /** A step finished (completed or failed) after it executed; not called for a step reused from an earlier attempt. */
  stepEnded(kind: string, startedAt: string, endedAt: string): void;
}

/**
 * The long-lived pieces the engine uses to execute a definition, and nothing more; handed in by
 * whoever runs it (the job layer builds them from its own composition).
 */
export interface EngineDeps {
  log: Logger;
  config: EngineConfig;
  /** Where the `blob` step reads blob content. */
  blobStorage: Pick<BlobStorage, 'read'>;
  /** The compiled query schemas the `circuit` step checks an embedded run's input against. */
  schemas: Pick<JsonSchemaService, 'inputs'>;
  /** The isolates that run the templates and JSONata expressions of a definition. */
  sandbox: Sandbox;
  /** The `llm` step's model clients, one per base URL and key, made on first use and kept for the process. */
  modelClients: Map<string, OpenAI>;
  observer: EngineObserver;
  /**
   * The URL where a wait of a run is answered from outside: a signal wait's callback URL, an approval's
   * decision URL (derived from the run and the step's path, so fixed when the run is created).
   */
  waitUrl?(runUid: string, path: string, kind: 'signal' | 'approval'): string;
}
