/**
 * A real ACP agent: Zed's codex-acp adapter (a dev dependency, where its binary installs) as
 * ego_executable. Its initialize needs no key: the snapshot carries its agentInfo and authMethods.
 * A turn would need an API key, which tests do not have. It writes ~/.codex: tuicd's HOME (and so
 * the agent's) is a temporary one.
 */
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { describe, it } from 'node:test';

import { waitFor } from '../../helpers/poll.js';
import { makeTestHome } from '../../helpers/testHome.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { alive } from './acpHarness.js';

const CODEX_ACP = new URL('../../../../node_modules/.bin/codex-acp', import.meta.url).pathname;

describe('ACP against the real codex-acp', { skip: existsSync(CODEX_ACP) ? false : `codex-acp is not installed (${CODEX_ACP})` }, () => {
  it('initialize succeeds and its authMethods and agentInfo appear in the snapshot; DELETE ends it', async () => {
    const t = await Tuicd.start({ config: { ego_executable: CODEX_ACP } });
    const root = makeTestHome('acp-codex-root-');
    try {
      const r = await t.socket('POST', '/acp/connections', JSON.stringify({ root }), { 'content-type': 'application/json' });
      assert.equal(r.status, 201, r.text);
      const snap = r.json();
      assert.equal(snap.state, 'ready');
      assert.equal(snap.protocolVersion, 1);
      assert.equal(snap.agentInfo.name, 'codex-acp');
      const methods = (snap.authMethods as Array<{ id: string }>).map((m) => m.id);
      for (const id of ['chatgpt', 'codex-api-key', 'openai-api-key']) assert.ok(methods.includes(id), `auth method ${id} in ${JSON.stringify(methods)}`);
      assert.equal((await t.socket('DELETE', `/acp/connections/${snap.id}`)).status, 200);
      await waitFor(() => !alive(-snap.pid), 'codex-acp gone after DELETE');
    } finally {
      await t.stop();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
