/**
 * The TLS file check lives in config/ (a config save runs it too, and config/ must not import
 * http/); this keeps the listener code's import path until it imports config/tlsCredentials.js.
 */
export { loadTlsCredentials, tlsFilePaths, type TlsCredentials, type TlsCredentialsErrorData } from '../config/tlsCredentials.js';
