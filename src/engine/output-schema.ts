import type { ValidateFunction } from 'ajv/dist/2020';
import { describeInputError, querySchemaProblem, type CompiledSchemas } from './input-schema';
import type { SchemaCompiler } from './schema-compile';
import type { RunError } from '../domain/runs';

/**
 * A version's `output_schema` (docs/circuit-definition.md, Output contract): JSON Schema 2020-12 of its run's output, held to the same
 * rules as `query_schema` at publish (size, no recursive `$ref`, RE2 patterns, compiles), checked when
 * a run completes.
 */
export async function outputSchemaProblem(compiler: SchemaCompiler, schema: unknown): Promise<string | null> {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'must be a JSON Schema object';
  return querySchemaProblem(compiler, schema as Record<string, unknown>);
}

/**
 * The EXCEPTION a completed run ends with when its output fails its version's output_schema
 * (`OutputContractViolation` naming the field, e.g. `output.score must be number`), or null.
 */
export function outputContractViolation(
  outputs: CompiledSchemas,
  versionUid: string,
  definition: { output_schema?: unknown },
  output: unknown,
): RunError | null {
  const schema = definition.output_schema;
  if (schema === undefined || schema === null) return null;
  let validate: ValidateFunction;
  try {
    validate = outputs.validatorFor(versionUid, schema);
  } catch (error) {
    return {
      code: 'OutputContractViolation',
      message: `this version's output_schema cannot be used: ${(error as Error).message}`,
    };
  }
  try {
    if (validate(output)) return null;
  } catch (error) {
    return {
      code: 'OutputContractViolation',
      message: `this version's output_schema cannot be used: ${(error as Error).message}`,
    };
  }
  const first = validate.errors?.[0];
  const message = first ? describeInputError(first, 'output').message : 'output does not match the output_schema';
  return {
    code: 'OutputContractViolation',
    message: `The run's output does not match the version's output_schema: ${message}`,
  };
}
