import type { Express } from 'express';
import { FAVICON_LINK } from './favicon';

interface Link {
  href: string;
  title: string;
  text: string;
}

const LINKS: Link[] = [
  {
    href: '/graphql',
    title: 'GraphiQL',
    text: 'The GraphQL API (the canonical one) in the browser; subscriptions over /graphql/stream',
  },
  {
    href: '/api/v1/docs',
    title: 'REST reference',
    text: 'Every REST path under /api/v1, with its parameters, bodies and answers',
  },
  {
    href: '/api/v1/openapi.json',
    title: 'OpenAPI document',
    text: 'The same reference as OpenAPI 3.1 JSON, for clients and code generators',
  },
  {
    href: '/api/v1/definition-schema.json',
    title: 'Circuit definition schema',
    text: 'JSON Schema of a circuit version’s definition (steps and their fields)',
  },
  { href: '/settings', title: 'Settings', text: 'Sign in to manage API tokens and upload blobs' },
  { href: '/healthz', title: 'Health', text: 'Answers 200 while the process is up' },
  {
    href: '/readyz',
    title: 'Readiness',
    text: 'Answers 200 when the database and the job store are reachable, else 503',
  },
  {
    href: '/metrics',
    title: 'Metrics',
    text: 'Prometheus text: HTTP requests by route, process metrics, runs, steps, webhooks and credits of the whole deployment',
  },
];

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Circuit Service</title>
  ${FAVICON_LINK}
  <style>
    body { font: 16px/1.5 system-ui, sans-serif; max-width: 44rem; margin: 3rem auto; padding: 0 1rem; color: #222; }
    h1 { margin-bottom: 0.25rem; } p.lead { margin-top: 0; color: #555; }
    dt { margin-top: 0.75rem; font-weight: 600; } dd { margin-left: 0; color: #444; }
    code, pre { background: #f4f4f4; border-radius: 4px; } code { padding: 0 0.2em; } pre { padding: 0.75rem; overflow-x: auto; }
  </style>
</head>
<body>
  <h1>Circuit Service</h1>
  <p class="lead">Versioned, reusable units of AI logic: publish a circuit, post a query to it, read the run.</p>
  <dl>
${LINKS.map((l) => `    <dt><a href="${l.href}">${l.title}</a></dt><dd>${l.text}</dd>`).join('\n')}
  </dl>
  <h2>First steps</h2>
  <p>Create a user and an API token from the project directory, then send it as <code>Authorization: Bearer cst_…</code>:</p>
  <pre>node bin/circuits.js user create --username alice --password 'a long password' --credits 100</pre>
  <p>The README walks through publishing a circuit and running it.</p>
</body>
</html>`;

/** GET /: where a first-time visitor finds everything; JSON clients get the same links as JSON. */
export function mountLandingPage(app: Express): void {
  app.get('/', (_req, res) => {
    res.locals.route = '/';
    res.format({
      html: () => res.set('Cache-Control', 'no-cache').send(PAGE),
      json: () => res.json({ links: LINKS.map(({ href, title }) => ({ href, title })) }),
      default: () => res.type('html').send(PAGE),
    });
  });
}
