/**
 * The key an ACP stream viewer of the /mobile page (`?client=mobile`) holds in ViewerPresence while
 * its socket is open: a question raised on a connection shown there is not pushed to the phone (the
 * same rule as a watched terminal). Other viewers (a script, a desktop client) do not count.
 */
export const acpPresenceKey = (connectionId: string): string => `acp:${connectionId}`;
