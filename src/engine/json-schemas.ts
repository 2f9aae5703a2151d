import { CompiledSchemas } from './input-schema';
import { SchemaCompiler } from './schema-compile';

/**
 * The JSON Schema machinery of one process, built by the composition (src/app.ts, src/worker.ts, a CLI
 * command) and passed around as `schemas` (the engine gets it in EngineDeps): the compile check's thread used at publish, and the
 * compiled query and output schemas of the versions this process has run.
 */
export interface JsonSchemaService {
  /** Compiles a published schema off the event loop, within a time limit (src/engine/schema-compile.ts). */
  readonly compiler: SchemaCompiler;
  /** Compiled query schemas by version uid: a run's or a schedule's input (src/engine/input-schema.ts). */
  readonly inputs: CompiledSchemas;
  /** Compiled output schemas by version uid: a completed run's output (src/engine/output-schema.ts). */
  readonly outputs: CompiledSchemas;
  /** Ends the compile thread, if one started. */
  close(): Promise<void>;
}

export function createJsonSchemaService(): JsonSchemaService {
  const compiler = new SchemaCompiler();
  return {
    compiler,
    inputs: new CompiledSchemas(2_000),
    outputs: new CompiledSchemas(1_000),
    close: () => compiler.close(),
  };
}
