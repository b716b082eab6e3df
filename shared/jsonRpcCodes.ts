/** JSON-RPC 2.0 error codes, shared by the /mcp endpoint and the stdio bridge so both answer alike. */
export const JsonRpcCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** Implementation-defined server error: the SDK uses it for transport refusals (bad Host, missing session). */
  SERVER_ERROR: -32000,
  /** MCP 2025-11-25's URLElicitationRequiredError: the client sends its user to a URL, then retries. */
  URL_ELICITATION_REQUIRED: -32042,
} as const;
