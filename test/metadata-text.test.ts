import { metadataText } from '../src/domain/metadata-text';
import { buildOpenApi } from '../rest-bridge/openapi';
import { routes } from '../rest-bridge/routes';
import { listTools } from '../src/mcp/tools';
import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';

/**
 * Text handed to other programs as metadata (MCP tools, the OpenAPI document, comments of the generated
 * client.ts) carries no control characters but newline and tab, whatever a circuit's author wrote: one
 * sanitizer, src/domain/metadata-text.ts, used by all.
 */
jest.setTimeout(60_000);

// Any C0 or C1 control but tab and newline, DEL, and the JavaScript line separators.
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const FORBIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/;
// (NUL is refused at the edge already: docs/limits.md.)
const HOSTILE = 'Paints\u001b[2J the screen\r\nthen\u0008 hides\u0007 it\u0085 and\u2028 breaks lines\tkeeps tabs';

test('metadataText keeps newline and tab, turns CR and CRLF into a newline, and drops every other control', () => {
  expect(metadataText(HOSTILE)).toBe('Paints[2J the screen\nthen hides it and breaks lines\tkeeps tabs');
  expect(metadataText('a\rb\u0000c')).toBe('a\nbc');
  expect(metadataText('plain text\nwith lines')).toBe('plain text\nwith lines');
  expect(FORBIDDEN.test(metadataText(HOSTILE))).toBe(false);
});

test('the OpenAPI document has no control characters in any summary, description or title', () => {
  const texts: string[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object')
      for (const [key, child] of Object.entries(value)) {
        if (typeof child === 'string' && ['summary', 'description', 'title'].includes(key)) texts.push(child);
        else walk(child);
      }
  };
  walk(buildOpenApi(routes));
  expect(texts.length).toBeGreaterThan(100);
  expect(texts.filter((text) => FORBIDDEN.test(text))).toEqual([]);
});

describe('with circuits whose author wrote control characters', () => {
  let t: TestApp;
  let owner: TestUser;
  let circuitUid: string;
  beforeAll(async () => {
    t = await startTestApp();
    owner = await makeUser();
    const created = await t.rest('POST', '/circuits', {
      token: owner.token,
      body: { name: `hostile-${Date.now()}`, description: HOSTILE },
    });
    expect(created.status).toBe(200);
    circuitUid = created.body.payload.uid;
    const published = await t.rest('POST', `/circuits/${circuitUid}/versions`, {
      token: owner.token,
      body: {
        query_schema: {
          type: 'object',
          properties: { name: { type: 'string', description: HOSTILE } },
          required: ['name'],
        },
        steps: [{ id: 'g', kind: 'template', template: 'hi {{input.name}}' }],
      },
    });
    expect(published.status).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
  });

  test('MCP tool names, titles and descriptions are sanitized', async () => {
    const tools = await listTools(t.app.services, owner.user);
    const tool = tools.find((listed) => listed.description.includes('Paints'));
    expect(tool).toBeDefined();
    expect(tool!.description).toContain('Paints[2J the screen\nthen hides it');
    for (const text of [tool!.name, tool!.title, tool!.description]) expect(FORBIDDEN.test(text)).toBe(false);
  });

  test("the generated client.ts's comments are sanitized", async () => {
    const res = await fetch(`${t.url}/api/v1/circuits/${circuitUid}/client.ts`, {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('Paints[2J the screen then hides it');
    expect(FORBIDDEN.test(text)).toBe(false);
  });
});
