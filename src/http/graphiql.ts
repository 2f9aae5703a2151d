import path from 'node:path';
import type { Express } from 'express';
import { GRAPHQL_STREAM_PATH } from './graphql-stream';
import { FAVICON_LINK } from './favicon';

const STATIC_PREFIX = '/graphiql-assets';

// Bundled from npm so GraphiQL works offline: no CDN.
const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`));
const ASSETS: Record<string, string> = {
  'react.js': path.join(packageDir('react'), 'umd', 'react.production.min.js'),
  'react-dom.js': path.join(packageDir('react-dom'), 'umd', 'react-dom.production.min.js'),
  'graphiql.js': path.join(packageDir('graphiql'), 'graphiql.min.js'),
  'graphiql.css': path.join(packageDir('graphiql'), 'graphiql.min.css'),
  'graphql-sse.js': path.join(packageDir('graphql-sse'), 'umd', 'graphql-sse.min.js'),
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Circuit Service — GraphiQL</title>
  ${FAVICON_LINK}
  <link rel="stylesheet" href="${STATIC_PREFIX}/graphiql.css">
  <style>html, body, #graphiql { height: 100%; margin: 0; }</style>
</head>
<body>
  <div id="graphiql">Loading…</div>
  <script src="${STATIC_PREFIX}/react.js"></script>
  <script src="${STATIC_PREFIX}/react-dom.js"></script>
  <script src="${STATIC_PREFIX}/graphiql.js"></script>
  <script src="${STATIC_PREFIX}/graphql-sse.js"></script>
  <script>
    // Queries and mutations over POST /graphql; subscriptions over graphql-sse at ${GRAPHQL_STREAM_PATH},
    // one connection per subscription, with the headers from GraphiQL's header editor.
    const http = GraphiQL.createFetcher({ url: '/graphql' });
    const isSubscription = (params, opts) => {
      const ast = opts && opts.documentAST;
      if (ast) {
        const operations = ast.definitions.filter((d) => d.kind === 'OperationDefinition');
        const chosen = operations.find((d) => d.name && d.name.value === params.operationName) || operations[0];
        return !!chosen && chosen.operation === 'subscription';
      }
      return /^\\s*subscription\\b/.test(params.query || '');
    };
    const fetcher = (params, opts) => {
      if (!isSubscription(params, opts)) return http(params, opts);
      const client = graphqlSse.createClient({ url: '${GRAPHQL_STREAM_PATH}', headers: (opts && opts.headers) || {}, retryAttempts: 0 });
      const results = client.iterate(params);
      const done = results.return.bind(results);
      results.return = (value) => { client.dispose(); return done(value); };
      return results;
    };
    ReactDOM.createRoot(document.getElementById('graphiql')).render(
      React.createElement(GraphiQL, { fetcher, defaultEditorToolsVisibility: true, shouldPersistHeaders: true,
        defaultQuery: '# Add an Authorization header ({"Authorization": "Bearer cst_…"}) below.\\n# Subscriptions (subscription { circuitRunUpdated(uid: "…") { state } }) run over ${GRAPHQL_STREAM_PATH}.\\nquery {\\n  viewer { username credits }\\n}\\n' }),
    );
  </script>
</body>
</html>`;

export function mountGraphiql(app: Express): void {
  for (const [name, file] of Object.entries(ASSETS)) {
    app.get(`${STATIC_PREFIX}/${name}`, (_req, res) =>
      res.set('Cache-Control', 'public, max-age=86400').sendFile(file),
    );
  }
  app.get('/graphql', (req, res, next) => {
    if (req.method === 'GET' && req.accepts(['application/json', 'text/html']) === 'text/html' && !req.query.query) {
      res.type('html').send(PAGE);
      return;
    }
    next();
  });
}
