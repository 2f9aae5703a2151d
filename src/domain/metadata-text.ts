/**
 * Text the service hands to other programs as metadata — MCP tool names, titles and descriptions, A2A skills,
 * OpenAPI summaries and descriptions, comments in generated TypeScript — with no control characters but newline
 * and tab: a circuit's name or description is user text, and a terminal, a log viewer or a model reading it must
 * not get escape sequences, carriage returns that overwrite a line, or NULs. Removed, not escaped: metadata is read
 * by people and models, who gain nothing from `\u001b`. A carriage return before a newline goes with it (CRLF → LF).
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /\r\n?|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

export function metadataText(text: string): string {
  return text.replace(CONTROL, (match) => (match.startsWith('\r') ? '\n' : ''));
}
