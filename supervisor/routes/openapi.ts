/** GET /openapi.json: the document every other route's declaration builds (http/openapi.ts). */
import { Type } from 'typebox';

import { buildOpenApiDocument } from '../http/openapi.js';
import { defineRoute } from '../http/routeSpec.js';
import { json } from '../http/types.js';
import type { Route, WsRoute } from '../http/types.js';

/** The route that serves the document of `routes` (itself included), built once when first asked. */
export function openApiRoute(version: string, routes: () => readonly Route[], wsRoutes: () => readonly WsRoute[]): Route {
  let doc: object | undefined;
  return defineRoute({
    method: 'GET',
    pattern: '/openapi.json',
    tag: 'meta',
    summary: 'This API as an OpenAPI 3.1 document, generated from the schemas every route is checked against',
    answers: {
      200: Type.Object({ openapi: Type.Literal('3.1.0'), info: Type.Object({ title: Type.String(), version: Type.String() }), paths: Type.Object({}) }),
    },
    handler: () => json((doc ??= buildOpenApiDocument({ version, routes: routes(), wsRoutes: wsRoutes() }))),
  });
}
