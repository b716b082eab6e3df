#!/usr/bin/env node
/** `tuic-bridge`: stdio ↔ tuicd socket for MCP clients. Its own issue builds it; until then it says so. */
process.stderr.write('tuic-bridge: not yet implemented in this build of tuicd; MCP clients can use the socket directly.\n');
process.exit(1);
