import type { ErrorObject } from 'ajv';

/**
 * The one wording of a JSON Schema (Ajv) failure, used for REST fields, run inputs and outputs, and
 * definitions alike: `<field> is required`, `Unknown field: <field>`, `<field> must be string`, …
 * Callers only say where the failure is (`at`, already formatted) and what the whole value is called.
 */
export interface SchemaErrorWords {
  field: string;
  message: string;
}

/** `/a/0/b` → `a[0].b`, under `root` when given (`input.a[0].b`). */
export function fieldPath(instancePath: string, root = ''): string {
  let name = root;
  for (const part of instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))) {
    name += /^\d+$/.test(part) ? `[${part}]` : name ? `.${part}` : part;
  }
  return name;
}

function typeList(types: string[]): string {
  return types.length > 1 ? `${types.slice(0, -1).join(', ')} or ${types.at(-1)}` : types[0];
}

/**
 * One Ajv error as a sentence. `at` is the failing value's name (`fieldPath` of its instancePath, or a
 * caller's richer locator such as `step a.messages[0]`); `what` names the whole value when `at` is empty.
 */
export function describeSchemaError(error: ErrorObject, at: string, what = 'value'): SchemaErrorWords {
  const join = (child: string) => (at ? `${at}.${child}` : child);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const field = join(String(params.missingProperty));
      return { field, message: `${field} is required` };
    }
    case 'additionalProperties': {
      const field = join(String(params.additionalProperty));
      return { field, message: `Unknown field: ${field}` };
    }
    case 'type': {
      const types = String(params.type).split(',');
      if (!at)
        return {
          field: '',
          message: `The ${what} must be ${types.length === 1 && types[0] === 'object' ? 'a JSON object' : typeList(types)}`,
        };
      return { field: at, message: `${at} must be ${typeList(types)}` };
    }
    case 'anyOf':
    case 'oneOf': {
      const types = Array.isArray(error.schema)
        ? (error.schema as { type?: unknown }[]).map((branch) => branch.type)
        : [];
      if (at && types.length && types.every((type) => typeof type === 'string'))
        return { field: at, message: `${at} must be ${typeList(types as string[])}` };
      return { field: at, message: `${at || `The ${what}`} ${error.message ?? 'is invalid'}` };
    }
    case 'enum':
      return {
        field: at,
        message: `${at || `The ${what}`} must be one of ${(params.allowedValues as unknown[]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}`,
      };
    case 'format':
      return { field: at, message: `${at || `The ${what}`} must be a ${String(params.format)}` };
    default:
      return { field: at, message: `${at || `The ${what}`} ${error.message ?? 'is invalid'}` };
  }
}
