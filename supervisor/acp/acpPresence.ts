/**
 * The key an ACP stream viewer holds in ViewerPresence while its socket is open: a question raised
 * on a connection someone watches is not pushed to the phone (the same rule as a watched terminal).
 */
export const acpPresenceKey = (connectionId: string): string => `acp:${connectionId}`;
