/**
 * Text the service hands to other programs as metadata (A2A skill names and descriptions, MCP tool
 * descriptions): circuit names and descriptions are typed by users, and a control character in them
 * can break a client's display or a prompt built from them. Newline and tab are kept (descriptions
 * are paragraphs); every other C0/C1 control character, DEL and the Unicode line and paragraph
 * separators become a space.
 */
export function metadataText(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');
}
