/** A JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1 and of the edge validator, Ajv 2020). */
export type JsonSchema = Record<string, unknown>;
