import path from 'node:path';
import express, { type Express, type Request, type Response, type Router } from 'express';
import { definitionJsonSchema } from '../engine/definition-schema';

/** Where the REST reference lives, relative to the REST prefix (/api/v1). */
export const API_DOCS_PATH = '/docs';

// Swagger UI from npm (swagger-ui-dist), served by the service itself: the reference works offline, no CDN.
const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png'];

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Circuit Service — REST reference</title>
  <link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png" sizes="32x32">
  <link rel="stylesheet" href="docs/assets/swagger-ui.css">
  <style>body { margin: 0; } .topbar-note { font: 14px sans-serif; padding: 8px 16px; background: #1b1b1b; color: #eee; }
    .topbar-note a { color: #9cf; }</style>
</head>
<body>
  <div class="topbar-note">Circuit Service REST API — <a href="openapi.json">openapi.json</a> · <a href="definition-schema.json">circuit definition schema</a> · <a href="/graphql">GraphiQL</a> · <a href="/">home</a></div>
  <div id="swagger-ui"></div>
  <script src="docs/assets/swagger-ui-bundle.js"></script>
  <script src="docs/init.js"></script>
</body>
</html>`;

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io.
const INIT = `window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  persistAuthorization: true,
});
`;

/**
 * GET /api/v1/docs: the REST reference, Swagger UI over /api/v1/openapi.json. Links are relative to
 * /api/v1/, so the page works behind a proxy that mounts the API elsewhere.
 */
export function mountApiDocs(router: Router): void {
  router.get(API_DOCS_PATH, (req, res) => {
    res.locals.route = API_DOCS_PATH;
    // Relative links need the page at /api/v1/docs, not /api/v1/docs/.
    if (req.originalUrl.split('?')[0].endsWith('/'))
      return res.redirect(301, req.originalUrl.replace(/\/+(\?|$)/, '$1'));
    res.type('html').set('Cache-Control', 'no-cache').send(PAGE);
  });
  router.get(`${API_DOCS_PATH}/init.js`, (_req, res) => {
    res.locals.route = `${API_DOCS_PATH}/init.js`;
    res.type('js').set('Cache-Control', 'no-cache').send(INIT);
  });
  const assets = express.Router();
  for (const name of ASSETS) {
    assets.get(`/${name}`, (_req, res) => {
      res.locals.route = `${API_DOCS_PATH}/assets`;
      res.set('Cache-Control', 'public, max-age=86400').sendFile(path.join(SWAGGER_UI_DIR, name));
    });
  }
  router.use(`${API_DOCS_PATH}/assets`, assets);
}

/**
 * The API's reference pages beside the bridge (which holds no domain imports): the Swagger UI and
 * GET /api/v1/definition-schema.json, the JSON Schema of a version's definition, built from the step kinds.
 */
export function mountApiReference(app: Express, prefix: string): void {
  const router = express.Router();
  let definitionSchema: string | undefined;
  router.get('/definition-schema.json', (_req: Request, res: Response) => {
    res.locals.route = '/definition-schema.json';
    res.type('application/schema+json').send((definitionSchema ??= JSON.stringify(definitionJsonSchema())));
  });
  mountApiDocs(router);
  app.use(prefix, router);
}
