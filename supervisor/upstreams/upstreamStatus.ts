/** The status row shape, from the hub contract: one declaration for both sides. */
import type { Static } from 'typebox';

import type { UpstreamStatusRowSchema } from '../../shared/protocol/mcpHub.js';

export type UpstreamStatusRow = Static<typeof UpstreamStatusRowSchema>;
