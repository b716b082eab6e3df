/**
 * The HTTP engine in-process tests run on: the same choice tuicd makes at start, or the one
 * TUIC_HTTP_ENGINE names, so the test runner can run the HTTP suites once per engine.
 */
import { HTTP_ENGINE_ENV, parseEngineName, selectEngine } from '../../supervisor/http/engine/select.js';
import type { HttpEngine } from '../../supervisor/http/engine/types.js';

let engine: HttpEngine | undefined;

export function testEngine(): HttpEngine {
  return (engine ??= selectEngine(parseEngineName(process.env[HTTP_ENGINE_ENV], HTTP_ENGINE_ENV)));
}
