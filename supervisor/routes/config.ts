/** GET /config (secrets replaced by *_exists flags) and PUT /config (partial, deep-merged, validated, atomic). */
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import type { ConfigStore } from '../config/configStore.js';
import { redactForClient } from '../config/secrets.js';
import { HttpError, json, parseJsonBody } from '../http/types.js';
import type { RequestContext, Route } from '../http/types.js';

export function configRoutes(store: ConfigStore): Route[] {
  const getConfig = () => json(redactForClient(store.get()));
  const putConfig = async (ctx: RequestContext) => {
    const partial = parseJsonBody(ctx);
    try {
      await store.update(partial);
    } catch (err) {
      if (err instanceof SupervisorError && (err.code === ErrorCode.CONFIG_INVALID || err.code === ErrorCode.CONFIG_CORRUPT)) {
        throw new HttpError(400, err.message);
      }
      throw err;
    }
    return json({ ok: true });
  };
  return [
    { method: 'GET', pattern: '/config', handler: getConfig },
    { method: 'PUT', pattern: '/config', handler: putConfig },
  ];
}
