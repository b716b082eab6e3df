/** Basic Auth for an in-test HttpServer's TCP listener: user `admin`, no rate limit, no session token. */
import { TcpAuth } from '../../supervisor/http/auth.js';

export function testTcpAuth(passwordHash = ''): TcpAuth {
  return new TcpAuth(() => ({
    username: 'admin',
    passwordHash,
    sessionToken: '',
    sessionTokenDurationSecs: 60,
    lanAuthBypass: false,
    rateLimitMax: 0,
    rateLimitWindowSecs: 60,
  }));
}
