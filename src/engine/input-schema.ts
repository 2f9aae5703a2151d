import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

const ajv = new Ajv2020({ strict: false, allErrors: false, coerceTypes: false, useDefaults: false });
addFormats(ajv);

/** Compiled query schemas by version uid (versions are immutable, so the entry never goes stale). */
const compiled = new Map<string, ValidateFunction>();
const MAX_CACHED = 2_000;

function validatorFor(versionUid: string, schema: unknown): ValidateFunction {
  let validate = compiled.get(versionUid);
  if (!validate) {
    validate = ajv.compile(schema as object);
    if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value!);
    compiled.set(versionUid, validate);
  }
  return validate;
}

/** `/a/0/b` → `input.a[0].b` */
function fieldPath(instancePath: string, root: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : `${path}.${part}`), root);
}

/** One readable line naming the failing field, e.g. "input.name is required", "input.age must be integer". */
export function describeSchemaError(error: ErrorObject, root = 'input'): { field: string; message: string } {
  const at = fieldPath(error.instancePath, root);
  switch (error.keyword) {
    case 'required': {
      const field = `${at}.${String((error.params as { missingProperty: string }).missingProperty)}`;
      return { field, message: `${field} is required` };
    }
    case 'additionalProperties': {
      const field = `${at}.${String((error.params as { additionalProperty: string }).additionalProperty)}`;
      return { field, message: `${field} is not allowed` };
    }
    case 'enum':
      return { field: at, message: `${at} must be one of ${JSON.stringify((error.params as { allowedValues: unknown[] }).allowedValues)}` };
    default:
      return { field: at, message: `${at} ${error.message ?? 'is invalid'}` };
  }
}

/**
 * Checks a run's input against its version's query schema (JSON Schema 2020-12). Returns null when it
 * passes, else the first failure, naming the field.
 */
export function checkInput(versionUid: string, schema: unknown, input: unknown, root = 'input'): { field: string; message: string } | null {
  const validate = validatorFor(versionUid, schema);
  if (validate(input)) return null;
  const first = validate.errors?.[0];
  return first ? describeSchemaError(first, root) : { field: root, message: `${root} does not match the query schema` };
}
