import { execFile } from 'node:child_process';
import path from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

const ROOT = path.join(__dirname, '..', '..');

/**
 * Validates an OpenAPI document with @seriousme/openapi-schema-validator, in a plain Node child:
 * the validator is an ESM package that uses import.meta, which Jest's CommonJS mode cannot load.
 */
export function validateOpenApiDocument(
  document: unknown,
): Promise<{ valid: boolean; errors?: unknown; version?: string }> {
  const script = `
    import { Validator } from '@seriousme/openapi-schema-validator';
    let input = '';
    for await (const chunk of process.stdin) input += chunk;
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(input));
    process.stdout.write(JSON.stringify({ ...result, version: validator.version }));
  `;
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { cwd: ROOT, timeout: 30_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`validator failed: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout) as { valid: boolean; errors?: unknown; version?: string });
      },
    );
    child.stdin!.end(JSON.stringify(document));
  });
}

/** Headers of plain HTTP that any response may carry; everything else must be documented. */
const TRANSPORT_HEADERS = new Set([
  'content-type',
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'etag',
  'vary',
  'cache-control',
  'x-accel-buffering',
  'set-cookie',
  // Cross-origin (CORS) answers are the Fetch standard's, the same on every route (docs/browsers.md).
  'access-control-allow-origin',
  'access-control-expose-headers',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-max-age',
]);

type Json = Record<string, any>;

export interface RecordedExchange {
  method: string;
  /** The OpenAPI path template, e.g. `/circuits/{circuit_uid}`. */
  template: string;
  status: number;
  headers: Headers;
  /** Raw response text. */
  text: string;
}

const DOC_ID = 'https://circuits.invalid/openapi.json';

/**
 * Checks live responses against an OpenAPI 3.1 document: the operation and status are documented,
 * every non-transport header is documented for that response and matches its schema, required
 * headers are present, and the body has a documented media type and matches its schema (Ajv 2020).
 */
export class ContractChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly cache = new Map<object, ValidateFunction>();
  readonly violations: string[] = [];
  /** `METHOD template` → statuses seen. */
  readonly seen = new Map<string, Set<number>>();

  constructor(private readonly doc: Json) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: DOC_ID, components: doc.components });
  }

  private resolve<T = Json>(value: Json): T {
    let current = value;
    while (current && typeof current.$ref === 'string' && current.$ref.startsWith('#/')) {
      current = current.$ref
        .slice(2)
        .split('/')
        .map((p: string) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce((node: Json, key: string) => node?.[key], this.doc);
    }
    return current as T;
  }

  private validator(schema: Json): ValidateFunction {
    let validate = this.cache.get(schema);
    if (!validate) {
      const absolute = JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, `"${DOC_ID}#/components/`));
      validate = this.ajv.compile(absolute);
      this.cache.set(schema, validate);
    }
    return validate;
  }

  check(exchange: RecordedExchange): void {
    const where = `${exchange.method} ${exchange.template} → ${exchange.status}`;
    const key = `${exchange.method} ${exchange.template}`;
    if (!this.seen.has(key)) this.seen.set(key, new Set());
    this.seen.get(key)!.add(exchange.status);
    const violation = (message: string) => this.violations.push(`${where}: ${message}`);

    const operation = this.doc.paths?.[exchange.template]?.[exchange.method.toLowerCase()];
    if (!operation) return void violation('operation not documented');
    const documented = operation.responses?.[String(exchange.status)] ?? operation.responses?.default;
    if (!documented)
      return void violation(`status not documented (documented: ${Object.keys(operation.responses ?? {}).join(', ')})`);
    const response = this.resolve(documented);

    const headerSpecs = new Map<string, Json>(
      Object.entries((response.headers ?? {}) as Json).map(([name, spec]) => [
        name.toLowerCase(),
        { ...this.resolve(spec as Json), ...(spec as Json) },
      ]),
    );
    exchange.headers.forEach((value, name) => {
      if (TRANSPORT_HEADERS.has(name)) return;
      const spec = headerSpecs.get(name);
      if (!spec) return void violation(`header ${name} not documented`);
      const schema = this.resolve(spec).schema ?? spec.schema;
      if (schema) {
        const validate = this.validator(schema);
        if (!validate(value))
          violation(`header ${name}: ${JSON.stringify(value)} ${this.ajv.errorsText(validate.errors)}`);
      }
    });
    for (const [name, spec] of headerSpecs) {
      if (spec.required && !exchange.headers.has(name)) violation(`required header ${name} missing`);
    }

    const content = response.content as Json | undefined;
    const mediaType = (exchange.headers.get('content-type') ?? '').split(';')[0].trim();
    if (!content) {
      if (exchange.text.length > 0) violation(`a body (${mediaType}) where none is documented`);
      return;
    }
    const media = content[mediaType];
    if (!media)
      return void violation(
        `media type ${JSON.stringify(mediaType)} not documented (documented: ${Object.keys(content).join(', ')})`,
      );
    if (!mediaType.endsWith('json') || !media.schema) return;
    let body: unknown;
    try {
      body = JSON.parse(exchange.text);
    } catch {
      return void violation('body is not JSON');
    }
    const validate = this.validator(media.schema);
    if (!validate(body))
      violation(`body ${this.ajv.errorsText(validate.errors, { dataVar: 'body' })}: ${exchange.text.slice(0, 300)}`);
  }
}
