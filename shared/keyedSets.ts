/** Sets of values kept per key (listeners or viewers per session): a key's set exists only while it has members. */
import { type Disposable, toDisposable } from './disposable.js';

/** Adds `value` under `key`; disposing removes it, and the key's set with its last member. */
export function addKeyed<K, V>(map: Map<K, Set<V>>, key: K, value: V): Disposable {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
  return toDisposable(() => {
    set.delete(value);
    if (set.size === 0) map.delete(key);
  });
}
