/** REST field names are the snake_case of the view's fields (schema/operations alias them so). */
export function snakeKeys(view: object): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(view).map(([key, value]) => [key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), value]),
  );
}
