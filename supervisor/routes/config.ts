/** GET /config (secrets replaced by *_exists flags) and PUT /config (partial, deep-merged, validated, atomic). */
import { Type } from 'typebox';

import { ApiError } from '../../shared/apiError.js';
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import { ClientConfigSchema, ConfigPatchSchema } from '../config/clientSchema.js';
import type { ConfigStore } from '../config/configStore.js';
import { redactForClient } from '../config/secrets.js';
import { defineRoute } from '../http/routeSpec.js';
import { json, parseJsonBody } from '../http/types.js';
import type { Route } from '../http/types.js';

const TAG = 'config';

const SAVE_DESCRIPTION =
  'Deep-merged onto the config on disk (re-read under a lock, so concurrent writers compose): objects merge key by key, ' +
  'arrays and scalars replace, `null` resets a field to its default. A secret sent as `""` stays as it is (a client only ever saw its `*_exists` flag). ' +
  'The store checks the merged result against the whole config schema and answers 400 `invalid_input` naming the field ' +
  '(`Invalid config: <field>: <reason>`), writing nothing. Beyond the shape shown here it also refuses: a key the schema does not know ' +
  'unless it is already in the file, a body nested deeper than 64 levels, and a `services.tls` whose certificate and key do not load. ' +
  'Fields are described in docs/configuration.md.';

/** `/services/tls/mode` → `services.tls.mode`, `/allowed_hosts/0` → `allowed_hosts[0]`: how every refusal names a field. */
function fieldOf(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(seg) ? `[${seg}]` : out === '' ? seg : `.${seg}`;
  }
  return out;
}

export function configRoutes(store: ConfigStore): Route[] {
  const save = defineRoute({
    method: 'PUT',
    pattern: '/config',
    tag: TAG,
    summary: 'Save part of the config',
    description: SAVE_DESCRIPTION,
    answers: { 200: Type.Object({ ok: Type.Literal(true) }) },
    handler: async (_input, ctx) => {
      try {
        await store.update(parseJsonBody(ctx));
      } catch (err) {
        if (err instanceof SupervisorError && (err.code === ErrorCode.CONFIG_INVALID || err.code === ErrorCode.CONFIG_CORRUPT)) {
          const pointer = (err.data as { pointer?: unknown } | undefined)?.pointer;
          throw new ApiError('invalid_input', err.message, typeof pointer === 'string' ? { extra: { field: fieldOf(pointer), in: 'body' } } : {});
        }
        throw err;
      }
      return json({ ok: true });
    },
  });
  // The store is the check (against the merged result, with its own wording): the schema documents the body.
  save.spec = { ...save.spec!, body: ConfigPatchSchema, bodyCheckedByHandler: true };
  return [
    defineRoute({
      method: 'GET',
      pattern: '/config',
      tag: TAG,
      summary: 'The config, each secret replaced by its `*_exists` flag',
      answers: { 200: ClientConfigSchema },
      handler: () => json(redactForClient(store.get())),
    }),
    save,
  ];
}
